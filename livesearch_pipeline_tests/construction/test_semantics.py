"""Semantic rules of enumeration (issue 20): each unsound kind of candidate is rejected with its
counted reason, from what the lexicon says each field is (construction/semantics.py)."""

from __future__ import annotations

import datetime as dt

import anyio
import pytest

from livesearch_pipeline.construction.enumerate import enumerate_candidates
from livesearch_pipeline.construction.formats import value_format
from livesearch_pipeline.construction.models import CoverageRow
from livesearch_pipeline.construction.sampling import load_entities, restrict_catalog
from livesearch_pipeline.construction.semantics import (
    aggregate_reason,
    answer_reason,
    name_gives_away,
    program_reason,
)
from livesearch_pipeline.core.catalog import FieldMeta
from livesearch_pipeline.core.lexicon import ALL_QUANTITIES, LexEntry, load_lexicon
from livesearch_pipeline.core.models import Call, Combine, DateSpec, Extractor, Format, Program, Selection, ValueRef
from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline_tests.construction.builders import bar_program

CLOCK = dt.date(2026, 11, 27)


@pytest.mark.parametrize(("tool", "field", "aggregate", "reason"), [
    # Derived and bound fields: no aggregate at all.
    ("daily", "pre_close", "mean", "semantic_aggregate_of_derived"),
    ("index_daily", "pre_close", "change", "semantic_aggregate_of_derived"),
    ("stk_limit", "up_limit", "mean", "semantic_aggregate_of_bound"),
    ("stk_limit", "down_limit", "argmin", "semantic_aggregate_of_bound"),
    # Sums of stocks and levels.
    ("margin", "rqyl", "sum", "semantic_sum_of_stock"),
    ("hk_hold", "vol", "sum", "semantic_sum_of_stock"),
    ("daily_basic", "total_share", "sum", "semantic_sum_of_stock"),
    ("daily", "close", "sum", "semantic_sum_of_level"),
    ("fund_nav", "unit_nav", "sum", "semantic_sum_of_level"),
    ("shibor", "on", "sum", "semantic_sum_of_level"),
    # Daily extremes keep only their own extreme; vendor artefacts nothing.
    ("daily", "high", "pct_change", "semantic_aggregate_of_daily_extreme"),
    ("daily", "high", "mean", "semantic_aggregate_of_daily_extreme"),
    ("daily", "low", "max", "semantic_aggregate_of_daily_extreme"),
    ("fx_daily", "bid_high", "min", "semantic_aggregate_of_daily_extreme"),
    ("fx_daily", "tick_qty", "mean", "semantic_aggregate_of_artefact"),
])
def test_an_unsound_aggregate_is_rejected_with_its_reason(tool, field, aggregate, reason):
    assert aggregate_reason(tool, field, aggregate) == reason


@pytest.mark.parametrize(("tool", "field", "aggregate"), [
    ("daily", "vol", "sum"), ("daily", "amount", "sum"), ("moneyflow", "net_mf_amount", "sum"),
    ("daily", "close", "mean"), ("daily", "close", "pct_change"), ("margin", "rzye", "change"),
    ("daily", "high", "max"), ("daily", "high", "argmax"), ("daily", "low", "min"), ("daily", "low", "argmin"),
    ("daily", "pre_close", None), ("stk_limit", "up_limit", None), ("share_float", "float_share", "sum"),
])
def test_sound_aggregates_and_single_records_pass(tool, field, aggregate):
    assert aggregate_reason(tool, field, aggregate) is None


def test_every_quantity_has_a_default_or_an_explicit_mark():
    lexicon = load_lexicon()
    assert LexEntry(en="x", zh="x", kind="amount").quantity_of == "flow"
    assert LexEntry(en="x", zh="x", kind="price").quantity_of == "level"
    assert LexEntry(en="x", zh="x", kind="label").quantity_of is None
    marked = {e.quantity for e in lexicon.fields.values() if e.quantity}
    assert marked <= set(ALL_QUANTITIES) and {"stock", "derived", "bound", "daily_high", "daily_low", "artefact"} <= marked


def test_program_reason_reads_the_other_side_of_a_combine():
    program = bar_program("600519.SH")
    assert program_reason(program) is None  # a latest close, on a tool the lexicon does not know
    extract = program.extract.model_copy(update={"combine": Combine(op="difference", other=ValueRef(
        call="c1", select=program.extract.select.model_copy(update={"mode": "all"}), field="pre_close",
        aggregate="mean"))})
    daily = program.model_copy(update={
        "calls": [program.calls[0].model_copy(update={"tool": "daily"})], "extract": extract})
    assert program_reason(daily) == "semantic_aggregate_of_derived"


def test_the_day_of_an_extreme_answered_with_a_derived_field_is_rejected():
    """"The previous close on the day it closed highest": argmax's arg_field is a copy of another
    record's value; the volume of that day, or the day itself, stays; the close of that day is the
    highest close itself, read back."""
    program = bar_program("600519.SH", tool="daily", aggregate="argmax", sessions=20)

    def with_arg(name):
        return program.model_copy(update={"extract": program.extract.model_copy(update={"arg_field": name})})

    assert program_reason(with_arg("pre_close")) == "semantic_arg_field_of_derived"
    assert program_reason(with_arg("trade_date")) is None
    assert program_reason(with_arg("vol")) is None
    assert program_reason(with_arg("close")) == "semantic_extreme_read_back"


def on_the_day_it_closed_highest(code: str, bars_tool: str, tool: str, field: str,
                                 select: Selection | None = None) -> Program:
    """`tool`'s `field` on the day `bars_tool` closed highest over 20 sessions: two calls, the
    second dated by an argmax reference (read at its latest record unless `select` says)."""
    bars = bar_program(code, tool=bars_tool, aggregate="argmax", sessions=20)
    day_of_high = ValueRef(call="c1", select=bars.extract.select, field="close", aggregate="argmax")
    c2 = Call(id="c2", tool=tool, args={"ts_code": code}, refs={"trade_date": day_of_high})
    extract = Extractor(call="c2", select=select or Selection(mode="latest", key="trade_date"), field=field,
                        format=Format(kind="number", decimals=2, unit="CNY"))
    return Program(calls=[bars.calls[0], c2], extract=extract)


def test_another_tool_s_record_on_the_day_of_an_extreme_follows_the_same_rule():
    """The two-call shape of the same question: stk_limit's previous close or limit-up price on the
    day `daily` closed highest (the date resolved by an argmax reference)."""
    def on_that_day(field):
        return on_the_day_it_closed_highest("600519.SH", "daily", "stk_limit", field)

    assert program_reason(on_that_day("pre_close")) == "semantic_arg_field_of_derived"
    assert program_reason(on_that_day("up_limit")) == "semantic_arg_field_of_bound"


def test_the_extreme_read_back_on_its_own_day_is_not_a_second_step():
    """daily_basic's close on the day daily closed highest is the highest close: one call with one
    aggregate, not a two-step investigation. Another field of that day stays."""
    def on_that_day(field):
        return on_the_day_it_closed_highest("605144.SH", "daily", "daily_basic", field)

    assert program_reason(on_that_day("close")) == "semantic_extreme_read_back"
    assert program_reason(on_that_day("turnover_rate")) is None


def test_a_minute_bar_series_is_read_only_at_a_named_minute():
    """hk_mins on the day hk_daily closed highest, read at its latest record, answered "its opening
    price" with the 16:00 bar's open (31.95 HKD where the session opened at 31.20): rejected. A
    minute question names its bar and stays."""
    minute_fmt = "%Y-%m-%d %H:%M:%S"

    def on_that_day(select):
        return on_the_day_it_closed_highest("02974.HK", "hk_daily", "hk_mins", "open", select)

    last_minute = Selection(mode="latest", key="trade_time", key_fmt=minute_fmt)
    assert program_reason(on_that_day(last_minute)) == "semantic_minute_bar_read_as_the_session"
    named = Selection(mode="minute", key="trade_time", key_fmt=minute_fmt,
                      anchor=DateSpec(sessions_back=1, calendar="XHKG", fmt="%Y%m%d"), time="10:30")
    assert program_reason(on_that_day(named)) is None


@pytest.mark.parametrize(("name", "answer", "given_away"), [
    ("渺珩建工", "建工", True),
    ("霁珂银行", "银行", True),
    ("珂瑭稳健回报债券", "债券型", True),
    ("渺珩建工", "银行", False),
    ("翊昶电子", "元器件", False),
    ("Harbor Bank Holdings", "Bank", True),
    ("Harbor Bank Holdings", "Semiconductors", False),
    ("翊昶电子", None, False),
])
def test_a_label_the_name_gives_away(name, answer, given_away):
    assert name_gives_away(name, answer) is given_away


def test_a_label_question_answered_by_the_name_is_rejected():
    text = bar_program("600519.SH", fmt=Format(kind="text"))
    assert answer_reason(text, "渺珩建工", "建工") == "semantic_label_in_name"
    assert answer_reason(text, "渺珩建工", "华东") is None
    # A number is never a label question.
    assert answer_reason(bar_program("600519.SH"), "渺珩建工", "建工") is None


# --------------------------------------------------------------------------- scale words


def _amount(unit: str = "CNY") -> FieldMeta:
    return FieldMeta(name="amount", type="number", unit=unit, description="turnover")


def test_a_scale_word_only_for_values_of_at_least_one_in_it():
    # 230,000 CNY is not "0.23 million CNY".
    fmt = value_format(_amount(), None, 230_000.0, "%Y%m%d", tool="stk_mins", observed=[230_000.0, 410_000.0])
    assert fmt.unit == "CNY" and fmt.scale == 1
    fmt = value_format(_amount(), None, 2_300_000.0, "%Y%m%d", tool="stk_mins", observed=[2_300_000.0, 1_500_000.0])
    assert fmt.unit == "million CNY"
    # One observed record under a million keeps the word off, whatever the sample.
    fmt = value_format(_amount(), "mean", 5e6, "%Y%m%d", tool="stk_mins", observed=[5e6, 8e5], window=20)
    assert fmt.unit == "CNY"
    # A sum over 20 records of at least 100,000 each is at least 2 million.
    fmt = value_format(_amount(), "sum", 1e5, "%Y%m%d", tool="stk_mins", observed=[1e5, 3e5], window=20)
    assert fmt.unit == "million CNY"
    # A change is as small as the smallest move: 3 billion balances moving by 0.2 million.
    fmt = value_format(_amount(), "change", 3e9, "%Y%m%d", tool="margin", observed=[3e9, 3.0002e9, 3.0005e9])
    assert fmt.unit == "CNY"


# --------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def enumeration():
    service = DataService(config=ServiceConfig(clock=CLOCK), market=Market())

    async def go():
        async with McpToolClient.in_process(service) as client:
            catalog = restrict_catalog(await client.list_tools(),
                                       ["daily", "stk_limit", "margin", "fx_daily", "stock_basic", "stk_rewards",
                                        "adj_factor"])
            entities = await load_entities(client, catalog)
            named = next(e for e in entities["cn_equity"]
                         if name_gives_away(e.name, service.market.universe.get(e.code).industry))
            coverage = [
                CoverageRow(tool=tool, asset_class="cn_equity", visibility=named.visibility, entity=named.code,
                            entity_name=named.name) for tool in ("daily", "stk_limit", "stock_basic", "stk_rewards")
            ] + [CoverageRow(tool=tool, asset_class=cls, visibility=10, entity=None, entity_name=None)
                 for tool, cls in (("margin", "market"), ("fx_daily", "rates_fx"))]
            return await enumerate_candidates(client, catalog, coverage, entities, CLOCK), named
    return anyio.run(go)


def test_enumeration_counts_each_semantic_rejection_and_keeps_none(enumeration):
    result, named = enumeration
    filters = {f.filter: f.dropped for f in result.filters}
    for reason in ("semantic_aggregate_of_derived", "semantic_aggregate_of_bound", "semantic_sum_of_stock",
                   "semantic_aggregate_of_daily_extreme", "semantic_aggregate_of_artefact", "semantic_label_in_name",
                   # issue 28: open-to-open changes and average opening asks; a manager by name and
                   # post; an adjusted return whose factor did not move (a plain return in disguise)
                   "semantic_aggregate_of_session_open", "semantic_select_on_person_and_position",
                   "semantic_adjustment_constant"):
        assert filters.get(reason, 0) >= 1, (reason, filters)
    assert not [c for c in result.candidates if c.facts.tool == "stk_rewards"]
    assert not [c for c in result.candidates if c.facts.field in ("open", "ask_open", "bid_open") and c.facts.aggregate]
    # Every change or return over N sessions starts N sessions back (N + 1 closes).
    changes = [c for c in result.candidates if c.facts.aggregate in ("change", "pct_change")
               and c.facts.anchor.startswith("window:")]
    assert changes
    for c in changes:
        n = int(c.facts.anchor.split(":")[1])
        assert c.program.calls[0].dates["start_date"].sessions_back == n, c.qid
    assert all(program_reason(c.program) is None for c in result.candidates)
    industry = [c for c in result.candidates if c.entity == named.code and c.facts.field == "industry"]
    assert industry == []
    # Sound aggregates stay: the mean close, the highest high, the summed volume.
    shapes = {(c.facts.tool, c.facts.field, c.facts.aggregate) for c in result.candidates}
    assert {("daily", "close", "mean"), ("daily", "high", "max"), ("daily", "vol", "sum")} <= shapes


def test_no_tool_of_the_catalog_has_an_answerable_field_without_a_quantity_or_label():
    lexicon = load_lexicon()
    for spec in collect_tool_specs():
        for f in spec.meta.fields:
            if f.answerable and spec.meta.role == "data":
                entry = lexicon.require(spec.name, f.name)
                assert (entry.quantity_of is None) == (entry.kind == "label"), (spec.name, f.name)
