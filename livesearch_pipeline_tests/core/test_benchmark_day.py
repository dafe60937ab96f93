"""The rules of a benchmark day (core/benchmark_day.py): the close guard and the latest completed day."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from livesearch_pipeline.core.benchmark_day import (
    most_recent_completed_day, partition_cutoff, previous_completed_day, sessions_closed,
)
from livesearch_pipeline.defs import partitions

NEW_YORK = ZoneInfo("America/New_York")


@pytest.mark.parametrize("now, expected, why", [
    (dt.datetime(2026, 11, 27, 17, 0, tzinfo=NEW_YORK), dt.date(2026, 11, 27), "Friday after the close guard"),
    (dt.datetime(2026, 11, 27, 16, 59, tzinfo=NEW_YORK), dt.date(2026, 11, 26),
     "Friday before the guard: Thursday, Thanksgiving in New York but a session in Shanghai and Hong Kong"),
    (dt.datetime(2026, 11, 29, 12, 0, tzinfo=NEW_YORK), dt.date(2026, 11, 27), "Sunday: back to Friday"),
    (dt.datetime(2026, 11, 28, 3, 0, tzinfo=dt.timezone.utc), dt.date(2026, 11, 27),
     "an instant in another zone is read in New York time (22:00 Friday)"),
])
def test_most_recent_completed_day(now, expected, why):
    assert most_recent_completed_day(now) == expected, why


def test_the_cutoff_is_the_end_of_the_new_york_day_and_after_the_close_guard():
    day = dt.date(2026, 11, 27)
    assert partition_cutoff(day) == dt.datetime(2026, 11, 27, 23, 59, 59, tzinfo=NEW_YORK)
    assert sessions_closed(day, partition_cutoff(day)) and not sessions_closed(day, partition_cutoff(day) - dt.timedelta(hours=7))


def test_the_dagster_partitions_use_the_core_rules():
    # defs/partitions.py re-exports the rules; one definition, not a copy.
    assert partitions.sessions_closed is sessions_closed and partitions.partition_cutoff is partition_cutoff
    assert partitions.daily_partitions.timezone == "America/New_York"


@pytest.mark.parametrize("day, expected, why", [
    (dt.date(2026, 11, 30), dt.date(2026, 11, 27), "a Monday reads the Friday before"),
    (dt.date(2026, 11, 27), dt.date(2026, 11, 26), "Thanksgiving: New York is closed, Shanghai and Hong Kong trade"),
    (dt.date(2026, 12, 2), dt.date(2026, 12, 1), "a Wednesday reads the Tuesday"),
])
def test_previous_completed_day(day, expected, why):
    assert previous_completed_day(day) == expected, why
