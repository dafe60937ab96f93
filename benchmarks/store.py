"""Benchmark of the Parquet store against the JSONL files over a year of daily snapshots.

    python benchmarks/store.py --pool DIR [--end 2026-03-16] [--days 365] [--qids 50] [--repeat 3] [--work DIR]

A year of snapshots of a pool (`--pool`, a directory holding `questions.jsonl`; e.g. the
default pool that `benchmarks/refresh.py` builds) is synthesised cheaply instead of refreshed:
for every day within `--days` calendar days up to `--end` that is a session of a covered market,
each served question gets a gold answer whose value follows its refresh class (daily: a seeded
random walk that moves every day; weekly/monthly/quarterly: steps at those periods; static: a
constant), formatted with its match rule's decimals and unit, plus the day's served file. The
bytes are written through the real `SnapshotStore` (manifests included), so both readers see
exactly what production would hold.

Measured (median of --repeat, warm page cache for both):
  rebuild        every date's Parquet partitions from the JSONL (what `store rebuild` costs)
  longitudinal   `longitudinal_audit` of --qids qids over the whole year: JSONL scan (verifies
                 and parses every snapshot) vs Parquet (manifest check + one qid-filtered scan)
  stale series   the stale-gold rate of every date: `stale_gold_audit` per date (JSONL) vs
                 `stale_gold_series` (Parquet)
  pandas query   one daily-class qid's value over the year, with pandas on the Parquet dataset
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import random
import statistics
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from livesearch_pipeline.core.calendars import CALENDARS, is_session  # noqa: E402
from livesearch_pipeline.core.models import GoldAnswer, Question  # noqa: E402
from livesearch_pipeline.core.program import load_pool  # noqa: E402
from livesearch_pipeline.core.snapshot import SnapshotStore  # noqa: E402
from livesearch_pipeline.evaluation.audits import longitudinal_audit, stale_gold_audit, stale_gold_series  # noqa: E402
from livesearch_pipeline.evaluation.store import rebuild, store_root  # noqa: E402
from livesearch_pipeline.refresh import served_from_pool, write_served  # noqa: E402
from livesearch_pipeline.settings import DataPaths  # noqa: E402

DEFAULT_END = dt.date(2026, 3, 16)
STEP_DAYS = {"weekly": 7, "monthly": 30, "quarterly": 91}


def market_days(end: dt.date, days: int) -> list[dt.date]:
    span = (end - dt.timedelta(days=n) for n in range(days))
    return sorted(d for d in span if any(is_session(c, d) for c in CALENDARS))


def _seed(qid: str) -> int:
    return int(hashlib.sha256(qid.encode()).hexdigest()[:12], 16)


def synthetic_answer(question: Question, day: dt.date, index: int, first: dt.date) -> GoldAnswer:
    """The gold of `question` on the `index`-th market day: deterministic in (qid, day)."""
    rule = question.match
    if rule.rule in ("exact", "semantic") and rule.decimals is None and rule.unit is None:
        step = index if question.refresh_class == "daily" else (day - first).days // STEP_DAYS.get(
            question.refresh_class, 10**6)
        text = f"{question.entity_name} {_seed(question.qid) % 97 + step}"
        return GoldAnswer(qid=question.qid, date=day, status="ok", answer=text, value=text,
                          observed_period=day.strftime("%Y%m%d"), match=rule)
    walk = random.Random(_seed(question.qid))
    level = 10 + walk.random() * 990
    period = 1 if question.refresh_class == "daily" else STEP_DAYS.get(question.refresh_class)
    steps = index if period == 1 else ((day - first).days // period if period else 0)
    value = level * (1 + 0.01 * ((_seed(f"{question.qid}:{steps}") % 2001) - 1000) / 1000) if steps else level
    decimals = rule.decimals if rule.decimals is not None else 2
    value = round(value, decimals)
    answer = f"{value:.{decimals}f}" + (f" {rule.unit}" if rule.unit else "")
    return GoldAnswer(qid=question.qid, date=day, status="ok", answer=answer, value=value, unit=rule.unit,
                      observed_period=day.strftime("%Y%m%d"), match=rule)


def synthesise_year(pool_dir: Path, root: Path, end: dt.date, days: int) -> tuple[list[dt.date], list[Question]]:
    pool = load_pool(pool_dir / "questions.jsonl")
    served = served_from_pool(pool)
    by_qid = {q.qid: q for q in pool}
    questions = [by_qid[s.qid] for s in served]
    dates = market_days(end, days)
    store = SnapshotStore(DataPaths(root).gold)
    for index, day in enumerate(dates):
        answers = [synthetic_answer(q, day, index, dates[0]) for q in questions]
        cutoff = dt.datetime.combine(day, dt.time(21, 0), tzinfo=dt.timezone.utc)
        store.write(day, answers, pool_version="synthetic-year", pool_sha256="0" * 64, data_service="synthetic",
                    code_version="benchmark", max_withdrawn_share=1.0, cutoff=cutoff, created_at=cutoff)
        write_served(DataPaths(root).served_file(day), served)
    return dates, questions


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def _size_mib(paths) -> float:
    return sum(p.stat().st_size for p in paths) / 2**20


def run(pool_dir: Path, work: Path, end: dt.date, days: int, n_qids: int, repeat: int) -> list[str]:
    root = work / "data"
    started = time.perf_counter()
    dates, questions = synthesise_year(pool_dir, root, end, days)
    paths = DataPaths(root)
    lines = [f"synthesised {len(dates)} market days x {len(questions)} questions "
             f"({dates[0]}..{dates[-1]}) in {time.perf_counter() - started:.1f} s"]
    rebuild_s, _ = timed(lambda: rebuild(paths), 1)
    jsonl_mib = _size_mib(list(paths.gold.glob("*.jsonl")) + list(paths.served.glob("*.jsonl")))
    parquet_mib = _size_mib(store_root(paths).rglob("*.parquet"))
    daily = sorted(q.qid for q in questions if q.refresh_class == "daily")
    others = sorted(q.qid for q in questions if q.refresh_class != "daily")
    wanted = (daily[: n_qids // 2] + others[: n_qids - n_qids // 2])[:n_qids]

    def jsonl():
        return longitudinal_audit(paths.gold, wanted, dates[0], dates[-1])

    def parquet():
        return longitudinal_audit(paths.gold, wanted, dates[0], dates[-1], store_dir=store_root(paths))

    jsonl_s, from_jsonl = timed(jsonl, repeat)
    parquet_s, from_parquet = timed(parquet, repeat)
    if from_jsonl != from_parquet:
        raise SystemExit("the longitudinal audit from Parquet differs from the JSONL scan")
    series_jsonl_s, audits = timed(lambda: [stale_gold_audit(paths.gold, d) for d in dates[1:]], 1)
    series_parquet_s, series = timed(lambda: stale_gold_series(store_root(paths), paths.gold, dates[0], dates[-1]), 1)
    if [p.failure_rate for p in series] != [a.failure_rate for a in audits]:
        raise SystemExit("the stale-gold series from Parquet differs from the daily audits")

    import pandas as pd

    def pandas_query():
        frame = pd.read_parquet(store_root(paths) / "gold", columns=["qid", "value_num"],
                                filters=[("qid", "==", daily[0])])
        return frame

    pandas_s, frame = timed(pandas_query, repeat)
    lines += [
        f"on disk: JSONL (gold + served) {jsonl_mib:.1f} MiB, Parquet (gold + served) {parquet_mib:.1f} MiB",
        f"rebuild of every date from the JSONL: {rebuild_s:.2f} s ({rebuild_s / len(dates) * 1000:.0f} ms per date)",
        "",
        "| query over the year | JSONL | Parquet | speed-up |",
        "|---|---|---|---|",
        f"| longitudinal audit, {len(wanted)} qids x {len(dates)} dates | {jsonl_s:.2f} s | {parquet_s:.3f} s "
        f"| {jsonl_s / parquet_s:.0f}x |",
        f"| stale-gold rate of every date ({len(series)} points) | {series_jsonl_s:.1f} s | {series_parquet_s:.1f} s "
        f"| {series_jsonl_s / series_parquet_s:.1f}x |",
        f"| pandas: one qid's value over the year ({len(frame)} rows) | - | {pandas_s:.3f} s | - |",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=Path, required=True, help="pool directory holding questions.jsonl")
    parser.add_argument("--end", type=dt.date.fromisoformat, default=DEFAULT_END)
    parser.add_argument("--days", type=int, default=365, help="calendar days up to --end")
    parser.add_argument("--qids", type=int, default=50, help="qids in the longitudinal audit")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, help="empty scratch directory (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    if not (args.pool / "questions.jsonl").is_file():
        raise SystemExit(f"--pool {args.pool}: no questions.jsonl there (pass the pool directory itself)")
    work = args.work or Path(tempfile.mkdtemp(prefix="livesearch-store-bench-"))
    try:
        for line in run(args.pool, work, args.end, args.days, args.qids, args.repeat):
            print(line)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
