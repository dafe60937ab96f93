"""The argument types of every `livesearch` subcommand: one spelling of each rule, one error message.

argparse calls a type with the argument's text and reports an `ArgumentTypeError` as
`livesearch <command>: error: argument --date: <message>` (exit status 2), so each message says
what was given and what was expected. Imports nothing of ours: every area's `commands` module
(and `pipeline_commands`) can use it.
"""

from __future__ import annotations

import argparse
import datetime as dt


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
