"""`livesearch gate` (date gate) and `livesearch match` (answer matching): the command line over the pure core.

An entry point beside `cli` rather than inside `core`, which stays free of argument parsing and printing; the
construction area has no commands of its own (`livesearch build-pool` materialises its assets, in
`pipeline_commands`)."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys

from pydantic import ValidationError

from livesearch_pipeline.cliargs import accept_dash_values
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.matching import match_answer, parse_date
from livesearch_pipeline.core.models import MatchRule
from livesearch_pipeline.core.normalize import LANGUAGES

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this area's subcommands to the `livesearch` parser."""
    gate = subparsers.add_parser(
        "gate",
        help="check question texts for absolute dates (exit 1 if any is rejected)",
        description="Check each TEXT against the date gate (docs/design.md §4.4): any absolute date rejects it.",
    )
    gate.add_argument("texts", nargs="+", metavar="TEXT", help="question text to check")
    gate.set_defaults(func=run_gate)

    match = subparsers.add_parser(
        "match",
        help="score one answer against a gold value under a matching rule",
        description="Score ANSWER against the gold value V under a matching rule (docs/design.md §4.3). "
        "Exit 0 when correct, 1 when wrong or undecidable without a judge, 2 on bad input.",
    )
    match.add_argument("--match", required=True, dest="rule_json", metavar="JSON",
                       help='matching rule, e.g. \'{"rule":"approx","rel_tol":0.01,"unit":"USD"}\'')
    match.add_argument("--value", required=True, metavar="V",
                       help="gold value, expressed in the rule's unit (or --value-unit)")
    match.add_argument("--value-unit", default=None, metavar="U", help="unit of V when not the rule's")
    match.add_argument("--value-type", choices=("auto", "number", "text", "date"), default="auto",
                       help="read V as a number, as text or as a date (auto: from the rule and V's form: a "
                       "date when V is written as one, or is 8 digits and the rule is a unitless exact rule "
                       "as dates have; text under a semantic rule; else a number when it parses as one)")
    match.add_argument("--answer", required=True, metavar="TEXT",
                       help="the agent's answer (a negative one too: --answer -147.80万元)")
    match.add_argument("--lang", choices=LANGUAGES, default="en",
                       help="the text the answer replies to: zh scores it in the Chinese text's unit at its "
                       "precision (the rule's unit_zh/decimals_zh; without them the Chinese unit of the rule's, "
                       "e.g. 万元 for million CNY, at the rule's decimals)")
    accept_dash_values(match)
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


_DATE_FORM = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{4}年\d{1,2}月\d{1,2}日")


def _is_date_rule(rule: MatchRule) -> bool:
    """Dates are scored by an exact rule with no unit, decimals or tolerance (the clamp makes
    every date format so); a number under such a rule is an exact count or code."""
    return (rule.rule == "exact" and rule.unit is None and rule.decimals is None
            and rule.abs_tol is None and rule.rel_tol is None)


def _gold_value(raw: str, value_type: str, rule: MatchRule) -> float | str:
    """The gold value as `match_answer` takes it: a float, a text, or a date as YYYY-MM-DD."""
    date = parse_date(raw.strip())
    if value_type == "date":
        if date is None:
            raise ValueError(f"--value {raw!r} is not a date (e.g. 20140914 or 2014-09-14)")
        return date.isoformat()
    if value_type == "auto" and date is not None and (
            _DATE_FORM.fullmatch(raw.strip()) or (re.fullmatch(r"\d{8}", raw.strip()) and _is_date_rule(rule))):
        return date.isoformat()
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
        outcome = match_answer(rule, gold, args.answer, gold_unit=args.value_unit, lang=args.lang)
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
