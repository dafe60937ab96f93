"""benchmarks/soak.py: its simulated clock drives the real daemon, its calendar of days, its verdicts.

The soak itself (30 trading days, hours) is a benchmark, not a test (docs/benchmarks.md). Here its
parts: the clock file the daemon reads, the days it walks through, the summary's targets, and the
real `dagster-daemon` under the simulated clock ticking the refresh schedule at simulated 18:30s
(skipping a Saturday with its reason, requesting Monday's partition), in a minute or two.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "soak.py"
NEW_YORK = dt.timezone(dt.timedelta(hours=-5))  # EST in late November


@pytest.fixture(scope="module")
def soak():
    spec = importlib.util.spec_from_file_location("soak_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_the_simulated_clock_starts_where_it_is_set_and_runs_at_the_real_rate(soak, tmp_path: Path):
    path = tmp_path / "clock"
    instant = dt.datetime(2026, 11, 27, 18, 29, 50, tzinfo=NEW_YORK)
    soak.set_clock(path, instant)
    clock = soak.SimulatedClock(path)
    assert 0 <= clock.timestamp() - instant.timestamp() < 1.0
    time.sleep(0.5)
    assert 0.4 <= clock.timestamp() - instant.timestamp() < 1.5
    later = instant + dt.timedelta(days=3)
    soak.set_clock(path, later)
    time.sleep(0.3)  # the clock re-reads its file at most every 0.2 s
    assert 0 <= clock.datetime().timestamp() - later.timestamp() < 1.0
    assert clock.datetime().tzinfo is not None


def test_the_soak_walks_every_calendar_day_up_to_its_last_trading_day(soak):
    days = soak.soak_days(dt.date(2026, 11, 27), 2)
    assert [d.isoformat() for d in days] == ["2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30"]
    assert len([d for d in soak.soak_days(dt.date(2026, 10, 26), 30)]) == 40  # six weeks, 30 trading days


def _day(soak, n: int, loop_s: float, **changes):
    figures = soak.DayFigures(day=(dt.date(2026, 11, 2) + dt.timedelta(days=n)).isoformat(), trading=True,
                              loop_s=loop_s, cpu_s=loop_s / 2, daemon_fds=20, code_server_fds=30,
                              disk_added={"gold": 2**20, "web": 270 * 2**20})
    for key, value in changes.items():
        setattr(figures, key, value)
    return figures


def test_the_summary_judges_the_issues_targets(soak):
    flat = [_day(soak, n, 100.0 + n) for n in range(10)]
    verdict = soak.summary(flat, [])
    assert all(verdict["targets"].values()), verdict["targets"]
    assert verdict["disk_per_trading_day_total_mib"] == 271.0 and verdict["trading_days_2027"] == 260
    slower = [_day(soak, n, 100.0 if n < 5 else 130.0) for n in range(10)]
    assert not soak.summary(slower, [])["targets"]["loop time flat (last 5 / first 5 <= 1.2)"]
    leaking = flat[:-1] + [_day(soak, 9, 109.0, daemon_fds=40, processes_left=["123 python -m forkserver"])]
    targets = soak.summary(leaking, ["456 tail -F"])["targets"]
    assert not targets["no process left"] and not targets["no handle leaked (fds of the last day <= first day's + 10)"]
    quiet = flat[:-1] + [_day(soak, 9, 109.0, ticks={"analytics_store_sensor": {"ticks": 3, "empty": 1}})]
    assert not soak.summary(quiet, [])["targets"]["no tick with an empty result"]


def _schedule_ticks(instance, after: float):
    for state in instance.all_instigator_state():
        if state.instigator_name == "daily_refresh_schedule":
            return [t for t in instance.get_ticks(state.instigator_origin_id, state.selector_id, after=after)
                    if t.status.value in ("SUCCESS", "SKIPPED", "FAILURE")]
    return []


def _wait_for_tick(instance, after: float, daemon: subprocess.Popen, log: Path, timeout_s: float = 240.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert daemon.poll() is None, log.read_text()[-3000:]
        ticks = _schedule_ticks(instance, after)
        if ticks:
            return ticks[0]
        time.sleep(1.0)
    raise AssertionError(f"no tick of daily_refresh_schedule after {after}\n{log.read_text()[-3000:]}")


@pytest.mark.slow
def test_the_real_daemon_ticks_the_refresh_schedule_at_simulated_times(soak, tmp_path: Path):
    home, data, clock = tmp_path / "dagster_home", tmp_path / "data", tmp_path / "clock"
    home.mkdir()
    data.mkdir()
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIVESEARCH_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(home), LIVESEARCH_DATA_DIR=str(data), PYTHONPATH=str(REPO))
    saturday = dt.datetime(2026, 11, 28, 18, 29, 56, tzinfo=NEW_YORK)
    # The daemon starts a schedule that is on by default at its first look, at its clock: noon, so
    # that the evening's tick comes after the start whatever the time the code location takes to load.
    soak.set_clock(clock, saturday.replace(hour=12, minute=0))
    log = tmp_path / "daemon.log"
    with open(log, "wb") as out:
        daemon = subprocess.Popen([sys.executable, str(SCRIPT), "--clocked", str(clock), "dagster-daemon", "run", "-w",
                                   str(REPO / "workspace.yaml")], cwd=tmp_path, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            deadline = time.monotonic() + 240
            while "daily_refresh_schedule" not in {s.instigator_name for s in instance.all_instigator_state()}:
                assert daemon.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(1.0)
            soak.set_clock(clock, saturday)
            skipped = _wait_for_tick(instance, saturday.timestamp(), daemon, log)
            assert skipped.status.value == "SKIPPED"
            assert skipped.skip_reason == ("nothing to refresh at this tick: 2026-11-28 is no trading day (no session "
                                           "in XSHG, XHKG or XNYS): the previous trading day is 2026-11-27, the next "
                                           "is 2026-11-30")
            monday = dt.datetime(2026, 11, 30, 18, 29, 57, tzinfo=NEW_YORK)
            soak.set_clock(clock, monday)
            requested = _wait_for_tick(instance, monday.timestamp(), daemon, log)
            assert requested.status.value == "SUCCESS" and len(requested.run_ids) == 1
            run = instance.get_run_by_id(requested.run_ids[0])
            assert run.job_name == "daily_refresh" and run.tags["dagster/partition"] == "2026-11-30"
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(daemon.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
