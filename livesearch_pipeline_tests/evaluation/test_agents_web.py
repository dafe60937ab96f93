"""The web agent against a scripted model and a fake SearXNG with pages, all on 127.0.0.1."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from typing import Any, Sequence

import httpx
import pytest

from livesearch_pipeline.core.models import Prediction
from livesearch_pipeline.evaluation.agents.base import PREDICTIONS_FILE, run_agent
from livesearch_pipeline.evaluation.agents.chat import ChatModelError, LitellmChatModel, ModelTurn, ToolCallRequest
from livesearch_pipeline.evaluation.agents.loop import LoopLimits, extract_final_answer
from livesearch_pipeline.evaluation.agents.web import WebAgent, WebTools, WebToolsConfig, html_to_text
from livesearch_pipeline.infra.llm import RetryPolicy
from livesearch_pipeline_tests.evaluation.agents_fakes import fake_web, scripted_model, served_question

DAY = dt.date(2026, 11, 27)
QUESTION = "What was the closing price of Harbor Lantern Foods on the most recent trading day?"
PAGE = """<html><head><title>Harbor Lantern Foods (600123.SH) quote</title>
<script>var tracking = "SECRET-SCRIPT-TEXT";</script><style>.x{color:red}</style></head>
<body><nav>Home</nav><h1>Harbor Lantern Foods</h1>
<table><tr><th>Date</th><th>Close</th></tr><tr><td>2026-11-27</td><td>18.42</td></tr></table>
<p>Volume &amp; turnover</p></body></html>"""
PAGES = {
    "quote": ("text/html; charset=utf-8", PAGE),
    "report.pdf": ("application/pdf", "%PDF-1.7"),
}
RESULTS = {"Harbor Lantern Foods close": [("HLF quote", "/page/quote", "Harbor Lantern Foods latest close 18.42")]}


def _model(api_base: str) -> LitellmChatModel:
    return LitellmChatModel(model="openai/scripted", api_base=api_base, api_key="sk-test",
                            retry=RetryPolicy(attempts=1))


def _search(query: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "web_search", "arguments": {"query": query}}]}


def _fetch(url: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "fetch_page", "arguments": {"url": url}}]}


async def _answer(agent_factory: Any, question: str, web_url: str) -> Prediction:
    async with httpx.AsyncClient() as http:
        agent = agent_factory(WebTools(WebToolsConfig(searxng_url=web_url), http))
        return await agent.answer(served_question(question))


def test_search_fetch_answer_with_a_full_trace() -> None:
    with fake_web(RESULTS, PAGES) as web:
        script = [_search("Harbor Lantern Foods close"), _fetch(f"{web.base_url}/page/quote"),
                  "The page lists the close.\nFinal answer: 18.42 CNY"]
        with scripted_model({QUESTION: script}) as model:
            prediction = asyncio.run(_answer(
                lambda tools: WebAgent(chat_model=_model(model.api_base), tools=tools, as_of=DAY),
                QUESTION, web.base_url))
            requests = model.requests_for(QUESTION)
        assert web.queries[0]["format"] == ["json"] and web.queries[0]["q"] == ["Harbor Lantern Foods close"]

    assert prediction.answer == "18.42 CNY" and prediction.error is None
    trace = prediction.trace
    search = next(t for t in trace if t.get("tool") == "web_search")
    assert search["query"] == "Harbor Lantern Foods close"
    assert search["urls"] == [f"{web.base_url}/page/quote"]
    assert search["excerpts"] == ["Harbor Lantern Foods latest close 18.42"]
    fetch = next(t for t in trace if t.get("tool") == "fetch_page")
    assert fetch["url"] == f"{web.base_url}/page/quote" and fetch["status"] == 200
    assert "18.42" in fetch["excerpt"] and "SECRET-SCRIPT-TEXT" not in fetch["excerpt"]
    assert {"type": "final", "answer": "18.42 CNY", "explicit_final_line": True} in trace
    # What the model read: tool schemas offered, the page as text, today's date in the prompt.
    assert [t["function"]["name"] for t in requests[0]["tools"]] == ["web_search", "fetch_page"]
    assert "2026-11-27" in requests[0]["messages"][0]["content"]
    page_message = requests[2]["messages"][-1]
    assert page_message["role"] == "tool" and "2026-11-27 | 18.42" in page_message["content"]
    assert "<td>" not in page_message["content"] and "SECRET-SCRIPT-TEXT" not in page_message["content"]


def test_max_steps_reached_is_an_error_with_the_trace_kept() -> None:
    with fake_web(RESULTS, PAGES) as web:
        script = [_search("Harbor Lantern Foods close")] * 5
        with scripted_model({QUESTION: script}) as model:
            prediction = asyncio.run(_answer(
                lambda tools: WebAgent(chat_model=_model(model.api_base), tools=tools, as_of=DAY,
                                       limits=LoopLimits(max_steps=3)),
                QUESTION, web.base_url))
    assert prediction.answer is None
    assert prediction.error == "max steps (3) reached without a final answer"
    assert len([t for t in prediction.trace if t.get("tool") == "web_search"]) == 3
    assert prediction.trace[-1]["type"] == "stopped"


def test_token_limit_stops_the_loop() -> None:
    with fake_web(RESULTS, PAGES) as web:
        script = [_search("Harbor Lantern Foods close")] * 5
        with scripted_model({QUESTION: script}, tokens_per_reply=18) as model:
            prediction = asyncio.run(_answer(
                lambda tools: WebAgent(chat_model=_model(model.api_base), tools=tools, as_of=DAY,
                                       limits=LoopLimits(max_tokens=30)),
                QUESTION, web.base_url))
    assert prediction.error == "token limit of 30 reached (36 used) without a final answer"
    assert len([t for t in prediction.trace if t["type"] == "model"]) == 2


def test_tool_failures_are_shown_to_the_model_which_carries_on() -> None:
    with fake_web(RESULTS, PAGES) as web:
        script = [
            _fetch(f"{web.base_url}/page/missing"),
            _fetch(f"{web.base_url}/page/report.pdf"),
            {"tool_calls": [{"name": "fetch_page", "arguments": "{not json"}]},
            {"tool_calls": [{"name": "run_python", "arguments": {}}]},
            _fetch("file:///etc/passwd"),
            "Final answer: unknown",
        ]
        with scripted_model({QUESTION: script}) as model:
            prediction = asyncio.run(_answer(
                lambda tools: WebAgent(chat_model=_model(model.api_base), tools=tools, as_of=DAY),
                QUESTION, web.base_url))
            last_request = model.requests_for(QUESTION)[-1]
    errors = [t["error"] for t in prediction.trace if t["type"] == "tool"]
    assert errors[0].endswith("answered HTTP 404")
    assert "application/pdf, not a text page" in errors[1]
    assert errors[2].startswith("arguments are not valid JSON")
    assert errors[3].startswith("unknown tool 'run_python'")
    assert "needs an http(s) `url`" in errors[4]
    tool_messages = [m["content"] for m in last_request["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 5 and all(m.startswith("error: ") for m in tool_messages)
    assert prediction.answer == "unknown" and prediction.error is None


def test_searxng_without_the_json_format_gets_an_actionable_message() -> None:
    async def search(web_url: str) -> str:
        async with httpx.AsyncClient() as http:
            tools = WebTools(WebToolsConfig(searxng_url=web_url), http)
            try:
                await tools.web_search({"query": "anything"})
            except Exception as exc:  # the test inspects the message
                return str(exc)
            return "no error"

    with fake_web(RESULTS, PAGES) as web:
        web.searxng_status = 403
        assert "enable `json`" in asyncio.run(search(web.base_url))


def test_long_pages_are_read_in_windows() -> None:
    long_text = "\n".join(f"row {n}: value {n * 3}" for n in range(2000))

    async def fetch(web_url: str) -> tuple[str, str, dict[str, object], dict[str, object]]:
        async with httpx.AsyncClient() as http:
            tools = WebTools(WebToolsConfig(searxng_url=web_url, page_chars=1000), http)
            first = await tools.fetch_page({"url": f"{web_url}/page/long"})
            second = await tools.fetch_page({"url": f"{web_url}/page/long", "start": 1000})
            capped = WebTools(WebToolsConfig(searxng_url=web_url, max_page_bytes=5000), http)
            cut = await capped.fetch_page({"url": f"{web_url}/page/long"})
            return first.content, second.content, first.trace, cut.trace

    with fake_web(RESULTS, {"long": ("text/plain", long_text)}) as web:
        first, second, whole, cut = asyncio.run(fetch(web.base_url))
    assert f"Characters 0-1000 of {len(long_text)}" in first and "call fetch_page with start=1000" in first
    assert second.split("\n\n", 1)[1].startswith(long_text[1000:1100])
    assert whole["cut_at_max_bytes"] is False and whole["chars"] == len(long_text)
    assert cut["cut_at_max_bytes"] is True and cut["chars"] == 5000


class _SlowModel:
    name = "slow"

    async def complete(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> ModelTurn:
        await asyncio.sleep(5)
        return ModelTurn(content="Final answer: 1")


class _ToolLoopModel:
    name = "looping"

    async def complete(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> ModelTurn:
        return ModelTurn(content=None, tool_calls=(ToolCallRequest("c1", "web_search", '{"query": "x"}'),),
                         total_tokens=5)


class _FailingModel:
    name = "failing"

    async def complete(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> ModelTurn:
        raise ChatModelError("openai/x: RateLimitError after 5 attempts")


def test_time_limit_and_model_errors_end_the_question_not_the_run(tmp_path: Path) -> None:
    async def run(model: Any, limits: LoopLimits, out: Path) -> list[Prediction]:
        async with httpx.AsyncClient() as http:
            tools = WebTools(WebToolsConfig(searxng_url="http://127.0.0.1:9"), http)
            agent = WebAgent(chat_model=model, tools=tools, as_of=DAY, limits=limits)
            await run_agent(agent, [served_question(QUESTION)], out, date=DAY)
        return [Prediction.model_validate_json(x) for x in (out / PREDICTIONS_FILE).read_text().splitlines()]

    slow = asyncio.run(run(_SlowModel(), LoopLimits(time_limit_s=0.2), tmp_path / "slow"))
    assert slow[0].error == "time limit of 0.2 s reached without a final answer"
    failing = asyncio.run(run(_FailingModel(), LoopLimits(), tmp_path / "failing"))
    assert failing[0].error == "model error: openai/x: RateLimitError after 5 attempts"
    # A search backend that is down is a tool error the model sees, until the step limit.
    looping = asyncio.run(run(_ToolLoopModel(), LoopLimits(max_steps=2), tmp_path / "looping"))
    assert looping[0].error == "max steps (2) reached without a final answer"
    assert all("search backend unreachable" in t["error"] for t in looping[0].trace if t["type"] == "tool")


def test_concurrent_questions_follow_their_own_scripts_and_traces_are_stored(tmp_path: Path) -> None:
    questions = [f"What was the close of instrument {n} on the most recent trading day?" for n in range(4)]
    with fake_web(RESULTS, PAGES) as web:
        scripts = {q: [_search("Harbor Lantern Foods close"), f"Final answer: {n}.00 CNY"]
                   for n, q in enumerate(questions)}
        with scripted_model(scripts) as model:

            async def run() -> None:
                async with httpx.AsyncClient() as http:
                    tools = WebTools(WebToolsConfig(searxng_url=web.base_url), http)
                    agent = WebAgent(chat_model=_model(model.api_base), tools=tools, as_of=DAY)
                    await run_agent(agent, [served_question(q) for q in questions], tmp_path, date=DAY,
                                    concurrency=3)

            asyncio.run(run())
    lines = [json.loads(x) for x in (tmp_path / PREDICTIONS_FILE).read_text().splitlines()]
    expected = {served_question(q).qid: f"{n}.00 CNY" for n, q in enumerate(questions)}
    assert {line["qid"]: line["answer"] for line in lines} == expected
    assert all(any(t.get("tool") == "web_search" for t in line["trace"]) for line in lines)


def test_html_to_text_keeps_visible_text_and_table_rows() -> None:
    title, text = html_to_text(PAGE)
    assert title == "Harbor Lantern Foods (600123.SH) quote"
    assert "Date | Close" in text and "2026-11-27 | 18.42" in text and "Volume & turnover" in text
    assert "SECRET-SCRIPT-TEXT" not in text and "color:red" not in text


@pytest.mark.parametrize(("reply", "answer", "explicit"), [
    ("Looked it up.\nFinal answer: 18.42 CNY", "18.42 CNY", True),
    ("**Final Answer:** 3.5%", "3.5%", True),
    ("收盘价为 18.42 元。\n最终答案：18.42元", "18.42元", True),
    ("Final answer: 1\nOn reflection.\nFinal answer: 2", "2", True),
    ("  It closed at 18.42.  ", "It closed at 18.42.", False),
])
def test_extract_final_answer(reply: str, answer: str, explicit: bool) -> None:
    assert extract_final_answer(reply) == (answer, explicit)


def test_searxng_url_must_be_http() -> None:
    with pytest.raises(ValueError, match="searxng_url must be an http"):
        WebToolsConfig(searxng_url="localhost:8888")
