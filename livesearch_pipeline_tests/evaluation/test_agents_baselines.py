"""Baselines: oracle (the gold self-test), stale (the previous snapshot), closed-book."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.core.executor import execute_programs
from livesearch_pipeline.core.models import (
    Call,
    DateSpec,
    Extractor,
    Format,
    MatchRule,
    Prediction,
    Program,
    Provenance,
    Question,
    Selection,
    ServedQuestion,
)
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.evaluation.agents.base import PREDICTIONS_FILE, run_agent
from livesearch_pipeline.evaluation.agents.chat import LitellmChatModel
from livesearch_pipeline.evaluation.agents.closed_book import ClosedBookAgent
from livesearch_pipeline.evaluation.agents.oracle import OracleAgent, OracleError
from livesearch_pipeline.evaluation.agents.stale import StaleAgent, StaleGoldError
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.infra.llm import RetryPolicy
from livesearch_pipeline_tests.core.fakes import MARKET_TOOLS, FakeToolClient
from livesearch_pipeline_tests.evaluation.agents_fakes import scripted_model, served_question, write_served

if TYPE_CHECKING:
    from livesearch_pipeline.settings import DataPaths

DAY = dt.date(2026, 11, 27)  # a Friday; XSHG sessions on the 26th and 25th too
CODES = ("600001.SH", "600002.SH", "000001.SZ")


def _question(code: str, *, aggregate: str | None = None, sessions: int = 0, text: str) -> Question:
    dates = {"start_date": DateSpec(sessions_back=sessions, calendar="XSHG"),
             "end_date": DateSpec(sessions_back=0, calendar="XSHG")}
    select = Selection(mode="all" if aggregate else "latest", key="trade_date")
    built = Program(
        calls=[Call(id="c1", tool="daily", args={"ts_code": code}, dates=dates)],
        extract=Extractor(call="c1", select=select, field="close", aggregate=aggregate,
                          format=Format(kind="number", decimals=2, unit="CNY")),
    )
    return Question(
        qid=compute_qid(built, code), question=text, program=built,
        match=MatchRule(rule="approx", abs_tol=0.005, decimals=2, unit="CNY"),
        refresh_class="daily", tier="T3" if aggregate else "T1", asset_class="cn_equity",
        entity=code, entity_name=f"Fictional {code}", visibility=4, signature="sig-000000000000",
        provenance=Provenance(verbalizer="template"),
    )


POOL = [
    *(_question(code, text=f"What was the close of {code} on the most recent trading day?") for code in CODES),
    *(_question(code, aggregate="mean", sessions=4,
                text=f"What was the mean close of {code} over the last five trading days?") for code in CODES),
]


def _served(pool: list[Question]) -> list[ServedQuestion]:
    return [ServedQuestion(qid=q.qid, question=q.question, tier=q.tier, asset_class=q.asset_class,
                           refresh_class=q.refresh_class, visibility=q.visibility, entity=q.entity) for q in pool]


def _write_gold(root: Path, day: dt.date) -> Path:
    answers, _ = asyncio.run(execute_programs(POOL, day, FakeToolClient(MARKET_TOOLS)))
    store = SnapshotStore(root)
    store.write(day, answers, pool_version="test", pool_sha256="0" * 64, data_service="fake-service",
                code_version="test", max_withdrawn_share=0.05, cutoff=dt.datetime(2026, 11, 27, 22, tzinfo=dt.timezone.utc))
    return store.path_for(day)


def _predictions(out: Path) -> dict[str, Prediction]:
    lines = (out / PREDICTIONS_FILE).read_text().splitlines()
    return {p.qid: p for p in map(Prediction.model_validate_json, lines)}


def test_oracle_scores_100_percent_against_the_days_gold(tmp_path: Path) -> None:
    gold_path = _write_gold(tmp_path / "gold", DAY)
    served_path = tmp_path / f"served_questions_{DAY}.jsonl"
    write_served(served_path, _served(POOL))
    client = FakeToolClient(MARKET_TOOLS)
    oracle = OracleAgent(pool=POOL, client=client, as_of=DAY)
    asyncio.run(run_agent(oracle, _served(POOL), tmp_path / "run", date=DAY, concurrency=3))

    # Shared calls run once: six programs over three entities, two windows each.
    assert oracle.stats is not None and oracle.stats.programs == 6 and len(client.calls) == 6
    result = evaluate(served_path, gold_path, tmp_path / "run" / PREDICTIONS_FILE)
    assert result.summary.accuracy == 1.0
    assert all(v.correct for v in result.verdicts)
    trace = next(iter(_predictions(tmp_path / "run").values())).trace
    assert trace[0]["type"] == "oracle" and trace[0]["as_of"] == "2026-11-27"


def test_oracle_records_unknown_questions_and_failed_programs_per_question(tmp_path: Path) -> None:
    stranger = served_question("A question from another pool?")
    edited = _served(POOL[:1])[0].model_copy(update={"question": "Edited text?"})
    client = FakeToolClient(MARKET_TOOLS)
    client.script("daily", ToolCallError("daily", "boom"), when={"ts_code": CODES[1]})
    oracle = OracleAgent(pool=POOL[:2], client=client, as_of=DAY)
    served = [stranger, edited, _served(POOL[1:2])[0]]
    asyncio.run(run_agent(oracle, served, tmp_path, date=DAY))
    by_qid = _predictions(tmp_path)
    assert by_qid[stranger.qid].error.startswith("OracleError: ") and "not in the pool" in by_qid[stranger.qid].error
    assert "served text differs" in by_qid[edited.qid].error
    failed = by_qid[POOL[1].qid]
    assert failed.answer is None and failed.error.startswith("gold program ended error")


def test_stale_answers_with_the_previous_snapshot_and_fails_todays_gold(tmp_path: Path) -> None:
    gold_root = tmp_path / "gold"
    _write_gold(gold_root, dt.date(2026, 11, 25))
    previous = _write_gold(gold_root, dt.date(2026, 11, 26))
    today = _write_gold(gold_root, DAY)
    served_path = tmp_path / f"served_questions_{DAY}.jsonl"
    write_served(served_path, _served(POOL))
    stale = StaleAgent.from_store(SnapshotStore(gold_root), DAY)
    assert stale.gold_date == dt.date(2026, 11, 26)
    asyncio.run(run_agent(stale, _served(POOL), tmp_path / "run", date=DAY))

    previous_answers = {a.qid: a.answer for a in SnapshotStore(gold_root).read(dt.date(2026, 11, 26))}
    predictions = _predictions(tmp_path / "run")
    assert {q: p.answer for q, p in predictions.items()} == previous_answers
    assert all(p.trace == [{"type": "stale", "gold_date": "2026-11-26"}] for p in predictions.values())
    assert previous != today
    result = evaluate(served_path, today, tmp_path / "run" / PREDICTIONS_FILE)
    # Latest closes moved since yesterday; every stale "latest" answer is wrong.
    latest = {q.qid for q in POOL if q.tier == "T1"}
    assert not any(v.correct for v in result.verdicts if v.qid in latest)
    assert result.summary.accuracy < 0.5


def test_stale_without_an_earlier_snapshot_fails_loudly(tmp_path: Path) -> None:
    _write_gold(tmp_path, DAY)
    with pytest.raises(StaleGoldError, match="no gold snapshot dated before 2026-11-27"):
        StaleAgent.from_store(SnapshotStore(tmp_path), DAY)


def test_closed_book_asks_without_tools_and_reads_the_final_line(tmp_path: Path) -> None:
    first, second = (served_question("What was the close of Alpha on the most recent trading day?"),
                     served_question("What was the close of Beta on the most recent trading day?"))
    scripts = {first.question: ["I cannot look it up; my best estimate.\nFinal answer: 12.30 CNY"],
               second.question: [{"tool_calls": [{"name": "web_search", "arguments": {"query": "Beta"}}]}]}
    with scripted_model(scripts) as model:
        agent = ClosedBookAgent(chat_model=LitellmChatModel(model="openai/scripted", api_base=model.api_base,
                                                            api_key="sk-test", retry=RetryPolicy(attempts=1)),
                                as_of=DAY)
        asyncio.run(run_agent(agent, [first, second], tmp_path, date=DAY, concurrency=2))
        request = model.requests_for(first.question)[0]
    assert "tools" not in request and "2026-11-27" in request["messages"][0]["content"]
    by_qid = _predictions(tmp_path)
    assert by_qid[first.qid].answer == "12.30 CNY"
    assert by_qid[first.qid].trace[-1]["explicit_final_line"] is True
    assert by_qid[second.qid].answer is None
    assert "asked for tools it does not have" in by_qid[second.qid].error


def test_oracle_refuses_to_answer_before_prepare() -> None:
    oracle = OracleAgent(pool=POOL, client=FakeToolClient(MARKET_TOOLS), as_of=DAY)
    with pytest.raises(OracleError, match="prepare"):
        asyncio.run(oracle.answer(_served(POOL)[0]))


# --------------------------------------------------------------------------- the oracle runs only a checked pool


def _data_root(root: Path) -> "DataPaths":
    from livesearch_pipeline.construction.pipeline import TABLES, write_catalog
    from livesearch_pipeline.construction.pool import write_pool
    from livesearch_pipeline.settings import DataPaths
    from livesearch_pipeline_tests.core.sample_programs import CATALOG

    paths = DataPaths(root)
    write_pool(paths.pool, POOL, data_service="fake-service")
    write_catalog(paths.construction / TABLES["catalog"], CATALOG)
    return paths


def _agent_day(paths: "DataPaths"):
    """D's inputs under `paths`, with D's served file and gold written first (AgentDay requires them)."""
    from livesearch_pipeline.evaluation.day_inputs import AgentDay

    _write_gold(paths.gold, DAY)
    paths.served.mkdir(parents=True, exist_ok=True)
    write_served(paths.served_file(DAY), _served(POOL))
    return AgentDay.build(paths, DAY)


def test_the_oracle_loads_the_pool_checked(tmp_path: Path) -> None:
    from livesearch_pipeline.evaluation.opening import open_agent
    from livesearch_pipeline.evaluation.registry import AgentSpec

    inputs = _agent_day(_data_root(tmp_path))

    async def opened() -> list[str]:
        async with open_agent(AgentSpec(name="oracle", kind="oracle"), inputs,
                              client=FakeToolClient(MARKET_TOOLS)) as agent:
            return sorted(q.qid for q in agent.pool)

    assert asyncio.run(opened()) == sorted(q.qid for q in POOL)


def test_the_oracle_refuses_a_tampered_pool_before_calling_anything(tmp_path: Path) -> None:
    from livesearch_pipeline.core.program import PoolLoadError
    from livesearch_pipeline.evaluation.opening import open_agent
    from livesearch_pipeline.evaluation.registry import AgentSpec

    paths = _data_root(tmp_path)
    inputs = _agent_day(paths)
    pool_file = paths.pool / "questions.jsonl"
    pool_file.write_bytes(pool_file.read_bytes().replace(b'"sessions_back":4', b'"sessions_back":3'))
    client = FakeToolClient(MARKET_TOOLS)

    async def opened() -> None:
        async with open_agent(AgentSpec(name="oracle", kind="oracle"), inputs, client=client):
            raise AssertionError("a tampered pool must not be opened")

    with pytest.raises(PoolLoadError, match=rf"{pool_file} has sha256 .* but pool_manifest.json records"):
        asyncio.run(opened())
    assert client.calls == []


def test_agent_run_refuses_an_unchecked_oracle_pool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from livesearch_pipeline.cli import main

    paths = _data_root(tmp_path)
    (paths.construction / "tool_catalog.json").write_text(
        (paths.construction / "tool_catalog.json").read_text().replace('"role": "data"', '"role": "search"'))
    served = tmp_path / f"served_questions_{DAY}.jsonl"
    write_served(served, _served(POOL))
    argv = ["agent", "run", "--agent", "oracle", "--served", str(served), "--out", str(tmp_path / "run"),
            "--pool", str(paths.pool / "questions.jsonl")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "PoolLoadError" in err and str(paths.pool / "questions.jsonl") in err and "only data tools define gold" in err
    assert not (tmp_path / "run" / PREDICTIONS_FILE).exists()
