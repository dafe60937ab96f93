"""Issue 23, finding 1: the leaderboard recomputes what it ranks from sha-bound verdicts over the
scoring set of the current gold manifest, and never ranks what a summary.json merely claims."""

from __future__ import annotations

import hashlib
import os
import json
import shutil
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.outputs import SUMMARY_FILE, VERDICTS_FILE, write_evaluation
from livesearch_pipeline.evaluation.leaderboard import build_leaderboard
from livesearch_pipeline_tests.evaluation.eval_fixtures import (
    qid,
    standard_cases,
    write_gold,
    write_predictions,
    write_served,
)

RIGHT = {qid(1): "1234.56", qid(2): "1.23%", qid(3): "Kunlun Brewing", qid(4): "42"}


@pytest.fixture(autouse=True)
def _no_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LIVESEARCH_JUDGE_MODEL", raising=False)


def _runs(root: Path) -> tuple[Path, Path]:
    """Two evaluated runs of one day: oracle 4/4, web 2/4 (predictions in the run folders)."""
    cases = standard_cases()
    served = write_served(root, cases)
    gold = write_gold(root, [c.gold for c in cases])
    qids = [c.served.qid for c in cases]
    out = []
    for name, answers, model in (("oracle", RIGHT, None), ("web", {qid(1): "1234.56", qid(2): "1.23%"}, "openai/x")):
        predictions = write_predictions(root / "runs", answers, served_qids=qids, agent=name, model=model, name=name)
        write_evaluation(evaluate(served, gold, predictions), predictions.parent)
        out.append(predictions.parent)
    return out[0], out[1]


def _edit_summary(run: Path, **changes: object) -> None:
    path = run / SUMMARY_FILE
    summary = json.loads(path.read_text(encoding="utf-8"))
    summary.update(changes)
    path.write_text(json.dumps(summary), encoding="utf-8")


def _reasons(board) -> dict[str, str]:
    return {Path(u.run_dir).name: u.reason for u in board.unranked}


def test_an_honest_pair_ranks_with_figures_recomputed_and_the_predictions_sha_bound(tmp_path: Path) -> None:
    oracle, web = _runs(tmp_path)
    summary = json.loads((oracle / SUMMARY_FILE).read_text())
    assert summary["predictions_sha256"] == hashlib.sha256((oracle / "predictions.jsonl").read_bytes()).hexdigest()
    board = build_leaderboard([oracle, web], gold_dir=tmp_path / "gold", served_dir=tmp_path / "served")
    assert [(r.agent, r.correct, r.n, r.accuracy) for r in board.rows] == [("oracle", 4, 4, 1.0), ("web", 2, 4, 0.5)]
    assert board.unranked == []


def test_an_edited_accuracy_or_count_is_not_ranked_and_never_a_traceback(tmp_path: Path) -> None:
    oracle, web = _runs(tmp_path)
    _edit_summary(web, accuracy=0.99)
    board = build_leaderboard([oracle, web])
    assert [r.agent for r in board.rows] == ["oracle"]
    assert "claims correct/n 2/4, accuracy 0.99" in _reasons(board)["web"]
    assert "verdicts give 2/4" in _reasons(board)["web"]
    # `correct: 99999` once ended in wilson_interval's ValueError traceback.
    _edit_summary(web, accuracy=0.5, correct=99999)
    board = build_leaderboard([oracle, web])
    assert "claims correct/n 99999/4" in _reasons(board)["web"]


def test_non_finite_values_are_refused(tmp_path: Path) -> None:
    """A summary holding NaN is never ranked, and never takes the other runs' board down (issue 38)."""
    oracle, web = _runs(tmp_path)
    path = web / SUMMARY_FILE
    path.write_text(path.read_text().replace('"accuracy": 0.5', '"accuracy": NaN'), encoding="utf-8")
    board = build_leaderboard([oracle, web])
    assert [r.agent for r in board.rows] == ["oracle"]
    assert [u.run_dir for u in board.unranked] == [str(web)]
    assert "summary.json: non-finite number NaN" in board.unranked[0].reason


def test_a_copied_run_under_the_same_agent_name_is_listed_unranked(tmp_path: Path) -> None:
    """One agent name is one row: the first-written run ranks, the copy is listed with the reason (issue 38:
    the copy once failed the whole board)."""
    oracle, web = _runs(tmp_path)
    copy = tmp_path / "runs" / "copy"
    shutil.copytree(oracle, copy)
    os.utime(copy / SUMMARY_FILE, ns=(os.stat(oracle / SUMMARY_FILE).st_mtime_ns + 10**9,) * 2)
    board = build_leaderboard([copy, oracle, web])
    assert sorted(r.run_dir for r in board.rows) == sorted([str(oracle), str(web)])
    assert [u.run_dir for u in board.unranked] == [str(copy)]
    assert f"agent 'oracle' is ranked from {oracle} (written first)" in board.unranked[0].reason


def test_a_summary_whose_gold_sha_is_not_the_gold_of_the_manifest_is_unranked(tmp_path: Path) -> None:
    oracle, web = _runs(tmp_path)
    _edit_summary(web, gold_sha256="f" * 64)
    board = build_leaderboard([oracle, web], gold_dir=tmp_path / "gold")
    assert "records gold sha256 ffffffffffffffff…, the current gold manifest" in _reasons(board)["web"]


def test_cut_verdicts_with_their_sha_updated_are_unranked(tmp_path: Path) -> None:
    oracle, web = _runs(tmp_path)
    verdicts = (oracle / VERDICTS_FILE).read_bytes().splitlines(keepends=True)
    cut = b"".join(verdicts[:2])
    (oracle / VERDICTS_FILE).write_bytes(cut)
    _edit_summary(oracle, verdicts_sha256=hashlib.sha256(cut).hexdigest())
    board = build_leaderboard([oracle, web])
    assert [r.agent for r in board.rows] == ["web"]
    assert "its 2 verdicts do not cover exactly the scoring set of 4" in _reasons(board)["oracle"]


def test_predictions_appended_after_scoring_unrank_the_run(tmp_path: Path) -> None:
    oracle, web = _runs(tmp_path)
    predictions = oracle / "predictions.jsonl"
    predictions.write_bytes(predictions.read_bytes() * 2)  # two runs appending to one folder
    board = build_leaderboard([oracle, web])
    assert "the predictions changed after scoring" in _reasons(board)["oracle"]


def test_the_cli_reports_unranked_runs_and_refusals_in_one_line(tmp_path: Path, capsys) -> None:
    oracle, web = _runs(tmp_path)
    _edit_summary(web, judge_errors=3)
    assert main(["leaderboard", "--runs", str(oracle), str(web), "--out", str(tmp_path / "board"),
                 "--gold-dir", str(tmp_path / "gold"), "--served-dir", str(tmp_path / "served")]) == 0
    assert "claims correct/n 2/4" in capsys.readouterr().out
    path = web / SUMMARY_FILE
    path.write_text(path.read_text().replace('"accuracy": 0.5', '"accuracy": Infinity'), encoding="utf-8")
    assert main(["leaderboard", "--runs", str(oracle), str(web), "--out", str(tmp_path / "board")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "non-finite number Infinity" in err
