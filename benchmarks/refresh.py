"""Benchmark of the daily refresh on the embedded data service, with and without Dagster.

    python benchmarks/refresh.py [--pool DIR] [--clock 2026-03-16] [--date D] [--partitions 20] [--shards 2] [--repeat 3]

`benchmarks/refresh_core.py` measures the core executor alone on a synthetic in-memory market;
this script measures the real pipeline: the default pool (built here on the embedded synthetic
market at a fixed clock, minutes; or reused with `--pool DIR`, a directory holding
`questions.jsonl` and its manifest) re-dated to one date D and executed against the embedded
service.

  (a) core      execute every served program for D and write the snapshot (no Dagster);
                one untimed warm-up run first, so (a) and (b) both find the service's caches warm
  (b) dagster   the `daily_refresh` job for partition D, in-process (served_questions,
                gold_answers fanned out over --shards, the four blocking checks)
                -> Dagster overhead = median (b) / median (a) - 1, over --repeat
                alternating runs of (a) and (b), each on a fresh data root
  (c) backfill  --partitions runs of `daily_refresh`, one per date, the 20 days before D,
                each with the job's multiprocess executor (as the daemon launches them)

Each phase writes to its own fresh data root under a scratch directory (or --work DIR), so no
phase finds a snapshot another one froze. Peak RSS: ru_maxrss of this process and of the
largest waited-for descendant (step processes of the multiprocess executor).

Targets: a 1,500-question day in under 30 s through Dagster, i.e. (b) at >= 50 programs/s;
Dagster overhead (b) vs (a) under 25 %. The exit code is 1 when a target is missed or a run
fails for any reason other than a blocking data check (those are reported, not hidden).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CLOCK = dt.date(2026, 3, 16)
TARGET_DAY_QUESTIONS, TARGET_DAY_S = 1500, 30.0
TARGET_PROGRAMS_PER_S = TARGET_DAY_QUESTIONS / TARGET_DAY_S
TARGET_OVERHEAD = 0.25
REFRESH_JOB = "daily_refresh"


@dataclass(frozen=True)
class RunTiming:
    date: dt.date
    wall_s: float
    succeeded: bool
    failed_checks: tuple[str, ...]


@dataclass(frozen=True)
class RefreshBenchmark:
    programs: int
    date: dt.date
    core_s: float
    dagster_s: float
    backfill: tuple[RunTiming, ...]
    backfill_wall_s: float
    peak_rss_self_mib: float
    peak_rss_children_mib: float

    @property
    def core_programs_per_s(self) -> float:
        return self.programs / self.core_s

    @property
    def dagster_programs_per_s(self) -> float:
        return self.programs / self.dagster_s

    @property
    def overhead(self) -> float:
        return self.dagster_s / self.core_s - 1

    @property
    def backfill_programs_per_s(self) -> float:
        return self.programs * len(self.backfill) / self.backfill_wall_s if self.backfill else 0.0

    def checks(self) -> list[tuple[str, bool]]:
        return [
            (f"one day through Dagster >= {TARGET_PROGRAMS_PER_S:.0f} programs/s "
             f"({TARGET_DAY_QUESTIONS:,} questions < {TARGET_DAY_S:.0f} s)",
             self.dagster_programs_per_s >= TARGET_PROGRAMS_PER_S),
            (f"Dagster overhead < {TARGET_OVERHEAD:.0%}", self.overhead < TARGET_OVERHEAD),
        ]


# --------------------------------------------------------------------------- pool


async def _build_default_pool(data_root: Path, clock: dt.date) -> None:
    from livesearch_pipeline.construction.pipeline import BuildConfig, build_pool
    from livesearch_pipeline.dataservice.catalog import ServiceConfig
    from livesearch_pipeline.dataservice.client import McpToolClient
    from livesearch_pipeline.dataservice.server import DataService

    async with McpToolClient.in_process(DataService(config=ServiceConfig(clock=clock))) as client:
        catalog = await client.list_tools()
        await build_pool(client, catalog, data_root / "construction", data_root / "pool", BuildConfig(as_of=clock))


def prepare_pool(work: Path, pool: Path | None, clock: dt.date) -> Path:
    """The pool directory every phase copies: `pool` when given, else the default pool built at `clock`."""
    if pool is not None:
        if not (pool / "questions.jsonl").is_file():
            raise SystemExit(f"--pool {pool}: no questions.jsonl there (pass the pool directory itself)")
        return pool
    built = work / "built"
    started = time.perf_counter()
    asyncio.run(_build_default_pool(built, clock))
    print(f"built the default pool at clock {clock} in {time.perf_counter() - started:.1f} s")
    return built / "pool"


def fresh_data_root(work: Path, name: str, pool: Path) -> Path:
    root = work / name
    if root.exists():
        raise SystemExit(f"{root} already exists; pass an empty --work directory")
    shutil.copytree(pool, root / "pool")
    return root


# --------------------------------------------------------------------------- phases


def core_refresh(root: Path, day: dt.date, clock: dt.date) -> tuple[int, float]:
    """(a): execute every served program of `day` and write the snapshot; (programs, wall s)."""
    from livesearch_pipeline.construction.pool import read_manifest
    from livesearch_pipeline.core.executor import execute_programs
    from livesearch_pipeline.core.program import load_pool
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.defs.resources import DataServiceResource
    from livesearch_pipeline.refresh import served_from_pool
    from livesearch_pipeline.settings import code_version

    started = time.perf_counter()
    pool = load_pool(root / "pool" / "questions.jsonl")
    served = {s.qid for s in served_from_pool(pool)}
    questions = [q for q in pool if q.qid in served]

    async def run():
        async with DataServiceResource(clock=clock.isoformat()).open() as client:
            answers, _ = await execute_programs(questions, day, client)
            return answers, client.identity

    answers, identity = asyncio.run(run())
    SnapshotStore(root / "gold").write(day, answers, pool_version=read_manifest(root / "pool").version,
                                       data_service=identity, code_version=code_version())
    return len(questions), time.perf_counter() - started


def _failed_checks(events) -> tuple[str, ...]:
    return tuple(sorted(e.event_specific_data.check_name for e in events
                        if e.event_type_value == "ASSET_CHECK_EVALUATION" and not e.event_specific_data.passed))


def _require_only_check_failures(day: dt.date, events, failed_checks: tuple[str, ...]) -> None:
    """A blocking data check may fail a run (reported); any other failed step aborts the benchmark."""
    check_steps = {f"gold_answers_{name}" for name in failed_checks}
    broken = [e for e in events if e.event_type_value == "STEP_FAILURE" and e.step_key not in check_steps]
    if broken:
        raise SystemExit(f"refresh of {day} failed in step {broken[0].step_key}: {broken[0].message}")


def dagster_refresh(day: dt.date, shards: int) -> RunTiming:
    """(b): the refresh job for `day`, in-process, against the instance under DAGSTER_HOME."""
    import dagster as dg

    from livesearch_pipeline.definitions import defs
    from livesearch_pipeline.defs.resources import default_resources

    job = defs.resolve_job_def(REFRESH_JOB)
    started = time.perf_counter()
    # Resources from the environment as it is now (the definitions may have been loaded earlier).
    result = job.execute_in_process(instance=dg.DagsterInstance.get(), partition_key=day.isoformat(),
                                    run_config=_run_config(shards), raise_on_error=False,
                                    resources=default_resources())
    wall = time.perf_counter() - started
    failed = _failed_checks(result.all_events)
    _require_only_check_failures(day, result.all_events, failed)
    return RunTiming(day, wall, result.success, failed)


def _run_config(shards: int) -> dict:
    return {"ops": {"gold_answers": {"config": {"shards": shards}}}}


def backfill(days: list[dt.date], shards: int) -> list[RunTiming]:
    """(c): one run per date with the job's own (multiprocess) executor, one run at a time."""
    import dagster as dg
    from dagster._core.definitions.reconstruct import ReconstructableRepository

    job = ReconstructableRepository.for_module(
        "livesearch_pipeline.definitions", "defs", working_directory=str(REPO)).get_reconstructable_job(REFRESH_JOB)
    instance = dg.DagsterInstance.get()
    timings = []
    for day in days:
        started = time.perf_counter()
        tags = {"dagster/partition": day.isoformat(), "dagster/backfill": "benchmark"}
        with dg.execute_job(job, instance=instance, run_config=_run_config(shards), tags=tags) as result:
            events = result.all_events
            succeeded = result.success
        wall = time.perf_counter() - started
        failed = _failed_checks(events)
        _require_only_check_failures(day, events, failed)
        timings.append(RunTiming(day, wall, succeeded, failed))
    return timings


def _peak_rss_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux reports KiB


def run_benchmark(work: Path, *, pool: Path | None, clock: dt.date, day: dt.date, partitions: int,
                  shards: int, repeat: int = 3) -> RefreshBenchmark:
    """Run (a), (b), (c) under `work`; sets DAGSTER_HOME and the data root/clock for the job's resources."""
    if day > clock:
        raise SystemExit(f"--date {day} is after the service clock {clock}: the service returns nothing after it")
    source = prepare_pool(work, pool, clock)
    warmup = fresh_data_root(work, "warmup", source)
    home = work / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    # Read by `defs.resources` when the definitions load: in this process and in every step process.
    os.environ.update(DAGSTER_HOME=str(home), LIVESEARCH_DATA_DIR=str(work / "jobs_0"),
                      LIVESEARCH_CLOCK=clock.isoformat(), LIVESEARCH_DATA_SERVICE="embedded")

    core_refresh(warmup, day, clock)
    # (a) and (b) alternate, each on a fresh data root, and the medians are compared: on a shared
    # 2-core machine one pair of runs can differ by several seconds for reasons of their own.
    core_times, day_runs = [], []
    for attempt in range(repeat):
        programs, core_s = core_refresh(fresh_data_root(work, f"core_{attempt}", source), day, clock)
        core_times.append(core_s)
        print(f"(a) core      {day}: {programs} programs in {core_s:.2f} s")
        os.environ["LIVESEARCH_DATA_DIR"] = str(fresh_data_root(work, f"jobs_{attempt}", source))
        day_run = dagster_refresh(day, shards)
        day_runs.append(day_run)
        print(f"(b) dagster   {day}: {day_run.wall_s:.2f} s{_describe_failures(day_run)}")
    core_s = statistics.median(core_times)
    dagster_s = statistics.median(run.wall_s for run in day_runs)
    days = [day - dt.timedelta(days=n) for n in range(partitions, 0, -1)]
    started = time.perf_counter()
    runs = backfill(days, shards)
    backfill_s = time.perf_counter() - started
    for run in runs:
        print(f"(c) backfill  {run.date}: {run.wall_s:.2f} s{_describe_failures(run)}")
    return RefreshBenchmark(
        programs=programs, date=day, core_s=core_s, dagster_s=dagster_s, backfill=tuple(runs),
        backfill_wall_s=backfill_s, peak_rss_self_mib=_peak_rss_mib(resource.RUSAGE_SELF),
        peak_rss_children_mib=_peak_rss_mib(resource.RUSAGE_CHILDREN),
    )


def _describe_failures(run: RunTiming) -> str:
    return f"  (blocking check failed: {', '.join(run.failed_checks)})" if run.failed_checks else ""


def report(result: RefreshBenchmark) -> list[str]:
    failed = Counter(name for run in result.backfill for name in run.failed_checks)
    lines = [
        f"pool programs            {result.programs} (date {result.date})",
        f"(a) core refresh s       {result.core_s:.2f} (median)  ({result.core_programs_per_s:.1f} programs/s)",
        f"(b) dagster job s        {result.dagster_s:.2f} (median)  ({result.dagster_programs_per_s:.1f} programs/s)",
        f"dagster overhead         {result.overhead:.1%}",
        f"(c) backfill partitions  {len(result.backfill)} in {result.backfill_wall_s:.1f} s "
        f"({result.backfill_programs_per_s:.1f} programs/s, "
        f"{result.backfill_wall_s / max(len(result.backfill), 1):.1f} s per partition)",
        f"backfill check failures  {dict(failed) if failed else 'none'}",
        f"peak RSS MiB             self {result.peak_rss_self_mib:.0f}, largest step process "
        f"{result.peak_rss_children_mib:.0f}",
    ]
    lines += [f"{'PASS' if ok else 'FAIL'}  {name}" for name, ok in result.checks()]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=Path, help="reuse this pool directory (questions.jsonl + manifest)")
    parser.add_argument("--clock", type=dt.date.fromisoformat, default=DEFAULT_CLOCK,
                        help="the embedded service's fixed clock (and the default pool's build date)")
    parser.add_argument("--date", type=dt.date.fromisoformat, help="refresh date D of (a) and (b) (default: --clock)")
    parser.add_argument("--partitions", type=int, default=20, help="backfill partitions for (c), the days before D")
    parser.add_argument("--shards", type=int, default=2, help="gold_answers shards per run")
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs of (a) and (b); medians compared")
    parser.add_argument("--work", type=Path, help="empty scratch directory (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    if args.partitions < 1 or args.shards < 1 or args.repeat < 1:
        parser.error("--partitions, --shards and --repeat must be >= 1")
    with tempfile.TemporaryDirectory(prefix="refresh_benchmark_") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        result = run_benchmark(work, pool=args.pool, clock=args.clock, day=args.date or args.clock,
                               partitions=args.partitions, shards=args.shards, repeat=args.repeat)
    print("\n".join(report(result)))
    return 0 if all(ok for _, ok in result.checks()) else 1


if __name__ == "__main__":
    sys.exit(main())
