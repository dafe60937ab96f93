"""The plugin agent: the web agent's loop with the data service's MCP tools instead of the web,
as FinSearchComp's financial plugins.

The tools come from an MCP client (`dataservice.client.McpToolClient` or anything with the same
three methods): their input schemas from the MCP tool list, their roles from the tool metadata
(`_meta.livesearch`, or the service manifest for third-party servers). Only `data` and `search`
tools are offered to the model; intraday quotes and utilities (the clock, the visibility scorer)
are not, since they are not how an analyst would look up a dated figure.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

import mcp_types

from livesearch_pipeline.core.catalog import Catalog, ToolRole
from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.core.models import AnswerLanguage, Prediction, ServedQuestion
from livesearch_pipeline.evaluation.agents.chat import ChatModel
from livesearch_pipeline.evaluation.agents.loop import (
    FINAL_ANSWER_INSTRUCTION,
    AgentTool,
    LoopLimits,
    ToolFailure,
    ToolResult,
    run_tool_loop,
)

PLUGIN_SYSTEM_PROMPT = (
    "You are a financial research agent with access to a professional financial data service. "
    "Today's date is {today}. Answer the user's question with figures from the data tools: look "
    "up instrument codes with the search tool when needed, and call data tools with the dates the "
    "question implies. Relative times such as 'the most recent trading day' are relative to "
    "today's date. " + FINAL_ANSWER_INSTRUCTION
)

OFFERED_ROLES: frozenset[ToolRole] = frozenset({"data", "search"})
# OpenAI's limits on function tools: name pattern, and at most 128 tools per request.
_FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_FUNCTION_TOOLS = 128
EXCERPT_CHARS = 300


class PluginSetupError(RuntimeError):
    """The data service's tools cannot be offered to the model as they are."""


class PluginToolSource(Protocol):
    """What the plugin agent needs from an MCP client (McpToolClient has these methods)."""

    async def list_mcp_tools(self) -> list[mcp_types.Tool]: ...

    async def list_tools(self) -> Catalog: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


def offered_tools(
    mcp_tools: Sequence[mcp_types.Tool], catalog: Catalog, *, services: frozenset[str] | None = None
) -> list[mcp_types.Tool]:
    """The MCP tools whose role is `data` or `search`, plus the provider's utilities such as trading
    calendars (optionally of some services only)."""
    chosen = []
    for tool in mcp_tools:
        meta = catalog.get(tool.name)
        if meta is None:
            raise PluginSetupError(f"tool {tool.name!r} is listed by the server but absent from its catalog")
        offered = meta.role in OFFERED_ROLES or meta.is_provider_tool  # trading calendars too
        if offered and (services is None or meta.service in services):
            chosen.append(tool)
    if not chosen:
        raise PluginSetupError("the data service offers no data or search tools"
                               + (f" in services {sorted(services)}" if services else ""))
    if len(chosen) > MAX_FUNCTION_TOOLS:
        raise PluginSetupError(f"{len(chosen)} tools exceed the {MAX_FUNCTION_TOOLS} function tools a model "
                               "accepts per request: choose services (--services)")
    return chosen


def function_parameters(tool: mcp_types.Tool) -> dict[str, Any]:
    """The tool's MCP input schema as OpenAI function parameters (a JSON Schema object)."""
    if not _FUNCTION_NAME.match(tool.name):
        raise PluginSetupError(f"tool name {tool.name!r} is not a valid function name ({_FUNCTION_NAME.pattern})")
    schema = dict(tool.input_schema)
    if schema.get("type") != "object":
        raise PluginSetupError(f"tool {tool.name!r}: input schema type is {schema.get('type')!r}, not 'object'")
    schema.setdefault("properties", {})
    return schema


def _records_in(content: dict[str, Any]) -> int | None:
    items = content.get("items")
    return len(items) if isinstance(items, list) else None


@dataclass
class PluginAgent:
    chat_model: ChatModel
    source: PluginToolSource
    as_of: dt.date
    limits: LoopLimits = field(default_factory=LoopLimits)
    services: frozenset[str] | None = None
    result_chars: int = 12_000
    system_prompt: str = PLUGIN_SYSTEM_PROMPT
    name: str = "plugin"
    lang: AnswerLanguage = "en"  # "zh": the Chinese text where the question has one
    _tools: list[AgentTool] = field(default_factory=list, repr=False)

    @property
    def model(self) -> str:
        return self.chat_model.name

    async def prepare(self, questions: Sequence[ServedQuestion]) -> None:
        catalog = await self.source.list_tools()
        mcp_tools = await self.source.list_mcp_tools()
        self._tools = [self._agent_tool(tool) for tool in offered_tools(mcp_tools, catalog, services=self.services)]

    def _agent_tool(self, tool: mcp_types.Tool) -> AgentTool:
        parameters = function_parameters(tool)
        name = tool.name

        async def handler(arguments: dict[str, Any]) -> ToolResult:
            try:
                content = await self.source.call_tool(name, arguments)
            except ToolCallError as exc:
                raise ToolFailure(exc.message) from exc
            text = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
            shown = text[: self.result_chars]
            if len(shown) < len(text):
                shown += (f"\n[truncated at {self.result_chars} of {len(text)} characters: "
                          "narrow the dates, or page with limit/offset]")
            return ToolResult(content=shown, trace={"records": _records_in(content), "chars": len(text),
                                                    "excerpt": text[:EXCERPT_CHARS]})

        return AgentTool(name=name, description=tool.description or name, parameters=parameters, handler=handler)

    async def answer(self, question: ServedQuestion) -> Prediction:
        if not self._tools:
            raise PluginSetupError("prepare() has not loaded the data service's tools")
        return await run_tool_loop(
            question,
            model=self.chat_model,
            system_prompt=self.system_prompt.format(today=self.as_of.isoformat()),
            tools=self._tools,
            limits=self.limits,
            lang=self.lang,
        )
