"""A careful searcher's sample (issue 39): a fresh sample of a day's web-answerable questions for a
person (or a model told to work as one) to answer through the offline web alone, and its score at
two read budgets.

    python benchmarks/searcher_sample.py sample --data data --date D --per-band 10 --seed 7 --out sample.jsonl
    python benchmarks/searcher_sample.py score --data data --date D --answers answers.jsonl [--budgets 6,20]

`sample` draws `--per-band` questions from each visibility band (low 0-3, mid 4-6, high 7-10 and
market-wide series) among D's web-answerable questions (the evidence map's: evidence present, not
tools-only), seeded, and writes one line per question: qid, band, tier, and the texts (English,
Chinese where there is one) - never the gold, the effort or the program. The searcher answers each
through `livesearch serve-web --date D` only (its search API and pages), never reading files, and
writes one line per question:

    {"qid": "...", "answer": "...", "lang": "en", "searches": 2, "reads": 7,
     "answer_at_6": "..." | null, "note": "..."}

`reads` counts the distinct pages opened for the question; `answer_at_6` is the answer the
searcher had after its sixth read and sixth search (null: none yet), so one pass gives both
budgets. `score` matches each answer with the evaluator's rules against D's gold and prints the
score at each budget (an answer counts at budget B when `reads <= B` and `searches <= B`, or, for
B = 6, from `answer_at_6`), by band and tier, with each question's effort beside the reads it took,
and every miss at the largest budget with its kind: over the budget, no answer, or wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BANDS = ("low", "mid", "high", "market")


def _day_files(data: Path, date: str) -> tuple[Path, Path, Path]:
    served = data / "served" / f"served_questions_{date}.jsonl"
    gold = data / "gold" / f"gold_answers_{date}.jsonl"
    web = data / "web" / date
    for path in (served, gold, web / "evidence.json"):
        if not path.exists():
            raise SystemExit(f"{path} does not exist: run `livesearch run --date {date}` first")
    return served, gold, web


def _band(question: dict, entry: dict) -> str:
    if question["asset_class"] in ("macro", "rates_fx", "market"):
        return "market"
    return str(entry["band"])


def sample(args: argparse.Namespace) -> int:
    served_path, _, web = _day_files(args.data, args.date)
    evidence = json.loads((web / "evidence.json").read_text(encoding="utf-8"))["questions"]
    served = [json.loads(line) for line in served_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_band: dict[str, list[dict]] = defaultdict(list)
    for question in served:
        entry = evidence.get(question["qid"])
        if entry is None or entry.get("tools_only") or not entry.get("present"):
            continue
        by_band[_band(question, entry)].append(question)
    rng = random.Random(args.seed)
    lines = []
    for band in BANDS:
        if band == "market" and not args.market:
            continue
        chosen = rng.sample(sorted(by_band[band], key=lambda q: q["qid"]), min(args.per_band, len(by_band[band])))
        for question in sorted(chosen, key=lambda q: q["qid"]):
            lines.append({"qid": question["qid"], "band": band, "tier": question["tier"],
                          "question": question["question"], "question_zh": question.get("question_zh")})
    args.out.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} questions ({args.per_band} per band) -> {args.out}")
    return 0


def score(args: argparse.Namespace) -> int:
    from livesearch_pipeline.core.models import Prediction
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.evaluation.scoring import score_deterministic

    served_path, gold_path, web = _day_files(args.data, args.date)
    evidence = json.loads((web / "evidence.json").read_text(encoding="utf-8"))["questions"]
    served = {q["qid"]: q for q in (json.loads(line) for line in served_path.read_text(encoding="utf-8").splitlines()
                                    if line.strip())}
    import datetime as dt

    gold = {a.qid: a for a in SnapshotStore(gold_path.parent).read(dt.date.fromisoformat(args.date))}
    answers = [json.loads(line) for line in args.answers.read_text(encoding="utf-8").splitlines() if line.strip()]
    budgets = [int(b) for b in args.budgets.split(",")]
    tally: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    rows = []
    for line in answers:
        qid = line["qid"]
        if qid not in gold or qid not in served:
            raise SystemExit(f"{args.answers}: {qid} is not a question of {args.date}")
        question, entry = served[qid], evidence.get(qid, {})
        band = _band(question, entry)
        reads, searches = int(line.get("reads", 0)), int(line.get("searches", 0))
        outcomes = {}
        for budget in budgets:
            answer = line.get("answer") if reads <= budget and searches <= budget else (
                line.get(f"answer_at_{budget}") if f"answer_at_{budget}" in line else None)
            verdict, _ = score_deterministic(gold[qid], Prediction(qid=qid, answer=answer, lang=line.get("lang")))
            outcomes[budget] = bool(verdict.correct)
            for key in ("all", f"band:{band}", f"tier:{question['tier']}"):
                tally[(budget, key)][0] += int(bool(verdict.correct))
                tally[(budget, key)][1] += 1
        largest = max(budgets)
        if not outcomes[largest]:
            kind = ("over the budget" if reads > largest or searches > largest
                    else "no answer" if not line.get("answer") else "wrong")
        else:
            kind = "correct"
        rows.append((qid, band, question["tier"], entry.get("effort"), reads, searches, outcomes, kind,
                     line.get("note", "")))
    for budget in budgets:
        print(f"within {budget} reads and {budget} searches:")
        for (b, key), (correct, n) in sorted(tally.items()):
            if b == budget:
                print(f"  {key:12s} {correct}/{n}  {correct / n:.0%}")
    print("qid                  band    tier effort reads searches " + " ".join(f"@{b}" for b in budgets) + "  at the largest")
    for qid, band, tier, effort, reads, searches, outcomes, kind, note in rows:
        marks = " ".join(" ✓ " if outcomes[b] else " ✗ " for b in budgets)
        print(f"{qid} {band:7s} {tier}   {str(effort):6s} {reads:5d} {searches:8d} {marks}  {kind}  {note[:60]}")
    below = [r for r in rows if r[3] is not None and r[6][max(budgets)] and r[4] < r[3]]
    print(f"correct answers with fewer reads than their effort: {len(below)}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    drawn = commands.add_parser("sample", help="draw the questions")
    drawn.add_argument("--data", type=Path, default=Path("data"))
    drawn.add_argument("--date", required=True)
    drawn.add_argument("--per-band", type=int, default=10)
    drawn.add_argument("--seed", type=int, required=True, help="a fresh seed per sample")
    drawn.add_argument("--market", action="store_true", help="also sample the market-wide series' band")
    drawn.add_argument("--out", type=Path, required=True)
    scored = commands.add_parser("score", help="score a searcher's answers")
    scored.add_argument("--data", type=Path, default=Path("data"))
    scored.add_argument("--date", required=True)
    scored.add_argument("--answers", type=Path, required=True)
    scored.add_argument("--budgets", default="6,20")
    args = parser.parse_args()
    return sample(args) if args.command == "sample" else score(args)


if __name__ == "__main__":
    sys.exit(main())
