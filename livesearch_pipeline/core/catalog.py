"""Tool metadata (DESIGN §3): what the pipeline knows about each tool of a data service.

The embedded service ships it in each MCP tool's `_meta` under the key `livesearch`; a
third-party server is described by a YAML service manifest that loads into the same models.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal, get_args

from pydantic import Field, model_validator

from livesearch_pipeline.core.models import AssetClass, CalendarName, RefreshClass, StrictModel, _OmitsUnsetExtensions

ToolRole = Literal["data", "search", "intraday", "utility"]
FieldType = Literal["number", "integer", "text", "date", "code"]

META_KEY = "livesearch"
# The service holding the embedded market's own helpers (clock, search, intraday, visibility).
HELPER_SERVICE = "utility"

# What a record field *is*, which decides whether it may be an answer (DESIGN §2 item 4):
# - measure: a quantity that is a fact about the entity (price, volume, ratio, count, amount);
# - flag: a 0/1 or Y/N marker (trading day, Stock Connect membership, audited or not);
# - code: a categorical code (exchange, board, list status, currency, report type, side);
# - identifier: names an instrument, record or contact (ts_code, ISIN, the entity's own name,
#   a constituent code, a web address): asking for it asks for what the question already says;
# - factor: a cumulative adjustment factor (1.00 for years, then a step on an ex-date);
# - label: a human-readable fact in words (holder, manager, industry, segment, auditor);
# - date: a calendar date or time of day (the time key, announcement/ex/listing dates);
# - description: free prose (résumés, introductions, summaries, addresses) that no matching
#   rule can judge.
# `date` and `description` are roles of their own because neither is a measure nor a label:
# a date is a time key or an event's date, read only as the session on which a measure peaked
# (argmax/argmin); a description is prose no matching rule can judge. Neither is an answer.
FieldRole = Literal["measure", "flag", "code", "identifier", "factor", "label", "date", "description"]
FIELD_ROLES: tuple[str, ...] = get_args(FieldRole)
# Roles whose values may be a question's answer (labels as semantic questions).
ANSWER_ROLES: frozenset[str] = frozenset({"measure", "label"})

# Tushare field names whose role the type alone does not tell. A tool overrides a name whose
# meaning differs there (a `name` that is a person, a `market` that is a listing board).
_IDENTIFIER_NAMES = frozenset({
    "ts_code", "code", "symbol", "con_code", "index_code", "fund_code", "isin", "sub_code",
    # The instrument's or record's own name: the question already names it.
    "name", "fullname", "enname", "name_en", "com_name", "etf_name", "index_name", "shortname",
    "website", "email", "phone",
})
_CODE_NAMES = frozenset({
    "exchange", "exchange_id", "market", "list_status", "curr_type", "currency", "classify",
    "report_type", "comp_type", "end_type", "market_type", "side", "gender", "hs_type", "in_de",
    "suspend_type", "limit", "level", "src", "status", "asset_class",
})
_DESCRIPTION_NAMES = frozenset({
    "introduction", "resume", "main_business", "summary", "perf_summary", "desc", "address",
    "office", "trading_hours", "break_time", "benchmark",
})
_TIME_OF_DAY_NAMES = frozenset({"first_time", "last_time", "time"})
_FLAG_NAME = re.compile(r"^is_|_flag$|^flag_|^if_")


def derive_field_role(name: str, type: str) -> FieldRole:
    """The role a field has unless its tool says otherwise, from its name and type.

    Right for the Tushare shapes (numbers are measures; `ts_code`, `*_code`, `*_id` and the
    instrument's own name identify; `is_*`/`*_flag` are flags; `adj_factor` is a factor; short
    free text is a label); a tool overrides it where its field means something else.
    """
    if type == "date" or name in _TIME_OF_DAY_NAMES:
        return "date"
    if _FLAG_NAME.search(name):
        return "flag"
    if name in _CODE_NAMES:
        return "code"
    if name in _IDENTIFIER_NAMES or name.endswith("_code") or name.endswith("_id"):
        return "identifier"
    if name == "adj_factor" or name.endswith("_adj_factor"):
        return "factor"
    if name in _DESCRIPTION_NAMES:
        return "description"
    if type == "code":
        return "code"
    if type in ("number", "integer"):
        return "measure"
    return "label"


# How a tool description spells out a field unit (issue 20): the unit is declared once, in the
# field metadata (`FieldMeta.unit`, Tushare's units), and both the served tool description and
# the verbalizer's answer format read it from there. Units not listed here are spelled as they are.
UNIT_PHRASES: dict[str, str] = {
    "lots": "lots of 100 shares (手)",
    "thousand CNY": "thousand CNY (千元)",
    "10k CNY": "10,000 CNY (万元)",
    "100M CNY": "100 million CNY (亿元)",
    "100m CNY": "100 million CNY (亿元)",
    "million CNY": "million CNY (百万元)",
    "trillion CNY": "trillion CNY (万亿元)",
    "10k shares": "10,000 shares (万股)",
    "100m shares": "100 million shares (亿股)",
    "10k units": "10,000 fund units (万份)",
    "100M units": "100 million fund units (亿份)",
    "units": "fund units (份)",
    "%": "percent",
    "points": "index points",
    "index": "index value (not a currency)",
    "quote currency": "units of the quote currency per unit of the base currency",
    "pips": "pips (0.0001 of the quote currency; 0.01 for JPY pairs)",
}


def unit_phrase(unit: str) -> str:
    return UNIT_PHRASES.get(unit, unit)


class FieldMeta(_OmitsUnsetExtensions):
    name: str
    type: FieldType
    unit: str | None = None
    description: str
    description_zh: str | None = None
    # Always set on a loaded model: derived from the name and type when the source omits it.
    role: FieldRole
    # The record field that names this field's unit where it differs between records (issue 39:
    # a Hong Kong company's statements are in its reporting currency, `currency`, HKD, CNY or
    # USD); `unit` is then the usual one. `in_record_unit` resolves it for one record.
    unit_field: str | None = None

    _EXTENSIONS: ClassVar[tuple[str, ...]] = ("unit_field",)

    @model_validator(mode="before")
    @classmethod
    def _default_role(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("role") is None and "name" in data and "type" in data:
            data = {**data, "role": derive_field_role(data["name"], data["type"])}
        return data

    @property
    def answerable(self) -> bool:
        """Whether a value of this field may be a question's answer (measures and labels)."""
        return self.role in ANSWER_ROLES

    def in_record_unit(self, record: Any) -> FieldMeta:
        """This field with the unit `record` states for it (itself when its unit is fixed, or the
        record names none)."""
        if self.unit_field is None or not isinstance(record, dict):
            return self
        unit = record.get(self.unit_field)
        return self if not isinstance(unit, str) or not unit or unit == self.unit else self.model_copy(update={"unit": unit})

    @property
    def unit_text(self) -> str | None:
        """The unit as a tool description states it: the fixed unit, or where the record names it."""
        if self.unit_field is not None:
            return f"the currency named by {self.unit_field} ({self.unit} unless it says otherwise)"
        return unit_phrase(self.unit) if self.unit else None


def with_roles(fields: list[FieldMeta], roles: dict[str, FieldRole] | None) -> list[FieldMeta]:
    """`fields` with the roles a tool states explicitly where the derived default is wrong."""
    if not roles:
        return list(fields)
    names = {f.name for f in fields}
    unknown = sorted(set(roles) - names)
    if unknown:
        raise ValueError(f"role override(s) for field(s) {unknown} that the tool does not have")
    return [f.model_copy(update={"role": roles[f.name]}) if f.name in roles else f for f in fields]


class DateParamMeta(StrictModel):
    name: str
    fmt: str  # strftime pattern, or YYYYMM / YYYYQn
    role: Literal["start", "end", "point", "period"]


class ToolMeta(_OmitsUnsetExtensions):
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
    # Sessions after its date that a record is published (a fund's NAV of day S is announced the
    # next weekday: 1). "The most recent record" at D is then the record of that many sessions
    # before D's last session, and a program's window ends there (core.publication).
    publication_lag_sessions: int = Field(default=0, ge=0)
    fields: list[FieldMeta] = Field(default_factory=list)
    # Record fields that tell apart several series sharing one time key value (currency pair,
    # exchange, holder, segment): a gold program must pin each of them (DESIGN §2 item 4).
    series_keys: list[str] = Field(default_factory=list)
    # Arguments that, when a call sets them, narrow the response to one series (issue 29):
    # `index_member` called with a stock's code lists that stock's one industry index. Such a
    # call's selection needs no `where`.
    one_series_by: list[str] = Field(default_factory=list)
    # The record field that tells apart versions of one record (issue 39: a statement a later
    # report restated, Tushare's `update_flag`): records sharing a time key and series that differ
    # in it are one record as first reported and as restated, not two series; a selection reads
    # one of them (core/extract.py `one_version`, `select.revision`).
    revision_field: str | None = None

    _EXTENSIONS: ClassVar[tuple[str, ...]] = ("revision_field",)

    @model_validator(mode="before")
    @classmethod
    def _time_key_is_a_date(cls, data: Any) -> Any:
        """The time key is a date even when its values are text (`YYYYMM` months): its field
        gets role `date` unless a role other than the derived default was stated for it."""
        if not isinstance(data, dict) or not data.get("time_key") or not isinstance(data.get("fields"), list):
            return data
        fields = []
        for f in data["fields"]:
            if isinstance(f, FieldMeta) and f.name == data["time_key"] and f.role == derive_field_role(f.name, f.type):
                f = f.model_copy(update={"role": "date"})
            elif (isinstance(f, dict) and f.get("name") == data["time_key"]
                  and f.get("role") in (None, derive_field_role(str(f.get("name")), str(f.get("type"))))):
                f = {**f, "role": "date"}
            fields.append(f)
        return {**data, "fields": fields}

    @model_validator(mode="after")
    def _series_keys_are_fields(self) -> ToolMeta:
        if self.series_keys and self.fields:
            unknown = [k for k in self.series_keys if self.field(k) is None]
            if unknown:
                raise ValueError(f"tool {self.name!r}: series key(s) {unknown} are not record fields")
        if self.time_key is not None and self.time_key in self.series_keys:
            raise ValueError(f"tool {self.name!r}: the time key {self.time_key!r} cannot also be a series key")
        if len(set(self.series_keys)) != len(self.series_keys):
            raise ValueError(f"tool {self.name!r}: a series key is listed twice")
        if self.revision_field is not None and self.fields and self.field(self.revision_field) is None:
            raise ValueError(f"tool {self.name!r}: the revision field {self.revision_field!r} is not a record field")
        return self

    @property
    def defines_gold(self) -> bool:
        """Only data tools may appear in a gold program."""
        return self.role == "data"

    @property
    def is_provider_tool(self) -> bool:
        """A tool of the provider's own surface: a data tool, or a utility a data service lists (a
        trading calendar). Not the helpers of the `utility` service (clock, search, visibility):
        these are what a forwarder sends to the provider and what agents are offered as data."""
        return self.role == "data" or (self.role == "utility" and self.service != HELPER_SERVICE)

    def field(self, name: str) -> FieldMeta | None:
        return next((f for f in self.fields if f.name == name), None)


def tool_description(meta: ToolMeta) -> str:
    """The description a tool is served with: its own, then the units of its answerable fields
    grouped by unit ("Units: open, close in CNY; vol in lots of 100 shares (手); amount in thousand
    CNY (千元)."), so an agent reading the tool list knows what the verbalizer's answers were
    converted from."""
    by_unit: dict[str, list[str]] = {}
    for f in meta.fields:
        if f.unit and f.answerable and f.unit_text:
            by_unit.setdefault(f.unit_text, []).append(f.name)
    if not by_unit:
        return meta.description
    parts = [f"{', '.join(names)} in {unit}" for unit, names in by_unit.items()]
    return f"{meta.description.rstrip('. ')}. Units: " + "; ".join(parts) + "."


def role_problems(meta: ToolMeta) -> list[str]:
    """Field roles and series keys that contradict the tool's own metadata (for the catalog
    table of the embedded service and for a third-party service manifest alike)."""
    problems: list[str] = []
    time_key = meta.field(meta.time_key) if meta.time_key else None
    if time_key is not None and time_key.role != "date":
        problems.append(f"time_key {meta.time_key!r} has role {time_key.role!r}; a time key is a date")
    entity = meta.field(meta.entity_param) if meta.entity_param else None
    if entity is not None and entity.role not in ("identifier", "code"):
        problems.append(f"entity field {entity.name!r} has role {entity.role!r}; it identifies the entity")
    for f in meta.fields:
        if f.role in ("measure", "factor") and f.type not in ("number", "integer"):
            problems.append(f"field {f.name!r} is a {f.role} but has type {f.type!r}")
    revision = meta.field(meta.revision_field) if meta.revision_field else None
    if revision is not None and revision.role != "flag":
        problems.append(f"revision field {revision.name!r} has role {revision.role!r}; a version marker is a flag, never an answer")
    for key in meta.series_keys:
        f = meta.field(key)
        if f is not None and f.role in ("measure", "factor", "date", "description"):
            problems.append(f"series key {key!r} has role {f.role!r}; a series is named by a code, identifier or label")
        if key == meta.entity_param:
            problems.append(f"series key {key!r} is the entity parameter; the entity already names the series")
    return problems


class Catalog(StrictModel):
    service: str  # identity of the data service (name, version, seed, clock policy)
    tools: list[ToolMeta]

    def get(self, name: str) -> ToolMeta | None:
        return next((t for t in self.tools if t.name == name), None)

    def data_tools(self) -> list[ToolMeta]:
        return [t for t in self.tools if t.defines_gold]
