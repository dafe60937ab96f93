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

Investigations (a drawdown, the best month, a screen, three indices: agents/investigations.py)
are worked the same way: the series each needs from the exchange's pages, monthly pages or
bulletins, the screen's cross-section from the bulletins of the latest session, and the statistic
computed.

Chains are followed hop by hop (`read_chain`: a fund's largest holding, an index's heaviest
constituent, named by the first hop's page, then that stock's figure); statement growth and
margins are computed from the company's report pages. An obscure entity's report is a long
document (web/reports.py): it is read from its cover page by page, following each page's link to
the next, to the statement it needs (an obscure fund's holdings likewise, from its newest report
on its company page). Chains through a date or an entity a first
hop names (a holding's industry index, the days since a report or an ex-date, a payout ratio, the
session of the highest close, a figure converted into CNY at that day's closing bid rates) are
worked in agents/chains.py (`read_chain_shape`). A snapshot's row is
the session k back on the market's calendar; a portal's key statistic is taken only when printed
to the decimals asked.

Each page it opens counts against `read_budget` and each search against `search_budget` (None: no
limit; agents/budget.py's ledger counts them and records each in the trace, what came back
included); when the budget runs out before it has every row it needs, it gives no answer (recorded
in its trace).
It never guesses a URL: an exchange page is opened only once seen in a search result or a link of
a page read for the question, and one not seen is looked for first (`NavigatorAgent._find`), so
its reads are the walk the evidence map's effort counts.
Exchange pages are preferred over portals (no lag, no third-party figures); among portals it
chooses as search-read does. Pages read once are kept for the run (the web of D does not change),
but count against each question's budget that opens them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Sequence
from urllib.parse import urljoin, urlsplit

import httpx

from livesearch_pipeline.core.calendars import session_on_or_before, sessions_back, sessions_between
from livesearch_pipeline.core.lexicon import load_lexicon
from livesearch_pipeline.core.models import Prediction, ReadBudget, ServedQuestion
from livesearch_pipeline.core.program import window_rows
from livesearch_pipeline.evaluation.agents.budget import BudgetRefused, Ledger, charged_search, counted
from livesearch_pipeline.evaluation.agents.loop import ToolFailure
from livesearch_pipeline.evaluation.agents.reading import (
    fetch_text, forked_web_agent,
    UNIT_SUFFIX, Candidate, ParsedPage, Reading, UnreadableQuestion, _english_nouns, aggregate_values,
    best_label,
    candidates_from_page,
    cell_number, choose, convert, label_matcher, parse_page, read_question,
)
from livesearch_pipeline.evaluation.agents.entity_search import with_codes
from livesearch_pipeline.evaluation.agents.page_reading import (  # noqa: F401 (chains and tests read them here too)
    _ARCHIVE_ITEM, _CALENDARS, _INCOME, PRIOR_WORK, RESULTS_PER_QUERY, BudgetExhausted, _class_of, _column,
    _publication_lags, _Question, _statement_field, archive_index, fx_bid_closes, history_rows, report_figure,
    report_periods, top_of_first_hop,
)
from livesearch_pipeline.evaluation.agents.web import WebTools, WebToolsConfig
from livesearch_pipeline.web.digest import STATISTICS
from livesearch_pipeline.web.wording import TITLES, canonical_label
from livesearch_pipeline.web.reports import continuation_number

HTTP_TIMEOUT_S = 20.0
# Exchange data-set pages tried from a company page before giving up on finding the quantity.
MAX_DATA_PAGES = 8
_EXCHANGE_DATA = re.compile(r"^/exchange/(?!company/|filings/|reports/|bulletin/)[a-z0-9_]+/[^/]+\.html$")
_REPORT = re.compile(r"^/exchange/reports/[^/]+/(\d{8})\.html$")
# The quote data sets: read first among an entity's exchange pages.
_QUOTES = ("daily", "hk_daily", "us_daily", "index_daily", "fund_nav", "fund_daily")
_SPAN = re.compile(r"^(\d+)")
# How a question dates a figure an announcement gives (an earnings flash's, a forecast's).
_ANNOUNCEMENT = " in the most recent announcement"
# Exchange pages an analyst finds without a link: an entity's company page (search its code) and an
# exchange's list of its bulletin archives (search the exchange's bulletins); both are indexed.
_FINDABLE = re.compile(r"^/exchange/(company/[^/]+|bulletin/[^/]+/index)\.html$")



# Data sets an obscure entity publishes only inside its periodic reports (web/reports.py).
_DOCUMENT_TOOLS = frozenset({"fund_portfolio"})
_REPORT_TOOLS = frozenset({"income", "balancesheet", "cashflow", "fina_indicator", "hk_income", "hk_balancesheet",
                           "hk_cashflow", "hk_fina_indicator", "us_income", "us_balancesheet", "us_cashflow",
                           "us_fina_indicator"})


@functools.lru_cache(maxsize=1)
def _nouns() -> tuple[tuple[str, str, str, str], ...]:
    """(tool, asset classes, English noun, Chinese noun) of every entity data set's field: which
    page prints a quantity, as an analyst knows where to look for it (the lexicon's nouns)."""
    from livesearch_pipeline.dataservice.catalog import collect_tool_specs

    lexicon = load_lexicon()
    out = []
    for spec in collect_tool_specs():
        meta = spec.meta
        if meta.role != "data" or meta.entity_param is None:
            continue
        for f in meta.fields:
            entry = lexicon.entry(meta.name, f.name)
            if entry is not None:
                out.append((meta.name, " ".join(meta.asset_classes), entry.en or "", entry.zh or ""))
    return tuple(out)


def in_english(page: ParsedPage, question: ServedQuestion) -> ParsedPage:
    """A Chinese page read for a question asked in English only (an FX pair's): its column and
    row labels restated as the lexicon's English nouns of the fields they name, as an analyst
    reading both languages would (the figures and other cells unchanged)."""
    if question.question_zh:
        return page
    asked = canonical_label(question.question, "en")

    def english(label: str) -> str:
        if not re.search(r"[\u4e00-\u9fff]", label):
            return label
        suffix = UNIT_SUFFIX.search(label)
        bare = label[: suffix.start()] if suffix else label
        nouns = _english_nouns(bare.strip())
        if not nouns:
            return label
        return next((n for n in nouns if n in asked), nouns[0]) + (suffix.group(0) if suffix else "")

    tables = []
    for rows in page.tables:
        if not rows:
            tables.append(rows)
            continue
        items = tuple(" ".join(h.lower().split()) for h in rows[0]) in {("item", "value", "unit"), ("项目", "数值", "单位")}
        body = tuple((english(row[0]), *row[1:]) if items and row else row for row in rows[1:])
        tables.append((tuple(english(h) for h in rows[0]),) + body)
    return ParsedPage(tuple(tables), page.as_of, page.links, page.title)


def _stale(as_of: str, day: dt.date) -> bool:
    """Whether a record dated `as_of` (YYYYMMDD) is more than a year before `day`."""
    if not re.fullmatch(r"\d{8}", as_of or ""):
        return False
    return (day - dt.date(int(as_of[:4]), int(as_of[4:6]), int(as_of[6:]))).days > 366


def _tool_of(url: str) -> str | None:
    """The data set a page of the exchange or a portal prints (/<site>/<data set>/<code>.html)."""
    parts = urlsplit(url).path.split("/")
    return parts[2] if len(parts) > 3 else None


def data_sets_for(reading: Reading, question: ServedQuestion) -> list[str]:
    """The entity data sets whose fields are the quantity the question names, best first (the
    exact noun before a noun the question merely contains)."""
    from livesearch_pipeline.web.wording import canonical_label

    wanted = canonical_label(reading.quantity_en, "en")
    matches = label_matcher(reading, question)
    exact, partial = [], []
    for tool, classes, noun_en, noun_zh in _nouns():
        if question.asset_class not in classes.split():
            continue
        if noun_en and canonical_label(noun_en, "en") == wanted:
            exact.append(tool)
        elif noun_en and matches(noun_en) or noun_zh and matches(noun_zh):
            partial.append((len(noun_en), tool))
    ordered = list(dict.fromkeys(exact + [tool for _, tool in sorted(partial, key=lambda item: -item[0])]))
    if _ANNOUNCEMENT in question.question:
        # An announcement's figure (an earnings flash's, a forecast's) is its own data set's, not
        # a periodic statement's of the same name: the statements go last.
        ordered = [t for t in ordered if t not in _REPORT_TOOLS] + [t for t in ordered if t in _REPORT_TOOLS]
    return ordered


def _exchange_order(urls: Sequence[str]) -> list[str]:
    """An entity's exchange pages in the order an analyst opens them: the quote page, then its
    periodic reports newest first, then the other data sets (in the order given)."""
    def rank(position: int, url: str) -> tuple[int, str, int]:
        path = urlsplit(url).path
        report = _REPORT.match(path)
        if report:
            return 1, str(99999999 - int(report.group(1))), position
        return (0 if path.split("/")[2] in _QUOTES else 2), "", position

    return [url for _, url in sorted((rank(i, u), u) for i, u in enumerate(dict.fromkeys(urls)))]


def _has_history(page: ParsedPage) -> bool:
    """Whether the page prints a history table (more than the latest session): then its
    bulletins add nothing an analyst needs for a window it holds."""
    return any(len(rows) > 2 and rows[0] and rows[0][0].lower() in ("date", "日期") for rows in page.tables)


def _reaches(page: ParsedPage, first: str | None) -> bool:
    """Whether the page's history table reaches back to `first` (YYYYMMDD: a snapshot's session or
    a window's first; None: a history table at all): then its bulletins add nothing an analyst
    needs. A middle-visibility entity's page of a daily series prints its last few sessions only."""
    if not _has_history(page):
        return False
    return first is None or any(_is_history(rows) and len(rows) > 2 and min(r[0] for r in rows[1:]) <= first
                                for rows in page.tables)


def _is_history(rows: Sequence[Sequence[str]]) -> bool:
    """A history table: a date column first, one row per session (YYYYMMDD)."""
    return bool(rows and rows[0] and rows[0][0].lower() in ("date", "日期")
                and all(row and re.fullmatch(r"\d{8}", row[0]) for row in rows[1:]))


def _date_like(candidate: Candidate, reading: Reading) -> bool:
    """A figure that is a date (a record's trade date read as the quantity) where a number is asked."""
    value = candidate.value
    if not (reading.answer in ("number", "percent", "integer") and isinstance(value, float) and value.is_integer()
            and 19_000_101 <= value <= 21_001_231):
        return False
    month, day = int(value) // 100 % 100, int(value) % 100
    return 1 <= month <= 12 and 1 <= day <= 31  # 20000000.0 CNY of audit fees is no date


def _precise_enough(cell: str, unit: str | None, reading: Reading) -> bool:
    """Whether a printed figure carries the decimals the question asks for, once restated in the
    question's unit (16.2 CNY does not give an answer to 2 decimals; 16.2 thousand CNY gives
    millions to 4)."""
    if reading.answer not in ("number", "percent") or reading.decimals is None:
        return True
    places = len(cell.split(".", 1)[1]) if "." in cell else 0
    factor = convert(1.0, unit, reading.unit) if reading.answer == "number" else 1.0
    if not factor:
        return True  # units that cannot be reconciled are rejected when the answer is chosen
    return places - math.log10(factor) >= reading.decimals - 1e-9


def window_records(reading: Reading, aggregate: str) -> int:
    """How many records the question's window spans for `aggregate` (DESIGN's window convention,
    `core.program.window_rows`): N + 1 closes for a change over N sessions, else N."""
    return window_rows(aggregate, reading.sessions)


@dataclass
class NavigatorAgent:
    tools: WebTools
    http: httpx.AsyncClient
    as_of: dt.date
    base_url: str
    name: str = "navigator"
    model: str | None = None
    read_budget: int | None = None
    search_budget: int | None = None
    _searches: dict[str, Any] = field(default_factory=dict, repr=False)
    _pages: dict[str, ParsedPage] = field(default_factory=dict, repr=False)

    def forked(self):
        """This agent in a forked worker process (`base.ForkableAgent`): its own HTTP client, the
        same web; its answers do not depend on the process that reads."""
        return forked_web_agent(self)

    async def prepare(self, questions: Sequence[ServedQuestion]) -> None:
        """Nothing is prepared: each question is read, searched and browsed on its own."""

    # ------------------------------------------------------------------ plumbing

    async def _search(self, state: _Question, query: str, limit: int = RESULTS_PER_QUERY) -> list[dict[str, Any]]:
        try:
            found = await charged_search(state.ledger, self.tools, self._searches, query)
        except BudgetRefused as exc:
            raise BudgetExhausted(query) from exc
        results = found[:limit]
        state.seen.update(urlsplit(str(r["url"])).path for r in results)
        return results

    async def _read(self, state: _Question, url: str) -> ParsedPage:
        """The page at `url`, one read of the budget (none when this question read it already).
        An exchange page it has not seen (in a search result or a link of a page it read) is first
        looked for as an analyst would (`_find`); one it still has not seen is not opened
        (ToolFailure): URLs are never guessed, so its reads are the walk the evidence map's
        effort counts."""
        if url in state.opened:
            return self._pages[url]  # read before for this question: still in front of the reader
        path = urlsplit(url).path
        if path.startswith("/exchange/") and path not in state.seen and not _FINDABLE.match(path):
            await self._find(state, path)
            if path not in state.seen:
                raise ToolFailure(f"{url}: in no search result and linked from no page read")
        try:
            state.ledger.charge_read(url)
        except BudgetRefused as exc:
            raise BudgetExhausted(url) from exc
        page = self._pages.get(url)
        if page is None:
            try:
                text = await fetch_text(self.http, url, timeout=HTTP_TIMEOUT_S)
            except ToolFailure as exc:
                state.ledger.read(url, error=str(exc))
                raise
            page = self._pages.setdefault(url, parse_page(text))
        state.ledger.read(url, title=page.title, as_of=page.as_of, tables=len(page.tables),
                          rows=sum(len(table) for table in page.tables))
        state.seen.update(urlsplit(href).path for href, _ in page.links)
        return page

    async def _find(self, state: _Question, path: str) -> None:
        """Look for an exchange page not seen yet, as an analyst does: search its code and the data
        set's title (free); else open the entity's company page, which links all its pages (for a
        month of its history, then its quote page, which links the months); a bulletin or its
        archive through the exchange's list of archives, then the archive. Reads count."""
        parts = path.split("/")
        if len(parts) < 4:
            return
        if parts[2] == "bulletin":
            if len(parts) < 6:
                return
            archive = f"/exchange/bulletin/{parts[3]}/{parts[4]}/index.html"
            if archive not in state.seen:
                await self._read(state, self._url(f"/exchange/bulletin/{parts[3]}/index.html"))
            if path != archive and archive in state.seen and path not in state.seen:
                await self._read(state, self._url(archive))
            return
        tool, code = parts[2], parts[3].removesuffix(".html")
        for title in TITLES.get(tool, ()) if len(parts) == 4 else ():
            await self._search(state, f"{code} {title}")
            if path in state.seen:
                return
        await self._read(state, self._url(f"/exchange/company/{code}.html"))
        if path not in state.seen and len(parts) > 4 and tool not in ("reports", "company", "filings"):
            with contextlib.suppress(ToolFailure):
                await self._read(state, self._url(f"/exchange/{tool}/{code}.html"))

    def _url(self, path: str) -> str:
        return urljoin(self.base_url.rstrip("/") + "/", path.lstrip("/"))

    def _spent(self, state: _Question) -> Prediction:
        """No answer: the read budget ran out before the evidence was complete."""
        state.trace.append({"type": "final", "answer": None, "reason": f"read budget of {self.read_budget} "
                            "pages spent before the evidence was complete", "reads": state.reads})
        return Prediction(qid=state.question.qid, answer=None, trace=state.trace)

    async def _read_report(self, state: _Question, cover: str, wanted: Callable[[ParsedPage], Any]) -> Any:
        """What `wanted` finds first in a periodic report, reading from its cover on: a one-page
        report at once, an obscure entity's long document page by page (each link to the next
        page, as a reader turns them) until the page that has it. None at the document's end."""
        url = cover
        while True:
            page = await self._read(state, url)
            found = wanted(page)
            if found is not None:
                return found
            following = next_report_page(page, urlsplit(url).path)
            if following is None:
                return None
            url = self._url(following)

    # ------------------------------------------------------------------ the agent

    @property
    def budget(self) -> ReadBudget:
        """Its declared budget per question: `read_budget` pages, `search_budget` searches."""
        return ReadBudget(max_reads=self.read_budget, max_searches=self.search_budget)

    async def answer(self, question: ServedQuestion) -> Prediction:
        """The answer, its searches and reads counted in its usage (agents/budget.py). A code-free
        question's entity is found by its name first (entity_search.py), on the question's ledger:
        those searches and reads count against its budget, and the question's reading goes on with
        the same ledger (page_reading.PRIOR_WORK)."""
        ledger = Ledger(self.budget, [])
        try:
            resolved = await with_codes(question, functools.partial(self._name_search, ledger),
                                        functools.partial(self._name_read, ledger))
        except BudgetRefused:
            return counted(Prediction(qid=question.qid, answer=None, trace=ledger.trace))
        trace = ledger.trace
        assert trace is not None
        trace.extend(resolved.trace)
        if resolved.question is None:
            return counted(Prediction(qid=question.qid, answer=None, trace=trace))
        found = list(trace)  # the name's searches and reads, and what they found
        token = PRIOR_WORK.set((ledger, frozenset(urlsplit(u).path for u in resolved.seen)))
        try:
            prediction = await self._answer(resolved.question)
        finally:
            PRIOR_WORK.reset(token)
        if (prediction.trace or [])[:len(found)] != found:  # answered without a page reading (a skip)
            prediction = prediction.model_copy(update={"trace": [*found, *(prediction.trace or [])]})
        return counted(prediction)

    async def _name_search(self, ledger: Ledger, query: str) -> list[dict[str, Any]]:
        return (await charged_search(ledger, self.tools, self._searches, query))[:RESULTS_PER_QUERY]

    async def _name_read(self, ledger: Ledger, url: str) -> ParsedPage:
        fresh = ledger.charge_read(url)
        page = self._pages.get(url)
        if page is None:
            page = self._pages.setdefault(url, parse_page(await fetch_text(self.http, url, timeout=HTTP_TIMEOUT_S)))
        if fresh:
            ledger.read(url, title=page.title, as_of=page.as_of, tables=len(page.tables),
                        rows=sum(len(table) for table in page.tables))
        return page

    async def _answer(self, question: ServedQuestion) -> Prediction:
        from livesearch_pipeline.evaluation.agents.investigations import _Investigator, read_investigation

        investigation = read_investigation(question)
        if investigation is not None:
            return await self._investigate(question, *investigation)
        chain = read_chain(question)
        if chain is not None:
            return await self._follow_chain(question, chain)
        from livesearch_pipeline.evaluation.agents.chains import answer_chain_shape, read_chain_shape

        shape = read_chain_shape(question)  # chains through a date or an entity a first hop names
        if shape is not None:
            return await answer_chain_shape(self, question, *shape, investigator=_Investigator)
        exdate = _EXDATE_CLOSE.match(question.question)
        if exdate is not None:
            return await self._on_ex_date(question, exdate)
        try:
            reading = read_question(question)
        except UnreadableQuestion as exc:
            return Prediction(qid=question.qid, answer=None, trace=[{"type": "skip", "reason": str(exc)}])
        state = _Question(question, reading, self.budget)
        return await self._answer_state(state)

    async def _answer_state(self, state: _Question) -> Prediction:
        question, reading = state.question, state.reading
        state.trace.append({"type": "reading", "kind": reading.kind, "quantity": reading.quantity_en,
                            "aggregate": reading.aggregate, "sessions": reading.sessions, "unit": reading.unit,
                            "budget": self.read_budget})
        try:
            answer, source = await self._work(state)
        except BudgetExhausted:
            return self._spent(state)
        state.trace.append({"type": "final", "answer": answer, "url": source, "reads": state.reads,
                            **({} if answer is not None else {"reason": "no page gave the quantity"})})
        return Prediction(qid=question.qid, answer=answer, trace=state.trace)

    async def _follow_chain(self, question: ServedQuestion, chain: tuple[str, str, str, str]) -> Prediction:
        """A chain: the first hop's page (a fund's portfolio, an index's weights) names the stock,
        whose figure is then read as a question of its own, within the same budget."""
        tool, holder, noun, tail = chain
        first = Reading(kind="chain", name="", quantity_en=tool, quantity_zh=None)
        state = _Question(question, first, self.budget)
        state.trace.append({"type": "reading", "kind": "chain", "first_hop": tool, "holder": holder,
                            "quantity": noun, "budget": self.read_budget})
        try:
            try:
                page = await self._read(state, self._url(f"/exchange/{tool}/{holder}.html"))
                stock = top_of_first_hop(page, tool)
            except ToolFailure:
                if tool not in _DOCUMENT_TOOLS:
                    raise
                # An obscure fund publishes its holdings only in its periodic reports: the newest
                # one, from its company page, read on to the holdings.
                stock = await self._from_reports(state, holder, lambda page: top_of_first_hop(page, tool))
        except ToolFailure as exc:
            state.trace.append({"type": "final", "answer": None, "reason": str(exc), "reads": state.reads})
            return Prediction(qid=question.qid, answer=None, trace=state.trace)
        except BudgetExhausted:
            return self._spent(state)
        if stock is None:
            state.trace.append({"type": "final", "answer": None, "reads": state.reads,
                                "reason": f"no stock found on the {tool} page of {holder}"})
            return Prediction(qid=question.qid, answer=None, trace=state.trace)
        # The stock's question in both languages (the exchange prints Chinese labels).
        zh = (question.question_zh or "").split("，", 1)
        second = question.model_copy(update={
            "question": f"What was the {noun} of {stock} ({stock}) on the most recent trading day{tail}",
            "question_zh": f"{stock}（{stock}）{zh[1]}" if len(zh) == 2 else None,
            "entity": stock, "asset_class": _class_of(stock, "cn_equity")})
        try:
            reading = read_question(second)
        except UnreadableQuestion as exc:
            state.trace.append({"type": "final", "answer": None, "reason": str(exc), "reads": state.reads})
            return Prediction(qid=question.qid, answer=None, trace=state.trace)
        state.question, state.reading = second, reading
        state.trace.append({"type": "chain", "stock": stock, "question": second.question})
        prediction = await self._answer_state(state)
        return prediction.model_copy(update={"qid": question.qid})

    async def _report_candidates(self, state: _Question, cover: ParsedPage, url: str, rank: int,
                                 tried: set[str]) -> list[Candidate]:
        """The candidates of a long report's statement pages, read on from its cover page by page
        until the first page without a table after them (the notes)."""
        question, reading = state.question, state.reading
        found: list[Candidate] = []
        page, path, tables_seen = cover, urlsplit(url).path, False
        while (following := next_report_page(page, path)) is not None:
            link = self._url(following)
            tried.add(link)
            page, path = in_english(await self._read(state, link), question), urlsplit(link).path
            if not page.tables:
                if tables_seen:
                    break
                continue
            tables_seen = True
            found += candidates_from_page(page, link, rank, reading, question, self._snapshot_day(reading, question))
        return found

    async def _from_reports(self, state: _Question, code: str, wanted: Callable[[ParsedPage], Any]) -> Any:
        """What `wanted` finds in the entity's newest periodic report (found on its company page)."""
        hub = await self._read(state, self._url(f"/exchange/company/{code}.html"))
        periods = report_periods(hub, code)
        if not periods:
            return None
        return await self._read_report(state, self._url(f"/exchange/reports/{code}/{periods[0]}.html"), wanted)

    async def _on_ex_date(self, question: ServedQuestion, found: re.Match[str]) -> Prediction:
        """A figure on the ex-dividend date of the latest implemented dividend: the dividend page
        gives the date, then the figure is read as a snapshot that many sessions back."""
        code = question.entity
        state = _Question(question, Reading(kind="chain", name="", quantity_en="dividend", quantity_zh=None),
                          self.budget)
        state.trace.append({"type": "reading", "kind": "chain", "first_hop": "dividend", "budget": self.read_budget})

        def final(answer: str | None, reason: str) -> Prediction:
            state.trace.append({"type": "final", "answer": answer, "reads": state.reads, "reason": reason})
            return Prediction(qid=question.qid, answer=answer, trace=state.trace)

        try:
            page = await self._read(state, self._url(f"/exchange/dividend/{code}.html"))
        except BudgetExhausted:
            return final(None, f"read budget of {self.read_budget} pages spent before the evidence was complete")
        except ToolFailure as exc:
            return final(None, str(exc))
        calendar = _CALENDARS.get(question.asset_class, "XSHG")
        latest = session_on_or_before(calendar, self.as_of)
        day = latest_ex_date(page, latest.strftime("%Y%m%d"))
        if day is None:
            return final(None, "no implemented dividend with an ex-dividend date on the dividend page")
        ex = dt.date(int(day[:4]), int(day[4:6]), int(day[6:]))
        back = len(sessions_between(calendar, ex, latest)) - 1
        second = question.model_copy(update={
            "question": f"What was the {found.group('noun')} of {found.group('subj')} {back} trading days before the "
                        f"most recent one{found.group('tail')}"})  # the Chinese text names the same figure
        try:
            reading = read_question(second)
        except UnreadableQuestion as exc:
            return final(None, str(exc))
        state.question, state.reading = second, reading
        state.trace.append({"type": "chain", "ex_date": day, "question": second.question})
        # The month's history page of the data set printing the figure holds the ex-date's row.
        for tool in [t for t in data_sets_for(reading, second) if t not in _REPORT_TOOLS][:2]:
            url = self._url(f"/exchange/{tool}/{code}/history/{day[:4]}-{day[4:6]}.html")
            try:
                month = await self._read(state, url)
            except BudgetExhausted:
                return final(None, f"read budget of {self.read_budget} pages spent before the evidence was complete")
            except ToolFailure:
                continue  # no month page of that data set (the read still counts)
            chosen = choose(candidates_from_page(month, url, 0, reading, second, day), reading)
            if chosen is not None:
                return final(chosen[0], f"read on {day} from {url}")
        prediction = await self._answer_state(state)
        return prediction.model_copy(update={"qid": question.qid})

    async def _investigate(self, question: ServedQuestion, name: str, parts: dict[str, str]) -> Prediction:
        reading = Reading(kind="investigation", name="", quantity_en=name, quantity_zh=None)
        state = _Question(question, reading, self.budget)
        state.trace.append({"type": "reading", "kind": "investigation", "investigation": name, "parts": parts,
                            "budget": self.read_budget})
        try:
            from livesearch_pipeline.evaluation.agents.investigations import investigate

            answer = await investigate(self, state, name, parts)
        except ToolFailure as exc:
            state.trace.append({"type": "final", "answer": None, "reason": str(exc), "reads": state.reads})
            return Prediction(qid=question.qid, answer=None, trace=state.trace)
        except BudgetExhausted:
            return self._spent(state)
        state.trace.append({"type": "final", "answer": answer, "reads": state.reads,
                            **({} if answer is not None else {"reason": "no page gave the figures"})})
        return Prediction(qid=question.qid, answer=answer, trace=state.trace)

    async def _work(self, state: _Question) -> tuple[str | None, str | None]:
        question, reading = state.question, state.reading
        code = question.entity if reading.name else ""
        results = await self._results(state)
        own = [r for r in results if not code or code in str(r.get("title", ""))]
        exchange = _exchange_order([r["url"] for r in own if _EXCHANGE_DATA.match(urlsplit(r["url"]).path)
                                    or _REPORT.match(urlsplit(r["url"]).path)])
        portals = [r["url"] for r in own if not urlsplit(r["url"]).path.startswith("/exchange/")]
        if not code:
            # A market-wide series: its official release and history pages first, no company's pages;
            # of a series reported per pair or exchange, the pages of the question's one first.
            exchange = []
            # A window or a session back: a history table first.
            history = reading.kind in ("window", "snapshot")
            key = (reading.key or "").upper()
            portals = sorted(portals, key=lambda u: (not (key and f"/{key}" in urlsplit(u).path.upper()),
                                                     not (history and urlsplit(u).path.endswith("/history.html")),
                                                     not urlsplit(u).path.startswith("/stats/")))
        if reading.kind == "window" and code:
            digests = [u for u in portals if "/stats/" in urlsplit(u).path]
            for url in digests[:1]:
                found = self._from_digest(await self._read(state, url), reading, question)
                if found is not None:
                    return found, url
        candidates: list[Candidate] = []
        tried: set[str] = set()
        # The exchange's pages first: those of the data sets printing the quantity, then the ones
        # in the results, then the company page's.
        data_sets = data_sets_for(reading, question)
        known = [] if not code else [
            self._url(f"/exchange/{tool}/{code}.html") for tool in data_sets
            if tool not in _REPORT_TOOLS][:3]
        reports = [u for u in exchange if _REPORT.match(urlsplit(u).path)]
        # A figure "in the most recent announcement" is an earnings flash's or forecast's, not a
        # periodic report's: the report pages come first only otherwise.
        if code and any(tool in _REPORT_TOOLS for tool in data_sets[:2]) and _ANNOUNCEMENT not in question.question:
            known = reports[:1] + known
        queue = list(dict.fromkeys(known + exchange))
        # A statement's (or a fund's holdings') figure: an obscure entity's report is walked page by
        # page when the quantity is first of all a statement's (an announcement's figure, a
        # preliminary result or a forecast, is read from its own page instead).
        walks_reports = bool(code) and any(tool in _REPORT_TOOLS or tool in _DOCUMENT_TOOLS
                                           for tool in data_sets[:1])
        hub_page: ParsedPage | None = None
        if walks_reports:
            # The most recently reported period is the company page's newest report (a search may
            # return an older one first, and a long report's cover prints no statement).
            hub_page = await self._read(state, self._url(f"/exchange/company/{code}.html"))
            newest = report_periods(hub_page, code)[:1]
            queue = list(dict.fromkeys([self._url(f"/exchange/reports/{code}/{p}.html") for p in newest]
                                       + [u for u in queue if not _REPORT.match(urlsplit(u).path)]))
        company_read = False
        while True:
            while queue:
                url = queue.pop(0)
                if url in tried:
                    continue
                tried.add(url)
                try:
                    page = in_english(await self._read(state, url), question)
                except ToolFailure:
                    continue  # a data set the entity has no page of (the read still counts)
                if code and reading.kind in ("snapshot", "window"):
                    page = await self._with_months(state, page, url, reading, question)
                rank = len(tried)
                found = [c for c in candidates_from_page(page, url, rank, reading, question,
                                                         self._snapshot_day(reading, question, _tool_of(url)))
                         if not _date_like(c, reading)]
                if walks_reports and next_report_page(page, urlsplit(url).path) is not None:
                    # A long report: its statement pages' candidates together, as its one-page
                    # version shows them (read on until the notes after the statements).
                    found += [c for c in await self._report_candidates(state, page, url, rank, tried)
                              if not _date_like(c, reading)]
                if found:
                    chosen = choose(found, reading)
                    if chosen is not None:
                        if not (reading.kind == "latest" and " most recently reported period" in question.question
                                and _stale(chosen[1].as_of, self.as_of)):
                            return chosen[0], chosen[1].url
                        # A record over a year old (an earnings flash of two years ago) is not the
                        # most recently reported period while other pages may print a fresher one:
                        # kept, and read on while the budget allows.
                        if state.ledger.reads_left() == 0:
                            return chosen[0], chosen[1].url
                        candidates.extend(found)
                if (reading.kind in ("snapshot", "window")
                        and not _reaches(page, self._snapshot_day(reading, question, _tool_of(url)))
                        and self._has_column(page, reading, question)):
                    archive = next((href for href, _ in page.links if "/exchange/bulletin/" in href), None)
                    if archive is not None:
                        return await self._from_bulletins(state, self._url(archive), reading, question)
            if company_read or not code:
                break
            company_read = True
            company = self._url(f"/exchange/company/{code}.html")
            hub = hub_page or await self._read(state, company)
            links = _exchange_order([self._url(href) for href, _ in hub.links
                                     if _EXCHANGE_DATA.match(href) or _REPORT.match(href)])
            queue = [u for u in links if u not in tried][:MAX_DATA_PAGES]
        # No exchange page answered: the portals, chosen as search-read chooses.
        for rank, url in enumerate(portals):
            if url in tried or state.ledger.reads_left() == 0:
                continue
            tried.add(url)
            found = [c for c in candidates_from_page(in_english(await self._read(state, url), question), url, rank,
                                                     reading, question,
                                                     self._snapshot_day(reading, question, _tool_of(url)))
                     if not _date_like(c, reading)]
            path = urlsplit(url).path
            if found and not code and reading.key and path.startswith("/stats/") and f"/{reading.key.upper()}" in path.upper():
                # The statistics release's own history of the pair or exchange: no portal adds to it.
                chosen = choose(found, reading)
                if chosen is not None:
                    return chosen[0], url
            candidates.extend(found)
        chosen = choose(candidates, reading)
        return (chosen[0], chosen[1].url) if chosen is not None else (None, None)

    async def _with_months(self, state: _Question, page: ParsedPage, url: str, reading: Reading,
                           question: ServedQuestion) -> ParsedPage:
        """The exchange page of a middle-visibility entity's quote prints its last sessions only and
        links its history month by month (web/pages.py): when a snapshot's session or a window's
        first session is older than its table's oldest row, the months back to it are read, newest
        first, each one read of the budget, and their rows joined to the table, as a deeper page
        would print it."""
        tool = _tool_of(url)
        first = self._snapshot_day(reading, question, tool)
        at = next((i for i, rows in enumerate(page.tables) if len(rows) > 2 and _is_history(rows)), None)
        if first is None or tool is None or at is None:
            return page
        table = page.tables[at]
        rows = list(table[1:])
        oldest = min(row[0] for row in rows)
        prefix = f"/exchange/{tool}/{question.entity}/history/"
        months = sorted({href for href, _ in page.links if urlsplit(href).path.startswith(prefix)}, reverse=True)
        for month in months:
            if oldest <= first:
                break
            key = urlsplit(month).path.rsplit("/", 1)[1][:7].replace("-", "")
            if key > oldest[:6]:
                continue  # a month the table holds already
            monthly = in_english(await self._read(state, self._url(month)), question)
            older = [row for rows in monthly.tables if _is_history(rows) and rows[0] == table[0]
                     for row in rows[1:] if row and row[0] < oldest]
            if not older:
                continue  # the table began with this month's first session: the month before
            rows.extend(sorted(older, reverse=True))
            oldest = min(row[0] for row in older)
        if len(rows) == len(table) - 1:
            return page
        merged = (table[0], *rows)
        return ParsedPage(tables=(*page.tables[:at], merged, *page.tables[at + 1:]), as_of=page.as_of,
                          links=page.links, title=page.title)

    def _snapshot_day(self, reading: Reading, question: ServedQuestion, tool: str | None = None) -> str | None:
        """The session a snapshot asks for, or a window's first session (YYYYMMDD), counted back
        from the market's latest session on or before the run's day on its exchange's calendar
        (a window of a data set published sessions after its date, a fund's NAV, ends at the
        latest session published by then, as the gold's window does; a snapshot's day is counted
        from the market's latest session all the same)."""
        calendar = _CALENDARS.get(question.asset_class)
        if reading.kind not in ("snapshot", "window") or not reading.name or calendar is None:
            return None  # a market-wide series: its own release calendar, counted by its rows
        back = reading.sessions if reading.kind == "snapshot" else window_records(reading, reading.aggregate or "mean") - 1
        latest = session_on_or_before(calendar, self.as_of)
        if reading.kind == "window" and (lag := _publication_lags().get(tool or "", 0)):
            latest = sessions_back(calendar, latest, lag)
        return sessions_back(calendar, latest, back).strftime("%Y%m%d")

    async def _results(self, state: _Question) -> list[dict[str, Any]]:
        question, reading = state.question, state.reading
        code = question.entity if reading.name else ""
        queries = [" ".join(filter(None, (reading.name, code, reading.quantity_en)))]
        if not code and reading.key and question.entity in TITLES:
            # A market-wide series reported per pair or exchange: the release's history of that one.
            queries.insert(0, f"{TITLES[question.entity][1]} {reading.key} 历史数据")
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
                # The statistic of the quantity itself, not of a noun the question's contains (the
                # NAV per unit's for an accumulated NAV per unit).
                if (aggregate != reading.aggregate or entry is None
                        or canonical_label(entry.en, "en") != canonical_label(reading.quantity_en, "en")):
                    continue
                wanted = window_records(reading, aggregate) - extra
                if wanted not in spans:
                    continue
                cell = row[1 + spans.index(wanted)]
                value = cell_number(cell)
                unit = UNIT_SUFFIX.search(row[0])
                if value is None:
                    continue
                if not _precise_enough(cell, unit.group(1) if unit and aggregate != "pct_change" else None, reading):
                    continue  # a portal's rounded figure: the exchange's rows give the exact one
                chosen = choose([Candidate(value, unit.group(1) if unit and aggregate != "pct_change" else None,
                                           page.as_of, "", 0, row[0])], reading)
                if chosen is not None:
                    return chosen[0]
        return None

    async def _from_bulletins(self, state: _Question, archive_url: str, reading: Reading,
                              question: ServedQuestion) -> tuple[str | None, str | None]:
        """A snapshot or window of an obscure entity from its exchange's daily bulletins."""
        code = question.entity
        sessions, page_of = archive_index(await self._read(state, archive_url), code)
        if reading.kind == "snapshot":
            wanted = sessions[reading.sessions: reading.sessions + 1]
        else:
            wanted = sessions[: window_records(reading, reading.aggregate or "mean")][::-1]  # oldest first
        if not wanted or any(day not in page_of for day in wanted):
            return None, None
        values: list[float] = []
        dates: list[str] = []
        unit: str | None = None
        for day in wanted:
            page = await self._read(state, self._url(page_of[day]))
            row_value = None
            unlisted = False  # the page prints the quantity but not the entity: it did not trade that day
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
                unlisted = row is None
            if row_value is None and unlisted and reading.kind == "window":
                continue  # a suspended session: the window holds the records of the sessions traded
            if row_value is None:
                return None, None
            values.append(row_value)
            dates.append(day.replace("-", ""))
        if not values:
            return None, None
        if reading.kind == "snapshot":
            value: float | str | None = values[0]
        else:
            value = aggregate_values(values, dates, reading.aggregate or "mean")
        if value is None:
            return None, None
        keeps_unit = reading.aggregate not in ("argmax", "argmin", "count", "pct_change")
        chosen = choose([Candidate(value, unit if keeps_unit else None, wanted[-1].replace("-", ""), archive_url, 0,
                                   "bulletin")], reading)
        return (chosen[0], archive_url) if chosen is not None else (None, None)


@contextlib.asynccontextmanager
async def open_navigator(*, web_dir: Path, day: dt.date, name: str, read_budget: int | None,
                         search_budget: int | None = None, searxng_url: str | None = None, concurrency: int = 4,
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
                             read_budget=read_budget, search_budget=search_budget)


_CHAINS = (
    ("fund_portfolio", re.compile(r"^For the largest stock holding of .+? \((?P<holder>[0-9A-Z.]+)\) by market value in its "
                                  r"most recently published portfolio, what was that stock's (?P<noun>.+?) on the most "
                                  r"recent trading day(?P<tail>, .+)$")),
    ("index_weight", re.compile(r"^For the constituent of .+? \((?P<holder>[0-9A-Z.]+)\) with the highest weight at its "
                                r"most recent rebalance, what was that stock's (?P<noun>.+?) on the most recent trading "
                                r"day(?P<tail>, .+)$")),
)


_EXDATE_CLOSE = re.compile(r"^What was the (?P<noun>.+?) of (?P<subj>.+? \([0-9A-Z.]+\)) on the ex-dividend date of "
                           r"its most recently implemented dividend(?P<tail>, .+)$")


_EX_DATE_LABELS = frozenset({"除权除息日", "ex-dividend date", "ex date", "ex-date"})


def latest_ex_date(page: ParsedPage, latest: str) -> str | None:
    """The latest ex-dividend date (YYYYMMDD, on or before `latest`) among a dividend page's
    implemented dividends (one item table per record)."""
    best = None
    for rows in page.tables:
        if not rows or len(rows[0]) != 3:
            continue
        labels = [row[0] for row in rows[1:] if row]
        # The ex-date has no lexicon noun: the exchange's label, in either language.
        ex = next((i for i, label in enumerate(labels) if label.lower() in _EX_DATE_LABELS), None)
        progress = _column(labels, "dividend", "div_proc")
        if ex is None or progress is None:
            continue
        day, state = rows[1 + ex][1], rows[1 + progress][1]
        if state in ("实施", "Implemented", "implemented") and re.fullmatch(r"\d{8}", day) and day <= latest:
            best = max(best or day, day)
    return best


def read_chain(question: ServedQuestion) -> tuple[str, str, str, str] | None:
    """A chain through a fund's largest holding or an index's heaviest constituent: (the first hop's
    data set, the fund or index, the stock's quantity, the question's unit tail), else None."""
    for tool, pattern in _CHAINS:
        found = pattern.match(question.question)
        if found:
            return tool, found.group("holder"), found.group("noun"), found.group("tail")
    return None


def next_report_page(page: ParsedPage, path: str) -> str | None:
    """The link to the next page of a long periodic report, read at `path` (its cover or one of its
    pages); None on a one-page report, at the document's end, or on any other page."""
    if not (_REPORT.match(path) or continuation_number(path) is not None):
        return None
    current = continuation_number(path) or 0
    return next((href for href, _ in page.links if continuation_number(urlsplit(href).path) == current + 1), None)
