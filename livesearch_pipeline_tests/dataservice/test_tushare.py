"""The Tushare Pro forwarder against a fake Tushare HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest

from livesearch_pipeline.core.catalog import Catalog, FieldMeta, ToolMeta
from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.dataservice.server import ForwardingService, build_server
from livesearch_pipeline.dataservice.tushare import TushareClient
from livesearch_pipeline_tests.dataservice.toy_service import TOY_SPECS

TOKEN = "tok-5f1e9c0d4b7a2e83"
ROWS = [["600001.SH", "20260109", 10.0, 19.6], ["600001.SH", "20260108", 19.6, 19.5]]


class FakeTushare(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeTushare.requests.append(body)
        if body["api_name"] == "http_500":
            self.send_response(503)
            self.end_headers()
            return
        if body["token"] != TOKEN:
            reply = {"code": 2002, "msg": f"token {body['token']} invalid", "data": None}
        elif body["params"].get("ts_code") == "BAD":
            reply = {"code": 40001, "msg": "ts_code BAD 不存在", "data": None}
        elif body["api_name"] == "rate_limited":
            reply = {"code": 40203, "msg": "抱歉，您每分钟最多访问该接口500次", "data": None}
        elif body["api_name"] == "echo_token":
            reply = {"code": 40101, "msg": f"bad request {json.dumps(body)}", "data": None}
        else:
            fields = body["fields"].split(",") if body["fields"] else ["ts_code", "trade_date", "close", "pre_close"]
            full = ["ts_code", "trade_date", "close", "pre_close"]
            items = [[row[full.index(f)] for f in fields] for row in ROWS][: body["params"].get("limit", 99)]
            reply = {"code": 0, "msg": "", "data": {"fields": fields, "items": items, "has_more": False}}
        payload = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def fake_tushare() -> Iterator[str]:
    FakeTushare.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeTushare)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _catalog() -> Catalog:
    return Catalog(service="toy", tools=[s.meta for s in TOY_SPECS])


def _call(url: str, name: str, args: dict, token: str = TOKEN, catalog: Catalog | None = None):
    async def go():
        async with TushareClient(token, url=url, catalog=catalog) as client:
            return await client.call_tool(name, args)

    return anyio.run(go)


def test_request_shape_and_records():
    args = {"ts_code": "600001.SH", "start_date": "20260101", "limit": 5}
    with fake_tushare() as url:
        content = _call(url, "toy_daily", args, catalog=_catalog())
    assert FakeTushare.requests == [
        {"api_name": "toy_daily", "token": TOKEN, "params": args, "fields": "ts_code,trade_date,close,pre_close"}
    ]
    assert content == {
        "items": [dict(zip(["ts_code", "trade_date", "close", "pre_close"], row)) for row in ROWS],
        "total": 2,
        "has_more": False,
    }
    assert args == {"ts_code": "600001.SH", "start_date": "20260101", "limit": 5}  # the caller's dict is untouched


def test_fields_argument_is_forwarded():
    with fake_tushare() as url:
        content = _call(url, "toy_daily", {"ts_code": "600001.SH", "fields": "trade_date,close"})
    assert FakeTushare.requests[0]["fields"] == "trade_date,close"
    assert "fields" not in FakeTushare.requests[0]["params"]
    assert content["items"][0] == {"trade_date": "20260109", "close": 10.0}


@pytest.mark.parametrize(
    ("name", "token", "transient", "fragment"),
    [
        ("toy_daily", "wrong-token-0000", False, "Tushare error 2002"),
        ("rate_limited", TOKEN, True, "Tushare error 40203"),
        ("http_500", TOKEN, True, "Tushare HTTP 503"),
    ],
)
def test_errors_are_classified(name, token, transient, fragment):
    with fake_tushare() as url, pytest.raises(ToolCallError) as failure:
        _call(url, name, {}, token=token)
    assert failure.value.transient is transient and fragment in str(failure.value)


def test_token_never_leaks(caplog):
    caplog.set_level(logging.DEBUG)
    client = TushareClient(TOKEN, url="http://127.0.0.1:1")
    assert TOKEN not in repr(client) and TOKEN not in client.identity and TOKEN not in repr(vars(client))
    with fake_tushare() as url, pytest.raises(ToolCallError) as echoed:
        _call(url, "echo_token", {"ts_code": "600001.SH"})
    assert TOKEN not in str(echoed.value) and "***" in str(echoed.value)
    with fake_tushare() as url, pytest.raises(ToolCallError) as credential_arg:
        _call(url, "toy_daily", {"ts_code": "600001.SH", "token": TOKEN})
    assert FakeTushare.requests == [] and TOKEN not in str(credential_arg.value)
    with pytest.raises(ToolCallError) as unreachable:
        _call("http://127.0.0.1:1", "toy_daily", {})
    assert unreachable.value.transient and TOKEN not in str(unreachable.value)
    assert TOKEN not in caplog.text


def test_missing_token_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("TUSHARE_TOKEN", raising=False)
    with pytest.raises(ValueError, match="TUSHARE_TOKEN"):
        TushareClient()
    monkeypatch.setenv("TUSHARE_TOKEN", TOKEN)
    assert TOKEN not in repr(TushareClient())


def test_unknown_tool_of_the_surface_is_refused():
    with fake_tushare() as url, pytest.raises(ToolCallError, match="not a data tool"):
        _call(url, "no_such_api", {}, catalog=_catalog())
    assert FakeTushare.requests == []


def test_forwarder_backs_the_mcp_server():
    from mcp import Client

    async def go(url):
        async with TushareClient(TOKEN, url=url, catalog=_catalog()) as tushare:
            service = ForwardingService(tushare, TOY_SPECS)
            async with Client(build_server(service)) as client:
                listed = [t.name for t in (await client.list_tools()).tools]
                ok = await client.call_tool("toy_daily", {"ts_code": "600001.SH", "limit": 1})
                failed = await client.call_tool("toy_daily", {"ts_code": "BAD"})
                return listed, ok, failed

    with fake_tushare() as url:
        listed, ok, failed = anyio.run(go, url)
    assert listed == [s.name for s in TOY_SPECS]
    assert ok.structured_content["items"] == [dict(zip(["ts_code", "trade_date", "close", "pre_close"], ROWS[0]))]
    assert failed.is_error and "toy_daily: Tushare error 40001: ts_code BAD 不存在" in failed.content[0].text
    assert all(TOKEN not in json.dumps(r["params"]) for r in FakeTushare.requests)
