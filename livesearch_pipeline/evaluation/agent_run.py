"""Running one registered agent for a day: put D's served questions to it (resuming an
interrupted run, one writer per run folder), score its predictions on D's gold (with the judge
for the LLM kinds), record the web it searched, and write
`<data>/runs/<D>/<name>/{predictions.jsonl, predictions.meta.json, verdicts.jsonl, summary.json}`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.core.progress import Report
from livesearch_pipeline.evaluation.day_inputs import AgentDay
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.inputs import evaluation_inputs
from livesearch_pipeline.evaluation.opening import open_agent
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.evaluation.registry import LLM_KINDS, AgentSpec
from livesearch_pipeline.evaluation.searched_web import searched_web
from livesearch_pipeline.evaluation.summary import EvaluationSummary
from livesearch_pipeline.infra.llm import LLMSettings


@dataclass(frozen=True)
class AgentRunResult:
    agent: str
    run_dir: Path
    summary: EvaluationSummary


def _judge(llm: LLMSettings, llm_cache: Path):
    """The judge `livesearch evaluate` would use (the settings' judge model), None for deterministic only."""
    from livesearch_pipeline.evaluation.judge import judge_from_settings

    return judge_from_settings(llm.judge_model, cache_dir=llm_cache, api_base=llm.api_base, api_key=llm.api_key)


async def run_registered_agent(spec: AgentSpec, inputs: AgentDay, client: ToolClient, *,
                               llm: LLMSettings | None = None,
                               progress: Report = None, workers: int | None = None) -> AgentRunResult:
    """Put D's served questions to one agent (resuming an interrupted run) and score it on D's gold.

    `inputs` is the day, built once by its caller (`AgentDay.build`: the served file, the gold,
    the run folder, the LLM cache), so that the run, its scoring and its record of the web read
    the same files and a missing one fails before the agent opens. `llm`: the LLM settings of the
    LLM kinds and of their judge (Dagster passes its LLM resource's; default: the environment,
    read now). `progress` receives a line about every 10% of the questions answered (`run_agent`).
    `workers`: the processes a forkable agent (the web baselines) answers in (default
    `default_workers()`: one per core, at most two); the run's files do not depend on it."""
    from livesearch_pipeline.core.workers import default_workers
    from livesearch_pipeline.evaluation.agents.base import run_agent

    out_dir = inputs.run_dir(spec.name)
    llm = llm if llm is not None else LLMSettings.from_env()
    # One writer per run folder, checked before anything is written (evaluation/writers.py): a second run
    # of this agent and day is refused naming the first, and so are a symlinked file and a protected folder.
    from livesearch_pipeline.evaluation.writers import protected_directories, run_folder_writer

    protected = protected_directories(extra=(inputs.gold_path.parent, inputs.served_path.parent))
    with run_folder_writer(out_dir, what=f"agent {spec.name!r}'s run of {inputs.day}", protected=protected):
        async with open_agent(spec, inputs, client=client, llm=llm) as agent:
            await run_agent(agent, inputs.served, out_dir, date=inputs.day, concurrency=spec.concurrency,
                            progress=progress, workers=workers if workers is not None else default_workers())
        judge = _judge(llm, inputs.llm_cache) if spec.kind in LLM_KINDS else None
        predictions_path = out_dir / "predictions.jsonl"
        result = await asyncio.to_thread(evaluate, inputs.served_path, inputs.gold_path, predictions_path,
                                         judge=judge)
        web = searched_web(spec, inputs.web_dir)
        if web is not None:
            result = dataclasses.replace(result, summary=result.summary.model_copy(update={"web": web}))
        write_evaluation(result, out_dir, inputs=evaluation_inputs(inputs.served_path, inputs.gold_path,
                                                                   predictions_path))
    return AgentRunResult(spec.name, out_dir, result.summary)


def run_folder_lock(out_dir: Path):
    """The writer lock of a run folder (core.locks): held while predictions and verdicts are written."""
    from livesearch_pipeline.core.locks import LOCK_FILE, writer_lock

    return writer_lock(Path(out_dir) / LOCK_FILE, f"run folder {out_dir}")
