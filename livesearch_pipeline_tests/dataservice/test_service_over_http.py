"""Done-when test of issue 3: the real catalog over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

import anyio
import pytest
from mcp import Client

from livesearch_pipeline.core.calendars import is_session, sessions_back
from livesearch_pipeline.core.catalog import ToolMeta
from livesearch_pipeline.dataservice.catalog import DATA_SERVICES, ServiceConfig
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.server import DataService, time_key_last_day
from livesearch_pipeline.dataservice.server import http_server_thread as serve_http

CLOCK = dt.date(2026, 1, 9)
INSTRUMENT_CLASSES = ("cn_equity", "hk_equity", "us_equity", "index", "fund")


def _sample_date(fmt: str, role: str) -> str:
    if fmt == "YYYYMM":
        return "202511" if role != "end" else "202512"
    if fmt == "YYYYQn":
        return "2025Q2" if role != "end" else "2025Q3"
    day = {"start": CLOCK - dt.timedelta(days=400), "end": CLOCK, "point": sessions_back("XSHG", CLOCK, 1)}.get(role, dt.date(2025, 9, 30))
    return day.strftime(fmt)


def sample_arguments(meta: ToolMeta, service: DataService) -> dict[str, Any] | None:
    """Arguments a careful caller would send, or None when the tool needs more than we know."""
    spec = service.spec(meta.name)
    args: dict[str, Any] = {"limit": 50}
    classes = [c for c in meta.asset_classes if c in INSTRUMENT_CLASSES]
    if meta.entity_param and classes:
        entities = [e for e in service.market.universe.of_class(classes[0]) if e.list_date < dt.date(2015, 1, 1)]
        args[meta.entity_param] = max(entities, key=lambda e: (e.visibility, e.code)).code
    date_params = {d.name: d for d in meta.date_params}
    uses_window = any(d.role in ("start", "end") for d in meta.date_params)
    for param in spec.params:
        if param.name in args:
            continue
        if param.name in date_params and (param.required or uses_window and date_params[param.name].role != "point"):
            date_param = date_params[param.name]
            args[param.name] = _sample_date(date_param.fmt, date_param.role)
            if "%H" in (meta.time_key_fmt or "") and date_param.role == "start":  # minute bars: a few sessions
                args[param.name] = sessions_back(meta.calendar or "XSHG", CLOCK, 3).strftime(date_param.fmt)
        elif param.required and param.enum:
            args[param.name] = param.enum[0]
        elif param.required:
            return None
    return args


@pytest.mark.slow
def test_real_catalog_over_streamable_http():
    service = DataService(config=ServiceConfig(clock=CLOCK))

    async def exercise(url: str) -> dict[str, Any]:
        out: dict[str, Any] = {"errors": {}, "nonempty": defaultdict(list), "skipped": [], "responses": {}}
        async with McpToolClient.url(url) as client:
            catalog = await client.list_tools()
            out["catalog"] = catalog
            for meta in catalog.data_tools():
                args = sample_arguments(meta, service)
                if args is None:
                    out["skipped"].append(meta.name)
                    continue
                try:
                    content = await client.call_tool(meta.name, args)
                except Exception as exc:  # collected and reported all at once below
                    out["errors"][meta.name] = f"{args}: {exc}"
                    continue
                out["responses"][meta.name] = (args, content)
                if content["items"]:
                    out["nonempty"][meta.service].append(meta.name)
        async with Client(url) as raw:
            code = out["responses"]["daily"][0]["ts_code"]
            window = {"ts_code": code, "start_date": "20250101", "end_date": "20260109"}
            first = await raw.call_tool("daily", window)
            second = await raw.call_tool("daily", window)
            out["bytes"] = (first.content[0].text.encode(), second.content[0].text.encode())
            out["adj"] = (await raw.call_tool("adj_factor", window)).structured_content
            out["daily"] = first.structured_content
        return out

    with serve_http(service) as url:
        out = anyio.run(exercise, url)

    catalog = out["catalog"]
    assert len(catalog.data_tools()) >= 96
    assert {t.service for t in catalog.data_tools()} == set(DATA_SERVICES)
    assert {t.role for t in catalog.tools} >= {"search", "intraday", "utility"}
    assert out["errors"] == {}
    assert set(out["nonempty"]) == set(DATA_SERVICES), f"services without data: {set(DATA_SERVICES) - set(out['nonempty'])}"
    assert len(out["skipped"]) <= 10, out["skipped"]

    for name, (_, content) in out["responses"].items():  # nothing after the clock, anywhere
        meta = catalog.get(name)
        if meta.time_key:
            assert all(time_key_last_day(r[meta.time_key], meta.time_key_fmt) <= CLOCK for r in content["items"]), name

    bars = out["daily"]["items"]
    assert len(bars) > 200 and bars[0]["trade_date"] == "20260109"
    days = [dt.datetime.strptime(b["trade_date"], "%Y%m%d").date() for b in bars]
    assert all(is_session("XSHG", d) for d in days) and days == sorted(days, reverse=True)
    factors = {r["trade_date"]: r["adj_factor"] for r in out["adj"]["items"]}
    chained = [
        (newer, older)
        for newer, older in zip(bars, bars[1:])
        if factors.get(newer["trade_date"]) == factors.get(older["trade_date"])
    ]
    assert len(chained) >= len(bars) - 5
    assert all(abs(newer["pre_close"] - older["close"]) < 1e-9 for newer, older in chained)
    assert all(b["high"] >= max(b["open"], b["close"]) and b["low"] <= min(b["open"], b["close"]) for b in bars)
    assert out["bytes"][0] == out["bytes"][1]
