"""McpToolClient over in-process, streamable-HTTP and stdio transports; failure classification."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import anyio
import pytest

from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.client import BlockingToolClient, McpToolClient
from livesearch_pipeline.dataservice.server import DataService, bind_socket
from livesearch_pipeline.dataservice.server import http_server_thread as serve_http
from livesearch_pipeline_tests.dataservice.toy_service import CLOCK, TOY_SPECS

REPO_ROOT = Path(__file__).resolve().parents[2]
WINDOW = {"ts_code": "600001.SH", "start_date": "20251229", "end_date": "20260109"}


def _slow(ctx, args):
    time.sleep(0.6)
    return []


SLOW_SPEC = dataclasses.replace(TOY_SPECS[3], meta=TOY_SPECS[3].meta.model_copy(update={"name": "toy_slow"}), params=(), handler=_slow)


@pytest.fixture()
def service() -> DataService:
    return DataService([*TOY_SPECS, SLOW_SPEC], ServiceConfig(seed=7, clock=CLOCK), market=object())


async def _exercise(client: McpToolClient) -> tuple[dict, str]:
    async with client:
        catalog = await client.list_tools()
        assert [t.name for t in catalog.tools] == [*(s.name for s in TOY_SPECS), "toy_slow"]
        assert catalog.service == client.identity == "livesearch-synthetic-market/1 seed=7 clock=2026-01-09"
        content = await client.call_tool("toy_daily", dict(WINDOW))
        with pytest.raises(ToolCallError) as bad:
            await client.call_tool("toy_daily", {"ts_code": "600001.SH", "end_date": "2026-01-09"})
        assert bad.value.transient is False and "format YYYYMMDD" in bad.value.message
        return content, client.identity


def test_in_process_http_and_legacy_streams_agree(service):
    in_process, _ = anyio.run(_exercise, McpToolClient.in_process(service))
    with serve_http(service) as url:
        over_http, _ = anyio.run(_exercise, McpToolClient.url(url))
    assert in_process == over_http
    assert [r["trade_date"] for r in in_process["items"]][:2] == ["20260109", "20260108"]


@pytest.mark.slow
def test_stdio_command(service):
    code = (
        "import anyio; from livesearch_pipeline.dataservice.catalog import ServiceConfig;"
        "from livesearch_pipeline.dataservice.server import DataService, serve_stdio;"
        "from livesearch_pipeline_tests.dataservice.toy_service import TOY_SPECS, CLOCK;"
        "import livesearch_pipeline_tests.dataservice.test_client as t;"
        "anyio.run(serve_stdio, DataService([*TOY_SPECS, t.SLOW_SPEC], ServiceConfig(seed=7, clock=CLOCK), market=object()))"
    )
    client = McpToolClient.stdio(sys.executable, ["-c", code], cwd=REPO_ROOT)
    content, identity = anyio.run(_exercise, client)
    assert content["total"] == 8


def test_concurrent_calls_share_one_session(service):
    async def go():
        results = {}
        async with McpToolClient.in_process(service) as client:
            async with anyio.create_task_group() as tg:
                for n in range(1, 21):
                    async def one(n=n):
                        results[n] = await client.call_tool("toy_daily", {**WINDOW, "limit": n % 8 + 1})
                    tg.start_soon(one)
        return results

    results = anyio.run(go)
    assert all(len(r["items"]) == n % 8 + 1 for n, r in results.items())


def test_timeout_is_transient(service):
    async def go(url):
        async with McpToolClient.url(url, read_timeout_s=0.2) as client:
            with pytest.raises(ToolCallError) as timeout:
                await client.call_tool("toy_slow", {})
            return timeout.value

    with serve_http(service) as url:
        error = anyio.run(go, url)
    assert error.transient is True and "timed out" in error.message


def test_unreachable_server_is_transient():
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()  # nothing listens on this port any more

    async def go():
        async with McpToolClient.url(f"http://127.0.0.1:{port}/mcp"):
            pass

    with pytest.raises(ToolCallError) as unreachable:
        anyio.run(go)
    assert unreachable.value.transient is True and "cannot reach MCP server" in unreachable.value.message


def test_unknown_tool_and_handler_failure_are_not_transient(service):
    async def go():
        async with McpToolClient.in_process(service) as client:
            errors = []
            for name, args in (("no_such_tool", {}), ("toy_broken", {"mode": "raise"})):
                with pytest.raises(ToolCallError) as failure:
                    await client.call_tool(name, args)
                errors.append(failure.value)
            return errors

    unknown, broken = anyio.run(go)
    assert not unknown.transient and "unknown tool 'no_such_tool'" in unknown.message
    assert not broken.transient and "ZeroDivisionError" in broken.message


def test_blocking_client_outside_an_event_loop(service):
    with BlockingToolClient(McpToolClient.in_process(service)) as client:
        first = client.call_tool("toy_daily", dict(WINDOW))
        second = client.call_tool("toy_daily", dict(WINDOW))
        catalog = client.list_tools()
    assert first == second and catalog.get("toy_monthly").refresh_class == "monthly"
    with pytest.raises(RuntimeError, match="inside a `with` block"):
        client.call_tool("toy_daily", dict(WINDOW))


def test_credentials_in_url_are_refused():
    with pytest.raises(ValueError, match="credentials"):
        McpToolClient.url("http://user:secret@127.0.0.1:1/mcp")
