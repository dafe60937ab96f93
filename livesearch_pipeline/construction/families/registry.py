"""The registry of question families: which families exist, in drafting order, and what follows
from the list — the tools whose responses enumeration explores for them (`FAMILY_TOOLS`), how
texts name their record filters (`WHERE_FORMS`), the instruments they are drafted for and the
drafting of all of them (`family_drafts`).

Adding a family: a module with its drafting and texts and a `Family` (see base.py), appended to
`FAMILIES` here.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from livesearch_pipeline.construction.families import (
    dividends, investigations, peers, prices, reconciled, reports, resolution,
)
from livesearch_pipeline.construction.families.base import DraftInputs, Family, FamilyDraft
from livesearch_pipeline.construction.models import EntityInfo
from livesearch_pipeline.core.catalog import Catalog, ToolMeta
from livesearch_pipeline.core.models import DateSpec

# Drafting order (the order of the candidates, and so of every table after them).
FAMILIES: tuple[Family, ...] = (
    reports.SPEC, dividends.SPEC, resolution.SPEC, prices.ADJ_RETURN, prices.FX_CONVERT, prices.PRICE_TO_NAV,
    investigations.SPEC, prices.COMPARE, reconciled.CAGR, reconciled.AH_PREMIUM, reconciled.CROSS_CURRENCY,
    peers.PEER_BEST, reconciled.GROWTH_FIRST, reconciled.FISCAL_GROWTH,
)
BY_NAME: dict[str, Family] = {name: family for family in FAMILIES for name in family.names}


def _merged_tools(families: Sequence[Family]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for family in families:
        for cls, tools in family.tools.items():
            out[cls] = tuple(dict.fromkeys((*out.get(cls, ()), *tools)))
    return out


# The tools whose response a family's drafts read (their records are explored for its entities).
FAMILY_TOOLS: dict[str, tuple[str, ...]] = _merged_tools(FAMILIES)
# How a text names the records a family's `where` keeps (the lint checks that it does).
WHERE_FORMS: dict[tuple[str, str], tuple[str, str]] = {
    key: forms for family in FAMILIES for key, forms in family.where_forms.items()}
# Instruments per visibility level a family is drafted for, from every instrument enumeration
# covered in the class (coverage draws one per level per tool: a family gets a spread of its own).
FAMILY_ENTITIES_PER_LEVEL = 2


def family_entities(entities: Sequence[EntityInfo]) -> dict[str, list[EntityInfo]]:
    """Per instrument class, up to FAMILY_ENTITIES_PER_LEVEL instruments at each visibility level
    (in code order) among `entities` (those enumeration covered): the entities families are drafted for."""
    by_class: dict[str, dict[int, list[EntityInfo]]] = {}
    for e in sorted({e.code: e for e in entities}.values(), key=lambda e: e.code):
        level = by_class.setdefault(e.asset_class, {}).setdefault(e.visibility, [])
        if len(level) < FAMILY_ENTITIES_PER_LEVEL:
            level.append(e)
    return {cls: [e for lv in sorted(levels) for e in levels[lv]] for cls, levels in sorted(by_class.items())}


def family_targets(catalog: Catalog, entities: Sequence[EntityInfo]) -> dict[str, list[EntityInfo]]:
    """tool -> the entities whose response to it the families read (see FAMILY_TOOLS)."""
    out: dict[str, list[EntityInfo]] = {}
    for asset_class, group in family_entities(entities).items():
        for name in FAMILY_TOOLS.get(asset_class, ()):
            tool = catalog.get(name)
            if tool is not None and tool.defines_gold:
                out[name] = list(group)
    return out


def family_drafts(catalog: Catalog, covered: Mapping[str, Sequence[EntityInfo]],
                  explored: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]],
                  lookback_of: Callable[[ToolMeta, EntityInfo], dict[str, DateSpec]],
                  problems: list[str] | None = None, handles: Mapping[str, str] | None = None,
                  market: Mapping[str, EntityInfo] | None = None,
                  basics: Mapping[str, Mapping[str, Any]] | None = None,
                  members: Mapping[str, Sequence[str]] | None = None) -> list[FamilyDraft]:
    """Every family's drafts over the entities enumeration covered, by tool (`covered[tool]`), in
    the registry's order (`compare`, drafted over pairs, comes from `compare_family_drafts`).

    `handles` (`unique_handles` over every entity of the market) names the stocks a question may
    name by their short name or ticker alone (`named_high`); without it none is.

    `lookback_of(tool, entity)` gives the date arguments enumeration used for the tool's latest
    record, so that a family's first call is the very call of the single-step questions (the
    refresh executes it once for all of them). `market` (every entity by code) and `basics` (each
    listed stock's basic record) name the A/H pairs and the reporters in another currency that the
    families of issue 39 are drafted for; `members` (each index's current members) their peer sets. A generator whose field has no lexicon reading
    is skipped with its reason appended to `problems`.
    """
    inputs = DraftInputs(catalog, covered, explored, lookback_of, handles, problems,
                         market=market or {}, basics=basics or {}, members=members or {})
    for family in FAMILIES:
        if family.draft is not None:
            family.draft(inputs)
    return inputs.out
