"""Stage 7, the daily refresh: served questions of D and the immutable gold snapshot of D."""


import asyncio
from collections import Counter

import dagster as dg

from livesearch_pipeline.construction.pool import read_manifest
from livesearch_pipeline.core.executor import ExecutorConfig, execute_programs
from livesearch_pipeline.core.program import load_pool
from livesearch_pipeline.defs.construction.assets import question_pool
from livesearch_pipeline.defs.partitions import daily_partitions, partition_date, sessions_closed
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource
from livesearch_pipeline.refresh import preview_markdown, served_from_pool, write_served
from livesearch_pipeline.settings import code_version

GROUP = "daily_refresh"


class RefreshConfig(dg.Config):
    max_concurrency: int = 32
    # Allow D before every exchange has closed D (only for a service whose clock is fixed).
    allow_open_sessions: bool = False


@dg.asset(group_name=GROUP, partitions_def=daily_partitions, deps=[question_pool], kinds={"json"})
def served_questions(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """The questions served on D (no answers): the file agents receive, identified by its qid-set hash."""
    day = partition_date(context)
    paths = storage.paths()
    pool = load_pool(paths.pool / "questions.jsonl")
    manifest = read_manifest(paths.pool)
    served = served_from_pool(pool)
    written = write_served(paths.served_file(day), served)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(written.qid_set_hash),
        metadata={
            "date": day.isoformat(), "questions": len(served), "qid_set_hash": written.qid_set_hash,
            "pool_version": manifest.version, "created": written.created,
            "path": dg.MetadataValue.path(str(written.path)),
            "by_tier": dg.MetadataValue.json(dict(sorted(Counter(q.tier for q in served).items()))),
        },
    )


@dg.asset(group_name=GROUP, partitions_def=daily_partitions, deps=[served_questions, question_pool],
          kinds={"json"})
def gold_answers(context: dg.AssetExecutionContext, config: RefreshConfig, data_service: DataServiceResource,
                 storage: StorageResource) -> dg.MaterializeResult:
    """Re-date every served program to D, execute it, and freeze `gold_answers_<D>.jsonl` once."""
    from livesearch_pipeline.core.snapshot import SnapshotStore

    day = partition_date(context)
    if not (config.allow_open_sessions or data_service.clock_date() is not None or sessions_closed(day)):
        raise dg.Failure(f"partition {day} is not complete yet: the Shanghai, Hong Kong and New York sessions "
                         f"of {day} close before 17:00 America/New_York; run it after that")
    paths = storage.paths()
    manifest = read_manifest(paths.pool)
    pool = load_pool(paths.pool / "questions.jsonl")
    served_qids = {q.qid for q in served_from_pool(pool)}
    questions = [q for q in pool if q.qid in served_qids]

    async def run():
        async with data_service.open() as client:
            answers, stats = await execute_programs(questions, day, client, ExecutorConfig(max_concurrency=config.max_concurrency))
            return answers, stats, client.identity

    answers, stats, identity = asyncio.run(run())
    store = SnapshotStore(paths.gold)
    written = store.write(day, answers, pool_version=manifest.version, data_service=identity, code_version=code_version())
    counts = Counter(a.status for a in answers)
    context.log.info(f"gold {day}: {dict(counts)}; {'written' if written.created else 'identical snapshot already frozen'}")
    by_qid = {q.qid: q for q in questions}
    return dg.MaterializeResult(
        data_version=dg.DataVersion(written.manifest.sha256),
        metadata={
            "date": day.isoformat(),
            "sha256": written.manifest.sha256,
            "created": written.created,
            "pool_version": manifest.version,
            "data_service": identity,
            "data_service_clock": data_service.clock or "real date",
            "code_version": written.manifest.code_version,
            "counts_by_status": dg.MetadataValue.json(dict(sorted(counts.items()))),
            "counts_by_tier": dg.MetadataValue.json(dict(sorted(Counter(by_qid[a.qid].tier for a in answers).items()))),
            "counts_by_asset_class": dg.MetadataValue.json(
                dict(sorted(Counter(by_qid[a.qid].asset_class for a in answers).items()))),
            "unique_tool_calls": stats.unique_calls,
            "programs_per_second": round(stats.programs / stats.wall_time_s, 1) if stats.wall_time_s else None,
            "snapshot": dg.MetadataValue.path(str(written.path)),
            "manifest": dg.MetadataValue.path(str(written.manifest_path)),
            "preview": dg.MetadataValue.md(preview_markdown(answers, by_qid, rows=8)),
        },
    )
