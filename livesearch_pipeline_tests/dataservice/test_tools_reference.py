"""Reference tools, and the catalog rows of every tool of the statements/corporate/macro/
reference modules: metadata completeness and records that match their declared fields."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from livesearch_pipeline.core.calendars import is_session
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.spec import ToolContext, ToolInputError
from livesearch_pipeline.dataservice.tools import events, macro, reference, statements

CLOCK = dt.date(2026, 11, 27)
ALL_TOOLS = statements.TOOLS + events.TOOLS + macro.TOOLS + reference.TOOLS
TOOL = {t.name: t for t in ALL_TOOLS}
SERVICES = {"reference", "cn_quotes", "hk_us", "indices", "funds", "statements", "corporate", "microstructure", "macro"}


def call(model: Market, name: str, clock: dt.date = CLOCK, **args):
    return TOOL[name].handler(ToolContext(market=model, clock=clock, seed=model.seed), args)


def _day(text: str) -> dt.date:
    return dt.datetime.strptime(text, "%Y%m%d").date()


# ------------------------------------------------------------------ catalog rows


def test_catalog_rows_are_complete():
    names = [t.name for t in ALL_TOOLS]
    assert len(names) == len(set(names)) >= 50
    for tool in ALL_TOOLS:
        meta = tool.meta
        params = {p.name for p in tool.params}
        # Trading calendars are utilities of the reference service: they never define gold.
        expected_role = "utility" if meta.name in ("trade_cal", "hk_tradecal", "us_tradecal") else "data"
        assert meta.role == expected_role and meta.service in SERVICES, meta.name
        assert meta.asset_classes and meta.description and meta.fields, meta.name
        assert meta.entity_param is None or meta.entity_param in params, meta.name
        assert all(d.name in params for d in meta.date_params), meta.name
        assert meta.time_key is None or meta.field(meta.time_key) is not None, meta.name
        assert all(f.description and f.description_zh for f in meta.fields), meta.name
        assert len({f.name for f in meta.fields}) == len(meta.fields), meta.name
    services = {t.meta.service for t in ALL_TOOLS}
    assert {"reference", "statements", "corporate", "macro", "hk_us"} <= services


def _run_with_defaults(market: Market, tool) -> list[dict]:
    """Call `tool` with the least arguments it needs; entity tools try entities of their class
    until one has data (not every company has, say, a share unlock)."""
    ctx = ToolContext(market=market, clock=CLOCK, seed=market.seed)
    required = {p.name for p in tool.params if p.required}
    base = {"hs_type": "SH"} if "hs_type" in required else {}
    needs_code = tool.meta.entity_param == "ts_code" and ("ts_code" in required or tool.name == "forecast")
    if not needs_code:
        return tool.handler(ctx, base)
    cls = tool.meta.asset_classes[0]
    codes = [e.code for e in market.universe.of_class(cls)[:25]]
    for code in codes:
        rows = tool.handler(ctx, {**base, "ts_code": code})
        if rows:
            return rows
    return []


def test_every_tool_returns_declared_fields_newest_first(market):
    for tool in ALL_TOOLS:
        rows = _run_with_defaults(market, tool)
        assert rows, tool.name
        declared = {f.name for f in tool.meta.fields}
        for row in rows:
            assert set(row) <= declared, (tool.name, set(row) - declared)
        key = tool.meta.time_key
        if key and tool.meta.time_key_fmt == "%Y%m%d":
            keys = [r[key] for r in rows if r[key] is not None]
            assert keys == sorted(keys, reverse=True), tool.name
            assert max(keys) <= CLOCK.strftime("%Y%m%d"), tool.name


# ------------------------------------------------------------------ calendars


def test_trade_cal_uses_real_holidays(market):
    rows = {r["cal_date"]: r for r in call(market, "trade_cal", exchange="SSE", start_date=dt.date(2026, 9, 25))}
    assert rows["20261001"]["is_open"] == 0  # National Day
    assert rows["20261007"]["is_open"] == 0
    assert rows["20261008"]["is_open"] == 1
    assert rows["20261008"]["pretrade_date"] == "20260930"
    assert rows["20261009"]["pretrade_date"] == "20261008"
    assert max(rows) == CLOCK.strftime("%Y%m%d")
    hk = {r["cal_date"]: r for r in call(market, "hk_tradecal", start_date=dt.date(2025, 12, 20), end_date=dt.date(2025, 12, 31))}
    us = {r["cal_date"]: r for r in call(market, "us_tradecal", start_date=dt.date(2025, 12, 20), end_date=dt.date(2025, 12, 31))}
    assert hk["20251225"]["is_open"] == 0 and hk["20251226"]["is_open"] == 0
    assert us["20251225"]["is_open"] == 0 and us["20251226"]["is_open"] == 1
    open_only = call(market, "trade_cal", exchange="NYSE", start_date=dt.date(2026, 1, 1), is_open="1")
    assert all(is_session("XNYS", _day(r["cal_date"])) for r in open_only)
    with pytest.raises(ToolInputError, match="exchange must be"):
        call(market, "trade_cal", exchange="LSE")


# ------------------------------------------------------------------ instrument lists


def test_stock_basic_lists_only_listed_names(market):
    early = call(market, "stock_basic", clock=dt.date(2016, 1, 4))
    now = call(market, "stock_basic")
    assert len(early) < len(now) == len(market.universe.of_class("cn_equity"))
    assert all(r["list_date"] <= "20160104" for r in early)
    sh = call(market, "stock_basic", exchange="SSE")
    assert sh and all(r["ts_code"].endswith(".SH") for r in sh)


def test_names_follow_the_name_history(market):
    renamed = None
    for e in market.universe.of_class("cn_equity"):
        history = call(market, "namechange", ts_code=e.code)
        if len(history) == 2:
            renamed = (e, history)
            break
    assert renamed is not None
    entity, (current, old) = renamed
    assert current["end_date"] is None and current["name"] == entity.name
    assert _day(old["end_date"]) == _day(current["start_date"]) - dt.timedelta(days=1)
    before_change = _day(current["start_date"]) - dt.timedelta(days=1)
    earlier = {r["ts_code"]: r for r in call(market, "stock_basic", clock=before_change, ts_code=entity.code)}
    assert earlier[entity.code]["name"] == old["name"]
    assert call(market, "namechange", clock=before_change, ts_code=entity.code)[0]["name"] == old["name"]


def test_new_share_precedes_listing(market):
    rows = call(market, "new_share", start_date=dt.date(2018, 1, 1))
    assert rows
    for r in rows:
        entity = market.universe.get(r["ts_code"])
        assert _day(r["ipo_date"]) < entity.list_date
        assert r["price"] > 0 and r["funds"] == round(r["price"] * r["amount"] / 1e4, 4)
    window = call(market, "new_share", start_date=dt.date(2020, 1, 1), end_date=dt.date(2020, 12, 31))
    assert all(r["ipo_date"].startswith("2020") for r in window)


def test_company_profile_names_current_managers(market):
    code = market.universe.of_class("cn_equity")[0].code
    profile = call(market, "stock_company", ts_code=code)[0]
    managers = call(market, "stk_managers", ts_code=code)
    in_office = {r["title"]: r["name"] for r in managers if r["end_date"] is None and r["begin_date"] <= CLOCK.strftime("%Y%m%d")}
    assert profile["chairman"] == in_office["董事长"]
    assert profile["secretary"] == in_office["董事会秘书"]
    assert all(is_session("XSHG", _day(r["ann_date"])) for r in managers if r["ann_date"] >= "20140101")
    assert profile["website"].endswith(".example")


def test_hs_const_agrees_with_stock_basic(market):
    members = {r["ts_code"]: r for r in call(market, "hs_const", hs_type="SH")}
    assert members and all(is_session("XSHG", _day(r["in_date"])) for r in members.values())
    flagged = {r["ts_code"] for r in call(market, "stock_basic", is_hs="H")}
    assert flagged == set(members)
    with pytest.raises(ToolInputError, match="hs_type"):
        call(market, "hs_const")


def test_other_reference_lists(market):
    assert {r["ts_code"] for r in call(market, "hk_basic")} == {e.code for e in market.universe.of_class("hk_equity") if e.list_date <= CLOCK}
    assert len(call(market, "us_basic")) == len([e for e in market.universe.of_class("us_equity") if e.list_date <= CLOCK])
    indices = call(market, "index_basic")
    assert indices and all(r["base_date"] <= r["list_date"] for r in indices)
    etfs = call(market, "fund_basic", market="E")
    assert etfs and all(r["market"] == "E" for r in etfs)
    companies = {r["shortname"] for r in call(market, "fund_company")}
    assert {r["management"] for r in call(market, "fund_basic")} <= companies
    assert all(r["level"] == "L1" for r in call(market, "index_classify"))
    with pytest.raises(ToolInputError, match="market must be"):
        call(market, "fund_basic", market="X")


# ------------------------------------------------------------------ through the service call path


@pytest.fixture(scope="module")
def service(market):
    from livesearch_pipeline.dataservice.catalog import ServiceConfig
    from livesearch_pipeline.dataservice.server import DataService

    return DataService(specs=ALL_TOOLS, config=ServiceConfig(seed=market.seed, clock=CLOCK), market=market)


def test_service_parses_periods_months_and_quarters(service, market):
    code = market.universe.of_class("cn_equity")[0].code
    annual = service.call("income", {"ts_code": code, "period": "20251231"})
    assert [r["end_date"] for r in annual["items"]] == ["20251231"]
    # A period after the clock gets no rows from the server: nothing is reported yet.
    assert service.call("income", {"ts_code": code, "period": "20261231"})["items"] == []
    assert service.call("top10_holders", {"ts_code": code, "period": "20270331"})["items"] == []
    cpi = service.call("cn_cpi", {"start_m": "202601", "end_m": "202612"})
    assert [r["month"] for r in cpi["items"]][0] == "202610"
    gdp = service.call("cn_gdp", {"q": "2026Q3"})
    assert gdp["items"][0]["quarter"] == "2026Q3"
    shibor = service.call("shibor", {"start_date": "20261101", "end_date": "20261231", "limit": 3})
    assert shibor["items"][0]["date"] == "20261127" and len(shibor["items"]) == 3 and shibor["has_more"]


def test_service_identical_calls_identical_records(service, market):
    code = market.universe.of_class("cn_equity")[5].code
    for name, args in (("balancesheet", {"ts_code": code}), ("top10_floatholders", {"ts_code": code}), ("us_tycr", {})):
        assert service.call(name, args) == service.call(name, dict(args))


def test_index_reference_data_names_no_generator(market):
    """The global indices' publisher and weighting rule read like a real index provider's."""
    from livesearch_pipeline.dataservice.market.universe import GLOBAL_INDEX_PUBLISHER

    specs = market.universe.index_specs
    globals_ = [code for code, spec in specs.items() if spec.category == "海外指数"]
    assert globals_ and all(specs[code].publisher == GLOBAL_INDEX_PUBLISHER for code in globals_)
    rows = [r for r in call(market, "index_basic") if r["ts_code"] in globals_]
    assert rows and {r["weight_rule"] for r in rows} == {"总市值加权"}
    for row in rows:
        assert not re.search(r"synthetic|fictional|模拟|合成|虚构", f"{row['publisher']} {row['weight_rule']}",
                             re.IGNORECASE)
