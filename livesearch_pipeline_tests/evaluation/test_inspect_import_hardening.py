"""Issue 30, cases 2, 7, 8 and 9: an Inspect log is the submitter's word. Its import scores against
the gold of the configured data root (never a folder the log names), writes no protected folder,
respects the run folder's writer lock, and reads a bounded log. Each attack is written as the red
team ran it, offline with Inspect's `mockllm/model`."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, get_model  # noqa: E402

from livesearch_pipeline.core.snapshot import SnapshotStore  # noqa: E402
from livesearch_pipeline.evaluation import inspect_import  # noqa: E402
from livesearch_pipeline.evaluation.inspect_import import InspectImportError, import_inspect_log  # noqa: E402
from livesearch_pipeline.evaluation.inspect_task import livesearch  # noqa: E402
from livesearch_pipeline_tests.evaluation.test_inspect_task import DAY, day_dir  # noqa: E402,F401

WRONG = "0.00"


def _always_wrong(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
    return ModelOutput.from_content(model="mockllm", content=f"Final answer: {WRONG}")


@pytest.fixture(scope="module")
def forged(day_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The attacker's folder: the day's served file, and gold rewritten to the log's wrong answers
    under a manifest whose hashes match it."""
    root = tmp_path_factory.mktemp("forged")
    shutil.copytree(day_dir / "served", root / "served")
    _, answers = SnapshotStore(day_dir / "gold").read_verified(DAY)
    forged_answers = [a.model_copy(update={"value": 0.0, "answer": WRONG}) for a in answers]
    SnapshotStore(root / "gold").write(
        DAY, forged_answers, pool_version="test", pool_sha256="0" * 64, data_service="embedded",
        code_version="test", max_withdrawn_share=0.5, cutoff=dt.datetime(2026, 11, 27, 22, tzinfo=dt.timezone.utc))
    return root


@pytest.fixture(scope="module")
def forged_log(forged: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed-book run answering 0.00 everywhere, run against the forged folder (so its metadata
    names it as `data_dir`)."""
    task = livesearch(date=DAY.isoformat(), lang="en", tools="none", data_dir=str(forged))
    model = get_model("mockllm/model", custom_outputs=_always_wrong)
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path_factory.mktemp("logs")), display="none")
    assert log.status == "success", log.error
    assert log.eval.metadata["data_dir"] == str(forged)
    return Path(log.location)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_case2_an_import_scores_against_the_configured_gold_not_the_logs(day_dir: Path, forged_log: Path,  # noqa: F811
                                                                         tmp_path: Path) -> None:
    [run] = import_inspect_log(forged_log, tmp_path / "runs" / "forger", data_root=day_dir)
    summary = run.result.summary
    assert (summary.correct, summary.n_scored) == (0, 2)
    assert Path(summary.gold_file).parent == day_dir / "gold"


def test_case2_the_cli_reads_the_gold_of_livesearch_data_dir(day_dir: Path, forged_log: Path, tmp_path: Path,  # noqa: F811
                                                              monkeypatch, capsys) -> None:
    from livesearch_pipeline.cli import main

    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(day_dir))
    monkeypatch.delenv("LIVESEARCH_JUDGE_MODEL", raising=False)
    out = tmp_path / "runs" / "forger"
    assert main(["agent", "import-inspect", str(forged_log), "--out", str(out)]) == 0
    assert "accuracy 0.0% (0/2)" in capsys.readouterr().out


def test_case8_an_import_into_the_gold_folder_writes_nothing(day_dir: Path, forged_log: Path, monkeypatch,  # noqa: F811
                                                             capsys) -> None:
    from livesearch_pipeline.cli import main

    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(day_dir))
    before = _tree(day_dir / "gold")
    assert main(["agent", "import-inspect", str(forged_log), "--out", str(day_dir / "gold")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{day_dir / 'gold'} is inside {day_dir / 'gold'}" in err and "fix: choose a folder under" in err
    assert _tree(day_dir / "gold") == before
    assert not (day_dir / "gold-zh").exists()


HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from livesearch_pipeline.core.locks import LOCK_FILE, writer_lock
    with writer_lock(Path(sys.argv[1]) / LOCK_FILE, "run folder"):
        print("held", flush=True)
        sys.stdin.read()
""")


@pytest.fixture
def held_folder(tmp_path: Path) -> Iterator[Path]:
    """A run folder whose writer lock another process (an `agent run`) holds."""
    folder = tmp_path / "runs" / "busy"
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "held"
        yield folder
    finally:
        process.stdin.close()
        process.wait(timeout=30)


def test_case7_an_import_is_refused_while_another_writer_holds_the_folder(day_dir: Path, forged_log: Path,  # noqa: F811
                                                                          held_folder: Path) -> None:
    with pytest.raises(InspectImportError, match=r"is already being written by pid \d+ .* wait for that run to finish"):
        import_inspect_log(forged_log, held_folder, data_root=day_dir)
    assert sorted(p.name for p in held_folder.iterdir()) == [".writer.lock"]


def test_an_import_refuses_a_symlinked_predictions_file(day_dir: Path, forged_log: Path, tmp_path: Path) -> None:  # noqa: F811
    victim = tmp_path / "victim.parquet"
    victim.write_bytes(b"PAR1" + b"\0" * 600)
    out = tmp_path / "runs" / "linked"
    out.mkdir(parents=True)
    (out / "predictions.jsonl").symlink_to(victim)
    with pytest.raises(InspectImportError, match="predictions.jsonl is a symlink .*fix: remove the link"):
        import_inspect_log(forged_log, out, data_root=day_dir)
    assert victim.read_bytes() == b"PAR1" + b"\0" * 600


def _inflated(source: Path, target: Path, chars: int) -> Path:
    log = read_eval_log(str(source))
    log.samples[0].messages[0].content = "x" * chars
    write_eval_log(log, str(target))
    return target


def test_case9_a_log_inflating_past_the_sample_limit_is_refused_unread(day_dir: Path, forged_log: Path,  # noqa: F811
                                                                       tmp_path: Path) -> None:
    bomb = _inflated(forged_log, tmp_path / "bomb.eval", 100 * 1024 * 1024)
    assert bomb.stat().st_size < 1024 * 1024  # a small file on disk
    out = tmp_path / "runs" / "bomb"
    with pytest.raises(InspectImportError, match=r"inflates to 100\.\d MiB, above the limit of 8\.0 MiB per sample "
                                                 r"\(MAX_SAMPLE_BYTES\)"):
        import_inspect_log(bomb, out, data_root=day_dir)
    assert not out.exists()


def test_case9_the_log_samples_and_messages_are_bounded(day_dir: Path, forged_log: Path, tmp_path: Path,  # noqa: F811
                                                        monkeypatch) -> None:
    out = tmp_path / "runs" / "bounded"
    monkeypatch.setattr(inspect_import, "MAX_LOG_BYTES", 1024)
    with pytest.raises(InspectImportError, match=r"uncompressed, above the limit of 0\.0 MiB \(MAX_LOG_BYTES\)"):
        import_inspect_log(forged_log, out, data_root=day_dir)
    monkeypatch.undo()
    monkeypatch.setattr(inspect_import, "MAX_MESSAGES_PER_SAMPLE", 1)
    with pytest.raises(InspectImportError, match=r"holds \d+ messages, above the limit of 1 \(MAX_MESSAGES_PER_SAMPLE\)"):
        import_inspect_log(forged_log, out, data_root=day_dir)
    monkeypatch.undo()
    monkeypatch.setattr(inspect_import, "SAMPLES_PER_QUESTION", 0)
    with pytest.raises(InspectImportError, match="more than 0 samples, the limit for the day's served questions"):
        import_inspect_log(forged_log, out, data_root=day_dir)
    assert not (out / "predictions.jsonl").exists() and not (out / "trajectories.jsonl").exists()


def test_without_agent_the_name_built_from_the_logs_metadata_is_checked(day_dir: Path, forged_log: Path,  # noqa: F811
                                                                        tmp_path: Path) -> None:
    """Issue 38, finding 10: the default name `inspect-<tools>-<model>` took the log's `tools` as written,
    line breaks included, into the leaderboard's Markdown."""
    log = read_eval_log(str(forged_log))
    log.eval.metadata["tools"] = "web\n| 1 | oracle | 100.0% |"
    forged_name = tmp_path / "forged-name.eval"
    write_eval_log(log, str(forged_name))
    out = tmp_path / "runs" / "named"
    with pytest.raises(InspectImportError, match="cannot make an agent name; fix: pass --agent NAME"):
        import_inspect_log(forged_name, out, data_root=day_dir)
    assert not out.exists()
    with pytest.raises(InspectImportError, match="line break"):
        import_inspect_log(forged_log, out, data_root=day_dir, agent="mine\n| 1 | oracle")
    [run] = import_inspect_log(forged_log, out, data_root=day_dir, agent="mine")
    assert run.result.summary.agent == "mine"
