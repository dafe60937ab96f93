"""Integrity benchmark (issue 12): does yesterday's gold fail today, as the paper reports?

    python benchmarks/integrity.py [--data DIR] [--clock 2026-11-27] [--start D] [--days 8] [--work DIR]

Builds the default pool on the embedded synthetic market at `--clock` (template verbalizer, the
dynamics replay at point in time), or takes the pool of an existing data root (`--data DIR`
holding `pool/questions.jsonl`). Then backfills `--days` consecutive trading days through the
refresh itself: the `daily_refresh` job (served_questions, gold_answers and its blocking checks)
materialised in-process for each partition D, the embedded service's clock at D, exactly as a
UI backfill runs it. By default the days are the first `--days` days after the construction date
on which Shanghai/Shenzhen, Hong Kong and New York all trade, so every question's "previous
trading day" is the previous backfilled day and the figures are out of sample: none of these days
was replayed when the pool's classes and tiers were decided.

For each consecutive pair (D-1, D) the gold of D-1 answers D's served questions and is scored by
the evaluator's deterministic matcher against D's gold (`evaluation.audits.stale_gold_audit`,
over questions whose gold is `ok` on both days). Printed: the stale-gold failure rate overall,
per refresh class, per tier and per market, pooled over the pairs and for each pair, and the
stale agent's accuracy per tier (the stale baseline answers with D-1's gold; a question without
an `ok` answer on D-1 is a wrong answer, on D's scoring set). Targets: >= 60 % overall, >= 90 %
on `daily`, 0 % on `static`, stale agent <= 15 % on T1; pool >= 1,500 questions over >= 60
tools, all 9 services, all asset classes, every visibility level and all three tiers. Exit code
1 when a target is missed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

# The pool is built two weeks before the days the issue measured (2026-11-16 .. 2026-11-25), which
# are then backfilled out of sample. Dagster creates a daily partition only once its day has
# begun, so the backfilled days must not lie after today.
DEFAULT_CLOCK = dt.date(2026, 11, 13)
DEFAULT_DAYS = 8  # 7 consecutive pairs
MARKETS = ("XSHG", "XHKG", "XNYS")
TARGET_OVERALL, TARGET_DAILY, TARGET_STATIC, TARGET_STALE_T1 = 0.60, 0.90, 0.0, 0.15


def trading_days_after(start: dt.date, n: int) -> list[dt.date]:
    """The first `n` days on or after `start` that are sessions of all three exchanges."""
    from livesearch_pipeline.core.calendars import is_session

    days, day = [], start
    while len(days) < n:
        if all(is_session(m, day) for m in MARKETS):
            days.append(day)
        day += dt.timedelta(days=1)
    return days


# --------------------------------------------------------------------------- pool


def _build_pool(root: Path, clock: dt.date) -> None:
    from livesearch_pipeline.defs.construction.materialize import materialize_pool
    from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource

    # The construction assets, as the UI and `livesearch build-pool` run them (the dynamics
    # replay at point in time: the embedded service has a clock).
    materialize_pool(as_of=clock, resources={"data_service": DataServiceResource(kind="embedded",
                                                                                 clock=clock.isoformat()),
                                             "storage": StorageResource(root=str(root))})


def prepare_root(work: Path, data: Path | None, clock: dt.date) -> Path:
    """A fresh data root holding the pool (copied from --data, or built here at `clock`)."""
    root = work / "root"
    if data is not None:
        catalog = data / "construction" / "tool_catalog.json"
        if not (data / "pool" / "questions.jsonl").is_file() or not catalog.is_file():
            raise SystemExit(f"--data {data}: needs pool/questions.jsonl and construction/tool_catalog.json "
                             f"(pass the data root of a built pool)")
        shutil.copytree(data / "pool", root / "pool")
        # The refresh checks the pool against the catalog it was built from.
        (root / "construction").mkdir(parents=True)
        shutil.copy2(catalog, root / "construction" / "tool_catalog.json")
        return root
    started = time.perf_counter()
    _build_pool(root, clock)
    print(f"built the default pool at clock {clock} in {time.perf_counter() - started:.1f} s")
    return root


# --------------------------------------------------------------------------- backfill


def backfill(root: Path, days: list[dt.date]) -> None:
    """The daily_refresh job for each day, in-process, the service's clock at that day."""
    import dagster as dg

    from livesearch_pipeline.definitions import defs
    from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource

    job = defs.resolve_job_def("daily_refresh")
    with dg.DagsterInstance.ephemeral() as instance:
        for day in days:
            started = time.perf_counter()
            result = job.execute_in_process(
                instance=instance, partition_key=day.isoformat(), raise_on_error=False,
                run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
                resources={"data_service": DataServiceResource(clock=day.isoformat()),
                           "storage": StorageResource(root=str(root))})
            if not result.success:
                failures = [e.message for e in result.all_events if e.event_type_value in ("STEP_FAILURE", "RUN_FAILURE")]
                raise SystemExit(f"the refresh of {day} failed: {failures[:2]}")
            print(f"  refreshed {day} in {time.perf_counter() - started:.1f} s")


# --------------------------------------------------------------------------- scoring


@dataclass
class Rate:
    n: int = 0
    failed: int = 0

    def add(self, failed: bool) -> None:
        self.n += 1
        self.failed += failed

    @property
    def rate(self) -> float:
        return self.failed / self.n if self.n else 0.0

    def __str__(self) -> str:
        return f"{self.rate:6.1%}  ({self.failed}/{self.n})" if self.n else "   n/a  (0)"


def market_of(question) -> str:
    dynamics = question.provenance.dynamics
    if dynamics is not None:
        return dynamics.calendar or "weekdays"
    return {"cn_equity": "XSHG", "index": "XSHG", "fund": "XSHG", "hk_equity": "XHKG",
            "us_equity": "XNYS"}.get(question.asset_class, question.asset_class)


@dataclass
class IntegrityReport:
    pairs: list[tuple[dt.date, dt.date, Rate]]
    overall: Rate
    by_class: dict[str, Rate]
    by_tier: dict[str, Rate]
    by_market: dict[str, Rate]
    stale_agent: dict[str, Rate]  # per tier: "failed" counts correct answers here (accuracy)


def score(root: Path, days: list[dt.date]) -> IntegrityReport:
    from livesearch_pipeline.core.program import load_pool
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.evaluation.audits import stale_gold_audit

    pool = {q.qid: q for q in load_pool(root / "pool" / "questions.jsonl")}
    store = SnapshotStore(root / "gold")
    overall, pairs = Rate(), []
    by_class, by_tier, by_market, stale_agent = (defaultdict(Rate) for _ in range(4))
    for previous, day in zip(days, days[1:]):
        audit = stale_gold_audit(root / "gold", day, served_path=root / "served" / f"served_questions_{day}.jsonl")
        if audit.previous_date != previous:
            raise SystemExit(f"the audit of {day} compared with {audit.previous_date}, not {previous}")
        pair = Rate()
        failed_by_qid = {}
        for row in audit.rows:
            q = pool[row.qid]
            for rate in (overall, pair, by_class[q.refresh_class], by_tier[q.tier], by_market[market_of(q)]):
                rate.add(row.failed)
            failed_by_qid[row.qid] = row.failed
        pairs.append((previous, day, pair))
        # The stale agent on D's scoring set: D's ok gold; no ok answer on D-1 is a wrong answer.
        for gold in store.read(day):
            if gold.status != "ok" or gold.qid not in pool:
                continue
            stale_agent[pool[gold.qid].tier].add(failed_by_qid.get(gold.qid) is False)
    return IntegrityReport(pairs, overall, dict(by_class), dict(by_tier), dict(by_market), dict(stale_agent))


# --------------------------------------------------------------------------- report


def pool_checks(root: Path) -> list:
    from construction import pool_figures

    from livesearch_pipeline.core.program import load_pool
    from livesearch_pipeline.dataservice.server import DataService

    questions = load_pool(root / "pool" / "questions.jsonl")
    figures = pool_figures(questions, DataService().catalog, 0.0, full_catalog=True)
    # The build time is the construction benchmark's figure, not measured here.
    return [f for f in figures if not f.name.startswith("build time")]


def render(report: IntegrityReport, days: list[dt.date]) -> tuple[list[str], bool]:
    lines = [f"stale-gold failure rate over {len(report.pairs)} consecutive pairs "
             f"({days[0]} .. {days[-1]}), pooled: {report.overall}"]
    for previous, day, rate in report.pairs:
        lines.append(f"    {previous} -> {day}: {rate}")
    for title, table in (("refresh class", report.by_class), ("tier", report.by_tier), ("market", report.by_market)):
        lines.append(f"  by {title}:")
        lines.extend(f"    {name:<10} {rate}" for name, rate in sorted(table.items()))
    lines.append("  stale agent accuracy by tier (answers with D-1's gold, on D's scoring set):")
    lines.extend(f"    {tier:<10} {rate}" for tier, rate in sorted(report.stale_agent.items()))
    daily, static = report.by_class.get("daily", Rate()), report.by_class.get("static", Rate())
    t1 = report.stale_agent.get("T1", Rate())
    checks = [
        ("overall stale-gold failure >= 60 %", report.overall.rate >= TARGET_OVERALL),
        ("daily stale-gold failure >= 90 %", daily.n > 0 and daily.rate >= TARGET_DAILY),
        ("static stale-gold failure = 0 %", static.failed == 0),
        ("stale agent on T1 <= 15 %", t1.n > 0 and t1.rate <= TARGET_STALE_T1),
    ]
    lines.extend(f"  {'PASS' if ok else 'FAIL'}  {name}" for name, ok in checks)
    return lines, all(ok for _, ok in checks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="a data root whose pool/ to use (default: build the default pool)")
    parser.add_argument("--clock", type=dt.date.fromisoformat, default=DEFAULT_CLOCK,
                        help=f"construction date of the pool built here (default {DEFAULT_CLOCK})")
    parser.add_argument("--start", type=dt.date.fromisoformat,
                        help="first backfilled day (default: the day after --clock)")
    parser.add_argument("--days", type=int, default=DEFAULT_DAYS, help=f"days to backfill (default {DEFAULT_DAYS})")
    parser.add_argument("--work", type=Path, help="an empty scratch directory (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.days < 8:
        raise SystemExit("--days must be at least 8 (7 consecutive pairs)")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    days = trading_days_after(args.start or args.clock + dt.timedelta(days=1), args.days)

    def run(work: Path) -> int:
        root = prepare_root(work, args.data, args.clock)
        print(f"integrity benchmark: pool under {root}; backfilling {days[0]} .. {days[-1]} ({len(days)} days)")
        started = time.perf_counter()
        backfill(root, days)
        print(f"backfill: {len(days)} partitions in {time.perf_counter() - started:.1f} s")
        figures = pool_checks(root)
        for figure in figures:
            print(figure.line())
        lines, passed = render(score(root, days), days)
        print("\n".join(lines))
        pool_ok = all(f.passed is not False for f in figures)
        return 0 if passed and pool_ok else 1

    if args.work is not None:
        if args.work.exists() and any(args.work.iterdir()):
            raise SystemExit(f"--work {args.work} is not empty")
        args.work.mkdir(parents=True, exist_ok=True)
        return run(args.work)
    with tempfile.TemporaryDirectory(prefix="livesearch-integrity-") as tmp:
        return run(Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
