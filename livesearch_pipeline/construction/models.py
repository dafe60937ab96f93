"""Tables of the construction stages (DESIGN §2 stages 1–6), one pydantic model per row type."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, model_validator

from livesearch_pipeline.core.models import (
    AssetClass,
    Dynamics,
    MatchRule,
    Program,
    Qid,
    RefreshClass,
    StrictModel,
    Tier,
)


class EntityInfo(StrictModel):
    """An instrument (or a data series) a question can be about."""

    code: str
    name: str
    asset_class: AssetClass
    visibility: int = Field(ge=0, le=10)
    calendar: str | None = None


class ProbeRow(StrictModel):
    tool: str
    asset_class: AssetClass
    sampled: int
    returned: int
    errors: int
    usable: bool
    sample: list[str]
    note: str | None = None  # why the tool was not sampled at all


class CoverageRow(StrictModel):
    tool: str
    asset_class: AssetClass
    visibility: int = Field(ge=0, le=10)
    entity: str | None
    entity_name: str | None
    skipped: str | None = None  # why the level has no entity (the class has none there)


class Naming(StrictModel):
    """How a question names its entity without a code (construction/naming.py): the name, the
    phrase each text says it with ("the company formerly named X" / "原名X的公司" for a former name;
    None in Chinese for an entity with no Chinese name to give)."""

    kind: Literal["short", "english", "former"]
    name: str
    en: str
    zh: str | None = None


class CandidateFacts(StrictModel):
    """What a verbalizer needs to phrase a candidate; derived from the program and the catalog."""

    tool: str
    tool_description: str
    field: str
    field_description: str
    field_description_zh: str | None = None
    field_unit: str | None = None
    anchor: str  # machine-readable description of the time anchor, e.g. "latest", "window:20"
    aggregate: str | None = None
    calendar: str | None = None
    other_entity: str | None = None
    other_entity_name: str | None = None
    ref_description: str | None = None
    observed_value: float | int | str
    observed_answer: str
    observed_period: str | None = None
    # Set when the question names its entity (and the one it is compared with) without a code.
    named_as: Naming | None = None
    other_named_as: Naming | None = None


class Candidate(StrictModel):
    """An extractor that returned a non-null, stable value: a question waiting for its text."""

    qid: Qid
    signature: str
    tier: Tier
    refresh_class: RefreshClass
    asset_class: AssetClass
    entity: str
    entity_name: str
    visibility: int = Field(ge=0, le=10)
    program: Program
    facts: CandidateFacts
    # Set by the dynamics stage, which also sets refresh_class and tier from it.
    dynamics: Dynamics | None = None


class DynamicsRow(StrictModel):
    """One replayed candidate: its answer on every replayed day, the profile, kept or why dropped."""

    qid: Qid
    tool: str
    signature: str
    entity: str
    anchor: str
    aggregate: str | None = None
    days: list[dt.date]
    answers: list[str | None]  # the answer on each day; None where the program was not `ok`
    dynamics: Dynamics
    dropped: str | None = None  # the filter that dropped it (a row of dynamics_filters.jsonl)
    detail: str

    @model_validator(mode="after")
    def _aligned(self) -> DynamicsRow:
        if len(self.days) != len(self.answers) or len(self.days) != self.dynamics.days:
            raise ValueError(f"{self.qid}: {len(self.days)} days, {len(self.answers)} answers, "
                             f"profile of {self.dynamics.days} days")
        if (self.dropped is None) != (self.dynamics.observed_class is not None):
            raise ValueError(f"{self.qid}: a kept row has an observed class, a dropped one has none")
        return self


class EnumerationDate(StrictModel):
    """`enumeration_date.json`: the construction date the candidates were enumerated at; the
    dynamics stage replays the sessions ending on it."""

    as_of: dt.date


class FilterCount(StrictModel):
    filter: str
    dropped: int


class RejectRow(StrictModel):
    """A candidate the verbalize stage did not turn into a question, and why."""

    qid: Qid
    stage: Literal["llm_reject", "malformed", "date_gate", "clamp", "llm_error", "lint"]
    reason: str
    question: str | None = None
    question_zh: str | None = None
    proposed_match: MatchRule | None = None
