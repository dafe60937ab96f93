"""Construction benchmark: build the default pool on the full embedded catalog with the template
verbalizer at a fixed clock, and check it against the targets of issue 4.

    python benchmarks/construction.py [--clock YYYY-MM-DD] [--out DIR] [--tools daily,shibor,...]

Prints each figure with PASS/FAIL (questions >= 1,500, tools >= 60, all 9 data services, every
asset class, every visibility level 0..10, 3 tiers, >= 4 refresh classes, every text passes the
date gate, no search/intraday/utility tool in any program, build time < 5 min), the stage
timings (probe, coverage, enumerate, dynamics, verbalize, pool), the dynamics replay's
figures (days, program runs, drops by reason, kept by class and tier), process CPU time and peak RSS. Exits 1 on
any FAIL. With `--tools` the size targets are not applicable (reported as such) and only the
invariants are checked. Without `--out` the tables and the pool go to a temporary directory.
"""

from __future__ import annotations

import argparse
import datetime as dt
import resource
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from livesearch_pipeline.construction.models import CoverageRow, ProbeRow, RejectRow
from livesearch_pipeline.construction.pipeline import TABLES, read_catalog, read_table
from livesearch_pipeline.construction.pool import POOL_FILE
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.models import Question
from livesearch_pipeline.defs.construction.materialize import PoolBuild, materialize_pool
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource

# The construction assets' steps under the benchmark's historical stage names.
STAGES = {"probe": ("tool_catalog", "tool_probe"), "coverage": ("coverage",), "enumerate": ("candidates",),
          "dynamics": ("candidate_dynamics",), "verbalize": ("verbalized_questions",), "pool": ("question_pool",),
          "total": ("total",)}

DEFAULT_CLOCK = dt.date(2026, 11, 27)
TARGET_QUESTIONS = 1500
TARGET_TOOLS = 60
TARGET_REFRESH_CLASSES = 4
TARGET_SECONDS = 300.0
TIERS = ("T1", "T2", "T3")
VISIBILITY_LEVELS = tuple(range(11))


@dataclass(frozen=True)
class Figure:
    name: str
    value: str
    target: str
    passed: bool | None  # None: not applicable to this run

    def line(self) -> str:
        verdict = "n/a " if self.passed is None else ("PASS" if self.passed else "FAIL")
        return f"  {verdict}  {self.name:<34} {self.value:<40} target {self.target}"


def _missing(expected, seen) -> str:
    gone = sorted(set(expected) - set(seen), key=str)
    return "none missing" if not gone else f"missing {gone}"


def pool_figures(questions: list[Question], catalog: Catalog, seconds: float, *, full_catalog: bool) -> list[Figure]:
    """Each target of issue 4 measured on a built pool; size targets only on the full catalog."""
    sized = None if not full_catalog else True
    data_tools = {t.name: t for t in catalog.data_tools()}
    tools = Counter(q.program.calls[0].tool for q in questions)
    services = {data_tools[name].service for name in tools if name in data_tools}
    all_services = {t.service for t in data_tools.values()}
    classes = {q.asset_class for q in questions}
    catalog_classes = {c for t in data_tools.values() for c in t.asset_classes}
    levels = {q.visibility for q in questions}
    tiers = {q.tier for q in questions}
    refresh = {q.refresh_class for q in questions}
    gated = [q.qid for q in questions for text in (q.question, q.question_zh)
             if text is not None and not check_text(text).passed]
    forbidden = sorted({c.tool for q in questions for c in q.program.calls if c.tool not in data_tools})

    def size(ok: bool) -> bool | None:
        return ok if sized else None

    return [
        Figure("questions", str(len(questions)), f">= {TARGET_QUESTIONS}", size(len(questions) >= TARGET_QUESTIONS)),
        Figure("tools", str(len(tools)), f">= {TARGET_TOOLS}", size(len(tools) >= TARGET_TOOLS)),
        Figure("data services", f"{len(services)} of {len(all_services)} ({_missing(all_services, services)})",
               "all", size(services == all_services)),
        Figure("asset classes", f"{len(classes)} of {len(catalog_classes)} ({_missing(catalog_classes, classes)})",
               "all", size(classes == catalog_classes)),
        Figure("visibility levels", f"{len(levels)} of 11 ({_missing(VISIBILITY_LEVELS, levels)})", "0..10",
               size(levels == set(VISIBILITY_LEVELS))),
        Figure("tiers", ",".join(sorted(tiers)), "T1,T2,T3", size(tiers == set(TIERS))),
        Figure("refresh classes", f"{len(refresh)} ({','.join(sorted(refresh))})", f">= {TARGET_REFRESH_CLASSES}",
               size(len(refresh) >= TARGET_REFRESH_CLASSES)),
        Figure("date gate failures", str(len(gated)), "0", not gated),
        Figure("non-data tools in programs", str(forbidden or 0), "0", not forbidden),
        Figure("build time (s, wall)", f"{seconds:.1f}", f"< {TARGET_SECONDS:.0f}", size(seconds < TARGET_SECONDS)),
    ]


def build(clock: dt.date, out: Path, tools: tuple[str, ...]) -> tuple[Catalog, PoolBuild, float]:
    """The construction assets materialised in one run (`materialize_pool`), as `livesearch build-pool` does."""
    started = time.perf_counter()
    built = materialize_pool(as_of=clock, tools=tools, resources={
        "data_service": DataServiceResource(kind="embedded", clock=clock.isoformat()),
        "storage": StorageResource(root=str(out))})
    seconds = time.perf_counter() - started
    return read_catalog(out / "construction" / TABLES["catalog"]), built, seconds


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(clock: dt.date, out: Path, tools: tuple[str, ...]) -> tuple[list[Figure], PoolBuild]:
    cpu_started = time.process_time() + _children_cpu()
    catalog, built, seconds = build(clock, out, tools)
    # The dynamics replay forks workers: their CPU time is part of the build's.
    cpu_seconds = time.process_time() + _children_cpu() - cpu_started
    questions = read_table(out / "pool" / POOL_FILE, Question)
    figures = pool_figures(questions, catalog, seconds, full_catalog=not tools)
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    data_tools = len(catalog.data_tools()) if not tools else len(tools)
    print(f"construction benchmark: embedded synthetic market, clock {clock}, template verbalizer, "
          f"{data_tools} data tools{' (restricted)' if tools else ''}; output in {out}")
    for figure in figures:
        print(figure.line())
    steps = built.step_seconds
    print("stage timings (s, wall, Dagster steps): " + ", ".join(
        f"{name} {sum(steps[s] for s in parts):.1f}" for name, parts in STAGES.items()))
    dyn = built.metadata["candidate_dynamics"]
    print(f"dynamics: {dyn['replayed']} candidates replayed (first and last session per calendar {dyn['days']}; "
          f"{dyn['program_runs']} program runs, {dyn['tool_calls']} distinct calls); kept {dyn['rows']}; "
          f"dropped {dyn['dropped']}; kept by class {dyn['by_class']}, by tier {dyn['by_tier']}")
    construction = out / "construction"
    probe = read_table(construction / TABLES["probe"], ProbeRow)
    coverage = read_table(construction / TABLES["coverage"], CoverageRow)
    rejects = read_table(construction / TABLES["rejects"], RejectRow)
    enumerated = built.metadata["candidates"]
    print(f"probe: {sum(r.usable for r in probe)} of {len(probe)} tool x class rows usable; coverage rows "
          f"{len(coverage)}; drafts {enumerated['drafts']}; candidates {enumerated['rows']}; "
          f"verbalized {built.metadata['verbalized_questions']['rows']}; rejects {len(rejects)}; "
          f"pool {built.manifest.questions}")
    print(f"CPU time {cpu_seconds:.1f} s (this process and its replay workers); peak RSS {peak_rss_mb:.0f} MB "
          f"(wall times are inflated when other processes share the cores)")
    return figures, built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clock", type=dt.date.fromisoformat, default=DEFAULT_CLOCK,
                        help=f"fixed service clock and construction date (default {DEFAULT_CLOCK})")
    parser.add_argument("--out", type=Path, help="directory for the tables and the pool (default: a temp dir)")
    parser.add_argument("--tools", default="", help="comma-separated data tools to build from (default: all)")
    args = parser.parse_args(argv)
    tools = tuple(sorted({t.strip() for t in args.tools.split(",") if t.strip()}))
    if args.out is not None:
        figures, _ = run(args.clock, args.out, tools)
    else:
        with tempfile.TemporaryDirectory(prefix="livesearch-construction-") as tmp:
            figures, _ = run(args.clock, Path(tmp), tools)
    return 1 if any(f.passed is False for f in figures) else 0


if __name__ == "__main__":
    sys.exit(main())
