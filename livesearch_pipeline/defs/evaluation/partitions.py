"""Agent runs are partitioned by day and by agent.

The agent axis is dynamic: one key per entry of the agent registry (`<data>/agents.json` plus
the built-in baselines `oracle` and `stale`). Keys are added by `livesearch agent register`,
by `livesearch run` before it launches, and by the `agent_registry_sensor`; `instance.
add_dynamic_partitions("agents", [...])` does the same from Python.
"""

import dagster as dg

from livesearch_pipeline.defs.partitions import daily_partitions
from livesearch_pipeline.evaluation.baselines import AGENT_PARTITIONS_NAME

DATE_DIMENSION, AGENT_DIMENSION = "date", "agent"

agent_partitions = dg.DynamicPartitionsDefinition(name=AGENT_PARTITIONS_NAME)
date_agent_partitions = dg.MultiPartitionsDefinition({DATE_DIMENSION: daily_partitions, AGENT_DIMENSION: agent_partitions})
# A daily asset reads every agent partition of its date (and an agent run reads its date's gold).
by_date = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name=DATE_DIMENSION)
