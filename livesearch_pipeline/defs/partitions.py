"""The one daily partitions definition every dated asset uses.

Partition D is a New York calendar day. The daily schedule ticks at 18:30 America/New_York on
D, when New York (16:00 ET), Hong Kong (16:00 HKT = 03:00/04:00 ET) and Shanghai (15:00 CST =
02:00/03:00 ET) have all closed their sessions of D. `end_offset=1` makes D's partition exist
from the start of D (so the 18:30 tick can target it); the gold asset itself refuses to run
before the close guard (`sessions_closed`), so an early manual launch fails loudly instead of
freezing an incomplete day. The rules of a day (time zone, close guard, cut-off) are core's
(core/benchmark_day.py) and re-exported here for the Dagster code.
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

PARTITION_START = "2025-01-02"
SCHEDULE_HOUR, SCHEDULE_MINUTE = 18, 30

daily_partitions = dg.DailyPartitionsDefinition(
    start_date=PARTITION_START,
    timezone=PARTITION_TIMEZONE,
    end_offset=1,
)


def partition_date(context: dg.AssetExecutionContext) -> dt.date:
    return dt.date.fromisoformat(context.partition_key)
