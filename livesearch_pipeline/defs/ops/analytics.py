"""The Parquet store as a daily asset: D's gold, served set and verdicts, derived from the JSONL.

`analytics_store` of D depends on D's `gold_answers`, `served_questions` and every agent run of
D; it rewrites D's three partitions from the JSONL files (livesearch_pipeline/evaluation/
store.py), so materialising it again after a late agent run picks that run up, and the bytes of
an unchanged day never change. A run-status sensor requests it after every successful refresh
or agent run of D.
"""

import re

import dagster as dg

from livesearch_pipeline.defs.evaluation.partitions import DATE_DIMENSION, by_date
from livesearch_pipeline.defs.partitions import daily_partitions, partition_date
from livesearch_pipeline.defs.owners import owners_of
from livesearch_pipeline.defs.resources import StorageResource
from livesearch_pipeline.defs.ticks import ExplainedRunStatusSensor

GROUP = "operations"
# Jobs whose success changes a source of the store, and the tag naming their date.
SOURCE_JOBS = frozenset({"daily_refresh", "daily_agent_runs", "daily_refresh_celery", "daily_agent_runs_celery"})


@dg.asset(
    group_name=GROUP, owners=owners_of(GROUP), partitions_def=daily_partitions, kinds={"parquet"},
    deps=[dg.AssetDep(dg.AssetKey("gold_answers")), dg.AssetDep(dg.AssetKey("served_questions")),
          dg.AssetDep(dg.AssetKey("agent_runs"), partition_mapping=by_date)],
)
def analytics_store(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """D's gold, served questions and verdicts as Parquet under `<data>/analytics` (derived; rebuildable)."""
    from livesearch_pipeline.evaluation.store import export_day, store_root

    day = partition_date(context)
    paths = storage.paths()
    exported = export_day(paths, day)
    if "gold" not in exported.rows:
        raise dg.Failure(f"no frozen gold snapshot of {day} under {paths.gold}: materialise gold_answers first")
    return dg.MaterializeResult(metadata={
        "date": day.isoformat(), "rows": dg.MetadataValue.json(exported.rows),
        "root": dg.MetadataValue.path(str(store_root(paths))),
        "files": dg.MetadataValue.json({t: str(p) for t, p in sorted(exported.files.items())}),
    })


daily_analytics_job = dg.define_asset_job(
    name="daily_analytics", selection=dg.AssetSelection.assets(analytics_store),
    description="Derive D's Parquet partitions (gold, served, verdicts) from the JSONL files.",
    tags={"livesearch/kind": "analytics"},
)


def source_date(run: dg.DagsterRun) -> str | None:
    return run.tags.get(f"dagster/partition/{DATE_DIMENSION}") or run.tags.get("dagster/partition")


def follow_successful_run(context: dg.RunStatusSensorContext):
    """The store's partitions a successful run changed: a RunRequest per date, or why there is none."""
    run = context.dagster_run
    day = source_date(run)
    if run.job_name in SOURCE_JOBS and day is not None:
        return dg.RunRequest(run_key=f"analytics:{run.run_id}", partition_key=day)
    # Any other run (a backfill from an asset's page runs as __ASSET_JOB, an ad-hoc selection, a
    # `livesearch run`) changes the store when it materialised one of its sources: follow its dates.
    days = materialized_source_dates(context.instance, run.run_id)
    if not days:
        return dg.SkipReason(f"run {run.run_id} of {run.job_name} materialised none of "
                             f"{', '.join(sorted(SOURCE_ASSETS))}: it does not change the store")
    if len(days) == 1:
        return dg.RunRequest(run_key=f"analytics:{run.run_id}", partition_key=days[0])
    return [dg.RunRequest(run_key=f"analytics:{run.run_id}:{d}", partition_key=d) for d in days]


# A tick without a new successful run would otherwise read "Sensor function returned an empty result".
analytics_store_sensor = ExplainedRunStatusSensor(
    name="analytics_store_sensor", run_status=dg.DagsterRunStatus.SUCCESS, run_status_sensor_fn=follow_successful_run,
    request_job=daily_analytics_job, default_status=dg.DefaultSensorStatus.RUNNING,
    idle_reason="no run succeeded since the last tick: the store is as current as the runs",
    description="After a successful run that froze gold, served questions or wrote verdicts of D (any job: "
                "daily_refresh, daily_agent_runs, a backfill from an asset page, `livesearch run`), re-derive D's "
                "Parquet partitions. Each tick handles one run: it requests D's store, or says why that run does "
                "not change it, or that no run succeeded since the last tick.",
)


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Assets whose materialisation changes a source of the store (gold frozen, served set, verdicts).
SOURCE_ASSETS = frozenset({"gold_answers", "served_questions", "agent_runs"})


def materialized_source_dates(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """The dates (partition keys, the date of a date × agent key) of the run's source materialisations."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    days: set[str] = set()
    for record in records:
        event = record.event_log_entry.dagster_event
        materialization = event.event_specific_data.materialization if event is not None else None
        if materialization is None or materialization.asset_key.path[-1] not in SOURCE_ASSETS:
            continue
        # A date × agent key is "agent|date" (dimensions in name order): keep its date part.
        days.update(part for part in (materialization.partition or "").split("|") if _ISO_DATE.match(part))
    return sorted(days)
