"""Stage 8: baseline agents scored against D's gold, the leaderboard of D, the stale-gold audit of D."""

import asyncio
import json

import dagster as dg

from livesearch_pipeline.core.program import load_pool
from livesearch_pipeline.defs.partitions import daily_partitions, partition_date
from livesearch_pipeline.defs.refresh.assets import gold_answers, served_questions
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource

GROUP = "evaluation"


@dg.asset(group_name=GROUP, partitions_def=daily_partitions, deps=[gold_answers, served_questions], kinds={"json"})
def baseline_runs(context: dg.AssetExecutionContext, data_service: DataServiceResource,
                  storage: StorageResource) -> dg.MaterializeResult:
    """Oracle (the gold self-test: must score 100%) and stale (yesterday's gold) agents, scored."""
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.evaluation.baselines import BASELINES, run_baselines

    day = partition_date(context)
    paths = storage.paths()
    pool = load_pool(paths.pool / "questions.jsonl")
    has_previous = any(d < day for d in SnapshotStore(paths.gold).dates())
    agents = BASELINES if has_previous else ("oracle",)
    if not has_previous:
        context.log.warning(f"no gold snapshot before {day}: the stale baseline is skipped")

    async def run():
        async with data_service.open() as client:
            return await run_baselines(paths, day, pool, client, agents)

    results = asyncio.run(run())
    accuracy = {r.agent: r.summary.accuracy for r in results}
    oracle = next(r for r in results if r.agent == "oracle")
    if oracle.summary.accuracy != 1.0:
        raise dg.Failure(f"gold self-test failed for {day}: the oracle scored {oracle.summary.accuracy:.4f}, not 1.0",
                         metadata={"accuracy": dg.MetadataValue.json(accuracy)})
    return dg.MaterializeResult(metadata={"accuracy": dg.MetadataValue.json(accuracy),
                                          "runs": dg.MetadataValue.path(str(paths.runs / day.isoformat()))})


@dg.asset(group_name=GROUP, partitions_def=daily_partitions, deps=[baseline_runs], kinds={"json"})
def leaderboard(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """Agents of D ranked by accuracy (95% Wilson intervals); only identical qid sets and gold dates rank together."""
    from livesearch_pipeline.evaluation.leaderboard import build_leaderboard, render_markdown, write_leaderboard

    day = partition_date(context)
    paths = storage.paths()
    run_dirs = sorted(p for p in (paths.runs / day.isoformat()).iterdir() if (p / "summary.json").exists())
    board = build_leaderboard(run_dirs, date=day.isoformat())
    written = write_leaderboard(board, paths.runs / day.isoformat() / "leaderboard")
    return dg.MaterializeResult(metadata={
        "gold_date": board.gold_date, "qid_set_hash": board.qid_set_hash, "ranked": len(board.rows),
        "unranked": len(board.unranked), "leaderboard": dg.MetadataValue.md(render_markdown(board)),
        "files": dg.MetadataValue.json([str(p) for p in written]),
    })


@dg.asset(group_name=GROUP, partitions_def=daily_partitions, deps=[gold_answers, served_questions], kinds={"json"})
def stale_gold_audit(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """How much of D's gold the previous snapshot would fail: overall and per refresh class."""
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
