"""Issue 38's reproductions against runs and the leaderboard: `evaluate --out` into another agent's run,
a run under a taken name that took the day's board down, forged Markdown rows, agent names with line
breaks, and run-folder files that are links or too large."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.leaderboard import build_leaderboard, render_markdown
from livesearch_pipeline.evaluation.outputs import SUMMARY_FILE, VERDICTS_FILE, write_evaluation
from livesearch_pipeline_tests.evaluation.eval_fixtures import DAY, qid, standard_cases, write_gold, write_predictions, \
    write_served

RIGHT = {qid(1): "1234.56", qid(2): "1.23%", qid(3): "Kunlun Brewing", qid(4): "100"}


@pytest.fixture
def data_root(tmp_path: Path, monkeypatch) -> Path:
    """A data root with the standard day: its served file and gold, and the baselines' registry."""
    root = tmp_path / "data"
    cases = standard_cases()
    write_served(root, cases)
    write_gold(root, [c.gold for c in cases])
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(root))
    return root


def _run(root: Path, folder: str, agent: str, answers: dict[str, str]) -> Path:
    """An evaluated run of `agent` in runs/<DAY>/<folder> (its predictions, metadata, verdicts, summary)."""
    run_dir = root / "runs" / DAY.isoformat() / folder
    served = [c.served.qid for c in standard_cases()]
    predictions = write_predictions(run_dir.parent, answers, agent=agent, model=None, name=folder, served_qids=served)
    result = evaluate(root / "served" / f"served_questions_{DAY}.jsonl", root / "gold" / f"gold_answers_{DAY}.jsonl",
                      predictions)
    write_evaluation(result, run_dir)
    return run_dir


def _evaluate_args(root: Path, predictions: Path, out: Path, *extra: str) -> list[str]:
    return ["evaluate", "--served", str(root / "served" / f"served_questions_{DAY}.jsonl"),
            "--gold", str(root / "gold" / f"gold_answers_{DAY}.jsonl"), "--predictions", str(predictions),
            "--out", str(out), *extra]


def _own_predictions(tmp_path: Path, answers: dict[str, str]) -> Path:
    path = tmp_path / "mine" / "predictions.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"qid": q, "answer": a}) + "\n" for q, a in answers.items()), encoding="utf-8")
    return path


# --- finding 4: `evaluate --out` wrote into another agent's run


def test_evaluate_refuses_an_out_folder_holding_another_run(data_root: Path, tmp_path: Path, capsys) -> None:
    victim = _run(data_root, "navigator-6", "navigator-6", RIGHT)
    before = {name: (victim / name).read_bytes() for name in (SUMMARY_FILE, VERDICTS_FILE)}
    mine = _own_predictions(tmp_path, {qid(1): "0"})
    # Under the victim's own name, and under another name: refused both times, nothing written.
    for agent in ("navigator-6", "evil"):
        assert main(_evaluate_args(data_root, mine, victim, "--agent", agent)) == 2
        err = capsys.readouterr().err
        assert "nothing written" in err and ("holds a run's own predictions" in err or "holds the run of agent" in err)
        assert {name: (victim / name).read_bytes() for name in before} == before
        assert not mine.with_name("predictions.meta.json").exists()
    # The run's own predictions evaluated into its own folder again: allowed.
    assert main(_evaluate_args(data_root, victim / "predictions.jsonl", victim)) == 0


# --- finding 5: one run under a taken name took the day's board down


def test_evaluate_refuses_a_name_registered_or_already_used_that_day(data_root: Path, tmp_path: Path,
                                                                     capsys) -> None:
    runs = data_root / "runs" / DAY.isoformat()
    mine = _own_predictions(tmp_path, RIGHT)
    assert main(_evaluate_args(data_root, mine, runs / "my-run", "--agent", "oracle")) == 2
    assert "agent 'oracle' is registered" in capsys.readouterr().err and not (runs / "my-run").exists()
    mine.with_name("predictions.meta.json").unlink(missing_ok=True)
    _run(data_root, "first", "lab-agent", RIGHT)
    assert main(_evaluate_args(data_root, mine, runs / "second", "--agent", "lab-agent")) == 2
    assert "agent 'lab-agent' already has a run of" in capsys.readouterr().err and not (runs / "second").exists()


def test_a_second_run_under_a_taken_name_is_listed_unranked_and_the_board_is_made(data_root: Path) -> None:
    """The board ranks the registered agent's own folder and lists the squatter, whichever came first."""
    squatter = _run(data_root, "my-run", "oracle", RIGHT)
    registered = _run(data_root, "oracle", "oracle", {qid(1): "1234.56"})
    os.utime(registered / SUMMARY_FILE, ns=(os.stat(squatter / SUMMARY_FILE).st_mtime_ns + 10**9,) * 2)
    out = data_root / "runs" / DAY.isoformat() / "leaderboard"
    assert main(["leaderboard", "--runs", str(registered), str(squatter), "--out", str(out)]) == 0
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert [r["run_dir"] for r in board["rows"]] == [str(registered)]
    (unranked,) = board["unranked"]
    assert unranked["run_dir"] == str(squatter)
    assert "is ranked from" in unranked["reason"] and "the registered run" in unranked["reason"]


# --- finding 10: forged leaderboard rows; an import-inspect name with line breaks


def test_markdown_cells_are_escaped(data_root: Path) -> None:
    run = _run(data_root, "forger", "forger", {qid(1): "0"})
    board = build_leaderboard([run], date=DAY.isoformat(), gold_dir=data_root / "gold", served_dir=data_root / "served")
    forged = board.model_copy(update={"rows": [board.rows[0].model_copy(update={
        "model": "x | 100.0% | [99%, 100%] | 4/4 |\n| 1 | oracle", "agent": "a<img src=x>[link](http://e)"})]})
    markdown = render_markdown(forged)
    table = [line for line in markdown.splitlines() if line.startswith("| 1 |")]
    assert len(table) == 2  # the accuracy table's row and the usage table's row, no forged one
    assert table[0].count(" | ") == markdown.splitlines()[2].count(" | ")  # as many cells as the header
    assert not re.search(r"(?<!\\)[<>\[\]()]", table[0].split(" | ")[1])  # nothing left for HTML or a link


def test_run_metadata_with_a_line_break_in_its_agent_is_refused(data_root: Path, tmp_path: Path, capsys) -> None:
    mine = _own_predictions(tmp_path, RIGHT)
    assert main(_evaluate_args(data_root, mine, tmp_path / "out", "--agent", "x\n| 1 | oracle")) == 2
    assert "line break" in capsys.readouterr().err
    meta = {"agent": "x\n| 1 | oracle", "date": DAY.isoformat(), "served_qid_set_hash": "0" * 64,
            "started_at": "2026-03-03T12:00:00Z"}
    mine.with_name("predictions.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    assert main(_evaluate_args(data_root, mine, tmp_path / "out")) == 2
    assert "line break" in capsys.readouterr().err


# --- findings 1 and 8 on the leaderboard's side: run-folder files read as writable inputs


def test_a_linked_run_file_unranks_that_run_only(data_root: Path) -> None:
    good = _run(data_root, "good", "good", RIGHT)
    linked = _run(data_root, "linked", "linked", RIGHT)
    real = linked.parent / "real-summary.json"
    (linked / SUMMARY_FILE).rename(real)
    (linked / SUMMARY_FILE).symlink_to(real)
    board = build_leaderboard([good, linked], date=DAY.isoformat(), gold_dir=data_root / "gold",
                              served_dir=data_root / "served")
    assert [r.agent for r in board.rows] == ["good"]
    (unranked,) = board.unranked
    assert unranked.run_dir == str(linked) and "symbolic link" in unranked.reason


def test_an_oversized_run_file_unranks_that_run_only(data_root: Path, monkeypatch) -> None:
    from livesearch_pipeline.evaluation import board_runs, outputs

    good = _run(data_root, "good", "good", RIGHT)
    big = _run(data_root, "big", "big", RIGHT)
    (good / SUMMARY_FILE).write_text(json.dumps(json.loads((good / SUMMARY_FILE).read_text())))  # under the bound
    bound = os.path.getsize(big / SUMMARY_FILE) - 1
    monkeypatch.setattr(outputs, "MAX_SUMMARY_BYTES", bound)
    monkeypatch.setattr(board_runs, "MAX_SUMMARY_BYTES", bound)
    board = build_leaderboard([good, big], date=DAY.isoformat(), gold_dir=data_root / "gold",
                              served_dir=data_root / "served")
    assert [r.agent for r in board.rows] == ["good"]
    (unranked,) = board.unranked
    assert unranked.run_dir == str(big) and "bytes, over the" in unranked.reason
