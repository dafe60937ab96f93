"""Issue 23, finding 8: the evaluator refuses duplicate keys, non-finite numbers anywhere in a
line, a missing predictions meta, and any --out inside data/gold, data/served or data/pool."""

from __future__ import annotations

from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline_tests.evaluation.eval_fixtures import qid, standard_cases, write_day

RIGHT = {qid(1): "1234.56", qid(2): "1.23%", qid(3): "Kunlun Brewing", qid(4): "42"}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LIVESEARCH_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path))


def _evaluate_cli(files, out: Path) -> int:
    served, gold, predictions = files
    return main(["evaluate", "--served", str(served), "--gold", str(gold), "--predictions", str(predictions),
                 "--out", str(out)])


def test_a_duplicated_answer_key_is_refused_not_scored_by_its_last_value(tmp_path: Path) -> None:
    files = write_day(tmp_path, standard_cases(), {qid(1): "1234.56"})
    predictions = files[2]
    # Last key wins in a lenient parser: the wrong answer first, the gold's second.
    predictions.write_text(f'{{"qid":"{qid(2)}","answer":"wrong","answer":"1.23%"}}\n', encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"predictions.jsonl: 1 prediction line\(s\) are not strict JSON — "
                                              r"line 1: key 'answer' appears twice"):
        evaluate(*files)


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e999"])
def test_a_non_finite_number_inside_the_trace_is_refused(tmp_path: Path, number: str) -> None:
    files = write_day(tmp_path, standard_cases(), {})
    files[2].write_text(f'{{"qid":"{qid(1)}","answer":"1234.56","trace":[{{"score":{number}}}]}}\n', encoding="utf-8")
    with pytest.raises(EvaluationError, match="line 1: (non-finite number|number 1e999 is not finite)"):
        evaluate(*files)


def test_a_missing_predictions_meta_is_refused(tmp_path: Path, capsys) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    (files[2].parent / "predictions.meta.json").unlink()
    assert _evaluate_cli(files, tmp_path / "eval") == 2
    err = capsys.readouterr().err
    assert "predictions.meta.json is missing" in err and not (tmp_path / "eval").exists()


@pytest.mark.parametrize("inside", ["gold", "served", "pool", "gold/sub", "cache/llm/ab"])
def test_an_out_inside_the_gold_served_or_pool_folder_is_refused(tmp_path: Path, capsys, inside: str) -> None:
    files = write_day(tmp_path, standard_cases(), RIGHT)
    before = sorted(p.name for p in (tmp_path / "gold").iterdir())
    assert _evaluate_cli(files, tmp_path / inside) == 2
    err = capsys.readouterr().err
    assert f"is inside {tmp_path / inside.split('/')[0]}" in err and "nothing written" in err
    assert sorted(p.name for p in (tmp_path / "gold").iterdir()) == before
    assert not (tmp_path / inside / "summary.json").exists()


def test_a_gold_folder_outside_the_data_root_is_protected_too(tmp_path: Path, monkeypatch, capsys) -> None:
    files = write_day(tmp_path / "elsewhere", standard_cases(), RIGHT)
    assert _evaluate_cli(files, files[1].parent) == 2
    assert "holds the benchmark's gold" in capsys.readouterr().err
    assert _evaluate_cli(files, tmp_path / "eval") == 0
