"""The generated MCP server: schemas, argument validation, clock, paging, errors."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import anyio
import jsonschema
import pytest
from mcp import Client

from livesearch_pipeline.core.catalog import META_KEY, ToolMeta
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.server import DataService, build_server, input_schema, output_schema, time_key_last_day
from livesearch_pipeline_tests.dataservice.toy_service import CLOCK, TOY_SPECS


@pytest.fixture()
def service() -> DataService:
    return DataService(TOY_SPECS, ServiceConfig(seed=7, clock=CLOCK), market=object())


def call(service: DataService, name: str, **args):
    async def go():
        async with Client(build_server(service)) as client:
            return await client.call_tool(name, args)

    return anyio.run(go)


def test_tools_carry_schemas_and_meta(service):
    async def go():
        async with Client(build_server(service)) as client:
            return (await client.list_tools()).tools, client.server_info

    tools, info = anyio.run(go)
    assert [t.name for t in tools] == [s.name for s in TOY_SPECS]
    daily = tools[0]
    assert ToolMeta.model_validate(daily.meta[META_KEY]) == TOY_SPECS[0].meta
    assert set(daily.input_schema["properties"]) == {"ts_code", "start_date", "end_date", "adj", "limit", "offset", "fields"}
    assert daily.input_schema["required"] == ["ts_code"]
    # optional arguments also accept null (strict function calling sends them all)
    assert daily.input_schema["properties"]["adj"]["anyOf"] == [{"type": "string", "enum": ["qfq", "hfq"]}, {"type": "null"}]
    assert "anyOf" not in daily.input_schema["properties"]["ts_code"]
    record = daily.output_schema["properties"]["items"]["items"]
    assert record["properties"]["close"]["type"] == ["number", "null"]
    assert info.description == "livesearch-synthetic-market/1 seed=7 clock=2026-01-09"


def test_window_is_served_newest_first_with_paging(service):
    result = call(service, "toy_daily", ts_code="600001.SH", start_date="20251229", end_date="20260109")
    content = result.structured_content
    dates = [r["trade_date"] for r in content["items"]]
    # 2026-01-01 and 01-02 are XSHG holidays
    assert dates == ["20260109", "20260108", "20260107", "20260106", "20260105", "20251231", "20251230", "20251229"]
    assert content["total"] == 8 and content["has_more"] is False
    assert json.loads(result.content[0].text) == content
    jsonschema.validate(content, output_schema(TOY_SPECS[0].meta))

    page = call(service, "toy_daily", ts_code="600001.SH", start_date="20251229", end_date="20260109", limit=3, offset=2, fields="trade_date,close")
    assert page.structured_content["items"] == [{k: r[k] for k in ("trade_date", "close")} for r in content["items"][2:5]]
    assert page.structured_content["has_more"] is True and page.structured_content["total"] == 8


def test_a_window_straddling_the_clock_ends_at_it_and_records_after_it_are_dropped(service):
    straddling = call(service, "toy_daily", ts_code="600001.SH", start_date="20260105", end_date="20261231")
    assert [r["trade_date"] for r in straddling.structured_content["items"]] == ["20260109", "20260108", "20260107", "20260106", "20260105"]
    leaky = call(service, "toy_leaky").structured_content
    assert [r["day"] for r in leaky["items"]] == ["20260109", "20260108", "20260107", "20260106"]
    monthly = call(service, "toy_monthly", start_m="202511", end_m="202604").structured_content
    # January 2026 is not over on the clock's date, so no value for it exists yet
    assert [r["month"] for r in monthly["items"]] == ["202512", "202511"]


NOV27 = dt.date(2026, 11, 27)  # a Friday session


def test_a_window_after_the_clock_has_no_rows_as_on_tushare():
    """Issue 11 item 9: at clock 2026-11-27, `daily start_date=20261201 end_date=20261231` used to
    be clamped to the clock and return the 20261127 row; Tushare returns nothing."""
    service = DataService(TOY_SPECS[:1], ServiceConfig(seed=7, clock=NOV27), market=object())
    future = call(service, "toy_daily", ts_code="600001.SH", start_date="20261201", end_date="20261231")
    assert not future.is_error and future.structured_content == {"items": [], "total": 0, "has_more": False}
    assert json.loads(future.content[0].text) == future.structured_content
    straddling = call(service, "toy_daily", ts_code="600001.SH", start_date="20261123", end_date="20261231")
    assert [r["trade_date"] for r in straddling.structured_content["items"]] == ["20261127", "20261126", "20261125", "20261124", "20261123"]
    starts_after = call(service, "toy_daily", ts_code="600001.SH", start_date="20261128")  # no end: still nothing
    assert starts_after.structured_content["total"] == 0
    on_the_clock = call(service, "toy_daily", ts_code="600001.SH", start_date="20261127", end_date="20261231")
    assert [r["trade_date"] for r in on_the_clock.structured_content["items"]] == ["20261127"]
    # The window is checked as asked, before any cut at the clock.
    reversed_window = call(service, "toy_daily", ts_code="600001.SH", start_date="20261231", end_date="20261201")
    assert reversed_window.is_error and "end_date (2026-12-01) is before start_date (2026-12-31)" in reversed_window.content[0].text


def test_the_measured_case_on_the_synthetic_market():
    from livesearch_pipeline.dataservice.market import shared_market

    service = DataService(config=ServiceConfig(clock=NOV27), market=shared_market())
    code = service.market.universe.of_class("cn_equity")[0].code
    assert service.call("daily", {"ts_code": code, "start_date": "20261201", "end_date": "20261231"})["total"] == 0
    straddling = service.call("daily", {"ts_code": code, "start_date": "20261123", "end_date": "20261231"})
    assert [r["trade_date"] for r in straddling["items"]] == ["20261127", "20261126", "20261125", "20261124", "20261123"]
    assert service.call("income", {"ts_code": code, "period": "20261231"})["total"] == 0


def test_periods_after_the_clock_have_no_rows(service):
    # January 2026 has begun on the clock's date (2026-01-09), February has not.
    assert call(service, "toy_monthly", start_m="202602").structured_content["total"] == 0
    assert call(service, "toy_monthly", start_m="202601", end_m="202612").structured_content["total"] == 0  # Jan not over
    assert [r["month"] for r in call(service, "toy_monthly", start_m="202511", end_m="202612").structured_content["items"]] == ["202512", "202511"]


def test_the_handler_never_sees_a_date_after_the_clock():
    seen: list[dict] = []

    def recording(ctx, args):
        seen.append(dict(args))
        return []

    spec = dataclasses.replace(TOY_SPECS[0], handler=recording)
    service = DataService([spec], ServiceConfig(seed=7, clock=NOV27), market=object())
    call(service, "toy_daily", ts_code="600001.SH", start_date="20261201", end_date="20261231")
    call(service, "toy_daily", ts_code="600001.SH", start_date="20261101", end_date="20261231")
    assert seen == [{"ts_code": "600001.SH", "start_date": dt.date(2026, 11, 1), "end_date": NOV27}]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({}, "missing required argument(s) ts_code"),
        ({"ts_code": "600001.SH", "start": "20260101"}, "unknown argument(s) start; toy_daily accepts: ts_code, start_date"),
        ({"ts_code": "600001.SH", "end_date": "2026-01-05"}, "format YYYYMMDD (e.g. 20260331)"),
        ({"ts_code": "600001.SH", "start_date": "20260108", "end_date": "20260105"}, "end_date (2026-01-05) is before start_date"),
        ({"ts_code": "600001.SH", "adj": "none"}, "must be one of qfq, hfq"),
        ({"ts_code": "600001.SH", "limit": 0}, "'limit' must be an integer from 1 to 10000"),
        ({"ts_code": "600001.SH", "limit": "5"}, "'limit' must be an integer"),
        ({"ts_code": "600001.SH", "fields": "close,volume"}, "unknown field(s) volume; toy_daily records have: ts_code"),
        ({"ts_code": "999999.SH"}, "unknown ts_code '999999.SH'; try the search tool"),
        ({"ts_code": 600001}, "'ts_code' must be a string"),
    ],
)
def test_bad_arguments_are_actionable_tool_errors(service, args, fragment):
    result = call(service, "toy_daily", **args)
    assert result.is_error
    assert fragment in result.content[0].text


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        ("raise", "internal error in toy_broken: ZeroDivisionError: division by zero in the toy model"),
        ("nan", "non-finite number in field 'x'"),
        ("undeclared", "undeclared field(s) ['surprise']"),
    ],
)
def test_handler_failures_never_crash_the_server(service, mode, fragment):
    async def go():
        async with Client(build_server(service)) as client:
            failed = await client.call_tool("toy_broken", {"mode": mode})
            after = await client.call_tool("toy_daily", {"ts_code": "000002.SZ", "limit": 1})
            return failed, after

    failed, after = anyio.run(go)
    assert failed.is_error and fragment in failed.content[0].text
    assert not after.is_error and after.structured_content["items"][0]["trade_date"] == "20260109"


def test_unknown_tool_suggests_close_names(service):
    result = call(service, "toy_dayly")
    assert result.is_error and "did you mean toy_daily" in result.content[0].text


def test_identical_calls_return_identical_bytes(service):
    first = call(service, "toy_daily", ts_code="000002.SZ", start_date="20251201", end_date="20260109")
    second = call(service, "toy_daily", ts_code="000002.SZ", start_date="20251201", end_date="20260109")
    assert first.content[0].text.encode() == second.content[0].text.encode()


def test_real_clock_is_read_on_every_call(monkeypatch):
    service = DataService(TOY_SPECS, ServiceConfig(seed=7, clock=None), market=object())

    class FakeDate(dt.date):
        today_value = dt.date(2026, 1, 6)

        @classmethod
        def today(cls):
            return cls.today_value

    monkeypatch.setattr("livesearch_pipeline.dataservice.catalog.dt.date", FakeDate)
    first = service.call("toy_daily", {"ts_code": "600001.SH", "limit": 1})
    FakeDate.today_value = dt.date(2026, 1, 8)
    second = service.call("toy_daily", {"ts_code": "600001.SH", "limit": 1})
    assert (first["items"][0]["trade_date"], second["items"][0]["trade_date"]) == ("20260106", "20260108")
    assert service.identity.endswith("clock=today")


def test_time_key_last_day_of_periods():
    assert time_key_last_day("202602", "YYYYMM") == dt.date(2026, 2, 28)
    assert time_key_last_day("2025Q4", "YYYYQn") == dt.date(2025, 12, 31)
    assert time_key_last_day("2026-01-05 09:31:00", "%Y-%m-%d %H:%M:%S") == dt.date(2026, 1, 5)


def test_input_schema_validates_what_the_server_accepts():
    schema = input_schema(TOY_SPECS[0])
    jsonschema.validate({"ts_code": "600001.SH", "start_date": "20260105", "limit": 5}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"ts_code": "600001.SH", "bogus": 1}, schema)
