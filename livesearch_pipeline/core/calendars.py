"""Exchange trading calendars (exchange-calendars), built once per process.

Calendars start on an explicit date (CALENDAR_START) instead of the library's 20-year default,
which keeps construction fast and states the earliest date the benchmark can be re-dated to.
Their end is the library's: holidays are only known for a limited horizon (XSHG's are recorded
year by year), and a date beyond it is an error, never a guess.
"""

from __future__ import annotations

import datetime as dt
import bisect
import functools

import exchange_calendars as xcals
import pandas as pd

CALENDAR_START = dt.date(2014, 1, 1)
CALENDARS = ("XSHG", "XHKG", "XNYS")


class CalendarRangeError(ValueError):
    """A date outside the span a calendar knows."""


@functools.cache
def get_calendar(name: str) -> xcals.ExchangeCalendar:
    if name not in CALENDARS:
        raise ValueError(f"unknown calendar {name!r}; expected one of {', '.join(CALENDARS)}")
    return xcals.get_calendar(name, start=CALENDAR_START.isoformat())


@functools.cache
def session_dates(name: str) -> tuple[dt.date, ...]:
    """All sessions of the calendar as plain dates, ascending."""
    return tuple(ts.date() for ts in get_calendar(name).sessions)


def _check_range(name: str, day: dt.date) -> None:
    cal = get_calendar(name)
    first, last = cal.first_session.date(), cal.last_session.date()
    if not (CALENDAR_START <= day <= last):
        raise CalendarRangeError(
            f"{day.isoformat()} is outside the {name} calendar ({first.isoformat()}..{last.isoformat()})"
        )


def is_session(name: str, day: dt.date) -> bool:
    _check_range(name, day)
    return get_calendar(name).is_session(pd.Timestamp(day))


def session_on_or_before(name: str, day: dt.date) -> dt.date:
    """The last session on or before `day`."""
    _check_range(name, day)
    sessions = session_dates(name)

    i = bisect.bisect_right(sessions, day) - 1
    if i < 0:
        raise CalendarRangeError(f"no {name} session on or before {day.isoformat()}")
    return sessions[i]


def sessions_back(name: str, day: dt.date, n: int) -> dt.date:
    """The n-th session before the last session on or before `day` (n=0: that session)."""

    _check_range(name, day)
    sessions = session_dates(name)
    i = bisect.bisect_right(sessions, day) - 1 - n
    if i < 0:
        raise CalendarRangeError(f"{n} sessions before {day.isoformat()} is before the {name} calendar starts")
    return sessions[i]


def sessions_between(name: str, start: dt.date, end: dt.date) -> list[dt.date]:
    """Sessions with start <= session <= end, ascending."""

    _check_range(name, start)
    _check_range(name, end)
    sessions = session_dates(name)
    return list(sessions[bisect.bisect_left(sessions, start) : bisect.bisect_right(sessions, end)])
