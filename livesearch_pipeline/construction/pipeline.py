"""The construction stages end to end, and the tables each stage leaves on disk.

Each stage writes one JSONL table under `<data>/construction/` (one pydantic model per table),
so the Dagster assets, the CLI and auditors read the same files. `build_pool` chains them.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence, TypeVar

from pydantic import BaseModel

from livesearch_pipeline.construction.dynamics import DynamicsPolicy, DynamicsResult, OpenAt, profile_candidates
from livesearch_pipeline.construction.enumerate import EnumerationResult, enumerate_candidates
from livesearch_pipeline.construction.models import (
    Candidate,
    CoverageRow,
    EntityInfo,
    EnumerationDate,
    FilterCount,
    ProbeRow,
    RejectRow,
)
from livesearch_pipeline.construction.pool import PoolPolicy, SignatureHistory, preselect, select_pool, write_pool
from livesearch_pipeline.construction.sampling import load_entities, plan_coverage, probe_tools, restrict_catalog
from livesearch_pipeline.construction.verbalize import (
    LLMVerbalizerConfig,
    finalize,
    llm_verbalize,
    template_verbalize,
)
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.core.jsonl import parse_jsonl, write_jsonl
from livesearch_pipeline.core.models import PoolManifest, Question
from livesearch_pipeline.core.pool import CATALOG_FILE, read_catalog as read_catalog
from livesearch_pipeline.core.snapshot import write_atomic

T = TypeVar("T", bound=BaseModel)

# Candidates verbalized per signature, as a multiple of the pool's cap: the spares replace
# rejected texts and are the fresh entities stage 6 re-instantiates templates with.
RESERVE_FACTOR = 3

TABLES = {
    "catalog": CATALOG_FILE,
    "entities": "entities.jsonl",
    "probe": "tool_probe.jsonl",
    "coverage": "coverage.jsonl",
    "candidates": "candidates.jsonl",
    "filters": "enumeration_filters.jsonl",
    "enumeration_date": "enumeration_date.json",
    # Stage 4b: every candidate's replay (kept or dropped), the drops by reason, the kept ones.
    "dynamics": "candidate_dynamics.jsonl",
    "dynamics_filters": "dynamics_filters.jsonl",
    "profiled": "profiled_candidates.jsonl",
    "verbalized": "verbalized_questions.jsonl",
    "rejects": "rejects.jsonl",
}


def write_table(path: Path, rows: Sequence[BaseModel]) -> None:
    write_jsonl(path, rows)


def read_table(path: Path, model: type[T]) -> list[T]:
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; materialise the stage that writes it first")
    return parse_jsonl(path, path.read_bytes(), model, model.__name__, skip_blank=True)


def write_catalog(path: Path, catalog: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(catalog.model_dump(mode="json"), indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode())


def write_enumeration_date(construction_dir: Path, as_of: dt.date) -> None:
    path = construction_dir / TABLES["enumeration_date"]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (EnumerationDate(as_of=as_of).model_dump_json() + "\n").encode())


def read_enumeration_date(construction_dir: Path) -> dt.date:
    path = construction_dir / TABLES["enumeration_date"]
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; materialise the candidates stage first")
    try:
        return EnumerationDate.model_validate_json(path.read_bytes()).as_of
    except ValueError as exc:
        raise ValueError(f"{path}: not a valid {EnumerationDate.__name__}: {exc}") from exc


def group_entities(rows: Sequence[EntityInfo]) -> dict[str, list[EntityInfo]]:
    out: dict[str, list[EntityInfo]] = {}
    for e in rows:
        out.setdefault(e.asset_class, []).append(e)
    return out


@dataclass(frozen=True)
class BuildConfig:
    as_of: dt.date
    sample_size: int = 7
    probe_seed: int = 7
    coverage_seed: int = 11
    policy: PoolPolicy = PoolPolicy()
    llm: LLMVerbalizerConfig | None = None
    # Data tools to build from (names from the catalog); empty = every data tool.
    tools: tuple[str, ...] = ()
    dynamics: DynamicsPolicy = DynamicsPolicy()


@dataclass
class BuildReport:
    manifest: PoolManifest
    probe: list[ProbeRow]
    coverage: list[CoverageRow]
    enumeration: EnumerationResult
    dynamics: DynamicsResult
    verbalized: int
    rejects: list[RejectRow]
    pool_size: int
    stage_seconds: dict[str, float] = field(default_factory=dict)


def reserve_for_verbalizing(candidates: Sequence[Candidate], policy: PoolPolicy) -> list[Candidate]:
    """The candidates worth a text: RESERVE_FACTOR times what the pool's caps can take."""
    return preselect(candidates, policy.max_per_signature * RESERVE_FACTOR, policy.seed,
                     signatures_per_tool=policy.max_per_tool * RESERVE_FACTOR)


async def verbalize_candidates(candidates: Sequence[Candidate], llm: LLMVerbalizerConfig | None, *,
                               catalog: Catalog | None = None) -> tuple[list[Question], list[RejectRow]]:
    if llm is None:
        items, rejects = template_verbalize(candidates), []
    else:
        items, rejects = await llm_verbalize(candidates, llm)
    # With the catalog (construction always passes it), the lint also knows each tool's series keys
    # and descriptions.
    questions, gate_rejects = finalize(items, catalog)
    return with_dynamics(questions, candidates), sorted([*rejects, *gate_rejects], key=lambda r: r.qid)


def with_dynamics(questions: Sequence[Question], candidates: Sequence[Candidate]) -> list[Question]:
    """Each question with its candidate's dynamics profile in its provenance (DESIGN §4.1)."""
    profiles = {c.qid: c.dynamics for c in candidates}
    out = []
    for q in questions:
        dynamics = profiles.get(q.qid)
        if dynamics is None:
            out.append(q)
            continue
        # Validated again: the profile's class and tier must be the question's own.
        out.append(Question.model_validate(
            {**q.model_dump(), "provenance": {**q.provenance.model_dump(), "dynamics": dynamics.model_dump()}}))
    return out


async def profile_stage(candidates: Sequence[Candidate], catalog: Catalog, construction_dir: Path, as_of: dt.date,
                        *, open_at: OpenAt | None, client: ToolClient | None,
                        policy: DynamicsPolicy) -> DynamicsResult:
    """Stage 4b: replay, write the three dynamics tables, return the result."""
    result = await profile_candidates(candidates, catalog, as_of, open_at=open_at, client=client, policy=policy)
    write_table(construction_dir / TABLES["dynamics"], result.rows)
    write_table(construction_dir / TABLES["dynamics_filters"], result.filters)
    write_table(construction_dir / TABLES["profiled"], result.candidates)
    return result


async def build_pool(
    client: ToolClient,
    catalog: Catalog,
    construction_dir: Path,
    pool_dir: Path,
    config: BuildConfig,
    history: dict[str, SignatureHistory] | None = None,
    *,
    point_in_time: OpenAt | None = None,
) -> BuildReport:
    """Run stages 2–6 against `client` and write every table plus the pool.

    `point_in_time(day)` opens the data service at a past day's cut-off for the dynamics replay
    (the embedded service: `dataservice.point_in_time.EmbeddedPointInTime`). Without it the
    replay re-dates the programs against `client` as it is, and every profile records
    `point_in_time: false` (a provider without a clock).
    """
    restricted = restrict_catalog(catalog, config.tools)
    seconds: dict[str, float] = {}
    started = mark = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        seconds[stage] = now - mark
        mark = now

    write_catalog(construction_dir / TABLES["catalog"], catalog)
    entities = await load_entities(client, catalog)
    write_table(construction_dir / TABLES["entities"], [e for group in entities.values() for e in group])
    probe = await probe_tools(client, restricted, entities, config.as_of,
                              sample_size=config.sample_size, seed=config.probe_seed)
    write_table(construction_dir / TABLES["probe"], probe)
    lap("probe")
    coverage = plan_coverage(probe, catalog, entities, seed=config.coverage_seed)
    write_table(construction_dir / TABLES["coverage"], coverage)
    lap("coverage")
    enumeration = await enumerate_candidates(client, catalog, coverage, entities, config.as_of)
    write_table(construction_dir / TABLES["candidates"], enumeration.candidates)
    write_table(construction_dir / TABLES["filters"], enumeration.filters)
    write_enumeration_date(construction_dir, config.as_of)
    lap("enumerate")
    dynamics = await profile_stage(enumeration.candidates, catalog, construction_dir, config.as_of,
                                   open_at=point_in_time, client=client, policy=config.dynamics)
    lap("dynamics")
    reserve = reserve_for_verbalizing(dynamics.candidates, config.policy)
    questions, rejects = await verbalize_candidates(reserve, config.llm, catalog=catalog)
    write_table(construction_dir / TABLES["verbalized"], questions)
    write_table(construction_dir / TABLES["rejects"], rejects)
    lap("verbalize")
    selection = select_pool(questions, history or {}, config.policy)
    manifest = write_pool(pool_dir, selection.questions, data_service=client.identity)
    lap("pool")
    seconds["total"] = time.perf_counter() - started
    return BuildReport(manifest=manifest, probe=probe, coverage=coverage, enumeration=enumeration,
                       dynamics=dynamics, verbalized=len(questions), rejects=rejects, pool_size=len(selection.questions),
                       stage_seconds=seconds)


__all__ = ["BuildConfig", "BuildReport", "FilterCount", "build_pool", "read_table", "write_table", "TABLES"]
