from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.evaluation.judge import LLMJudge
from livesearch_pipeline.evaluation.leaderboard import (
    CHART_CSV,
    CHART_PNG,
    LEADERBOARD_JSON,
    LEADERBOARD_MD,
    LeaderboardError,
    build_leaderboard,
    wilson_interval,
    write_leaderboard,
)
from livesearch_pipeline_tests.evaluation.eval_fixtures import (
    ScriptedCompleter,
    qid,
    standard_cases,
    write_gold,
    write_predictions,
    write_served,
)

RIGHT = {qid(1): "1234.56", qid(2): "1.23%", qid(3): "Kunlun Brewing", qid(4): "42"}


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0) and wilson_interval(0, 10)[0] == pytest.approx(0.0)
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def _run(root: Path, name: str, answers: dict[str, str], *, agent: str, model: str | None,
         cases=None, judge: LLMJudge | None = None) -> Path:
    cases = cases or standard_cases()
    served = write_served(root, cases)
    gold_path = root / "gold" / "gold_answers_2026-03-03.jsonl"
    gold = gold_path if gold_path.exists() else write_gold(root, [c.gold for c in cases])
    predictions = write_predictions(
        root, answers, served_qids=[c.served.qid for c in cases], agent=agent, model=model, name=f"pred_{name}"
    )
    out = root / "runs" / name
    write_evaluation(evaluate(served, gold, predictions, judge=judge), out)
    return out


def test_runs_are_ranked_with_intervals_and_chart_table(tmp_path: Path) -> None:
    perfect = _run(tmp_path, "oracle", RIGHT, agent="oracle", model=None)
    half = _run(tmp_path, "web", {qid(1): "1234.56", qid(2): "1.23%"}, agent="web", model="openai/gpt-4o")
    none = _run(tmp_path, "closed", {}, agent="closed-book", model="qwen/qwen-max")
    board = build_leaderboard([half, none, perfect])
    assert [(r.rank, r.agent, r.correct, r.n) for r in board.rows] == [
        (1, "oracle", 4, 4), (2, "web", 2, 4), (3, "closed-book", 0, 4)
    ]
    assert board.rows[1].wilson_low < 0.5 < board.rows[1].wilson_high
    assert board.rows[1].by_tier == {"T1": 1.0, "T2": 0.5, "T3": 0.0}
    assert board.unranked == []
    oracle_points = [p for p in board.chart if p.agent == "oracle"]
    assert {(p.tier, p.visibility) for p in oracle_points} == {("T1", 9), ("T2", 2), ("T2", 0), ("T3", 5)}
    paths = write_leaderboard(board, tmp_path / "board")
    assert {p.name for p in paths} == {LEADERBOARD_JSON, LEADERBOARD_MD, CHART_CSV, CHART_PNG}
    markdown = (tmp_path / "board" / LEADERBOARD_MD).read_text(encoding="utf-8")
    assert "| 1 | oracle |" in markdown and "[" in markdown
    rows = list(csv.DictReader(io.StringIO((tmp_path / "board" / CHART_CSV).read_text(encoding="utf-8"))))
    assert len(rows) == 12 and set(rows[0]) == {"agent", "tier", "visibility", "n", "correct", "accuracy"}
    assert json.loads((tmp_path / "board" / LEADERBOARD_JSON).read_text())["rows"][0]["agent"] == "oracle"


def test_ties_share_a_rank(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", {qid(1): "1234.56"}, agent="a", model=None)
    b = _run(tmp_path, "b", {qid(4): "42"}, agent="b", model=None)
    board = build_leaderboard([a, b])
    assert [r.rank for r in board.rows] == [1, 1]


def test_runs_on_another_question_set_are_listed_unranked(tmp_path: Path) -> None:
    ranked = [_run(tmp_path, n, RIGHT, agent=n, model=None) for n in ("x", "y")]
    other_root = tmp_path / "other"
    small = standard_cases()[:3]
    lonely = _run(other_root, "z", RIGHT_SUBSET, agent="z", model=None, cases=small)
    board = build_leaderboard([*ranked, lonely])
    assert [r.agent for r in board.rows] == ["x", "y"]
    (unranked,) = board.unranked
    assert unranked.agent == "z" and "qid-set hash" in unranked.reason


RIGHT_SUBSET = {qid(1): "1234.56", qid(2): "1.23%", qid(3): "Kunlun Brewing"}


def test_date_filter_without_runs_is_an_error(tmp_path: Path) -> None:
    run = _run(tmp_path, "x", RIGHT, agent="x", model=None)
    with pytest.raises(LeaderboardError, match="2026-01-01"):
        build_leaderboard([run], date="2026-01-01")


def test_missing_summary_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(LeaderboardError, match="no summary.json"):
        build_leaderboard([tmp_path])


def test_leaderboard_refuses_a_judge_of_a_ranked_agents_family(tmp_path: Path) -> None:
    judge = LLMJudge("anthropic/claude-3-5-haiku", completer=ScriptedCompleter())
    judged = _run(tmp_path, "web", RIGHT, agent="web", model="openai/gpt-4o", judge=judge)
    claude = _run(tmp_path, "claude", RIGHT, agent="claude-web", model="anthropic/claude-sonnet-4")
    with pytest.raises(LeaderboardError, match="family 'anthropic'"):
        build_leaderboard([judged, claude])
