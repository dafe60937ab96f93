"""Runs whose worker process died: mark them failed so they stop holding run slots.

`livesearch refresh|run|build-pool` executes jobs in-process, so the run worker is the CLI
process itself. Killed with SIGKILL (or by the OOM killer), it cannot report anything and its run
stays STARTED forever; the queued run coordinator counts such runs against
`max_concurrent_runs`, so two of them stop the daemon from launching anything. Dagster's run
monitoring cannot see these workers (the default run launcher has no worker health check; its
`max_runtime_seconds` catches them only after hours), so every CLI run is tagged with the worker
that runs it (host, pid and the process's start time, which guards against a reused pid), and
this module fails runs whose worker is gone: the CLI does it before each run and a sensor does it
every minute while the daemon runs.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Optional

import dagster as dg
from dagster._core.storage.dagster_run import IN_PROGRESS_RUN_STATUSES, RunsFilter

WORKER_TAG = "livesearch/cli_worker"


def _process_start_ticks(pid: int) -> Optional[str]:
    """The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or None
    when the process does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name (field 2) is in parentheses and may contain spaces: split after it.
    return stat.rsplit(")", 1)[1].split()[19]


def current_worker_tag() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start_ticks(pid) or '?'}"


def worker_is_alive(tag: str, hostname: Optional[str] = None) -> Optional[bool]:
    """True/False for a worker on this host; None when the worker ran on another host (unknowable here)."""
    try:
        host, pid_text, started = tag.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return None
    if host != (hostname or socket.gethostname()):
        return None
    ticks = _process_start_ticks(pid)
    return ticks is not None and (started == "?" or ticks == started)


def fail_orphaned_cli_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark failed every in-progress CLI run of this host whose worker process is gone; their ids."""
    failed = []
    for record in instance.get_run_records(filters=RunsFilter(statuses=IN_PROGRESS_RUN_STATUSES)):
        run = record.dagster_run
        tag = run.tags.get(WORKER_TAG)
        if tag is None or worker_is_alive(tag) is not False:
            continue
        instance.report_run_failed(run, f"the livesearch process that ran this run ({tag}: host, pid, start) is "
                                        f"gone (killed or crashed); run marked failed so it frees its slot")
        failed.append(run.run_id)
    return failed


@dg.sensor(minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Marks failed the command-line runs whose process was killed, so they free their run slots.")
def orphaned_cli_runs(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    failed = fail_orphaned_cli_runs(context.instance)
    return dg.SkipReason(f"marked failed: {', '.join(failed)}" if failed else "no orphaned command-line run")
