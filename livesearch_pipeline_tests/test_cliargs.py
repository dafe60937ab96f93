"""One set of argument types for every `livesearch` subcommand (livesearch_pipeline/cliargs.py)."""

from __future__ import annotations

import argparse
import datetime as dt

import pytest

from livesearch_pipeline.cli import build_parser, main
from livesearch_pipeline.cliargs import accept_dash_values, iso_date, positive_int


def test_a_date_is_read_as_yyyy_mm_dd():
    assert iso_date("2026-03-16") == dt.date(2026, 3, 16)
    for text in ("2026-13-01", "16/03/2026", "yesterday", ""):
        with pytest.raises(argparse.ArgumentTypeError, match=r"is not a date YYYY-MM-DD"):
            iso_date(text)


def test_a_positive_int_is_a_whole_number_of_at_least_one():
    assert positive_int("1") == 1 and positive_int("32") == 32
    for text in ("0", "-3", "2.5", "four", " 4"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"is not a positive whole number"):
            positive_int(text)


def test_accept_dash_values_reads_a_dash_token_after_an_option_as_its_value():
    parser = accept_dash_values(argparse.ArgumentParser(prog="p"))
    parser.add_argument("--answer")
    assert parser.parse_args(["--answer", "-147.80万元"]).answer == "-147.80万元"
    assert parser.parse_args(["--answer", "-$1.2"]).answer == "-$1.2"
    plain = argparse.ArgumentParser(prog="plain")
    plain.add_argument("--answer")
    with pytest.raises(SystemExit):  # what argparse does alone
        plain.parse_args(["--answer", "-147.80万元"])
    with_short = argparse.ArgumentParser(prog="short")
    with_short.add_argument("-v", action="store_true")
    with pytest.raises(ValueError, match=r"parser 'short' has single-dash options \['-v'\]"):
        accept_dash_values(with_short)


def _date_options(parser: argparse.ArgumentParser, command: tuple[str, ...] = ()):
    """(command, option, type) of every option of every subcommand, recursively."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _date_options(sub, (*command, name))
        elif action.option_strings:
            yield command, action.option_strings[-1], action.type


def test_every_subcommand_parses_dates_and_counts_with_the_shared_types():
    options = list(_date_options(build_parser()))
    dated = [(c, o) for c, o, t in options if t is iso_date]
    assert (("run",), "--date") in dated and (("refresh",), "--start") in dated and (("build-web",), "--date") in dated
    # No subcommand parses a date or a count with a type of its own.
    others = [(c, o, t) for c, o, t in options if callable(t) and t not in (iso_date, positive_int, int, float, str)
              and getattr(t, "__name__", "") in ("_date", "_positive_int", "fromisoformat")]
    assert others == []


@pytest.mark.parametrize("argv", [["run", "--date", "2026-02-30"], ["refresh", "--date", "26-1-1"],
                                  ["audit-stale", "--gold-dir", "g", "--date", "soon"]])
def test_a_bad_date_gets_the_same_message_from_every_command(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "is not a date YYYY-MM-DD" in capsys.readouterr().err
