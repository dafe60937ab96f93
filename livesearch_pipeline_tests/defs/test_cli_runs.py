"""Command-line runs as an operator meets them: a killed run frees its slot, two refreshes of one
day report "written" once, a failure's last line names its cause.

The `livesearch` processes here are real subprocesses sharing one data root and one SQLite
instance, as two shells on one machine would.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage.dagster_run import DagsterRunStatus

from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.defs.run_hygiene import WORKER_TAG, fail_orphaned_cli_runs, worker_is_alive
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.refresh.test_refresh_assets import SERVICE_CLOCK, write_trimmed_pool

DAY = dt.date(2026, 11, 25)
REPO = Path(__file__).resolve().parents[2]


def cli_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIVESEARCH_")}
    env.update(LIVESEARCH_DATA_DIR=str(root), DAGSTER_HOME=str(root / "dagster_home"),
               LIVESEARCH_CLOCK=SERVICE_CLOCK, LITELLM_OFFLINE_MODE="true", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


def livesearch(root: Path, *args: str, new_session: bool = False) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "livesearch_pipeline.cli", *args], cwd=REPO, env=cli_env(root),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=new_session)


def prepare_instance(root: Path) -> None:
    """Create the instance's storage once, as the first `livesearch` command would, before several
    processes use it (SQLite schema creation is not safe to race)."""
    home = root / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)):
        pass


def runs(root: Path) -> list[dg.DagsterRun]:
    with dg.DagsterInstance.from_config(str(root / "dagster_home")) as instance:
        return instance.get_runs()


def sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])


def tag_of(process: subprocess.Popen) -> str:
    import socket

    from livesearch_pipeline.defs.run_hygiene import _process_start_ticks

    return f"{socket.gethostname()}:{process.pid}:{_process_start_ticks(process.pid)}"


def test_a_started_run_whose_process_is_gone_is_marked_failed_and_a_live_one_is_left_alone():
    alive, dead = sleeper(), sleeper()
    try:
        instance = dg.DagsterInstance.ephemeral()
        tags = {"alive": tag_of(alive), "dead": tag_of(dead)}
        for name, tag in tags.items():
            instance.add_run(dg.DagsterRun(job_name="daily_refresh", run_id=f"run-{name}",
                                           status=DagsterRunStatus.STARTED, tags={WORKER_TAG: tag}))
        instance.add_run(dg.DagsterRun(job_name="daily_refresh", run_id="run-daemon", status=DagsterRunStatus.STARTED))
        dead.kill()
        dead.wait()
        assert worker_is_alive(tags["dead"]) is False and worker_is_alive(tags["alive"]) is True
        # A reused pid with another start time is not the worker either.
        host, pid, _ = tags["alive"].rsplit(":", 2)
        assert worker_is_alive(f"{host}:{pid}:1") is False
        assert worker_is_alive(f"another-host:{pid}:1") is None

        assert fail_orphaned_cli_runs(instance) == ["run-dead"]

        assert instance.get_run_by_id("run-dead").status == DagsterRunStatus.FAILURE
        assert instance.get_run_by_id("run-alive").status == DagsterRunStatus.STARTED
        assert instance.get_run_by_id("run-daemon").status == DagsterRunStatus.STARTED
        assert fail_orphaned_cli_runs(instance) == []
    finally:
        alive.kill()
        alive.wait()


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.mark.slow
def test_a_killed_refresh_is_marked_failed_by_the_next_command_which_then_succeeds(tmp_path: Path):
    write_trimmed_pool(tmp_path, per_group=1)
    prepare_instance(tmp_path)
    # Its own process group, killed whole: the in-process run's compute-log capture starts a
    # `tail -F` child that holds the output pipes and would outlive a kill of the CLI alone.
    killed = livesearch(tmp_path, "refresh", "--date", DAY.isoformat(), new_session=True)
    try:
        wait_for(lambda: any(r.status == DagsterRunStatus.STARTED for r in runs(tmp_path)), 120, "a started run")
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.communicate(timeout=60)
    (stuck,) = runs(tmp_path)
    assert stuck.status == DagsterRunStatus.STARTED  # nothing could report its end

    again = livesearch(tmp_path, "refresh", "--date", DAY.isoformat())
    out, err = again.communicate(timeout=300)

    assert again.returncode == 0, err[-3000:]
    assert f"marked run {stuck.run_id} failed" in err
    by_id = {r.run_id: r for r in runs(tmp_path)}
    assert by_id[stuck.run_id].status == DagsterRunStatus.FAILURE
    assert SnapshotStore(DataPaths(tmp_path).gold).exists(DAY)


@pytest.mark.slow
def test_two_concurrent_refreshes_of_one_day_report_written_once_and_verified_once(tmp_path: Path):
    write_trimmed_pool(tmp_path, per_group=1)
    prepare_instance(tmp_path)
    first, second = (livesearch(tmp_path, "refresh", "--date", DAY.isoformat()) for _ in range(2))
    outputs = [p.communicate(timeout=300) for p in (first, second)]

    assert [p.returncode for p in (first, second)] == [0, 0], [err[-2000:] for _, err in outputs]
    lines = [out.strip().splitlines()[-1] for out, _ in outputs]
    assert sum(line.endswith("  written") for line in lines) == 1, lines
    assert sum(line.endswith("verified, identical to the frozen snapshot") for line in lines) == 1, lines
    assert SnapshotStore(DataPaths(tmp_path).gold).verify(DAY).records > 0


@pytest.mark.slow
def test_a_failed_refresh_names_its_cause_on_the_last_line(tmp_path: Path):
    write_trimmed_pool(tmp_path, per_group=1)
    failed = livesearch(tmp_path, "refresh", "--date", "2026-11-30")  # after the service's clock
    _, err = failed.communicate(timeout=300)

    assert failed.returncode != 0
    last = err.strip().splitlines()[-1]
    assert last.startswith("job daily_refresh for 2026-11-30 failed (run "), last
    assert f"partition 2026-11-30 is after the data service's fixed clock {SERVICE_CLOCK}" in last
    assert "Traceback" not in err
