"""The navigator baseline: a deterministic web agent with no LLM that browses like a careful
analyst, under a page-read budget.

For each question (read as search-read reads it: evaluation/agents/reading.py) it searches the
web for the entity and the quantity and then works the way the web makes it work:

- a portal's key statistics (a well-known entity's 5/20/60-session change, high, low, average or
  total) answer a window over exactly those sessions in one read;
- otherwise the exchange's page of the data set (found in the results, or from the entity's
  company page) gives the latest record, and its history table a snapshot or a window, computed
  from the rows;
- an obscure entity's exchange page shows the latest session only and links its exchange's daily
  bulletins: the navigator opens the archive, picks each session's page whose code range holds
  the entity, reads the row on every session the question needs and computes the statistic.

Each page it opens counts against `read_budget` (searches do not; None: no limit); when the
budget runs out before it has every row it needs, it gives no answer (recorded in its trace).
Exchange pages are preferred over portals (no lag, no third-party figures); among portals it
chooses as search-read does. Pages read once are kept for the run (the web of D does not change),
but count against each question's budget that opens them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Sequence
from urllib.parse import urljoin, urlsplit

import httpx

from livesearch_pipeline.core.lexicon import load_lexicon
from livesearch_pipeline.core.models import Prediction, ServedQuestion
from livesearch_pipeline.core.program import window_rows
from livesearch_pipeline.evaluation.agents.loop import ToolFailure
from livesearch_pipeline.evaluation.agents.reading import (
    UNIT_SUFFIX, Candidate, ParsedPage, Reading, UnreadableQuestion, aggregate_values, best_label, candidates_from_page,
    cell_number, choose, label_matches, parse_page, read_question,
)
from livesearch_pipeline.evaluation.agents.web import WebTools, WebToolsConfig
from livesearch_pipeline.web.digest import STATISTICS

HTTP_TIMEOUT_S = 20.0
RESULTS_PER_QUERY = 8
# Exchange data-set pages tried from a company page before giving up on finding the quantity.
MAX_DATA_PAGES = 8
_ARCHIVE_ITEM = re.compile(r"^(\d{4}-\d{2}-\d{2})\D.*?(\S+)\s*[–-]\s*(\S+)$")
_EXCHANGE_DATA = re.compile(r"^/exchange/(?!company/|filings/|reports/|bulletin/)[a-z0-9_]+/[^/]+\.html$")
_SPAN = re.compile(r"^(\d+)")


class BudgetExhausted(Exception):
    """The question's page-read budget is spent."""


def window_records(reading: Reading, aggregate: str) -> int:
    """How many records the question's window spans for `aggregate` (DESIGN's window convention,
    `core.program.window_rows`): N + 1 closes for a change over N sessions, else N."""
    return window_rows(aggregate, reading.sessions)


@dataclass
class _Question:
    """One question's state: its reading, what it has opened, its budget."""

    question: ServedQuestion
    reading: Reading
    budget: int | None
    trace: list[dict[str, Any]] = field(default_factory=list)
    reads: int = 0


@dataclass
class NavigatorAgent:
    tools: WebTools
    http: httpx.AsyncClient
    as_of: dt.date
    base_url: str
    name: str = "navigator"
    model: str | None = None
    read_budget: int | None = None
    _searches: dict[str, Any] = field(default_factory=dict, repr=False)
    _pages: dict[str, ParsedPage] = field(default_factory=dict, repr=False)

    async def prepare(self, questions: Sequence[ServedQuestion]) -> None:
        """Nothing is prepared: each question is read, searched and browsed on its own."""

    # ------------------------------------------------------------------ plumbing

    async def _search(self, state: _Question, query: str) -> list[dict[str, Any]]:
        result = self._searches.get(query)
        if result is None:
            result = self._searches.setdefault(query, await self.tools.web_search({"query": query}))
        state.trace.append({"tool": "web_search", **result.trace})
        return json.loads(result.content)["results"][:RESULTS_PER_QUERY]

    async def _read(self, state: _Question, url: str) -> ParsedPage:
        if state.budget is not None and state.reads >= state.budget:
            raise BudgetExhausted(url)
        state.reads += 1
        state.trace.append({"tool": "fetch_page", "url": url})
        page = self._pages.get(url)
        if page is None:
            if urlsplit(url).scheme not in ("http", "https"):
                raise ToolFailure(f"not an http URL {url!r}")
            try:
                response = await self.http.get(url, timeout=HTTP_TIMEOUT_S)
            except httpx.HTTPError as exc:
                raise ToolFailure(f"cannot fetch {url}: {type(exc).__name__}: {exc}") from exc
            if response.status_code != 200:
                raise ToolFailure(f"{url} answered HTTP {response.status_code}")
            page = self._pages.setdefault(url, parse_page(response.text))
        return page

    def _url(self, path: str) -> str:
        return urljoin(self.base_url.rstrip("/") + "/", path.lstrip("/"))

    # ------------------------------------------------------------------ the agent

    async def answer(self, question: ServedQuestion) -> Prediction:
        try:
            reading = read_question(question)
        except UnreadableQuestion as exc:
            return Prediction(qid=question.qid, answer=None, trace=[{"type": "skip", "reason": str(exc)}])
        state = _Question(question, reading, self.read_budget)
        state.trace.append({"type": "reading", "kind": reading.kind, "quantity": reading.quantity_en,
                            "aggregate": reading.aggregate, "sessions": reading.sessions, "unit": reading.unit,
                            "budget": self.read_budget})
        try:
            answer, source = await self._work(state)
        except BudgetExhausted:
            state.trace.append({"type": "final", "answer": None, "reason": f"read budget of {self.read_budget} "
                                "pages spent before the evidence was complete", "reads": state.reads})
            return Prediction(qid=question.qid, answer=None, trace=state.trace)
        state.trace.append({"type": "final", "answer": answer, "url": source, "reads": state.reads,
                            **({} if answer is not None else {"reason": "no page gave the quantity"})})
        return Prediction(qid=question.qid, answer=answer, trace=state.trace)

    async def _work(self, state: _Question) -> tuple[str | None, str | None]:
        question, reading = state.question, state.reading
        code = question.entity if reading.name else ""
        results = await self._results(state)
        own = [r for r in results if not code or code in str(r.get("title", ""))]
        exchange = [r["url"] for r in own if _EXCHANGE_DATA.match(urlsplit(r["url"]).path)]
        portals = [r["url"] for r in own if not urlsplit(r["url"]).path.startswith("/exchange/")]
        if reading.kind == "window" and code:
            digests = [u for u in portals if "/stats/" in urlsplit(u).path]
            for url in digests[:1]:
                found = self._from_digest(await self._read(state, url), reading, question)
                if found is not None:
                    return found, url
        candidates: list[Candidate] = []
        tried: set[str] = set()
        # The exchange's pages first: from the results, then from the company page.
        queue = list(dict.fromkeys(exchange))
        company_read = False
        while True:
            while queue:
                url = queue.pop(0)
                if url in tried:
                    continue
                tried.add(url)
                page = await self._read(state, url)
                found = candidates_from_page(page, url, len(tried), reading, question)
                if found:
                    chosen = choose(found, reading)
                    if chosen is not None:
                        return chosen[0], url
                if reading.kind in ("snapshot", "window") and self._has_column(page, reading, question):
                    archive = next((href for href, _ in page.links if "/exchange/bulletin/" in href), None)
                    if archive is not None:
                        return await self._from_bulletins(state, self._url(archive), reading, question)
            if company_read or not code:
                break
            company_read = True
            company = self._url(f"/exchange/company/{code}.html")
            hub = await self._read(state, company)
            links = [self._url(href) for href, _ in hub.links if _EXCHANGE_DATA.match(href)]
            queue = [u for u in links if u not in tried][:MAX_DATA_PAGES]
        # No exchange page answered: the portals, chosen as search-read chooses.
        for rank, url in enumerate(portals):
            if url in tried or (state.budget is not None and state.reads >= state.budget):
                continue
            tried.add(url)
            candidates.extend(candidates_from_page(await self._read(state, url), url, rank, reading, question))
        chosen = choose(candidates, reading)
        return (chosen[0], chosen[1].url) if chosen is not None else (None, None)

    async def _results(self, state: _Question) -> list[dict[str, Any]]:
        question, reading = state.question, state.reading
        code = question.entity if reading.name else ""
        queries = [" ".join(filter(None, (reading.name, code, reading.quantity_en)))]
        if reading.kind == "window" and code:
            queries.insert(0, f"{reading.name} {code} key statistics")
        if question.question_zh and reading.quantity_zh:
            queries.append(" ".join(filter(None, (reading.name, code, reading.quantity_zh))))
        results: list[dict[str, Any]] = []
        seen: set[str] = set()
        for query in dict.fromkeys(queries):
            for item in await self._search(state, query):
                if item["url"] not in seen:
                    seen.add(item["url"])
                    results.append(item)
        return results

    @staticmethod
    def _has_column(page: ParsedPage, reading: Reading, question: ServedQuestion) -> bool:
        """Whether one of the page's tables names the quantity (as a row of an item table or a column)."""
        for rows in page.tables:
            if not rows:
                continue
            labels = [row[0] for row in rows[1:] if row] if len(rows[0]) == 3 else list(rows[0])
            if best_label(labels, reading, question) is not None:
                return True
        return False

    @staticmethod
    def _from_digest(page: ParsedPage, reading: Reading, question: ServedQuestion) -> str | None:
        """The window's figure from a portal's key statistics, when it prints exactly that window."""
        lexicon = load_lexicon()
        for rows in page.tables:
            if len(rows) < 2 or len(rows[0]) < 2:
                continue
            spans = [int(m.group(1)) if (m := _SPAN.match(h)) else None for h in rows[0][1:]]
            for row in rows[1:]:
                statistic = next((s for s in STATISTICS if row[0].split(" (")[0].split("（")[0] in (s[3], s[4])), None)
                if statistic is None:
                    continue
                aggregate, name, extra = statistic[0], statistic[1], statistic[2]
                entry = lexicon.entry(None, name)
                if aggregate != reading.aggregate or entry is None or not label_matches(entry.en, reading, question):
                    continue
                wanted = window_records(reading, aggregate) - extra
                if wanted not in spans:
                    continue
                value = cell_number(row[1 + spans.index(wanted)])
                unit = UNIT_SUFFIX.search(row[0])
                if value is None:
                    continue
                chosen = choose([Candidate(value, unit.group(1) if unit and aggregate != "pct_change" else None,
                                           page.as_of, "", 0, row[0])], reading)
                if chosen is not None:
                    return chosen[0]
        return None

    async def _from_bulletins(self, state: _Question, archive_url: str, reading: Reading,
                              question: ServedQuestion) -> tuple[str | None, str | None]:
        """A snapshot or window of an obscure entity from its exchange's daily bulletins."""
        code = question.entity
        archive = await self._read(state, archive_url)
        sessions: list[str] = []
        page_of: dict[str, str] = {}
        for href, text in archive.links:
            found = _ARCHIVE_ITEM.match(text)
            if found is None:
                continue
            day, first, last = found.groups()
            if day not in sessions:
                sessions.append(day)
            if first <= code <= last:
                page_of.setdefault(day, href)
        if reading.kind == "snapshot":
            wanted = sessions[reading.sessions: reading.sessions + 1]
        else:
            wanted = sessions[: window_records(reading, reading.aggregate or "mean")][::-1]  # oldest first
        if not wanted or any(day not in page_of for day in wanted):
            return None, None
        values: list[float] = []
        unit: str | None = None
        for day in wanted:
            page = await self._read(state, self._url(page_of[day]))
            row_value = None
            for rows in page.tables:
                if not rows or len(rows[0]) < 3:
                    continue
                column = best_label(list(rows[0][2:]), reading, question)
                if column is None:
                    continue
                label = rows[0][column + 2]
                suffix = UNIT_SUFFIX.search(label)
                unit = suffix.group(1) if suffix else None
                row = next((r for r in rows[1:] if r and r[0] == code), None)
                if row is not None and len(row) > column + 2:
                    row_value = cell_number(row[column + 2])
            if row_value is None:
                return None, None
            values.append(row_value)
        if reading.kind == "snapshot":
            value: float | str | None = values[0]
        else:
            value = aggregate_values(values, [d.replace("-", "") for d in wanted], reading.aggregate or "mean")
        if value is None:
            return None, None
        keeps_unit = reading.aggregate not in ("argmax", "argmin", "count", "pct_change")
        chosen = choose([Candidate(value, unit if keeps_unit else None, wanted[-1].replace("-", ""), archive_url, 0,
                                   "bulletin")], reading)
        return (chosen[0], archive_url) if chosen is not None else (None, None)


@contextlib.asynccontextmanager
async def open_navigator(*, web_dir: Path, day: dt.date, name: str, read_budget: int | None,
                         searxng_url: str | None = None, concurrency: int = 4,
                         allow_partial_web: bool = False) -> AsyncIterator[NavigatorAgent]:
    """The navigator over `searxng_url`, or over the offline web of `day` served from `web_dir` on
    127.0.0.1 for the run (its clock checked; the full web unless `allow_partial_web`)."""
    async with contextlib.AsyncExitStack() as stack:
        if searxng_url is None:
            from livesearch_pipeline.web.server import running_web

            searxng_url = stack.enter_context(running_web(web_dir, clock=day, allow_partial=allow_partial_web))
        http = await stack.enter_async_context(httpx.AsyncClient(limits=httpx.Limits(max_connections=2 * concurrency)))
        tools = WebTools(WebToolsConfig(searxng_url=searxng_url, max_results=10), http)
        yield NavigatorAgent(tools=tools, http=http, as_of=day, base_url=searxng_url, name=name,
                             read_budget=read_budget)
