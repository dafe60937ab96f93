"""The catalog table: consistency checks, the real catalog's size, the utility tools."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from livesearch_pipeline.core.calendars import is_session
from livesearch_pipeline.dataservice.catalog import (
    DATA_SERVICES,
    CatalogError,
    ServiceConfig,
    build_catalog,
    check_tool_specs,
    collect_tool_specs,
    data_tool_services,
)
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline.dataservice.spec import ParamSpec
from livesearch_pipeline.dataservice.tools import utility
from livesearch_pipeline_tests.dataservice.toy_service import TOY_SPECS

CLOCK = dt.date(2026, 1, 9)


def _with_meta(spec, **update):
    return dataclasses.replace(spec, meta=spec.meta.model_copy(update=update))


@pytest.mark.parametrize(
    ("broken", "fragment"),
    [
        ([TOY_SPECS[0], TOY_SPECS[0]], "'toy_daily' is defined more than once"),
        ([_with_meta(TOY_SPECS[0], entity_param="code")], "entity_param 'code' is not a parameter"),
        ([_with_meta(TOY_SPECS[0], time_key="date")], "time_key 'date' is not a record field"),
        ([_with_meta(TOY_SPECS[0], service="quotes")], "data service 'quotes' is not one of"),
        ([_with_meta(TOY_SPECS[0], role="search")], "role 'search' tools belong to service 'utility'"),
        ([dataclasses.replace(TOY_SPECS[0], params=(*TOY_SPECS[0].params, ParamSpec("limit", "int", "x")))], "'limit' is reserved"),
        ([dataclasses.replace(TOY_SPECS[0], params=TOY_SPECS[0].params[:1])], "date parameter 'start_date' is not a parameter"),
        # Field roles and series keys (issue 12): a series is named by a code, identifier or label.
        ([_with_meta(TOY_SPECS[0], series_keys=["close"])], "series key 'close' has role 'measure'"),
        ([_with_meta(TOY_SPECS[0], series_keys=["ts_code"])], "series key 'ts_code' is the entity parameter"),
        ([_with_meta(TOY_SPECS[0], fields=[f.model_copy(update={"role": "label"}) if f.name == "trade_date" else f
                                           for f in TOY_SPECS[0].meta.fields])],
         "time_key 'trade_date' has role 'label'"),
        ([_with_meta(TOY_SPECS[0], role="utility", service="nowhere")], "utility service 'nowhere'"),
    ],
)
def test_inconsistent_tables_are_rejected(broken, fragment):
    with pytest.raises(CatalogError) as failure:
        check_tool_specs(broken)
    assert fragment in str(failure.value)


def test_build_catalog_carries_identity():
    catalog = build_catalog(TOY_SPECS, ServiceConfig(seed=3, clock=CLOCK))
    assert catalog.service == "livesearch-synthetic-market/1 seed=3 clock=2026-01-09"
    assert data_tool_services(catalog) == {"cn_quotes": 3, "macro": 1}


def test_real_catalog_reaches_the_scale_of_the_paper():
    catalog = build_catalog(collect_tool_specs(), ServiceConfig(clock=CLOCK))
    per_service = data_tool_services(catalog)
    assert sorted(per_service) == sorted(DATA_SERVICES)
    assert sum(per_service.values()) >= 96
    roles = {t.role for t in catalog.tools}
    assert roles == {"data", "search", "intraday", "utility"}
    # Trading calendars are utilities of the reference service: they never define gold.
    calendars = {t.name: (t.role, t.service) for t in catalog.tools if t.name in ("trade_cal", "hk_tradecal", "us_tradecal")}
    assert calendars == {name: ("utility", "reference") for name in ("trade_cal", "hk_tradecal", "us_tradecal")}


# --------------------------------------------------------------------------- utility tools


@pytest.fixture(scope="module")
def utility_service() -> DataService:
    return DataService(utility.TOOLS, ServiceConfig(clock=CLOCK), market=Market())


def test_search_finds_codes_by_name(utility_service):
    market = utility_service.market
    entity = market.universe.of_class("hk_equity")[3]
    found = utility_service.call("search", {"keyword": entity.name_en})["items"]
    assert entity.code in [r["ts_code"] for r in found]
    only_funds = utility_service.call("search", {"keyword": entity.name_en, "asset_class": "fund"})["items"]
    assert all(r["asset_class"] == "fund" for r in only_funds)


def test_system_clock_reports_the_service_date(utility_service):
    [record] = utility_service.call("system_clock", {})["items"]
    assert record["today"] == "20260109" and record["weekday"] == "Friday"
    assert record["last_session_xshg"] == "20260109"
    saturday = DataService(utility.TOOLS, ServiceConfig(clock=dt.date(2026, 1, 10)), market=utility_service.market)
    assert saturday.call("system_clock", {})["items"][0]["last_session_xnys"] == "20260109"


def test_visibility_scorer_spans_all_levels(utility_service):
    all_cn = utility_service.call("entity_visibility", {"asset_class": "cn_equity"})
    assert all_cn["total"] >= 300 and {r["visibility"] for r in all_cn["items"]} == set(range(11))
    code = all_cn["items"][0]["ts_code"]
    [one] = utility_service.call("entity_visibility", {"ts_code": code})["items"]
    assert one == all_cn["items"][0]
    with pytest.raises(Exception, match="search tool"):
        utility_service.call("entity_visibility", {"ts_code": "NOPE.XX"})


def test_realtime_quote_is_the_clock_session_bar():
    service = DataService(collect_tool_specs(), ServiceConfig(clock=CLOCK))
    code = service.market.universe.of_class("cn_equity")[0].code
    [quote] = service.call("realtime_quote", {"ts_code": code})["items"]
    [bar] = service.call("daily", {"ts_code": code, "end_date": "20260109", "limit": 1})["items"]
    assert is_session("XSHG", dt.datetime.strptime(quote["date"], "%Y%m%d").date())
    assert (quote["date"], quote["price"], quote["pre_close"]) == (bar["trade_date"], bar["close"], bar["pre_close"])
    assert quote["bid"] < quote["price"] < quote["ask"]
