"""Stages 1–3: the tool catalog's data tools, the probe, and visibility-stratified coverage.

Entities come from the data service's visibility scorer (a `utility` tool that lists
instruments with their asset class and web-visibility level), so the same code serves any
service that offers one. Tools without an entity parameter (macro series, rates, market-wide
flows) are called without one: their single "entity" is the series itself.
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence

from livesearch_pipeline.core.catalog import Catalog, ToolMeta
from livesearch_pipeline.core.client import ToolCallError, ToolClient
from livesearch_pipeline.core.dates import resolve_date_spec
from livesearch_pipeline.core.models import Call, DateSpec
from livesearch_pipeline.core.pool import INSTRUMENT_CLASSES  # one definition, with the visibility bands
from livesearch_pipeline.construction.models import CoverageRow, EntityInfo, ProbeRow

CLASS_CALENDAR = {"cn_equity": "XSHG", "index": "XSHG", "fund": "XSHG", "hk_equity": "XHKG", "us_equity": "XNYS"}
VISIBILITY_LEVELS = tuple(range(11))
VISIBILITY_TOOL = "entity_visibility"
# Macro statistics, policy rates and market-wide flows are published by statistics bureaus,
# central banks and exchanges: every financial reader can find them, hence the top level.
SERIES_VISIBILITY = 10
LISTING_LIMIT = 5000


class ConstructionError(RuntimeError):
    """A construction stage cannot proceed (missing scorer tool, malformed response, ...)."""


def records_of(response: Mapping[str, Any], tool: str) -> list[dict[str, Any]]:
    items = response.get("items")
    if not isinstance(items, list):
        raise ConstructionError(f"{tool}: response has no 'items' list (keys: {sorted(response)})")
    return items


async def load_entities(client: ToolClient, catalog: Catalog) -> dict[str, list[EntityInfo]]:
    """Every instrument the service's visibility scorer knows, by asset class, sorted by code."""
    scorer = catalog.get(VISIBILITY_TOOL)
    if scorer is None or scorer.role != "utility":
        raise ConstructionError(
            f"the data service has no {VISIBILITY_TOOL!r} utility tool; coverage needs a visibility scorer"
        )
    by_class: dict[str, list[EntityInfo]] = {}
    for asset_class in INSTRUMENT_CLASSES:
        response = await client.call_tool(VISIBILITY_TOOL, {"asset_class": asset_class, "limit": LISTING_LIMIT})
        rows = records_of(response, VISIBILITY_TOOL)
        if response.get("has_more"):
            raise ConstructionError(f"{VISIBILITY_TOOL}: more than {LISTING_LIMIT} {asset_class} entities")
        by_class[asset_class] = sorted(
            (
                EntityInfo(
                    code=row["ts_code"], name=row["name"], asset_class=asset_class,
                    visibility=int(row["visibility"]), calendar=CLASS_CALENDAR[asset_class],
                )
                for row in rows
            ),
            key=lambda e: e.code,
        )
    return by_class


def restrict_catalog(catalog: Catalog, tools: Sequence[str]) -> Catalog:
    """The catalog with only the named data tools; every data tool when `tools` is empty.

    Tools of other roles stay: the visibility scorer is a utility tool, and the exclusion of
    search/intraday/utility tools from gold programs is decided by role, not by this list.
    """
    if not tools:
        return catalog
    wanted = set(tools)
    known = {t.name: t for t in catalog.tools}
    unknown = sorted(wanted - known.keys())
    if unknown:
        raise ConstructionError(f"tool restriction names tools the data service {catalog.service!r} does not have: {unknown}")
    not_data = sorted(name for name in wanted if not known[name].defines_gold)
    if not_data:
        roles = {name: known[name].role for name in not_data}
        raise ConstructionError(f"tool restriction names tools that can never define a gold program: {roles}")
    return catalog.model_copy(update={"tools": [t for t in catalog.tools if t.name in wanted or not t.defines_gold]})


def tool_classes(tool: ToolMeta) -> list[str]:
    """The asset classes a tool is probed for: instrument classes need an entity parameter."""
    if tool.entity_param:
        classes = [c for c in tool.asset_classes if c in INSTRUMENT_CLASSES]
        if classes:
            return classes
    return list(tool.asset_classes[:1])


def _calendar_for(tool: ToolMeta, entity: EntityInfo | None) -> str | None:
    """The calendar whose sessions the tool's records follow; None for a series on no exchange
    calendar (FX quotes every weekday), whose windows are counted in calendar days."""
    if tool.calendar:
        return tool.calendar
    if entity is not None and entity.calendar and not is_series_tool(tool):
        return entity.calendar
    return None


def _date_param(tool: ToolMeta, role: str):
    return next((p for p in tool.date_params if p.role == role), None)


def is_series_tool(tool: ToolMeta) -> bool:
    return not (tool.entity_param and any(c in INSTRUMENT_CLASSES for c in tool.asset_classes))


# Look-back, in calendar days, that covers a few records of each refresh class.
LOOKBACK_DAYS = {"daily": 30, "weekly": 120, "monthly": 400, "quarterly": 800, "annual": 1500, "static": 3650}
PERIOD_OF_REFRESH = {"monthly": "month", "quarterly": "quarter", "annual": "year", "weekly": "month", "daily": "month"}


def weekday_span(sessions: int) -> int:
    """days_back of the first day of a window holding the last `sessions` weekdays up to D.

    Any 7 consecutive days hold exactly 5 weekdays, so for a multiple of 5 the window
    D-(7n/5-1)..D holds exactly n weekday records whatever weekday D is (a weekend D included).
    """
    return -(-sessions * 7 // 5) - 1


def counts_sessions(tool: ToolMeta) -> bool:
    """Whether the tool takes a start/end window of daily records (sessions or FX weekdays)."""
    start, end = _date_param(tool, "start"), _date_param(tool, "end")
    return bool(start and end and tool.refresh_class == "daily" and "%d" in start.fmt)


def window_dates(tool: ToolMeta, calendar: str | None, *, sessions: int | None) -> dict[str, DateSpec]:
    """Relative date arguments that make `tool` return a recent window.

    Daily tools with a start/end pair get a window of `sessions` sessions on their calendar (a
    series on no calendar, FX, the span of as many weekdays, see `weekday_span`); other
    start/end tools a look-back in days by refresh class; point-dated tools the latest session
    (or, for period-keyed tools, the last completed period).
    """
    start, end = _date_param(tool, "start"), _date_param(tool, "end")
    # A series published with a lag (T+1 NAVs): the window ends on the last published session.
    lag = tool.publication_lag_sessions if calendar is not None else 0
    if start and end:
        if counts_sessions(tool) and sessions is not None:
            if calendar is None:
                return {
                    start.name: DateSpec(days_back=weekday_span(sessions), fmt=start.fmt),
                    end.name: DateSpec(days_back=0, fmt=end.fmt),
                }
            return {
                start.name: DateSpec(sessions_back=sessions - 1 + lag, calendar=calendar, fmt=start.fmt),
                end.name: DateSpec(sessions_back=lag, calendar=calendar, fmt=end.fmt),
            }
        days = LOOKBACK_DAYS[tool.refresh_class]
        return {
            start.name: DateSpec(days_back=days, fmt=start.fmt),
            end.name: DateSpec(days_back=0, fmt=end.fmt),
        }
    point = _date_param(tool, "point")
    if point:
        if "%d" in point.fmt:
            if calendar is None:
                return {point.name: DateSpec(days_back=0, fmt=point.fmt)}
            return {point.name: DateSpec(sessions_back=lag, calendar=calendar, fmt=point.fmt)}
        period = "quarter" if "Q" in point.fmt else PERIOD_OF_REFRESH.get(tool.refresh_class, "month")
        return {point.name: DateSpec(period=period, periods_back=1, fmt=point.fmt)}
    period_param = _date_param(tool, "period")
    if period_param:
        period = "quarter" if tool.refresh_class in ("quarterly", "daily") else PERIOD_OF_REFRESH.get(tool.refresh_class, "quarter")
        if tool.refresh_class == "annual":
            period = "year"
        return {period_param.name: DateSpec(period=period, periods_back=1, fmt=period_param.fmt)}
    return {}


def stamped_on_single_days(tool: ToolMeta) -> bool:
    """A tool dated only by one day whose records are not daily (weekly statistics, events).

    Asked for the most recent session it returns records only on the days they are stamped,
    so no relative date makes a "most recent" question answerable on every day.
    """
    if _date_param(tool, "start") or _date_param(tool, "period"):
        return False
    point = _date_param(tool, "point")
    return point is not None and "%d" in point.fmt and tool.refresh_class != "daily"


UNDATABLE_NOTE = ("dated only by a single day but not refreshed daily: no relative date finds its "
                  "most recent record on every day")


# Records a probe call asks for: it only reads whether the tool returned any.
PROBE_LIMIT = 1


def probe_call(tool: ToolMeta, entity: EntityInfo | None) -> Call:
    args = {tool.entity_param: entity.code} if (entity is not None and tool.entity_param) else {}
    return Call(id="c1", tool=tool.name, args=args, dates=window_dates(tool, _calendar_for(tool, entity), sessions=20))


async def call_concrete(client: ToolClient, call: Call, as_of, *, limit: int | None = None) -> dict[str, Any]:
    """`call` as sent on `as_of`; `limit` asks for at most that many records (a page)."""
    args: dict[str, Any] = dict(call.args)
    for name, spec in call.dates.items():
        args[name] = resolve_date_spec(spec, as_of)
    if limit is not None:
        args["limit"] = limit
    return await client.call_tool(call.tool, args)


async def probe_tools(
    client: ToolClient,
    catalog: Catalog,
    entities: Mapping[str, Sequence[EntityInfo]],
    as_of,
    *,
    sample_size: int = 7,
    seed: int = 7,
    concurrency: int = 16,
) -> list[ProbeRow]:
    """Stage 2: per data tool × asset class, call the tool for a seeded sample of entities.

    A tool is usable for a class only when a strict majority of the sampled calls returned
    records; errors count against it and are recorded. Whether a call returns records is all
    the probe reads, so it asks for one (`PROBE_LIMIT`): a page of one record is non-empty
    exactly when the whole answer is, and the MCP session validates one record instead of a
    window of hundreds against the tool's schema (21.8 s -> 3 s of CPU for make run's probe).
    """
    semaphore = asyncio.Semaphore(concurrency)

    async def one(tool: ToolMeta, entity: EntityInfo | None) -> tuple[bool, bool]:
        async with semaphore:
            try:
                response = await call_concrete(client, probe_call(tool, entity), as_of, limit=PROBE_LIMIT)
            except ToolCallError:
                return False, True
        return bool(records_of(response, tool.name)), False

    plans: list[tuple[ToolMeta, str, list[EntityInfo | None]]] = []
    for tool in sorted(catalog.data_tools(), key=lambda t: t.name):
        for asset_class in tool_classes(tool):
            if stamped_on_single_days(tool):
                sample = []
            elif is_series_tool(tool):
                sample: list[EntityInfo | None] = [None]
            else:
                pool = list(entities.get(asset_class, ()))
                rng = random.Random(f"{seed}:{tool.name}:{asset_class}")
                sample = rng.sample(pool, min(sample_size, len(pool)))
            plans.append((tool, asset_class, sample))
    results = await asyncio.gather(*(asyncio.gather(*(one(t, e) for e in s)) for t, _, s in plans))
    rows = []
    for (tool, asset_class, sample), outcomes in zip(plans, results):
        returned = sum(1 for ok, _ in outcomes if ok)
        rows.append(
            ProbeRow(
                tool=tool.name, asset_class=asset_class, sampled=len(sample), returned=returned,
                errors=sum(1 for _, err in outcomes if err),
                usable=len(sample) > 0 and returned * 2 > len(sample),
                sample=[e.code if e else tool.name for e in sample],
                note=UNDATABLE_NOTE if stamped_on_single_days(tool) else None,
            )
        )
    return rows


def plan_coverage(
    probe: Iterable[ProbeRow],
    catalog: Catalog,
    entities: Mapping[str, Sequence[EntityInfo]],
    *,
    seed: int = 11,
) -> list[CoverageRow]:
    """Stage 3: for each usable tool × class, one entity per visibility level 0..10 (seeded).

    Series tools (no instrument entity) have exactly one row, at SERIES_VISIBILITY.
    A level with no entity in the class is recorded as skipped, never filled from another level.
    """
    rows: list[CoverageRow] = []
    for row in sorted(probe, key=lambda r: (r.tool, r.asset_class)):
        if not row.usable:
            continue
        tool = catalog.get(row.tool)
        if tool is None:
            raise ConstructionError(f"probe row names tool {row.tool!r}, which is not in the catalog")
        if is_series_tool(tool):
            rows.append(CoverageRow(tool=tool.name, asset_class=row.asset_class, visibility=SERIES_VISIBILITY,
                                    entity=None, entity_name=None))
            continue
        by_level: dict[int, list[EntityInfo]] = defaultdict(list)
        for entity in entities.get(row.asset_class, ()):
            by_level[entity.visibility].append(entity)
        rng = random.Random(f"{seed}:{tool.name}:{row.asset_class}")
        for level in VISIBILITY_LEVELS:
            pool = by_level.get(level, [])
            if not pool:
                rows.append(CoverageRow(tool=tool.name, asset_class=row.asset_class, visibility=level,
                                        entity=None, entity_name=None,
                                        skipped=f"no {row.asset_class} entity at visibility {level}"))
                continue
            pick = rng.choice(pool)
            rows.append(CoverageRow(tool=tool.name, asset_class=row.asset_class, visibility=level,
                                    entity=pick.code, entity_name=pick.name))
    return rows
