"""Stage 7, the daily refresh: served questions of D and the immutable gold snapshot of D.

`served_questions` and `gold_answers` are one graph-backed multi-asset that cannot be subset
(`daily_refresh_assets`): whichever of the two is selected, the run writes D's served file and
then freezes D's gold from it. The graph fans one day's refresh out over the executor:
`serve_questions` writes the served file, `plan_gold_shards` splits the served programs (ordered by entity, then qid) into contiguous shards,
`execute_gold_shard` runs once per shard (one process each under the multiprocess executor),
and `freeze_gold_snapshot` assembles every shard's answers and writes the snapshot ONCE through
the write-once `SnapshotStore`. Shard results travel between processes through the job's IO
manager; the snapshot itself never does: the freezing op's output is `Nothing`, so no IO
manager is ever asked to store the asset's value.
"""


import datetime as dt
import time
from collections import Counter
from typing import Iterator, Optional
from zoneinfo import ZoneInfo

import dagster as dg
from pydantic import Field

from livesearch_pipeline.core import aio
from livesearch_pipeline.core.calendars import CalendarRangeError, ensure_within_horizon
from livesearch_pipeline.core.executor import ExecutorConfig, execute_programs
from livesearch_pipeline.core.pool import catalog_disagreement, read_pool_catalog
from livesearch_pipeline.core.publication import publication_lags
from livesearch_pipeline.core.models import PoolManifest, Question
from livesearch_pipeline.core.program import PoolLoadError
from livesearch_pipeline.core.snapshot import SnapshotRejectedError, SnapshotStore
from livesearch_pipeline.defs.partitions import (
    PARTITION_TIMEZONE, daily_partitions, partition_cutoff, partition_date, sessions_closed,
)
from livesearch_pipeline.defs.owners import owners_of
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource
from livesearch_pipeline.defs.sources import DATA_SERVICE, observation
from livesearch_pipeline.core.served import read_served as load_served
from livesearch_pipeline.refresh.freeze import (
    preview_markdown, served_from_pool, withdraw_stale_latest, write_rejected, write_served,
)
from livesearch_pipeline.refresh.plan import (
    GoldShard, RefreshPlan, ShardResult, assemble_answers, combined_stats, point_in_time_fields, split_into_shards,
)
from livesearch_pipeline.settings import DataPaths, code_version

GROUP = "daily_refresh"
# One shard per core of the reference machine (2 cores): the multiprocess executor then keeps
# both busy while the op that plans and the op that freezes stay cheap. An in-process executor
# runs steps one after another, where a second shard only adds a step: one shard there.
DEFAULT_SHARDS = 2
IN_PROCESS_EXECUTORS = frozenset({"in_process", "execute_in_process_executor"})
# Up to 5% of a day's programs may come back empty or failed (a suspended stock, a provider
# hiccup on one call): they are withdrawn from the day. More than that means the day itself is
# not trustworthy (the service was down or stale): nothing is frozen.
DEFAULT_MAX_WITHDRAWN_SHARE = 0.05
# One code version everywhere: the assets' `code_version` (the UI's "Code version" and the
# `dagster/code_version` tag of each materialisation) and the manifest's `code_version` field.
# Without an explicit one Dagster records the run id there.
CODE_VERSION = code_version()


class RefreshConfig(dg.Config):
    max_concurrency: int = Field(32, description="Tool calls in flight at once, per shard.")
    allow_open_sessions: bool = Field(
        False, description="Refresh D before every exchange has closed D (17:00 America/New_York), for any provider: "
                           "an explicit override of the close guard, e.g. to test a provider intraday.")
    max_withdrawn_share: float = Field(
        DEFAULT_MAX_WITHDRAWN_SHARE, ge=0.0, le=1.0,
        description="Largest share of programs that may return `empty`/`error` on D: those are withdrawn from D's "
                    "scoring set and listed in the manifest; above it the day is refused and nothing is frozen.")
    shards: Optional[int] = Field(
        None, description=f"Shards the day's programs are split into (contiguous in (entity, qid) order); each runs as "
                          f"its own step. Default: {DEFAULT_SHARDS} under a parallel executor, 1 under an in-process "
                          f"one. The bytes never depend on it.")


def pool_publication_lags(paths: DataPaths) -> dict[str, int]:
    """The publication lags of the tools of the catalog the pool was built from (core.publication)."""
    try:
        return publication_lags(read_pool_catalog(paths.pool, paths.construction))
    except PoolLoadError as exc:
        raise dg.Failure(f"the pool's tool catalog cannot be read: {exc}") from exc


def checked_pool(paths: DataPaths) -> tuple[PoolManifest, list[Question]]:
    """The pool, verified before anything executes it: its bytes against its manifest's sha256,
    every program against the catalog it was built from, with bounds on calls and windows."""
    try:
        return paths.checked_pool()
    except (PoolLoadError, FileNotFoundError) as exc:
        raise dg.Failure(f"the pool in {paths.pool} cannot be executed: {exc}") from exc


def check_catalog_matches_service(paths: DataPaths, manifest: PoolManifest, data_service: DataServiceResource,
                                  day: dt.date) -> dict[str, str]:
    """dg.Failure naming both when the data service the refresh runs on is not the one the pool's
    catalog describes (a tool the pool uses missing or described otherwise). A service that does
    not list its tools (the Tushare forwarder) is trusted to be the catalog's. Returns the
    service's identity (`DataServiceResource.identity`), as the client it opened describes it."""
    pool_catalog = read_pool_catalog(paths.pool, paths.construction)

    async def service_catalog():
        async with data_service.open(as_of=day if data_service.point_in_time else None) as client:
            list_tools = getattr(client, "list_tools", None)
            return (await list_tools() if list_tools is not None else None), client.identity

    live, served_by = aio.run(service_catalog())
    problem = catalog_disagreement(pool_catalog, live, manifest.counts.get("tool", {})) if live is not None else None
    if problem is not None:
        raise dg.Failure(problem)
    return data_service.identity(None if data_service.point_in_time else served_by)


def served_programs(paths: DataPaths, pool_version: str) -> list[Question]:
    """The served questions of the pool, sorted by qid, if it is still `pool_version`.

    Every step of one refresh must execute the same pool: a pool rebuilt between planning and a
    shard (or the freeze) fails the run instead of mixing two versions in one snapshot.
    """
    manifest, pool = checked_pool(paths)
    if manifest.version != pool_version:
        raise dg.Failure(f"the pool in {paths.pool} changed during the refresh: planned on version {pool_version}, "
                         f"now {manifest.version}; re-run the partition")
    served = {s.qid for s in served_from_pool(pool)}
    return sorted((q for q in pool if q.qid in served), key=lambda q: q.qid)


def guard_now(data_service: DataServiceResource) -> dt.datetime:
    """The time the close guard judges D at: for a point-in-time service whose clock is fixed, the
    cut-off of its clock's day (it answers as of then, whatever the wall clock says); for every
    other provider (Tushare, an external server: a fixed LIVESEARCH_CLOCK changes nothing they
    return) and for the embedded service on the real date, the wall clock."""
    clock = data_service.clock_date()
    if data_service.point_in_time and clock is not None:
        return partition_cutoff(clock)
    return dt.datetime.now(dt.timezone.utc)


def refuse_unready_day(day: dt.date, data_service: DataServiceResource, allow_open_sessions: bool) -> None:
    """dg.Failure when D cannot be refreshed honestly now: a day after the service's fixed clock, a
    day whose sessions have not all closed (the close guard: 17:00 America/New_York on D, judged at
    `guard_now`, for every provider and clock), a day beyond the trading calendars' known holidays.
    Judged before anything of D is written."""
    clock = data_service.clock_date()
    if clock is not None and clock < day:
        # The service's "now" is before D: D has not happened yet for it.
        raise dg.Failure(f"partition {day} is after the data service's fixed clock {clock}; set the clock "
                         f"(LIVESEARCH_CLOCK) to {day} or later, or unset it to use the real date")
    now = guard_now(data_service)
    if not allow_open_sessions and not sessions_closed(day, now):
        where = (f"the {data_service.service_kind} data service answers with what it holds now"
                 if not data_service.point_in_time else "the data service runs on the real date")
        raise dg.Failure(f"partition {day} is not complete yet at {now.astimezone(ZoneInfo(PARTITION_TIMEZONE)):%Y-%m-%d %H:%M} "
                         f"America/New_York ({where}): the Shanghai, Hong Kong and New York sessions of {day} close "
                         f"before 17:00 America/New_York; refresh it after that. Nothing of {day} was written")
    try:
        ensure_within_horizon(day)
    except CalendarRangeError as exc:
        raise dg.Failure(f"partition {day} cannot be refreshed: {exc}") from exc


# The ops' own configs carry the graph's defaults: the UI reads an asset's config from its op (the
# served questions' is `serve_questions`'), and a required field there makes "Materialize" open the
# Launchpad instead of the partition dialog. `refresh_config_to_ops` sets them all from RefreshConfig.
class ServeConfig(dg.Config):
    allow_open_sessions: bool = False


# --------------------------------------------------------------------------- ops of gold_answers


class ShardPlanConfig(dg.Config):
    shards: Optional[int] = None
    max_withdrawn_share: float = DEFAULT_MAX_WITHDRAWN_SHARE


def shard_count(configured: Optional[int], executor_name: str) -> int:
    """The configured shard count, else one per step the executor runs at a time (1 in process)."""
    if configured is None:
        return 1 if executor_name in IN_PROCESS_EXECUTORS else DEFAULT_SHARDS
    if configured < 1:
        raise dg.Failure(f"gold_answers config `shards` must be >= 1, got {configured}")
    return configured


class ShardExecutionConfig(dg.Config):
    max_concurrency: int = 32


@dg.config_mapping
def refresh_config_to_ops(config: RefreshConfig) -> dict:
    """`RefreshConfig` stays the one config of `gold_answers`; each op gets the fields it uses."""
    return {
        "serve_questions": {"config": {"allow_open_sessions": config.allow_open_sessions}},
        "plan_gold_shards": {"config": {"shards": config.shards, "max_withdrawn_share": config.max_withdrawn_share}},
        "execute_gold_shard": {"config": {"max_concurrency": config.max_concurrency}},
    }


# Each op that materialises an asset names its output after the asset's graph output: inside a
# multi-asset, a `MaterializeResult` finds its output through the asset key it names.
@dg.op(ins={"question_pool": dg.In(dg.Nothing)}, out={"served_questions": dg.Out(dg.Nothing)})
def serve_questions(context: dg.OpExecutionContext, config: ServeConfig, data_service: DataServiceResource,
                    storage: StorageResource) -> dg.MaterializeResult:
    """The questions served on D (no answers): the file agents receive, identified by its qid-set hash.

    The first step of D's refresh: a day that cannot be refreshed now (`refuse_unready_day`) fails
    here, before anything of D is written, so a refused day serves nothing either."""
    day = partition_date(context)
    refuse_unready_day(day, data_service, config.allow_open_sessions)
    paths = storage.paths()
    manifest, pool = checked_pool(paths)
    served = served_from_pool(pool)
    written = write_served(paths.served_file(day), served)
    return dg.MaterializeResult(
        asset_key=served_questions,
        data_version=dg.DataVersion(written.qid_set_hash),
        metadata={
            "date": day.isoformat(), "questions": len(served), "qid_set_hash": written.qid_set_hash,
            "pool_version": manifest.version, "created": written.created,
            "path": dg.MetadataValue.path(str(written.path)),
            "by_tier": dg.MetadataValue.json(dict(sorted(Counter(q.tier for q in served).items()))),
        },
    )


@dg.op(
    ins={"served_questions": dg.In(dg.Nothing), "question_pool": dg.In(dg.Nothing), "data_service": dg.In(dg.Nothing)},
    out={"plan": dg.Out(RefreshPlan), "shards": dg.DynamicOut(GoldShard)},
)
def plan_gold_shards(context: dg.OpExecutionContext, config: ShardPlanConfig, data_service: DataServiceResource,
                     storage: StorageResource) -> Iterator[dg.Output | dg.DynamicOutput]:
    """Fix the served qids of D and split them into shards.

    A day not finished yet, after the service's clock or beyond the calendars was refused by
    `serve_questions` already; here a pool that does not verify, or a service that is not the one
    the pool's catalog describes, is refused before anything executes; the service is recorded
    as an observation of the `data_service` source asset (its identity is its data version), so
    D's gold names, in its lineage, the service it was computed from. The plan reads
    D's served file (the questions agents receive, frozen upstream), not the pool: the shards
    execute exactly what was served, and each shard step finds its programs in the pool by qid.
    """
    day = partition_date(context)
    shards = shard_count(config.shards, context.job_def.executor_def.name)
    paths = storage.paths()
    manifest, _ = checked_pool(paths)
    context.log_event(observation(check_catalog_matches_service(paths, manifest, data_service, day)))
    served_file = paths.served_file(day)
    if not served_file.is_file():
        raise dg.Failure(f"{served_file} does not exist: materialise served_questions for {day} first")
    questions = sorted(load_served(served_file), key=lambda q: q.qid)
    if not questions:
        raise dg.Failure(f"{served_file} serves no question; nothing to refresh")
    slices = split_into_shards(questions, shards)
    context.log.info(f"gold {day}: {len(questions)} programs in {len(slices)} shard(s) of "
                     f"{', '.join(str(len(s)) for s in slices)}")
    yield dg.Output(RefreshPlan(day=day, pool_version=manifest.version, pool_sha256=manifest.sha256,
                                qids=tuple(q.qid for q in questions), shard_count=len(slices),
                                max_withdrawn_share=config.max_withdrawn_share, planned_at=time.time()),
                    output_name="plan")
    for index, shard in enumerate(slices):
        yield dg.DynamicOutput(GoldShard(day=day, index=index, pool_version=manifest.version,
                                         qids=tuple(q.qid for q in shard)),
                               mapping_key=f"shard_{index:03d}", output_name="shards")


@dg.op
def execute_gold_shard(context: dg.OpExecutionContext, config: ShardExecutionConfig,
                       data_service: DataServiceResource, storage: StorageResource, shard: GoldShard) -> ShardResult:
    """Re-date and execute one shard's programs against the data service, as of D's cut-off.

    A point-in-time service runs with its clock at D whatever the wall clock, so the schedule, a
    UI backfill and `livesearch refresh` give the same bytes. A provider without a clock answers
    with what it holds now: the shard records when it asked (the data vintage).
    """
    by_qid = {q.qid: q for q in served_programs(storage.paths(), shard.pool_version)}
    missing = [qid for qid in shard.qids if qid not in by_qid]
    if missing:
        raise dg.Failure(f"shard {shard.index} of {shard.day}: {len(missing)} planned qid(s) are not served by the "
                         f"pool, e.g. {missing[:3]}")
    questions = [by_qid[qid] for qid in shard.qids]
    as_of = shard.day if data_service.point_in_time else None
    retrieved_at = None if data_service.point_in_time else dt.datetime.now(dt.timezone.utc)

    # Our own embedded service is called directly (its results are the bytes its MCP server sends,
    # without the session's re-validation of each against its schema: 13 s -> 3 s of CPU for the
    # 2,612 programs of make run's pool); any other service goes through its validating client.
    open_at = data_service.point_in_time_source()

    async def run() -> ShardResult:
        async with (open_at(shard.day) if open_at is not None else data_service.open(as_of=as_of)) as client:
            answers, stats = await execute_programs(questions, shard.day, client,
                                                    ExecutorConfig(max_concurrency=config.max_concurrency))
            return ShardResult(index=shard.index, answers=tuple(answers), data_service=client.identity, stats=stats,
                               retrieved_at=retrieved_at)

    result = aio.run(run())
    context.log.info(f"shard {shard.index}: {result.stats.programs} programs in {result.stats.wall_time_s:.2f} s, "
                     f"{dict(Counter(a.status for a in result.answers))}")
    return result


@dg.op(out={"gold_answers": dg.Out(dg.Nothing)})
def freeze_gold_snapshot(context: dg.OpExecutionContext, storage: StorageResource,
                         plan: RefreshPlan, results: list[ShardResult]) -> dg.MaterializeResult:
    """Validate, then freeze: judge every blocking condition on the computed answers, and only then
    write the snapshot once. A refused day writes nothing to the gold store (its answers are kept
    under `rejected/` for inspection) and can simply be refreshed again. The only writer of the
    snapshot: identical bytes are a no-op, different bytes fail naming both hashes."""
    answers, identity = assemble_answers(plan, results)
    refresh_wall_s = time.time() - plan.planned_at
    stats = combined_stats(results)
    paths = storage.paths()
    pool = {q.qid: q for q in served_programs(paths, plan.pool_version)}
    timing = point_in_time_fields(plan.day, results)
    answers = withdraw_stale_latest(plan.day, answers, pool, pool_publication_lags(paths))
    try:
        # The store judges the withdrawn share before it writes anything (core.snapshot.judge_answers).
        written = SnapshotStore(paths.gold).write(
            plan.day, answers, pool_version=plan.pool_version, pool_sha256=plan.pool_sha256, data_service=identity,
            code_version=CODE_VERSION, max_withdrawn_share=plan.max_withdrawn_share, **timing)
    except SnapshotRejectedError as exc:
        rejected = write_rejected(paths.rejected, plan.day, answers, [str(exc)],
                                  attempted_at=dt.datetime.now(dt.timezone.utc),
                                  context={"pool_version": plan.pool_version, "data_service": identity})
        raise dg.Failure(
            f"gold {plan.day} refused, nothing frozen: {exc}. The computed answers are kept in {rejected}; fix the "
            f"cause and refresh {plan.day} again",
            metadata={"rejected": dg.MetadataValue.path(str(rejected)), "problems": dg.MetadataValue.json([str(exc)])},
        ) from exc
    counts = Counter(a.status for a in answers)
    context.log.info(f"gold {plan.day}: {dict(counts)}, {len(written.manifest.withdrawn)} withdrawn; "
                     f"{'written' if written.created else 'identical snapshot already frozen'}")
    by_qid = {q.qid: q for q in load_served(paths.served_file(plan.day))}
    manifest = written.manifest
    return dg.MaterializeResult(
        asset_key=gold_answers,
        data_version=dg.DataVersion(manifest.sha256),
        metadata={
            "date": plan.day.isoformat(),
            "sha256": manifest.sha256,
            "created": written.created,
            "pool_version": plan.pool_version,
            "pool_sha256": manifest.pool_sha256,
            "data_service": identity,
            "cutoff": manifest.cutoff.isoformat() if manifest.cutoff else "none (provider without a clock)",
            "vintage": manifest.vintage.isoformat() if manifest.vintage else "point in time (cutoff)",
            "late_backfill": manifest.late_backfill,
            "code_version": manifest.code_version,
            "counts_by_status": dg.MetadataValue.json(dict(sorted(counts.items()))),
            "withdrawn": len(manifest.withdrawn),
            "withdrawn_qids": dg.MetadataValue.json(dict(list(manifest.withdrawn.items())[:20])),
            "scoring_set": len(answers) - len(manifest.withdrawn),
            "counts_by_tier": dg.MetadataValue.json(dict(sorted(Counter(by_qid[a.qid].tier for a in answers).items()))),
            "counts_by_asset_class": dg.MetadataValue.json(
                dict(sorted(Counter(by_qid[a.qid].asset_class for a in answers).items()))),
            "shards": plan.shard_count,
            "programs_by_shard": dg.MetadataValue.json([r.stats.programs for r in sorted(results, key=lambda r: r.index)]),
            "unique_tool_calls": stats.unique_calls,
            # Planning to assembly: the fan-out's wall time, Dagster's step hand-offs included.
            "refresh_wall_s": round(refresh_wall_s, 3),
            "programs_per_second": round(stats.programs / refresh_wall_s, 1) if refresh_wall_s > 0 else None,
            "snapshot": dg.MetadataValue.path(str(written.path)),
            "manifest": dg.MetadataValue.path(str(written.manifest_path)),
            "preview": dg.MetadataValue.md(preview_markdown(answers, by_qid, rows=8)),
        },
    )


# The served questions of D and D's gold are one multi-asset that cannot be subset: selecting
# either one (an asset page's Materialize, a backfill of `gold_answers` alone, `dg.materialize`)
# runs both, so D's gold is never computed without D's served file from the same run. The UI names
# the added asset before it launches ("Additional assets will be materialized: served_questions"),
# and the backfill daemon requests a non-subsettable multi-asset whole (its execution set).


@dg.graph(
    # The node keeps the name `gold_answers`: run config stays `ops: {gold_answers: {config: ...}}`.
    name="gold_answers",
    ins={"question_pool": dg.GraphIn(), "data_service": dg.GraphIn()},
    out={"served_questions": dg.GraphOut(), "gold_answers": dg.GraphOut()},
    config=refresh_config_to_ops,
)
def refresh_graph(question_pool, data_service):
    """Serve D's questions, re-date every served program to D, execute it in shards, and freeze
    `gold_answers_<D>.jsonl` once."""
    served = serve_questions(question_pool=question_pool)
    planned = plan_gold_shards(served_questions=served, question_pool=question_pool, data_service=data_service)
    results = planned.shards.map(execute_gold_shard).collect()
    return {"served_questions": served, "gold_answers": freeze_gold_snapshot(plan=planned.plan, results=results)}


_SERVED_OUT = dg.AssetOut(
    code_version=CODE_VERSION, kinds={"json"},
    description="The questions served on D (no answers): the file agents receive, identified by its qid-set hash. "
                "Materialised in one run with gold_answers (a multi-asset that cannot be subset).")
_GOLD_OUT = dg.AssetOut(
    code_version=CODE_VERSION, kinds={"json"},
    description="Every served program re-dated to D and executed in shards; `gold_answers_<D>.jsonl` is frozen once "
                "(write-once snapshot and manifest). Materialised in one run with served_questions.")
_OUTS = {"served_questions": _SERVED_OUT, "gold_answers": _GOLD_OUT}

# `AssetsDefinition.from_graph` rather than `@graph_multi_asset`, which cannot declare that
# gold_answers reads served_questions (lineage would show two siblings of question_pool).
daily_refresh_assets = dg.AssetsDefinition.from_graph(
    refresh_graph,
    # Order-only dependency (no data is loaded; the op input is `Nothing`): the pool must exist first.
    keys_by_input_name={"question_pool": dg.AssetKey("question_pool"), "data_service": DATA_SERVICE},
    keys_by_output_name={name: dg.AssetKey(name) for name in _OUTS},
    internal_asset_deps={"served_questions": {dg.AssetKey("question_pool")},
                         "gold_answers": {dg.AssetKey("question_pool"), dg.AssetKey("served_questions"), DATA_SERVICE}},
    partitions_def=daily_partitions,
    group_name=GROUP,
    can_subset=False,
    descriptions_by_output_name={name: out.description for name, out in _OUTS.items()},
    tags_by_output_name={name: out.tags for name, out in _OUTS.items()},
    code_versions_by_output_name={name: out.code_version for name, out in _OUTS.items()},
    owners_by_output_name={name: owners_of(GROUP) for name in _OUTS},
)

# The keys other modules depend on, select and check (`AssetDep(gold_answers, ...)`,
# `AssetSelection.assets(served_questions, gold_answers)`, `AssetCheckSpec(asset=gold_answers)`).
# A multi-asset cannot stand in for one of its keys there; its definition is `daily_refresh_assets`.
served_questions = dg.AssetKey("served_questions")
gold_answers = dg.AssetKey("gold_answers")
