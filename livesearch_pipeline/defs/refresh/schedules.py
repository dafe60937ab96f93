"""The daily refresh job and its schedule (18:30 America/New_York on every trading day, partition = that day).

The job runs its steps one after another in the run's own process (the code location's
in-process executor, defs/executor.py), exactly as `livesearch refresh` does: a day refreshes
in the same time whether the schedule, a UI launch, a backfill or the command line started it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import AbstractSet, Any
from zoneinfo import ZoneInfo

import dagster as dg
from dagster._core.definitions.asset_selection import AssetCheckKeysSelection, AssetSelection
from dagster._record import record

from livesearch_pipeline.defs.partitions import PARTITION_TIMEZONE, REFRESH_CRON, not_a_partition
from livesearch_pipeline.defs.refresh.assets import gold_answers, served_questions

# The freshness check of gold_answers (defs/ops/freshness.py) is judged by its sensor against the
# deadline, never inside a refresh: the job runs the assets and their blocking checks only.
FRESHNESS_CHECK_KEY = dg.AssetCheckKey(gold_answers, "gold_frozen_by_deadline")


@record
class ChecksIfDefined(AssetSelection):
    """The given checks among those the definitions have (`AssetSelection.checks` refuses a missing
    one): definitions without the operations folder (tests of one area) still resolve the job."""

    wanted: Sequence[dg.AssetCheckKey]

    def resolve_inner(self, asset_graph: Any, allow_missing: bool) -> AbstractSet[dg.AssetKey]:
        return set()

    def resolve_checks_inner(self, asset_graph: Any, allow_missing: bool) -> AbstractSet[dg.AssetCheckKey]:
        return set(self.wanted) & set(asset_graph.asset_check_keys)

    def to_serializable_asset_selection(self, asset_graph: Any) -> AssetSelection:
        return AssetCheckKeysSelection(selected_asset_check_keys=sorted(
            self.resolve_checks_inner(asset_graph, True), key=lambda k: k.to_user_string()))


daily_refresh_job = dg.define_asset_job(
    name="daily_refresh",
    selection=dg.AssetSelection.assets(served_questions, gold_answers) - ChecksIfDefined(wanted=[FRESHNESS_CHECK_KEY]),
    description="Serve D's questions and freeze D's gold snapshot (one run per partition).",
    tags={"livesearch/kind": "refresh"},
)

def trading_day_schedule(job: Any, *, name: str, default_status: dg.DefaultScheduleStatus,
                         description: str) -> dg.ScheduleDefinition:
    """A schedule of `job` at 18:30 New York time on every day that requests that day's partition
    when it is a trading day, and otherwise skips saying why (naming the next trading day).

    The tick's own time decides the day (`scheduled_execution_time`), never the wall clock, so a
    tick evaluated late, or by a daemon under a fixed clock, requests the day it stands for; the
    run key is the day, so a tick evaluated twice launches one run."""

    @dg.schedule(name=name, job=job, cron_schedule=REFRESH_CRON, execution_timezone=PARTITION_TIMEZONE,
                 default_status=default_status, description=description)
    def _schedule(context: dg.ScheduleEvaluationContext):
        tick = context.scheduled_execution_time
        day = (tick.astimezone(ZoneInfo(PARTITION_TIMEZONE)) if tick is not None
               else dt.datetime.now(ZoneInfo(PARTITION_TIMEZONE))).date()
        problem = not_a_partition(day)
        if problem is not None:
            return dg.SkipReason(f"nothing to refresh at this tick: {problem}")
        return dg.RunRequest(run_key=day.isoformat(), partition_key=day.isoformat())

    return _schedule


daily_refresh_schedule = trading_day_schedule(
    daily_refresh_job, name="daily_refresh_schedule", default_status=dg.DefaultScheduleStatus.RUNNING,
    description="At 18:30 America/New_York on every trading day (a session in Shanghai, Hong Kong or New York), "
                "serve and freeze that day's gold; any other day's tick is skipped naming the next trading day.")
