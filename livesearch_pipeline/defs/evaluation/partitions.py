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
# snapshot dated before D": normally the previous calendar day (the refresh schedule freezes
# every day), after a gap the previous session of any exchange. Declared as D's dependency on the
# gold of the PREVIOUS_SNAPSHOT_DAYS days up to D, so lineage shows which snapshots D can read;
# a day of that window without gold (a weekend or holiday that was not refreshed) is simply not
# read, and partitions before the first partition do not exist (allowed). Between two days on
# which Shanghai, Hong Kong or New York trades there are at most 4 days over the calendars'
# horizon (2025-2027; e.g. 2026-06-18 to 2026-06-22), well inside the window; an older snapshot
# (days skipped by hand) is still read, but lineage does not show it.
PREVIOUS_SNAPSHOT_DAYS = 7
previous_snapshots = dg.TimeWindowPartitionMapping(start_offset=-PREVIOUS_SNAPSHOT_DAYS, end_offset=0,
                                                   allow_nonexistent_upstream_partitions=True)
