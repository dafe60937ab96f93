"""The daily evaluation job: baselines, leaderboard and stale audit of D."""

import dagster as dg

from livesearch_pipeline.defs.partitions import daily_partitions

daily_evaluation_job = dg.define_asset_job(
    name="daily_evaluation",
    selection=dg.AssetSelection.groups("evaluation"),
    partitions_def=daily_partitions,
    description="Score the baseline agents on D's gold, rank the agents of D, audit stale gold.",
    tags={"livesearch/kind": "evaluation"},
)
