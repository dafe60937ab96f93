"""What `livesearch refresh | run | build-pool` print: one line per step, Dagster's DEBUG event
stream only with `--verbose`, and every event in the instance's event log either way."""

from __future__ import annotations

import datetime as dt
import io
import re
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.infra.run_console import StepLines, console_run_config
from livesearch_pipeline_tests.defs.refresh.test_backfill_cli import REFRESH_JOB, use_data_root
from livesearch_pipeline_tests.defs.refresh.test_refresh_assets import write_trimmed_pool

DAY = dt.date(2026, 11, 25)
DEBUG_EVENTS = ("RESOURCE_INIT_STARTED", "STEP_OUTPUT", "LOGS_CAPTURED", "STEP_START", "HANDLED_OUTPUT")


def _event_types(root: Path, run_id: str) -> set[str]:
    with dg.DagsterInstance.from_config(str(root / "dagster_home")) as instance:
        return {e.dagster_event.event_type_value for e in instance.all_logs(run_id) if e.dagster_event}


def _run_ids(root: Path) -> list[str]:
    with dg.DagsterInstance.from_config(str(root / "dagster_home")) as instance:
        return [r.run_id for r in reversed(instance.get_runs(filters=dg.RunsFilter(job_name=REFRESH_JOB)))]


def test_a_refresh_prints_its_steps_and_keeps_the_event_stream_for_verbose(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]):
    write_trimmed_pool(tmp_path, per_group=1)
    use_data_root(tmp_path, monkeypatch)
    capfd.readouterr()  # the fixture's pool build (a run of its own, Dagster's default console)

    assert main(["refresh", "--date", DAY.isoformat()]) == 0
    quiet = capfd.readouterr()
    assert not [name for name in DEBUG_EVENTS if name in quiet.err + quiet.out], quiet.err
    assert " - DEBUG - " not in quiet.err
    # One line per step, each closed with its duration; the day's result on stdout.
    lines = quiet.err.splitlines()
    assert lines[0] == f"job daily_refresh for {DAY}"
    for step in ("gold_answers.serve_questions", "gold_checks"):
        assert any(re.fullmatch(rf"  {re.escape(step)} … done in \d+\.\d s", line) for line in lines), (step, lines)
    assert any(re.fullmatch(r"  gold_answers\.freeze_gold_snapshot done in \d+\.\d s", line) for line in lines), lines
    assert "    gold " + DAY.isoformat() in quiet.err  # a step's own progress line
    assert quiet.out.strip().splitlines()[-1].endswith("  written")
    # The stream is not lost: the run's event log holds every DEBUG event (the UI shows them).
    [quiet_run] = _run_ids(tmp_path)
    assert {"RESOURCE_INIT_STARTED", "STEP_OUTPUT", "STEP_START", "STEP_SUCCESS"} <= _event_types(tmp_path, quiet_run)

    assert main(["refresh", "--date", DAY.isoformat(), "--verbose"]) == 0
    verbose = capfd.readouterr()
    assert " - DEBUG - " in verbose.err and "RESOURCE_INIT_STARTED" in verbose.err and "STEP_OUTPUT" in verbose.err
    assert verbose.out.strip().splitlines()[-1].endswith("verified, identical to the frozen snapshot")


def test_step_lines_open_at_the_start_and_close_with_the_duration():
    """The listener on its own, fed the entries a run stores (no run needed)."""
    from dagster._core.events import DagsterEvent, DagsterEventType, EngineEventData, StepFailureData, StepSuccessData

    stream = io.StringIO()
    lines = StepLines(stream=stream)

    def entry(step: str | None, event: DagsterEvent | None = None, message: str = "", level: int = 10):
        return dg.EventLogEntry(error_info=None, level=level, user_message=message, run_id="r", timestamp=0.0,
                                step_key=step, job_name="j", dagster_event=event)

    def event(kind: DagsterEventType, step: str, data=None) -> DagsterEvent:
        return DagsterEvent(event_type_value=kind.value, job_name="j", step_key=step, event_specific_data=data)

    lines(entry("a", event(DagsterEventType.STEP_START, "a")))
    lines(entry("a", event(DagsterEventType.STEP_SUCCESS, "a", StepSuccessData(duration_ms=1234.0))))
    lines(entry("b", event(DagsterEventType.STEP_START, "b")))
    lines(entry("b", message="halfway", level=20))
    lines(entry("b", message="a debug line", level=10))
    lines(entry("b", event(DagsterEventType.ENGINE_EVENT, "b", EngineEventData())))
    lines(entry("b", event(DagsterEventType.STEP_SUCCESS, "b", StepSuccessData(duration_ms=95_000.0))))
    lines(entry("c", event(DagsterEventType.STEP_START, "c")))
    lines(entry("c", event(DagsterEventType.STEP_FAILURE, "c", StepFailureData(error=None, user_failure_data=None))))
    lines(entry(None, message="a run-level line", level=20))
    assert stream.getvalue().splitlines() == [
        "  a … done in 1.2 s",
        "  b …",
        "    halfway",
        "  b done in 1 min 35 s",
        "  c … FAILED",
    ]


def test_the_run_end_ends_an_open_line_and_closes_the_listeners_own_stream():
    from dagster._core.events import DagsterEvent, DagsterEventType

    class Stream(io.StringIO):
        def close(self) -> None:
            self.final = self.getvalue()
            super().close()

    stream = Stream()
    lines = StepLines(stream=stream, close_at_run_end=True)
    lines(dg.EventLogEntry(error_info=None, level=10, user_message="", run_id="r", timestamp=0.0, step_key="a",
                           job_name="j", dagster_event=DagsterEvent(DagsterEventType.STEP_START.value, "j", step_key="a")))
    lines(dg.EventLogEntry(error_info=None, level=10, user_message="", run_id="r", timestamp=0.0, step_key=None,
                           job_name="j", dagster_event=DagsterEvent(DagsterEventType.RUN_SUCCESS.value, "j")))
    assert stream.closed and stream.final == "  a …\n"


def test_the_console_stream_is_a_descriptor_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Dagster's compute-log capture redirects fd 2 while a step runs: the listener's stream must not follow."""
    from livesearch_pipeline.infra.run_console import console_stream

    console = tmp_path / "console.txt"
    with open(console, "w", encoding="utf-8") as real:
        monkeypatch.setattr("sys.stderr", real)
        stream, owned = console_stream()
        assert owned and stream.fileno() != real.fileno()
        stream.write("  step … done in 1.0 s\n")
        stream.close()
    assert console.read_text(encoding="utf-8") == "  step … done in 1.0 s\n"


def test_the_console_threshold_is_run_config_of_the_console_logger():
    ops = {"ops": {"gold_answers": {"config": {"max_withdrawn_share": 0.05}}}}
    assert console_run_config(ops, verbose=False) == {**ops, "loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    assert console_run_config(None, verbose=True) == {"loggers": {"console": {"config": {"log_level": "DEBUG"}}}}
