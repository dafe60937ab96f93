"""Celery workers: `daily_refresh` and `daily_agent_runs` with their steps on a Celery cluster.

`daily_refresh_celery` and `daily_agent_runs_celery` select the same assets (and checks) as
`daily_refresh` and `daily_agent_runs`; only the executor differs: each step (a shard of
`gold_answers`, one agent run) becomes a Celery task on the queue `dagster`, picked up by
whichever worker is free, on any machine. The broker and result backend come from
LIVESEARCH_CELERY_BROKER and LIVESEARCH_CELERY_BACKEND when a run starts (e.g.
redis://broker-host:6379/0 and redis://broker-host:6379/1).

The defaults are unchanged: the 18:30 schedule runs `daily_refresh` on the multiprocess
executor. To move the daily run onto Celery, stop `daily_refresh_schedule` and start
`daily_refresh_celery_schedule` (the same partitions and time); backfills pick the job by name.

What every worker needs (deploy/celery/README.md): this package installed, the same
DAGSTER_HOME/dagster.yaml as the webserver and daemon (PostgreSQL storage: a step reports its
events there), the same LIVESEARCH_* settings, and the same filesystem at LIVESEARCH_DATA_DIR and
at the IO manager's base directory ($DAGSTER_HOME/storage), because shard results travel
between steps as files written by one worker and read by another.
"""

from __future__ import annotations

import dagster as dg
from dagster_celery import celery_executor

from livesearch_pipeline.defs.refresh.schedules import trading_day_schedule

BROKER_ENV, BACKEND_ENV = "LIVESEARCH_CELERY_BROKER", "LIVESEARCH_CELERY_BACKEND"
QUEUE = "dagster"  # dagster-celery's default queue; route an op elsewhere with the tag dagster-celery/queue

livesearch_celery_executor = celery_executor.configured(
    {
        "broker": {"env": BROKER_ENV},
        "backend": {"env": BACKEND_ENV},
        "config_source": {
            # One task at a time per worker process: a shard is seconds to minutes of work, and
            # prefetching a second one would idle it behind the first while another worker waits.
            "worker_prefetch_multiplier": 1,
            # A task is acknowledged when it finishes, so a worker that dies mid-shard hands the
            # shard back to the queue (steps are idempotent: the snapshot is written once, later).
            "task_acks_late": True,
            "broker_connection_retry_on_startup": True,
        },
    },
    name="livesearch_celery_executor",
)

daily_refresh_celery_job = dg.define_asset_job(
    name="daily_refresh_celery",
    selection=dg.AssetSelection.assets(dg.AssetKey("served_questions"), dg.AssetKey("gold_answers")),
    description="daily_refresh with every step (each gold shard) a Celery task.",
    tags={"livesearch/kind": "refresh"},
    executor_def=livesearch_celery_executor,
)

daily_agent_runs_celery_job = dg.define_asset_job(
    name="daily_agent_runs_celery",
    selection=dg.AssetSelection.assets(dg.AssetKey("agent_runs")),
    description="daily_agent_runs with the agent run a Celery task.",
    tags={"livesearch/kind": "evaluation"},
    executor_def=livesearch_celery_executor,
)

daily_refresh_celery_schedule = trading_day_schedule(
    daily_refresh_celery_job, name="daily_refresh_celery_schedule", default_status=dg.DefaultScheduleStatus.STOPPED,
    description="daily_refresh_schedule for daily_refresh_celery: 18:30 America/New_York on every trading day; other "
                "days' ticks are skipped naming the next trading day. Stopped by default.",
)
