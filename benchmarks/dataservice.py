"""Data service benchmark: calls/s and p50/p99 latency over the in-process and HTTP transports,
and the cost of a 250-session `daily` window against a 1-session one.

    python benchmarks/dataservice.py [--calls N] [--clock YYYY-MM-DD]

Latency is wall time of one `McpToolClient.call_tool` (argument parsing, handler, paging, JSON,
transport, client-side output-schema validation), calls issued one after another after a warm-up
pass that fills the market's per-entity caches. Target: in-process p50 < 5 ms for a 20-session
`daily` window. Prints PASS/FAIL and exits 1 on FAIL.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio

from livesearch_pipeline.core.calendars import sessions_back
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.server import DataService, call_result, http_server_thread

TARGET_P50_MS = 5.0


def _window(clock: dt.date, sessions: int) -> dict[str, str]:
    return {"start_date": sessions_back("XSHG", clock, sessions - 1).strftime("%Y%m%d"), "end_date": clock.strftime("%Y%m%d")}


def tool_mix(service: DataService, clock: dt.date) -> list[tuple[str, dict[str, Any]]]:
    universe = service.market.universe
    first = {cls: universe.of_class(cls)[0].code for cls in ("cn_equity", "hk_equity", "us_equity", "index", "fund")}
    window = _window(clock, 20)
    return [
        ("daily", {"ts_code": first["cn_equity"], **window}),
        ("daily_basic", {"ts_code": first["cn_equity"], **window}),
        ("hk_daily", {"ts_code": first["hk_equity"], **window}),
        ("us_daily", {"ts_code": first["us_equity"], **window}),
        ("index_daily", {"ts_code": first["index"], **window}),
        ("fund_nav", {"ts_code": first["fund"], "limit": 20}),
        ("income", {"ts_code": first["cn_equity"], "limit": 8}),
        ("cn_cpi", {"limit": 12}),
        ("shibor", {**window}),
        ("moneyflow", {"ts_code": first["cn_equity"], **window}),
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def measure(client: McpToolClient, calls: list[tuple[str, dict[str, Any]]]) -> list[float]:
    for name, args in calls:  # warm-up: fill caches, list tools for output-schema validation
        await client.call_tool(name, args)
    latencies = []
    for name, args in calls:
        started = time.perf_counter()
        await client.call_tool(name, args)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def report(label: str, latencies: list[float]) -> float:
    p50 = statistics.median(latencies)
    print(
        f"{label:<34} calls={len(latencies):>5}  calls/s={1000 * len(latencies) / sum(latencies):>8.1f}  "
        f"p50={p50:7.2f} ms  p99={percentile(latencies, 0.99):7.2f} ms"
    )
    return p50


async def run_transport(make_client: Callable[[], McpToolClient], mix: list, daily20: list, wide: list, narrow: list) -> dict[str, float]:
    async with make_client() as client:
        return {
            "mix": report("  mix of tools", await measure(client, mix)),
            "daily20": report("  daily, 20-session window", await measure(client, daily20)),
            "daily250": report("  daily, 250-session window", await measure(client, wide)),
            "daily1": report("  daily, 1-session window", await measure(client, narrow)),
        }


def measure_server_side(service: DataService, calls: list[tuple[str, dict[str, Any]]]) -> list[float]:
    """The server's share of a call (validation, handler, paging, JSON, MCP result) without a
    transport or the client's output-schema validation, which the `mcp` SDK always runs."""
    for name, args in calls:
        call_result(service, name, args)
    latencies = []
    for name, args in calls:
        started = time.perf_counter()
        result = call_result(service, name, args)
        latencies.append((time.perf_counter() - started) * 1000)
        if result.is_error:
            raise RuntimeError(f"benchmark call {name} {args} failed: {result.content[0].text}")
    return latencies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per measurement (default 300)")
    parser.add_argument("--clock", type=dt.date.fromisoformat, default=dt.date(2026, 1, 9))
    args = parser.parse_args(argv)

    service = DataService(config=ServiceConfig(clock=args.clock))
    mix = tool_mix(service, args.clock)
    codes = [e.code for e in service.market.universe.of_class("cn_equity")[:50]]

    def daily_calls(sessions: int) -> list[tuple[str, dict[str, Any]]]:
        return [("daily", {"ts_code": codes[i % len(codes)], **_window(args.clock, sessions)}) for i in range(args.calls)]

    workloads = ([mix[i % len(mix)] for i in range(args.calls)], daily_calls(20), daily_calls(250), daily_calls(1))
    print(f"data service: {service.identity}")
    print("server side (DataService + MCP result object, no transport, no client validation):")
    server_side = {label: report(f"  {text}", measure_server_side(service, calls)) for label, text, calls in (
        ("daily20", "daily, 20-session window", workloads[1]), ("daily250", "daily, 250-session window", workloads[2]),
        ("daily1", "daily, 1-session window", workloads[3]))}
    print("in-process (mcp.Client on the server object):")
    in_process = anyio.run(run_transport, lambda: McpToolClient.in_process(service), *workloads)
    with http_server_thread(service) as url:
        print(f"streamable HTTP ({url}):")
        anyio.run(run_transport, lambda: McpToolClient.url(url), *workloads)
    print(f"250-session vs 1-session daily window (in-process p50): x{in_process['daily250'] / in_process['daily1']:.2f}, "
          f"server side x{server_side['daily250'] / server_side['daily1']:.2f}")
    verdict = "PASS" if in_process["daily20"] < TARGET_P50_MS else "FAIL"
    print(f"{verdict}: in-process p50 for a 20-session daily window {in_process['daily20']:.2f} ms (target < {TARGET_P50_MS} ms)")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
