"""Field roles, calendar utilities and one series per time key in the catalog and in enumeration
(issue 12; DESIGN §2 item 4), against the embedded service at a fixed clock.

The catalog tests are empirical: they call every data tool and look at what it returns (a time
key repeated with different records means several series; records on closed days mean a
calendar), so a tool added without its series keys or a calendar left as a data tool fails here.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from typing import Any

import anyio
import pytest

from livesearch_pipeline.construction.enumerate import _Counts, enumerate_candidates, series_of
from livesearch_pipeline.construction.models import CoverageRow
from livesearch_pipeline.construction.sampling import (
    ConstructionError,
    load_entities,
    restrict_catalog,
    weekday_span,
)
from livesearch_pipeline.core.catalog import ANSWER_ROLES, FIELD_ROLES, Catalog, ToolMeta
from livesearch_pipeline.core.dates import resolve_date_spec
from livesearch_pipeline.core.program import validate_program
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.server import DataService

CLOCK = dt.date(2026, 11, 27)  # a Friday
INSTRUMENT_CLASSES = ("cn_equity", "hk_equity", "us_equity", "index", "fund")
# Responses in which no field combination separates the records of one date: top_inst lists
# every institutional seat as "机构专用". Enumeration drops such series (`series_ambiguous`).
AMBIGUOUS_SERIES = {"top_inst"}
CALENDARS = {"trade_cal", "hk_tradecal", "us_tradecal"}


@pytest.fixture(scope="module")
def service() -> DataService:
    return DataService(config=ServiceConfig(clock=CLOCK), market=Market())


@pytest.fixture(scope="module")
def served_catalog(service) -> Catalog:
    async def go():
        async with McpToolClient.in_process(service) as client:
            return await client.list_tools()
    return anyio.run(go)


def _sample_codes(service: DataService, meta: ToolMeta, n: int) -> list[str | None]:
    cls = next((c for c in meta.asset_classes if c in INSTRUMENT_CLASSES), None)
    if cls is None or not meta.entity_param:
        return [None]
    entities = sorted(service.market.universe.of_class(cls), key=lambda e: (-e.visibility, e.code))
    if meta.name == "index_global":
        entities = [e for e in entities if e.exchange == "GLOBAL"]
    elif meta.name == "sw_daily":
        entities = [e for e in entities if e.industry == "行业指数"]
    step = max(1, len(entities) // n)
    return [e.code for e in entities[::step][:n]]


def _responses(service: DataService, meta: ToolMeta, n: int = 5, start: str = "20250101") -> list[list[dict[str, Any]]]:
    """The tool's records for `n` sample entities (every value of a required enum parameter)."""
    spec = service.spec(meta.name)
    params = {p.name: p for p in spec.params}
    base: dict[str, Any] = {"limit": 10000}
    if "start_date" in params:
        base["start_date"] = "20261101" if "%H" in (meta.time_key_fmt or "") else start
    variants = [base]
    for p in spec.params:
        if p.required and p.enum:
            variants = [{**v, p.name: value} for v in variants for value in p.enum]
    out = []
    for code in _sample_codes(service, meta, n):
        for args in variants:
            args = {**args, **({meta.entity_param: code} if code else {})}
            if all(not p.required or p.name in args for p in spec.params):
                out.append(service.call(meta.name, args)["items"])
    return out


def _groups(records: list[dict[str, Any]], keys: list[str]) -> dict[tuple, list[dict[str, Any]]]:
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[tuple(r.get(k) for k in keys)].append(r)
    return groups


# --------------------------------------------------------------------------- catalog


def test_every_field_of_every_tool_travels_with_its_role(service, served_catalog):
    assert len(served_catalog.tools) == len(service.specs)
    for meta in served_catalog.tools:
        spec_roles = {f.name: f.role for f in service.spec(meta.name).meta.fields}
        assert {f.name: f.role for f in meta.fields} == spec_roles, meta.name  # through MCP `_meta`
        for f in meta.fields:
            assert f.role in FIELD_ROLES, (meta.name, f.name)
        if meta.time_key:
            assert meta.field(meta.time_key).role == "date", meta.name
    roles = {(t.name, f.name): f.role for t in served_catalog.tools for f in t.fields}
    expected = {
        ("trade_cal", "is_open"): "flag", ("stock_basic", "is_hs"): "flag", ("express", "is_audit"): "flag",
        ("adj_factor", "adj_factor"): "factor", ("pro_bar", "adj_factor"): "factor",
        ("margin", "exchange_id"): "code", ("stock_basic", "list_status"): "code",
        ("stock_basic", "exchange"): "code", ("stock_basic", "industry"): "label",
        ("stock_basic", "name"): "identifier", ("top10_holders", "holder_name"): "label",
        ("fund_manager", "name"): "label", ("index_weight", "con_code"): "identifier",
        ("stock_company", "introduction"): "description", ("daily", "close"): "measure",
        ("daily", "change"): "measure",
    }
    assert {key: roles[key] for key in expected} == expected


def test_calendars_are_utilities_and_no_data_tool_is_a_calendar(service):
    """A tool that lists every calendar day, closed ones included, is a trading calendar: a
    utility that answers "is D a session", never a question."""
    listing_every_day = set()
    for spec in service.specs:
        meta = spec.meta
        if meta.time_key_fmt != "%Y%m%d" or "start_date" not in {p.name for p in spec.params}:
            continue
        for records in _responses(service, meta, n=1, start="20261101"):
            days = {dt.datetime.strptime(r[meta.time_key], "%Y%m%d").date() for r in records if r.get(meta.time_key)}
            if len(days) > 7 and len(days) == (max(days) - min(days)).days + 1:
                listing_every_day.add(meta.name)
    assert listing_every_day == CALENDARS
    for name in CALENDARS:
        meta = service.spec(name).meta
        assert meta.role == "utility" and not meta.defines_gold


@pytest.mark.slow
def test_every_multi_series_tool_declares_series_keys_that_separate_its_records(service):
    """Call each data tool for sample entities: a time key value repeated with differing records
    means several series; the declared keys (plus the time key) must then tell them apart."""
    undeclared, unseparated, multi = [], [], set()
    for spec in service.specs:
        meta = spec.meta
        if meta.role != "data":
            continue
        # Versions of one record (a statement as first reported and as restated) are not series.
        time_key = ([meta.time_key] if meta.time_key else []) + ([meta.revision_field] if meta.revision_field else [])
        for records in _responses(service, meta):
            if any(len({repr(sorted(r.items())) for r in rs}) > 1 for rs in _groups(records, time_key).values()):
                multi.add(meta.name)
                if not meta.series_keys:
                    undeclared.append(meta.name)
            keyed = _groups(records, [*time_key, *meta.series_keys])
            if meta.name not in AMBIGUOUS_SERIES and any(
                    len({repr(sorted(r.items())) for r in rs}) > 1 for rs in keyed.values()):
                unseparated.append(meta.name)
    assert not undeclared, f"multi-series tools without series_keys: {sorted(set(undeclared))}"
    assert not unseparated, f"series_keys do not separate the records of: {sorted(set(unseparated))}"
    assert {"fx_daily", "margin", "top10_holders", "index_weight", "fina_mainbz"} <= multi
    assert AMBIGUOUS_SERIES <= multi


def test_a_calendar_cannot_be_chosen_as_a_construction_tool(served_catalog):
    with pytest.raises(ConstructionError, match="can never define a gold program.*trade_cal"):
        restrict_catalog(served_catalog, ["daily", "trade_cal"])


# --------------------------------------------------------------------------- enumeration


@pytest.fixture(scope="module")
def enumeration(service, served_catalog):
    catalog = restrict_catalog(served_catalog, ["fx_daily", "margin", "adj_factor", "express"])

    async def go():
        async with McpToolClient.in_process(service) as client:
            entities = await load_entities(client, catalog)
            stock = next(e for e in entities["cn_equity"] if e.visibility == 10)
            coverage = [
                CoverageRow(tool="fx_daily", asset_class="rates_fx", visibility=10, entity=None, entity_name=None),
                CoverageRow(tool="margin", asset_class="market", visibility=10, entity=None, entity_name=None),
                CoverageRow(tool="adj_factor", asset_class="cn_equity", visibility=10, entity=stock.code,
                            entity_name=stock.name),
                CoverageRow(tool="express", asset_class="cn_equity", visibility=10, entity=stock.code,
                            entity_name=stock.name),
            ]
            lines: list[str] = []
            result = await enumerate_candidates(client, catalog, coverage, entities, CLOCK, report=lines.append)
            # Progress: a line after exploring and one before executing (core/progress.py).
            assert lines[0] == "explored 4 of 4 covered (tool, entity) pairs"
            assert lines[1].startswith("drafted ") and lines[1].endswith("distinct sound ones twice")
            return result
    return anyio.run(go)


def test_enumeration_over_fx_and_margin_produces_only_pinned_programs(enumeration, served_catalog):
    by_tool = defaultdict(list)
    for c in enumeration.candidates:
        validate_program(c.program, served_catalog, qid=c.qid)  # the load-time check, on every candidate
        by_tool[c.facts.tool].append(c)
    pairs = {c.program.extract.select.where["ts_code"] for c in by_tool["fx_daily"]}
    exchanges = {c.program.extract.select.where["exchange_id"] for c in by_tool["margin"]}
    assert len(pairs) >= 6 and exchanges == {"SSE", "SZSE"}
    aggregates = [c for c in by_tool["fx_daily"] + by_tool["margin"] if c.program.extract.aggregate]
    assert len(aggregates) > 50


def test_fx_windows_hold_as_many_weekday_records_as_they_say(enumeration, service):
    """A window of n FX days is a span of calendar days holding exactly n weekday quotes, on a
    Friday, a Saturday and a Monday alike (FX follows no exchange calendar)."""
    windows = {}
    for c in enumeration.candidates:
        if c.facts.tool == "fx_daily" and c.facts.anchor.startswith("window:"):
            windows.setdefault(int(c.facts.anchor.split(":")[1]), c)
    assert set(windows) == {5, 20, 60}
    for day in (CLOCK, CLOCK + dt.timedelta(days=1), CLOCK + dt.timedelta(days=3)):
        on_day = DataService(config=ServiceConfig(clock=day), market=service.market)
        for n, c in windows.items():
            call = c.program.calls[0]
            assert all(spec.sessions_back is None and spec.calendar is None for spec in call.dates.values())
            args = {name: resolve_date_spec(spec, day) for name, spec in call.dates.items()}
            pair = c.program.extract.select.where["ts_code"]
            assert len(on_day.call("fx_daily", {**args, "ts_code": pair})["items"]) == n, (c.qid, day, n)


def test_no_candidate_answers_with_a_flag_factor_code_or_identifier(enumeration, served_catalog):
    roles = Counter(served_catalog.get(c.facts.tool).field(c.facts.field).role for c in enumeration.candidates)
    assert set(roles) <= ANSWER_ROLES and roles["measure"] > 0
    assert not [c for c in enumeration.candidates if c.facts.tool == "adj_factor"]
    assert not [c for c in enumeration.candidates if c.facts.field == "is_audit"]
    filters = {f.filter: f.dropped for f in enumeration.filters}
    assert filters.get("role_factor", 0) >= 1


# --------------------------------------------------------------------------- series selection


def _meta(**extra: Any) -> ToolMeta:
    return ToolMeta.model_validate({
        "name": "seats", "service": "microstructure", "description": "seats", "asset_classes": ["cn_equity"],
        "role": "data", "entity_param": "ts_code", "time_key": "trade_date", "time_key_fmt": "%Y%m%d",
        "fields": [{"name": "ts_code", "type": "code", "description": "code"},
                   {"name": "trade_date", "type": "date", "description": "day"},
                   {"name": "seat", "type": "text", "description": "seat"},
                   {"name": "net", "type": "number", "description": "net buy"}],
        "series_keys": ["seat"], **extra,
    })


def test_series_of_drops_ambiguous_and_stale_series_and_marks_stable_ones():
    rows = [
        {"trade_date": "20261127", "seat": "机构专用", "net": 1.0}, {"trade_date": "20261127", "seat": "机构专用", "net": 2.0},
        {"trade_date": "20261127", "seat": "A", "net": 3.0}, {"trade_date": "20261126", "seat": "A", "net": 4.0},
        {"trade_date": "20261127", "seat": "B", "net": 5.0},
        {"trade_date": "20261126", "seat": "C", "net": 6.0},
    ]
    counts = _Counts()
    found = series_of(_meta(), {"ts_code": "600519.SH"}, rows, counts)
    assert [(s.where, len(s.records), s.stable) for s in found] == [({"seat": "A"}, 2, True), ({"seat": "B"}, 1, False)]
    assert counts.counts == Counter({"series_ambiguous": 1, "series_not_current": 1})
    # Without its entity argument the tool lists every stock: the entity is pinned as well.
    assert series_of(_meta(series_keys=[]), {}, [{"trade_date": "20261127", "ts_code": "X", "net": 1.0}])[0].where == \
        {"ts_code": "X"}
    assert series_of(_meta(series_keys=[]), {"ts_code": "X"}, rows)[0].where == {}


@pytest.mark.parametrize("n", [5, 10, 20, 60])
def test_a_weekday_window_holds_exactly_n_weekdays_whatever_the_weekday(n):
    for offset in range(7):
        day = CLOCK + dt.timedelta(days=offset)
        span = [day - dt.timedelta(days=k) for k in range(weekday_span(n) + 1)]
        assert sum(d.weekday() < 5 for d in span) == n, (day, n)
