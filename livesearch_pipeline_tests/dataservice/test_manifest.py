"""YAML service manifests for third-party MCP servers without `_meta`."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.server.lowlevel import Server

from livesearch_pipeline.dataservice.client import McpToolClient, catalog_from_tools
from livesearch_pipeline.dataservice.manifest import ManifestError, load_manifest, parse_manifest

EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "example_service_manifest.yaml"
THIRD_PARTY_TOOLS = ["get_daily_bars", "monthly_cpi", "lookup_symbol", "now"]


def _tool(name: str) -> types.Tool:
    return types.Tool(name=name, description=f"third-party {name}", input_schema={"type": "object"})


def test_example_manifest_describes_a_server_without_meta():
    manifest = load_manifest(EXAMPLE)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[_tool(n) for n in THIRD_PARTY_TOOLS])

    server = Server("acme", version="2", on_list_tools=list_tools)

    async def go():
        async with McpToolClient(server, description="test", manifest=manifest) as client:
            return await client.list_tools()

    catalog = anyio.run(go)
    assert [t.name for t in catalog.data_tools()] == ["get_daily_bars", "monthly_cpi"]
    bars = catalog.get("get_daily_bars")
    assert bars.entity_param == "symbol" and bars.calendar == "XSHG" and bars.time_key_fmt == "%Y-%m-%d"
    assert [(d.name, d.fmt, d.role) for d in bars.date_params] == [("from", "%Y-%m-%d", "start"), ("to", "%Y-%m-%d", "end")]
    assert catalog.get("monthly_cpi").description == "third-party monthly_cpi"  # taken from the server
    assert catalog.get("lookup_symbol").role == "search" and not catalog.get("now").defines_gold


def test_undescribed_tools_fail_unless_excluded():
    manifest = load_manifest(EXAMPLE)
    tools = [_tool(n) for n in [*THIRD_PARTY_TOOLS, "mystery"]]
    with pytest.raises(ManifestError, match="does not describe tool\\(s\\) mystery"):
        catalog_from_tools(tools, identity="x", manifest=manifest)
    lenient = manifest.model_copy(update={"undescribed": "exclude"})
    catalog = catalog_from_tools(tools, identity="x", manifest=lenient)
    assert catalog.get("mystery").role == "utility"
    with pytest.raises(ValueError, match="no service manifest"):
        catalog_from_tools(tools, identity="x")


def test_manifest_tool_missing_on_the_server_is_an_error():
    manifest = load_manifest(EXAMPLE)
    with pytest.raises(ManifestError, match="does not list: now"):
        catalog_from_tools([_tool(n) for n in THIRD_PARTY_TOOLS[:3]], identity="x", manifest=manifest)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("service: x\ntools: [\n", "m.yaml: not valid YAML"),
        ("- just a list\n", "is a mapping with 'service' and 'tools'"),
        ("service: x\ntools:\n  - {name: a, role: data, service: s, asset_classes: [crypto]}\n", "tools[0].asset_classes[0]"),
        ("service: x\ntools:\n  - {name: a, role: oracle, service: s, asset_classes: [macro]}\n", "tools[0].role"),
        ("service: x\ntools:\n  - {name: a, role: data, service: s, asset_classes: [macro], typo: 1}\n", "tools[0].typo"),
        ("service: x\ntools:\n  - {name: a, role: data, service: s, asset_classes: [macro], time_key: d}\n", "has time_key but no time_key_fmt"),
        ("service: x\ntools:\n  - {name: a, role: data, service: s, asset_classes: [macro]}\n  - {name: a, role: data, service: s, asset_classes: [macro]}\n", "more than once: a"),
    ],
)
def test_bad_manifests_name_the_file_and_the_place(text, fragment):
    with pytest.raises(ManifestError) as failure:
        parse_manifest(text, source="m.yaml")
    assert fragment in str(failure.value) and str(failure.value).startswith("m.yaml")


def test_missing_file(tmp_path):
    with pytest.raises(ManifestError, match="cannot read service manifest .*nope.yaml"):
        load_manifest(tmp_path / "nope.yaml")


def test_manifest_fields_carry_roles_and_series_keys():
    manifest = load_manifest(EXAMPLE)
    bars = manifest.tool("get_daily_bars").tool_meta("bars")
    roles = {f.name: f.role for f in bars.fields}
    # Stated roles are kept; omitted ones are derived from the name and type as for the embedded service.
    assert roles == {"date": "date", "symbol": "identifier", "close": "measure", "volume": "measure",
                     "adj": "factor", "suspended": "flag"}
    cpi = manifest.tool("monthly_cpi").tool_meta("cpi")
    assert cpi.series_keys == ["region"]
    assert cpi.field("month").role == "date"  # a text time key is still a date
    assert cpi.field("region").role == "code"


@pytest.mark.parametrize(("entry", "fragment"), [
    ("series_keys: [pair]", "series key(s) ['pair'] are not record fields"),
    ("series_keys: [yoy]", "series key 'yoy' has role 'measure'"),
    ("fields: [{name: month, type: text, description: m}, {name: yoy, type: text, role: measure, description: y}]",
     "field 'yoy' is a measure but has type 'text'"),
    ("fields: [{name: month, type: text, description: m}, {name: yoy, type: number, role: price, description: y}]",
     "role"),
])
def test_incoherent_roles_or_series_keys_are_manifest_errors(entry, fragment):
    text = f"""
service: acme/1
tools:
  - name: monthly_cpi
    role: data
    service: macro
    asset_classes: [macro]
    time_key: month
    time_key_fmt: YYYYMM
    {entry}
"""
    if not entry.startswith("fields"):
        text += "    fields: [{name: month, type: text, description: m}, {name: yoy, type: number, description: y}]\n"
    with pytest.raises(ManifestError, match="monthly_cpi|fields") as failure:
        parse_manifest(text, source="m.yaml")
    assert fragment in str(failure.value) and "m.yaml" in str(failure.value)
