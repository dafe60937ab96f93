"""The one daily partitions definition every dated asset uses: one partition per trading day.

Partition D is a New York calendar day on which Shanghai (XSHG), Hong Kong (XHKG) or New York
(XNYS) has a session: the days the refresh has something to freeze. Weekends and the weekdays on
which all three are closed (1 January, 19 June 2026, …) are not partitions, so a missed trading
day is "Missing" in the UI and a Saturday is simply absent. The days come from the pinned
exchange calendars (core/calendars.py: `trading_days`, the installed exchange-calendars plus the
reviewed holiday supplements), never from the environment or the wall clock.

Bounds are fixed: the first partition is `PARTITION_START`, the last the last day the pinned
calendars cover (`PARTITION_END`, 31 December of their last year; raising CALENDAR_ENDS by a year
adds that year's partitions). The daily schedule ticks at 18:30 America/New_York on D, when New
York (16:00 ET), Hong Kong (16:00 HKT = 03:00/04:00 ET) and Shanghai (15:00 CST = 02:00/03:00 ET)
have all closed their sessions of D. `end_offset=1` makes D's partition exist from the start of D
(so the 18:30 tick can target it); on a day without a session that is the next trading day's
partition, which nothing requests before its own 18:30 tick (the schedule skips a day that is no
trading day, naming the next one). The gold asset itself refuses to run before the close guard
(`sessions_closed`), so an early manual launch fails loudly instead of freezing an incomplete day.
The rules of a day (time zone, close guard, cut-off) are core's (core/benchmark_day.py) and
re-exported here for the Dagster code.
"""

from __future__ import annotations

import datetime as dt

import dagster as dg

from livesearch_pipeline.core.benchmark_day import (
    CLOSE_GUARD as CLOSE_GUARD,
    PARTITION_TIMEZONE,
    partition_cutoff as partition_cutoff,
    sessions_closed as sessions_closed,
)
from livesearch_pipeline.core.calendars import (
    CALENDARS, is_trading_day, next_trading_day, pinned_end, previous_trading_day, trading_days,
)

PARTITION_START = "2025-01-02"
# The last partition: the pinned calendars' last day. Past it the markets' holidays are unknown.
PARTITION_END = pinned_end()
SCHEDULE_HOUR, SCHEDULE_MINUTE = 18, 30
REFRESH_CRON = f"{SCHEDULE_MINUTE} {SCHEDULE_HOUR} * * *"
# No covered exchange trades on a Saturday or a Sunday (checked below): one cron excludes them all.
WEEKENDS = "0 0 * * 0,6"


def _excluded_weekdays(start: dt.date, end: dt.date) -> list[dt.date]:
    """The weekdays from `start` to `end` on which no covered exchange has a session."""
    open_days = set(trading_days(start, end))
    weekend_sessions = sorted(d for d in open_days if d.weekday() >= 5)
    if weekend_sessions:
        raise ValueError(f"a covered exchange trades on a weekend ({weekend_sessions[:3]}): the partitions' weekend "
                         f"exclusion ({WEEKENDS}) would drop a trading day")
    return [start + dt.timedelta(days=i) for i in range((end - start).days + 1)
            if (start + dt.timedelta(days=i)).weekday() < 5 and start + dt.timedelta(days=i) not in open_days]


CLOSED_WEEKDAYS = tuple(_excluded_weekdays(dt.date.fromisoformat(PARTITION_START), PARTITION_END))

daily_partitions = dg.DailyPartitionsDefinition(
    start_date=PARTITION_START,
    end_date=(PARTITION_END + dt.timedelta(days=1)).isoformat(),  # exclusive
    timezone=PARTITION_TIMEZONE,
    end_offset=1,
    exclusions=[WEEKENDS, *(dt.datetime.combine(day, dt.time()) for day in CLOSED_WEEKDAYS)],
)


def is_partition_day(day: dt.date) -> bool:
    """Whether `day` is one of the partitions' days (a trading day within the fixed bounds)."""
    return not_a_partition(day) is None


def not_a_partition(day: dt.date) -> str | None:
    """None when `day` is a partition's day; otherwise one line saying why not, naming the
    nearest partitions (the previous and the next trading day)."""
    first = dt.date.fromisoformat(PARTITION_START)
    if day < first:
        return f"{day} is before the first daily partition {first}"
    if day > PARTITION_END:
        return (f"{day} is after the last daily partition {PARTITION_END} (the end of the pinned trading calendars: "
                f"extend them by a year, docs/operations.md, Trading calendars)")
    if not is_trading_day(day):
        before, after = previous_trading_day(day), next_trading_day(day)
        nearest = ", ".join(part for part in (
            f"the previous trading day is {before}" if before is not None and before >= first else "",
            f"the next is {after}" if after is not None and after <= PARTITION_END else "") if part)
        return (f"{day} is no trading day (no session in {', '.join(CALENDARS[:-1])} or {CALENDARS[-1]})"
                f"{': ' + nearest if nearest else ''}")
    return None


def partition_days(start: dt.date, end: dt.date) -> list[dt.date]:
    """The partitions' days from `start` to `end` inclusive (the trading days, within the bounds)."""
    first, last = max(start, dt.date.fromisoformat(PARTITION_START)), min(end, PARTITION_END)
    return list(trading_days(first, last)) if first <= last else []


def partition_date(context: dg.AssetExecutionContext) -> dt.date:
    return dt.date.fromisoformat(context.partition_key)
