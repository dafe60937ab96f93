"""The benchmark's days: the trading days of the Shanghai, Hong Kong and New York union (core/calendars.py)."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.core import calendars
from livesearch_pipeline.core.calendars import (
    CalendarRangeError, is_session, is_trading_day, next_trading_day, pinned_end, previous_trading_day, trading_days,
)


def test_a_trading_day_is_a_session_of_any_of_the_three_markets():
    days = trading_days(dt.date(2026, 1, 1), dt.date(2026, 12, 31))
    every_day = [dt.date(2026, 1, 1) + dt.timedelta(days=n) for n in range(365)]
    assert list(days) == [d for d in every_day if any(is_session(c, d) for c in calendars.CALENDARS)]
    assert dt.date(2026, 12, 25) in days  # Shanghai trades on Christmas
    assert dt.date(2026, 11, 26) in days  # and on Thanksgiving
    assert dt.date(2026, 10, 1) in days  # New York trades during China's National Day
    assert dt.date(2026, 6, 19) not in days and dt.date(2026, 1, 1) not in days  # all three closed
    assert not [d for d in days if d.weekday() >= 5]


def test_the_neighbours_of_a_day_without_trading():
    assert not is_trading_day(dt.date(2026, 11, 28)) and is_trading_day(dt.date(2026, 11, 27))
    assert previous_trading_day(dt.date(2026, 11, 28)) == dt.date(2026, 11, 27)
    assert next_trading_day(dt.date(2026, 11, 28)) == dt.date(2026, 11, 30)
    assert previous_trading_day(dt.date(2026, 1, 2)) == dt.date(2025, 12, 31)
    assert next_trading_day(dt.date(2026, 6, 18)) == dt.date(2026, 6, 22)
    assert next_trading_day(pinned_end()) is None


def test_the_days_come_from_the_pinned_calendars_whatever_the_override(monkeypatch):
    monkeypatch.setenv(calendars.HORIZON_ENV, "XSHG=2026-12-31")
    assert pinned_end() == dt.date(2027, 12, 31)
    assert dt.date(2027, 3, 1) in trading_days(dt.date(2027, 1, 1), dt.date(2027, 12, 31))


def test_past_the_pinned_end_is_an_error_naming_the_fix():
    with pytest.raises(CalendarRangeError, match="known from 2014-01-01 to 2027-12-31.*extend the calendars"):
        trading_days(dt.date(2027, 12, 1), dt.date(2028, 1, 31))
