"""The Inspect AI task (issue 21), offline with Inspect's `mockllm/model`: a scripted tool call
reaches the data service over MCP stdio at D's clock, the answer is scored correct by our matcher,
and the log becomes a run directory that `evaluate` and the leaderboard accept."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ChatMessageTool, ModelOutput, get_model  # noqa: E402

from livesearch_pipeline.core.executor import execute_programs  # noqa: E402
from livesearch_pipeline.core.models import (  # noqa: E402
    Call,
    DateSpec,
    Extractor,
    Format,
    MatchRule,
    Program,
    Provenance,
    Question,
    Selection,
    ServedQuestion,
)
from livesearch_pipeline.core.qid import compute_qid  # noqa: E402
from livesearch_pipeline.core.snapshot import SnapshotStore  # noqa: E402
from livesearch_pipeline.dataservice.catalog import ServiceConfig  # noqa: E402
from livesearch_pipeline.dataservice.client import McpToolClient  # noqa: E402
from livesearch_pipeline.dataservice.server import DataService  # noqa: E402
from livesearch_pipeline.evaluation.inspect_import import InspectImportError, import_inspect_log  # noqa: E402
from livesearch_pipeline.evaluation.inspect_task import (  # noqa: E402
    InspectTaskError,
    build_samples,
    fetch_page,
    livesearch,
    load_day,
    plugin_tool_names,
    web_search,
)
from livesearch_pipeline.evaluation.leaderboard import build_leaderboard  # noqa: E402
from livesearch_pipeline_tests.evaluation.agents_fakes import fake_web  # noqa: E402

DAY = dt.date(2026, 11, 27)  # a Friday, an XSHG session


async def _codes(day: dt.date, n: int) -> list[str]:
    async with McpToolClient.in_process(DataService(config=ServiceConfig(clock=day))) as client:
        listing = await client.call_tool("stock_basic", {})
    return [row["ts_code"] for row in listing["items"][:n]]


def _question(code: str) -> Question:
    program = Program(
        calls=[Call(id="c1", tool="daily", args={"ts_code": code},
                    dates={"trade_date": DateSpec(sessions_back=0, calendar="XSHG")})],
        extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close",
                          format=Format(kind="number", decimals=2, unit="CNY")),
    )
    return Question(
        qid=compute_qid(program, code), question=f"What was the closing price of {code} on the most recent trading day?",
        question_zh=f"{code}最近一个交易日的收盘价是多少元？保留2位小数。", program=program,
        match=MatchRule(rule="approx", abs_tol=0.005, decimals=2, unit="CNY"), refresh_class="daily", tier="T1",
        asset_class="cn_equity", entity=code, entity_name=code, visibility=3, signature="sig-000000000000",
        provenance=Provenance(verbalizer="template"),
    )


@pytest.fixture(scope="module")
def day_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A benchmark day on disk: two served questions and their gold from the embedded market."""
    root = tmp_path_factory.mktemp("data")
    pool = [_question(code) for code in asyncio.run(_codes(DAY, 2))]

    async def gold() -> list[Any]:
        async with McpToolClient.in_process(DataService(config=ServiceConfig(clock=DAY))) as client:
            answers, _ = await execute_programs(pool, DAY, client)
        return answers

    SnapshotStore(root / "gold").write(
        DAY, asyncio.run(gold()), pool_version="test", pool_sha256="0" * 64, data_service="embedded",
        code_version="test", max_withdrawn_share=0.5, cutoff=dt.datetime(2026, 11, 27, 22, tzinfo=dt.timezone.utc))
    served = [ServedQuestion(qid=q.qid, question=q.question, question_zh=q.question_zh, tier=q.tier,
                             asset_class=q.asset_class, refresh_class=q.refresh_class, visibility=q.visibility,
                             entity=q.entity) for q in pool]
    (root / "served").mkdir()
    (root / "served" / f"served_questions_{DAY}.jsonl").write_text(
        "".join(q.model_dump_json() + "\n" for q in served), encoding="utf-8")
    return root


def _analyst(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
    """A scripted analyst: calls `daily` for the entity the question names, then answers the close
    the data service returned (no knowledge of the gold)."""
    results = [m for m in messages if isinstance(m, ChatMessageTool)]
    question = next(m.text for m in messages if m.role == "user")
    code = question.split(" of ")[-1].split(" on ")[0] if " of " in question else question.split("最近")[0]
    if not results:
        assert "daily" in {t.name for t in tools}
        return ModelOutput.for_tool_call(model="mockllm", tool_name="daily",
                                         tool_arguments={"ts_code": code, "trade_date": DAY.strftime("%Y%m%d")})
    close = json.loads(results[-1].text)["items"][0]["close"]
    return ModelOutput.from_content(model="mockllm", content=f"The daily bar shows it.\nFinal answer: {close:.2f}")


def test_the_task_lists_the_scoring_set_in_the_asked_language(day_dir: Path) -> None:
    day = load_day(day_dir, DAY)
    assert [s.metadata["lang"] for s in build_samples(day, "en")] == ["en", "en"]
    assert all("收盘价" in s.input for s in build_samples(day, "zh"))
    both = build_samples(day, "both")
    assert len(both) == 4 and sum(str(s.id).endswith("@zh") for s in both) == 2
    with pytest.raises(InspectTaskError, match=r"no served questions for 2026-11-26: .* \(days served in .*: 2026-11-27"):
        load_day(day_dir, dt.date(2026, 11, 26))
    with pytest.raises(InspectTaskError, match="-T tools='browser': expected one of plugin, web, none"):
        livesearch(date=DAY.isoformat(), tools="browser", data_dir=str(day_dir))
    catalog = DataService(config=ServiceConfig(clock=DAY)).catalog
    service_of = {t.name: t.service for t in catalog.tools}
    quotes = plugin_tool_names(DAY, ["cn_quotes"], [], None)
    everything = plugin_tool_names(DAY, [], [], None)
    assert "daily" in quotes and {service_of[n] for n in quotes} == {"cn_quotes"} and len(everything) > len(quotes)
    assert not {n for n in everything if catalog.get(n).role == "intraday"}  # as the plugin agent: no live quotes
    assert set(plugin_tool_names(DAY, [], ["daily", "stock_b*"], None)) == {"daily", "stock_basic"}
    with pytest.raises(InspectTaskError, match="unknown service"):
        plugin_tool_names(DAY, ["no_such_service"], [], None)


@pytest.mark.slow
def test_a_scripted_tool_call_reaches_the_data_service_and_scores_correct(day_dir: Path, tmp_path: Path) -> None:
    task = livesearch(date=DAY.isoformat(), lang="both", tools="plugin", tool_names="daily", data_dir=str(day_dir))
    model = get_model("mockllm/model", custom_outputs=_analyst)
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", max_samples=2)
    assert log.status == "success", log.error
    assert len(log.samples) == 4
    for sample in log.samples:
        [score] = sample.scores.values()
        tools = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
        assert len(tools) == 1 and tools[0].error is None and '"items"' in tools[0].text
        assert score.value == "C", (sample.id, score.explanation)
        assert score.metadata["judge"] == "deterministic"
    [accuracy] = [m for s in log.results.scores for m in s.metrics.values() if m.name == "accuracy"]
    assert accuracy.value == 1.0

    out = day_dir / "runs" / DAY.isoformat() / "inspect-mock"
    runs = import_inspect_log(Path(log.location), out, data_root=day_dir)
    assert [r.out_dir.name for r in runs] == ["inspect-mock", "inspect-mock-zh"]
    for run in runs:
        summary = run.result.summary
        assert summary.accuracy == 1.0 and summary.n_scored == 2
        assert summary.usage is not None and summary.usage.tool_calls == 2 and summary.usage.model_calls == 4
        assert summary.usage.cost_usd is None  # mockllm is in no price map
        assert summary.agent.startswith("inspect-plugin-")
        trajectories = [json.loads(line) for line in (run.out_dir / "trajectories.jsonl").read_text().splitlines()]
        assert len(trajectories) == 2 and all(t["tool_calls"][0]["tool"] == "daily" for t in trajectories)
    zh = [json.loads(line) for line in (runs[1].out_dir / "predictions.jsonl").read_text().splitlines()]
    assert {p["lang"] for p in zh} == {"zh"}
    board = build_leaderboard([r.out_dir for r in runs])
    assert {row.agent for row in board.rows} == {runs[0].result.summary.agent, runs[1].result.summary.agent}
    with pytest.raises(InspectImportError, match="exists: import into an empty --out directory"):
        import_inspect_log(Path(log.location), out, data_root=day_dir)


def test_the_web_tools_search_and_fetch_through_the_web_agents_code() -> None:
    page = "<html><head><title>Quote</title></head><body><p>Close 18.42</p></body></html>"
    with fake_web({"Harbor close": [("Harbor quote", "/page/q", "close 18.42")]}, {"q": ("text/html", page)}) as web:
        async def use() -> tuple[str, str, str]:
            found = await web_search(web.base_url)(query="Harbor close")
            text = await fetch_page(web.base_url)(url=web.base_url + "/page/q")
            try:
                await fetch_page(web.base_url)(url=web.base_url + "/page/missing")
            except Exception as exc:  # Inspect's ToolError: shown to the model, which may retry
                return str(found), str(text), f"{type(exc).__name__}: {exc}"
            return str(found), str(text), ""

        found, text, missing = asyncio.run(use())
    assert json.loads(found)["results"][0]["url"].endswith("/page/q")
    assert "Title: Quote" in text and "Close 18.42" in text
    assert missing.startswith("ToolError") and "HTTP 404" in missing


def test_the_task_refuses_a_day_without_an_offline_web(day_dir: Path) -> None:
    with pytest.raises(InspectTaskError, match="no offline web for 2026-11-27: .*build-web --date 2026-11-27"):
        livesearch(date=DAY.isoformat(), tools="web", data_dir=str(day_dir))
    with pytest.raises(InspectTaskError, match="offers none"):
        livesearch(date=DAY.isoformat(), tools="none", services="cn_quotes", data_dir=str(day_dir))
    closed = livesearch(date=DAY.isoformat(), tools="none", lang="zh", data_dir=str(day_dir))
    assert len(closed.dataset) == 2 and all("收盘价" in s.input for s in closed.dataset)


def test_the_web_tools_refuse_a_search_or_read_beyond_the_tasks_budget_and_count_it_in_the_sample() -> None:
    from types import SimpleNamespace

    from inspect_ai.util import Store, store
    from inspect_ai.util._store import init_subtask_store

    from livesearch_pipeline.evaluation.agents.budget import LEDGER_STORE_KEY
    from livesearch_pipeline.evaluation.inspect_import import _usage

    page = "<html><head><title>Quote</title></head><body><p>Close 18.42</p></body></html>"
    pages = {"q": ("text/html", page), "r": ("text/html", page)}
    with fake_web({"Harbor close": [("Harbor quote", "/page/q", "close 18.42")]}, pages) as web:
        async def use() -> tuple[list[str], dict[str, object]]:
            init_subtask_store(Store())  # one sample's store
            search, fetch = web_search(web.base_url, max_searches=1), fetch_page(web.base_url, max_reads=1)
            outcomes = []
            for call in (lambda: search(query="Harbor close"), lambda: search(query="Harbor again"),
                         lambda: fetch(url=web.base_url + "/page/q"), lambda: fetch(url=web.base_url + "/page/q", start=5),
                         lambda: fetch(url=web.base_url + "/page/r")):
                try:
                    await call()
                    outcomes.append("ok")
                except Exception as exc:  # Inspect's ToolError: the model reads the refusal
                    outcomes.append(f"{type(exc).__name__}: {exc}")
            return outcomes, dict(store().get(LEDGER_STORE_KEY))

        outcomes, ledger = asyncio.run(use())
    assert outcomes[0] == "ok" and outcomes[2] == "ok" and outcomes[3] == "ok"
    assert outcomes[1].startswith("ToolError: search budget of 1 searches spent")
    assert outcomes[4].startswith("ToolError: read budget of 1 pages spent")
    assert (ledger["searches"], ledger["page_reads"], ledger["budget_refusals"]) == (1, 1, 2)
    sample = SimpleNamespace(store={LEDGER_STORE_KEY: ledger}, messages=[], model_usage={}, total_time=1.0)
    usage = _usage(sample, "mockllm/model")
    assert (usage.searches, usage.page_reads, usage.budget_refusals) == (1, 1, 2)


def test_the_task_declares_its_web_budget_and_refuses_one_without_a_web(day_dir: Path) -> None:
    with pytest.raises(InspectTaskError, match="-T max_reads=0: expected a positive whole number"):
        livesearch(date=DAY.isoformat(), tools="web", max_reads=0, data_dir=str(day_dir))
    with pytest.raises(InspectTaskError, match="reads no web"):
        livesearch(date=DAY.isoformat(), tools="none", max_reads=6, data_dir=str(day_dir))
