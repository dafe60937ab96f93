"""The daily schedule (18:30 New York time on a trading day requests partition D = that New York day),
the trading-day partitions and the close guard."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import dagster as dg
import pytest

from livesearch_pipeline.core.calendars import CALENDARS, is_session, trading_days
from livesearch_pipeline.defs.partitions import PARTITION_END, sessions_closed

NEW_YORK = ZoneInfo("America/New_York")
SHANGHAI = ZoneInfo("Asia/Shanghai")
HONG_KONG = ZoneInfo("Asia/Hong_Kong")
UTC = dt.timezone.utc
REFRESH_JOB = "daily_refresh"


@pytest.fixture(scope="module")
def refresh_schedule() -> dg.ScheduleDefinition:
    from livesearch_pipeline.definitions import defs

    # The job's partitioning is inferred from its assets, so the schedule resolves against the definitions.
    schedules = [defs.resolve_schedule_def(s.name) for s in defs.schedules or []]
    schedules = [s for s in schedules if s.job_name == REFRESH_JOB]
    assert len(schedules) == 1, f"expected one schedule of {REFRESH_JOB}, got {[s.name for s in schedules]}"
    return schedules[0]


@pytest.fixture(scope="module")
def partitions() -> dg.PartitionsDefinition:
    from livesearch_pipeline.definitions import defs

    return defs.resolve_job_def(REFRESH_JOB).partitions_def


def evaluate(schedule: dg.ScheduleDefinition, instant: dt.datetime):
    from livesearch_pipeline.definitions import defs

    # The repository resolves the requested partition against the job's partitions, as the daemon does.
    with dg.build_schedule_context(scheduled_execution_time=instant, repository_def=defs.get_repository_def()) as context:
        return schedule.evaluate_tick(context)


def requested_partitions(schedule: dg.ScheduleDefinition, instant: dt.datetime) -> list[str]:
    result = evaluate(schedule, instant)
    assert result.skip_message is None, result.skip_message
    return [request.partition_key for request in result.run_requests or []]


def test_schedule_ticks_daily_at_1830_new_york_time_and_starts_running(refresh_schedule: dg.ScheduleDefinition):
    assert refresh_schedule.cron_schedule == "30 18 * * *"
    assert refresh_schedule.execution_timezone == "America/New_York"
    assert refresh_schedule.default_status == dg.DefaultScheduleStatus.RUNNING


@pytest.mark.parametrize(("instant_utc", "partition", "why"), [
    (dt.datetime(2026, 11, 27, 23, 30, tzinfo=UTC), "2026-11-27", "18:30 EST on a Friday (NYSE half day)"),
    (dt.datetime(2026, 3, 9, 22, 30, tzinfo=UTC), "2026-03-09", "18:30 EDT on the first trading day after DST starts"),
    (dt.datetime(2026, 11, 2, 23, 30, tzinfo=UTC), "2026-11-02", "18:30 EST on the first trading day after DST ends"),
    (dt.datetime(2026, 7, 3, 22, 30, tzinfo=UTC), "2026-07-03", "18:30 EDT in summer (NYSE closed, Shanghai open)"),
    (dt.datetime(2026, 12, 25, 23, 30, tzinfo=UTC), "2026-12-25", "Christmas: New York and Hong Kong shut, Shanghai trades"),
    (dt.datetime(2027, 1, 1, 4, 59, tzinfo=UTC), "2026-12-31", "23:59 EST on New Year's Eve, already 2027 in UTC"),
    (dt.datetime(2027, 6, 1, 22, 30, tzinfo=UTC), "2027-06-01", "next year: the job keeps ticking"),
])
def test_a_tick_requests_the_new_york_day_it_falls_on(refresh_schedule, instant_utc, partition, why):
    assert requested_partitions(refresh_schedule, instant_utc) == [partition], why


@pytest.mark.parametrize(("day", "previous", "following"), [
    (dt.date(2026, 11, 28), "2026-11-27", "2026-11-30"),  # a Saturday
    (dt.date(2026, 11, 29), "2026-11-27", "2026-11-30"),  # a Sunday
    (dt.date(2026, 1, 1), "2025-12-31", "2026-01-02"),  # New Year: no exchange trades
    (dt.date(2026, 6, 19), "2026-06-18", "2026-06-22"),  # Juneteenth, Dragon Boat in Shanghai and Hong Kong
])
def test_a_tick_on_a_day_without_trading_is_skipped_naming_the_neighbouring_trading_days(
        refresh_schedule, day, previous, following):
    result = evaluate(refresh_schedule, dt.datetime.combine(day, dt.time(18, 30), tzinfo=NEW_YORK))
    assert not result.run_requests
    assert result.skip_message == (f"nothing to refresh at this tick: {day} is no trading day (no session in XSHG, "
                                   f"XHKG or XNYS): the previous trading day is {previous}, the next is {following}")


def test_a_tick_past_the_calendars_end_is_skipped_naming_the_fix(refresh_schedule):
    result = evaluate(refresh_schedule, dt.datetime(2028, 1, 3, 18, 30, tzinfo=NEW_YORK))
    assert not result.run_requests and "after the last daily partition 2027-12-31" in result.skip_message
    assert "extend them by a year" in result.skip_message


def test_every_tick_falls_after_all_three_sessions_of_its_partition_closed(refresh_schedule):
    for day in (dt.date(2026, 3, 9), dt.date(2026, 3, 10), dt.date(2026, 11, 2), dt.date(2026, 11, 27)):
        tick = dt.datetime.combine(day, dt.time(18, 30), tzinfo=NEW_YORK)
        assert requested_partitions(refresh_schedule, tick) == [day.isoformat()]
        assert sessions_closed(day, tick)
        # The partition's Asian sessions closed the (New York) night before the tick.
        assert tick > dt.datetime.combine(day, dt.time(15, 0), tzinfo=SHANGHAI)
        assert tick > dt.datetime.combine(day, dt.time(16, 10), tzinfo=HONG_KONG)
        assert tick > dt.datetime.combine(day, dt.time(16, 0), tzinfo=NEW_YORK)


def partitions_at(partitions: dg.PartitionsDefinition, instant: dt.datetime) -> list[str]:
    with dg.partition_loading_context(effective_dt=instant):
        return partitions.get_partition_keys()


def last_partition_at(partitions: dg.PartitionsDefinition, instant: dt.datetime) -> str | None:
    with dg.partition_loading_context(effective_dt=instant):
        return partitions.get_last_partition_key()


def test_partitions_are_new_york_days_from_a_fixed_start_and_today_exists(partitions):
    assert isinstance(partitions, dg.TimeWindowPartitionsDefinition)
    assert partitions.timezone == "America/New_York" and partitions.cron_schedule == "0 0 * * *"
    assert partitions.get_first_partition_key() == "2025-01-02"
    # end_offset=1: D's partition exists from D's start in New York, so the 18:30 tick can target it.
    assert last_partition_at(partitions, dt.datetime(2026, 11, 27, 0, 5, tzinfo=NEW_YORK)) == "2026-11-27"
    assert last_partition_at(partitions, dt.datetime(2026, 11, 26, 23, 55, tzinfo=NEW_YORK)) == "2026-11-26"
    # 03:00 UTC on the 28th is still the 27th in New York: bounds follow the partition timezone.
    assert last_partition_at(partitions, dt.datetime(2026, 11, 28, 3, 0, tzinfo=UTC)) == "2026-11-27"
    # On a Saturday the next partition is Monday's (nothing requests it before Monday's 18:30 tick).
    assert last_partition_at(partitions, dt.datetime(2026, 11, 28, 12, 0, tzinfo=NEW_YORK)) == "2026-11-30"


def test_every_partition_is_a_trading_day_and_every_trading_day_a_partition(partitions):
    """0 non-trading partitions: the union of the Shanghai, Hong Kong and New York sessions, no more."""
    keys = partitions_at(partitions, dt.datetime(2029, 1, 1, tzinfo=UTC))
    days = [dt.date.fromisoformat(k) for k in keys]
    assert [d for d in days if not any(is_session(c, d) for c in CALENDARS)] == []
    assert days == list(trading_days(dt.date(2025, 1, 2), dt.date(2027, 12, 31)))
    assert not [d for d in days if d.weekday() >= 5]
    assert dt.date(2026, 1, 1) not in days and dt.date(2026, 12, 25) in days  # Shanghai trades on Christmas


def test_the_bounds_are_fixed_never_computed_from_now(partitions):
    # Past the calendars' end the last partition stays their last day, whatever the date; before it
    # the set grows with the time alone, one trading day at a time.
    assert PARTITION_END == dt.date(2027, 12, 31)
    for later in (dt.datetime(2028, 1, 3, 12, tzinfo=NEW_YORK), dt.datetime(2031, 6, 1, tzinfo=UTC)):
        assert last_partition_at(partitions, later) == "2027-12-31"
    assert len(partitions_at(partitions, dt.datetime(2026, 12, 4, 12, tzinfo=NEW_YORK))) == len(
        trading_days(dt.date(2025, 1, 2), dt.date(2026, 12, 4)))


NOV_25, JUL_1 = dt.date(2026, 11, 25), dt.date(2026, 7, 1)


@pytest.mark.parametrize(("day", "now", "closed"), [
    (NOV_25, dt.datetime(2026, 11, 25, 16, 59, tzinfo=NEW_YORK), False),
    (NOV_25, dt.datetime(2026, 11, 25, 17, 0, tzinfo=NEW_YORK), True),
    (NOV_25, dt.datetime(2026, 11, 25, 21, 59, tzinfo=UTC), False),  # 16:59 EST
    (NOV_25, dt.datetime(2026, 11, 25, 22, 0, tzinfo=UTC), True),  # 17:00 EST
    (JUL_1, dt.datetime(2026, 7, 1, 20, 59, tzinfo=UTC), False),  # 16:59 EDT: the guard follows DST
    (JUL_1, dt.datetime(2026, 7, 1, 21, 0, tzinfo=UTC), True),
    (NOV_25, dt.datetime(2026, 11, 26, 5, 0, tzinfo=SHANGHAI), False),  # already D+1 in Shanghai, 16:00 of D in NY
    (NOV_25, dt.datetime(2026, 11, 26, 6, 0, tzinfo=SHANGHAI), True),  # 17:00 of D in New York
    (NOV_25, dt.datetime(2026, 11, 24, 23, 0, tzinfo=NEW_YORK), False),  # the evening before D
    (NOV_25, dt.datetime(2026, 11, 26, 9, 0, tzinfo=NEW_YORK), True),  # the morning after D
])
def test_close_guard_refuses_gold_of_d_before_1700_new_york_on_d(day, now, closed):
    assert sessions_closed(day, now) is closed
