"""The daily schedule (18:30 New York time requests partition D = that New York day) and the close guard."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import dagster as dg
import pytest

from livesearch_pipeline.core.calendars import is_session
from livesearch_pipeline.defs.partitions import sessions_closed

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


def requested_partitions(schedule: dg.ScheduleDefinition, instant: dt.datetime) -> list[str]:
    with dg.build_schedule_context(scheduled_execution_time=instant) as context:
        result = schedule.evaluate_tick(context)
    assert result.skip_message is None, result.skip_message
    return [request.partition_key for request in result.run_requests or []]


def test_schedule_ticks_daily_at_1830_new_york_time_and_starts_running(refresh_schedule: dg.ScheduleDefinition):
    assert refresh_schedule.cron_schedule == "30 18 * * *"
    assert refresh_schedule.execution_timezone == "America/New_York"
    assert refresh_schedule.default_status == dg.DefaultScheduleStatus.RUNNING


@pytest.mark.parametrize(("instant_utc", "partition", "why"), [
    (dt.datetime(2026, 11, 27, 23, 30, tzinfo=UTC), "2026-11-27", "18:30 EST on a Friday (NYSE half day)"),
    (dt.datetime(2026, 11, 28, 23, 30, tzinfo=UTC), "2026-11-28", "a Saturday: the partition exists, latest = Friday"),
    (dt.datetime(2026, 11, 29, 23, 30, tzinfo=UTC), "2026-11-29", "a Sunday"),
    (dt.datetime(2026, 3, 8, 22, 30, tzinfo=UTC), "2026-03-08", "18:30 EDT on the day DST starts"),
    (dt.datetime(2026, 11, 1, 23, 30, tzinfo=UTC), "2026-11-01", "18:30 EST on the day DST ends"),
    (dt.datetime(2026, 7, 3, 22, 30, tzinfo=UTC), "2026-07-03", "18:30 EDT in summer"),
    (dt.datetime(2027, 1, 1, 4, 59, tzinfo=UTC), "2026-12-31", "23:59 EST on New Year's Eve, already 2027 in UTC"),
])
def test_a_tick_requests_the_new_york_day_it_falls_on(refresh_schedule, instant_utc, partition, why):
    assert requested_partitions(refresh_schedule, instant_utc) == [partition], why


def test_every_tick_falls_after_all_three_sessions_of_its_partition_closed(refresh_schedule):
    for day in (dt.date(2026, 3, 8), dt.date(2026, 3, 9), dt.date(2026, 11, 2), dt.date(2026, 11, 27)):
        tick = dt.datetime.combine(day, dt.time(18, 30), tzinfo=NEW_YORK)
        assert requested_partitions(refresh_schedule, tick) == [day.isoformat()]
        assert sessions_closed(day, tick)
        # The partition's Asian sessions closed the (New York) night before the tick.
        assert tick > dt.datetime.combine(day, dt.time(15, 0), tzinfo=SHANGHAI)
        assert tick > dt.datetime.combine(day, dt.time(16, 10), tzinfo=HONG_KONG)
        assert tick > dt.datetime.combine(day, dt.time(16, 0), tzinfo=NEW_YORK)


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


def test_weekend_partitions_serve_the_last_sessions_before_them():
    # Saturday 2026-11-28 is no session anywhere: its gold re-dates `sessions_back` specs to Friday.
    saturday = dt.date(2026, 11, 28)
    assert not any(is_session(calendar, saturday) for calendar in ("XSHG", "XHKG", "XNYS"))
    assert all(is_session(calendar, saturday - dt.timedelta(days=1)) for calendar in ("XSHG", "XHKG", "XNYS"))
