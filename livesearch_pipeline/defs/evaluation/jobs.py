"""The evaluation jobs: one agent on D (partition = date × agent), then the leaderboard and audit of D."""

import dagster as dg

from livesearch_pipeline.defs.evaluation.assets import agent_runs, leaderboard, stale_gold_audit

# Two jobs because a job has one partitions definition: agent runs are date × agent, the rest daily.
agent_runs_job = dg.define_asset_job(
    name="daily_agent_runs",
    selection=dg.AssetSelection.assets(agent_runs),
    description="Put D's served questions to one registered agent and score it against D's gold.",
    tags={"livesearch/kind": "evaluation"},
)

daily_evaluation_job = dg.define_asset_job(
    name="daily_evaluation",
    selection=dg.AssetSelection.assets(leaderboard, stale_gold_audit),
    description="Rank the agents of D (table + PNG chart) and audit stale gold.",
    tags={"livesearch/kind": "evaluation"},
)
