"""Soundness, spread, withdrawal and scale figures of a built pool (issue 20).

    python benchmarks/pool_soundness.py [--data DIR]

Reads `<data>/pool/questions.jsonl`, the frozen gold of every day under `<data>/gold/` and the
construction tables, and prints:

- unsound aggregates: questions whose program aggregates a derived or bound field over a window
  (the previous close, the limit prices, the repurchase price limits, a previous settle), sums a
  stock or level (balances, holdings, shares on loan, total shares, market values, prices,
  ratios, rates, NAVs) or aggregates a daily extreme other than by its own extreme; judged by
  field name lists written here, independently of the lexicon marks construction uses;
- the share of instrument questions (equities, funds, indices) at each visibility level 0..10,
  and the market-wide series counted apart;
- questions withdrawn (no `ok` gold) on every frozen day, and on each day;
- numeric gold answers with a scale word (thousand/million/billion/trillion) whose value in that
  scale is under 1;
- the enumeration and dynamics filters of the semantic rules and of the withdrawal drop.

Targets (exit code 1 when one is missed): 0 unsound aggregates, every level 5-14 % of the
instrument questions, 0 questions withdrawn on all frozen days (when two or more are frozen),
scale words under 1 on at most 1 % of numeric answers.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INSTRUMENTS = {"cn_equity", "hk_equity", "us_equity", "index", "fund"}
# Independent of the lexicon: the names a reviewer would list.
DERIVED_OR_BOUND = {"pre_close", "up_limit", "down_limit", "high_limit", "low_limit", "pre_settle"}
STOCK_OR_LEVEL_SUM = {
    "total_share", "float_share", "free_share", "total_mv", "circ_mv", "float_mv", "free_mv", "rzye", "rqye",
    "rzrqye", "rqyl", "net_asset", "fd_share", "total_size", "after_share", "open", "high", "low", "close",
    "unit_nav", "accum_nav", "adj_nav", "nav", "ratio", "turnover_rate", "pe_ttm", "pb", "price",
}
HOLDING_TOOLS = {("hk_hold", "vol"), ("repurchase", "vol"), ("repurchase", "amount"), ("fund_portfolio", "amount")}
EXTREMES = {"high": {"max", "argmax"}, "low": {"min", "argmin"}, "bid_high": {"max", "argmax"},
            "ask_high": {"max", "argmax"}, "bid_low": {"min", "argmin"}, "ask_low": {"min", "argmin"}}
ARTEFACTS = {"tick_qty"}
SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def reads(program: dict) -> list[tuple[str, str | None, str | None]]:
    tools = {c["id"]: c["tool"] for c in program["calls"]}
    ex = program["extract"]
    out = [(tools[ex["call"]], ex.get("field"), ex.get("aggregate"))]
    other = (ex.get("combine") or {}).get("other")
    if other:
        out.append((tools[other["call"]], other.get("field"), other.get("aggregate")))
    return out


def unsound(program: dict) -> str | None:
    for tool, field, aggregate in reads(program):
        if aggregate is None or field is None:
            continue
        if field in DERIVED_OR_BOUND:
            return f"{aggregate} of derived/bound {field}"
        if aggregate == "sum" and (field in STOCK_OR_LEVEL_SUM or (tool, field) in HOLDING_TOOLS):
            return f"sum of stock/level {tool}.{field}"
        if field in EXTREMES and aggregate not in EXTREMES[field]:
            return f"{aggregate} of daily extreme {field}"
        if field in ARTEFACTS:
            return f"{aggregate} of artefact {field}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO / "data")
    args = parser.parse_args(argv)
    pool = read_jsonl(args.data / "pool" / "questions.jsonl")
    print(f"pool: {len(pool)} questions")
    failures = []

    bad = Counter()
    for q in pool:
        why = unsound(q["program"])
        if why:
            bad[why] += 1
    print(f"unsound aggregates: {sum(bad.values())}", dict(bad.most_common(10)))
    if bad:
        failures.append("unsound aggregates")

    instruments = [q for q in pool if q["asset_class"] in INSTRUMENTS]
    levels = Counter(q["visibility"] for q in instruments)
    shares = {level: levels[level] / len(instruments) for level in range(11)} if instruments else {}
    print(f"instrument questions: {len(instruments)}; market-wide series: {len(pool) - len(instruments)}")
    print("visibility shares: " + ", ".join(f"{lv}: {levels[lv]} ({s:.1%})" for lv, s in shares.items()))
    if not shares or not all(0.05 <= s <= 0.14 for s in shares.values()):
        failures.append("visibility spread")

    gold_dir = args.data / "gold"
    days = sorted(p for p in gold_dir.glob("gold_answers_*.jsonl"))
    qids = {q["qid"] for q in pool}
    not_ok: dict[str, set[str]] = {}
    numeric = under_one = 0
    under_examples = []
    for path in days:
        answers = [a for a in read_jsonl(path) if a["qid"] in qids]
        day = path.stem.replace("gold_answers_", "")
        not_ok[day] = {a["qid"] for a in answers if a["status"] != "ok"}
        for a in answers:
            value, unit = a.get("value"), a.get("unit") or ""
            if a["status"] != "ok" or not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            numeric += 1
            word = unit.split(" ")[0] if " " in unit else ""
            if word in SCALE_WORDS:
                # The gold value is in the answer's unit (its scale word applied).
                if abs(value) < 1:
                    under_one += 1
                    under_examples.append((a["qid"], value, unit))
    for day, missing in not_ok.items():
        print(f"withdrawn on {day}: {len(missing)}")
    on_all = set.intersection(*not_ok.values()) if len(not_ok) >= 2 else set()
    print(f"withdrawn on every frozen day ({len(not_ok)}): {len(on_all)}", sorted(on_all)[:5])
    if len(not_ok) >= 2 and on_all:
        failures.append("withdrawn on every day")
    share = under_one / numeric if numeric else 0.0
    print(f"scale word on a value under 1: {under_one} of {numeric} numeric answers ({share:.2%})",
          under_examples[:3])
    if share > 0.01:
        failures.append("scale words under 1")

    for table in ("enumeration_filters.jsonl", "dynamics_filters.jsonl"):
        path = args.data / "construction" / table
        if path.exists():
            rows = {r["filter"]: r["dropped"] for r in read_jsonl(path)
                    if r["filter"].startswith(("semantic_", "dynamics_withdrawn", "dynamics_unreliable"))}
            print(f"{table}: {rows}")
    if failures:
        print("MISSED: " + ", ".join(failures))
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
