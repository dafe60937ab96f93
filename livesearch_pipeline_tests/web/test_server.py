"""The offline web over HTTP: the SearXNG JSON API, the pages, and LLM agents run against it
(the web agent through the API, the plugin agent on the embedded service of the same clock),
each with a scripted model on 127.0.0.1 and its trace recorded."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import httpx
import pytest

from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.evaluation.agents.chat import LitellmChatModel
from livesearch_pipeline.evaluation.agents.plugin import PluginAgent
from livesearch_pipeline.evaluation.agents.web import WebAgent, WebTools, WebToolsConfig
from livesearch_pipeline.infra.llm import RetryPolicy
from livesearch_pipeline.web.index import WebIndex, WebIndexError, fts_expressions, search_plans
from livesearch_pipeline.web.server import running_web
from livesearch_pipeline_tests.evaluation.agents_fakes import scripted_model, served_question
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, build_small_web, latest_daily, service, small_web


@pytest.fixture(scope="module")
def web_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_small_web(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="module")
def web_url(web_dir: Path):
    with running_web(web_dir) as url:
        yield url


def _model(api_base: str) -> LitellmChatModel:
    return LitellmChatModel(model="openai/scripted", api_base=api_base, api_key="sk-test", retry=RetryPolicy(attempts=1))


def test_search_answers_like_searxng_json(web_url: str) -> None:
    famous = small_web().famous
    response = httpx.get(f"{web_url}/search", params={"q": f"{famous.name_en} closing price", "format": "json"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    payload = response.json()
    assert payload["query"] == f"{famous.name_en} closing price"
    assert {"results", "number_of_results", "answers", "suggestions", "infoboxes"} <= payload.keys()
    results = payload["results"]
    assert 0 < len(results) <= 10
    for result in results:
        assert {"title", "url", "content", "publishedDate", "engine"} <= result.keys()
        assert result["url"].startswith(web_url + "/")
        assert dt.datetime.fromisoformat(result["publishedDate"]).date() <= CLOCK
    assert famous.code in results[0]["title"]
    page = httpx.get(results[0]["url"])
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<table>" in page.text
    second = httpx.get(f"{web_url}/search", params={"q": f"{famous.name_en} closing price", "format": "json",
                                                      "pageno": 2}).json()["results"]
    assert not {r["url"] for r in second} & {r["url"] for r in results}


def test_chinese_queries_find_chinese_pages(web_url: str) -> None:
    famous = small_web().famous
    results = httpx.get(f"{web_url}/search", params={"q": f"{famous.name_zh} 收盘价", "format": "json"}).json()["results"]
    assert results and famous.code in results[0]["title"]
    assert any(famous.name_zh in r["title"] for r in results)


def test_bad_requests_and_missing_pages_are_refused_clearly(web_url: str) -> None:
    assert httpx.get(f"{web_url}/search", params={"format": "json"}).status_code == 400
    bad = httpx.get(f"{web_url}/search", params={"q": "x", "format": "json", "pageno": "zero"})
    assert bad.status_code == 400 and "pageno" in bad.text
    assert httpx.get(f"{web_url}/search", params={"q": "x", "format": "rss"}).status_code == 400
    assert httpx.get(f"{web_url}/nowhere/page.html").status_code == 404
    html = httpx.get(f"{web_url}/search", params={"q": "SHIBOR"})
    assert html.status_code == 200 and "<ol>" in html.text


def test_query_expressions_and_a_missing_index() -> None:
    strict, relaxed = fts_expressions("翎垚保险 closing price", "cjk")
    assert strict == '"翎 垚 保 险" AND "closing" AND "price"' and relaxed == '"翎 垚 保 险" OR "closing" OR "price"'
    assert fts_expressions("市值 pe", "trigram") == (None, None)
    # Stop words of the corpus (in > 10% of pages) are dropped, unknown words ignored; rare terms
    # are required before they may be relaxed.
    plans = search_plans([('"翎 垚"', 50), ('"closing"', 400), ('"price"', 5000), ('"zzz"', 0)], pages=10_000)
    assert plans == ['"翎 垚" AND "closing"', '"翎 垚"']
    assert search_plans([('"the"', 9000), ('"price"', 5000)], pages=10_000) == ['"the" AND "price"',
                                                                              '"the" OR "price"']
    assert search_plans([('"zzz"', 0)], pages=10) == []
    with pytest.raises(WebIndexError, match="build the corpus first"):
        WebIndex(Path("/nonexistent/web/2026-11-27"))


def test_the_web_agent_runs_against_the_offline_web_unchanged(web_url: str) -> None:
    famous = small_web().famous
    record = latest_daily(famous.code)
    query = f"{famous.name_en} {famous.code} daily quotes"
    # The scripted model reads the first quote page among the results (spam may rank above it).
    urls = [r["url"] for r in httpx.get(f"{web_url}/search", params={"q": query, "format": "json"}).json()["results"]]
    first = next(url for url in urls if f"/daily/{famous.code}" in url)
    question = f"For the most recent Shanghai/Shenzhen trading session, what was the closing price of {famous.name}?"
    script = [{"tool_calls": [{"name": "web_search", "arguments": {"query": query}}]},
              {"tool_calls": [{"name": "fetch_page", "arguments": {"url": first}}]},
              f"Final answer: {record['close']} CNY"]

    async def run():
        async with httpx.AsyncClient() as http:
            agent = WebAgent(chat_model=_model(model.api_base), as_of=CLOCK,
                             tools=WebTools(WebToolsConfig(searxng_url=web_url), http))
            return await agent.answer(served_question(question, entity=famous.code))

    with scripted_model({question: script}) as model:
        prediction = asyncio.run(run())
        requests = model.requests_for(question)
    assert prediction.answer == f"{record['close']} CNY" and prediction.error is None
    search = next(t for t in prediction.trace if t.get("tool") == "web_search")
    assert search["urls"] == urls[:8] and first in search["urls"]
    fetch = next(t for t in prediction.trace if t.get("tool") == "fetch_page")
    assert fetch["status"] == 200 and famous.code in fetch["title"]
    page_text = requests[2]["messages"][-1]["content"]
    assert famous.code in page_text and ("| Value |" in page_text or "| 数值 |" in page_text)


def test_the_plugin_agent_reads_the_embedded_service_at_the_same_clock() -> None:
    famous = small_web().famous
    record = latest_daily(famous.code)
    question = f"For the most recent Shanghai/Shenzhen trading session, what was the closing price of {famous.name}?"
    args = {"ts_code": famous.code, "trade_date": CLOCK.strftime("%Y%m%d")}
    script = [{"tool_calls": [{"name": "daily", "arguments": args}]}, f"Final answer: {record['close']}"]

    async def run():
        async with McpToolClient.in_process(service()) as client:
            agent = PluginAgent(chat_model=_model(model.api_base), source=client, as_of=CLOCK)
            served = served_question(question, entity=famous.code)
            await agent.prepare([served])
            return await agent.answer(served)

    with scripted_model({question: script}) as model:
        prediction = asyncio.run(run())
    assert prediction.answer == str(record["close"]) and prediction.error is None
    call = next(t for t in prediction.trace if t.get("tool") == "daily")
    assert call["arguments"] == args and call["records"] == 1 and str(record["close"]) in call["excerpt"]
    assert any(t.get("type") == "final" for t in prediction.trace)
