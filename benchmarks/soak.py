"""Soak benchmark: the daily loop driven by the schedule and the daemon for N consecutive trading days.

    python benchmarks/soak.py [--days 30] [--first 2026-10-26] [--pool-from DATA] [--work DIR] [--json FILE]

What runs is what production runs, with one difference: the clock. A fresh data root and a fresh
Dagster instance (the repository's `dagster.yaml`) under --work; the pool built by the construction
assets as of the trading day before --first (or copied from --pool-from, a data root holding
`pool/` and `construction/`); the gold of that day frozen by `livesearch refresh`, so the first
day's stale baseline and stale-gold audit have a previous snapshot, as on any later day. Then the
real `dagster-daemon run -w workspace.yaml` (its code server, run launcher, run queue, schedules,
sensors, automation and backfill daemons), started from this script in a process group of its own
with a **simulated clock**: Dagster's time functions (`dagster._time`, which its scheduler, sensor,
automation and backfill daemons read) return a time the script sets and that then runs at the real
rate. The script advances it day by day, through weekends and holidays, to 18:29:50 New York time
of each day (and 05:59:50 on Saturdays, before the weekly stage-2 pool refresh): the schedule ticks,
`daily_refresh` freezes the day's gold, the automation builds the day's web, runs every registered
agent, ranks them, audits stale gold and publishes the site, the store's sensor derives the
Parquet partitions, and the script waits until nothing is queued or running and no new run has
appeared for a quiet period. Runs themselves execute at the real time (their partitions are past
days); nothing they compute depends on the wall clock.

Per day it reports: the loop's wall time (the tick to the end of the day's last run) and the CPU
seconds of the daemon's process group (sampled from /proc every second), the runs (and failed
ones), the disk each folder of the data root and the Dagster home added, the withdrawn share of the
day's gold, the pool's version and size and how many served questions changed from the day
before, the peak resident memory (largest process, and the group's total), open file
descriptors and threads of the daemon and its code server, processes left in the group once the
day settled (beyond the daemon and its code server), and every schedule and sensor tick of the
day: how many, and how many said nothing ("Sensor function returned an empty result" or a skip
without a reason). Targets (issue 42): run time per day flat (mean of the last 5 days within 1.2x
of the first 5), 0 open handles or processes leaked, 0 ticks with an empty result.

The web of every day is built in full (about 90,000 pages, the heaviest stage), as production
does. Expect 5-10 minutes per day on 2 shared cores: run it with nohup.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this repository's code, whatever package the environment has installed
NEW_YORK = ZoneInfo("America/New_York")
DEFAULT_FIRST = dt.date(2026, 10, 26)  # 30 trading days end on 2026-12-04, make run's day
TICK_TIME, POOL_REFRESH_TIME = dt.time(18, 29, 50), dt.time(5, 59, 50)
# A day has settled when nothing is queued or running and no run appeared for this long: longer than
# the sensors' intervals (the store's 30 s, the site's automation 60 s) plus a run's start.
QUIET_S = 90.0
DAY_TIMEOUT_S = 3600.0
EMPTY_TICK = "Sensor function returned an empty result"


# --------------------------------------------------------------------------- the daemon's clock


class SimulatedClock:
    """Now = the simulated instant last set + the real time elapsed since; read from a file the
    driver writes ("<simulated unix time> <real unix time when set>"), re-read when it changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._base = (time.time(), time.time())
        self._stamp = None
        self._checked = 0.0

    def timestamp(self) -> float:
        real = time.time()
        if real - self._checked > 0.2:
            self._checked = real
            try:
                stamp = self.path.stat().st_mtime_ns
                if stamp != self._stamp:
                    simulated, set_at = map(float, self.path.read_text().split())
                    self._base, self._stamp = (simulated, set_at), stamp
            except (OSError, ValueError):
                pass
        return self._base[0] + (real - self._base[1])

    def datetime(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.timestamp(), dt.timezone.utc)


def set_clock(path: Path, instant: dt.datetime) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(f"{instant.timestamp()} {time.time()}")
    os.replace(temporary, path)


def clocked_main(clock_file: str, program: str, args: list[str]) -> int:
    """`dagster-daemon …` or `dagster …` with Dagster's clock replaced by the simulated one (in this
    process only: the daemon's code server and the runs it launches keep the real time)."""
    import dagster._time as dagster_time

    clock = SimulatedClock(Path(clock_file))
    dagster_time._mockable_get_current_timestamp = clock.timestamp
    dagster_time._mockable_get_current_datetime = clock.datetime
    if program == "dagster-daemon":
        from dagster._daemon.cli import main
    else:
        from dagster._cli import main
    sys.argv = [program, *args]
    main()
    return 0


# --------------------------------------------------------------------------- processes


def _stat(pid: int) -> tuple[int, int, float] | None:
    """(process group, RSS KiB, CPU seconds) of a live process, None when gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    rss = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return int(fields[2]), rss, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def group_members(pgid: int) -> dict[int, tuple[int, float]]:
    """pid -> (RSS KiB, CPU s) of the live members of a process group."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[0] == pgid:
                found[int(entry)] = stat[1:]
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:160]
    except OSError:
        return "?"


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


def handles(pid: int) -> tuple[int, int]:
    """(open file descriptors, threads) of a process; (-1, -1) when it is gone."""
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        threads = len(os.listdir(f"/proc/{pid}/task"))
        return fds, threads
    except OSError:
        return -1, -1


class GroupSampler:
    """Every second: the group's members, the largest RSS of one process and of the group, and the
    CPU seconds each member used (the last sample of a process that exits between samples is
    its last known total, so up to a second of its CPU time can be missed)."""

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid
        self._cpu: dict[int, float] = {}
        self.reset()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-sampler", daemon=True)
        self._thread.start()

    def reset(self) -> None:
        self.peak_process_kib = self.peak_total_kib = 0
        self._cpu_at_reset = sum(self._cpu.values())

    @property
    def cpu_s(self) -> float:
        return sum(self._cpu.values()) - self._cpu_at_reset

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            members = group_members(self.pgid)
            if members:
                self.peak_process_kib = max(self.peak_process_kib, max(rss for rss, _ in members.values()))
                self.peak_total_kib = max(self.peak_total_kib, sum(rss for rss, _ in members.values()))
            for pid, (_, cpu) in members.items():
                self._cpu[pid] = max(cpu, self._cpu.get(pid, 0.0))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


# --------------------------------------------------------------------------- disk


def folder_bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def disk_usage(data: Path, home: Path) -> dict[str, int]:
    """Bytes per top-level folder of the data root (files at its top level as `(files)`) and the Dagster home."""
    usage = {"dagster_home": folder_bytes(home)}
    for entry in sorted(data.iterdir()):
        if entry.resolve() == home.resolve():
            continue
        usage[entry.name if entry.is_dir() else "(files)"] = usage.get(entry.name if entry.is_dir() else "(files)", 0) + (
            folder_bytes(entry) if entry.is_dir() else entry.stat().st_size)
    return usage


# --------------------------------------------------------------------------- the instance


def busy(instance) -> bool:
    import dagster as dg
    from dagster._core.execution.backfill import BulkActionStatus, BulkActionsFilter

    active = instance.get_run_records(dg.RunsFilter(statuses=[
        dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
        dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]), limit=1)
    backfills = instance.get_backfills(filters=BulkActionsFilter(statuses=[BulkActionStatus.REQUESTED,
                                                                        BulkActionStatus.CANCELING]), limit=1)
    return bool(active or backfills)


def new_run_records(instance, seen: set[str]):
    """The records of the runs not in `seen` (run ids). Runs are told apart by id, never by their
    creation time: the daemon creates them at the simulated time, the database stamps the real one."""
    return [r for r in instance.get_run_records() if r.dagster_run.run_id not in seen]


def ticks_between(instance, after: float, before: float) -> dict[str, dict[str, int]]:
    """Per schedule and sensor: ticks in [after, before) of the simulated clock, by status, and the
    ticks that said nothing (`empty`: Dagster's "Sensor function returned an empty result", or a
    skip without a reason). An automation sensor's tick has no function and no reason: it records
    what it evaluated per asset (the asset's Automation tab), and only when an asset's result
    changed; its ticks are counted as `requested` (runs), `evaluated` (records) or `unchanged`."""
    import dagster as dg
    from dagster._core.definitions.sensor_definition import SensorType

    from livesearch_pipeline.definitions import defs

    # The automation sensors by their definitions: an instigator state written by the daemon need
    # not record its sensor type (the soak of 2026-12-05 counted their 70 skipped ticks as empty).
    automation_sensors = {s.name for s in defs.sensors or () if isinstance(s, dg.AutomationConditionSensorDefinition)}
    summary: dict[str, dict[str, int]] = {}
    for state in instance.all_instigator_state():
        ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id, after=after, before=before)
        if not ticks:
            continue
        automation = (getattr(state.instigator_data, "sensor_type", None) == SensorType.AUTOMATION
                      or state.instigator_name in automation_sensors)
        entry = summary.setdefault(state.instigator_name, {"ticks": 0, "empty": 0})
        for tick in ticks:
            entry["ticks"] += 1
            status = tick.status.value.lower()
            entry[status] = entry.get(status, 0) + 1
            reason = (tick.skip_reason or "").strip()
            if automation:
                evaluations = instance.schedule_storage.get_auto_materialize_evaluations_for_evaluation_id(
                    tick.automation_condition_evaluation_id)
                kind = "requested" if tick.run_ids or status == "success" else "evaluated" if evaluations else "unchanged"
                entry[kind] = entry.get(kind, 0) + 1
            elif status == "skipped" and (not reason or reason == EMPTY_TICK):
                entry["empty"] += 1
                examples = entry.setdefault("empty_examples", [])
                if len(examples) < 2:
                    examples.append(reason or "(no reason)")
    return summary


def retally(work: Path, figures_file: Path) -> int:
    """Recount the ticks of every day of a finished soak (its --json) from its instance under `work`."""
    figures = json.loads(figures_file.read_text())
    os.environ["DAGSTER_HOME"] = str(work / "data" / "dagster_home")
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        for day in figures["days"]:
            d = dt.date.fromisoformat(day["day"])
            day["ticks"] = ticks_between(
                instance, dt.datetime.combine(d, dt.time(0, 0), tzinfo=NEW_YORK).timestamp(),
                dt.datetime.combine(d + dt.timedelta(days=1), dt.time(0, 0), tzinfo=NEW_YORK).timestamp())
    empty = sum(t["empty"] for day in figures["days"] for t in day["ticks"].values())
    figures["summary"]["empty_ticks"] = empty
    figures["summary"]["targets"]["no tick with an empty result"] = empty == 0
    figures_file.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"{sum(t['ticks'] for day in figures['days'] for t in day['ticks'].values())} ticks, {empty} empty")
    return 0


def materialized(instance, asset: str, partition: str) -> float | None:
    """Timestamp of the latest materialisation of `asset` for `partition`, or None."""
    import dagster as dg

    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition]), limit=1).records
    return records[0].timestamp if records else None


# --------------------------------------------------------------------------- one day


@dataclass
class DayFigures:
    day: str
    trading: bool
    loop_s: float = 0.0
    cpu_s: float = 0.0
    runs: int = 0
    failed_runs: list[str] = field(default_factory=list)
    disk_added: dict[str, int] = field(default_factory=dict)
    withdrawn_share: float | None = None
    pool_version: str = ""
    pool_questions: int = 0
    served_added: int = 0
    served_removed: int = 0
    peak_rss_process_mib: float = 0.0
    peak_rss_total_mib: float = 0.0
    daemon_fds: int = 0
    daemon_threads: int = 0
    code_server_fds: int = 0
    code_server_threads: int = 0
    processes_left: list[str] = field(default_factory=list)
    helpers: int = 0
    ticks: dict[str, dict] = field(default_factory=dict)
    complete: bool = True
    note: str = ""

    @property
    def empty_ticks(self) -> int:
        return sum(t["empty"] for t in self.ticks.values())


class Soak:
    def __init__(self, work: Path, env: dict[str, str], agents: tuple[str, ...]) -> None:
        self.work, self.env, self.agents = work, env, agents
        self.data, self.home = Path(env["LIVESEARCH_DATA_DIR"]), Path(env["DAGSTER_HOME"])
        self.clock_file = work / "clock"
        self.daemon: subprocess.Popen | None = None
        self.baseline: set[int] = set()
        self.previous_served: set[str] = set()
        self.seen_runs: set[str] = set()

    # -- the daemon

    def start_daemon(self, first_instant: dt.datetime) -> None:
        set_clock(self.clock_file, first_instant)
        log = open(self.work / "daemon.log", "ab")
        self.daemon = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--clocked", str(self.clock_file), "dagster-daemon",
             "run", "-w", str(REPO / "workspace.yaml")],
            cwd=self.work, env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.sampler = GroupSampler(self.daemon.pid)

    def stop_daemon(self) -> list[str]:
        """SIGTERM to the daemon, then what is left of its group; what survived 30 s (killed)."""
        if self.daemon is None:
            return []
        self.daemon.send_signal(signal.SIGTERM)
        try:
            self.daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + 30
        while group_members(self.daemon.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = [f"{pid} {command_line(pid)}" for pid in group_members(self.daemon.pid)]
        try:
            os.killpg(self.daemon.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.sampler.stop()
        return left

    def code_servers(self) -> list[int]:
        members = group_members(self.daemon.pid)
        return [pid for pid in members if pid != self.daemon.pid and "grpc" in command_line(pid)]

    def wait_until_ready(self, instance, timeout_s: float = 600.0) -> None:
        """The daemon's code server is up and the registry sensor has added every agent's partition."""
        from livesearch_pipeline.evaluation.registry import AGENT_PARTITIONS_NAME

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                raise SystemExit(f"the daemon exited with {self.daemon.returncode}; see {self.work / 'daemon.log'}")
            if set(self.agents) <= set(instance.get_dynamic_partitions(AGENT_PARTITIONS_NAME)) and self.code_servers():
                self.baseline = set(group_members(self.daemon.pid))
                return
            time.sleep(2)
        raise SystemExit(f"the agent partitions did not appear within {timeout_s:.0f} s; see {self.work / 'daemon.log'}")

    # -- days

    def advance_to(self, instant: dt.datetime) -> float:
        set_clock(self.clock_file, instant)
        return instant.timestamp()

    def wait_for_tick(self, instance, name: str, after: float, timeout_s: float = 180.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for state in instance.all_instigator_state():
                if state.instigator_name == name:
                    ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id, after=after)
                    done = [t for t in ticks if t.status.value in ("SUCCESS", "SKIPPED", "FAILURE")]
                    if done:
                        return done[0]
            time.sleep(1)
        return None

    def settle(self, instance, day: dt.date | None, quiet_s: float = QUIET_S) -> tuple[bool, str]:
        """Wait until nothing is queued or running, no run appeared for `quiet_s`, and (for a trading
        day) every asset of the day's loop is there."""
        deadline, last_count, quiet_from = time.monotonic() + DAY_TIMEOUT_S, -1, time.monotonic()
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                return False, f"the daemon exited with {self.daemon.returncode}"
            count = len(new_run_records(instance, self.seen_runs))
            if count != last_count:
                last_count, quiet_from = count, time.monotonic()
            missing = self.missing_assets(instance, day) if day is not None else []
            if not busy(instance) and time.monotonic() - quiet_from >= quiet_s:
                if not missing:
                    return True, ""
                if time.monotonic() - quiet_from >= 4 * quiet_s:
                    return False, f"nothing more ran; missing {', '.join(missing)}"
            time.sleep(3)
        return False, f"not settled within {DAY_TIMEOUT_S:.0f} s"

    def missing_assets(self, instance, day: dt.date) -> list[str]:
        d = day.isoformat()
        wanted = [("gold_answers", d), ("served_questions", d), ("web_corpus", d), ("leaderboard", d),
                  ("stale_gold_audit", d), ("public_site", d), ("analytics_store", d)]
        wanted += [("agent_runs", f"{agent}|{d}") for agent in sorted(self.agents)]
        missing = [f"{a}[{p}]" for a, p in wanted if materialized(instance, a, p) is None]
        if not missing:
            last_run = max(materialized(instance, "agent_runs", f"{agent}|{d}") for agent in self.agents)
            if materialized(instance, "analytics_store", d) < last_run:
                missing.append(f"analytics_store[{d}] after the agent runs")
        return missing

    def measure(self, figures: DayFigures, instance, before_disk: dict[str, int], since: float,
                sim_from: float, sim_to: float) -> None:
        after_disk = disk_usage(self.data, self.home)
        figures.disk_added = {k: after_disk.get(k, 0) - before_disk.get(k, 0) for k in sorted(set(after_disk) | set(before_disk))}
        records = new_run_records(instance, self.seen_runs)
        self.seen_runs.update(r.dagster_run.run_id for r in records)
        figures.runs = len(records)
        figures.failed_runs = [f"{r.dagster_run.job_name} {r.dagster_run.tags.get('dagster/partition', '')}"
                               for r in records if r.dagster_run.status.value == "FAILURE"]
        ends = [r.end_time for r in records if r.end_time]
        figures.loop_s = round(max(ends) - since, 1) if ends else 0.0
        figures.cpu_s = round(self.sampler.cpu_s, 1)
        figures.peak_rss_process_mib = round(self.sampler.peak_process_kib / 1024, 1)
        figures.peak_rss_total_mib = round(self.sampler.peak_total_kib / 1024, 1)
        figures.daemon_fds, figures.daemon_threads = handles(self.daemon.pid)
        servers = self.code_servers()
        if servers:
            figures.code_server_fds, figures.code_server_threads = handles(servers[0])
        time.sleep(5)  # a run worker reaps its children as it exits: give the last one a moment
        left = [pid for pid in group_members(self.daemon.pid) if pid not in self.baseline]
        # The code server's multiprocessing resource tracker: started at its first run launch (runs
        # are spawned processes), then one for the code server's lifetime. Counted apart; a second
        # one, or anything else, is a process left behind.
        trackers = [pid for pid in left if "resource_tracker" in command_line(pid) and _parent(pid) in servers]
        figures.helpers = len(trackers)
        figures.processes_left = [f"{pid} {command_line(pid)}" for pid in left if pid not in trackers[:1]]
        figures.ticks = ticks_between(instance, sim_from, sim_to)
        pool = json.loads((self.data / "pool" / "pool_manifest.json").read_text())
        figures.pool_version, figures.pool_questions = pool["version"], pool["questions"]
        if figures.trading:
            manifest = self.data / "gold" / f"gold_answers_{figures.day}.manifest.json"
            if manifest.is_file():
                gold = json.loads(manifest.read_text())
                figures.withdrawn_share = round(len(gold["withdrawn"]) / max(1, gold["records"]), 4)
            served_file = self.data / "served" / f"served_questions_{figures.day}.jsonl"
            if served_file.is_file():
                served = {json.loads(line)["qid"] for line in served_file.read_text().splitlines() if line.strip()}
                if self.previous_served:
                    figures.served_added = len(served - self.previous_served)
                    figures.served_removed = len(self.previous_served - served)
                self.previous_served = served


# --------------------------------------------------------------------------- setup


def soak_days(first: dt.date, count: int) -> list[dt.date]:
    """Every calendar day from `first` to the `count`-th trading day from it."""
    from livesearch_pipeline.core.calendars import is_trading_day

    days, trading = [], 0
    day = first
    while trading < count:
        days.append(day)
        trading += is_trading_day(day)
        day += dt.timedelta(days=1)
    return days


def prepare(work: Path, first: dt.date, pool_from: Path | None) -> dict[str, str]:
    """The data root, the Dagster home, the pool and the gold of the day before `first`."""
    from livesearch_pipeline.core.calendars import previous_trading_day

    data, home = work / "data", work / "data" / "dagster_home"
    home.mkdir(parents=True)
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIVESEARCH_", "DAGSTER_"))}
    # PYTHONPATH: every process (the command line, the daemon, its code server, the runs) runs the
    # code of this script's repository, whatever package the environment has installed.
    env.update(DAGSTER_HOME=str(home), LIVESEARCH_DATA_DIR=str(data), LITELLM_OFFLINE_MODE="true",
               LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONUNBUFFERED="1", PYTHONPATH=str(REPO))
    livesearch = [sys.executable, "-m", "livesearch_pipeline.cli"]
    before = previous_trading_day(first)
    started = time.monotonic()
    if pool_from is not None:
        for part in ("pool", "construction"):
            shutil.copytree(pool_from / part, data / part)
        print(f"pool copied from {pool_from}", flush=True)
    else:
        subprocess.run([*livesearch, "build-pool", "--as-of", before.isoformat()], env=env, cwd=work, check=True)
        print(f"pool built as of {before} in {time.monotonic() - started:.0f} s", flush=True)
    subprocess.run([*livesearch, "refresh", "--date", before.isoformat()], env=env, cwd=work, check=True)
    return env


def turn_on(env: dict[str, str], clock_file: Path, schedule: str) -> None:
    """Start a schedule that is stopped by default, at the simulated time (a schedule's ticks begin
    at the time it was started)."""
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--clocked", str(clock_file), "dagster",
                    "schedule", "start", schedule, "-w", str(REPO / "workspace.yaml")],
                   env=env, cwd=REPO, check=True, capture_output=True)


# --------------------------------------------------------------------------- report


def summary(days: list[DayFigures], left_at_stop: list[str]) -> dict:
    trading = [d for d in days if d.trading]
    first, last = trading[:5], trading[-5:]
    ratio = statistics.mean(d.loop_s for d in last) / statistics.mean(d.loop_s for d in first)
    cpu_ratio = statistics.mean(d.cpu_s for d in last) / statistics.mean(d.cpu_s for d in first)
    folders = sorted({k for d in days for k in d.disk_added})
    per_day = {k: statistics.mean(d.disk_added.get(k, 0) for d in trading) for k in folders}
    from livesearch_pipeline.core.calendars import trading_days

    year = len(trading_days(dt.date(2027, 1, 1), dt.date(2027, 12, 31)))
    fds = [(d.daemon_fds, d.code_server_fds) for d in trading]
    leaked = sorted({p for d in days for p in d.processes_left})
    return {
        "trading_days": len(trading), "calendar_days": len(days),
        "loop_s_first5": round(statistics.mean(d.loop_s for d in first), 1),
        "loop_s_last5": round(statistics.mean(d.loop_s for d in last), 1), "loop_ratio": round(ratio, 3),
        "cpu_s_first5": round(statistics.mean(d.cpu_s for d in first), 1),
        "cpu_s_last5": round(statistics.mean(d.cpu_s for d in last), 1), "cpu_ratio": round(cpu_ratio, 3),
        "disk_per_trading_day_mib": {k: round(v / 2**20, 2) for k, v in per_day.items()},
        "disk_per_trading_day_total_mib": round(sum(per_day.values()) / 2**20, 1),
        "trading_days_2027": year,
        "disk_per_year_gib": round(sum(per_day.values()) * year / 2**30, 1),
        "fds_first_last": [fds[0], fds[-1]] if fds else [],
        "processes_left": leaked, "processes_left_at_stop": left_at_stop,
        "code_server_trackers_max": max((d.helpers for d in days), default=0),
        "empty_ticks": sum(d.empty_ticks for d in days),
        "failed_runs": [f"{d.day}: {r}" for d in days for r in d.failed_runs],
        "incomplete_days": [f"{d.day}: {d.note}" for d in days if not d.complete],
        "targets": {
            "loop time flat (last 5 / first 5 <= 1.2)": ratio <= 1.2,
            "no process left": not leaked and not left_at_stop and max((d.helpers for d in days), default=0) <= 1,
            "no handle leaked (fds of the last day <= first day's + 10)":
                bool(fds) and fds[-1][0] <= fds[0][0] + 10 and fds[-1][1] <= fds[0][1] + 10,
            "no tick with an empty result": sum(d.empty_ticks for d in days) == 0,
        },
    }


def print_day(d: DayFigures) -> None:
    if not d.trading:
        ticks = ", ".join(f"{name} {t['ticks']}" for name, t in sorted(d.ticks.items()))
        print(f"{d.day}  no trading day  runs {d.runs}  pool {d.pool_version} ({d.pool_questions})  "
              f"empty ticks {d.empty_ticks}  [{ticks}]", flush=True)
        return
    disk = " ".join(f"{k} {v / 2**20:+.1f}" for k, v in d.disk_added.items() if abs(v) >= 2**16)
    print(f"{d.day}  loop {d.loop_s:6.1f} s  cpu {d.cpu_s:6.1f} s  runs {d.runs} (failed {len(d.failed_runs)})  "
          f"withdrawn {d.withdrawn_share}  pool {d.pool_version} ({d.pool_questions}, served +{d.served_added}/"
          f"-{d.served_removed})  rss {d.peak_rss_process_mib:.0f}/{d.peak_rss_total_mib:.0f} MiB  "
          f"fds {d.daemon_fds}/{d.code_server_fds} threads {d.daemon_threads}/{d.code_server_threads}  "
          f"left {len(d.processes_left)} (+{d.helpers} tracker)  ticks {sum(t['ticks'] for t in d.ticks.values())} "
          f"(empty {d.empty_ticks})  MiB: {disk}{'' if d.complete else '  INCOMPLETE: ' + d.note}", flush=True)


def run(work: Path, first: dt.date, count: int, pool_from: Path | None) -> tuple[list[DayFigures], dict]:
    from livesearch_pipeline.evaluation.registry import BASELINES

    env = prepare(work, first, pool_from)
    os.environ.update(DAGSTER_HOME=env["DAGSTER_HOME"], LIVESEARCH_DATA_DIR=env["LIVESEARCH_DATA_DIR"])
    import dagster as dg

    soak = Soak(work, env, tuple(BASELINES))
    set_clock(soak.clock_file, dt.datetime.combine(first, dt.time(12, 0), tzinfo=NEW_YORK))
    turn_on(env, soak.clock_file, "pool_refresh_schedule")
    soak.start_daemon(dt.datetime.combine(first, dt.time(12, 0), tzinfo=NEW_YORK))
    figures: list[DayFigures] = []
    left_at_stop: list[str] = []
    try:
        with dg.DagsterInstance.get() as instance:
            soak.wait_until_ready(instance)
            soak.seen_runs = {r.dagster_run.run_id for r in instance.get_run_records()}
            print(f"daemon ready (pid {soak.daemon.pid}, code server {soak.code_servers()}); "
                  f"baseline group {sorted(soak.baseline)}", flush=True)
            from livesearch_pipeline.core.calendars import is_trading_day

            for day in soak_days(first, count):
                before_disk = disk_usage(soak.data, soak.home)
                soak.sampler.reset()
                since = time.time()
                sim_from = dt.datetime.combine(day, dt.time(0, 0), tzinfo=NEW_YORK).timestamp()
                if day.weekday() == 5:  # stage 2 on its cadence: Saturday 06:00 New York
                    after = soak.advance_to(dt.datetime.combine(day, POOL_REFRESH_TIME, tzinfo=NEW_YORK))
                    soak.wait_for_tick(instance, "pool_refresh_schedule", after)
                    soak.settle(instance, None)
                trading = is_trading_day(day)
                after = soak.advance_to(dt.datetime.combine(day, TICK_TIME, tzinfo=NEW_YORK))
                tick_started = time.time()
                tick = soak.wait_for_tick(instance, "daily_refresh_schedule", after)
                result = DayFigures(day=day.isoformat(), trading=trading)
                if tick is None:
                    result.complete, result.note = False, "the schedule did not tick"
                elif trading:
                    result.complete, result.note = soak.settle(instance, day)
                else:
                    soak.settle(instance, None, quiet_s=QUIET_S / 3)
                sim_to = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0, 0), tzinfo=NEW_YORK).timestamp()
                soak.measure(result, instance, before_disk, tick_started if trading else since, sim_from, sim_to)
                figures.append(result)
                print_day(result)
    finally:
        left_at_stop = soak.stop_daemon()
    return figures, summary(figures, left_at_stop)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--clocked"]:  # dagster-daemon or dagster under the simulated clock (Soak.start_daemon, turn_on)
        return clocked_main(argv[1], argv[2], argv[3:])
    if argv[:1] == ["--retally"]:  # --retally WORK FIGURES.json: the ticks of a finished soak, counted again
        return retally(Path(argv[1]), Path(argv[2]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=30, help="trading days to run (default 30)")
    parser.add_argument("--first", type=dt.date.fromisoformat, default=DEFAULT_FIRST,
                        help=f"first trading day (default {DEFAULT_FIRST}); the days must be past days")
    parser.add_argument("--pool-from", type=Path, help="copy pool/ and construction/ from this data root instead of "
                                                       "building the pool as of the day before --first")
    parser.add_argument("--work", type=Path, help="empty directory for the data root and logs (default: temporary)")
    parser.add_argument("--json", type=Path, help="write the per-day figures and the summary here")
    args = parser.parse_args(argv)
    if args.days < 1:
        parser.error("--days must be >= 1")
    from livesearch_pipeline.defs.partitions import not_a_partition

    problem = not_a_partition(args.first)
    if problem is not None:
        parser.error(f"--first: {problem}")
    with tempfile.TemporaryDirectory(prefix="livesearch_soak_") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        if any(work.iterdir()):
            parser.error(f"--work {work} is not empty")
        started = time.monotonic()
        days, result = run(work.resolve(), args.first, args.days, args.pool_from)
        result["wall_s"] = round(time.monotonic() - started)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"days": [asdict(d) for d in days], "summary": result}, indent=2) + "\n")
    return 0 if all(result["targets"].values()) and not result["incomplete_days"] else 1


if __name__ == "__main__":
    sys.exit(main())
