"""How the cost of the daily refresh and of construction grows with the work.

    python benchmarks/scaling.py refresh [--programs 1000,10000,100000] [--per-entity 20] [--call-cost-ms 1.5]
    python benchmarks/scaling.py construction [--factors 1,2,4] [--clock 2026-11-27]

refresh: `benchmarks/refresh_core.py` (the core executor and the snapshot write, in process,
against its in-memory synthetic market) at each program count, each in a fresh process so peak
RSS is that run's own. The pool is scaled by entity, not by copies: every size instantiates
the same program templates (seven shapes x six variants) for `--per-entity` programs per entity,
over N / per-entity distinct A-share entities, so a larger pool is more entities of the same
class with the same mix of shapes, never the same program twice; unique calls per program stay
comparable across sizes and the growth measured is the executor's. Reported per size:
programs/s, wall and process-CPU seconds, unique calls per program, peak RSS, and the growth of
time and RSS against the previous size.
Targets: 100,000 programs in under 60 s with peak RSS under 1.5 GiB; 10x the programs costs at
most 12x the time, wall and CPU (on a shared machine the wall clock also measures neighbours:
judge wall figures on an idle machine). Each target gets its own PASS/FAIL line.

What the peak RSS holds at 100,000 programs: the interpreter and imports (~125 MiB), the 100,000
validated questions built before the clock starts (~790 MiB, the input every refresh holds),
the 100,000 answers (~190 MiB, the output the snapshot is written from), and what the executor
and the market hold meanwhile. The executor streams programs through a bounded window and drops
each response once no program left needs it; the market keeps the series of at most
`refresh_core.BARS_CACHE` instruments (a data service is another process in production, and its
working set is not the pipeline's) and has at most `refresh_core.INDEX_MEMBERS` members per
index (more entities make more indices, as in a real market, so per-program work does not grow
with the universe).

construction: `materialize_pool` (the construction assets) on the embedded catalog (template verbalizer) with the pool policy's
caps (per signature, per tool) multiplied by each factor, in a fresh process each; reported:
pool size, build seconds (and per stage), questions/s, peak RSS.

Exit code 1 when a refresh target is missed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REFRESH_CORE = REPO / "benchmarks" / "refresh_core.py"
SHAPES = 14  # len(refresh_core.SHAPES): entities off its multiples
TARGET_100K_S = 60.0
TARGET_RSS_MIB = 1536.0
TARGET_GROWTH = 12.0  # time ratio allowed for 10x the programs


@dataclass(frozen=True)
class RefreshPoint:
    programs: int
    entities: int
    wall_s: float
    cpu_s: float
    unique_per_program: float
    peak_rss_mib: float
    not_ok: int

    @property
    def programs_per_s(self) -> float:
        return self.programs / self.wall_s


def entities_for(programs: int, per_entity: int) -> int:
    """N / per-entity entities, nudged off multiples of the shape count (refresh_core refuses those:
    shapes would align with entities and some entity would only ever get one shape)."""
    entities = max(1, -(-programs // per_entity))
    while entities % SHAPES == 0:
        entities += 1
    return entities


def _figure(text: str, label: str) -> str:
    match = re.search(rf"^{re.escape(label)}\s+(.+)$", text, re.MULTILINE)
    if match is None:
        raise SystemExit(f"refresh_core printed no {label!r} line:\n{text[-2000:]}")
    return match.group(1)


def run_refresh(programs: int, per_entity: int, call_cost_ms: float) -> RefreshPoint:
    entities = entities_for(programs, per_entity)
    done = subprocess.run([sys.executable, str(REFRESH_CORE), "--programs", str(programs), "--entities", str(entities),
                           "--call-cost-ms", str(call_cost_ms)], capture_output=True, text=True, cwd=REPO)
    # refresh_core exits 1 when ITS targets (sized for 10,000) are missed; only a crash is fatal here.
    if "programs/s" not in done.stdout:
        raise SystemExit(f"refresh_core failed at {programs} programs:\n{done.stderr[-3000:]}")
    statuses = dict(re.findall(r"(\w+)=(\d+)", _figure(done.stdout, "answers by status")))
    return RefreshPoint(
        programs=programs, entities=entities, wall_s=float(_figure(done.stdout, "wall s").split()[0]),
        cpu_s=float(_figure(done.stdout, "process CPU s")),
        unique_per_program=float(_figure(done.stdout, "unique calls per program")),
        peak_rss_mib=float(_figure(done.stdout, "peak RSS MiB")),
        not_ok=int(statuses.get("empty", 0)) + int(statuses.get("error", 0)),
    )


def refresh_report(points: list[RefreshPoint]) -> tuple[list[str], bool]:
    lines = ["| programs | entities | wall s | CPU s | programs/s | unique calls/program | peak RSS MiB "
             "| time growth vs previous (wall / CPU) | RSS growth |",
             "|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    ok = True
    growths: list[str] = []  # wall / CPU ratios of each 10x step
    growth_ok = True
    for previous, point in zip([None, *points], points):
        growth, rss = "-", "-"
        if previous is not None:
            factor = point.programs / previous.programs
            wall_ratio, cpu_ratio = point.wall_s / previous.wall_s, point.cpu_s / previous.cpu_s
            growth = f"{wall_ratio:.1f}x / {cpu_ratio:.1f}x for {factor:.0f}x programs"
            rss = f"{point.peak_rss_mib / previous.peak_rss_mib:.2f}x"
            if factor == 10:
                growths.append(f"{previous.programs:,} -> {point.programs:,}: {wall_ratio:.1f}x / {cpu_ratio:.1f}x")
                growth_ok = growth_ok and wall_ratio <= TARGET_GROWTH and cpu_ratio <= TARGET_GROWTH
        lines.append(f"| {point.programs:,} | {point.entities:,} | {point.wall_s:.1f} | {point.cpu_s:.1f} "
                     f"| {point.programs_per_s:,.0f} | {point.unique_per_program:.3f} | {point.peak_rss_mib:,.0f} "
                     f"| {growth} | {rss} |")
        if point.not_ok:
            ok = False
            lines.append(f"FAIL  {point.not_ok} program(s) of {point.programs} did not answer ok")
    big = [p for p in points if p.programs == 100_000]
    for p in big:
        for name, passed in ((f"100,000 programs in < {TARGET_100K_S:.0f} s (wall {p.wall_s:.1f} s, CPU {p.cpu_s:.1f} s)",
                              p.wall_s < TARGET_100K_S),
                             (f"peak RSS < {TARGET_RSS_MIB:.0f} MiB ({p.peak_rss_mib:.0f})", p.peak_rss_mib < TARGET_RSS_MIB)):
            lines.append(f"{'PASS' if passed else 'FAIL'}  {name}")
            ok = ok and passed
    if growths:
        lines.append(f"{'PASS' if growth_ok else 'FAIL'}  growth: 10x the programs costs at most {TARGET_GROWTH:.0f}x "
                     f"the time, wall and CPU ({'; '.join(growths)})")
    return lines, ok and growth_ok


# --------------------------------------------------------------------------- construction

_CONSTRUCTION_CHILD = """
import datetime as dt, json, resource, sys, tempfile, time
from livesearch_pipeline.construction.pool import PoolPolicy
from livesearch_pipeline.defs.construction.materialize import materialize_pool
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource

clock, factor = dt.date.fromisoformat(sys.argv[1]), int(sys.argv[2])
base = PoolPolicy()
policy = PoolPolicy(max_per_signature=base.max_per_signature * factor, max_per_tool=base.max_per_tool * factor,
                    max_per_chain=base.max_per_chain * factor, max_slow_per_chain=base.max_slow_per_chain * factor,
                    max_per_chain_signature=base.max_per_chain_signature * factor, seed=base.seed)
names = {"tool_catalog": "probe", "tool_probe": "probe", "coverage": "coverage", "candidates": "enumerate",
         "candidate_dynamics": "dynamics", "verbalized_questions": "verbalize", "question_pool": "pool", "total": "total"}

with tempfile.TemporaryDirectory() as scratch:
    started, cpu = time.perf_counter(), time.process_time()
    built = materialize_pool(as_of=clock, policy=policy, resources={
        "data_service": DataServiceResource(kind="embedded", clock=clock.isoformat()),
        "storage": StorageResource(root=scratch)})
    stages = {}
    for step, seconds in built.step_seconds.items():
        stages[names[step]] = stages.get(names[step], 0.0) + seconds
    print(json.dumps({"factor": factor, "pool_size": built.manifest.questions, "wall_s": time.perf_counter() - started,
                      "cpu_s": time.process_time() - cpu, "stages": stages,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_construction(factors: list[int], clock: dt.date) -> list[str]:
    lines = ["| pool caps | pool size | build s | CPU s | questions/s | peak RSS MiB | slowest stages |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for factor in factors:
        done = subprocess.run([sys.executable, "-c", _CONSTRUCTION_CHILD, clock.isoformat(), str(factor)],
                              capture_output=True, text=True, cwd=REPO)
        if done.returncode != 0:
            raise SystemExit(f"construction at factor {factor} failed:\n{done.stderr[-3000:]}")
        row = json.loads(done.stdout.strip().splitlines()[-1])
        slowest = sorted(((k, v) for k, v in row["stages"].items() if k != "total"), key=lambda kv: -kv[1])[:3]
        stages = ", ".join(f"{k} {v:.0f} s" for k, v in slowest)
        lines.append(f"| x{factor} | {row['pool_size']:,} | {row['wall_s']:.0f} | {row['cpu_s']:.0f} "
                     f"| {row['pool_size'] / row['wall_s']:.1f} | {row['peak_rss_mib']:.0f} | {stages} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    refresh = sub.add_parser("refresh")
    refresh.add_argument("--programs", default="1000,10000,100000")
    refresh.add_argument("--per-entity", type=int, default=20)
    refresh.add_argument("--call-cost-ms", type=float, default=1.5)
    construction = sub.add_parser("construction")
    construction.add_argument("--factors", default="1,2,4")
    construction.add_argument("--clock", type=dt.date.fromisoformat, default=dt.date(2026, 11, 27))
    args = parser.parse_args(argv)
    if args.what == "refresh":
        sizes = sorted(int(n) for n in args.programs.split(","))
        points = []
        for n in sizes:
            points.append(run_refresh(n, args.per_entity, args.call_cost_ms))
            print(f"... {n:,} programs: {points[-1].wall_s:.1f} s wall", flush=True)
        lines, ok = refresh_report(points)
        print("\n".join(lines))
        return 0 if ok else 1
    print("\n".join(run_construction(sorted(int(f) for f in args.factors.split(",")), args.clock)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
