"""Scoring your own predictions (issue 28): `evaluate --agent` writes the missing run metadata, and a
Chinese answer is scored at the Chinese text's precision through the evaluator."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.core.models import MatchRule, PredictionRunMeta
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.evaluation.own_run import OWN_HARNESS
from livesearch_pipeline_tests.evaluation.eval_fixtures import case, qid, standard_cases, write_gold, write_served

# The predictions file's modification time: what started_at records (the run's start is unknown).
WRITTEN = dt.datetime(2026, 3, 3, 21, 30, tzinfo=dt.timezone.utc)
MILLION_CNY = MatchRule(rule="approx", unit="million CNY", decimals=2, unit_zh="万元", decimals_zh=2)


def _own_day(root: Path, answers: list[dict[str, str]]) -> tuple[Path, Path, Path]:
    cases = [*standard_cases(), case(5, 2459.9521, "2459.95", MILLION_CNY, unit="million CNY", zh=True)]
    served = write_served(root, cases)
    gold = write_gold(root, [c.gold for c in cases])
    predictions = root / "mine" / "predictions.jsonl"
    predictions.parent.mkdir()
    predictions.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8")
    os.utime(predictions, (WRITTEN.timestamp(), WRITTEN.timestamp()))
    return served, gold, predictions


def _args(files: tuple[Path, Path, Path], out: Path, *extra: str) -> list[str]:
    served, gold, predictions = files
    return ["evaluate", "--served", str(served), "--gold", str(gold), "--predictions", str(predictions),
            "--out", str(out), *extra]


ANSWERS = [
    {"qid": qid(1), "answer": "1234.56", "lang": "en"},
    {"qid": qid(2), "answer": "1.23%"},
    {"qid": qid(5), "answer": "245995.21", "lang": "zh"},
]


def test_evaluate_with_agent_writes_the_run_metadata_and_scores(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    files = _own_day(tmp_path, ANSWERS)
    meta_path = files[2].with_name("predictions.meta.json")
    assert main(_args(files, tmp_path / "eval")) == 2
    err = capsys.readouterr().err
    assert "predictions.meta.json is missing" in err and "add --agent NAME" in err
    assert not meta_path.exists() and not (tmp_path / "eval").exists()

    assert main(_args(files, tmp_path / "eval", "--agent", "my-agent", "--model", "acme/model-1")) == 0
    out = capsys.readouterr().out
    assert "my-agent on 2026-03-03: accuracy 60.0% (3/5 scored" in out and f"wrote {meta_path}" in out
    meta = PredictionRunMeta.model_validate_json(meta_path.read_bytes())
    served_qids = [json.loads(line)["qid"] for line in files[0].read_text(encoding="utf-8").splitlines()]
    assert meta == PredictionRunMeta(agent="my-agent", model="acme/model-1", date=dt.date(2026, 3, 3),
                                     served_qid_set_hash=qid_set_hash(served_qids), started_at=WRITTEN,
                                     harness=OWN_HARNESS)
    summary = json.loads((tmp_path / "eval" / "summary.json").read_text(encoding="utf-8"))
    assert (summary["agent"], summary["model"], summary["correct"]) == ("my-agent", "acme/model-1", 3)

    # Run again: the metadata now there names the same agent and is used as it is.
    written = meta_path.read_bytes()
    assert main(_args(files, tmp_path / "eval2", "--agent", "my-agent")) == 0
    assert meta_path.read_bytes() == written
    # ... another agent's name is refused, and the file kept.
    assert main(_args(files, tmp_path / "eval3", "--agent", "other")) == 2
    assert "already names agent 'my-agent'" in capsys.readouterr().err
    assert meta_path.read_bytes() == written and not (tmp_path / "eval3").exists()


def test_evaluate_with_agent_writes_nothing_when_the_evaluation_fails(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    files = _own_day(tmp_path, [*ANSWERS, {"qid": qid(9), "answer": "1"}])
    assert main(_args(files, tmp_path / "eval", "--agent", "my-agent")) == 2
    err = capsys.readouterr().err
    assert "unknown (not served) 1 qid(s): ls-0000000000000009" in err and "nothing written" in err
    assert not files[2].with_name("predictions.meta.json").exists() and not (tmp_path / "eval").exists()
    assert main(_args(files, tmp_path / "eval", "--model", "acme/model-1")) == 2
    assert "give --agent too" in capsys.readouterr().err
    assert main(_args(files, tmp_path / "eval", "--agent", " padded")) == 2
    assert "--agent ' padded' has blanks around it" in capsys.readouterr().err


@pytest.mark.parametrize(("answer", "lang", "correct"), [
    ("245995.21", "zh", True),  # 万元 at 2 decimals, as the Chinese text asks
    ("245995.61", "zh", False),  # 0.40 万元 off: within the English 0.005 million, not the Chinese 0.005 万元
    ("2459.95", "en", True),  # the English text's million CNY at 2 decimals
    ("2459.96", "en", False),
])
def test_the_evaluator_scores_each_language_at_its_own_precision(tmp_path: Path, answer: str, lang: str,
                                                                 correct: bool) -> None:
    files = _own_day(tmp_path, [{"qid": qid(5), "answer": answer, "lang": lang}])
    assert main(_args(files, tmp_path / "eval", "--agent", "my-agent")) == 0
    verdicts = [json.loads(line) for line in (tmp_path / "eval" / "verdicts.jsonl").read_text().splitlines()]
    (verdict,) = [v for v in verdicts if v["qid"] == qid(5)]
    assert verdict["correct"] is correct, verdict["reason"]
    if lang == "zh":
        assert "万元" in verdict["reason"]
