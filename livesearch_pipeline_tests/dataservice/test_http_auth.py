"""Bearer-token authentication of the HTTP data service (server on 127.0.0.1 in a thread)."""

from __future__ import annotations

import logging

import anyio
import httpx
import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.dataservice import server as server_module
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.client import AUTH_TOKEN_ENV, UNAUTHORIZED_RPC_CODE, McpToolClient
from livesearch_pipeline.dataservice.server import DataService, check_http_auth, http_server_thread, is_loopback_host
from livesearch_pipeline_tests.dataservice.toy_service import CLOCK, TOY_SPECS

SECRET = "Zq8v-3mKp_Lr7Tn2Wx9Yb4Hc6Jd1Fg5S"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture()
def service() -> DataService:
    return DataService(TOY_SPECS[:1], ServiceConfig(seed=7, clock=CLOCK), market=object())  # toy_daily


async def _first_close(client: McpToolClient) -> float:
    async with client:
        content = await client.call_tool("toy_daily", {"ts_code": "600001.SH", "limit": 1})
        return content["items"][0]["close"]


async def _refusal(client: McpToolClient) -> ToolCallError:
    with pytest.raises(ToolCallError) as failure:
        async with client:
            await client.call_tool("toy_daily", {"ts_code": "600001.SH", "limit": 1})
    return failure.value


def test_requests_need_the_token(service, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.delenv(AUTH_TOKEN_ENV, raising=False)
    with http_server_thread(service, token=SECRET) as url:
        with_token = anyio.run(_first_close, McpToolClient.url(url, token=SECRET))
        without = anyio.run(_refusal, McpToolClient.url(url))
        wrong = anyio.run(_refusal, McpToolClient.url(url, token=SECRET[::-1]))
        monkeypatch.setenv(AUTH_TOKEN_ENV, SECRET)
        from_env = anyio.run(_first_close, McpToolClient.url(url))
        raw = {
            "none": httpx.post(url, json=INIT, headers=HEADERS),
            "basic": httpx.post(url, json=INIT, headers={**HEADERS, "Authorization": f"Basic {SECRET}"}),
            "prefix": httpx.post(url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {SECRET[:-1]}"}),
            "good": httpx.post(url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {SECRET}"}),
        }
    assert with_token == from_env and isinstance(with_token, float)
    for refusal in (without, wrong):
        assert refusal.transient is False
        assert "HTTP 401, missing or wrong bearer token" in refusal.message and AUTH_TOKEN_ENV in refusal.message
    assert {name: r.status_code for name, r in raw.items()} == {"none": 401, "basic": 401, "prefix": 401, "good": 200}
    assert raw["none"].headers["www-authenticate"].startswith("Bearer")
    assert raw["none"].json()["error"]["code"] == UNAUTHORIZED_RPC_CODE and AUTH_TOKEN_ENV in raw["none"].json()["error"]["message"]
    assert "refused a request from 127.0.0.1" in caplog.text
    assert SECRET not in caplog.text and SECRET[::-1] not in caplog.text
    assert SECRET not in repr(McpToolClient.url("http://127.0.0.1:9/mcp", token=SECRET).__dict__)


def test_loopback_without_a_token_stays_open(service, monkeypatch):
    monkeypatch.delenv(AUTH_TOKEN_ENV, raising=False)
    with http_server_thread(service) as url:
        assert isinstance(anyio.run(_first_close, McpToolClient.url(url)), float)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.5", "2001:db8::1"])
def test_non_loopback_bind_without_a_token_is_refused(host):
    assert not is_loopback_host(host)
    with pytest.raises(ValueError, match=f"refusing to serve HTTP on '{host}' without authentication.*{AUTH_TOKEN_ENV}"):
        check_http_auth(host, None)
    with pytest.raises(ValueError, match="refusing"):
        check_http_auth(host, "")
    check_http_auth(host, SECRET)  # with a token it may serve


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_needs_no_token(host):
    assert is_loopback_host(host)
    check_http_auth(host, None)


@pytest.mark.parametrize(("token", "fragment"), [("short-token", "at least 16"), ("has a space in it 1234", "printable ASCII"), ("tökén-with-accents-123", "printable ASCII")])
def test_weak_or_unsendable_tokens_are_refused(token, fragment):
    with pytest.raises(ValueError, match=fragment):
        check_http_auth("127.0.0.1", token)


def test_serve_data_refuses_before_binding(monkeypatch, capsys):
    def no_bind(*args, **kwargs):
        raise AssertionError("serve-data bound a socket although it must refuse")

    monkeypatch.delenv(AUTH_TOKEN_ENV, raising=False)
    monkeypatch.setattr(server_module, "bind_socket", no_bind)
    assert main(["serve-data", "--transport", "http", "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "livesearch serve-data: refusing to serve HTTP on '0.0.0.0' without authentication" in err
    assert "Traceback" not in err
