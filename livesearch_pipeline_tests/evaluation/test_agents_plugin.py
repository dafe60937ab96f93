"""The plugin agent: the tool loop over the data service's MCP tools (data and search only)."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from livesearch_pipeline.core.catalog import Catalog, DateParamMeta, FieldMeta, ToolMeta
from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.core.models import Prediction
from livesearch_pipeline.evaluation.agents.base import PREDICTIONS_FILE, run_agent
from livesearch_pipeline.evaluation.agents.chat import LitellmChatModel
from livesearch_pipeline.evaluation.agents.loop import LoopLimits
from livesearch_pipeline.evaluation.agents.plugin import PluginAgent, PluginSetupError, function_parameters
from livesearch_pipeline.infra.llm import RetryPolicy
from livesearch_pipeline_tests.evaluation.agents_fakes import scripted_model, served_question

DAY = dt.date(2026, 11, 27)
QUESTION = "What was the closing price of Harbor Lantern Foods on the most recent trading day?"
FIELDS = [FieldMeta(name="ts_code", type="code", description="code"),
          FieldMeta(name="trade_date", type="date", description="session"),
          FieldMeta(name="close", type="number", unit="CNY", description="close")]
DAILY_META = ToolMeta(name="daily", service="cn_quotes", description="A-share daily bars", asset_classes=["cn_equity"],
                      role="data", entity_param="ts_code", time_key="trade_date", time_key_fmt="%Y%m%d",
                      date_params=[DateParamMeta(name="trade_date", fmt="%Y%m%d", role="point")], fields=FIELDS)
SEARCH_META = ToolMeta(name="search", service="utility", description="find codes by name",
                       asset_classes=["cn_equity"], role="search",
                       fields=[FieldMeta(name="ts_code", type="code", description="code")])
QUOTE_META = ToolMeta(name="realtime_quote", service="utility", description="live quote", asset_classes=["cn_equity"],
                      role="intraday", fields=FIELDS)
CLOCK_META = ToolMeta(name="system_clock", service="utility", description="service date", asset_classes=["market"],
                      role="utility", fields=[FieldMeta(name="today", type="date", description="date")])
SCHEMA = {"type": "object", "properties": {"ts_code": {"type": "string"}, "trade_date": {"type": "string"}}}


class FakeSource:
    """The three MCP-client methods the plugin agent uses, over canned tools."""

    def __init__(self) -> None:
        metas = [DAILY_META, SEARCH_META, QUOTE_META, CLOCK_META]
        self.catalog = Catalog(service="fake", tools=metas)
        self.tools = [mcp_types.Tool(name=m.name, description=m.description, input_schema=SCHEMA) for m in metas]
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def list_mcp_tools(self) -> list[mcp_types.Tool]:
        return self.tools

    async def list_tools(self) -> Catalog:
        return self.catalog

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((name, arguments))
        if name == "search":
            return {"items": [{"ts_code": "600123.SH", "name": "Harbor Lantern Foods"}], "total": 1, "has_more": False}
        if arguments.get("ts_code") != "600123.SH":
            raise ToolCallError(name, "invalid arguments for daily: unknown ts_code; find codes with the search tool")
        return {"items": [{"ts_code": "600123.SH", "trade_date": "20261127", "close": 18.42}],
                "total": 1, "has_more": False}


def _model(api_base: str) -> LitellmChatModel:
    return LitellmChatModel(model="openai/scripted", api_base=api_base, api_key="sk-test", retry=RetryPolicy(attempts=1))


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_plugin_offers_data_and_search_tools_and_answers_from_them(tmp_path: Path) -> None:
    source = FakeSource()
    script = [
        _call("search", keyword="Harbor Lantern"),
        _call("daily", ts_code="HLF", trade_date="20261127"),
        _call("daily", ts_code="600123.SH", trade_date="20261127"),
        "The daily bar shows the close.\nFinal answer: 18.42 CNY",
    ]
    with scripted_model({QUESTION: script}) as model:
        agent = PluginAgent(chat_model=_model(model.api_base), source=source, as_of=DAY)
        asyncio.run(run_agent(agent, [served_question(QUESTION)], tmp_path, date=DAY))
        requests = model.requests_for(QUESTION)
    offered = [t["function"]["name"] for t in requests[0]["tools"]]
    assert offered == ["daily", "search"]
    assert requests[0]["tools"][0]["function"]["parameters"] == SCHEMA
    assert source.calls == [("search", {"keyword": "Harbor Lantern"}),
                            ("daily", {"ts_code": "HLF", "trade_date": "20261127"}),
                            ("daily", {"ts_code": "600123.SH", "trade_date": "20261127"})]
    assert "error: invalid arguments for daily" in requests[2]["messages"][-1]["content"]
    assert '"close":18.42' in requests[3]["messages"][-1]["content"]

    prediction = Prediction.model_validate_json((tmp_path / PREDICTIONS_FILE).read_text())
    assert prediction.answer == "18.42 CNY" and prediction.error is None
    tool_entries = [t for t in prediction.trace if t["type"] == "tool"]
    assert [t["tool"] for t in tool_entries] == ["search", "daily", "daily"]
    assert "unknown ts_code" in tool_entries[1]["error"]
    assert tool_entries[2]["records"] == 1 and "18.42" in tool_entries[2]["excerpt"]


def test_large_tool_results_are_truncated_with_a_hint() -> None:
    source = FakeSource()
    with scripted_model({QUESTION: [_call("search", keyword="H"), "Final answer: 1"]}) as model:
        agent = PluginAgent(chat_model=_model(model.api_base), source=source, as_of=DAY, result_chars=40)
        asyncio.run(agent.prepare([]))
        prediction = asyncio.run(agent.answer(served_question(QUESTION)))
        shown = model.requests_for(QUESTION)[1]["messages"][-1]["content"]
    assert shown.startswith('{"items":[{"ts_code":"600123.SH"') and "[truncated at 40 of" in shown
    assert prediction.answer == "1"


def test_plugin_rejects_tools_it_cannot_offer() -> None:
    with pytest.raises(PluginSetupError, match="not a valid function name"):
        function_parameters(mcp_types.Tool(name="daily quotes", input_schema=SCHEMA))
    with pytest.raises(PluginSetupError, match="not 'object'"):
        function_parameters(mcp_types.Tool(name="daily", input_schema={"type": "array"}))
    source = FakeSource()
    source.catalog = Catalog(service="fake", tools=[QUOTE_META, CLOCK_META])
    source.tools = source.tools[2:]
    agent = PluginAgent(chat_model=_model("http://127.0.0.1:9/v1"), source=source, as_of=DAY)
    with pytest.raises(PluginSetupError, match="no data or search tools"):
        asyncio.run(agent.prepare([]))
    with pytest.raises(PluginSetupError, match="prepare"):
        asyncio.run(PluginAgent(chat_model=_model("http://127.0.0.1:9/v1"), source=FakeSource(),
                                as_of=DAY).answer(served_question(QUESTION)))


def test_services_narrow_the_offered_tools() -> None:
    source = FakeSource()
    agent = PluginAgent(chat_model=_model("http://127.0.0.1:9/v1"), source=source, as_of=DAY,
                        services=frozenset({"cn_quotes"}), limits=LoopLimits(max_steps=1))
    asyncio.run(agent.prepare([]))
    assert [t.name for t in agent._tools] == ["daily"]


def test_plugin_over_a_real_in_process_mcp_server(tmp_path: Path) -> None:
    """The same agent over D3's MCP server and client (in-process transport)."""
    from livesearch_pipeline.dataservice.catalog import ServiceConfig
    from livesearch_pipeline.dataservice.client import McpToolClient
    from livesearch_pipeline.dataservice.server import DataService
    from livesearch_pipeline.dataservice.spec import ParamSpec, ToolSpec

    def daily(ctx: Any, args: dict[str, Any]) -> list[dict[str, Any]]:
        day = args["trade_date"].strftime("%Y%m%d")
        return [{"ts_code": args["ts_code"], "trade_date": day, "close": 18.42}]

    def clock(ctx: Any, args: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"today": ctx.clock.strftime("%Y%m%d")}]

    specs = [
        ToolSpec(meta=DAILY_META, handler=daily, params=(
            ParamSpec(name="ts_code", type="str", description="instrument code", required=True),
            ParamSpec(name="trade_date", type="date", description="session", required=True, fmt="%Y%m%d"))),
        ToolSpec(meta=CLOCK_META, handler=clock, params=()),
    ]
    service = DataService(specs=specs, config=ServiceConfig(clock=DAY))
    script = [_call("daily", ts_code="600123.SH", trade_date="20261127"), "Final answer: 18.42 CNY"]
    with scripted_model({QUESTION: script}) as model:

        async def run() -> None:
            async with McpToolClient.in_process(service) as client:
                agent = PluginAgent(chat_model=_model(model.api_base), source=client, as_of=DAY)
                await run_agent(agent, [served_question(QUESTION)], tmp_path, date=DAY)

        asyncio.run(run())
        requests = model.requests_for(QUESTION)
    assert [t["function"]["name"] for t in requests[0]["tools"]] == ["daily"]
    assert "ts_code" in requests[0]["tools"][0]["function"]["parameters"]["properties"]
    prediction = Prediction.model_validate_json((tmp_path / PREDICTIONS_FILE).read_text())
    assert prediction.answer == "18.42 CNY"
    assert next(t for t in prediction.trace if t["type"] == "tool")["records"] == 1
