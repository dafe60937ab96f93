"""Stage 4: answer-first enumeration of candidate gold programs, and the mechanical filters.

For each covered (tool, entity) the tool is called once over its widest window; every
extractor shape that makes sense for the tool's time key is then generated from the observed
records (latest, snapshots at relative anchors, minute bars, window aggregates), plus two-call
programs (two entities compared; a value at a date resolved by another tool). Only fields whose
catalog role is `measure` (and `label`, for reference records) become answers; a response with
several series per time key (currency pairs, exchanges, holders, constituents, segments) is
enumerated one series at a time, pinned in `where`. The multi-step question families
(construction/families/) are drafted from the same explored responses. All candidates are executed twice with the
core executor; a candidate survives only if both executions returned the same non-null answer
and no filter drops it. With a point-in-time service (`open_at`) and two workers, the second
execution runs in a forked process (which inherits the explored, warm market) while this one
runs the first and the unadjusted twins: the same answers, on two cores.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from livesearch_pipeline.construction.families import (
    FAMILY,
    FamilyDraft,
    compare_family_drafts,
    family_drafts,
    family_targets,
    unique_handles,
)
from livesearch_pipeline.construction.formats import proposed_rule, value_format  # formats from the lexicon
from livesearch_pipeline.construction.models import Candidate, CandidateFacts, CoverageRow, EntityInfo, FilterCount
from livesearch_pipeline.construction.naming import load_names, with_naming
from livesearch_pipeline.construction.verbalize import has_chinese_text
from livesearch_pipeline.construction.semantics import answer_reason, plain_twin, program_reason, selection_reason
from livesearch_pipeline.construction.sampling import (
    CLASS_CALENDAR,
    call_concrete,
    counts_sessions,
    is_series_tool,
    records_of,
    window_dates,
)
from livesearch_pipeline.core.workers import default_workers, forked_pool, inherited
from livesearch_pipeline.core import aio
from livesearch_pipeline.core.catalog import Catalog, FieldMeta, ToolMeta
from livesearch_pipeline.core.client import OpenAt, ToolCallError, ToolClient
from livesearch_pipeline.core.executor import ExecutorConfig, execute_programs
from livesearch_pipeline.core.extract import is_not_meaningful, is_tie
from livesearch_pipeline.core.models import (
    Call,
    DateSpec,
    Extractor,
    Format,
    MatchRule,
    Program,
    Selection,
    ValueRef,
)
from livesearch_pipeline.core.normalize import unit_scale
from livesearch_pipeline.core.program import CHANGE_AGGREGATES, window_rows  # the window convention
from livesearch_pipeline.core.progress import Report, say
from livesearch_pipeline.core.qid import compute_qid, compute_signature

LATEST_WINDOW = 10
SNAPSHOT_BACK = 5
AGGREGATE_WINDOWS = (5, 20, 60)
MINUTE_TIMES = ("10:30", "14:00")
# Series drafted per response: an instrument's holders, constituents or segments; a market-wide
# tool's currency pairs or exchanges (the longest-running first).
MAX_SERIES_PER_ENTITY = 3
MAX_SERIES_PER_TOOL = 8
# The daily bar tool of each instrument class: the first call of date-resolving programs and
# the tool compared across two entities.
BAR_TOOLS = {"cn_equity": "daily", "hk_equity": "hk_daily", "us_equity": "us_daily",
             "index": "index_daily", "fund": "fund_daily"}
BAR_FIELD = "close"

PRICE_AGGREGATES = ("mean", "max", "min", "change", "pct_change", "argmax", "argmin")
FLOW_AGGREGATES = ("sum", "mean", "max")
RATIO_AGGREGATES = ("mean", "max", "min", "std")
DELTA_AGGREGATES = ("mean", "max", "min")
FLOW_UNIT_MARKS = ("手", "股", "元", "shares", "lots", "CNY thousand", "thousand", "million", "亿", "万")
FLOW_FIELDS = frozenset({"vol", "amount", "volume", "turnover", "net_mf_vol", "net_mf_amount"})


@dataclass
class _Draft:
    """A candidate before execution: its program and the facts a verbalizer needs."""

    program: Program
    entity: EntityInfo
    tool: ToolMeta
    field: FieldMeta
    anchor: str
    tier: str
    refresh_class: str
    aggregate: str | None = None
    other: EntityInfo | None = None
    ref_description: str | None = None


@dataclass
class EnumerationResult:
    candidates: list[Candidate]
    filters: list[FilterCount]
    calls: int
    drafts: int


@dataclass
class _Counts:
    counts: Counter = field(default_factory=Counter)

    def drop(self, name: str, n: int = 1) -> None:
        self.counts[name] += n


# --------------------------------------------------------------------------- formats


def field_kind(f: FieldMeta) -> str:
    unit = f.unit or ""
    if unit == "%" or "pct" in f.name or "ratio" in f.name or "rate" in f.name:
        return "ratio"
    if f.name == "change" or f.name.endswith(("_chg", "_change")):
        # Already a change per record: its own change or percentage change asks nothing sensible.
        return "delta"
    if f.name in FLOW_FIELDS or any(mark in unit for mark in FLOW_UNIT_MARKS if mark not in ("元",)):
        return "flow"
    return "price"



# --------------------------------------------------------------------------- generation


def _answer_fields(tool: ToolMeta, records: Sequence[Mapping[str, Any]], counts: _Counts | None) -> list[FieldMeta]:
    """The fields whose values may be answers, by catalog role (DESIGN §2 item 4).

    Measures always; labels only for records without a time key, where the question asks for a
    fact of the entity itself (its industry, its chairman) and is judged semantically. Flags,
    codes, identifiers, factors, dates and descriptions never; each such field a generator
    would otherwise have used is counted as `role_<role>` in the filters table.
    """
    static = tool.time_key is None
    out = []
    for f in tool.fields:
        if f.name in (tool.time_key, tool.entity_param) or f.name in tool.series_keys:
            continue
        usable = f.role == "measure" or (static and f.role == "label")
        if not usable:
            # Text fields of dated records were never answers; a number or a static fact was.
            if counts is not None and (static or f.type in ("number", "integer")):
                counts.drop(f"role_{f.role}")
            continue
        if all(r.get(f.name) in (None, "") for r in records):
            if counts is not None:
                counts.drop("all_null")
            continue
        # A unit the records name (a Hong Kong company's statements in its reporting currency).
        out.append(f.in_record_unit(records[0]) if records else f)
    return out


def _numeric_fields(tool: ToolMeta, records: Sequence[Mapping[str, Any]], counts: _Counts | None) -> list[FieldMeta]:
    return [f for f in _answer_fields(tool, records, counts) if f.type in ("number", "integer")]


def _entity_args(tool: ToolMeta, entity: EntityInfo) -> dict[str, Any]:
    return {tool.entity_param: entity.code} if (tool.entity_param and not is_series_tool(tool)) else {}


def series_keys_of(tool: ToolMeta, args: Mapping[str, Any]) -> list[str]:
    """The record fields a selection over a call with `args` must pin to read one series: the
    tool's series keys, plus its entity field when the call does not name the entity."""
    keys = list(tool.series_keys)
    if tool.entity_param and tool.entity_param not in args and tool.field(tool.entity_param) is not None:
        keys.append(tool.entity_param)
    return keys


@dataclass(frozen=True)
class _Series:
    where: dict[str, Any]
    records: list[Mapping[str, Any]]
    stable: bool  # present on every date of the explored window: window aggregates allowed


def series_of(tool: ToolMeta, args: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
              counts: _Counts | None = None) -> list[_Series]:
    """The series a program may select from a response, each with the `where` that pins it.

    A single-series response is one series with an empty `where`. Otherwise a series must be
    unambiguous (one record per time key: several "机构专用" seats on one day are not one
    series) and present on the most recent date; the longest-running come first.
    """
    keys = series_keys_of(tool, args)
    if not keys:
        return [_Series({}, list(records), True)]
    groups: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        value = tuple(r.get(k) for k in keys)
        if all(v not in (None, "") for v in value):
            groups[value].append(r)
    stamps = {r.get(tool.time_key) for r in records} if tool.time_key else set()
    newest = max((s for s in stamps if s is not None), default=None)
    found = []
    for value, recs in groups.items():
        dates = Counter(r.get(tool.time_key) for r in recs) if tool.time_key else Counter({None: len(recs)})
        if any(n > 1 for n in dates.values()):
            if counts is not None:
                counts.drop("series_ambiguous")
            continue
        if tool.time_key and newest not in dates:
            if counts is not None:
                counts.drop("series_not_current")
            continue
        found.append((value, recs, set(dates) == stamps))
    found.sort(key=lambda item: (-len(item[1]), [str(v) for v in item[0]]))
    limit = MAX_SERIES_PER_ENTITY if tool.entity_param in args else MAX_SERIES_PER_TOOL
    return [_Series(dict(zip(keys, value)), recs, stable) for value, recs, stable in found[:limit]]


def _calendar(tool: ToolMeta, entity: EntityInfo) -> str | None:
    """The calendar of the tool's sessions; None for a series on no exchange calendar (FX)."""
    if tool.calendar:
        return tool.calendar
    if is_series_tool(tool):
        return None
    return entity.calendar or CLASS_CALENDAR.get(entity.asset_class, "XSHG")


def _snapshot_select(key: str, key_fmt: str, cal: str | None, where: dict[str, Any]) -> Selection:
    """The record SNAPSHOT_BACK sessions before the most recent one. On a weekday series (no
    calendar) that is the latest record on or before D - 7 days: the same weekday a week back,
    whatever weekday D is, so a weekend D reads the Friday a week before the last Friday."""
    if cal is None:
        return Selection(mode="latest", key=key, key_fmt=key_fmt, where=where,
                         anchor=DateSpec(days_back=SNAPSHOT_BACK * 7 // 5, fmt=key_fmt))
    return Selection(mode="snapshot", key=key, key_fmt=key_fmt, where=where,
                     anchor=DateSpec(sessions_back=SNAPSHOT_BACK, calendar=cal, fmt=key_fmt))


def period_anchor(dates: Mapping[str, DateSpec]) -> str | None:
    """`period:<name>:<periods_back>` when the call is pinned to one completed period.

    Such a call returns that period only, so the question must name the same relative period
    the program asks for (not "the most recent one published").
    """
    spec = next((s for s in dates.values() if s.period is not None), None)
    return None if spec is None else f"period:{spec.period}:{spec.periods_back}"


def drafts_for(tool: ToolMeta, entity: EntityInfo, records: Sequence[Mapping[str, Any]], counts: _Counts) -> list[_Draft]:
    """Every extractor shape that makes sense for this tool's time key, on observed records,
    for each series of the response (one series per time key, named in `where`)."""
    args = _entity_args(tool, entity)
    fields = _answer_fields(tool, records, counts)
    drafts: list[_Draft] = []
    for series in series_of(tool, args, records, counts):
        drafts.extend(_series_drafts(tool, entity, args, series, fields))
    return drafts


def _series_drafts(tool: ToolMeta, entity: EntityInfo, args: dict[str, Any], series: _Series,
                   fields: Sequence[FieldMeta]) -> list[_Draft]:
    cal = _calendar(tool, entity)
    where, records = series.where, series.records
    drafts: list[_Draft] = []
    key, key_fmt = tool.time_key, tool.time_key_fmt or "%Y%m%d"
    present = [f for f in fields if any(r.get(f.name) not in (None, "") for r in records)]
    numeric = [f for f in present if f.type in ("number", "integer")]
    refresh = tool.refresh_class

    def program(dates: dict[str, DateSpec], select: Selection, f: FieldMeta, aggregate: str | None, fmt: Format) -> Program:
        call = Call(id="c1", tool=tool.name, args=args, dates=dates)
        return Program(calls=[call], extract=Extractor(call="c1", select=select, field=f.name,
                                                       aggregate=aggregate, format=fmt))

    def sample(f: FieldMeta) -> Any:
        return next((r.get(f.name) for r in records if r.get(f.name) is not None), None)

    def observed(f: FieldMeta) -> list[Any]:
        # Every value of the series: a count's scale word needs more than one day's (formats).
        return [r.get(f.name) for r in records if r.get(f.name) is not None]

    if key is None:
        # Time-less reference data: the entity's own record, matched on its code.
        if not tool.entity_param or is_series_tool(tool):
            return []
        select = Selection(mode="match", key=tool.entity_param, value=entity.code, where=where)
        for f in present:
            fmt = value_format(f, None, sample(f), key_fmt, tool=tool.name)
            drafts.append(_Draft(program({}, select, f, None, fmt), entity, tool, f, "static", "T2", "static"))
        return drafts

    minute = "%H" in key_fmt
    windowed = counts_sessions(tool)
    if minute:
        dates = window_dates(tool, cal, sessions=2)
        for f in numeric:
            for at in MINUTE_TIMES:
                select = Selection(mode="minute", key=key, key_fmt=key_fmt,
                                   anchor=DateSpec(sessions_back=1, calendar=cal, fmt="%Y%m%d"), time=at, where=where)
                fmt = value_format(f, None, sample(f), key_fmt, tool=tool.name, observed=observed(f))
                drafts.append(_Draft(program(dates, select, f, None, fmt), entity, tool, f,
                                     f"minute:1:{at}", "T2", refresh))
        return drafts

    latest_dates = window_dates(tool, cal, sessions=LATEST_WINDOW)
    latest_anchor = period_anchor(latest_dates) or "latest"
    # A call pinned to a past completed period asks a simple historical question, not a live one.
    latest_tier = "T1" if latest_anchor == "latest" else "T2"
    for f in numeric:
        fmt = value_format(f, None, sample(f), key_fmt, tool=tool.name, observed=observed(f))
        select = Selection(mode="latest", key=key, key_fmt=key_fmt, where=where)
        drafts.append(_Draft(program(latest_dates, select, f, None, fmt), entity, tool, f, latest_anchor, latest_tier, refresh))
        if windowed:
            snap = _snapshot_select(key, key_fmt, cal, where)
            drafts.append(_Draft(program(latest_dates, snap, f, None, fmt), entity, tool, f,
                                 f"snapshot:{SNAPSHOT_BACK}", "T2", refresh))
            if not series.stable:
                continue  # a series missing on some dates would aggregate fewer records than it says
            kind = field_kind(f)
            aggregates = {"price": PRICE_AGGREGATES, "flow": FLOW_AGGREGATES, "ratio": RATIO_AGGREGATES,
                          "delta": DELTA_AGGREGATES}[kind]
            for n in AGGREGATE_WINDOWS:
                for agg in aggregates:
                    if agg in CHANGE_AGGREGATES and cal is None:
                        # N + 1 weekdays back has no exact days_back on a weekday series (FX).
                        continue
                    dates = window_dates(tool, cal, sessions=window_rows(agg, n))
                    afmt = value_format(f, agg, sample(f), key_fmt, tool=tool.name, observed=observed(f), window=n)
                    select = Selection(mode="all", key=key, key_fmt=key_fmt, where=where)
                    drafts.append(_Draft(program(dates, select, f, agg, afmt), entity, tool, f,
                                         f"window:{n}", "T3", refresh, aggregate=agg))
    return drafts


def resolved_date_drafts(bar: ToolMeta, target: ToolMeta, entity: EntityInfo, records: Sequence[Mapping[str, Any]],
                         counts: _Counts) -> list[_Draft]:
    """Two-call programs: a field of `target` on the date of the highest close over 20 sessions."""
    point = next((p for p in target.date_params if p.role == "point" and "%d" in p.fmt), None)
    if point is None or target.time_key is None or not target.entity_param:
        return []
    if series_keys_of(target, {target.entity_param: entity.code}):
        # Several series on the resolved date (holders, seats): no one record to read.
        return []
    cal = _calendar(bar, entity)
    bar_key_fmt = bar.time_key_fmt or "%Y%m%d"
    c1 = Call(id="c1", tool=bar.name, args=_entity_args(bar, entity), dates=window_dates(bar, cal, sessions=20))
    ref = ValueRef(call="c1", select=Selection(mode="all", key=bar.time_key, key_fmt=bar_key_fmt),
                   field=BAR_FIELD, aggregate="argmax")
    c2 = Call(id="c2", tool=target.name, args={target.entity_param: entity.code}, refs={point.name: ref})
    drafts = []
    # Roles were counted when `target` itself was drafted: count nothing twice.
    for f in _numeric_fields(target, records, None)[:2]:
        fmt = value_format(f, None, next((r.get(f.name) for r in records if r.get(f.name) is not None), None),
                           target.time_key_fmt or "%Y%m%d", tool=target.name)
        extract = Extractor(call="c2", select=Selection(mode="latest", key=target.time_key,
                                                        key_fmt=target.time_key_fmt or "%Y%m%d"),
                            field=f.name, format=fmt)
        drafts.append(_Draft(Program(calls=[c1, c2], extract=extract), entity, target, f, "argmax_close:20", "T3",
                             target.refresh_class, ref_description=f"the day of the highest {bar.name} close"))
    return drafts


def _family_draft(d: FamilyDraft) -> _Draft:
    """A family's draft as enumeration's own: T3 (a multi-step investigation), anchored `family:`."""
    return _Draft(d.program, d.entity, d.tool, d.field, f"{FAMILY}:{d.family}", "T3", d.tool.refresh_class,
                  aggregate=d.aggregate, other=d.other)


# --------------------------------------------------------------------------- execution


@dataclass(frozen=True)
class _Job:
    qid: str
    program: Program
    match: MatchRule


def _facts(d: _Draft, answer) -> CandidateFacts:
    return CandidateFacts(
        tool=d.tool.name, tool_description=d.tool.description, field=d.field.name,
        field_description=d.field.description, field_description_zh=d.field.description_zh,
        field_unit=d.field.unit, anchor=d.anchor, aggregate=d.aggregate, calendar=_calendar(d.tool, d.entity),
        other_entity=d.other.code if d.other else None, other_entity_name=d.other.name if d.other else None,
        ref_description=d.ref_description, observed_value=answer.value, observed_answer=answer.answer,
        observed_period=answer.observed_period,
    )


# The listing tools whose records name each stock's other listing, reporting currency and fiscal year.
LISTING_TOOLS = ("stock_basic", "hk_basic", "us_basic")
MEMBER_TOOL = "index_member"


async def _records(client: ToolClient, tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    return records_of(await client.call_tool(tool, args), tool)


def unanswered_filter(status: str, error: str | None) -> str:
    """The filter a candidate that gave no answer on the construction day is counted under: a
    ranking that ties (`tie_at_deciding_value`, core.extract.ranking_tie), a ratio or percentage
    over a non-positive base (`semantic_nonpositive_base`), else `no_value_<status>`."""
    if is_tie(error):
        return "tie_at_deciding_value"
    if is_not_meaningful(error):
        return "semantic_nonpositive_base"
    return f"no_value_{status}"


def _echoes(answer, sent_args: Mapping[str, Mapping[str, Any]]) -> bool:
    sent = {str(v) for call_args in sent_args.values() for v in call_args.values()}
    return answer.answer in sent or str(answer.value) in sent


# The status and answer of each job (by qid) of an execution: what the stability check compares.
_Outcomes = dict[str, tuple[str, str | None]]


def _outcomes(answers: Sequence[Any]) -> _Outcomes:
    return {a.qid: (a.status, a.answer) for a in answers}


async def _second_and_twins(jobs: Sequence[_Job], twins: Sequence[_Job], as_of: dt.date, client: ToolClient,
                            executor: ExecutorConfig) -> tuple[_Outcomes, _Outcomes]:
    """The outcomes of the second execution and of the unadjusted twins."""
    second = _outcomes((await execute_programs(jobs, as_of, client, executor))[0])  # type: ignore[arg-type]
    plain = _outcomes((await execute_programs(twins, as_of, client, executor))[0]) if twins else {}  # type: ignore[arg-type]
    return second, plain


def _forked_execution() -> tuple[_Outcomes, _Outcomes]:
    """In the process forked by `_execute_twice`: the second execution and the twins, on the jobs
    it inherited."""
    jobs, twins, as_of, open_at, executor = inherited()

    async def run() -> tuple[_Outcomes, _Outcomes]:
        async with open_at(as_of) as client:
            return await _second_and_twins(jobs, twins, as_of, client, executor)

    return aio.run(run())


async def _execute_twice(jobs: Sequence[_Job], twins: Sequence[_Job], as_of: dt.date, client: ToolClient,
                         executor: ExecutorConfig, open_at: OpenAt | None, workers: int):
    """(first answers, their stats, second outcomes, the twins' outcomes): the second execution
    and the twins in a forked process when `open_at` and `workers` > 1 allow (this one runs the
    first meanwhile), else all three in this one."""
    if open_at is None or workers < 2 or not jobs:
        first, stats = await execute_programs(jobs, as_of, client, executor)  # type: ignore[arg-type]
        return first, stats, *await _second_and_twins(jobs, twins, as_of, client, executor)
    with forked_pool(1, (jobs, twins, as_of, open_at, executor)) as pool:
        forked = asyncio.get_running_loop().run_in_executor(pool, _forked_execution)
        try:
            first, stats = await execute_programs(jobs, as_of, client, executor)  # type: ignore[arg-type]
        finally:
            second, plain = await forked
    return first, stats, second, plain


async def enumerate_candidates(
    client: ToolClient,
    catalog: Catalog,
    coverage: Sequence[CoverageRow],
    entities: Mapping[str, Sequence[EntityInfo]],
    as_of: dt.date,
    *,
    executor: ExecutorConfig = ExecutorConfig(),
    report: Report = None,
    open_at: OpenAt | None = None,
    workers: int | None = None,
) -> EnumerationResult:
    """Explore, draft, execute twice and filter (module doc); `report` gets a line per phase.

    `open_at(as_of)` opens the same service as `client` (a point-in-time one): with it and
    `workers` > 1 (default: min(2, cores)) the second execution runs in a forked process."""
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise ValueError(f"enumerate_candidates: workers must be >= 1, got {workers}")
    counts = _Counts()
    by_code = {e.code: e for group in entities.values() for e in group}
    explored: dict[tuple[str, str], list[dict[str, Any]]] = {}
    semaphore = asyncio.Semaphore(executor.max_concurrency)

    async def explore(tool: ToolMeta, entity: EntityInfo) -> None:
        cal = _calendar(tool, entity)
        widest = max(AGGREGATE_WINDOWS) if counts_sessions(tool) else LATEST_WINDOW
        call = Call(id="c1", tool=tool.name, args=_entity_args(tool, entity), dates=window_dates(tool, cal, sessions=widest))
        async with semaphore:
            try:
                response = await call_concrete(client, call, as_of)
            except ToolCallError:
                counts.drop("exploration_error")
                return
        explored[(tool.name, entity.code)] = records_of(response, tool.name)

    targets: list[tuple[ToolMeta, EntityInfo]] = []
    for row in coverage:
        tool = catalog.get(row.tool)
        if tool is None or row.skipped:
            continue
        if row.entity is None:
            entity = EntityInfo(code=tool.name, name=tool.description, asset_class=row.asset_class,
                                visibility=row.visibility, calendar=tool.calendar)
        else:
            entity = by_code[row.entity]
        targets.append((tool, entity))
    await asyncio.gather(*(explore(t, e) for t, e in targets))
    say(report, f"explored {len(explored):,} of {len(targets):,} covered (tool, entity) pairs")

    drafts: list[_Draft] = []
    for tool, entity in targets:
        records = explored.get((tool.name, entity.code))
        if not records:
            continue
        drafts.extend(drafts_for(tool, entity, records, counts))

    # Two-call programs.
    for asset_class, bar_name in BAR_TOOLS.items():
        bar = catalog.get(bar_name)
        if bar is None:
            continue
        covered = sorted({e.code: e for t, e in targets if t.name == bar_name and (bar_name, e.code) in explored}.values(),
                         key=lambda e: e.visibility)
        pairs = [(covered[i], covered[(i + len(covered) // 2) % len(covered)]) for i in range(len(covered))
                 if len(covered) > 1]
        # Two instruments compared: their returns over the same sessions (construction/families/),
        # each against one far and one near on the visibility scale.
        near = [(covered[i], covered[(i + 1) % len(covered)]) for i in range(len(covered)) if len(covered) > 2]
        drafts.extend(_family_draft(d) for d in compare_family_drafts(catalog, [*pairs, *near]))
        for target in catalog.data_tools():
            if target.name == bar_name or asset_class not in target.asset_classes:
                continue
            for e in covered[:: max(1, len(covered) // 4)]:
                recs = explored.get((target.name, e.code))
                if recs:
                    drafts.extend(resolved_date_drafts(bar, target, e, recs, counts))

    # Multi-step question families (construction/families/), on a spread of the covered
    # instruments of each class; the responses they read are explored first.
    covered_by_tool = family_targets(catalog, [e for t, e in targets if not is_series_tool(t)])
    extra = [(catalog.get(name), e) for name, group in covered_by_tool.items() for e in group
             if (name, e.code) not in explored]
    await asyncio.gather(*(explore(t, e) for t, e in extra if t is not None))
    covered_by_tool = {name: [e for e in group if (name, e.code) in explored] for name, group in covered_by_tool.items()}
    problems: list[str] = []
    # Every name the service knows for every entity (construction/naming.py): which names fit one
    # entity alone, for the stocks `named_high` names alone and the questions that give no code.
    book = await load_names(lambda tool, args: _records(client, tool, args), list(by_code.values()),
                            [t.name for t in catalog.tools])
    handles = {code: how for code, how in unique_handles(list(by_code.values())).items()
               if how == "ticker" or book.alone(by_code[code].name, code)}
    # Each listed stock's basic record (its H or A code, reporting currency, fiscal year end): the
    # pairs and reporters the families of issue 39 are drafted for.
    basics: dict[str, dict[str, Any]] = {}
    for listing in LISTING_TOOLS:
        if catalog.get(listing) is not None:
            try:
                basics.update({str(r["ts_code"]): r for r in await _records(client, listing, {}) if r.get("ts_code")})
            except Exception:  # noqa: BLE001 - a service that refuses the listing gives no pairs
                pass
    # Each index's current members (`index_member`): the peer sets of industry indices.
    members: dict[str, list[str]] = {}
    if catalog.get(MEMBER_TOOL) is not None:
        for e in sorted((e for e in by_code.values() if e.asset_class == "index"), key=lambda e: e.code):
            try:
                rows = await _records(client, MEMBER_TOOL, {"index_code": e.code})
            except Exception:  # noqa: BLE001 - an index the tool does not list has no members
                continue
            listed = sorted({str(r["con_code"]) for r in rows if r.get("con_code") and not r.get("out_date")})
            if listed:
                members[e.code] = listed
    drafts.extend(_family_draft(d) for d in family_drafts(
        catalog, covered_by_tool, explored,
        lambda t, e: window_dates(t, _calendar(t, e), sessions=LATEST_WINDOW), problems, handles=handles,
        market=by_code, basics=basics, members=members))
    if problems:
        counts.drop("family_no_lexicon_reading", len(problems))

    jobs: dict[str, tuple[_Job, _Draft]] = {}
    for d in drafts:
        qid = compute_qid(d.program, d.entity.code)
        if qid in jobs:
            counts.drop("duplicate_program")
            continue
        # semantic rules (construction/semantics.py)
        unsound = program_reason(d.program) or selection_reason(d.program, catalog)
        if unsound is not None:
            counts.drop(unsound)
            continue
        fmt = d.program.extract.format
        try:
            unit_scale(fmt.unit)
        except ValueError:
            counts.drop("unit_unknown_to_matcher")
            continue
        jobs[qid] = (_Job(qid=qid, program=d.program, match=proposed_rule(fmt)), d)

    job_list = [j for j, _ in jobs.values()]
    say(report, f"drafted {len(drafts):,} programs; executing the {len(job_list):,} distinct sound ones twice")
    # Adjusted returns are also executed unadjusted: equal answers mean the factor did not move in
    # the window, a plain return in disguise (semantics.plain_twin).
    twin_of: dict[str, str] = {}  # the twin's qid -> the adjusted program's
    twins: dict[str, _Job] = {}
    for job, d in jobs.values():
        twin = plain_twin(job.program)
        if twin is not None:
            twin_qid = compute_qid(twin, d.entity.code)
            twin_of[twin_qid] = job.qid
            twins[twin_qid] = _Job(qid=twin_qid, program=twin, match=job.match)
    first, stats1, second_by_qid, plain = await _execute_twice(job_list, list(twins.values()), as_of, client,
                                                               executor, open_at, workers)
    plain_answers = {twin_of[qid]: outcome for qid, outcome in plain.items()}

    survivors: list[tuple[_Draft, Any, str]] = []
    for answer in first:
        job, d = jobs[answer.qid]
        again_status, again_answer = second_by_qid[answer.qid]
        if answer.status != "ok":
            counts.drop(unanswered_filter(answer.status, answer.error))
            continue
        if again_status != "ok" or again_answer != answer.answer:
            counts.drop("unstable")
            continue
        # A pick among named instruments (construction/families/) answers with one of them.
        if d.program.extract.pick is None and _echoes(answer, answer.args):
            counts.drop("echo_of_argument")
            continue
        if plain_answers.get(answer.qid) == ("ok", answer.answer):
            counts.drop("semantic_adjustment_constant")
            continue
        given_away = answer_reason(d.program, d.entity.name, answer.answer)
        if given_away is not None:
            counts.drop(given_away)
            continue
        survivors.append((d, answer, answer.qid))

    # Constants: an extractor shape whose answer is the same for every covered entity.
    by_shape: dict[str, list[tuple[_Draft, Any, str]]] = defaultdict(list)
    for item in survivors:
        by_shape[compute_signature(item[0].program, catalog)].append(item)
    kept: list[Candidate] = []
    seen_values: set[tuple[str, str, str, str | None]] = set()
    for signature, items in sorted(by_shape.items()):
        if len(items) >= 3 and len({a.answer for _, a, _ in items}) == 1:
            counts.drop("constant", len(items))
            continue
        for d, answer, qid in items:
            near = (d.entity.code, d.tool.name, answer.answer, answer.observed_period)
            if near in seen_values:
                counts.drop("near_duplicate")
                continue
            seen_values.add(near)
            kept.append(Candidate(
                qid=qid, signature=signature, tier=d.tier, refresh_class=d.refresh_class,
                asset_class=d.entity.asset_class, entity=d.entity.code, entity_name=d.entity.name,
                visibility=d.entity.visibility, program=d.program, facts=_facts(d, answer),
            ))
    # Entities named as people name them: a share of the questions give no code (construction/naming.py).
    kept = [with_naming(c, book, has_chinese_text) for c in kept]
    say(report, f"named {sum(c.facts.named_as is not None for c in kept):,} of {len(kept):,} candidates without a code")
    kept.sort(key=lambda c: c.qid)
    filters = [FilterCount(filter=name, dropped=n) for name, n in sorted(counts.counts.items())]
    return EnumerationResult(candidates=kept, filters=filters, calls=stats1.unique_calls + len(explored), drafts=len(drafts))
