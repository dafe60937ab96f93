"""Stage 2 on its cadence: the `refresh_pool` job re-selects the pool from the evaluation history, weekly.

`question_pool` alone (the stage-2 filter, no LLM, seconds): signatures every evaluated agent has
solved are dropped and the others re-instantiated with fresh entities of the same class and
visibility band (construction/pool.py, evaluation/history.py). The schedule runs it on Saturdays at
06:00 New York time, after the week's last trading day was evaluated and before the next one is
served; the refresh of the following trading day serves the new pool (a new pool version, marked
on the site). Stopped by default: an operator turns it on to let the pool follow the agents
(`dagster schedule start pool_refresh_schedule`, or the toggle on the schedule's page).
"""

import datetime as dt

import dagster as dg

from livesearch_pipeline.defs.partitions import PARTITION_TIMEZONE

POOL_REFRESH_CRON = "0 6 * * 6"

refresh_pool_job = dg.define_asset_job(
    name="refresh_pool",
    selection=dg.AssetSelection.assets("question_pool"),
    description="Stage 2 only: re-select the pool from the verbalized questions and the evaluation history.",
    tags={"livesearch/kind": "construction"},
)


@dg.schedule(name="pool_refresh_schedule", job=refresh_pool_job, cron_schedule=POOL_REFRESH_CRON,
             execution_timezone=PARTITION_TIMEZONE, default_status=dg.DefaultScheduleStatus.STOPPED,
             description="Saturdays 06:00 America/New_York: stage 2 re-selects the pool from the week's verdicts "
                         "(refresh_pool). Stopped by default.")
def pool_refresh_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    week = (context.scheduled_execution_time or dt.datetime.now(dt.timezone.utc)).date().isoformat()
    return dg.RunRequest(run_key=f"pool:{week}")
