"""Issue 30, case 5 and the writers' rule: every writer (agent run, evaluate) refuses a symlinked
target, a protected folder and a folder another writer holds, before writing anything."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.evaluation.agents.base import PREDICTIONS_FILE
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.inputs import evaluation_inputs
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline_tests.evaluation.agents_fakes import write_served
from livesearch_pipeline_tests.evaluation.eval_fixtures import standard_cases, write_day
from livesearch_pipeline_tests.evaluation.test_agents_baselines import POOL, _served
from livesearch_pipeline_tests.evaluation.test_agents_cli import DAY, _gold

# A Parquet partition: magic bytes, then data with a newline inside (the runner would truncate a
# predictions file to its last complete line).
PARQUET = b"PAR1" + b"\x15\x04" * 200 + b"\n" + b"\x00" * 502 + b"PAR1"


def _stale_argv(tmp_path: Path, out: Path) -> list[str]:
    _gold(tmp_path / "gold", DAY.replace(day=26))
    served = tmp_path / f"served_questions_{DAY}.jsonl"
    write_served(served, _served(POOL))
    return ["agent", "run", "--agent", "stale", "--served", str(served), "--out", str(out),
            "--gold-dir", str(tmp_path / "gold")]


def test_case5_agent_run_never_writes_through_a_symlinked_predictions_file(tmp_path: Path, capsys) -> None:
    partition = tmp_path / "analytics" / "verdicts" / "2026-11-27" / "part-0.parquet"
    partition.parent.mkdir(parents=True)
    partition.write_bytes(PARQUET)
    out = tmp_path / "runs" / "R"
    out.mkdir(parents=True)
    (out / PREDICTIONS_FILE).symlink_to(partition)
    assert main(_stale_argv(tmp_path, out)) == 2
    assert partition.read_bytes() == PARQUET  # not truncated through the link
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{out / PREDICTIONS_FILE} is a symlink" in err and "fix: remove the link" in err
    assert sorted(p.name for p in out.iterdir()) == [PREDICTIONS_FILE]


@pytest.mark.parametrize("folder", ["gold", "served", "pool", "analytics", "cache/llm", "cache/site"])
def test_agent_run_refuses_a_protected_folder(folder: str, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "data" / folder / "run"
    assert main(_stale_argv(tmp_path, out)) == 2
    assert f"is inside {tmp_path / 'data' / folder.split('/')[0]}" in capsys.readouterr().err
    assert not out.exists()


HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from livesearch_pipeline.core.locks import LOCK_FILE, writer_lock
    with writer_lock(Path(sys.argv[1]) / LOCK_FILE, "run folder"):
        print("held", flush=True)
        sys.stdin.read()
""")


def test_evaluate_is_refused_while_another_writer_holds_the_folder(tmp_path: Path) -> None:
    served, gold, predictions = write_day(tmp_path, standard_cases(), {})
    result = evaluate(served, gold, predictions)
    out = tmp_path / "held"
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "held"
        with pytest.raises(EvaluationError, match=r"is already being written by pid \d+"):
            write_evaluation(result, out, inputs=evaluation_inputs(served, gold, predictions))
    finally:
        process.stdin.close()
        process.wait(timeout=30)
    assert sorted(p.name for p in out.iterdir()) == [".writer.lock"]
    write_evaluation(result, out, inputs=evaluation_inputs(served, gold, predictions))
    assert (out / "summary.json").is_file()


def test_evaluate_refuses_a_symlinked_output(tmp_path: Path) -> None:
    served, gold, predictions = write_day(tmp_path, standard_cases(), {})
    result = evaluate(served, gold, predictions)
    victim = tmp_path / "elsewhere.json"
    victim.write_text("{}")
    out = tmp_path / "eval"
    out.mkdir()
    (out / "summary.json").symlink_to(victim)
    with pytest.raises(EvaluationError, match="summary.json is a symlink"):
        write_evaluation(result, out, inputs=evaluation_inputs(served, gold, predictions))
    assert victim.read_text() == "{}"
