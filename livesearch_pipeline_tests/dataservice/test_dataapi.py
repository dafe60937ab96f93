"""Tushare's wire format on the HTTP data service, driven by the real `tushare` SDK.

The server runs on 127.0.0.1 in a thread (http_server_thread); the SDK is pointed at it by
setting its endpoint attribute (`DataApi._DataApi__http_url`, tushare 1.4.x), exactly what a
user does to run a notebook written for Tushare Pro against the embedded market.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import anyio
import httpx
import pytest
import tushare as ts

from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.dataapi import BAD_REQUEST, MAX_BODY_BYTES, RATE_LIMITED_CODE, UNAUTHORIZED, UNKNOWN_API
from livesearch_pipeline.dataservice.quota import RateLimitedError
from livesearch_pipeline.dataservice.server import DataService, ForwardingService, http_server_thread

CLOCK = dt.date(2026, 11, 27)
CODE = "000005.SZ"
SECRET = "Zq8v-3mKp_Lr7Tn2Wx9Yb4Hc6Jd1Fg5S"


@pytest.fixture(scope="module")
def service() -> DataService:
    return DataService(config=ServiceConfig(clock=CLOCK))


@pytest.fixture(scope="module")
def server(service):
    with http_server_thread(service) as url:
        yield url.removesuffix("/mcp")


def sdk(base: str, token: str = "any-token-the-server-ignores") -> Any:
    pro = ts.pro_api(token)
    assert hasattr(pro, "_DataApi__http_url"), "the tushare SDK moved its endpoint attribute"
    pro._DataApi__http_url = f"{base}/dataapi"
    return pro


def mcp_items(url: str, name: str, arguments: dict, token: str | None = None) -> list[dict]:
    async def go():
        async with McpToolClient.url(url, token=token) as client:
            return (await client.call_tool(name, arguments))["items"]

    return anyio.run(go)


def test_the_sdk_fetches_daily_bars_identical_to_the_mcp_result(server):
    frame = sdk(server).daily(ts_code=CODE, start_date="20261101", end_date="20261231")
    items = mcp_items(f"{server}/mcp", "daily", {"ts_code": CODE, "start_date": "20261101", "end_date": "20261231"})
    assert len(frame) == len(items) == 20  # the sessions of November up to the clock (Fri 27th)
    assert frame["trade_date"].iloc[0] == "20261127"  # the window's end is cut at the clock
    assert frame.to_dict("records") == items
    assert list(frame.columns) == list(items[0])


def test_fields_paging_and_tushare_style_empty_parameters(server):
    pro = sdk(server)
    frame = pro.daily(ts_code=CODE, trade_date="", start_date="20261101", end_date="20261127",
                      limit="3", offset="1", fields="close,trade_date")
    assert list(frame.columns) == ["close", "trade_date"]
    assert frame["trade_date"].tolist() == ["20261126", "20261125", "20261124"]
    listed = pro.query("daily", fields=["trade_date"], ts_code=CODE, limit=1)
    assert listed.to_dict("records") == [{"trade_date": "20261127"}]


def test_point_in_time_a_start_after_the_clock_is_an_empty_table_with_its_columns(server):
    frame = sdk(server).daily(ts_code=CODE, start_date="20261201")
    assert frame.empty and "close" in frame.columns


def test_the_body_may_name_the_interface_instead_of_the_path(server):
    body = {"api_name": "daily", "token": "t", "params": {"ts_code": CODE, "limit": 2}, "fields": "trade_date,close"}
    reply = httpx.post(f"{server}/dataapi", json=body).json()
    assert reply["code"] == 0 and reply["msg"] == ""
    assert reply["data"]["fields"] == ["trade_date", "close"]
    assert [row[0] for row in reply["data"]["items"]] == ["20261127", "20261126"]
    assert reply["data"]["has_more"] is True


@pytest.mark.parametrize(("path", "body", "code", "message"), [
    ("/dataapi/dialy", {"api_name": "dialy", "params": {}}, UNKNOWN_API, "unknown api_name 'dialy'; this server has"),
    ("/dataapi/daily", {"api_name": "daily", "params": {"ts_code": CODE, "start_date": "2026-11-01"}}, BAD_REQUEST,
     "argument 'start_date' = '2026-11-01' is not a valid date in the format YYYYMMDD"),
    ("/dataapi/daily", {"api_name": "daily", "params": {"ts_code": CODE, "bogus": 1}}, BAD_REQUEST, "unknown argument(s) bogus"),
    ("/dataapi/daily", {"api_name": "daily", "params": ["ts_code"]}, BAD_REQUEST, "'params' must be a JSON object"),
    ("/dataapi/daily", {"api_name": "weekly", "params": {}}, BAD_REQUEST, "differs from 'daily' in the path"),
    ("/dataapi", {"params": {}}, BAD_REQUEST, "no api_name"),
])
def test_errors_are_a_non_zero_code_and_a_message(server, path, body, code, message):
    reply = httpx.post(f"{server}{path}", json=body)
    assert reply.status_code == 200  # as Tushare: the SDK raises on the code, not on the status
    assert reply.json()["code"] == code and message in reply.json()["msg"] and reply.json()["data"] is None


def test_the_sdk_raises_the_servers_message(server):
    with pytest.raises(Exception, match="unknown api_name 'dialy'"):
        sdk(server).dialy(ts_code=CODE)
    with pytest.raises(Exception, match="not a valid date"):
        sdk(server).daily(ts_code=CODE, end_date="27/11/2026")
    bad = httpx.post(f"{server}/dataapi/daily", content=b"{not json", headers={"content-type": "application/json"})
    assert bad.json()["code"] == BAD_REQUEST
    huge = httpx.post(f"{server}/dataapi/daily", content=b" " * (MAX_BODY_BYTES + 1))
    assert huge.json() == {"code": BAD_REQUEST, "msg": f"request body over {MAX_BODY_BYTES} bytes", "data": None}


def test_with_a_server_token_the_body_token_is_the_credential(service):
    with http_server_thread(service, token=SECRET) as url:
        base = url.removesuffix("/mcp")
        frame = sdk(base, SECRET).daily(ts_code=CODE, limit=1)
        assert frame["trade_date"].tolist() == ["20261127"]
        for wrong in ("wrong-token", SECRET[:-1]):
            with pytest.raises(Exception, match="unauthorized: send the server's LIVESEARCH_DATA_SERVICE_TOKEN"):
                sdk(base, wrong).daily(ts_code=CODE, limit=1)
        no_token = httpx.post(f"{base}/dataapi/daily", json={"api_name": "daily", "params": {"ts_code": CODE}}).json()
        assert no_token["code"] == UNAUTHORIZED
        header = httpx.post(f"{base}/dataapi/daily", json={"params": {"ts_code": CODE, "limit": 1}},
                            headers={"Authorization": f"Bearer {SECRET}"}).json()
        assert header["code"] == 0
        # The MCP endpoint still wants the bearer header, whatever a body says.
        assert httpx.post(url, json={"token": SECRET}).status_code == 401
        assert mcp_items(url, "daily", {"ts_code": CODE, "limit": 1}, token=SECRET)[0]["trade_date"] == "20261127"


class _Metered(ToolClient):
    """A provider client whose quota is used up (what TushareClient raises with wait_for_quota=False)."""

    identity = "metered-test-provider"

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        raise RateLimitedError(name, f"the forwarder's quota of 2 calls per minute to {name} is used up; retry in 12.0 s",
                               retry_after_s=12.0, upstream=False)


def test_a_forwarders_quota_answers_tushares_rate_limit_code(service):
    with http_server_thread(ForwardingService(_Metered(), service.specs)) as url:
        reply = httpx.post(url.removesuffix("/mcp") + "/dataapi/daily", json={"params": {"ts_code": CODE}}).json()
        assert reply["code"] == RATE_LIMITED_CODE and "retry in 12.0 s" in reply["msg"]
        helper = httpx.post(url.removesuffix("/mcp") + "/dataapi/search", json={"params": {"keyword": "x"}}).json()
        assert helper["code"] == UNKNOWN_API  # a forwarder serves the provider's interfaces only

