"""`livesearch serve-data` and `livesearch tools`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import anyio
import pytest

from livesearch_pipeline.cli import build_parser, main
from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.commands import render_tool_table
from livesearch_pipeline.dataservice.server import bind_socket
from livesearch_pipeline_tests.dataservice.toy_service import TOY_SPECS


def test_parser_knows_the_commands():
    args = build_parser().parse_args(["serve-data", "--transport", "http", "--port", "9999", "--clock", "2026-01-09", "--seed", "5"])
    assert (args.transport, args.port, args.clock.isoformat(), args.seed, args.host) == ("http", 9999, "2026-01-09", 5, "127.0.0.1")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve-data", "--clock", "09/01/2026"])


def test_tool_table_lists_services_roles_and_classes():
    table = render_tool_table("svc-id", [s.meta for s in TOY_SPECS])
    header, first = table.splitlines()[:2]
    assert header.split() == ["TOOL", "SERVICE", "ROLE", "ASSET", "CLASSES", "DATES", "TIME", "KEY", "REFRESH"]
    assert first.split() == ["toy_daily", "cn_quotes", "data", "cn_equity", "start_date,end_date", "trade_date", "daily"]
    assert "4 tools (4 data tools) in 2 services: cn_quotes, macro" in table and "service: svc-id" in table


def test_tools_json_filters_by_role(capsys):
    assert main(["tools", "--json", "--role", "search", "--clock", "2026-01-09"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["service"].endswith("clock=2026-01-09")
    assert [t["name"] for t in listed["tools"]] == ["search"]
    assert main(["tools", "--service", "macro"]) == 0
    assert "cn_cpi" in capsys.readouterr().out


@pytest.mark.slow
def test_serve_data_over_http_subprocess():
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()
    command = [sys.executable, "-m", "livesearch_pipeline.cli", "serve-data", "--transport", "http", "--port", str(port), "--clock", "2026-01-09"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy())

    async def listed() -> tuple[str, int]:
        async with McpToolClient.url(f"http://127.0.0.1:{port}/mcp") as client:
            return client.identity, len((await client.list_tools()).data_tools())

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                identity, data_tools = anyio.run(listed)
                break
            except ToolCallError as exc:
                if not exc.transient or time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert identity == "livesearch-synthetic-market/1 seed=20260101 clock=2026-01-09"
    assert data_tools >= 96
