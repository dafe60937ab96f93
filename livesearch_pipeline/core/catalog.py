"""Tool metadata (DESIGN §3): what the pipeline knows about each tool of a data service.

The embedded service ships it in each MCP tool's `_meta` under the key `livesearch`; a
third-party server is described by a YAML service manifest that loads into the same models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from livesearch_pipeline.core.models import AssetClass, CalendarName, RefreshClass, StrictModel

ToolRole = Literal["data", "search", "intraday", "utility"]
FieldType = Literal["number", "integer", "text", "date", "code"]

META_KEY = "livesearch"


class FieldMeta(StrictModel):
    name: str
    type: FieldType
    unit: str | None = None
    description: str
    description_zh: str | None = None


class DateParamMeta(StrictModel):
    name: str
    fmt: str  # strftime pattern, or YYYYMM / YYYYQn
    role: Literal["start", "end", "point", "period"]


class ToolMeta(StrictModel):
    name: str
    service: str
    description: str
    asset_classes: list[AssetClass]
    role: ToolRole
    entity_param: str | None = None
    date_params: list[DateParamMeta] = Field(default_factory=list)
    time_key: str | None = None
    time_key_fmt: str | None = None
    calendar: CalendarName | None = None
    refresh_class: RefreshClass = "daily"
    fields: list[FieldMeta] = Field(default_factory=list)

    @property
    def defines_gold(self) -> bool:
        """Only data tools may appear in a gold program."""
        return self.role == "data"

    def field(self, name: str) -> FieldMeta | None:
        return next((f for f in self.fields if f.name == name), None)


class Catalog(StrictModel):
    service: str  # identity of the data service (name, version, seed, clock policy)
    tools: list[ToolMeta]

    def get(self, name: str) -> ToolMeta | None:
        return next((t for t in self.tools if t.name == name), None)

    def data_tools(self) -> list[ToolMeta]:
        return [t for t in self.tools if t.defines_gold]
