"""The code location's executor: every run executes its steps in its own process, one after another.

A run launched by the UI, the schedule, a sensor or a backfill (and `__ASSET_JOB`, the job of an
asset page's Materialize) then does exactly what `livesearch run | refresh` does in-process: no
process per step, no second import of the code location and the data service per step, no
forkserver or resource tracker left behind a run, and warm caches of the embedded market across
the steps of a run. Measured (docs/benchmarks.md, 2026-12-05): the refresh of a day takes the same
time from the UI as from the command line. A job may still name another executor (the Celery
jobs in defs/ops/workers.py spread their steps over workers).

Alone in this module because `dg.load_from_defs_folder` takes only the `@dg.definitions`
function of a module that has one.
"""

import dagster as dg


@dg.definitions
def executor() -> dg.Definitions:
    return dg.Definitions(executor=dg.in_process_executor)
