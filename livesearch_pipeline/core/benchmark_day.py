"""When a benchmark day closes and what it is computed as of: the business rules of partition D.

Partition D is a New York calendar day. New York (16:00 ET), Hong Kong (16:00 HKT = 03:00/04:00
ET) and Shanghai (15:00 CST = 02:00/03:00 ET) have all closed their sessions of D by
`CLOSE_GUARD`; D's gold is computed as of the end of D in New York time (`partition_cutoff`).
The Dagster partitions definition (defs/partitions.py) and the command line both use these rules.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from livesearch_pipeline.core.calendars import CALENDARS, is_session

PARTITION_TIMEZONE = "America/New_York"
# The latest close of the three exchanges in New York time, plus a settling margin.
CLOSE_GUARD = dt.time(17, 0)


def partition_cutoff(day: dt.date) -> dt.datetime:
    """The point in time partition D is computed as of: the end of D in New York time.

    Every exchange has closed D by then (CLOSE_GUARD) and figures published on D are in; nothing
    published after it may enter D's gold. A point-in-time service runs with its clock at D, so a
    backfill made a week or a year later sees exactly this. A provider without a clock that is
    queried after the cut-off gives recomputed gold, marked `late_backfill` in the manifest.
    """
    return dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=ZoneInfo(PARTITION_TIMEZONE))


def sessions_closed(day: dt.date, now: dt.datetime | None = None) -> bool:
    """True once every exchange's session of `day` is over (New York time)."""
    tz = ZoneInfo(PARTITION_TIMEZONE)
    now = now.astimezone(tz) if now is not None else dt.datetime.now(tz)
    return now >= dt.datetime.combine(day, CLOSE_GUARD, tzinfo=tz)


def most_recent_completed_day(now: dt.datetime | None = None) -> dt.date:
    """The latest day whose Shanghai, Hong Kong and New York sessions are all over and on which
    at least one of them traded."""
    tz = ZoneInfo(PARTITION_TIMEZONE)
    now = now or dt.datetime.now(tz)
    day = now.astimezone(tz).date()
    if not sessions_closed(day, now):
        day -= dt.timedelta(days=1)
    return _latest_trading_day(day)


def previous_completed_day(day: dt.date) -> dt.date:
    """The latest day before `day` on which Shanghai, Hong Kong or New York traded (the day whose
    gold the stale baseline and the stale-gold audit of `day` read)."""
    return _latest_trading_day(day - dt.timedelta(days=1))


def _latest_trading_day(day: dt.date) -> dt.date:
    while not any(is_session(c, day) for c in CALENDARS):
        day -= dt.timedelta(days=1)
    return day
