"""Search-and-read baseline: a deterministic web agent with no LLM.

For each question it searches the web (a SearXNG JSON API: the offline web of D by default)
for the entity and the quantity, in English and, when the question has a Chinese text, in
Chinese; reads the tables of the pages it finds about that entity; and answers from the row
(or column) whose label is the quantity the question names:

- the latest value / a reference value: the Item | Value | Unit table of a data page;
- "N sessions before the most recent one" and "over the last N sessions" (mean, max, min, sum,
  change, percentage change, standard deviation, first, last, count, the session of the
  highest/lowest): a history table, newest first;
- "the entry whose <field> is <value>": the row of a multi-row table holding that value.

Figures are converted to the unit the question asks for (亿元, million, 万股, ...). When pages
disagree it keeps the freshest data date, then the value most pages give, then the best-ranked
page. It reads like a careful but literal person would, so it is fooled by stale pages,
third-party figures and rounding, and finds nothing about obscure entities: its accuracy by
visibility level measures what visibility does to a searching agent. Reading questions and pages
is shared with the navigator (evaluation/agents/reading.py).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Sequence

import httpx

from livesearch_pipeline.core.models import Prediction, ReadBudget, ServedQuestion
from livesearch_pipeline.evaluation.agents.budget import UNLIMITED, Ledger, charged_search, counted
from livesearch_pipeline.evaluation.agents.reading import (
    Candidate, ParsedPage, fetch_text, forked_web_agent, Reading, UnreadableQuestion, candidates_from_page, choose,
    parse_page, read_question,
)
from livesearch_pipeline.evaluation.agents.entity_search import with_codes
from livesearch_pipeline.evaluation.agents.web import WebTools, WebToolsConfig

__all__ = ["Candidate", "SearchReadAgent", "UnreadableQuestion", "candidates_from_page", "choose",
           "open_search_read_agent", "read_question"]

PAGES_PER_QUERY = 6
HTTP_TIMEOUT_S = 20.0

# --------------------------------------------------------------------------- the agent


@dataclass
class SearchReadAgent:
    tools: WebTools
    http: httpx.AsyncClient
    as_of: dt.date
    name: str = "search-read"
    model: str | None = None
    pages_per_query: int = PAGES_PER_QUERY

    # What one run has already read, by query and by URL: the offline web of D does not change
    # during the run, so a page read for one question is not fetched and parsed again for the
    # next (make run's 2,325 questions fetch 14,008 pages, 3,731 of them distinct). The answers
    # and traces are those of a run without them.
    _searches: dict[str, Any] = field(default_factory=dict, repr=False)
    _pages: dict[str, ParsedPage] = field(default_factory=dict, repr=False)

    def forked(self):
        """This agent in a forked worker process (`base.ForkableAgent`): its own HTTP client, the
        same web; its answers do not depend on the process that reads."""
        return forked_web_agent(self)

    async def prepare(self, questions: Sequence[ServedQuestion]) -> None:
        """Nothing is prepared: each question is read, searched and answered on its own."""

    def queries(self, question: ServedQuestion, reading: Reading) -> list[str]:
        code = question.entity if reading.name else ""
        english = " ".join(filter(None, (reading.name, code, reading.quantity_en)))
        queries = [english]
        if question.question_zh and reading.quantity_zh:
            queries.append(" ".join(filter(None, (reading.name, code, reading.quantity_zh))))
        if reading.kind in ("snapshot", "window"):
            series = (reading.name, code) if reading.name else (reading.quantity_en,)
            queries.insert(0, " ".join(filter(None, (*series, "historical data"))))
        return list(dict.fromkeys(queries))

    @property
    def budget(self) -> ReadBudget:
        """Its budget per question: none declared (its reading is fixed: `pages_per_query` results of
        each of its two or three queries)."""
        return UNLIMITED

    async def answer(self, question: ServedQuestion) -> Prediction:
        """The answer, its searches and reads counted in its usage (agents/budget.py)."""
        return counted(await self._answer(question))

    async def _answer(self, question: ServedQuestion) -> Prediction:
        trace: list[dict[str, Any]] = []
        ledger = Ledger(self.budget, trace)
        # A code-free question's entity is found by its name first (entity_search.py), on its ledger.
        resolved = await with_codes(question, functools.partial(self._name_search, ledger),
                                    functools.partial(self._name_read, ledger))
        trace.extend(resolved.trace)
        if resolved.question is None:
            return Prediction(qid=question.qid, answer=None, trace=trace)
        question = resolved.question
        try:
            reading = read_question(question)
        except UnreadableQuestion as exc:
            trace.append({"type": "skip", "reason": str(exc)})
            return Prediction(qid=question.qid, answer=None, trace=trace)
        trace.append({"type": "reading", "kind": reading.kind, "quantity": reading.quantity_en,
                      "aggregate": reading.aggregate, "sessions": reading.sessions, "unit": reading.unit})
        urls: list[str] = []
        for query in self.queries(question, reading):
            found = await charged_search(ledger, self.tools, self._searches, query)
            # The first pages_per_query results about the subject (a result about another entity
            # is passed over, not read).
            about = [item for item in found if self._about(item, question, reading)]
            for item in about[: self.pages_per_query]:
                if item["url"] not in urls:
                    urls.append(item["url"])
        candidates: list[Candidate] = []
        for rank, url in enumerate(urls):
            ledger.charge_read(url)
            page = self._pages.get(url)
            if page is None:
                page = self._pages.setdefault(url, parse_page(await self._get(url)))
            page_candidates = candidates_from_page(page, url, rank, reading, question)
            ledger.read(url, title=page.title, as_of=page.as_of,
                        found=[{"value": c.value, "unit": c.unit, "as_of": c.as_of, "label": c.label}
                               for c in page_candidates])
            candidates.extend(page_candidates)
        chosen = choose(candidates, reading)
        if chosen is None:
            trace.append({"type": "final", "answer": None, "reason": "no page gave the quantity"})
            return Prediction(qid=question.qid, answer=None, trace=trace)
        answer, source = chosen
        trace.append({"type": "final", "answer": answer, "url": source.url, "as_of": source.as_of})
        return Prediction(qid=question.qid, answer=answer, trace=trace)

    async def _name_search(self, ledger: Ledger, query: str) -> list[dict[str, Any]]:
        return await charged_search(ledger, self.tools, self._searches, query)

    async def _name_read(self, ledger: Ledger, url: str) -> ParsedPage:
        fresh = ledger.charge_read(url)
        page = self._pages.get(url)
        if page is None:
            page = self._pages.setdefault(url, parse_page(await self._get(url)))
        if fresh:
            ledger.read(url, title=page.title, as_of=page.as_of)
        return page

    @staticmethod
    def _about(item: dict[str, Any], question: ServedQuestion, reading: Reading) -> bool:
        """A result is about the question's subject when its title names the entity's code."""
        if not reading.name:
            return True
        return question.entity in str(item.get("title", ""))

    async def _get(self, url: str) -> str:
        return await fetch_text(self.http, url, timeout=HTTP_TIMEOUT_S)


@contextlib.asynccontextmanager
async def open_search_read_agent(*, web_dir: Path, day: dt.date, name: str, searxng_url: str | None = None,
                                 concurrency: int = 4, allow_partial_web: bool = False) -> AsyncIterator[SearchReadAgent]:
    """The baseline over `searxng_url`, or over the offline web of `day` (served from `web_dir`,
    `web/<day>`, on 127.0.0.1 for the duration of the run; `AgentDay.web_dir` in a registered run)
    when no URL is given: that web must be the web of `day` (its clock checked) and the full web
    unless `allow_partial_web`."""
    async with contextlib.AsyncExitStack() as stack:
        if searxng_url is None:
            from livesearch_pipeline.web.server import running_web

            searxng_url = stack.enter_context(running_web(web_dir, clock=day, allow_partial=allow_partial_web))
        http = await stack.enter_async_context(httpx.AsyncClient(limits=httpx.Limits(max_connections=2 * concurrency)))
        tools = WebTools(WebToolsConfig(searxng_url=searxng_url, max_results=10), http)
        yield SearchReadAgent(tools=tools, http=http, as_of=day, name=name)
