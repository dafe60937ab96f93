"""The daily refresh job and its schedule (18:30 America/New_York, partition = that day)."""

from __future__ import annotations

import dagster as dg

from livesearch_pipeline.defs.partitions import SCHEDULE_HOUR, SCHEDULE_MINUTE, daily_partitions
from livesearch_pipeline.defs.refresh.assets import gold_answers, served_questions

daily_refresh_job = dg.define_asset_job(
    name="daily_refresh",
    selection=dg.AssetSelection.assets(served_questions, gold_answers),
    partitions_def=daily_partitions,
    description="Serve D's questions and freeze D's gold snapshot (one run per partition).",
    tags={"livesearch/kind": "refresh"},
)

daily_refresh_schedule = dg.build_schedule_from_partitioned_job(
    daily_refresh_job,
    hour_of_day=SCHEDULE_HOUR,
    minute_of_hour=SCHEDULE_MINUTE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
