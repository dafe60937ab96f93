"""The data service past a calendar's horizon: a tool error naming the horizon and the fix,
never a silently truncated market; and A-share data continues into 2027 (holiday supplement)."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.core.calendars import CALENDAR_ENDS
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import shared_market
from livesearch_pipeline.dataservice.server import DataService, call_result
from livesearch_pipeline.dataservice.spec import ToolInputError


def service_at(clock: dt.date) -> DataService:
    return DataService(config=ServiceConfig(clock=clock), market=shared_market())


def test_a_clock_beyond_the_horizon_is_a_tool_error_naming_the_fix():
    beyond = CALENDAR_ENDS["XSHG"] + dt.timedelta(days=3)
    service = service_at(beyond)
    code = service.market.universe.of_class("cn_equity")[0].code
    with pytest.raises(ToolInputError) as info:
        service.call("daily", {"ts_code": code, "start_date": "20271201", "end_date": beyond.strftime("%Y%m%d")})
    message = str(info.value)
    assert f"outside the XSHG calendar (2014-01-02..{CALENDAR_ENDS['XSHG']}" in message
    assert "holiday_supplements/XSHG.yaml" in message and "upgrade exchange-calendars" in message
    # Every market refuses, not only the A-shares (the HK/US calendars end on the same day).
    us = service.market.universe.of_class("us_equity")[0].code
    result = call_result(service, "us_daily", {"ts_code": us})
    assert result.is_error and "outside the" in result.content[0].text
    # Tools without dates too: nothing is served from a truncated market.
    assert call_result(service, "system_clock", {}).is_error


def test_a_shares_trade_into_2027_on_the_supplement_sessions():
    service = service_at(dt.date(2027, 2, 19))
    code = service.market.universe.of_class("cn_equity")[0].code
    rows = service.call("daily", {"ts_code": code, "start_date": "20261228", "end_date": "20270219"})["items"]
    dates = sorted(r["trade_date"] for r in rows)
    assert dates[:5] == ["20261228", "20261229", "20261230", "20261231", "20270104"]
    assert "20270208" not in dates and "20270215" in dates  # closed for the Spring Festival
    clock = service.call("system_clock", {})["items"][0]
    assert clock["last_session_xshg"] == "20270219"
