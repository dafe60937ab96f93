"""Construction stages 1–6 as assets (DESIGN §2). Thin: each calls construction/ and writes its table."""


import datetime as dt
from collections import Counter
from contextlib import AbstractAsyncContextManager
from typing import Optional

import dagster as dg
from pydantic import Field

from livesearch_pipeline.core import aio
from livesearch_pipeline.construction.enumerate import enumerate_candidates
from livesearch_pipeline.construction.models import Candidate, CoverageRow, EntityInfo, ProbeRow
from livesearch_pipeline.construction.dynamics import DEFAULT_REPLAY_DAYS, DynamicsPolicy
from livesearch_pipeline.construction.pipeline import (
    TABLES,
    group_entities,
    profile_stage,
    read_catalog,
    read_enumeration_date,
    read_table,
    reserve_for_verbalizing,
    verbalize_candidates,
    write_catalog,
    write_enumeration_date,
    write_table,
)
from livesearch_pipeline.construction.pool import PoolPolicy, select_pool, write_pool
from livesearch_pipeline.construction.sampling import load_entities, plan_coverage, probe_tools, restrict_catalog
from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.core.models import Question
from livesearch_pipeline.defs.owners import owners_of
from livesearch_pipeline.defs.resources import DataServiceResource, LLMResource, StorageResource
from livesearch_pipeline.defs.sources import DATA_SERVICE

GROUP = "construction"


class ConstructionConfig(dg.Config):
    as_of: Optional[str] = None  # YYYY-MM-DD; default: the data service clock, else today
    sample_size: int = 7
    seed: int = 7
    tools: list[str] = Field(
        default_factory=list,
        description="Data tools to build the pool from (catalog names); empty = every data tool. "
        "Applied by tool_probe; candidates enumerates only the listed tools too.",
    )


_DEFAULT_POLICY = PoolPolicy()


class PoolPolicyConfig(dg.Config):
    """The pool's caps (stage 2 filter): read by verbalized_questions (how many candidates get a text)
    and question_pool (the selection). Defaults: `construction.pool.PoolPolicy()`."""

    max_per_signature: int = Field(_DEFAULT_POLICY.max_per_signature, ge=1,
                                   description="Questions per signature (program shape) at most.")
    max_per_chain_signature: int = Field(_DEFAULT_POLICY.max_per_chain_signature, ge=1,
                                         description="Questions per multi-step family signature at most.")
    max_per_tool: int = Field(_DEFAULT_POLICY.max_per_tool, ge=1,
                              description="Questions per data tool (a multi-step program: per chain) at most.")
    max_slow_per_tool: int = Field(_DEFAULT_POLICY.max_slow_per_tool, ge=0,
                                   description="Of a tool's questions, at most this many slower than `daily`.")
    max_per_chain: int = Field(_DEFAULT_POLICY.max_per_chain, ge=1,
                               description="Questions per chain (multi-step program or investigation) at most.")
    max_slow_per_chain: int = Field(_DEFAULT_POLICY.max_slow_per_chain, ge=0,
                                    description="Of a chain's questions, at most this many slower than `daily`.")
    seed: int = Field(_DEFAULT_POLICY.seed, description="Seed of the pool's draws.")

    def policy(self) -> PoolPolicy:
        return PoolPolicy(max_per_signature=self.max_per_signature,
                          max_per_chain_signature=self.max_per_chain_signature, max_per_tool=self.max_per_tool,
                          max_slow_per_tool=self.max_slow_per_tool, max_per_chain=self.max_per_chain,
                          max_slow_per_chain=self.max_slow_per_chain, seed=self.seed)


def _as_of(config: ConstructionConfig, data_service: DataServiceResource) -> dt.date:
    if config.as_of:
        return dt.date.fromisoformat(config.as_of)
    return data_service.clock_date() or dt.date.today()


def construction_client(data_service: DataServiceResource, as_of: dt.date) -> AbstractAsyncContextManager[ToolClient]:
    """The service the enumeration calls, as of the construction date.

    Construction as of a day sees the market as of that day (a pool built "as of" a past date
    must not read figures published after it), where the service has a clock to set. The
    embedded service is then called directly, like the replay (candidate_dynamics): the
    enumeration makes ~7,000 calls, and the in-process MCP session's JSON-schema validation of
    each result was ~60 % of the step (106 s through MCP, 51 s direct, the same candidates).
    The results are the bytes the MCP server sends (dataservice/point_in_time.ServiceClient);
    the catalog, the probe, the gold and the agents keep MCP. A service without a clock is
    opened as it is.
    """
    open_at = data_service.point_in_time_source()
    return open_at(as_of) if open_at is not None else data_service.open()


def _table_meta(rows: int, path) -> dict:
    return {"rows": rows, "path": dg.MetadataValue.path(str(path))}


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), deps=[DATA_SERVICE], kinds={"python", "json"})
def tool_catalog(context: dg.AssetExecutionContext, data_service: DataServiceResource, storage: StorageResource) -> dg.MaterializeResult:
    """Every tool of the data service with its metadata; only role `data` may define gold."""

    async def run():
        async with data_service.open() as client:
            return await client.list_tools()

    catalog = aio.run(run())
    path = storage.paths().construction / TABLES["catalog"]
    write_catalog(path, catalog)
    roles = Counter(t.role for t in catalog.tools)
    services = Counter(t.service for t in catalog.data_tools())
    return dg.MaterializeResult(metadata={
        "data_service": catalog.service, "tools": len(catalog.tools), "data_tools": roles["data"],
        "excluded_tools": dg.MetadataValue.json({r: n for r, n in roles.items() if r != "data"}),
        "services": dg.MetadataValue.json(dict(sorted(services.items()))), "path": dg.MetadataValue.path(str(path)),
    })


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), deps=[tool_catalog], kinds={"python"})
def tool_probe(config: ConstructionConfig, data_service: DataServiceResource, storage: StorageResource) -> dg.MaterializeResult:
    """Per data tool × asset class: sampled entities, non-empty answers, errors, usable (strict majority)."""
    paths = storage.paths()
    catalog = read_catalog(paths.construction / TABLES["catalog"])
    # Checked before the client opens, so a bad name fails with its own message rather than
    # inside the client's task group.
    restricted = restrict_catalog(catalog, config.tools)

    as_of = _as_of(config, data_service)

    async def run():
        # Over the service's own client (MCP for the embedded one): the probe is the one
        # construction stage that sees the service as an agent does.
        async with data_service.open(as_of=as_of if data_service.point_in_time else None) as client:
            entities = await load_entities(client, catalog)
            rows = await probe_tools(client, restricted, entities, as_of, sample_size=config.sample_size,
                                     seed=config.seed)
            return entities, rows

    entities, rows = aio.run(run())
    write_table(paths.construction / TABLES["entities"], [e for g in entities.values() for e in g])
    write_table(paths.construction / TABLES["probe"], rows)
    return dg.MaterializeResult(metadata={
        **_table_meta(len(rows), paths.construction / TABLES["probe"]),
        "usable": sum(r.usable for r in rows), "unusable": sum(not r.usable for r in rows),
        "entities": sum(len(g) for g in entities.values()),
    })


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), deps=[tool_probe], kinds={"python"})
def coverage(storage: StorageResource) -> dg.MaterializeResult:
    """One entity per visibility level 0..10 for every usable tool × class (seeded)."""
    paths = storage.paths()
    catalog = read_catalog(paths.construction / TABLES["catalog"])
    entities = group_entities(read_table(paths.construction / TABLES["entities"], EntityInfo))
    rows = plan_coverage(read_table(paths.construction / TABLES["probe"], ProbeRow), catalog, entities)
    write_table(paths.construction / TABLES["coverage"], rows)
    return dg.MaterializeResult(metadata={
        **_table_meta(len(rows), paths.construction / TABLES["coverage"]),
        "skipped_levels": sum(1 for r in rows if r.skipped),
        "levels": dg.MetadataValue.json(dict(sorted(Counter(r.visibility for r in rows if not r.skipped).items()))),
    })


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), deps=[coverage], kinds={"python"})
def candidates(context: dg.AssetExecutionContext, config: ConstructionConfig, data_service: DataServiceResource,
               storage: StorageResource) -> dg.MaterializeResult:
    """Every extractor with a stable non-null answer on the covered (tool, entity) pairs, filtered."""
    paths = storage.paths()
    catalog = restrict_catalog(read_catalog(paths.construction / TABLES["catalog"]), config.tools)
    entities = group_entities(read_table(paths.construction / TABLES["entities"], EntityInfo))
    allowed = {t.name for t in catalog.data_tools()}
    rows = [r for r in read_table(paths.construction / TABLES["coverage"], CoverageRow) if r.tool in allowed]

    as_of = _as_of(config, data_service)

    async def run():
        async with construction_client(data_service, as_of) as client:
            # With a point-in-time service the second execution runs in a forked process.
            return await enumerate_candidates(client, catalog, rows, entities, as_of, report=context.log.info,
                                              open_at=data_service.point_in_time_source())

    result = aio.run(run())
    write_table(paths.construction / TABLES["candidates"], result.candidates)
    write_table(paths.construction / TABLES["filters"], result.filters)
    write_enumeration_date(paths.construction, as_of)
    return dg.MaterializeResult(metadata={
        **_table_meta(len(result.candidates), paths.construction / TABLES["candidates"]),
        "drafts": result.drafts,
        "filters": dg.MetadataValue.json({f.filter: f.dropped for f in result.filters}),
        "by_tier": dg.MetadataValue.json(dict(sorted(Counter(c.tier for c in result.candidates).items()))),
    })


class DynamicsConfig(dg.Config):
    replay_days: int = Field(DEFAULT_REPLAY_DAYS, description="Consecutive past sessions each candidate is replayed "
                             "at (each at its own point-in-time cut-off); pairs = days - 1.")


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), deps=[candidates], kinds={"python"})
def candidate_dynamics(context: dg.AssetExecutionContext, config: DynamicsConfig, data_service: DataServiceResource,
                       storage: StorageResource) -> dg.MaterializeResult:
    """Every candidate replayed at past sessions: observed refresh class and tier, never-moving and trivial answers dropped."""
    paths = storage.paths()
    catalog = read_catalog(paths.construction / TABLES["catalog"])
    rows = read_table(paths.construction / TABLES["candidates"], Candidate)
    # The replay ends on the day the candidates were enumerated, whatever this run's config says.
    as_of = read_enumeration_date(paths.construction)
    open_at = data_service.point_in_time_source()
    policy = DynamicsPolicy(days=config.replay_days)

    async def run():
        if open_at is not None:
            return await profile_stage(rows, catalog, paths.construction, as_of, open_at=open_at, client=None,
                                       policy=policy, report=context.log.info)
        async with data_service.open() as client:
            return await profile_stage(rows, catalog, paths.construction, as_of, open_at=None, client=client,
                                       policy=policy, report=context.log.info)

    result = aio.run(run())
    return dg.MaterializeResult(metadata={
        **_table_meta(len(result.candidates), paths.construction / TABLES["profiled"]),
        "as_of": as_of.isoformat(), "replayed": len(result.rows), "point_in_time": result.point_in_time,
        "days": dg.MetadataValue.json({cal: [d.isoformat() for d in (days[0], days[-1])] for cal, days in result.days.items()}),
        "dropped": dg.MetadataValue.json({f.filter: f.dropped for f in result.filters}),
        "by_class": dg.MetadataValue.json(result.by_class), "by_tier": dg.MetadataValue.json(result.by_tier),
        "tool_calls": result.stats.calls, "program_runs": result.stats.programs,
        "profiles": dg.MetadataValue.path(str(paths.construction / TABLES["dynamics"])),
    })


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), deps=[candidate_dynamics], kinds={"python"})
def verbalized_questions(config: PoolPolicyConfig, storage: StorageResource, llm: LLMResource) -> dg.MaterializeResult:
    """Question texts (the LLM resource's model when one is configured, else the template), clamped and date-gated."""
    paths = storage.paths()
    rows = read_table(paths.construction / TABLES["profiled"], Candidate)
    catalog = read_catalog(paths.construction / TABLES["catalog"])
    reserve = reserve_for_verbalizing(rows, config.policy())
    verbalizer = llm.verbalizer(paths)
    questions, rejects = aio.run(verbalize_candidates(reserve, verbalizer, catalog=catalog))
    write_table(paths.construction / TABLES["verbalized"], questions)
    write_table(paths.construction / TABLES["rejects"], rejects)
    return dg.MaterializeResult(metadata={
        **_table_meta(len(questions), paths.construction / TABLES["verbalized"]),
        "verbalizer": verbalizer.model if verbalizer else "template",
        "candidates_verbalized": len(reserve),
        "rejects": len(rejects),
        "rejects_by_stage": dg.MetadataValue.json(dict(Counter(r.stage for r in rejects))),
    })


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), deps=[verbalized_questions], kinds={"python", "json"})
def question_pool(context: dg.AssetExecutionContext, config: PoolPolicyConfig, storage: StorageResource) -> dg.MaterializeResult:
    """Stage 2 filter (no LLM) and the versioned pool `pool/questions.jsonl` + manifest."""
    from livesearch_pipeline.evaluation.history import signature_history

    paths = storage.paths()
    questions = read_table(paths.construction / TABLES["verbalized"], Question)
    history = signature_history(paths, questions)
    selection = select_pool(questions, history, config.policy())
    catalog_path = paths.construction / TABLES["catalog"]
    catalog = read_catalog(catalog_path)
    # The pool carries the catalog it was built from: a pool folder copied alone still refreshes.
    manifest = write_pool(paths.pool, selection.questions, data_service=catalog.service,
                          catalog_bytes=catalog_path.read_bytes())
    return dg.MaterializeResult(
        data_version=dg.DataVersion(manifest.version),
        metadata={
            "pool_version": manifest.version, "questions": manifest.questions, "sha256": manifest.sha256,
            "dropped_solved_signatures": len(selection.dropped_solved_signatures),
            "reinstantiated": selection.reinstantiated,
            "counts": dg.MetadataValue.json(manifest.counts),
            "path": dg.MetadataValue.path(str(paths.pool / "questions.jsonl")),
        },
    )
