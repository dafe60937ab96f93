"""Declared read budgets: the harness refuses a search or read beyond a web agent's budget and
records it; every web agent's trajectory records each search and read (what came back included);
the run metadata, the summary and the leaderboard carry the budget and the reads per correct answer."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from livesearch_pipeline.core.models import Prediction, PredictionRunMeta, ReadBudget
from livesearch_pipeline.evaluation.agents.base import META_FILE, TRAJECTORIES_FILE, run_agent
from livesearch_pipeline.evaluation.agents.budget import BudgetRefused, Ledger, counted
from livesearch_pipeline.evaluation.agents.chat import LitellmChatModel
from livesearch_pipeline.evaluation.agents.web import WebAgent, WebTools, WebToolsConfig
from livesearch_pipeline.evaluation.registry import BUILTIN_AGENTS, AgentSpec
from livesearch_pipeline.infra.llm import RetryPolicy
from livesearch_pipeline_tests.evaluation.agents_fakes import fake_web, scripted_model, served_question

DAY = dt.date(2026, 11, 27)
QUESTION = "What was the closing price of Harbor Lantern Foods on the most recent trading day?"
PAGE = "<html><head><title>{title}</title></head><body><table><tr><td>Close</td><td>{close}</td></tr></table></body></html>"
PAGES = {name: ("text/html; charset=utf-8", PAGE.format(title=f"page {name}", close=close))
         for name, close in (("a", "18.40"), ("b", "18.41"), ("c", "18.42"))}
RESULTS = {"Harbor Lantern Foods close": [("A", "/page/a", "close 18.40"), ("B", "/page/b", "close 18.41"),
                                          ("C", "/page/c", "close 18.42")]}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _agent(model_base: str, tools: WebTools, budget: ReadBudget) -> WebAgent:
    model = LitellmChatModel(model="openai/scripted", api_base=model_base, api_key="sk-test", retry=RetryPolicy(attempts=1))
    return WebAgent(chat_model=model, tools=tools, as_of=DAY, budget=budget)


def _ask(script: list[Any], budget: ReadBudget) -> tuple[Prediction, list[dict[str, Any]]]:
    with fake_web(RESULTS, PAGES) as web, scripted_model({QUESTION: [
            step(web.base_url) if callable(step) else step for step in script]}) as model:
        async def go() -> Prediction:
            async with httpx.AsyncClient() as http:
                agent = _agent(model.api_base, WebTools(WebToolsConfig(searxng_url=web.base_url), http), budget)
                return await agent.answer(served_question(QUESTION))

        prediction = asyncio.run(go())
        return prediction, model.requests_for(QUESTION)


def test_a_read_beyond_the_budget_is_refused_shown_to_the_model_and_recorded() -> None:
    script = [
        _call("web_search", query="Harbor Lantern Foods close"),
        lambda base: _call("fetch_page", url=f"{base}/page/a"),
        lambda base: _call("fetch_page", url=f"{base}/page/a", start=10),  # reading on: no new read
        lambda base: _call("fetch_page", url=f"{base}/page/b"),
        lambda base: _call("fetch_page", url=f"{base}/page/c"),  # the third page: beyond 2 reads
        "Final answer: 18.41 CNY",
    ]
    prediction, requests = _ask(script, ReadBudget(max_reads=2, max_searches=3))
    assert prediction.answer == "18.41 CNY"
    fetches = [t for t in prediction.trace if t.get("tool") == "fetch_page"]
    assert [t.get("refused", False) for t in fetches] == [False, False, False, True]
    assert "read budget of 2 pages spent" in str(fetches[-1]["error"])
    # The model read the refusal as the tool's answer.
    assert "read budget of 2 pages spent" in requests[5]["messages"][-1]["content"]
    assert prediction.usage is not None
    assert (prediction.usage.page_reads, prediction.usage.searches, prediction.usage.budget_refusals) == (2, 1, 1)
    assert prediction.usage.tool_calls == 5 and prediction.usage.model_calls == 6


def test_a_search_beyond_the_budget_is_refused() -> None:
    script = [_call("web_search", query="Harbor Lantern Foods close"), _call("web_search", query="HLF close"),
              "Final answer: 18.42 CNY"]
    prediction, _ = _ask(script, ReadBudget(max_searches=1))
    searches = [t for t in prediction.trace if t.get("tool") == "web_search"]
    assert [bool(t.get("refused")) for t in searches] == [False, True]
    assert "search budget of 1 searches spent" in str(searches[-1]["error"])
    assert (prediction.usage.searches, prediction.usage.budget_refusals) == (1, 1)


def test_the_ledger_counts_distinct_pages_and_records_what_came_back() -> None:
    trace: list[dict[str, Any]] = []
    ledger = Ledger(ReadBudget(max_reads=1), trace)
    ledger.charge_search("q")
    ledger.searched("q", ["http://x/a"], ["snippet " * 100])
    assert ledger.charge_read("http://x/a") is True
    ledger.read("http://x/a", title="A", excerpt="body")
    assert ledger.charge_read("http://x/a") is False  # the same page again: no new read
    with pytest.raises(BudgetRefused):
        ledger.charge_read("http://x/b")
    assert [(t["tool"], t.get("refused")) for t in trace] == [("web_search", None), ("fetch_page", None),
                                                              ("fetch_page", "read budget of 1 pages spent")]
    assert len(trace[0]["excerpts"][0]) == 300 and trace[1]["title"] == "A"
    usage = counted(Prediction(qid="ls-0000000000000001", answer="1", trace=trace)).usage
    assert (usage.searches, usage.page_reads, usage.budget_refusals, usage.tool_calls) == (1, 1, 1, 2)


class _ReadingAgent:
    """A scripted web agent: two searches and three reads per question, through its ledger."""

    name = "reader"
    model = None
    budget = ReadBudget(max_reads=3, max_searches=2)

    async def prepare(self, questions: Any) -> None:
        return None

    async def answer(self, question: Any) -> Prediction:
        ledger = Ledger(self.budget)
        for query in ("one", "two"):
            ledger.charge_search(query)
            ledger.searched(query, [f"http://web/{query}"], [f"about {query}"])
        for page in ("p1", "p2", "p3"):
            ledger.charge_read(f"http://web/{page}")
            ledger.read(f"http://web/{page}", title=page, excerpt=f"text of {page}")
        return counted(Prediction(qid=question.qid, answer="1", trace=ledger.trace))


def test_the_runner_writes_every_search_and_read_into_the_trajectories_and_the_budget_into_the_meta(
        tmp_path: Path) -> None:
    questions = [served_question("Q one?"), served_question("Q two?")]
    asyncio.run(run_agent(_ReadingAgent(), questions, tmp_path, date=DAY))
    lines = [json.loads(line) for line in (tmp_path / TRAJECTORIES_FILE).read_text().splitlines()]
    assert len(lines) == 2
    for line in lines:
        assert [(c["tool"], c.get("query") or c.get("url")) for c in line["tool_calls"]] == [
            ("web_search", "one"), ("web_search", "two"), ("fetch_page", "http://web/p1"),
            ("fetch_page", "http://web/p2"), ("fetch_page", "http://web/p3")]
        assert line["tool_calls"][0]["urls"] == ["http://web/one"]
        assert line["tool_calls"][2]["title"] == "p1" and line["tool_calls"][2]["excerpt"] == "text of p1"
        assert line["usage"]["page_reads"] == 3 and line["usage"]["searches"] == 2
    meta = PredictionRunMeta.model_validate_json((tmp_path / META_FILE).read_bytes())
    assert meta.budget == ReadBudget(max_reads=3, max_searches=2)


def test_a_run_resumed_under_another_budget_is_refused(tmp_path: Path) -> None:
    from livesearch_pipeline.evaluation.agents.base import AgentRunError

    asyncio.run(run_agent(_ReadingAgent(), [served_question("Q one?")], tmp_path, date=DAY))
    wider = _ReadingAgent()
    wider.budget = ReadBudget(max_reads=20, max_searches=20)
    with pytest.raises(AgentRunError, match="budget"):
        asyncio.run(run_agent(wider, [served_question("Q one?")], tmp_path, date=DAY))


def test_the_daily_navigators_declare_6_and_20_reads() -> None:
    navigators = {spec.name: spec.budget() for spec in BUILTIN_AGENTS if spec.kind == "navigator"}
    assert navigators == {"navigator-6": ReadBudget(max_reads=6, max_searches=6),
                          "navigator-20": ReadBudget(max_reads=20, max_searches=20)}
    assert AgentSpec(name="my-web", kind="web", searxng_url="http://127.0.0.1:1", read_budget=8).budget() == \
        ReadBudget(max_reads=8)
    with pytest.raises(ValueError, match="web agent's budget"):
        AgentSpec(name="closed", kind="closed-book", read_budget=8)
