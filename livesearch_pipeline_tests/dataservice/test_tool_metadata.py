"""MCP metadata of the embedded service: titles, annotations, strict-schema null handling, subsets,
and the first line of `serve-data` naming its clock."""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import os
import subprocess
import sys
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client

from livesearch_pipeline.cli import build_parser, main
from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs, select_specs
from livesearch_pipeline.dataservice.commands import clock_line
from livesearch_pipeline.dataservice.server import DataService, ForwardingService, build_server
from livesearch_pipeline.dataservice.titles import TOOL_TITLES, derived_title, tool_title

CLOCK = dt.date(2026, 11, 27)


@pytest.fixture(scope="module")
def service() -> DataService:
    return DataService(config=ServiceConfig(clock=CLOCK))


def _listed(service: Any) -> list:
    async def go():
        async with Client(build_server(service)) as client:
            return (await client.list_tools()).tools

    return anyio.run(go)


def test_every_tool_has_a_reviewed_title_and_no_title_is_stale(service):
    names = [spec.name for spec in service.specs]
    assert sorted(TOOL_TITLES) == sorted(names)
    titles = [TOOL_TITLES[n] for n in names]
    assert len(set(titles)) == len(titles), "two tools share a title"
    assert all(3 <= len(t) <= 60 and t[0].isupper() for t in titles)


def test_a_tool_outside_the_table_gets_the_opening_of_its_description():
    assert derived_title("A-share daily bars (unadjusted); ts_code with a window") == "A-share daily bars"
    assert derived_title("Look up instruments by name. Or code") == "Look up instruments by name"
    assert tool_title("toy_daily", "Toy daily bars: close only") == "Toy daily bars"


def test_listed_tools_carry_title_and_read_only_annotations(service):
    tools = _listed(service)
    assert len(tools) == len(service.specs) >= 100
    for tool in tools:
        wire = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
        assert wire["title"] == TOOL_TITLES[tool.name]
        assert wire["annotations"] == {
            "title": TOOL_TITLES[tool.name], "readOnlyHint": True, "destructiveHint": False,
            "idempotentHint": True, "openWorldHint": False,
        }


def test_a_forwarder_says_its_world_is_open(service):
    forwarded = ForwardingService(client=None, specs=service.specs)  # type: ignore[arg-type]
    daily = next(t for t in forwarded.mcp_tools if t.name == "daily")
    assert daily.annotations.open_world_hint is True and daily.annotations.read_only_hint is True
    assert daily.title == "A-share daily bars"


# --------------------------------------------------------------------------- strict schemas


def openai_strict(schema: Any) -> Any:
    """The transformation the OpenAI Agents SDK (`agents.strict_schema.ensure_strict_json_schema`,
    0.24) applies with `convert_schemas_to_strict=True`: every object closed (an open one is an
    error), every property required, applied through properties, items, anyOf/oneOf (oneOf becomes
    anyOf), allOf and $defs; a `default: null` dropped. Written from its documented rules."""
    if not isinstance(schema, dict):
        raise TypeError(f"not a schema: {schema!r}")
    for key in ("$defs", "definitions"):
        for sub in (schema.get(key) or {}).values():
            openai_strict(sub)
    if schema.get("type") == "object":
        if schema.get("additionalProperties"):
            raise ValueError("additionalProperties must be false for a strict schema")
        schema.setdefault("additionalProperties", False)
    if isinstance(schema.get("properties"), dict):
        schema["required"] = list(schema["properties"])
        for sub in schema["properties"].values():
            openai_strict(sub)
    if isinstance(schema.get("items"), dict):
        openai_strict(schema["items"])
    for sub in schema.get("anyOf") or ():
        openai_strict(sub)
    if "oneOf" in schema:
        schema["anyOf"] = [*schema.get("anyOf", []), *(openai_strict(s) for s in schema.pop("oneOf"))]
    for sub in schema.get("allOf") or ():
        openai_strict(sub)
    if "default" in schema and schema["default"] is None:
        del schema["default"]
    return schema


def test_every_input_schema_survives_the_strict_transform_and_accepts_null_for_optionals(service):
    for tool in _listed(service):
        strict = openai_strict(copy.deepcopy(tool.input_schema))
        optional = [n for n in strict["properties"] if n not in tool.input_schema.get("required", [])]
        assert strict["required"] == list(strict["properties"])  # what the model must now send
        jsonschema.Draft202012Validator.check_schema(strict)
        # a strict model sends null for every optional argument: the schema allows it ...
        jsonschema.validate({**{n: None for n in optional}, **_required_example(tool.input_schema)}, strict)
        # ... and still refuses what the server refuses
        if "limit" in strict["properties"]:
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate({**_required_example(tool.input_schema), "limit": 0}, strict)


def _required_example(schema: dict) -> dict:
    """A value of the right type for each required argument (the server checks codes and dates)."""
    def example(prop: dict) -> Any:
        if "enum" in prop:
            return prop["enum"][0]
        return {"integer": 1, "number": 1.5}.get(prop.get("type"), "202611" if "pattern" in prop else "x")

    return {n: example(schema["properties"][n]) for n in schema.get("required", [])}


def test_null_for_an_optional_argument_means_absent(service):
    """What a strict model sends: every argument, the optional ones null."""
    def call(arguments: dict) -> Any:
        async def go():
            async with Client(build_server(service)) as client:
                return await client.call_tool("daily", arguments)
        return anyio.run(go)

    optional = {"trade_date": None, "start_date": None, "end_date": None, "limit": None, "offset": None, "fields": None}
    with_nulls = call({"ts_code": "000005.SZ", **optional})
    without = call({"ts_code": "000005.SZ"})
    assert not with_nulls.is_error, with_nulls.content[0].text
    assert with_nulls.structured_content == without.structured_content
    assert with_nulls.structured_content["items"][0]["trade_date"] == "20261127"
    missing = call({"ts_code": None})
    assert missing.is_error and "pass at least one of ts_code, trade_date" in missing.content[0].text


# --------------------------------------------------------------------------- subsets


def test_select_specs_serves_tools_plus_services_and_names_unknown_ones():
    specs = collect_tool_specs()
    chosen = select_specs(specs, tools=["search", "daily"], services=["macro"])
    names = [s.name for s in chosen]
    assert names[:1] == ["daily"] and "search" in names and "cn_cpi" in names and "income" not in names
    assert all(s.meta.service == "macro" for s in chosen if s.name not in ("daily", "search"))
    assert select_specs(specs) == specs
    with pytest.raises(ValueError, match=r"unknown tool\(s\) dialy; valid tools: daily, weekly") as failure:
        select_specs(specs, tools=["dialy"], services=["macroo"])
    assert "unknown service(s) macroo; valid services: cn_quotes, corporate, funds, hk_us" in str(failure.value)


def test_serve_data_refuses_an_unknown_tool_before_serving(capsys):
    assert main(["serve-data", "--tools", "daily,nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("livesearch serve-data: unknown tool(s) nope; valid tools: daily,")
    assert main(["serve-data", "--services", "quotes"]) == 2
    assert "valid services: cn_quotes, corporate, funds, hk_us, indices, macro, microstructure, reference, statements, utility" \
        in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve-data", "--tools", ","])


def test_a_subset_server_lists_only_its_tools():
    args = build_parser().parse_args(["serve-data", "--tools", "search", "--services", "funds", "--clock", "2026-11-27"])
    from livesearch_pipeline.dataservice.commands import _service

    tools = _listed(_service(args))
    funds = [s.name for s in collect_tool_specs() if s.meta.service == "funds"]
    assert len(funds) >= 8 and sorted(t.name for t in tools) == sorted(["search", *funds])


# --------------------------------------------------------------------------- the clock line


def _serve_args(*extra: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve-data", *extra])


def test_the_first_line_names_the_clock():
    today = dt.date(2026, 12, 1)
    assert clock_line(_serve_args(), today) == (
        "livesearch serve-data: clock = today (2026-12-01 now; it follows this machine's date, so 'latest' rolls "
        "forward); pass --clock YYYY-MM-DD for a fixed, reproducible market"
    )
    assert clock_line(_serve_args("--clock", "2026-01-09"), today).endswith("clock fixed at 2026-01-09 (nothing dated after it is served)")
    assert "no service clock" in clock_line(_serve_args("--provider", "tushare"), today)


def test_serve_data_over_stdio_names_its_clock_on_its_first_line():
    """Without --clock; stdin at EOF ends the stdio server at once."""
    done = subprocess.run([sys.executable, "-m", "livesearch_pipeline.cli", "serve-data"], input=b"",
                          capture_output=True, timeout=120, env=os.environ.copy())
    first = done.stderr.decode().splitlines()[0]
    assert first.startswith("livesearch serve-data: clock = today (") and "--clock YYYY-MM-DD" in first


def test_a_forwarder_serves_a_subset_of_the_providers_interfaces(monkeypatch):
    from livesearch_pipeline.dataservice.commands import _service

    monkeypatch.setenv("TUSHARE_TOKEN", "tok-not-sent-anywhere-in-this-test")
    forwarder = _service(build_parser().parse_args(["serve-data", "--provider", "tushare", "--services", "macro,utility"]))
    names = {t.name for t in forwarder.mcp_tools}
    assert "cn_cpi" in names and "shibor" in names and "search" not in names and "daily" not in names
    with pytest.raises(ValueError, match=r"tool\(s\) search belong to the embedded market only"):
        _service(build_parser().parse_args(["serve-data", "--provider", "tushare", "--tools", "daily,search"]))
