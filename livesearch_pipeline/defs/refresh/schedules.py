"""The daily refresh job and its schedule (18:30 America/New_York, partition = that day)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import AbstractSet, Any

import dagster as dg
from dagster._core.definitions.asset_selection import AssetCheckKeysSelection, AssetSelection
from dagster._record import record

from livesearch_pipeline.defs.partitions import SCHEDULE_HOUR, SCHEDULE_MINUTE
from livesearch_pipeline.defs.refresh.assets import gold_answers, served_questions

# Steps of one run in parallel processes: `gold_answers` fans out one step per shard. Two at a
# time suits the 2-core reference machine (dagster.yaml also admits two runs at once). The
# forkserver imports the code location, the embedded data service and Dagster's storage layer
# once per run (livesearch_pipeline/step_preload.py), so each step forks instead of paying
# seconds of imports again.
REFRESH_MAX_CONCURRENT_STEPS = 2
REFRESH_PRELOAD_MODULES = ["livesearch_pipeline.step_preload"]
refresh_executor = dg.multiprocess_executor.configured(
    {"max_concurrent": REFRESH_MAX_CONCURRENT_STEPS,
     "start_method": {"forkserver": {"preload_modules": REFRESH_PRELOAD_MODULES}}},
    name="refresh_multiprocess_executor",
)

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
    executor_def=refresh_executor,
)

daily_refresh_schedule = dg.build_schedule_from_partitioned_job(
    daily_refresh_job,
    hour_of_day=SCHEDULE_HOUR,
    minute_of_hour=SCHEDULE_MINUTE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
