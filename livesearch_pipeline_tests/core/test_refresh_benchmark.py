"""The refresh benchmark script runs end to end on a small workload (timings are not asserted)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from livesearch_pipeline.core.calendars import sessions_back

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "refresh_core.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("refresh_core_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_benchmark_answers_every_shape_correctly(bench, tmp_path: Path):
    result = bench.run_benchmark(300, snapshot_root=tmp_path)
    assert result.programs == 300 and len(result.answers) == 300
    assert {a.status for a in result.answers} == {"ok"}, [a.error for a in result.answers if a.error][:3]
    assert result.stats.unique_calls < result.stats.tool_calls_requested  # calls are shared
    assert (tmp_path / f"gold_answers_{bench.DEFAULT_AS_OF.isoformat()}.manifest.json").is_file()

    market = bench.SyntheticMarket(bench.synthetic_entities(500))
    questions = {q.qid: q for q in bench.build_questions(300, market)}
    assert {q.signature for q in questions.values()} == {f"sig-{shape}" for shape in bench.SHAPES}
    index = bench._session_index()
    offset = bench._history_offset()
    as_of = bench.DEFAULT_AS_OF

    def at(code: str, field: str, day) -> float:
        return float(market.bars(code)[field][index[day] - offset])

    checked = set()
    for answer in result.answers:
        shape = questions[answer.qid].signature.removeprefix("sig-")
        code = questions[answer.qid].entity
        if shape == "latest" and "latest" not in checked:
            assert answer.value == at(code, "close", sessions_back("XSHG", as_of, 0))
            checked.add(shape)
        if shape == "dag" and "dag" not in checked:
            window = [sessions_back("XSHG", as_of, n) for n in range(19, -1, -1)]
            closes = [at(code, "close", day) for day in window]
            peak_day = window[int(np.argmax(closes))]
            assert answer.args["c2"] == {"ts_code": code, "trade_date": peak_day.strftime("%Y%m%d")}
            checked.add(shape)
        if shape == "resolve" and "resolve" not in checked:
            weights = market.index_weight(answer.args["c1"])["items"]
            assert answer.args["c2"]["ts_code"] == max(weights, key=lambda r: r["weight"])["con_code"]
            checked.add(shape)
        if shape == "growth" and "growth" not in checked:
            field = questions[answer.qid].program.extract.field
            records = market.income(answer.args["c1"])["items"]
            latest, year_ago = records[0], next(r for r in records if r["end_date"] == str(
                int(records[0]["end_date"][:4]) - 1) + records[0]["end_date"][4:])
            assert answer.value == pytest.approx((latest[field] - year_ago[field]) / abs(year_ago[field]) * 100)
            checked.add(shape)
        if shape == "adjusted" and "adjusted" not in checked:
            bars = {r["trade_date"]: r for r in market.daily(answer.args["c1"])["items"]}
            factors = {r["trade_date"]: r["adj_factor"] for r in market.adj_factor(answer.args["c2"])["items"]}
            first, last = min(bars), max(bars)
            field = questions[answer.qid].program.extract.field
            expected = (bars[last][field] * factors[last]) / (bars[first][field] * factors[first]) * 100 - 100
            assert answer.value == pytest.approx(expected)
            checked.add(shape)
    assert checked == {"latest", "dag", "resolve", "growth", "adjusted"}


def test_benchmark_command_line_reports_every_metric(bench, capsys: pytest.CaptureFixture[str]):
    exit_code = bench.main(["--programs", "300"])
    out = capsys.readouterr().out
    for label in ("programs/s", "unique calls per program", "outside-tool share", "peak RSS MiB", "wall s"):
        assert label in out
    assert "ok=300 empty=0 error=0" in out and "did not answer" not in out
    assert out.count("PASS") + out.count("FAIL") == 4
    assert exit_code == (0 if "FAIL" not in out else 1)


def test_benchmark_rejects_impossible_sizes(bench):
    market = bench.SyntheticMarket(bench.synthetic_entities(10))
    capacity = len(bench.SHAPES) * 10 * bench.VARIANTS
    with pytest.raises(ValueError, match=f"--programs must be in 1..{capacity}"):
        bench.build_questions(capacity + 1, market)


def test_a_tie_is_withdrawn_not_a_failure_and_anything_else_not_ok_fails(bench):
    import datetime as dt

    from livesearch_pipeline.core.models import GoldAnswer, MatchRule

    rule = MatchRule(rule="exact")
    day = dt.date(2026, 11, 27)
    answers = [
        GoldAnswer(qid="ls-0000000000000001", date=day, status="ok", answer="1.00", value=1.0, match=rule),
        GoldAnswer(qid="ls-0000000000000002", date=day, status="empty", match=rule,
                   error="tie: 20260909 and 20260910 at 145.52 (call 'c1' path 'items' field 'close')"),
        GoldAnswer(qid="ls-0000000000000003", date=day, status="empty", match=rule,
                   error="selection 'latest' on key 'trade_date' matched no record"),
        GoldAnswer(qid="ls-0000000000000004", date=day, status="error", match=rule, error="tie: not an empty"),
    ]
    ties, failures = bench.unanswered(answers)
    assert [a.qid for a in ties] == ["ls-0000000000000002"]
    assert [a.qid for a in failures] == ["ls-0000000000000003", "ls-0000000000000004"]
