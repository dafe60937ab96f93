"""What a command-line run of the asset graph prints: one line per step, not Dagster's event stream.

`livesearch run | build-pool | refresh` execute jobs in process. Dagster's console logger would
print every event of those runs (RESOURCE_INIT_STARTED, STEP_OUTPUT, LOGS_CAPTURED, …, logged at
DEBUG), burying the few lines a reader needs. So a command-line run gets run config that sets the
console logger's threshold to WARNING (`--verbose`: DEBUG, the whole stream), and a listener on
the instance that prints one line per step (opened when it starts, closed with its duration), and
the step's own `context.log.info` lines as progress within a long step. The progress goes to
stderr, where Dagster's console logger writes, so that stdout keeps the command's results (the
pool, each day's gold, the leaderboard). The event log is not touched: every event, DEBUG
included, is still stored by the instance and shown in the UI's run view.
"""

from __future__ import annotations

import logging
import os
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping, TextIO

import dagster as dg

QUIET_LOG_LEVEL = "WARNING"
RUN_END_EVENTS = frozenset(t.value for t in (dg.DagsterEventType.RUN_SUCCESS, dg.DagsterEventType.RUN_FAILURE,
                                           dg.DagsterEventType.RUN_CANCELED))
VERBOSE_LOG_LEVEL = "DEBUG"


def console_run_config(run_config: Mapping[str, Any] | None, *, verbose: bool) -> dict[str, Any]:
    """`run_config` with the threshold of the run's console logger (Dagster's default `console`)."""
    level = VERBOSE_LOG_LEVEL if verbose else QUIET_LOG_LEVEL
    return {**(run_config or {}), "loggers": {"console": {"config": {"log_level": level}}}}


@dataclass
class StepLines:
    """An instance event listener printing one line per step: `  <step> … <duration>`.

    The line is opened when the step starts and closed when it finishes, so a step of minutes
    shows what is running meanwhile; a step's own log lines (its progress) print below it and the
    finish then gets a line of its own. Failures are printed by the command (it names the cause);
    here a failed step is only marked."""

    stream: TextIO = field(default_factory=lambda: sys.stderr)
    close_at_run_end: bool = False  # the stream is this listener's own (a duplicate of the console's fd)
    _open: str | None = None  # the step whose line awaits its end

    def __call__(self, entry: dg.EventLogEntry) -> None:
        event, step = entry.dagster_event, entry.step_key
        if event is not None and event.event_type_value in RUN_END_EVENTS:
            self._close()
            if self.close_at_run_end:
                self.stream.close()
            return
        if step is None or self.stream.closed:
            return
        if event is None:
            # A step's own log line (`context.log.info` and above): progress within the step.
            if _level(entry.level) >= logging.INFO and entry.user_message:
                self._line(f"    {entry.user_message}")
            return
        kind = event.event_type_value
        if kind == "STEP_START":
            self._close()
            self.stream.write(f"  {step} …")
            self.stream.flush()
            self._open = step
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE"):
            end = (f"done in {_duration(event.event_specific_data.duration_ms / 1000.0)}"
                   if kind == "STEP_SUCCESS" else "FAILED")
            if self._open == step:
                self._open = None
                self._write(f" {end}\n")
            else:
                self._line(f"  {step} {end}")

    def _close(self) -> None:
        if self._open is not None:
            self._open = None
            self._write("\n")

    def _line(self, text: str) -> None:
        self._close()
        self._write(f"{text}\n")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


def watch_run(instance: dg.DagsterInstance, *, verbose: bool) -> str:
    """A new run id whose steps `StepLines` reports on the console (nothing more with `verbose`:
    Dagster's console logger then prints every event itself). Pass it as the run's `run_id`."""
    run_id = str(uuid.uuid4())
    if not verbose:
        stream, owned = console_stream()
        instance.add_event_listener(run_id, StepLines(stream=stream, close_at_run_end=owned))
    return run_id


def console_stream() -> tuple[TextIO, bool]:
    """The console's stderr as it is now, on a file descriptor of its own, and whether it is ours.

    While a step runs, Dagster's compute-log capture redirects file descriptors 1 and 2 into the
    step's log files and echoes them back through a `tail` process: a line written to `sys.stderr`
    then would reach the console late, out of order, or (at the end of a run) not at all. A
    duplicate of the descriptor, taken before the run starts, still points at the console."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a stream with no descriptor (a test's capture)
        return sys.stderr, False
    encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
    return os.fdopen(os.dup(fd), "w", buffering=1, encoding=encoding, errors="backslashreplace"), True


def _level(level: str | int) -> int:
    return level if isinstance(level, int) else logging.getLevelName(str(level).upper())


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"
