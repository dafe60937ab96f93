"""Text lint of a built pool (issue 28): the share of question texts the lint flags, and why.

    python benchmarks/text_lint.py [--data DIR] [--show N]

Reads `<data>/pool/questions.jsonl` and the catalog the pool was built from
(`<data>/pool/tool_catalog.json`), lints both texts of every question with the construction lint
(construction/lint.py, the same rules the verbalize stage rejects by), and prints the share of
questions with a finding (hard and soft), the count per rule, the texts with a gloss in
parentheses, the names that carry the market's construction prefix ("合成…", "Synthetic …"),
and N sample texts in each language. Exit code 1 when more than 5% of the questions are flagged
or any hard finding remains.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from livesearch_pipeline.construction.lint import lint_question  # noqa: E402
from livesearch_pipeline.construction.naming import service_names  # noqa: E402
from livesearch_pipeline.construction.verbalize import question_lint_context  # noqa: E402
from livesearch_pipeline.core.catalog import Catalog  # noqa: E402
from livesearch_pipeline.core.models import Question  # noqa: E402
from livesearch_pipeline.dataservice.market import shared_market  # noqa: E402

TARGET_SHARE = 0.05
_CODE_ARG = re.compile(r"^[0-9A-Z]{1,8}(?:\.[A-Z]{1,4})?$")
_PREFIX = re.compile(r"\bSynthetic\b|合成")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO / "data", help="data root holding pool/")
    parser.add_argument("--show", type=int, default=10, help="sample texts to print per language")
    args = parser.parse_args(argv)
    pool = args.data / "pool"
    questions = [Question.model_validate_json(line) for line in
                 (pool / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    catalog = Catalog.model_validate_json((pool / "tool_catalog.json").read_text(encoding="utf-8"))
    universe = shared_market().universe
    # Every name the service knows of an entity (construction/naming.py): a code-free text names it by
    # one (its English or a former name), as of the construction day when the data root records it.
    enumerated = args.data / "construction" / "enumeration_date.json"
    book = (service_names(dt.date.fromisoformat(json.loads(enumerated.read_text(encoding="utf-8"))["as_of"]))
            if enumerated.exists() else None)
    flagged, hard, rules = 0, 0, Counter()
    examples: dict[str, str] = {}
    for q in questions:
        codes = {str(v) for call in q.program.calls for v in call.args.values() if _CODE_ARG.match(str(v))}
        names = [universe.get(code).name for code in codes if universe.has(code)]
        names += [n for code in codes for n in (book.names_of(code) if book is not None else ())]
        findings = lint_question(q.question, q.question_zh, question_lint_context(q, catalog, names))
        if findings:
            flagged += 1
            hard += any(f.hard for f in findings)
        for f in findings:
            rules[f.rule] += 1
            examples.setdefault(f.rule, f"{q.qid}: {f} | {q.question}")
    glosses = rules["parenthetical_gloss"]
    prefixed = sum(1 for q in questions if _PREFIX.search(q.entity_name)
                   or _PREFIX.search(q.question) or _PREFIX.search(q.question_zh or ""))
    share = flagged / len(questions) if questions else 0.0
    print(f"{len(questions)} questions ({sum(1 for q in questions if q.question_zh)} with Chinese text)")
    print(f"flagged by the lint: {flagged} ({share:.1%}), with a hard finding: {hard}")
    print(f"texts with a gloss in parentheses: {glosses}; questions naming an entity with a construction prefix: {prefixed}")
    for rule, n in rules.most_common():
        print(f"  {rule:24s} {n:5d}  e.g. {examples[rule][:220]}")
    rng = random.Random(28)
    for q in rng.sample(questions, min(args.show, len(questions))):
        print(f"EN {q.question}")
        if q.question_zh:
            print(f"ZH {q.question_zh}")
    return 0 if share <= TARGET_SHARE and hard == 0 and prefixed == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
