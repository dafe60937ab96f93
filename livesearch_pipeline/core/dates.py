"""Relative date specs (DESIGN §4.2): resolving them against an as-of date, and the date formats
tools and record keys use.

Formats are strftime patterns, plus two period formats that strftime cannot express:
- `YYYYMM`: a month, e.g. `202611`;
- `YYYYQn`: a quarter, e.g. `2026Q3`.

Period keys parse to the LAST day of their period (`202610` → 2026-10-31, `2026Q3` →
2026-09-30): a monthly or quarterly record describes its whole period, so it only counts as
"not after" a date once the period has ended, and a completed period's `edge="end"` date
formats back to the same key.

Resolution rules of `resolve_date`:
- `sessions_back=n` on `calendar`: the n-th session before the last session on or before D.
- `days_back=n`: D − n days; with `calendar`, rolled back to the last session on or before.
- `period` with `periods_back=n`: the n-th period before the most recent *completed* period,
  where completed means it ended on or before D (so on 2026-09-30 the third quarter of 2026
  is already complete). `edge` picks its first or last calendar day. With `calendar`, the
  edge is rolled into the period's trading days: `end` → last session on or before the end,
  `start` → first session on or after the start.
"""

from __future__ import annotations

import bisect
import calendar as _monthcal
import datetime as dt
import functools
import re

from livesearch_pipeline.core.calendars import (
    CalendarRangeError,
    session_dates,
    session_on_or_before,
    sessions_back,
)
from livesearch_pipeline.core.models import DateSpec

MONTH_FMT = "YYYYMM"
QUARTER_FMT = "YYYYQn"
PERIOD_FMTS = (MONTH_FMT, QUARTER_FMT)

_MONTHS_PER_PERIOD = {"month": 1, "quarter": 3, "half": 6, "year": 12}
_MONTH_KEY = re.compile(r"^(\d{4})(0[1-9]|1[0-2])$")
_QUARTER_KEY = re.compile(r"^(\d{4})Q([1-4])$")


def _month_end(year: int, month: int) -> dt.date:
    return dt.date(year, month, _monthcal.monthrange(year, month)[1])


def _period_bounds(period: str, year: int, index: int) -> tuple[dt.date, dt.date]:
    """First and last day of the `index`-th (0-based) period of `year`."""
    months = _MONTHS_PER_PERIOD[period]
    first_month = index * months + 1
    last_month = first_month + months - 1
    return dt.date(year, first_month, 1), _month_end(year, last_month)


def completed_period(period: str, as_of: dt.date, periods_back: int) -> tuple[dt.date, dt.date]:
    """Bounds of the `periods_back`-th period before the latest period ended on or before as_of."""
    if period not in _MONTHS_PER_PERIOD:
        raise ValueError(f"unknown period {period!r}; expected one of {sorted(_MONTHS_PER_PERIOD)}")
    per_year = 12 // _MONTHS_PER_PERIOD[period]
    current = as_of.year * per_year + (as_of.month - 1) // _MONTHS_PER_PERIOD[period]
    _, current_end = _period_bounds(period, *divmod(current, per_year))
    latest_completed = current if current_end <= as_of else current - 1
    return _period_bounds(period, *divmod(latest_completed - periods_back, per_year))


def _first_session_on_or_after(calendar_name: str, day: dt.date) -> dt.date:
    sessions = session_dates(calendar_name)
    i = bisect.bisect_left(sessions, day)
    if i >= len(sessions):
        raise CalendarRangeError(f"no {calendar_name} session on or after {day.isoformat()}")
    return sessions[i]


@functools.lru_cache(maxsize=65536)
def resolve_date(spec: DateSpec, as_of: dt.date) -> dt.date:
    """The concrete day `spec` denotes on as-of date `as_of` (rules in the module docstring)."""
    if spec.sessions_back is not None:
        assert spec.calendar is not None  # guaranteed by DateSpec's validator
        return sessions_back(spec.calendar, as_of, spec.sessions_back)
    if spec.days_back is not None:
        day = as_of - dt.timedelta(days=spec.days_back)
        return session_on_or_before(spec.calendar, day) if spec.calendar else day
    assert spec.period is not None and spec.periods_back is not None  # DateSpec's validator
    start, end = completed_period(spec.period, as_of, spec.periods_back)
    if spec.edge == "end":
        if spec.calendar is None:
            return end
        session = session_on_or_before(spec.calendar, end)
        if session < start:
            raise CalendarRangeError(f"no {spec.calendar} session in {start}..{end}")
        return session
    if spec.calendar is None:
        return start
    session = _first_session_on_or_after(spec.calendar, start)
    if session > end:
        raise CalendarRangeError(f"no {spec.calendar} session in {start}..{end}")
    return session


def format_date(day: dt.date, fmt: str) -> str:
    """Render `day` as a tool or key expects: strftime, `YYYYMM` or `YYYYQn`."""
    if fmt == MONTH_FMT:
        return f"{day.year:04d}{day.month:02d}"
    if fmt == QUARTER_FMT:
        return f"{day.year:04d}Q{(day.month - 1) // 3 + 1}"
    return day.strftime(fmt)


@functools.lru_cache(maxsize=65536)
def resolve_date_spec(spec: DateSpec, as_of: dt.date) -> str:
    """The argument string `spec` denotes on `as_of`."""
    return format_date(resolve_date(spec, as_of), spec.fmt)


def parse_datetime(text: str, fmt: str) -> dt.datetime:
    """Parse a time key, the inverse of `format_date`; period keys (`YYYYMM`/`YYYYQn`) give midnight
    of their period's LAST day (see module doc)."""
    if fmt == MONTH_FMT:
        match = _MONTH_KEY.match(text)
        if not match:
            raise ValueError(f"{text!r} is not a month in format YYYYMM (e.g. 202611)")
        day = _month_end(int(match[1]), int(match[2]))
        return dt.datetime(day.year, day.month, day.day)
    if fmt == QUARTER_FMT:
        match = _QUARTER_KEY.match(text)
        if not match:
            raise ValueError(f"{text!r} is not a quarter in format YYYYQn (e.g. 2026Q3)")
        _, day = _period_bounds("quarter", int(match[1]), int(match[2]) - 1)
        return dt.datetime(day.year, day.month, day.day)
    if fmt == "%Y%m%d" and len(text) == 8 and text.isascii() and text.isdigit():
        # The hot path for Tushare keys: strptime is an order of magnitude slower.
        try:
            return dt.datetime(int(text[:4]), int(text[4:6]), int(text[6:]))
        except ValueError as exc:
            raise ValueError(f"{text!r} is not a date in format {fmt!r}: {exc}") from None
    try:
        return dt.datetime.strptime(text, fmt)
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a date in format {fmt!r}: {exc}") from None
