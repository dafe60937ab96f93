"""Benchmark of the navigator baseline (issue 29): headroom by visibility on a built web of D.

    python benchmarks/navigator.py --pool data/pool --web data/web/D --gold data/gold/gold_answers_D.jsonl
                                   [--budgets 6,20,none] [--search-read] [--limit N] [--out report.json]

For each budget (`none`: no limit; a budget of N is N page reads and N searches per question, as
the daily baselines navigator-6 and navigator-20 declare) the navigator (evaluation/agents/navigator.py)
answers D's scoring set (the pool's questions whose gold of D is ok) over the web in --web,
served on 127.0.0.1; its answers are scored with the pipeline's matching rules against the gold.
Printed: accuracy by visibility band, tier and family (web/evidence.py `family_of`), the reads it
took, and for the largest budget every web-answerable question it misses with its cause (skipped
shape, budget spent, no page gave the quantity, a wrong value). The evidence map of the web for
that gold (built when missing) gives the effort medians per band and family and the
evidence-present share. With --search-read, the search-read baseline is scored the same way.

Targets (issue 29): navigator at 6 reads >= 80% in the high band, <= 35% in the low band, <= 40% on
T3; unlimited >= 98% of web-answerable questions; search-read below the navigator in every band;
median effort of window and screen questions in the low band >= 5 reads and >= 3x the high band's.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

WINDOW_FAMILIES = ("window", "screen")


def _budget(text: str) -> int | None:
    return None if text.lower() in ("none", "unlimited", "0") else int(text)


async def run_agent(kind: str, web_dir: Path, day: dt.date, served, budget: int | None, concurrency: int):
    from livesearch_pipeline.evaluation.agents.navigator import open_navigator
    from livesearch_pipeline.evaluation.agents.search_read import open_search_read_agent

    semaphore = asyncio.Semaphore(concurrency)
    opened = (open_navigator(web_dir=web_dir, day=day, name=f"navigator-{budget or 'all'}", read_budget=budget,
                             search_budget=budget, concurrency=concurrency) if kind == "navigator"
              else open_search_read_agent(web_dir=web_dir, day=day, name="search-read", concurrency=concurrency))
    async with opened as agent:
        async def one(question):
            async with semaphore:
                return await agent.answer(question)

        return await asyncio.gather(*(one(q) for q in served))


def cause(prediction, correct: bool, gold_answer: str) -> str:
    if correct:
        return "correct"
    final = next((e for e in reversed(prediction.trace or []) if e.get("type") in ("final", "skip")), {})
    if final.get("type") == "skip":
        return f"skipped: {final.get('reason')}"
    if prediction.answer is None:
        return str(final.get("reason") or "no answer")
    return f"wrong value: answered {prediction.answer!r}, gold {gold_answer!r}"


def score(predictions, by_qid, gold, evidence) -> dict:
    from livesearch_pipeline.core.matching import match_answer

    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    reads: dict[str, list[int]] = defaultdict(list)
    misses: list[dict] = []
    for prediction in predictions:
        answer = gold[prediction.qid]
        question = by_qid[prediction.qid]
        entry = evidence["questions"].get(prediction.qid, {})
        outcome = match_answer(question.match, answer.value, prediction.answer, gold_unit=answer.unit)
        family = entry.get("family", "?")
        band = entry.get("band", "?")
        keys = ["all", f"band:{band}", f"tier:{question.tier}", f"family:{family}", f"band/tier:{band}/{question.tier}",
                f"band/family:{band}/{family}"]
        if entry.get("tools_only"):
            keys.append("tools-only")
        else:
            keys.append("web-answerable")
        for key in keys:
            tally[key][0] += int(outcome.correct)
            tally[key][1] += 1
        final = next((e for e in reversed(prediction.trace or []) if e.get("type") == "final"), {})
        if isinstance(final.get("reads"), int):
            reads[f"band:{entry.get('band', '?')}"].append(final["reads"])
        if not outcome.correct and not entry.get("tools_only"):
            misses.append({"qid": prediction.qid, "band": entry.get("band"), "family": family, "tier": question.tier,
                           "effort": entry.get("effort"), "cause": cause(prediction, outcome.correct, answer.answer),
                           "question": question.question})
    return {"accuracy": {k: {"correct": c, "n": n, "share": round(c / n, 4) if n else None}
                         for k, (c, n) in sorted(tally.items())},
            "reads_median": {k: statistics.median(v) for k, v in sorted(reads.items()) if v},
            "misses": misses}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pool", type=Path, required=True)
    parser.add_argument("--web", type=Path, required=True, help="a built web directory of D (data/web/<D>)")
    parser.add_argument("--gold", type=Path, required=True, help="the gold snapshot of D (gold_answers_<D>.jsonl)")
    parser.add_argument("--budgets", default="6,20,none")
    parser.add_argument("--search-read", action="store_true")
    parser.add_argument("--limit", type=int, default=None, help="only the first N scored questions (by qid)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None, help="write the report as JSON here")
    args = parser.parse_args()

    from livesearch_pipeline.core.program import load_pool
    from livesearch_pipeline.core.snapshot import SnapshotStore, snapshot_date
    from livesearch_pipeline.refresh import served_from_pool
    from livesearch_pipeline.web.evidence import ensure_evidence_map
    from livesearch_pipeline.web.index import WebIndex

    day = snapshot_date(args.gold)
    if day is None:
        print(f"{args.gold}: not a gold snapshot file (gold_answers_<D>.jsonl)", file=sys.stderr)
        return 2
    if WebIndex(args.web).clock != day:
        print(f"{args.web}: the web of {WebIndex(args.web).clock}, not of the gold's day {day}", file=sys.stderr)
        return 2
    pool = load_pool(args.pool / "questions.jsonl")
    gold = {a.qid: a for a in SnapshotStore(args.gold.parent).read(day) if a.status == "ok"}
    started = time.monotonic()
    seed = json.loads((args.web / "manifest.json").read_text(encoding="utf-8"))["seed"]
    evidence = ensure_evidence_map(args.web, args.pool / "questions.jsonl", args.gold, seed=int(seed))
    print(f"evidence map: {time.monotonic() - started:.1f} s; present {evidence['summary']['evidence']}")
    effort = evidence["summary"]["effort"]
    print("effort (page reads) by band:", json.dumps(effort["by_band"]))
    for band in ("low", "mid", "high"):
        for family in sorted({e["family"] for e in evidence["questions"].values()}):
            figures = effort["by_band_family"].get(f"{band}/{family}")
            if figures:
                print(f"  effort {band}/{family}: {figures}")
    served = sorted((q for q in served_from_pool(pool) if q.qid in gold), key=lambda q: q.qid)
    if args.limit:
        served = served[: args.limit]
    by_qid = {q.qid: q for q in pool}
    report: dict = {"date": day.isoformat(), "questions": len(served), "evidence": evidence["summary"], "runs": {}}
    agents = [("navigator", _budget(b)) for b in args.budgets.split(",")]
    if args.search_read:
        agents.append(("search-read", None))
    for kind, budget in agents:
        name = kind if kind == "search-read" else f"navigator-{budget if budget is not None else 'unlimited'}"
        started = time.monotonic()
        predictions = asyncio.run(run_agent(kind, args.web, day, served, budget, args.concurrency))
        result = score(predictions, by_qid, gold, evidence)
        result["seconds"] = round(time.monotonic() - started, 1)
        report["runs"][name] = result
        acc = result["accuracy"]
        print(f"\n[{name}] {len(served)} questions in {result['seconds']} s; median reads {result['reads_median']}")
        for key, figures in acc.items():
            print(f"  {key:32s} {figures['correct']:5d}/{figures['n']:<5d} {figures['share']:.1%}")
    last = [name for name in report["runs"] if name.startswith("navigator")][-1]
    misses = report["runs"][last]["misses"]
    print(f"\n[{last}] misses {len(misses)} web-answerable questions; causes:")
    for reason, count in Counter(m["cause"].split(":")[0] for m in misses).most_common():
        print(f"  {count:5d}  {reason}")
    for miss in misses[:60]:
        print(f"  {miss['qid']} {miss['band']}/{miss['family']}/{miss['tier']} effort {miss['effort']}: {miss['cause']}"
              f"\n      {miss['question'][:160]}")
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
