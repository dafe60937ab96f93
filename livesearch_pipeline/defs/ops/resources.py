"""The operations resources: where alerts go, and the clock the freshness sensor judges at.

Alone in this module because `dg.load_from_defs_folder` takes only the `@dg.definitions`
function of a module that has one, and would drop the sensors beside it.
"""

import dagster as dg

from livesearch_pipeline.defs.ops.alerts import alert_webhook_from_env
from livesearch_pipeline.defs.ops.freshness import OpsClockResource


@dg.definitions
def ops_resources() -> dg.Definitions:
    # The webhook's URL and token are `dg.EnvVar`s: resolved when a sensor runs, never here.
    return dg.Definitions(resources={"alert_webhook": alert_webhook_from_env(), "ops_clock": OpsClockResource()})
