"""Keep the `agents` partitions in step with the agent registry (baselines + `<data>/agents.json`)."""

import dagster as dg

from livesearch_pipeline.defs.evaluation.partitions import agent_partitions
from livesearch_pipeline.defs.resources import StorageResource
from livesearch_pipeline.evaluation.registry import agents_without_partition


@dg.sensor(minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Adds a partition of the `agent` dimension for every registered agent.")
def agent_registry_sensor(context: dg.SensorEvaluationContext, storage: StorageResource) -> dg.SensorResult:
    missing = agents_without_partition(storage.paths(), context.instance.get_dynamic_partitions(agent_partitions.name))
    if not missing:
        return dg.SensorResult(skip_reason="every registered agent has a partition")
    # The reason says what the tick did: a SensorResult without one reads "returned an empty result".
    return dg.SensorResult(dynamic_partitions_requests=[agent_partitions.build_add_request(missing)],
                           skip_reason=f"added an agent partition for {', '.join(missing)}")
