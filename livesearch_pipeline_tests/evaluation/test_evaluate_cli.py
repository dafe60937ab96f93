from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline_tests.evaluation.eval_fixtures import (
    CNY2,
    case,
    qid,
    standard_cases,
    write_day,
    write_gold,
    write_served,
)

RIGHT = {qid(1): "1234.56", qid(2): "1.23%", qid(3): "Kunlun Brewing", qid(4): "41"}


def _evaluate_args(files: tuple[Path, Path, Path], out: Path) -> list[str]:
    served, gold, predictions = files
    return ["evaluate", "--served", str(served), "--gold", str(gold), "--predictions", str(predictions), "--out", str(out)]


def test_evaluate_writes_verdicts_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eval"
    assert main(_evaluate_args(write_day(tmp_path, standard_cases(), RIGHT), out)) == 0
    assert "accuracy 75.0% (3/4 scored; 0 withdrawn of 4 served" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["accuracy"] == 0.75 and summary["gold_date"] == "2026-03-03"
    assert len((out / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()) == 4


def test_evaluate_fail_loud_exits_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    served, gold, predictions = write_day(tmp_path, standard_cases(), RIGHT)
    gold.write_bytes(gold.read_bytes().replace(b"1234.56", b"9999.99"))
    out = tmp_path / "eval"
    assert main(_evaluate_args((served, gold, predictions), out)) == 2
    err = capsys.readouterr().err
    assert "livesearch evaluate: error:" in err and "nothing written" in err and str(gold) in err
    assert not out.exists()


def test_leaderboard_command(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    # The gold and served files the runs are scored again against: the configured data root's.
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path))
    files = write_day(tmp_path, standard_cases(), RIGHT)
    assert main(_evaluate_args(files, tmp_path / "eval")) == 0
    assert main(["leaderboard", "--runs", str(tmp_path / "eval"), "--out", str(tmp_path / "board")]) == 0
    out = capsys.readouterr().out
    assert "| 1 | test-agent |" in out
    assert (tmp_path / "board" / "leaderboard.json").is_file()
    assert main(["leaderboard", "--runs", str(tmp_path / "missing"), "--out", str(tmp_path / "b2")]) == 2


def _gold_day(root: Path, date: dt.date, close: float) -> None:
    cases = [case(1, close, f"{close:.2f}", CNY2, unit="CNY", date=date)]
    write_gold(root, [c.gold for c in cases], date)
    write_served(root, cases, date)


def test_audit_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _gold_day(tmp_path, dt.date(2026, 3, 2), 10.0)
    _gold_day(tmp_path, dt.date(2026, 3, 3), 11.0)
    gold_dir = str(tmp_path / "gold")
    assert main(["audit-stale", "--gold-dir", gold_dir, "--date", "2026-03-03", "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "overall: 1/1 failed (100.0%)" in out
    assert (tmp_path / "a" / "stale_gold_audit_2026-03-03.json").is_file()
    assert main(["audit-stale", "--gold-dir", gold_dir, "--date", "2026-03-02"]) == 2
    qids_file = tmp_path / "qids.txt"
    qids_file.write_text(qid(1) + "\n", encoding="utf-8")
    assert main(["audit-longitudinal", "--gold-dir", gold_dir, "--qids-file", str(qids_file),
                 "--start", "2026-03-01", "--end", "2026-03-31"]) == 0
    assert "2026-03-03,11.00" in capsys.readouterr().out


def test_bad_date_argument_is_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["audit-stale", "--gold-dir", "x", "--date", "03/03/2026"])
    assert info.value.code == 2
    assert "not a date" in capsys.readouterr().err


def test_evaluate_as_a_subprocess(tmp_path: Path) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    livesearch = Path(sys.executable).with_name("livesearch")
    completed = subprocess.run(
        [str(livesearch), *_evaluate_args(files, tmp_path / "eval")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "eval" / "summary.json").is_file()
