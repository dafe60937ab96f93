"""YAML service manifest: tool metadata for a third-party MCP server that ships no `_meta`.

The manifest says, per tool, what the embedded service puts in `_meta.livesearch`: role,
service, asset classes, entity parameter, date parameters with their formats, the records'
time key, the fields with their roles (measure, flag, code, ...) and the series keys. Tools the server lists but the manifest omits are an error unless the manifest says
`undescribed: exclude`, which registers them as utility tools (never used in gold programs).
See deploy/example_service_manifest.yaml.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError

from livesearch_pipeline.core.catalog import DateParamMeta, FieldMeta, ToolMeta, ToolRole, role_problems
from livesearch_pipeline.core.models import AssetClass, CalendarName, RefreshClass, StrictModel


class ManifestError(ValueError):
    """A service manifest that cannot be read or does not fit the server it describes."""


class ManifestTool(StrictModel):
    name: str
    role: ToolRole
    service: str
    description: str | None = None  # default: the MCP tool's own description
    asset_classes: list[AssetClass] = Field(min_length=1)
    entity_param: str | None = None
    date_params: list[DateParamMeta] = Field(default_factory=list)
    time_key: str | None = None
    time_key_fmt: str | None = None
    calendar: CalendarName | None = None
    refresh_class: RefreshClass = "daily"
    # Each field may state its `role`; without one it is derived from its name and type
    # (core.catalog.derive_field_role), exactly as for the embedded service.
    fields: list[FieldMeta] = Field(default_factory=list)
    # Fields that tell apart several series on one time key (currency pair, exchange, holder).
    series_keys: list[str] = Field(default_factory=list)

    def tool_meta(self, server_description: str) -> ToolMeta:
        data = self.model_dump(exclude={"description"})
        return ToolMeta.model_validate({**data, "description": self.description or server_description or self.name}, strict=False)


class ServiceManifest(StrictModel):
    service: str  # the identity recorded in gold manifests, e.g. "acme-data-mcp/3"
    undescribed: Literal["error", "exclude"] = "error"
    tools: list[ManifestTool]

    def tool(self, name: str) -> ManifestTool | None:
        return next((t for t in self.tools if t.name == name), None)


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<top level>"


def parse_manifest(text: str, *, source: str = "<string>") -> ServiceManifest:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ManifestError(f"{source}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ManifestError(f"{source}: a service manifest is a mapping with 'service' and 'tools'")
    try:
        manifest = ServiceManifest.model_validate(data, strict=False)
    except ValidationError as exc:
        problems = "; ".join(f"{_location(e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ManifestError(f"{source}: invalid service manifest: {problems}") from exc
    names = [t.name for t in manifest.tools]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ManifestError(f"{source}: tool(s) described more than once: {', '.join(dupes)}")
    for tool in manifest.tools:
        if tool.time_key is not None and tool.time_key_fmt is None:
            raise ManifestError(f"{source}: tool {tool.name!r} has time_key but no time_key_fmt")
        try:
            meta = tool.tool_meta(tool.description or tool.name)
        except ValidationError as exc:
            problems = "; ".join(e["msg"] for e in exc.errors())
            raise ManifestError(f"{source}: tool {tool.name!r}: {problems}") from exc
        incoherent = role_problems(meta)
        if incoherent:
            raise ManifestError(f"{source}: tool {tool.name!r}: {'; '.join(incoherent)}")
    return manifest


def load_manifest(path: str | Path) -> ServiceManifest:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"cannot read service manifest {path}: {exc.strerror}") from exc
    return parse_manifest(text, source=str(path))


def overlay_manifest(
    manifest: ServiceManifest, tools: Sequence[tuple[str, str]], *, listed: set[str] | None = None
) -> list[ToolMeta]:
    """ToolMeta for each (name, description) the server listed without `_meta`.
    `listed`: every tool name the server lists (default: those in `tools`)."""
    listed = listed if listed is not None else {name for name, _ in tools}
    missing_on_server = sorted(t.name for t in manifest.tools if t.name not in listed)
    metas: list[ToolMeta] = []
    undescribed: list[str] = []
    for name, description in tools:
        entry = manifest.tool(name)
        if entry is not None:
            metas.append(entry.tool_meta(description))
        elif manifest.undescribed == "exclude":
            metas.append(
                ToolMeta(name=name, service=manifest.service, description=description or name, asset_classes=["market"], role="utility")
            )
        else:
            undescribed.append(name)
    if undescribed:
        raise ManifestError(
            f"manifest {manifest.service!r} does not describe tool(s) {', '.join(undescribed)}; "
            "describe them or set `undescribed: exclude`"
        )
    if missing_on_server:
        raise ManifestError(f"manifest {manifest.service!r} describes tool(s) the server does not list: {', '.join(missing_on_server)}")
    return metas
