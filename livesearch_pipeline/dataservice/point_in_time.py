"""The embedded service at any past cut-off, for replays (construction's dynamics profile).

`EmbeddedPointInTime(seed)(day)` opens a ToolClient whose service clock is `day`: nothing dated
or published after `day` is returned, exactly as the daily refresh of `day` sees it. Every day's
service is built on the one simulated market of the process (`shared_market`), so the
per-entity series computed for one day serve the next.

The client calls the service in-process without the MCP transport. A replay of the default
pool is ~30,000 programs over ~1,300 distinct calls per day for 21 days; through the in-process
MCP session each call pays the client's JSON-schema validation of the structured content
(~40 % of the call). The bytes are the same: the result is the one `call_result` gives the MCP
server (same validation, same error texts) and its JSON text is parsed as a remote client would.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types

from livesearch_pipeline.core.client import ToolCallError, ToolClient
from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.server import DataService, call_result
from livesearch_pipeline.dataservice.spec import ToolSpec


class ServiceClient(ToolClient):
    """A ToolClient calling a DataService directly (no transport); tool errors -> ToolCallError."""

    def __init__(self, service: DataService) -> None:
        self._service = service

    @property
    def identity(self) -> str:
        return self._service.identity

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = call_result(self._service, name, arguments)
        text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
        if result.is_error:
            raise ToolCallError(name, text or "tool error without a message", transient=False)
        content = json.loads(text)
        if not isinstance(content, dict):
            raise ToolCallError(name, f"structured content is a {type(content).__name__}, expected an object")
        return content


class EmbeddedPointInTime:
    """Opens the embedded service at a given day's cut-off: `async with source(day) as client`."""

    def __init__(self, seed: int = DEFAULT_SEED, specs: Sequence[ToolSpec] | None = None) -> None:
        self.seed = seed
        self.specs = tuple(specs) if specs is not None else collect_tool_specs()

    @asynccontextmanager
    async def __call__(self, day: dt.date) -> AsyncIterator[ToolClient]:
        service = DataService(specs=self.specs, config=ServiceConfig(seed=self.seed, clock=day),
                              market=shared_market(self.seed))
        yield ServiceClient(service)
