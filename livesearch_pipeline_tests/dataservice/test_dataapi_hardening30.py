"""Issue 30, findings 6, 11, 12 and 13: the Tushare-format endpoint `/dataapi` under hostile input.

6: a foreign Host or Origin (DNS rebinding, a cross-site page) and a non-JSON body get nothing,
   as on `/mcp`, for the embedded service and the Tushare forwarder alike.
11: a malformed body (200 KB of `[`) is code 40001 in one line, no HTTP 500, no traceback.
12: a provider echoing the token inside a row: the relay redacts it over `/dataapi` and `/mcp`.
13: `fields` naming something that is not a field name is code 40001, never a column of nulls.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import httpx
import pytest

from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.dataapi import BAD_REQUEST
from livesearch_pipeline.dataservice.server import DataService, ForwardingService, http_server_thread
from livesearch_pipeline.dataservice.tushare import TushareClient

CLOCK = dt.date(2026, 11, 27)
CODE = "000005.SZ"
UPSTREAM_TOKEN = "ts-9f8e7d6c5b4a3921-upstream"
FOREIGN = {"Host": "a.example", "Origin": "http://a.example"}
QUERY = {"api_name": "daily", "token": "t", "params": {"ts_code": CODE, "limit": 1}}


class EchoingTushare(BaseHTTPRequestHandler):
    """A Tushare upstream that answers every interface with one row quoting the request's token."""

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        token = body["token"]
        reply = {"code": 0, "msg": "", "data": {
            "fields": ["ts_code", "trade_date", "close", "note", "request"],
            "items": [[CODE, "20261127", 12.5, f"served for token={token} ok", {"echo": [token]}]],
            "has_more": False}}
        payload = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def echoing_upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoingTushare)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def service() -> DataService:
    return DataService(config=ServiceConfig(clock=CLOCK))


@pytest.fixture(scope="module")
def base(service) -> Iterator[str]:
    with http_server_thread(service) as url:
        yield url.removesuffix("/mcp")


@pytest.fixture(scope="module")
def tushare_relay(service) -> Iterator[str]:
    """`serve-data --provider tushare` on loopback, its upstream echoing the token into rows."""
    with echoing_upstream() as upstream:
        client = TushareClient(UPSTREAM_TOKEN, url=upstream, calls_per_minute=10_000, wait_for_quota=False)
        with http_server_thread(ForwardingService(client, service.specs)) as url:
            yield url.removesuffix("/mcp")


# --------------------------------------------------------------------------- 6: Host, Origin, content type


@pytest.mark.parametrize("relay", ["embedded", "tushare"])
def test_a_foreign_host_or_origin_gets_what_mcp_gives_it(base, tushare_relay, relay):
    root = base if relay == "embedded" else tushare_relay
    assert httpx.post(f"{root}/dataapi/daily", json=QUERY).json()["code"] == 0  # the same request, at home
    rebinding = httpx.post(f"{root}/dataapi/daily", json=QUERY, headers=FOREIGN)
    mcp = httpx.post(f"{root}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=FOREIGN)
    assert rebinding.status_code == mcp.status_code == 421
    assert "code" not in rebinding.text and CODE not in rebinding.text
    cross_site = httpx.post(f"{root}/dataapi/daily", json=QUERY, headers={"Origin": "http://a.example"})
    assert cross_site.status_code == 403 and CODE not in cross_site.text
    own_origin = httpx.post(f"{root}/dataapi/daily", json=QUERY, headers={"Origin": root})
    assert own_origin.json()["code"] == 0


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None])
def test_only_a_json_body_is_read(base, tushare_relay, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    for root in (base, tushare_relay):
        reply = httpx.post(f"{root}/dataapi/daily", content=json.dumps(QUERY).encode(), headers=headers)
        assert reply.status_code == 200
        body = reply.json()
        assert body["code"] == BAD_REQUEST and body["data"] is None
        assert "send the body as application/json" in body["msg"] and "\n" not in body["msg"]
    charset = httpx.post(f"{base}/dataapi/daily", content=json.dumps(QUERY).encode(),
                         headers={"Content-Type": "application/json; charset=utf-8"})
    assert charset.json()["code"] == 0


# --------------------------------------------------------------------------- 11: malformed bodies


@pytest.mark.parametrize("raw", [b"[" * 200_000, b"{\"a\":" * 50_000, b"\xff\xfe", b"[1, 2", b"\"daily\""])
def test_a_malformed_body_is_40001_in_one_line(base, caplog, raw):
    caplog.set_level(logging.DEBUG)
    reply = httpx.post(f"{base}/dataapi/daily", content=raw, headers={"Content-Type": "application/json"})
    assert reply.status_code == 200
    body = reply.json()
    assert body["code"] == BAD_REQUEST and "\n" not in body["msg"] and body["data"] is None
    assert "Traceback" not in caplog.text


# --------------------------------------------------------------------------- 12: the token inside relayed rows


def test_the_relay_redacts_the_upstream_token_inside_rows(tushare_relay):
    reply = httpx.post(f"{tushare_relay}/dataapi/daily", json={**QUERY, "fields": None})
    assert reply.json()["code"] == 0
    row = reply.json()["data"]["items"][0]
    assert row[:3] == [CODE, "20261127", 12.5] and row[3] == "served for token=*** ok"

    async def through_mcp():
        async with McpToolClient.url(f"{tushare_relay}/mcp") as client:
            return await client.call_tool("daily", {"ts_code": CODE})

    items = anyio.run(through_mcp)["items"]
    assert items[0]["note"] == "served for token=*** ok" and items[0]["request"] == {"echo": ["***"]}
    for text in (reply.text, json.dumps(items)):
        assert UPSTREAM_TOKEN not in text


# --------------------------------------------------------------------------- 13: fields


@pytest.mark.parametrize("fields", [["close, open"], ["close;open"], ["1close"], ["close", "trade date"]])
def test_fields_that_are_not_field_names_are_40001(base, fields):
    reply = httpx.post(f"{base}/dataapi/daily", json={**QUERY, "fields": fields}).json()
    assert reply["code"] == BAD_REQUEST and "not a field name" in reply["msg"] and reply["data"] is None


def test_a_list_and_a_string_of_fields_answer_the_same_columns(base):
    as_list = httpx.post(f"{base}/dataapi/daily", json={**QUERY, "fields": ["close", "open"]}).json()
    as_text = httpx.post(f"{base}/dataapi/daily", json={**QUERY, "fields": "close, open"}).json()
    assert as_list == as_text and as_list["data"]["fields"] == ["close", "open"]
    assert all(value is not None for value in as_list["data"]["items"][0])


def test_a_field_the_records_lack_is_40001_not_a_column_of_nulls(tushare_relay):
    reply = httpx.post(f"{tushare_relay}/dataapi/daily", json={**QUERY, "fields": ["close", "bogus"]}).json()
    assert reply["code"] == BAD_REQUEST and "no field(s) bogus" in reply["msg"]
