"""Field units in the served tool descriptions, and levels a professional recognizes (issue 20)."""

from __future__ import annotations

import datetime as dt

import anyio
import numpy as np
import pytest

from livesearch_pipeline.construction.formats import value_format
from livesearch_pipeline.core.catalog import tool_description, unit_phrase
from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.market.macro import FX_PAIRS
from livesearch_pipeline.dataservice.market.prices import HK_SPREAD_TABLE, hk_tick, to_hk_ticks
from livesearch_pipeline.dataservice.server import DataService, mcp_tool
from livesearch_pipeline.dataservice.spec import ToolContext
from livesearch_pipeline.dataservice.tools.funds import SINGLE_STOCK_CAP_PCT, fund_holdings, is_etf

CLOCK = dt.date(2026, 11, 27)
SPECS = {s.name: s for s in collect_tool_specs()}
MARKET = shared_market(DEFAULT_SEED)


# --------------------------------------------------------------------------- units


@pytest.mark.parametrize(("tool", "phrase"), [
    ("daily", "vol in lots of 100 shares (手)"),
    ("daily", "amount in thousand CNY (千元)"),
    ("fund_basic", "issue_amount in 100 million fund units (亿份)"),
    ("daily_basic", "in 10,000 shares (万股)"),
    ("index_daily", "in index points"),
])
def test_the_served_tool_description_states_its_field_units(tool, phrase):
    assert phrase in mcp_tool(SPECS[tool]).description


def test_units_come_from_the_catalog_field_metadata_for_agent_and_verbalizer_alike():
    spec = SPECS["fund_basic"]
    field = spec.meta.field("issue_amount")
    assert field.unit == "100M units"
    # The agent reads the description built from the field's unit ...
    assert f"issue_amount in {unit_phrase(field.unit)}" in tool_description(spec.meta)
    # ... and the verbalizer converts from the same unit: 12.5 (亿份) is 1,250 million units.
    fmt = value_format(field, None, 12.5, "%Y%m%d", tool="fund_basic", observed=[12.5, 30.0])
    assert fmt.unit == "million units" and fmt.scale == pytest.approx(100.0)


def test_every_unit_of_the_catalog_is_described_and_only_answerable_fields_are_listed():
    for spec in SPECS.values():
        text = tool_description(spec.meta)
        assert text.startswith(spec.meta.description.rstrip(". "))
        for f in spec.meta.fields:
            if f.unit and f.answerable:
                assert f.name in text.split("Units: ", 1)[1], (spec.name, f.name)


def test_units_travel_over_mcp():
    from livesearch_pipeline.dataservice.client import McpToolClient

    service = DataService(config=ServiceConfig(clock=CLOCK), market=MARKET)

    async def go():
        async with McpToolClient.in_process(service) as client:
            return await client.list_mcp_tools()

    daily = next(t for t in anyio.run(go) if t.name == "daily")
    assert "vol in lots of 100 shares (手)" in (daily.description or "")
    vol = daily.output_schema["properties"]["items"]["items"]["properties"]["vol"]
    assert "lots of 100 shares" in vol["description"]


# --------------------------------------------------------------------------- levels


REAL_RANGES = {"AUDUSD.FXCM": (0.58, 0.72), "USDCNH.FXCM": (7.0, 7.4), "USDJPY.FXCM": (138.0, 162.0),
               "EURUSD.FXCM": (1.03, 1.17), "USDHKD.FXCM": (7.75, 7.85), "GBPUSD.FXCM": (1.2, 1.36),
               "USDCHF.FXCM": (0.77, 0.94)}


@pytest.mark.parametrize("code", sorted(REAL_RANGES))
def test_fx_pairs_stay_near_their_real_world_ranges(code):
    series = MARKET.macro.fx(code)
    i, j = series.span(dt.date(2015, 1, 1), CLOCK)
    mid = (np.array(series.columns["bid_close"][i:j]) + np.array(series.columns["ask_close"][i:j])) / 2
    low, high = REAL_RANGES[code]
    assert low <= mid.min() and mid.max() <= high, (code, mid.min(), mid.max())
    # And it moves: a quote that changes on most days at its 4-decimal precision.
    assert np.mean(np.round(np.diff(mid), 4) != 0) > 0.8


def test_a_cross_rate_is_the_product_of_its_legs():
    eur, cnh, cross = (MARKET.macro.fx(c) for c in ("EURUSD.FXCM", "USDCNH.FXCM", "EURCNH.FXCM"))

    def mid(s):
        return (np.array(s.columns["bid_close"]) + np.array(s.columns["ask_close"])) / 2
    assert np.allclose(mid(cross), mid(eur) * mid(cnh), rtol=2e-4)
    assert {p.code for p in FX_PAIRS} >= set(REAL_RANGES)


def test_fund_holdings_have_their_own_float_ratio_and_respect_the_ten_percent_rule():
    ctx = ToolContext(market=MARKET, clock=CLOCK, seed=MARKET.seed)
    checked = {True: 0, False: 0}  # ETF or not
    for fund in MARKET.universe.of_class("fund"):
        etf = is_etf(fund)
        if checked[etf] >= 5:
            continue
        records = fund_holdings(ctx, fund, dt.date(2026, 9, 30))
        if len(records) < 10:
            continue
        checked[etf] += 1
        ratios = [r["stk_float_ratio"] for r in records]
        assert len(set(ratios)) >= 8, (fund.code, ratios)  # not the same ratio on 9 of 10 holdings
        if not etf:  # index funds are exempt from the 10 % rule
            assert max(r["stk_mkv_ratio"] for r in records) <= SINGLE_STOCK_CAP_PCT
    assert checked[True] >= 1 and checked[False] >= 3, checked


def test_index_levels_are_points_in_the_thousands():
    spec = SPECS["index_daily"]
    close = spec.meta.field("close")
    assert close.unit == "points"
    assert value_format(close, None, 3456.78, "%Y%m%d", tool="index_daily").unit == "points"
    levels = [float(MARKET.prices.daily(e.code).close[-1]) for e in MARKET.universe.of_class("index")[:20]]
    assert all(100 < level < 100_000 for level in levels), levels


def test_the_hkex_spread_table():
    prices = np.array([0.2, 0.3, 5.0, 15.0, 50.0, 150.0, 300.0, 800.0, 1500.0, 3000.0, 6000.0])
    assert hk_tick(prices).tolist() == [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
    assert to_hk_ticks(np.array([12.345, 47.123, 0.3123, 250.11])).tolist() == [12.34, 47.10, 0.31, 250.2]
    assert HK_SPREAD_TABLE[0] == (0.25, 0.001)


def test_hong_kong_prices_sit_on_their_ticks_in_daily_and_minute_bars():
    service = DataService(config=ServiceConfig(clock=CLOCK), market=MARKET)
    for entity in MARKET.universe.of_class("hk_equity")[:25]:
        bars = MARKET.prices.daily(entity.code)
        for column in (bars.open, bars.high, bars.low, bars.close, bars.pre_close):
            ticks = column / hk_tick(column)
            assert np.allclose(ticks, np.round(ticks), atol=1e-6), entity.code
    code = MARKET.universe.of_class("hk_equity")[0].code
    minutes = service.call("hk_mins", {"ts_code": code, "trade_date": "20261127"})["items"]
    prices = np.array([r[k] for r in minutes for k in ("open", "close", "high", "low")])
    assert len(prices) and np.allclose(prices / hk_tick(prices), np.round(prices / hk_tick(prices)), atol=1e-6)
