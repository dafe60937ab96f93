from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.core.calendars import CalendarRangeError
from livesearch_pipeline.core.dates import (
    completed_period,
    format_date,
    parse_datetime,
    resolve_date,
    resolve_date_spec,
)
from livesearch_pipeline.core.models import DateSpec

D = dt.date


def spec(**kwargs) -> DateSpec:
    return DateSpec(**kwargs)


@pytest.mark.parametrize(
    ("calendar", "as_of", "back", "expected"),
    [
        # Chinese National Day week 2026: Oct 1-7 closed (Sep 25 Mid-Autumn too).
        ("XSHG", D(2026, 10, 5), 0, D(2026, 9, 30)),
        ("XSHG", D(2026, 10, 7), 1, D(2026, 9, 29)),
        ("XSHG", D(2026, 10, 8), 0, D(2026, 10, 8)),
        ("XSHG", D(2026, 10, 8), 1, D(2026, 9, 30)),
        ("XSHG", D(2026, 9, 28), 1, D(2026, 9, 24)),
        # National Day 2025: Oct 1-8 closed.
        ("XSHG", D(2025, 10, 8), 0, D(2025, 9, 30)),
        ("XSHG", D(2025, 10, 9), 1, D(2025, 9, 30)),
        # Lunar New Year 2026 on XSHG: Feb 16-20 and 23 closed.
        ("XSHG", D(2026, 2, 23), 0, D(2026, 2, 13)),
        ("XSHG", D(2026, 2, 24), 1, D(2026, 2, 13)),
        # Hong Kong: Lunar New Year Feb 17-19, Good Friday/Easter Monday/Ching Ming Apr 3-7 2026.
        ("XHKG", D(2026, 2, 19), 0, D(2026, 2, 16)),
        ("XHKG", D(2026, 4, 7), 0, D(2026, 4, 2)),
        ("XHKG", D(2026, 4, 8), 1, D(2026, 4, 2)),
        # US: Thanksgiving closed, the day after is a (half-day) session; Good Friday closed.
        ("XNYS", D(2026, 11, 26), 0, D(2026, 11, 25)),
        ("XNYS", D(2026, 11, 27), 0, D(2026, 11, 27)),
        ("XNYS", D(2026, 11, 29), 0, D(2026, 11, 27)),
        ("XNYS", D(2026, 11, 30), 1, D(2026, 11, 27)),
        ("XNYS", D(2026, 11, 30), 2, D(2026, 11, 25)),
        ("XNYS", D(2025, 11, 27), 0, D(2025, 11, 26)),
        ("XNYS", D(2026, 4, 5), 0, D(2026, 4, 2)),
        # Weekends.
        ("XSHG", D(2026, 11, 28), 0, D(2026, 11, 27)),
        ("XSHG", D(2026, 11, 29), 4, D(2026, 11, 23)),
    ],
)
def test_sessions_back_on_real_holidays(calendar, as_of, back, expected):
    assert resolve_date(spec(sessions_back=back, calendar=calendar), as_of) == expected


@pytest.mark.parametrize(
    ("kwargs", "as_of", "expected"),
    [
        ({"days_back": 0}, D(2026, 10, 4), D(2026, 10, 4)),
        ({"days_back": 7}, D(2026, 10, 8), D(2026, 10, 1)),
        ({"days_back": 7, "calendar": "XSHG"}, D(2026, 10, 8), D(2026, 9, 30)),
        ({"days_back": 1, "calendar": "XNYS"}, D(2026, 11, 27), D(2026, 11, 25)),
        ({"days_back": 365, "calendar": "XHKG"}, D(2026, 12, 26), D(2025, 12, 24)),
    ],
)
def test_days_back(kwargs, as_of, expected):
    assert resolve_date(spec(**kwargs), as_of) == expected


@pytest.mark.parametrize(
    ("period", "back", "edge", "as_of", "expected"),
    [
        ("quarter", 0, "end", D(2026, 11, 27), D(2026, 9, 30)),
        ("quarter", 0, "start", D(2026, 11, 27), D(2026, 7, 1)),
        ("quarter", 1, "end", D(2026, 11, 27), D(2026, 6, 30)),
        ("quarter", 0, "end", D(2026, 9, 30), D(2026, 9, 30)),  # ends on D: already completed
        ("quarter", 0, "end", D(2026, 9, 29), D(2026, 6, 30)),
        ("quarter", 0, "end", D(2026, 2, 10), D(2025, 12, 31)),
        ("quarter", 2, "end", D(2026, 2, 10), D(2025, 6, 30)),
        ("month", 0, "end", D(2026, 11, 27), D(2026, 10, 31)),
        ("month", 0, "end", D(2026, 11, 30), D(2026, 11, 30)),
        ("month", 0, "end", D(2026, 3, 15), D(2026, 2, 28)),
        ("month", 1, "end", D(2024, 3, 15), D(2024, 1, 31)),
        ("month", 11, "start", D(2026, 11, 27), D(2025, 11, 1)),
        ("half", 0, "end", D(2026, 11, 27), D(2026, 6, 30)),
        ("half", 0, "start", D(2026, 11, 27), D(2026, 1, 1)),
        ("half", 1, "end", D(2026, 5, 1), D(2025, 6, 30)),
        ("year", 0, "end", D(2026, 11, 27), D(2025, 12, 31)),
        ("year", 1, "start", D(2026, 11, 27), D(2024, 1, 1)),
        ("year", 0, "end", D(2026, 12, 31), D(2026, 12, 31)),
    ],
)
def test_completed_periods(period, back, edge, as_of, expected):
    assert resolve_date(spec(period=period, periods_back=back, edge=edge), as_of) == expected


@pytest.mark.parametrize(
    ("kwargs", "as_of", "expected"),
    [
        # End edges roll back to the last session, start edges forward to the first one.
        ({"period": "month", "periods_back": 0, "edge": "start", "calendar": "XSHG"}, D(2026, 11, 3), D(2026, 10, 8)),
        ({"period": "month", "periods_back": 0, "edge": "end", "calendar": "XSHG"}, D(2026, 6, 2), D(2026, 5, 29)),
        ({"period": "year", "periods_back": 0, "edge": "start", "calendar": "XSHG"}, D(2027, 1, 1), D(2026, 1, 5)),
        ({"period": "quarter", "periods_back": 0, "edge": "end", "calendar": "XSHG"}, D(2026, 11, 27), D(2026, 9, 30)),
        ({"period": "month", "periods_back": 0, "edge": "end", "calendar": "XNYS"}, D(2026, 4, 4), D(2026, 3, 31)),
        ({"period": "month", "periods_back": 0, "edge": "start", "calendar": "XNYS"}, D(2026, 12, 1), D(2026, 11, 2)),
        ({"period": "year", "periods_back": 0, "edge": "end", "calendar": "XHKG"}, D(2026, 1, 5), D(2025, 12, 31)),
    ],
)
def test_period_edges_roll_to_sessions(kwargs, as_of, expected):
    assert resolve_date(spec(**kwargs), as_of) == expected


def test_completed_period_bounds():
    assert completed_period("quarter", D(2026, 11, 27), 0) == (D(2026, 7, 1), D(2026, 9, 30))
    assert completed_period("half", D(2026, 6, 30), 0) == (D(2026, 1, 1), D(2026, 6, 30))
    with pytest.raises(ValueError, match="unknown period 'week'"):
        completed_period("week", D(2026, 11, 27), 0)


@pytest.mark.parametrize(
    ("day", "fmt", "text"),
    [
        (D(2026, 11, 27), "%Y%m%d", "20261127"),
        (D(2026, 11, 27), "%Y-%m-%d", "2026-11-27"),
        (D(2026, 11, 27), "YYYYMM", "202611"),
        (D(2026, 1, 5), "YYYYMM", "202601"),
        (D(2026, 9, 30), "YYYYQn", "2026Q3"),
        (D(2026, 1, 1), "YYYYQn", "2026Q1"),
        (D(2026, 12, 31), "YYYYQn", "2026Q4"),
    ],
)
def test_format_date(day, fmt, text):
    assert format_date(day, fmt) == text


def test_resolve_date_spec_formats_in_the_spec_format():
    as_of = D(2026, 11, 27)
    assert resolve_date_spec(spec(period="quarter", periods_back=0, fmt="YYYYQn"), as_of) == "2026Q3"
    assert resolve_date_spec(spec(period="month", periods_back=0, fmt="YYYYMM"), as_of) == "202610"
    assert resolve_date_spec(spec(sessions_back=0, calendar="XNYS", fmt="%Y-%m-%d"), D(2026, 11, 26)) == "2026-11-25"


@pytest.mark.parametrize(
    ("text", "fmt", "expected"),
    [
        ("20261127", "%Y%m%d", D(2026, 11, 27)),
        ("2026-11-27", "%Y-%m-%d", D(2026, 11, 27)),
        ("202611", "YYYYMM", D(2026, 11, 30)),  # period keys give the period's last day
        ("202402", "YYYYMM", D(2024, 2, 29)),
        ("202602", "YYYYMM", D(2026, 2, 28)),
        ("2026Q3", "YYYYQn", D(2026, 9, 30)),
        ("2026Q1", "YYYYQn", D(2026, 3, 31)),
    ],
)
def test_parse_datetime_gives_the_day(text, fmt, expected):
    assert parse_datetime(text, fmt) == dt.datetime.combine(expected, dt.time())


def test_period_end_formats_back_to_the_same_key():
    for key in ("202601", "202612", "2026Q2", "2025Q4"):
        fmt = "YYYYQn" if "Q" in key else "YYYYMM"
        assert format_date(parse_datetime(key, fmt).date(), fmt) == key


def test_parse_datetime_keeps_the_time_of_day():
    assert parse_datetime("2026-11-27 10:31:00", "%Y-%m-%d %H:%M:%S") == dt.datetime(2026, 11, 27, 10, 31)


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        ("20261301", "%Y%m%d", "'20261301' is not a date in format '%Y%m%d'"),
        ("2026-11-27", "%Y%m%d", "'2026-11-27' is not a date"),
        ("202613", "YYYYMM", "not a month in format YYYYMM"),
        ("2026-11", "YYYYMM", "not a month"),
        ("2026Q5", "YYYYQn", "not a quarter in format YYYYQn"),
        ("20261127", "YYYYQn", "not a quarter"),
    ],
)
def test_parse_datetime_rejects_bad_text(text, fmt, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_datetime(text, fmt)


def test_dates_outside_the_calendar_fail_loudly():
    with pytest.raises(CalendarRangeError, match="outside the XSHG calendar"):
        resolve_date(spec(sessions_back=0, calendar="XSHG"), D(2030, 1, 2))
    with pytest.raises(CalendarRangeError):
        resolve_date(spec(sessions_back=10, calendar="XSHG"), D(2014, 1, 3))
    with pytest.raises(CalendarRangeError):
        resolve_date(spec(days_back=30, calendar="XNYS"), D(2014, 1, 10))


def test_spec_kinds_are_exclusive():
    with pytest.raises(ValueError, match="exactly one"):
        DateSpec(sessions_back=1, days_back=1, calendar="XSHG")
    with pytest.raises(ValueError, match="needs a calendar"):
        DateSpec(sessions_back=1)
