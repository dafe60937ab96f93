"""Agent runs are partitioned by day and by agent.

The agent axis is dynamic: one key per entry of the agent registry (`<data>/agents.json` plus
the built-in baselines `oracle` and `stale`). Keys are added by `livesearch agent register`,
by `livesearch run` before it launches, and by the `agent_registry_sensor`; `instance.
add_dynamic_partitions("agents", [...])` does the same from Python.
"""

import dagster as dg

from livesearch_pipeline.defs.partitions import daily_partitions
from livesearch_pipeline.evaluation.registry import AGENT_PARTITIONS_NAME

DATE_DIMENSION, AGENT_DIMENSION = "date", "agent"

agent_partitions = dg.DynamicPartitionsDefinition(name=AGENT_PARTITIONS_NAME)
date_agent_partitions = dg.MultiPartitionsDefinition({DATE_DIMENSION: daily_partitions, AGENT_DIMENSION: agent_partitions})
# A daily asset reads every agent partition of its date (and an agent run reads its date's gold).
by_date = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name=DATE_DIMENSION)

# The D-1 dependency. The stale-gold audit of D (and the stale baseline) reads "the latest gold
# snapshot dated before D": the previous trading day's, since every partition is a trading day and
# the schedule freezes each one. Partitions skip the days without a session, so an offset of one
# partition is the previous trading day (Friday for a Monday, 31 December for 2 January), and
# lineage shows exactly the snapshot D reads. A day whose gold was never frozen is simply not read
# (the audit falls back to the latest snapshot before it, which lineage does not show); the
# partition before the first does not exist (allowed).
PREVIOUS_SNAPSHOTS = 1
previous_snapshots = dg.TimeWindowPartitionMapping(start_offset=-PREVIOUS_SNAPSHOTS, end_offset=0,
                                                   allow_nonexistent_upstream_partitions=True)
