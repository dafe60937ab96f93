"""Exchange trading calendars (exchange-calendars), built once per process with a fixed span.

Calendars start on an explicit date (CALENDAR_START) instead of the library's 20-year default,
which keeps construction fast and states the earliest date the benchmark can be re-dated to.

They also END on an explicit date (CALENDAR_ENDS), never on the library's default (the day the
process runs plus one year): the synthetic market is generated over these sessions, so a span
that moved with the wall clock would make a past day's values depend on the day the process ran.
Ends are 31 December of a year, so that every yearly schedule of the market (dividends, reports,
holder events) either lies wholly inside the span or wholly after it.

Holidays come from the installed exchange-calendars. For years it does not know yet (it records
XSHG holidays year by year, as the exchanges announce them), a reviewed per-exchange supplement
in `holiday_supplements/<EXCHANGE>.yaml` fills in; the library always wins for a year it knows.
A date beyond the span is a CalendarRangeError that names the fix, never a guess.

The span can be overridden for a process with the environment variable LIVESEARCH_CALENDAR_ENDS
(`XSHG=2026-12-31,XNYS=2030-12-31`; exchanges not named keep their default), read when a
calendar is first built. It exists to test that extending a calendar changes no past value.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import os
from dataclasses import dataclass
from pathlib import Path

import exchange_calendars as xcals
import pandas as pd
import yaml
from exchange_calendars.exchange_calendar_xhkg import XHKGExchangeCalendar
from exchange_calendars.exchange_calendar_xnys import XNYSExchangeCalendar
from exchange_calendars.exchange_calendar_xshg import XSHGExchangeCalendar

CALENDAR_START = dt.date(2014, 1, 1)
CALENDARS = ("XSHG", "XHKG", "XNYS")
# The fixed last day of each calendar. Raise it (a 31 December) once the year after it is known
# for that exchange: from the installed exchange-calendars or from a reviewed supplement year.
CALENDAR_ENDS: dict[str, dt.date] = {
    "XSHG": dt.date(2027, 12, 31),
    "XHKG": dt.date(2027, 12, 31),
    "XNYS": dt.date(2027, 12, 31),
}
HORIZON_ENV = "LIVESEARCH_CALENDAR_ENDS"
SUPPLEMENT_DIR = Path(__file__).with_name("holiday_supplements")
SUPPLEMENT_STATUSES = ("provisional", "official")

_LIBRARY_CLASSES: dict[str, type[xcals.ExchangeCalendar]] = {
    "XSHG": XSHGExchangeCalendar,
    "XHKG": XHKGExchangeCalendar,
    "XNYS": XNYSExchangeCalendar,
}


class CalendarRangeError(ValueError):
    """A date outside the span a calendar knows."""


class HolidaySupplementError(ValueError):
    """A holiday-supplement file that is not well formed."""


# ------------------------------------------------------------------ holiday supplements


@dataclass(frozen=True)
class SupplementYear:
    year: int
    status: str  # "provisional" (derived from the rules) or "official" (the exchange's notice)
    source: str
    holidays: tuple[dt.date, ...]  # weekdays without a session, ascending


@dataclass(frozen=True)
class HolidaySupplement:
    exchange: str
    path: Path
    years: dict[int, SupplementYear]


def load_supplement(name: str, directory: Path = SUPPLEMENT_DIR) -> HolidaySupplement | None:
    """The holiday supplement of exchange `name` in `directory` (None when it has none),
    validated: every year has a status, a source and holidays that are weekdays of that year."""
    path = Path(directory) / f"{name}.yaml"
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise HolidaySupplementError(f"{path}: not valid YAML: {exc}") from exc
    where = str(path)
    if not isinstance(data, dict) or data.get("exchange") != name or not isinstance(data.get("years"), dict):
        raise HolidaySupplementError(f"{where}: expected a mapping with exchange: {name} and years: {{YEAR: ...}}")
    years: dict[int, SupplementYear] = {}
    for year, entry in data["years"].items():
        if not isinstance(year, int) or not isinstance(entry, dict):
            raise HolidaySupplementError(f"{where}: years must map an integer year to a mapping; got {year!r}")
        status, source, holidays = entry.get("status"), entry.get("source"), entry.get("holidays")
        if status not in SUPPLEMENT_STATUSES:
            raise HolidaySupplementError(f"{where}: year {year}: status must be one of {SUPPLEMENT_STATUSES}; got {status!r}")
        if not isinstance(source, str) or not source.strip():
            raise HolidaySupplementError(f"{where}: year {year}: a source (the notice or the rule used) is required")
        if not isinstance(holidays, list) or not holidays:
            raise HolidaySupplementError(f"{where}: year {year}: holidays must be a non-empty list")
        days = []
        for item in holidays:
            day = item.get("date") if isinstance(item, dict) else None
            if not isinstance(day, dt.date) or isinstance(day, dt.datetime):
                raise HolidaySupplementError(f"{where}: year {year}: each holiday needs date: YYYY-MM-DD; got {item!r}")
            if day.year != year:
                raise HolidaySupplementError(f"{where}: year {year}: {day} is not in {year}")
            if day.weekday() >= 5:
                raise HolidaySupplementError(f"{where}: year {year}: {day} is a weekend day (weekends are never sessions)")
            days.append(day)
        if len(set(days)) != len(days):
            raise HolidaySupplementError(f"{where}: year {year}: a holiday is listed twice")
        years[year] = SupplementYear(year, status, source.strip(), tuple(sorted(days)))
    return HolidaySupplement(name, path, years)


def library_last_day(name: str) -> dt.date | None:
    """The last day whose holidays the installed exchange-calendars knows (None: no limit)."""
    bound = _library_class(name).bound_max()
    return None if bound is None else bound.date()


def _library_class(name: str) -> type[xcals.ExchangeCalendar]:
    if name not in _LIBRARY_CLASSES:
        raise ValueError(f"unknown calendar {name!r}; expected one of {', '.join(CALENDARS)}")
    return _LIBRARY_CLASSES[name]


def supplement_years_used(name: str, end: dt.date, directory: Path = SUPPLEMENT_DIR) -> tuple[SupplementYear, ...]:
    """The supplement years a calendar ending on `end` needs: those after the library's last
    known year, up to `end`. Raises CalendarRangeError naming the fix when one is missing."""
    library_last = library_last_day(name)
    if library_last is None or end <= library_last:
        return ()
    supplement = load_supplement(name, directory)
    needed = range(library_last.year + 1, end.year + 1)
    missing = [y for y in needed if supplement is None or y not in supplement.years]
    if missing:
        raise CalendarRangeError(
            f"the {name} calendar cannot extend to {end}: exchange-calendars {xcals.__version__} knows {name} holidays "
            f"through {library_last} and {Path(directory) / (name + '.yaml')} has no year {missing[0]}. "
            f"{_fix_hint(name, missing[0])}"
        )
    return tuple(supplement.years[y] for y in needed)


def _fix_hint(name: str, year: int) -> str:
    return (
        f"Fix: add {year} to livesearch_pipeline/core/holiday_supplements/{name}.yaml from the exchange's holiday "
        f"notice, or upgrade exchange-calendars to a release that knows {name} {year}; then raise "
        f"CALENDAR_ENDS[{name!r}] in livesearch_pipeline/core/calendars.py to {year}-12-31."
    )


# ------------------------------------------------------------------ spans


def configured_ends() -> dict[str, dt.date]:
    """CALENDAR_ENDS with the LIVESEARCH_CALENDAR_ENDS overrides applied (validated)."""
    ends = dict(CALENDAR_ENDS)
    text = os.environ.get(HORIZON_ENV, "").strip()
    if not text:
        return ends
    for item in text.split(","):
        name, sep, value = item.strip().partition("=")
        if not sep or name not in CALENDARS:
            raise ValueError(f"{HORIZON_ENV}: expected EXCHANGE=YYYY-12-31 items ({', '.join(CALENDARS)}); got {item!r}")
        try:
            day = dt.date.fromisoformat(value.strip())
        except ValueError as exc:
            raise ValueError(f"{HORIZON_ENV}: {item!r}: {exc}") from exc
        ends[name] = day
    return ends


@functools.cache
def calendar_end(name: str) -> dt.date:
    """The fixed last day of calendar `name` (31 December of a year); the override variable is
    read once per process, when the first calendar is built or checked."""
    _library_class(name)
    end = configured_ends()[name]
    if (end.month, end.day) != (12, 31) or end.year <= CALENDAR_START.year:
        raise ValueError(f"the {name} calendar end must be 31 December of a year after {CALENDAR_START.year}; got {end}")
    return end


def build_calendar(name: str, end: dt.date, supplements: Path = SUPPLEMENT_DIR) -> xcals.ExchangeCalendar:
    """Calendar `name` from CALENDAR_START to `end`: the library's holidays, plus the supplement's
    for the years after the library's last known one (never for a year the library knows)."""
    base = _library_class(name)
    extra = supplement_years_used(name, end, supplements)
    if not extra:
        return base(start=CALENDAR_START.isoformat(), end=end.isoformat())
    added = [pd.Timestamp(d) for year in extra for d in year.holidays]
    last_known = pd.Timestamp(dt.date(extra[-1].year, 12, 31))

    class Supplemented(base):  # type: ignore[valid-type, misc]
        @classmethod
        def bound_max(cls) -> pd.Timestamp:
            return last_known

        @property
        def adhoc_holidays(self):
            return list(super().adhoc_holidays) + added

    Supplemented.__name__ = Supplemented.__qualname__ = f"{base.__name__}WithSupplement"
    return Supplemented(start=CALENDAR_START.isoformat(), end=end.isoformat())


@functools.cache
def _calendar_to(name: str, end: dt.date) -> xcals.ExchangeCalendar:
    return build_calendar(name, end)


@functools.cache
def get_calendar(name: str) -> xcals.ExchangeCalendar:
    return _calendar_to(name, calendar_end(name))


@functools.cache
def session_dates(name: str) -> tuple[dt.date, ...]:
    """All sessions of the calendar as plain dates, ascending."""
    return tuple(ts.date() for ts in get_calendar(name).sessions)


def horizon(name: str) -> dt.date:
    """The last day calendar `name` covers (its end; the last session is on or before it)."""
    get_calendar(name)  # the span must also be buildable (known holidays), not just configured
    return calendar_end(name)


def ensure_within_horizon(day: dt.date) -> None:
    """Raise CalendarRangeError (naming the fix) unless every calendar covers `day`.

    The refresh plan calls this before executing anything: past a calendar's horizon its market
    has no sessions, and a day would silently lose that market's data."""
    for name in CALENDARS:
        _check_range(name, day)


def _check_range(name: str, day: dt.date) -> None:
    end = horizon(name)
    if CALENDAR_START <= day <= end:
        return
    first = session_dates(name)[0]
    if day < CALENDAR_START:
        raise CalendarRangeError(f"{day.isoformat()} is outside the {name} calendar ({first}..{end}): it starts on {CALENDAR_START}")
    library_last = library_last_day(name)
    knows = f"exchange-calendars {xcals.__version__} knows {name} holidays " + (
        "without a year limit" if library_last is None else f"through {library_last}"
    )
    supplement = load_supplement(name)
    known_years = sorted(y for y in supplement.years if library_last is None or y > library_last.year) if supplement else []
    if known_years:
        knows += f", the holiday supplement through {known_years[-1]}"
    if day.year in known_years or library_last is None or day <= library_last:
        fix = f"Fix: raise CALENDAR_ENDS[{name!r}] in livesearch_pipeline/core/calendars.py to {day.year}-12-31."
    else:
        fix = _fix_hint(name, day.year)
    raise CalendarRangeError(f"{day.isoformat()} is outside the {name} calendar ({first}..{end}; {knows}). {fix}")


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


# ------------------------------------------------------------------ the days the benchmark refreshes


def pinned_end() -> dt.date:
    """The last day every calendar covers in the pinned data (CALENDAR_ENDS; never the override)."""
    return min(CALENDAR_ENDS.values())


@functools.cache
def trading_days(start: dt.date, end: dt.date) -> tuple[dt.date, ...]:
    """The days from `start` to `end` (inclusive) on which at least one of CALENDARS has a session:
    the benchmark's days (a day's gold needs a session of some market).

    Read from the pinned calendars (CALENDAR_START..CALENDAR_ENDS, the installed exchange-calendars
    and the reviewed supplements), never from LIVESEARCH_CALENDAR_ENDS: the result, and so the
    daily partitions built from it, is the same in every process and never reads the environment.
    Raises CalendarRangeError past the pinned span."""
    if start < CALENDAR_START or end > pinned_end():
        raise CalendarRangeError(f"trading days are known from {CALENDAR_START} to {pinned_end()} (CALENDAR_ENDS in "
                                 f"livesearch_pipeline/core/calendars.py); asked for {start}..{end}. To go further, "
                                 f"extend the calendars by a year (docs/operations.md, Trading calendars)")
    days: set[dt.date] = set()
    for name in CALENDARS:
        sessions = _calendar_to(name, CALENDAR_ENDS[name]).sessions
        days.update(ts.date() for ts in sessions[(sessions >= pd.Timestamp(start)) & (sessions <= pd.Timestamp(end))])
    return tuple(sorted(days))


def is_trading_day(day: dt.date) -> bool:
    """Whether Shanghai, Hong Kong or New York has a session on `day` (pinned calendars)."""
    return day in _trading_day_set()


def next_trading_day(day: dt.date) -> dt.date | None:
    """The first trading day after `day`; None past the pinned calendars' end."""
    days = trading_days(CALENDAR_START, pinned_end())
    i = bisect.bisect_right(days, day)
    return days[i] if i < len(days) else None


def previous_trading_day(day: dt.date) -> dt.date | None:
    """The last trading day before `day`; None before the calendars' start."""
    days = trading_days(CALENDAR_START, pinned_end())
    i = bisect.bisect_left(days, day) - 1
    return days[i] if i >= 0 else None


@functools.cache
def _trading_day_set() -> frozenset[dt.date]:
    return frozenset(trading_days(CALENDAR_START, pinned_end()))
