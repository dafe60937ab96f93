"""The argument types of every `livesearch` subcommand: one spelling of each rule, one error message.

argparse calls a type with the argument's text and reports an `ArgumentTypeError` as
`livesearch <command>: error: argument --date: <message>` (exit status 2), so each message says
what was given and what was expected. `accept_dash_values` lets a parser's options take values
starting with '-' (a negative answer with its unit). Imports nothing of ours: every area's `commands` module
(and `pipeline_commands`) can use it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re


def iso_date(text: str) -> dt.date:
    """A calendar date written YYYY-MM-DD."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def positive_int(text: str) -> int:
    """A whole number of at least 1, written in decimal digits (no sign, no decimal point)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


# A token after an option that starts with one '-' and is not a single-dash option: a value. argparse's own
# pattern admits only plain negative numbers ("-147.80"), so "-147.80万元" or "-$1.2" were "unknown options".
_DASH_VALUE = re.compile(r"^-[^-]")


def accept_dash_values(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Let `parser`'s options take values that start with '-' ("--answer -147.80万元").

    argparse reads such a value as an option unless it is a plain negative number; for a parser
    whose only single-dash option is -h (its options are all spelled --name), any other token
    starting with one '-' can only be a value. ValueError when the parser has another
    single-dash option, which that reading would swallow.
    """
    short = sorted(o for action in parser._actions for o in action.option_strings
                   if _DASH_VALUE.match(o) and o != "-h")
    if short:
        raise ValueError(f"parser {parser.prog!r} has single-dash options {short}: a value starting with '-' "
                         "could not be told from them")
    # The pattern argparse tells negative numbers by (its one hook for this; CPython 3.11 to 3.14).
    parser._negative_number_matcher = _DASH_VALUE
    return parser
