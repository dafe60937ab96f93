"""Issue 23, finding 5: bounded work per request on the data service.

`fields` names distinct declared fields, at most MAX_FIELDS; string arguments are capped; an
error quotes an argument truncated; and handlers run off the event loop, so one heavy call over
HTTP does not stall another client's one-row call (a real server on 127.0.0.1)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from livesearch_pipeline.core.catalog import FieldMeta, ToolMeta
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.server import (
    MAX_ARGUMENT_CHARS,
    MAX_FIELDS,
    MAX_QUOTED_CHARS,
    DataService,
    call_result,
    http_server_thread,
)
from livesearch_pipeline.dataservice.spec import ToolContext, ToolInputError, ToolSpec
from livesearch_pipeline_tests.dataservice.toy_service import CLOCK, TOY_SPECS

SLOW_S = 2.0


def _slow(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    time.sleep(SLOW_S)  # a handler that holds its thread, as a heavy call does
    return [{"x": 1.0}]


SLOW = ToolSpec(meta=ToolMeta(name="toy_slow", service="cn_quotes", description="toy slow", asset_classes=["cn_equity"],
                              role="data", fields=[FieldMeta(name="x", type="number", description="x")]),
                params=(), handler=_slow)


def _service() -> DataService:
    return DataService([*TOY_SPECS, SLOW], ServiceConfig(seed=7, clock=CLOCK), market=object())


def _error(service: DataService, arguments: dict[str, Any]) -> str:
    result = call_result(service, "toy_daily", arguments)
    assert result.is_error
    return result.content[0].text


def test_repeated_fields_are_refused_at_once_instead_of_multiplying_the_work() -> None:
    service = _service()
    service.call("toy_daily", {"ts_code": "600001.SH", "limit": 1})  # calendars loaded: time the call only
    started = time.monotonic()
    message = _error(service, {"ts_code": "600001.SH", "fields": ",".join(["close"] * 20_000)})
    assert time.monotonic() - started < 0.5
    assert "argument 'fields' has 119,999 characters; at most 2,048" in message
    message = _error(service, {"ts_code": "600001.SH", "fields": "close,trade_date,close"})
    assert "argument 'fields' repeats close: name each field once" in message
    many = ",".join(f"f{i}" for i in range(MAX_FIELDS + 1))
    assert f"names {MAX_FIELDS + 1} fields; at most {MAX_FIELDS}" in _error(service, {"ts_code": "600001.SH",
                                                                                       "fields": many})
    ok = service.call("toy_daily", {"ts_code": "600001.SH", "fields": "close,trade_date", "limit": 1})
    assert list(ok["items"][0]) == ["close", "trade_date"]


def test_a_huge_argument_is_refused_and_quoted_truncated() -> None:
    service = _service()
    huge = "6" * 1_000_000
    message = _error(service, {"ts_code": huge})
    assert f"has 1,000,000 characters; at most {MAX_ARGUMENT_CHARS:,}" in message
    assert len(message) < 400 and "(1,000,000 characters)" in message
    message = _error(service, {"ts_code": "600001.SH", "end_date": "9" * 5000})
    assert len(message) < 400 and "…" in message
    message = _error(service, {"ts_code": "600001.SH", "x" * 10_000: 1})
    assert len(message) < 600 and "unknown argument(s)" in message
    with pytest.raises(ToolInputError) as raised:
        service.call("toy_daily", {"ts_code": "600001.SH", "limit": "1" * 10_000})
    assert len(str(raised.value)) < MAX_QUOTED_CHARS + 120


def test_a_slow_call_over_http_does_not_stall_another_clients_call() -> None:
    service = _service()

    async def scenario(url: str) -> tuple[float, float]:
        timings: dict[str, float] = {}

        async def call(name: str, arguments: dict[str, Any]) -> None:
            async with McpToolClient.url(url) as client:
                started = time.monotonic()
                await client.call_tool(name, arguments)
                timings[name] = time.monotonic() - started

        async with anyio.create_task_group() as group:
            group.start_soon(call, "toy_slow", {})
            await anyio.sleep(0.3)  # the slow call holds its handler thread now
            group.start_soon(call, "toy_daily", {"ts_code": "600001.SH", "limit": 1,
                                                 "end_date": CLOCK.strftime("%Y%m%d")})
        return timings["toy_slow"], timings["toy_daily"]

    with http_server_thread(service) as url:
        slow, quick = anyio.run(scenario, url)
    assert slow >= SLOW_S
    assert quick < SLOW_S / 2, f"a one-row call took {quick:.2f} s while a slow call ran"
