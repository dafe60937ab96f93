"""Field roles and the one-series rule in program validation (issue 12, DESIGN §2 item 4).

A selection over a tool that returns several series per time key must name its series in
`where` (or match on it); windows of a weekday series (FX) are counted in calendar days; only
measures and labels are answers. Each rule is checked on a small catalog shaped like the
embedded service's fx_daily, margin, adj_factor and trade_cal tools.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from livesearch_pipeline.core.catalog import Catalog, DateParamMeta, FieldMeta, ToolMeta, derive_field_role
from livesearch_pipeline.core.models import Program, Question
from livesearch_pipeline.core.program import PoolLoadError, ProgramError, load_pool, validate_program
from livesearch_pipeline.core.qid import compute_qid

YMD = "%Y%m%d"
WINDOW_PARAMS = [DateParamMeta(name="start_date", fmt=YMD, role="start"),
                 DateParamMeta(name="end_date", fmt=YMD, role="end")]


def _f(name: str, type_: str, role: str | None = None) -> FieldMeta:
    data: dict[str, Any] = {"name": name, "type": type_, "description": name}
    if role is not None:
        data["role"] = role
    return FieldMeta.model_validate(data)


CATALOG = Catalog(service="series-test", tools=[
    ToolMeta(name="fx_daily", service="macro", description="FX bars of every pair", asset_classes=["rates_fx"],
             role="data", date_params=WINDOW_PARAMS, time_key="trade_date", time_key_fmt=YMD,
             fields=[_f("ts_code", "code"), _f("trade_date", "date"), _f("bid_close", "number")],
             series_keys=["ts_code"]),
    ToolMeta(name="margin", service="microstructure", description="Margin totals per exchange",
             asset_classes=["market"], role="data", date_params=WINDOW_PARAMS, time_key="trade_date",
             time_key_fmt=YMD, calendar="XSHG",
             fields=[_f("trade_date", "date"), _f("exchange_id", "text"), _f("rzye", "number")],
             series_keys=["exchange_id"]),
    ToolMeta(name="daily", service="cn_quotes", description="Daily bars", asset_classes=["cn_equity"],
             role="data", entity_param="ts_code",
             date_params=[*WINDOW_PARAMS, DateParamMeta(name="trade_date", fmt=YMD, role="point")],
             time_key="trade_date", time_key_fmt=YMD, calendar="XSHG",
             fields=[_f("ts_code", "code"), _f("trade_date", "date"), _f("close", "number")]),
    ToolMeta(name="adj_factor", service="cn_quotes", description="Adjustment factors", asset_classes=["cn_equity"],
             role="data", entity_param="ts_code", date_params=WINDOW_PARAMS, time_key="trade_date",
             time_key_fmt=YMD, calendar="XSHG",
             fields=[_f("ts_code", "code"), _f("trade_date", "date"), _f("adj_factor", "number")]),
    ToolMeta(name="express", service="statements", description="Preliminary results", asset_classes=["cn_equity"],
             role="data", entity_param="ts_code", date_params=WINDOW_PARAMS, time_key="ann_date",
             time_key_fmt=YMD, calendar="XSHG", refresh_class="quarterly",
             fields=[_f("ts_code", "code"), _f("ann_date", "date"), _f("revenue", "number"),
                     _f("is_audit", "integer")]),
    ToolMeta(name="trade_cal", service="reference", description="Trading calendar", asset_classes=["market"],
             role="utility", date_params=WINDOW_PARAMS, time_key="cal_date", time_key_fmt=YMD, calendar="XSHG",
             fields=[_f("exchange", "text"), _f("cal_date", "date"), _f("is_open", "integer")],
             series_keys=["exchange"]),
    ToolMeta(name="stock_basic", service="reference", description="Listing facts", asset_classes=["cn_equity"],
             role="data", entity_param="ts_code", calendar="XSHG", refresh_class="static",
             fields=[_f("ts_code", "code"), _f("industry", "text"), _f("list_date", "date"),
                     _f("exchange", "text")]),
])

XSHG_WINDOW = {"start_date": {"sessions_back": 19, "calendar": "XSHG"}, "end_date": {"sessions_back": 0, "calendar": "XSHG"}}
WEEKDAY_WINDOW = {"start_date": {"days_back": 27}, "end_date": {"days_back": 0}}


def prog(tool: str, field: str, *, dates: dict | None = None, args: dict | None = None, select: dict | None = None,
         aggregate: str | None = "mean", fmt: dict | None = None) -> Program:
    return Program.model_validate({
        "calls": [{"id": "c1", "tool": tool, "args": args or {}, "dates": XSHG_WINDOW if dates is None else dates}],
        "extract": {"call": "c1", "select": select or {"mode": "all", "key": "trade_date"}, "field": field,
                    "aggregate": aggregate, "format": fmt or {"kind": "number", "decimals": 4}},
    })


def problems(program: Program, qid: str = "ls-00000000000000aa") -> str:
    with pytest.raises(ProgramError) as failure:
        validate_program(program, CATALOG, qid=qid)
    return str(failure.value)


# --------------------------------------------------------------------------- one series per time key


def test_window_aggregate_over_fx_without_a_pair_is_refused_naming_qid_and_key():
    message = problems(prog("fx_daily", "bid_close", dates=WEEKDAY_WINDOW), qid="ls-00000000000000f1")
    assert "ls-00000000000000f1 extract.select.where" in message
    assert "'fx_daily' returns several series per 'trade_date'" in message and "missing: 'ts_code'" in message


def test_fx_window_naming_its_pair_in_calendar_days_passes():
    validate_program(prog("fx_daily", "bid_close", dates=WEEKDAY_WINDOW,
                          select={"mode": "all", "key": "trade_date", "where": {"ts_code": "USDJPY.FXCM"}}), CATALOG)


def test_pair_passed_as_an_argument_only_is_not_enough():
    """The question names its series from `where`; an argument alone never reaches the text."""
    message = problems(prog("fx_daily", "bid_close", dates=WEEKDAY_WINDOW, args={"ts_code": "USDJPY.FXCM"}))
    assert "missing: 'ts_code'" in message


def test_fx_window_counted_in_exchange_sessions_is_refused():
    """FX quotes every weekday: 20 Shanghai sessions around a holiday hold 25 FX records."""
    message = problems(prog("fx_daily", "bid_close",
                            select={"mode": "all", "key": "trade_date", "where": {"ts_code": "USDJPY.FXCM"}}))
    assert "calls (c1).dates.start_date" in message and "follows no exchange calendar" in message


def test_snapshot_anchor_on_another_market_calendar_is_refused():
    select = {"mode": "snapshot", "key": "trade_date", "where": {"exchange_id": "SSE"},
              "anchor": {"sessions_back": 5, "calendar": "XHKG"}}
    message = problems(prog("margin", "rzye", select=select, aggregate=None))
    assert "extract.select.anchor" in message and "XHKG but 'margin' trades on XSHG" in message


def test_margin_aggregate_over_both_exchanges_is_refused_and_one_exchange_passes():
    assert "missing: 'exchange_id'" in problems(prog("margin", "rzye"))
    validate_program(prog("margin", "rzye", select={"mode": "all", "key": "trade_date",
                                                    "where": {"exchange_id": "SZSE"}}), CATALOG)


def test_match_on_the_series_key_pins_the_series():
    validate_program(prog("margin", "rzye", aggregate=None, dates={},
                          select={"mode": "match", "key": "exchange_id", "value": "SSE"}), CATALOG)


def test_instrument_tool_called_without_its_entity_must_pin_it():
    """`daily` for one date without ts_code lists every stock: a mean would average the market."""
    one_day = {"trade_date": {"sessions_back": 0, "calendar": "XSHG"}}
    assert "missing: 'ts_code'" in problems(prog("daily", "close", dates=one_day))
    validate_program(prog("daily", "close", dates=one_day,
                          select={"mode": "all", "key": "trade_date", "where": {"ts_code": "600519.SH"}}), CATALOG)
    validate_program(prog("daily", "close", args={"ts_code": "600519.SH"}), CATALOG)


def _question(program: Program, entity: str) -> str:
    return json.dumps({
        "qid": compute_qid(program, entity), "question": "What was the average margin balance?",
        "program": program.model_dump(mode="json"), "match": {"rule": "approx", "abs_tol": 0.005, "decimals": 2},
        "refresh_class": "daily", "tier": "T3", "asset_class": "market", "entity": entity,
        "entity_name": "Margin trading", "visibility": 10, "signature": "sig-test",
        "provenance": {"verbalizer": "template"},
    }, ensure_ascii=False)


def test_pool_with_an_aggregate_over_two_series_is_refused_on_load(tmp_path: Path):
    good = prog("margin", "rzye", select={"mode": "all", "key": "trade_date", "where": {"exchange_id": "SSE"}})
    mixed = prog("margin", "rzye")
    path = tmp_path / "questions.jsonl"
    path.write_text(_question(good, "margin") + "\n" + _question(mixed, "margin") + "\n", encoding="utf-8")
    qid = compute_qid(mixed, "margin")
    with pytest.raises(PoolLoadError, match=rf"questions.jsonl:2: {qid} extract.select.where: .*missing: 'exchange_id'"):
        load_pool(path, CATALOG)
    path.write_text(_question(good, "margin") + "\n", encoding="utf-8")
    assert [q.qid for q in load_pool(path, CATALOG)] == [compute_qid(good, "margin")]
    assert isinstance(load_pool(path, CATALOG)[0], Question)


# --------------------------------------------------------------------------- answer roles


def test_a_cumulative_adjustment_factor_is_never_an_answer():
    message = problems(prog("adj_factor", "adj_factor", args={"ts_code": "600519.SH"}, aggregate="min"))
    assert "field 'adj_factor' of 'adj_factor' has role 'factor'" in message


def test_a_flag_is_never_an_answer_nor_a_calendar_tool():
    select = {"mode": "latest", "key": "ann_date"}
    message = problems(prog("express", "is_audit", args={"ts_code": "600519.SH"}, select=select, aggregate=None,
                            fmt={"kind": "integer"}))
    assert "field 'is_audit' of 'express' has role 'flag'" in message
    validate_program(prog("express", "revenue", args={"ts_code": "600519.SH"}, select=select, aggregate=None), CATALOG)
    calendar = problems(prog("trade_cal", "is_open", aggregate="min", fmt={"kind": "integer"},
                             select={"mode": "all", "key": "cal_date", "where": {"exchange": "SSE"}}))
    assert "tool 'trade_cal' has role 'utility'; only data tools define gold" in calendar
    assert "has role 'flag'" in calendar


def test_argmax_answers_with_the_date_of_a_measure_and_a_label_is_a_fact_but_a_code_or_date_is_not():
    validate_program(prog("daily", "close", args={"ts_code": "600519.SH"}, aggregate="argmax",
                          fmt={"kind": "date"}), CATALOG)
    static = {"mode": "match", "key": "ts_code", "value": "600519.SH"}
    validate_program(prog("stock_basic", "industry", dates={}, args={"ts_code": "600519.SH"}, select=static,
                          aggregate=None, fmt={"kind": "text"}), CATALOG)
    for field, kind, role in (("exchange", "text", "code"), ("list_date", "date", "date")):
        message = problems(prog("stock_basic", field, dates={}, args={"ts_code": "600519.SH"}, select=static,
                                aggregate=None, fmt={"kind": kind}))
        assert f"field {field!r} of 'stock_basic' has role {role!r}" in message


@pytest.mark.parametrize(("name", "type_", "role"), [
    ("close", "number", "measure"), ("is_open", "integer", "flag"), ("is_hs", "text", "flag"),
    ("adj_factor", "number", "factor"), ("ts_code", "code", "identifier"), ("con_code", "code", "identifier"),
    ("exchange_id", "text", "code"), ("list_status", "text", "code"), ("holder_name", "text", "label"),
    ("industry", "text", "label"), ("trade_date", "date", "date"), ("resume", "text", "description"),
    ("name", "text", "identifier"), ("change", "number", "measure"),
])
def test_derived_roles_of_common_tushare_fields(name, type_, role):
    assert derive_field_role(name, type_) == role
    assert _f(name, type_).role == role


def test_an_explicit_role_overrides_the_derived_one_and_unknown_roles_are_rejected():
    assert _f("name", "text", "label").role == "label"
    with pytest.raises(ValueError, match="role"):
        _f("close", "number", "price")


def test_series_keys_must_be_record_fields():
    with pytest.raises(ValueError, match=r"series key\(s\) \['pair'\] are not record fields"):
        ToolMeta(name="fx", service="macro", description="fx", asset_classes=["rates_fx"], role="data",
                 time_key="trade_date", time_key_fmt=YMD, fields=[_f("trade_date", "date"), _f("bid", "number")],
                 series_keys=["pair"])


def test_a_text_time_key_is_a_date_unless_stated_otherwise():
    meta = ToolMeta(name="cpi", service="macro", description="cpi", asset_classes=["macro"], role="data",
                    time_key="month", time_key_fmt="YYYYMM", fields=[_f("month", "text"), _f("yoy", "number")])
    assert meta.field("month").role == "date"
    stated = ToolMeta(name="cpi", service="macro", description="cpi", asset_classes=["macro"], role="data",
                      time_key="month", time_key_fmt="YYYYMM", fields=[_f("month", "text", "code"), _f("yoy", "number")])
    assert stated.field("month").role == "code"  # kept: the catalog check then reports it (role_problems)


MEMBERS = [_f("index_code", "code"), _f("con_code", "code"), _f("in_date", "date"), _f("weight", "number")]


def _membership_catalog(one_series_by: list[str]) -> Catalog:
    """A tool shaped like index_member: several indices' members, or a stock's one industry index."""
    return Catalog(service="series-test", tools=[
        ToolMeta(name="index_member", service="indices", description="Industry memberships", asset_classes=["index"],
                 role="data", entity_param="index_code", time_key="in_date", time_key_fmt=YMD, fields=MEMBERS,
                 series_keys=["con_code"], one_series_by=one_series_by)])


def _by_stock(arg: str) -> Program:
    return Program.model_validate({
        "calls": [{"id": "c1", "tool": "index_member", "args": {arg: "600001.SH"}}],
        "extract": {"call": "c1", "select": {"mode": "latest", "key": "in_date"}, "field": "weight",
                    "format": {"kind": "number", "decimals": 2}}})


def test_an_argument_that_narrows_to_one_series_needs_no_where():
    validate_program(_by_stock("ts_code"), _membership_catalog(["ts_code"]))
    with pytest.raises(ProgramError, match=r"index_member.*missing: 'con_code', 'index_code'"):
        validate_program(_by_stock("ts_code"), _membership_catalog([]))
    with pytest.raises(ProgramError, match=r"missing: 'con_code', 'index_code'"):
        validate_program(_by_stock("con_name"), _membership_catalog(["ts_code"]))
