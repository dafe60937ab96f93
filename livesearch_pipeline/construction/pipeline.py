"""The construction stages end to end, and the tables each stage leaves on disk.

Each stage writes one JSONL table under `<data>/construction/` (one pydantic model per table),
so the Dagster assets, the CLI and auditors read the same files. The construction assets
(`defs/construction/assets.py`) chain the stages; `defs.construction.materialize.materialize_pool`
is the one way to run them end to end.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Sequence, TypeVar

from pydantic import BaseModel

from livesearch_pipeline.construction.dynamics import DynamicsPolicy, DynamicsResult, profile_candidates
from livesearch_pipeline.construction.models import (
    Candidate,
    EntityInfo,
    EnumerationDate,
    RejectRow,
)
from livesearch_pipeline.construction.pool import PoolPolicy, preselect
from livesearch_pipeline.construction.verbalize import (
    LLMVerbalizerConfig,
    finalize,
    llm_verbalize,
    template_verbalize,
)
from livesearch_pipeline.core.progress import Report
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.client import OpenAt, ToolClient
from livesearch_pipeline.core.jsonl import parse_jsonl, write_jsonl
from livesearch_pipeline.core.models import Question
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


def reserve_for_verbalizing(candidates: Sequence[Candidate], policy: PoolPolicy) -> list[Candidate]:
    """The candidates worth a text: RESERVE_FACTOR times what the pool's caps can take."""
    return preselect(candidates, policy.max_per_signature * RESERVE_FACTOR, policy.seed,
                     signatures_per_tool=policy.max_per_tool * RESERVE_FACTOR,
                     per_chain_signature=policy.max_per_chain_signature * 2)


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
        # Checked: the profile's class and tier must be the question's own.
        out.append(q.with_dynamics(dynamics))
    return out


async def profile_stage(candidates: Sequence[Candidate], catalog: Catalog, construction_dir: Path, as_of: dt.date,
                        *, open_at: OpenAt | None, client: ToolClient | None,
                        policy: DynamicsPolicy, report: Report = None) -> DynamicsResult:
    """Stage 4b: replay, write the three dynamics tables, return the result (`report`: progress)."""
    result = await profile_candidates(candidates, catalog, as_of, open_at=open_at, client=client, policy=policy,
                                      report=report)
    write_table(construction_dir / TABLES["dynamics"], result.rows)
    write_table(construction_dir / TABLES["dynamics_filters"], result.filters)
    write_table(construction_dir / TABLES["profiled"], result.candidates)
    return result


__all__ = ["TABLES", "read_table", "write_table"]
