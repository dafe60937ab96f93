"""Keep the `agents` partitions in step with the agent registry (baselines + `<data>/agents.json`)."""

import dagster as dg

from livesearch_pipeline.defs.evaluation.partitions import agent_partitions
from livesearch_pipeline.defs.resources import StorageResource
from livesearch_pipeline.evaluation.baselines import load_agents, registry_path


@dg.sensor(minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Adds a partition of the `agent` dimension for every registered agent.")
def agent_registry_sensor(context: dg.SensorEvaluationContext, storage: StorageResource) -> dg.SensorResult:
    registered = [spec.name for spec in load_agents(registry_path(storage.paths()))]
    known = set(context.instance.get_dynamic_partitions(agent_partitions.name))
    missing = [name for name in registered if name not in known]
    if not missing:
        return dg.SensorResult(skip_reason=f"all {len(registered)} registered agents have partitions")
    return dg.SensorResult(dynamic_partitions_requests=[agent_partitions.build_add_request(missing)])
