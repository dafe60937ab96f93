"""`livesearch` subcommands of the core area: `gate` (date gate) and `match` (answer matching)."""

from __future__ import annotations

import argparse
import json
import math
import sys

from pydantic import ValidationError

from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.matching import match_answer
from livesearch_pipeline.core.models import MatchRule

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this area's subcommands to the `livesearch` parser."""
    gate = subparsers.add_parser(
        "gate",
        help="check question texts for absolute dates (exit 1 if any is rejected)",
        description="Check each TEXT against the date gate (DESIGN §4.4): any absolute date rejects it.",
    )
    gate.add_argument("texts", nargs="+", metavar="TEXT", help="question text to check")
    gate.set_defaults(func=run_gate)

    match = subparsers.add_parser(
        "match",
        help="score one answer against a gold value under a matching rule",
        description="Score ANSWER against the gold value V under a matching rule (DESIGN §4.3). "
        "Exit 0 when correct, 1 when wrong or undecidable without a judge, 2 on bad input.",
    )
    match.add_argument("--match", required=True, dest="rule_json", metavar="JSON",
                       help='matching rule, e.g. \'{"rule":"approx","rel_tol":0.01,"unit":"USD"}\'')
    match.add_argument("--value", required=True, metavar="V",
                       help="gold value, expressed in the rule's unit (or --value-unit)")
    match.add_argument("--value-unit", default=None, metavar="U", help="unit of V when not the rule's")
    match.add_argument("--value-type", choices=("auto", "number", "text"), default="auto",
                       help="read V as a number or as text (auto: a number when it parses as one "
                       "and the rule is not semantic)")
    match.add_argument("--answer", required=True, metavar="TEXT", help="the agent's answer")
    match.set_defaults(func=run_match)


def run_gate(args: argparse.Namespace) -> int:
    rejected = 0
    for text in args.texts:
        result = check_text(text)
        if result.passed:
            print(f"PASS: {text}")
            continue
        rejected += 1
        print(f"REJECT: {text}")
        for hit in result.hits:
            print(f"  [{hit.start}:{hit.end}] {hit.text!r}: {hit.reason}")
    return EXIT_FAILED if rejected else EXIT_OK


def _gold_value(raw: str, value_type: str, rule: MatchRule) -> float | str:
    if value_type == "text" or (value_type == "auto" and rule.rule == "semantic"):
        return raw
    try:
        number = float(raw.replace(",", "").replace("_", ""))
    except ValueError:
        if value_type == "number":
            raise ValueError(f"--value {raw!r} is not a number") from None
        return raw
    if not math.isfinite(number):
        raise ValueError(f"--value {raw!r} is not a finite number")
    return number


def run_match(args: argparse.Namespace) -> int:
    try:
        json.loads(args.rule_json)  # a syntax error gets its own, plainer message
        rule = MatchRule.model_validate_json(args.rule_json)
        gold = _gold_value(args.value, args.value_type, rule)
        outcome = match_answer(rule, gold, args.answer, gold_unit=args.value_unit)
    except json.JSONDecodeError as exc:
        print(f"livesearch match: --match is not valid JSON: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValidationError as exc:
        print(f"livesearch match: --match is not a valid matching rule:\n{exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:
        print(f"livesearch match: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if outcome.correct:
        print(f"CORRECT: {outcome.reason}")
        return EXIT_OK
    judge_note = " (undecided without an LLM judge)" if outcome.needs_judge else ""
    print(f"WRONG{judge_note}: {outcome.reason}")
    if outcome.candidates:
        print("  candidates: " + ", ".join(f"{c:.10g}" for c in outcome.candidates))
    return EXIT_FAILED
