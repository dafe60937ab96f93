"""Issue 39's difficulty figures of one day of a data root, from the files `make run` leaves.

    python benchmarks/difficulty.py --data data [--date 2026-12-04]

Printed: the pool's size and tiers; the share of entity questions whose English text gives no code
(an exchange code or a parenthesised ticker); from the evidence map of D's web
(`web/<D>/evidence.json`), the web-answerable questions, the share whose effort (the exact fewest
page reads) is above 6 and above 20, and per family (web/evidence.py `family_of`) the median
effort per visibility band with the low band's median over the high band's; and the day's
leaderboard (the navigator at 6 and 20 reads among the baselines). Targets (issue 39): effort
above 6 for at least 35% and above 20 for at least 15% of web-answerable questions; the low
band's median at least 3x the high band's in every family; at least 30% of entity questions
without a code.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

_CODE = re.compile(r"\d{6}\.(?:SH|SZ|BJ|OF|SI)|\d{5}\.HK|\([A-Z]{1,5}\)")
_INSTRUMENTS = ("cn_equity", "hk_equity", "us_equity", "index", "fund")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the data root (LIVESEARCH_DATA_DIR)")
    parser.add_argument("--date", default="2026-12-04", help="the day (YYYY-MM-DD) whose web and board to read")
    args = parser.parse_args(argv)
    pool = args.data / "pool" / "questions.jsonl"
    evidence_file = args.data / "web" / args.date / "evidence.json"
    for path in (pool, evidence_file):
        if not path.is_file():
            parser.error(f"{path} does not exist: run `livesearch run --date {args.date}` first")
    questions = [json.loads(line) for line in pool.read_text(encoding="utf-8").splitlines() if line.strip()]
    print(f"pool: {len(questions)} questions, tiers {dict(sorted(Counter(q['tier'] for q in questions).items()))}")
    entity = [q for q in questions if q.get("asset_class") in _INSTRUMENTS]
    free = [q for q in entity if not _CODE.search(q["question"])]
    print(f"entity questions without a code: {len(free)} of {len(entity)} ({len(free) / max(len(entity), 1):.1%})")
    entries = json.loads(evidence_file.read_text(encoding="utf-8"))["questions"]
    answerable = [e for e in entries.values() if e.get("present") and not e.get("tools_only")]
    efforts = [e["effort"] for e in answerable]
    print(f"web-answerable: {len(answerable)} of {len(entries)}; effort above 6: "
          f"{sum(x > 6 for x in efforts) / max(len(efforts), 1):.1%}, above 20: "
          f"{sum(x > 20 for x in efforts) / max(len(efforts), 1):.1%}")
    by_family: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for entry in answerable:
        by_family[str(entry.get("family"))][entry["band"]].append(entry["effort"])
    for family, bands in sorted(by_family.items()):
        medians = {band: statistics.median(values) for band, values in bands.items()}
        ratio = f"; low/high {medians['low'] / medians['high']:.1f}x" if medians.get("high") and "low" in medians else ""
        print(f"  {family}: " + ", ".join(f"{band} n={len(bands[band])} median {medians[band]}"
                                           for band in ("low", "mid", "high") if band in bands) + ratio)
    board = args.data / "runs" / args.date / "leaderboard" / "leaderboard.md"
    if board.is_file():
        print(board.read_text(encoding="utf-8").split("## Languages")[0].rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
