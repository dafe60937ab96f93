"""The search-and-read baseline: reading questions and pages, choosing among sources, and the
agent end to end on a small offline web (scored against the service at the same clock)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from livesearch_pipeline.evaluation.agents.search_read import (
    Candidate, UnreadableQuestion, candidates_from_page, choose, open_search_read_agent, read_question,
)
from livesearch_pipeline.evaluation.agents.reading import convert
from livesearch_pipeline.evaluation.opening import open_agent
from livesearch_pipeline.evaluation.registry import BASELINES, AgentSpec, load_agents
from livesearch_pipeline.web.index import WebIndexError
from livesearch_pipeline_tests.evaluation.agents_fakes import served_question
from livesearch_pipeline_tests.evaluation.eval_fixtures import agent_day
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, build_small_web, latest_daily, small_web

# The texts the template verbalizer writes (construction/verbalize.py), and pages labelled with the
# lexicon's nouns as the offline web prints them.
LATEST = "What was the closing price of {name} ({code}) on the most recent trading day, in CNY to 2 decimals?"
LATEST_ZH = "{name}（{code}）最近一个交易日的收盘价是多少元？保留2位小数。"
WINDOW = ("On which trading day in the last 5 sessions did {name} ({code}) record its highest closing price"
          "? Give the date as YYYY-MM-DD.")
PAGE = """<html><head><meta name="date" content="2026-11-27"></head><body><p>Data as of 20261127.</p>
<table><thead><tr><th>Item</th><th>Value</th><th>Unit</th></tr></thead><tbody>
<tr><td>Closing price</td><td>50.73</td><td>CNY</td></tr>
<tr><td>Turnover value</td><td>4.78</td><td>亿元</td></tr></tbody></table></body></html>"""
HISTORY = """<html><body><table><tr><th>Date</th><th>Closing price (CNY)</th></tr>
<tr><td>20261127</td><td>10.5</td></tr><tr><td>20261126</td><td>11.0</td></tr><tr><td>20261125</td><td>11.0</td></tr>
<tr><td>20261124</td><td>9.0</td></tr><tr><td>20261123</td><td>10.0</td></tr><tr><td>20261120</td><td>99.0</td></tr>
</table></body></html>"""


def _question(template: str, name: str = "渺琰电子", code: str = "603898.SH", zh: str | None = None):
    return served_question(template.format(name=name, code=code), entity=code,
                           question_zh=zh.format(name=name, code=code) if zh else None)


def test_reading_the_question_shapes() -> None:
    latest = read_question(_question(LATEST, zh=LATEST_ZH))
    assert (latest.kind, latest.name, latest.answer, latest.unit, latest.decimals) == ("latest", "渺琰电子", "number", "CNY", 2)
    assert latest.quantity_en == "closing price" and latest.quantity_zh == "收盘价"
    window = read_question(_question(WINDOW))
    assert (window.kind, window.sessions, window.aggregate, window.answer) == ("window", 5, "argmax", "date")
    assert window.quantity_en == "closing price"
    total = read_question(served_question(
        "What was the total turnover value of X (02666.HK) over the last 60 trading days, in billions of HKD to 2 "
        "decimals?", entity="02666.HK"))
    assert (total.kind, total.sessions, total.aggregate, total.quantity_en, total.unit) == (
        "window", 60, "sum", "turnover value", "billion HKD")
    change = read_question(served_question(
        "By what percentage did the opening price of X (000162.SZ) change over the last 60 trading days, in percent "
        "to 2 decimals?", entity="000162.SZ"))
    assert (change.aggregate, change.quantity_en, change.answer) == ("pct_change", "opening price", "percent")
    # A change states its window convention: from the trading day k sessions back, a change over k
    # sessions, read over k + 1 closes (core.program.window_rows).
    stated = read_question(served_question(
        "By how much did the closing price of X (000162.SZ) change from the trading day 5 sessions before the most "
        "recent one to the most recent trading day, in CNY to 2 decimals?", entity="000162.SZ"))
    assert (stated.kind, stated.sessions, stated.aggregate, stated.quantity_en) == ("window", 5, "change", "closing price")
    lots = read_question(served_question(
        "What was the trading volume of X (000162.SZ) on the most recent trading day, as a whole number of 100-share "
        "lots?", entity="000162.SZ"))
    assert (lots.answer, lots.unit, lots.quantity_en) == ("integer", "lots", "trading volume")
    defined = read_question(served_question(
        "What was the MACD bar value of X (000162.SZ) on the most recent trading day, to 4 decimals? Here MACD is "
        "2 × (DIF − DEA) of MACD 12/26/9 on back-adjusted closes.", entity="000162.SZ"))
    assert (defined.kind, defined.answer, defined.decimals, defined.quantity_en) == ("latest", "number", 4, "MACD bar value")
    snapshot = read_question(served_question(
        "What was the highest price of X (00001.HK) 5 trading days before the most recent one, in HKD to 3 decimals?",
        entity="00001.HK"))
    assert (snapshot.kind, snapshot.sessions, snapshot.decimals, snapshot.quantity_en) == ("snapshot", 5, 3, "highest price")
    match = read_question(served_question(
        "What was the holding as a percentage of float shares of X (600001.SH) for the shareholder “Y公司” at the end "
        "of the most recently reported period, in percent to 2 decimals?", entity="600001.SH"))
    assert (match.kind, match.match_value, match.answer, match.quantity_en) == (
        "match", "Y公司", "percent", "holding as a percentage of float shares")
    with pytest.raises(UnreadableQuestion):
        read_question(served_question("What was the closing price of X (600001.SH) in the one-minute bar ending at "
                                      "10:30 on the trading day before the most recent one, in CNY to 2 decimals?",
                                      entity="600001.SH"))


def test_reading_tables_and_converting_units() -> None:
    question = _question(LATEST)
    reading = read_question(question)
    found = candidates_from_page(PAGE, "http://x/p", 0, reading, question)
    assert [(c.value, c.unit, c.as_of) for c in found] == [(50.73, "CNY", "20261127")]
    assert convert(4.78, "亿元", "thousand CNY") == pytest.approx(478000.0)
    assert convert(1.0, "million USD", "thousand CNY") is None  # currencies never mix
    window_question = _question(WINDOW)
    window = candidates_from_page(HISTORY, "http://x/h", 0, read_question(window_question), window_question)
    assert [c.value for c in window] == ["20261125"]  # the earliest of the tied highs, within the 5 sessions


def test_choosing_prefers_fresh_data_then_the_majority() -> None:
    reading = read_question(_question(LATEST))
    candidates = [Candidate(1.0, "CNY", "20261126", "u0", 0, "l"), Candidate(2.0, "CNY", "20261127", "u1", 1, "l"),
                  Candidate(3.0, "CNY", "20261127", "u2", 2, "l"), Candidate(3.0, "CNY", "20261127", "u3", 3, "l")]
    answer, source = choose(candidates, reading)
    assert answer == "3.00" and source.url == "u2"
    assert choose([], reading) is None


@pytest.fixture(scope="module")
def web_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_small_web(tmp_path_factory.mktemp("web")).parent


def test_the_agent_answers_well_known_entities_and_not_obscure_ones(web_root: Path) -> None:
    chosen = small_web()
    famous, obscure = chosen.famous, chosen.obscure
    asked = [_question(LATEST, famous.name, famous.code, LATEST_ZH), _question(LATEST, obscure.name, obscure.code)]

    async def run():
        async with open_search_read_agent(web_dir=web_root / CLOCK.isoformat(), day=CLOCK, name="search-read",
                                          allow_partial_web=True) as agent:
            return [await agent.answer(q) for q in asked]

    answers = asyncio.run(run())
    assert answers[0].answer == f"{latest_daily(famous.code)['close']:.2f}"
    final = answers[0].trace[-1]
    assert final["type"] == "final" and famous.code in final["url"]
    assert [t["query"] for t in answers[0].trace if t.get("tool") == "web_search"][1].startswith(famous.name)
    assert answers[1].answer is None and answers[1].trace[-1]["reason"] == "no page gave the quantity"


def test_search_read_is_a_builtin_baseline_that_needs_the_web_of_its_day(tmp_path: Path) -> None:
    assert "search-read" in BASELINES
    assert AgentSpec(name="search-read", kind="search-read") in load_agents(tmp_path / "agents.json")

    async def run():
        async with open_agent(AgentSpec(name="search-read", kind="search-read"), agent_day(tmp_path),
                              client=None):  # type: ignore[arg-type]
            pass

    with pytest.raises(WebIndexError, match="web_corpus"):
        asyncio.run(run())


def test_a_run_reads_each_page_once_and_answers_as_without_its_cache(web_root: Path) -> None:
    chosen = small_web()
    famous = chosen.famous
    question = _question(LATEST, famous.name, famous.code, LATEST_ZH)

    async def run():
        async with open_search_read_agent(web_dir=web_root / CLOCK.isoformat(), day=CLOCK, name="search-read",
                                          allow_partial_web=True) as agent:
            gets: list[str] = []
            real_get = agent.http.get

            async def counting_get(url, *args, **kwargs):
                gets.append(str(url))
                return await real_get(url, *args, **kwargs)

            agent.http.get = counting_get  # type: ignore[method-assign]
            first = await agent.answer(question)
            after_first = len(gets)
            again = await agent.answer(question.model_copy(update={"qid": "ls-0000000000000002"}))
            return first, again, after_first, gets

    first, again, after_first, gets = asyncio.run(run())
    assert after_first > 0 and len(gets) == after_first  # the second question fetched nothing
    assert again.answer == first.answer and again.trace == first.trace


def test_a_run_in_two_forked_workers_writes_what_one_process_writes(web_root: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The web baselines answer in forked workers (`run_agent`'s workers): the same predictions and
    trajectories, byte for byte, as one process, over the same web (one server, one port)."""
    from livesearch_pipeline.evaluation.agents import base
    from livesearch_pipeline.evaluation.agents.base import PREDICTIONS_FILE, TRAJECTORIES_FILE, run_agent
    from livesearch_pipeline.evaluation.agents.navigator import open_navigator
    from livesearch_pipeline.web.server import running_web

    monkeypatch.setattr(base, "FORK_CHUNK", 2)  # several chunks, so that both workers answer
    chosen = small_web()
    asked = [_question(template, entity.name, entity.code, zh)
             for entity in (chosen.famous, chosen.obscure, chosen.famous)
             for template, zh in ((LATEST, LATEST_ZH), (WINDOW, None))]
    asked = list({q.qid: q for q in asked}.values())

    async def run(url: str, kind: str, out: Path, workers: int):
        opened = (open_search_read_agent(web_dir=web_root / CLOCK.isoformat(), day=CLOCK, name=kind, searxng_url=url)
                  if kind == "search-read" else
                  open_navigator(web_dir=web_root / CLOCK.isoformat(), day=CLOCK, name=kind, read_budget=6,
                                 searxng_url=url))
        async with opened as agent:
            await run_agent(agent, asked, out, date=CLOCK, concurrency=2, workers=workers)
            return len(agent._pages)

    with running_web(web_root / CLOCK.isoformat(), clock=CLOCK) as url:
        for kind in ("search-read", "navigator"):
            read_here = {workers: asyncio.run(run(url, kind, tmp_path / kind / str(workers), workers))
                         for workers in (1, 2)}
            assert read_here[1] > 0 and read_here[2] == 0  # two workers: every page was read in a worker
            for name in (PREDICTIONS_FILE, TRAJECTORIES_FILE):
                one, two = ((tmp_path / kind / str(w) / name).read_bytes() for w in (1, 2))
                assert one == two and one.count(b"\n") == len(asked)
            assert b'"answer":' in (tmp_path / kind / "2" / PREDICTIONS_FILE).read_bytes()  # not only misses
