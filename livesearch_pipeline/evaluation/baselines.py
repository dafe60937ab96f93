"""Run the offline baseline agents (oracle, stale) for a day and score them: no LLM, no network.

Shared by the Dagster evaluation assets and `livesearch run`. Layout:
`<data>/runs/<D>/<agent>/{predictions.jsonl, predictions.meta.json, verdicts.jsonl, summary.json}`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from typing import Sequence

from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.core.models import Question
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.evaluation.agents.base import run_agent
from livesearch_pipeline.evaluation.agents.oracle import OracleAgent
from livesearch_pipeline.evaluation.agents.stale import StaleAgent
from livesearch_pipeline.evaluation.evaluator import EvaluationSummary, evaluate, load_served, write_evaluation
from livesearch_pipeline.settings import DataPaths

BASELINES = ("oracle", "stale")


@dataclass(frozen=True)
class BaselineResult:
    agent: str
    summary: EvaluationSummary


async def run_baselines(paths: DataPaths, day: dt.date, pool: Sequence[Question], client: ToolClient,
                        agents: Sequence[str] = BASELINES) -> list[BaselineResult]:
    served_path = paths.served_file(day)
    served = load_served(served_path)
    store = SnapshotStore(paths.gold)
    results = []
    for name in agents:
        if name == "oracle":
            agent = OracleAgent(pool=pool, client=client, as_of=day)
        elif name == "stale":
            agent = StaleAgent.from_store(store, day)
        else:
            raise ValueError(f"unknown baseline agent {name!r}; expected one of {', '.join(BASELINES)}")
        out_dir = paths.run_dir(day, name)
        await run_agent(agent, served, out_dir, date=day)
        result = await asyncio.to_thread(evaluate, served_path, store.path_for(day), out_dir / "predictions.jsonl")
        write_evaluation(result, out_dir)
        results.append(BaselineResult(name, result.summary))
    return results
