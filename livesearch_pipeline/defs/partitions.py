"""The one daily partitions definition every dated asset uses.

Partition D is a New York calendar day. The daily schedule ticks at 18:30 America/New_York on
D, when New York (16:00 ET), Hong Kong (16:00 HKT = 03:00/04:00 ET) and Shanghai (15:00 CST =
02:00/03:00 ET) have all closed their sessions of D. `end_offset=1` makes D's partition exist
from the start of D (so the 18:30 tick can target it); the gold asset itself refuses to run
before the close guard below, so an early manual launch fails loudly instead of freezing an
incomplete day.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import dagster as dg

PARTITION_TIMEZONE = "America/New_York"
PARTITION_START = "2025-01-02"
SCHEDULE_HOUR, SCHEDULE_MINUTE = 18, 30
# The latest close of the three exchanges in New York time, plus a settling margin.
CLOSE_GUARD = dt.time(17, 0)

daily_partitions = dg.DailyPartitionsDefinition(
    start_date=PARTITION_START,
    timezone=PARTITION_TIMEZONE,
    end_offset=1,
)


def partition_cutoff(day: dt.date) -> dt.datetime:
    """The point in time partition D is computed as of: the end of D in New York time.

    Every exchange has closed D by then (CLOSE_GUARD) and figures published on D are in; nothing
    published after it may enter D's gold. A point-in-time service runs with its clock at D, so a
    backfill made a week or a year later sees exactly this. A provider without a clock that is
    queried after the cut-off gives recomputed gold, marked `late_backfill` in the manifest.
    """
    return dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=ZoneInfo(PARTITION_TIMEZONE))


def partition_date(context: dg.AssetExecutionContext) -> dt.date:
    return dt.date.fromisoformat(context.partition_key)


def sessions_closed(day: dt.date, now: dt.datetime | None = None) -> bool:
    """True once every exchange's session of `day` is over (New York time)."""
    tz = ZoneInfo(PARTITION_TIMEZONE)
    now = now.astimezone(tz) if now is not None else dt.datetime.now(tz)
    return now >= dt.datetime.combine(day, CLOSE_GUARD, tzinfo=tz)
