"""Stage 8: each registered agent scored against D's gold (date × agent), the leaderboard of D, the stale-gold audit of D."""

import asyncio
import base64
import datetime as dt
import json

import dagster as dg

from livesearch_pipeline.core.errors import innermost_exception
from livesearch_pipeline.defs.evaluation.automation import after_agent_runs, after_gold, after_gold_snapshots
from livesearch_pipeline.defs.evaluation.partitions import (
    AGENT_DIMENSION, DATE_DIMENSION, by_date, date_agent_partitions, previous_snapshots,
)
from livesearch_pipeline.defs.partitions import daily_partitions, partition_date
from livesearch_pipeline.defs.refresh.assets import checked_pool, gold_answers, served_questions
from livesearch_pipeline.defs.owners import owners_of
from livesearch_pipeline.defs.resources import DataServiceResource, LLMResource, StorageResource
from livesearch_pipeline.defs.web.assets import web_corpus

GROUP = "evaluation"


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), partitions_def=date_agent_partitions, kinds={"json"}, automation_condition=after_gold,
          deps=[dg.AssetDep(gold_answers, partition_mapping=by_date),
                dg.AssetDep(served_questions, partition_mapping=by_date),
                # The search-read baseline searches D's web; lineage shows which web each run saw.
                dg.AssetDep(web_corpus, partition_mapping=by_date)])
def agent_runs(context: dg.AssetExecutionContext, data_service: DataServiceResource,
               storage: StorageResource, llm: LLMResource) -> dg.MaterializeResult:
    """One registered agent answers D's served questions and is scored on D's gold.

    The oracle partition is the gold self-test: it fails the run unless it scores exactly 1.0.
    The step logs a progress line about every 10% of the questions answered.
    """
    from livesearch_pipeline.evaluation.agent_run import run_registered_agent
    from livesearch_pipeline.evaluation.registry import find_agent, load_agents, registry_path
    from livesearch_pipeline.evaluation.day_inputs import AgentDay

    keys = context.partition_key.keys_by_dimension
    day, name = dt.date.fromisoformat(keys[DATE_DIMENSION]), keys[AGENT_DIMENSION]
    paths = storage.paths()
    spec = find_agent(load_agents(registry_path(paths)), name)
    # D's inputs, looked up once: a missing served file or gold fails here, before the data service
    # opens. The pool is checked only when the oracle opens; a bad one fails as the refresh's does.
    inputs = AgentDay.build(paths, day, llm_cache=llm.cache_path(paths), load_pool=lambda: checked_pool(paths)[1])

    async def run():
        # The agent run of D sees the market as of D's cut-off, as D's gold did (a backfilled
        # evaluation is the evaluation of that day); a provider without a clock answers as of now.
        async with data_service.open(as_of=day if data_service.point_in_time else None) as client:
            return await run_registered_agent(spec, inputs, client, llm=llm.settings(), progress=context.log.info)

    try:
        result = asyncio.run(run())
    except BaseExceptionGroup as group:
        # The MCP client's task group hides the cause ("unhandled errors in a TaskGroup"): raise the
        # innermost failure so the run's error, the UI and the CLI's last line name it (the group
        # stays its context in the traceback).
        raise innermost_exception(group)
    summary = result.summary
    metadata = {
        "agent": name, "kind": spec.kind, "model": summary.model or "-", "accuracy": summary.accuracy,
        "correct": summary.correct, "scored": summary.n_scored, "withdrawn": summary.n_withdrawn,
        "served": summary.n_served, "gold_date": summary.gold_date.isoformat(),
        "gold_late_backfill": summary.gold_late_backfill,
        "qid_set_hash": summary.qid_set_hash,
        "by_tier": dg.MetadataValue.json({k: b.accuracy for k, b in sorted(summary.by_tier.items())}),
        "run_dir": dg.MetadataValue.path(str(result.run_dir)),
    }
    if spec.kind == "oracle" and summary.accuracy != 1.0:
        raise dg.Failure(f"gold self-test failed for {day}: the oracle scored {summary.accuracy:.4f} "
                         f"({summary.correct}/{summary.n_scored} scored, {summary.n_withdrawn} withdrawn), not 1.0; "
                         f"verdicts in {result.run_dir}",
                         metadata=metadata)
    return dg.MaterializeResult(metadata=metadata)


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), partitions_def=daily_partitions, kinds={"json", "png"},
          automation_condition=after_agent_runs, deps=[dg.AssetDep(agent_runs, partition_mapping=by_date)])
def leaderboard(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """Agents of D ranked by accuracy (95% Wilson intervals); only identical qid sets and gold dates rank
    together. Also a PNG chart of accuracy by visibility level and tier, per agent."""
    from livesearch_pipeline.evaluation.leaderboard import (
        CHART_PNG, LeaderboardError, build_leaderboard, render_markdown, write_leaderboard,
    )

    day = partition_date(context)
    paths = storage.paths()
    day_dir = paths.runs / day.isoformat()
    run_dirs = sorted(p for p in day_dir.iterdir() if (p / "summary.json").exists()) if day_dir.is_dir() else []
    if not run_dirs:
        raise LeaderboardError(f"no evaluated agent run under {day_dir}: materialise agent_runs for {day} first")
    from livesearch_pipeline.evaluation.registry import registered_names

    board = build_leaderboard(run_dirs, date=day.isoformat(), gold_dir=paths.gold, served_dir=paths.served,
                              registered=registered_names(paths), runs_root=paths.runs)
    written = write_leaderboard(board, day_dir / "leaderboard")
    written += _retrieval(storage.paths(), day, run_dirs, day_dir / "leaderboard")
    chart = base64.b64encode((day_dir / "leaderboard" / CHART_PNG).read_bytes()).decode("ascii")
    return dg.MaterializeResult(metadata={
        "gold_date": board.gold_date, "qid_set_hash": board.qid_set_hash, "ranked": len(board.rows),
        "unranked": len(board.unranked), "leaderboard": dg.MetadataValue.md(render_markdown(board)),
        "chart": dg.MetadataValue.md(f"![accuracy by visibility level and tier](data:image/png;base64,{chart})"),
        "files": dg.MetadataValue.json([str(p) for p in written]),
    })


def _retrieval(paths, day: dt.date, run_dirs, out_dir):
    """Evidence recall per agent and the evidence-present ceiling (evaluation/retrieval.py), when D's
    web, gold and pool are all there; additive to the leaderboard."""
    from livesearch_pipeline.core.pool import POOL_FILE
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.evaluation.retrieval import build_retrieval, write_retrieval
    from livesearch_pipeline.web.build import MANIFEST_FILE, attach_evidence, corpus_directory

    web_dir = corpus_directory(paths.web, day)
    gold = SnapshotStore(paths.gold)
    if not (web_dir / MANIFEST_FILE).is_file() or not gold.exists(day) or not (paths.pool / POOL_FILE).is_file():
        return []
    evidence = attach_evidence(web_dir, paths.pool / POOL_FILE, gold.path_for(day))
    return write_retrieval(build_retrieval(run_dirs, evidence), out_dir)


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), partitions_def=daily_partitions, kinds={"json"}, automation_condition=after_gold_snapshots,
          # D's gold and the previous snapshots it is compared with (the window up to D, see
          # `previous_snapshots`): lineage shows the D-1 dependency.
          deps=[dg.AssetDep(gold_answers, partition_mapping=previous_snapshots), served_questions])
def stale_gold_audit(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """How much of D's gold the previous snapshot would fail: overall and per refresh class.

    The previous snapshot is the latest frozen before D (normally D-1; after a day without gold,
    the one before), read from the gold window this asset depends on."""
    from livesearch_pipeline.evaluation.audits import render_stale_report, stale_gold_audit as audit, write_stale_audit

    day = partition_date(context)
    paths = storage.paths()
    result = audit(paths.gold, day, served_path=paths.served_file(day))
    path = write_stale_audit(result, paths.runs / day.isoformat() / "audits")
    return dg.MaterializeResult(metadata={
        "previous_date": result.previous_date.isoformat(), "failure_rate": result.failure_rate,
        "by_refresh_class": dg.MetadataValue.json(json.loads(json.dumps(
            {k: v.model_dump(mode="json") for k, v in result.by_refresh_class.items()}))),
        "report": dg.MetadataValue.md(render_stale_report(result)), "path": dg.MetadataValue.path(str(path)),
    })
