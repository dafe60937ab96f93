"""Benchmark of the public site's build: 30 frozen days of 2,322 questions, from scratch and incrementally.

    python benchmarks/site.py [--days 30] [--questions 2322] [--work DIR] [--keep]

With --work DIR holding the inputs of an earlier --keep run, they are reused (the site, its
cache and the extra day are deleted first).

The inputs are synthetic and written by the real writers (livesearch_pipeline_tests/site/
synthetic.py): the pool, and per day the served file, the gold snapshot and manifest, three agent
runs scored by the evaluator (with trajectories), the leaderboard, the stale-gold audit and an
evidence map. Writing them is not timed. Then, timed (wall seconds, one process):

  full          the site of the last day from nothing (no cache, no earlier site)
  unchanged     the same build again: every day from the cache, every keyed page skipped
  new day       one more frozen day, then the site of that day (the day after the last)
  changed day   one earlier day's leaderboard touched (a note added), then the site again
  one process   the full build again from nothing with --workers 1: all of its CPU time is this
                process's (the worker processes of a forkserver are not counted in `os.times`)

Then the heaviest HTML page and the latest day's page, raw and gzipped (issue 41: the latest day's
page under 300 KB as served compressed).

Target (issue 31): the full build under 30 s on 2 cores. The CPU time is printed beside the wall
time: on a shared machine the wall time also counts the other processes' turns.
"""

from __future__ import annotations

import argparse
import gzip
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from livesearch_pipeline.core.snapshot import SnapshotStore  # noqa: E402
from livesearch_pipeline.settings import DataPaths  # noqa: E402
from livesearch_pipeline.site.build import build_site  # noqa: E402
from livesearch_pipeline_tests.site.synthetic import (  # noqa: E402
    sessions, synthetic_pool, write_day, write_pool,
)

START = dt.date(2026, 10, 19)


def _cpu() -> float:
    """CPU seconds of this process (not of the worker processes: see "one process")."""
    times = os.times()
    return times.user + times.system


def timed(label: str, action):
    started, cpu = time.perf_counter(), _cpu()
    result = action()
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    print(f"{label:<12} {seconds:6.1f} s wall, {cpu:6.1f} s CPU   {result.line()}", flush=True)
    return seconds


def heaviest_pages(site: Path, latest: dt.date) -> str:
    """The heaviest HTML page of the site and the latest day's page, raw and gzipped (level 6, what
    `livesearch site serve` sends a browser that accepts gzip)."""
    pages = sorted((p for p in site.rglob("*.html")), key=lambda p: p.stat().st_size, reverse=True)
    lines = []
    for label, page in (("heaviest page", pages[0]), ("latest day page", site / "days" / f"{latest}.html")):
        data = page.read_bytes()
        lines.append(f"{label:<16} {page.relative_to(site)}: {len(data) / 1e3:,.0f} KB, "
                     f"{len(gzip.compress(data, 6)) / 1e3:,.0f} KB gzipped")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--questions", type=int, default=2322)
    parser.add_argument("--work", type=Path, default=None, help="data root to write (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the data root and the site")
    args = parser.parse_args()
    root = args.work or Path(tempfile.mkdtemp(prefix="livesearch-site-bench-"))
    paths = DataPaths(root)
    days = sessions(START, args.days + 1)
    pool = synthetic_pool(args.questions)
    if SnapshotStore(paths.gold).dates()[:args.days] == days[:-1]:
        for stale in (paths.root / "site", paths.cache / "site", paths.runs / days[-1].isoformat(),
                      paths.web / days[-1].isoformat()):
            shutil.rmtree(stale, ignore_errors=True)
        for extra in (paths.served_file(days[-1]), SnapshotStore(paths.gold).path_for(days[-1]),
                      SnapshotStore(paths.gold).manifest_path_for(days[-1])):
            extra.unlink(missing_ok=True)
        previous = SnapshotStore(paths.gold).read(days[-2])
        print(f"inputs: {args.days} days x {args.questions} questions reused from {root}", flush=True)
    else:
        write_pool(paths, pool)
        started = time.perf_counter()
        previous = None
        for index, day in enumerate(days[:-1]):
            previous = write_day(paths, pool, day, index, previous=previous,
                                 pool_version="pool-synthetic2" if index >= args.days // 2 else "pool-synthetic1")
        print(f"inputs: {args.days} days x {args.questions} questions x 3 agents written in "
              f"{time.perf_counter() - started:.0f} s under {root}", flush=True)
    last = days[-2]
    timed("full", lambda: build_site(paths, last))
    timed("unchanged", lambda: build_site(paths, last))
    write_day(paths, pool, days[-1], len(days) - 1, previous=previous, pool_version="pool-synthetic2")
    timed("new day", lambda: build_site(paths, days[-1]))
    board = paths.runs / days[3].isoformat() / "leaderboard" / "leaderboard.json"
    data = json.loads(board.read_text(encoding="utf-8"))
    data["notes"] = [*data["notes"], "benchmark: a note added to one earlier day"]
    board.write_text(json.dumps(data), encoding="utf-8")
    timed("changed day", lambda: build_site(paths, days[-1]))
    shutil.rmtree(paths.root / "site")
    shutil.rmtree(paths.cache / "site")
    timed("one process", lambda: build_site(paths, days[-1], workers=1))
    site = paths.root / "site"
    files = [p for p in site.rglob("*") if p.is_file()]
    print(f"site: {len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.0f} MB; gold days "
          f"{len(SnapshotStore(paths.gold).dates())}")
    print(heaviest_pages(site, days[-1]), flush=True)
    if not args.keep and args.work is None:
        shutil.rmtree(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
