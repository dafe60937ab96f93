"""One MCP server generated from the catalog table (official `mcp` SDK 2.x, low-level API).

Nothing here is written per tool. For every `ToolSpec` the server derives:
- an input schema from its `ParamSpec`s plus the common `limit`, `offset` and `fields`;
- an output schema: `{"items": [record], "total": n, "has_more": bool}` with record properties
  from the tool's `FieldMeta`;
- `_meta = {"livesearch": ToolMeta}` so that clients can rebuild the pipeline's catalog.

A call is parsed and validated against the ParamSpecs (dates in their format become `dt.date`;
`month` params "YYYYMM" and `quarter` params "YYYYQn" become the first day of that period).
Dates after the clock behave as on Tushare: the end of a window is cut at the clock (a window
straddling it returns the records up to the clock), any other date after it (a start, a point
date, a report period) selects nothing, so the call returns no records without running the
handler. The handler runs with a ToolContext, records dated after the clock are dropped, then
`fields`/`offset`/`limit` apply. Bad arguments and handler failures come back as MCP tool errors
(`isError`) with an actionable message; the server itself never goes down because of a call.

Tool metadata beyond the catalog: a human `title` (dataservice/titles.py) and read-only,
idempotent, closed-world annotations; optional arguments accept null, read as "not given", so
strict function calling (every argument required) works.

Transports: in-process (`mcp.Client(build_server(...))`), stdio and streamable HTTP, which also
answers Tushare's own wire format at /dataapi (dataservice/dataapi.py). Over HTTP
the service can require a bearer token (LIVESEARCH_DATA_SERVICE_TOKEN); it must whenever it is
bound to an address other than loopback, since with `--provider tushare` it spends the
operator's Tushare token for whoever reaches it.
"""

from __future__ import annotations

import asyncio
import calendar
import datetime as dt
import difflib
import functools
import hmac
import ipaddress
import json
import logging
import math
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from livesearch_pipeline.core.calendars import CalendarRangeError, ensure_within_horizon
from livesearch_pipeline.core.catalog import META_KEY, Catalog, FieldMeta, ToolMeta, tool_description
from livesearch_pipeline.core.client import ToolCallError, ToolClient
from livesearch_pipeline.dataservice.catalog import (
    SERVICE_NAME,
    SERVICE_VERSION,
    ServiceConfig,
    build_catalog,
    check_tool_specs,
    collect_tool_specs,
)
from livesearch_pipeline.dataservice.auth import AUTH_TOKEN_ENV, UNAUTHORIZED_RPC_CODE
from livesearch_pipeline.dataservice.dataapi import DATAAPI_PATH, ERROR_KIND_META_KEY, DataApi
from livesearch_pipeline.dataservice.quota import RETRY_META_KEY, retry_meta
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec
from livesearch_pipeline.dataservice.titles import tool_title

logger = logging.getLogger(__name__)

# Tushare Pro returns at most a few thousand rows per call; callers page with limit/offset.
DEFAULT_LIMIT = 5000
MAX_LIMIT = 10000
# Bounds on the work one request may ask for (README "Data service"): `fields` names distinct
# declared fields, at most MAX_FIELDS of them, in at most MAX_FIELDS_CHARS characters; a string
# argument has at most MAX_ARGUMENT_CHARS characters; an error quotes an argument in at most
# MAX_QUOTED_CHARS. Handlers run off the event loop, at most HANDLER_THREADS calls at a time per
# service, so one heavy call never stalls the other clients of an HTTP service.
MAX_FIELDS = 64
MAX_FIELDS_CHARS = 2048
MAX_ARGUMENT_CHARS = 4096
MAX_QUOTED_CHARS = 80
HANDLER_THREADS = 4


def quote_argument(value: Any) -> str:
    """`repr(value)` cut to MAX_QUOTED_CHARS characters (with the full length), for error messages."""
    text = repr(value)
    if len(text) <= MAX_QUOTED_CHARS:
        return text
    size = len(value) if isinstance(value, (str, bytes)) else len(text)
    return f"{text[:MAX_QUOTED_CHARS]}… ({size:,} characters)"

_JSON_TYPES: dict[str, str] = {
    "number": "number",
    "integer": "integer",
    "text": "string",
    "date": "string",
    "code": "string",
}


class UnknownToolError(LookupError):
    def __init__(self, name: str, known: Sequence[str]) -> None:
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        super().__init__(f"unknown tool {name!r}{hint} ({len(known)} tools are listed by tools/list)")


# --------------------------------------------------------------------------- period formats


def _period_format(fmt: str) -> str | None:
    """'month' or 'quarter' when `fmt` names a whole period rather than a day."""
    if fmt in ("YYYYMM", "%Y%m"):
        return "month"
    if fmt == "YYYYQn":
        return "quarter"
    return None


def parse_month(text: str) -> dt.date:
    if len(text) != 6 or not text.isdigit() or not 1 <= int(text[4:]) <= 12:
        raise ValueError(f"{text!r} is not a month in the format YYYYMM (e.g. 202603)")
    return dt.date(int(text[:4]), int(text[4:]), 1)


def parse_quarter(text: str) -> dt.date:
    if len(text) != 6 or not text[:4].isdigit() or text[4] != "Q" or text[5] not in "1234":
        raise ValueError(f"{text!r} is not a quarter in the format YYYYQn (e.g. 2026Q1)")
    return dt.date(int(text[:4]), 3 * int(text[5]) - 2, 1)


def _period_end(start: dt.date, period: str) -> dt.date:
    last_month = start.month if period == "month" else start.month + 2
    return dt.date(start.year, last_month, calendar.monthrange(start.year, last_month)[1])


@functools.lru_cache(maxsize=65536)  # every record of every call passes here: strptime is the cost
def time_key_last_day(value: str, fmt: str) -> dt.date:
    """The last day a record's time key covers: a month or quarter key is known only once the
    period is over, a day or minute key on that day."""
    period = _period_format(fmt)
    if period == "month":
        return _period_end(parse_month(value), "month")
    if period == "quarter":
        return _period_end(parse_quarter(value), "quarter")
    return dt.datetime.strptime(value, fmt).date()


# --------------------------------------------------------------------------- schemas


def _format_label(fmt: str) -> str:
    return fmt.replace("%Y", "YYYY").replace("%m", "MM").replace("%d", "DD")


def param_schema(param: ParamSpec) -> dict[str, Any]:
    if param.type == "int":
        schema: dict[str, Any] = {"type": "integer"}
    elif param.type == "float":
        schema = {"type": "number"}
    elif param.type == "date":
        schema = {"type": "string", "description": f"{param.description} (format {_format_label(param.fmt or '')})"}
    elif param.type == "month":
        schema = {"type": "string", "pattern": r"^\d{4}(0[1-9]|1[0-2])$"}
    elif param.type == "quarter":
        schema = {"type": "string", "pattern": r"^\d{4}Q[1-4]$"}
    else:
        schema = {"type": "string"}
    schema.setdefault("description", param.description)
    if param.enum:
        schema["enum"] = list(param.enum)
    return schema


def spec_limits(spec: ToolSpec) -> tuple[int, int]:
    """(default, maximum) page size; a tool may lower them with extra['default_limit'/'max_limit']."""
    maximum = int(spec.extra.get("max_limit", MAX_LIMIT))
    return int(spec.extra.get("default_limit", min(DEFAULT_LIMIT, maximum))), maximum


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    default_limit, max_limit = spec_limits(spec)
    properties = {p.name: param_schema(p) for p in spec.params}
    properties["limit"] = {
        "type": "integer",
        "minimum": 1,
        "maximum": max_limit,
        "description": f"maximum number of records to return (default {default_limit})",
    }
    properties["offset"] = {"type": "integer", "minimum": 0, "description": "records to skip (default 0)"}
    properties["fields"] = {
        "type": "string",
        "description": "comma-separated record fields to return (default: all): "
        + ",".join(f.name for f in spec.meta.fields),
    }
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    required = [p.name for p in spec.params if p.required]
    if required:
        schema["required"] = required
    return nullable_optionals(schema)


def nullable_optionals(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every optional property also accepting null (`anyOf` [its schema, null]).

    The server reads null as "not given". Strict function calling (OpenAI's strict mode, the
    Agents SDK's `convert_schemas_to_strict`) makes every property required without making it
    nullable: with this a model can still leave an optional argument out, by sending null."""
    required = set(schema.get("required", ()))
    properties = {}
    for name, prop in schema["properties"].items():
        if name in required:
            properties[name] = prop
            continue
        inner = {k: v for k, v in prop.items() if k != "description"}
        properties[name] = {"anyOf": [inner, {"type": "null"}], "description": prop.get("description", "")}
    return {**schema, "properties": properties}


def _field_schema(field: FieldMeta) -> dict[str, Any]:
    description = field.description + (f" [{field.unit_text}]" if field.unit_text else "")
    return {"type": [_JSON_TYPES[field.type], "null"], "description": description}


def output_schema(meta: ToolMeta) -> dict[str, Any]:
    record = {
        "type": "object",
        "properties": {f.name: _field_schema(f) for f in meta.fields},
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": record, "description": "records, newest first"},
            "total": {"type": "integer", "minimum": 0, "description": "records before paging"},
            "has_more": {"type": "boolean", "description": "true when offset+limit < total"},
        },
        "required": ["items", "total", "has_more"],
        "additionalProperties": False,
    }


def mcp_tool(spec: ToolSpec) -> types.Tool:
    title = tool_title(spec.name, spec.meta.description)
    return types.Tool(
        name=spec.name,
        title=title,
        description=tool_description(spec.meta),  # with the field units (core.catalog)
        input_schema=input_schema(spec),
        output_schema=output_schema(spec.meta),
        annotations=tool_annotations(title, open_world=False),
        _meta={META_KEY: spec.meta.model_dump(mode="json")},
    )


def tool_annotations(title: str, *, open_world: bool) -> types.ToolAnnotations:
    """Every tool only reads: no side effects, the same call may be repeated. The embedded market
    is a closed world; a forwarder's provider (Tushare Pro over the internet) is not."""
    return types.ToolAnnotations(
        title=title, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=open_world,
    )


# --------------------------------------------------------------------------- argument parsing


@dataclass(frozen=True)
class Paging:
    limit: int
    offset: int
    fields: tuple[str, ...]


def _parse_value(spec: ToolSpec, param: ParamSpec, value: Any) -> Any:
    where = f"argument {param.name!r}"
    if param.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ToolInputError(f"{where} must be an integer, got {quote_argument(value)}")
        return value
    if param.type == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ToolInputError(f"{where} must be a number, got {quote_argument(value)}")
        return float(value)
    if not isinstance(value, str):
        raise ToolInputError(f"{where} must be a string, got {quote_argument(value)}")
    if len(value) > MAX_ARGUMENT_CHARS:
        raise ToolInputError(f"{where} has {len(value):,} characters; at most {MAX_ARGUMENT_CHARS:,} are accepted "
                             f"(got {quote_argument(value)})")
    if param.enum and value not in param.enum:
        raise ToolInputError(f"{where} must be one of {', '.join(param.enum)}; got {quote_argument(value)}")
    try:
        if param.type == "date":
            fmt = param.fmt or "%Y%m%d"
            return dt.datetime.strptime(value, fmt).date()
        if param.type == "month":
            return parse_month(value)
        if param.type == "quarter":
            return parse_quarter(value)
    except ValueError:
        example = {"date": dt.date(2026, 3, 31).strftime(param.fmt or "%Y%m%d"), "month": "202603", "quarter": "2026Q1"}
        label = _format_label(param.fmt or "%Y%m%d") if param.type == "date" else {"month": "YYYYMM", "quarter": "YYYYQn"}[param.type]
        raise ToolInputError(
            f"{where} = {quote_argument(value)} is not a valid {param.type} in the format {label} "
            f"(e.g. {example[param.type]})"
        ) from None
    return value


def _clamp_to_clock(param: ParamSpec, value: dt.date, clock: dt.date) -> dt.date:
    """The end of a window cut at the clock (for a month or quarter: the period holding it)."""
    if value <= clock:
        return value
    if param.type == "month":
        return clock.replace(day=1)
    if param.type == "quarter":
        return dt.date(clock.year, 3 * ((clock.month - 1) // 3) + 1, 1)
    return clock


def _parse_paging(spec: ToolSpec, arguments: Mapping[str, Any]) -> Paging:
    default_limit, max_limit = spec_limits(spec)
    # null means "not given" (strict function calling sends every optional argument, as null)
    limit = default_limit if arguments.get("limit") is None else arguments["limit"]
    offset = 0 if arguments.get("offset") is None else arguments["offset"]
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= max_limit:
        raise ToolInputError(f"argument 'limit' must be an integer from 1 to {max_limit}; got {quote_argument(limit)}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ToolInputError(f"argument 'offset' must be a non-negative integer; got {quote_argument(offset)}")
    declared = [f.name for f in spec.meta.fields]
    fields_arg = arguments.get("fields")
    if fields_arg is None or fields_arg == "":
        return Paging(limit, offset, tuple(declared))
    if not isinstance(fields_arg, str):
        raise ToolInputError(f"argument 'fields' must be a comma-separated string; got {quote_argument(fields_arg)}")
    return Paging(limit, offset, parse_fields(spec, fields_arg, declared))


def parse_fields(spec: ToolSpec, fields_arg: str, declared: Sequence[str]) -> tuple[str, ...]:
    """The distinct declared fields `fields_arg` names, within the bounds (MAX_FIELDS, MAX_FIELDS_CHARS)."""
    if len(fields_arg) > MAX_FIELDS_CHARS:
        raise ToolInputError(f"argument 'fields' has {len(fields_arg):,} characters; at most {MAX_FIELDS_CHARS:,} "
                             f"are accepted ({spec.name} records have {len(declared)} fields)")
    fields = tuple(f.strip() for f in fields_arg.split(",") if f.strip())
    if len(fields) > MAX_FIELDS:
        raise ToolInputError(f"argument 'fields' names {len(fields):,} fields; at most {MAX_FIELDS} are accepted")
    known = set(declared)
    unknown = [f for f in dict.fromkeys(fields) if f not in known]
    if unknown:
        shown = ", ".join(quote_argument(f) if len(f) > 40 else f for f in unknown[:10])
        raise ToolInputError(f"unknown field(s) {shown}{' and more' if len(unknown) > 10 else ''}; "
                             f"{spec.name} records have: {', '.join(declared)}")
    repeated = sorted({f for f in fields if fields.count(f) > 1})
    if repeated:
        raise ToolInputError(f"argument 'fields' repeats {', '.join(repeated)}: name each field once")
    return fields


def dates_after_clock(spec: ToolSpec, parsed: Mapping[str, Any], clock: dt.date) -> list[str]:
    """Parsed date arguments other than a window's end that lie after the clock: each selects
    nothing yet, so the call has no records (Tushare answers such a call with an empty table)."""
    ends = {d.name for d in spec.meta.date_params if d.role == "end"}
    return [name for name, value in parsed.items() if isinstance(value, dt.date) and name not in ends and value > clock]


def parse_arguments(spec: ToolSpec, arguments: Mapping[str, Any], clock: dt.date) -> tuple[dict[str, Any], Paging]:
    """Validate `arguments` against the spec; return (handler args, paging). Raises ToolInputError.

    A window's end after the clock is cut at the clock; other dates are returned as given, and
    the caller must not run the handler when `dates_after_clock` names any of them."""
    params = {p.name: p for p in spec.params}
    accepted = [*params, "limit", "offset", "fields"]
    unknown = sorted(set(arguments) - set(accepted))
    if unknown:
        shown = ", ".join(quote_argument(u) if len(u) > 40 else u for u in unknown[:10])
        raise ToolInputError(f"unknown argument(s) {shown}{' and more' if len(unknown) > 10 else ''}; "
                             f"{spec.name} accepts: {', '.join(accepted)}")
    missing = [p.name for p in spec.params if p.required and arguments.get(p.name) in (None, "")]
    if missing:
        raise ToolInputError(f"missing required argument(s) {', '.join(missing)} for {spec.name}")
    parsed: dict[str, Any] = {}
    for name, param in params.items():
        value = arguments.get(name)
        if value is None or value == "":
            continue
        parsed[name] = _parse_value(spec, param, value)
    # The order is checked on the dates as asked: cutting an end at the clock must not turn a
    # valid future window into "end before start".
    _check_date_order(spec, parsed)
    paging = _parse_paging(spec, arguments)
    for date in spec.meta.date_params:
        if date.role == "end" and isinstance(parsed.get(date.name), dt.date):
            parsed[date.name] = _clamp_to_clock(params[date.name], parsed[date.name], clock)
    return parsed, paging


def _check_date_order(spec: ToolSpec, parsed: Mapping[str, Any]) -> None:
    starts = [d.name for d in spec.meta.date_params if d.role == "start" and d.name in parsed]
    ends = [d.name for d in spec.meta.date_params if d.role == "end" and d.name in parsed]
    for start in starts:
        for end in ends:
            if parsed[end] < parsed[start]:
                raise ToolInputError(
                    f"{end} ({parsed[end].isoformat()}) is before {start} ({parsed[start].isoformat()}); "
                    f"swap them or widen the window"
                )


# --------------------------------------------------------------------------- records


def _json_default(value: Any) -> Any:
    # numpy scalars (np.int64 and friends) are not JSON types but carry a plain Python value.
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def render_json(content: Mapping[str, Any]) -> str:
    """The canonical text of a response: identical content gives identical bytes."""
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default)


def shape_records(spec: ToolSpec, records: list[dict[str, Any]], paging: Paging, clock: dt.date) -> dict[str, Any]:
    """Drop records after the clock, then page and project them."""
    meta = spec.meta
    declared = {f.name for f in meta.fields}
    visible: list[dict[str, Any]] = []
    for record in records:
        undeclared = record.keys() - declared
        if undeclared:
            raise RuntimeError(f"tool {spec.name} returned undeclared field(s) {sorted(undeclared)}")
        if meta.time_key is not None:
            key = record.get(meta.time_key)
            if not isinstance(key, str):
                raise RuntimeError(f"tool {spec.name} returned a record without a text {meta.time_key!r}: {key!r}")
            if time_key_last_day(key, meta.time_key_fmt or "%Y%m%d") > clock:
                continue
        visible.append(record)
    page = visible[paging.offset : paging.offset + paging.limit]
    fields = paging.fields
    items = [{name: record.get(name) for name in fields} for record in page]
    # One pass over the values without a call per value (the hot path of a replay); a
    # non-finite number is then named by `_finite`.
    isfinite = math.isfinite
    if any(isinstance(value, float) and not isfinite(value) for item in items for value in item.values()):
        for item in items:
            for name, value in item.items():
                _finite(spec, name, value)
    return {"items": items, "total": len(visible), "has_more": paging.offset + paging.limit < len(visible)}


def _finite(spec: ToolSpec, name: str, value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise RuntimeError(f"tool {spec.name} returned a non-finite number in field {name!r}")
    return value


# --------------------------------------------------------------------------- the service


class DataService:
    """The embedded service without a transport: catalog plus a validated call path."""

    def __init__(self, specs: Sequence[ToolSpec] | None = None, config: ServiceConfig = ServiceConfig(), market: Any = None) -> None:
        self.specs = tuple(specs) if specs is not None else collect_tool_specs()
        check_tool_specs(self.specs)
        self.config = config
        self._by_name = {spec.name: spec for spec in self.specs}
        self._market = market

    @cached_property
    def market(self) -> Any:
        if self._market is not None:
            return self._market
        from livesearch_pipeline.dataservice.market import Market

        return Market(self.config.seed)

    @property
    def identity(self) -> str:
        return self.config.identity

    @cached_property
    def catalog(self) -> Catalog:
        return build_catalog(self.specs, self.config)

    @cached_property
    def mcp_tools(self) -> list[types.Tool]:
        return [mcp_tool(spec) for spec in self.specs]

    def spec(self, name: str) -> ToolSpec:
        spec = self._by_name.get(name)
        if spec is None:
            raise UnknownToolError(name, list(self._by_name))
        return spec

    def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run one tool; raises UnknownToolError, ToolInputError, or the handler's exception."""
        spec = self.spec(name)
        clock = self.config.today()
        try:
            # Past a calendar's horizon its market has no sessions: refuse (naming the horizon
            # and the fix) rather than serve a silently truncated market.
            ensure_within_horizon(clock)
        except CalendarRangeError as exc:
            raise ToolInputError(f"the service clock {clock.isoformat()} is beyond a trading calendar: {exc}") from exc
        args, paging = parse_arguments(spec, arguments, clock)
        if dates_after_clock(spec, args, clock):
            return shape_records(spec, [], paging, clock)
        try:
            records = spec.handler(ToolContext(market=self.market, clock=clock, seed=self.config.seed), args)
        except CalendarRangeError as exc:
            raise ToolInputError(str(exc)) from exc
        return shape_records(spec, records, paging, clock)

    async def handle(self, name: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
        # Off the event loop, in this service's bounded pool: a heavy call must not stall the
        # other requests the loop is serving (the HTTP transport serves many clients).
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._handler_pool, call_result, self, name, arguments)

    @cached_property
    def _handler_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=HANDLER_THREADS, thread_name_prefix="data-tool")


def forwarding_tool(spec: ToolSpec) -> types.Tool:
    """The MCP tool of `spec` as a forwarder serves it: the provider chooses the record fields.

    Without `fields` a provider returns its own default columns, which need not be the
    catalog's, so records are documented (the catalog's fields) but not constrained.
    """
    tool = mcp_tool(spec)
    inputs = json.loads(json.dumps(tool.input_schema))
    inputs["properties"]["fields"]["description"] = (
        "comma-separated record fields to request from the provider (default: the provider's default fields); "
        "the reference surface has: " + ",".join(f.name for f in spec.meta.fields)
    )
    outputs = json.loads(json.dumps(tool.output_schema))
    record = outputs["properties"]["items"]["items"]
    record["properties"] = {name: {"description": prop["description"]} for name, prop in record["properties"].items()}
    record["additionalProperties"] = True
    annotations = tool_annotations(tool.title or spec.name, open_world=True)
    return tool.model_copy(update={"input_schema": inputs, "output_schema": outputs, "annotations": annotations})


class ForwardingService:
    """The embedded service's data-tool surface served by another ToolClient (e.g. Tushare Pro).

    Schemas and `_meta` come from the same catalog table, so a pipeline pointed at the forwarder
    sees the tools it knows; arguments and records are whatever the provider accepts and returns.
    A failure the caller may retry (the provider's rate limit, our own quota, an outage) comes
    back as an error result whose `_meta[RETRY_META_KEY]` says so and when (dataservice/quota.py).
    """

    def __init__(self, client: ToolClient, specs: Sequence[ToolSpec] | None = None) -> None:
        all_specs = tuple(specs) if specs is not None else collect_tool_specs()
        self.specs = tuple(spec for spec in all_specs if spec.meta.is_provider_tool)
        self.client = client
        self._names = [spec.name for spec in self.specs]

    @property
    def identity(self) -> str:
        return self.client.identity

    @cached_property
    def mcp_tools(self) -> list[types.Tool]:
        return [forwarding_tool(spec) for spec in self.specs]

    async def handle(self, name: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
        if name not in self._names:
            return _error_result(str(UnknownToolError(name, self._names).args[0]), kind="unknown_tool")
        try:
            content = await self.client.call_tool(name, dict(arguments))
            text = render_json(content)
        except ToolCallError as exc:
            return _error_result(str(exc), retry=retry_meta(exc))
        except Exception as exc:  # the boundary: a failing provider must not take the server down
            logger.exception("forwarded tool %s failed", name)
            return _error_result(f"internal error forwarding {name}: {type(exc).__name__}: {exc}")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=content)


def call_result(service: DataService, name: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
    """The MCP result of one call; every failure becomes a tool error the caller can act on."""
    try:
        content = service.call(name, arguments)
        text = render_json(content)
    except UnknownToolError as exc:
        return _error_result(str(exc.args[0]), kind="unknown_tool")
    except ToolInputError as exc:
        return _error_result(f"invalid arguments for {name}: {exc}", kind="invalid_arguments")
    except Exception as exc:  # the boundary: a failing handler must not take the server down
        logger.exception("tool %s failed with arguments %s", name, quote_argument(dict(arguments)))
        return _error_result(f"internal error in {name}: {type(exc).__name__}: {exc}")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=content)


def _error_result(message: str, *, retry: dict[str, Any] | None = None, kind: str | None = None) -> types.CallToolResult:
    """A tool error; `retry` (quota.retry_meta) tells a client whether and when to call again,
    `kind` (`_meta["livesearch/error"]`: unknown_tool, invalid_arguments) what was wrong."""
    meta: dict[str, Any] = {RETRY_META_KEY: retry} if retry is not None else {}
    if kind is not None:
        meta[ERROR_KIND_META_KEY] = kind
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True, _meta=meta or None)


def build_server(service: DataService | ForwardingService) -> Server[Any]:
    """The MCP server of `service`; its description carries the service identity."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=service.mcp_tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await service.handle(params.name, params.arguments or {})

    return Server(
        SERVICE_NAME,
        version=SERVICE_VERSION,
        description=service.identity,
        instructions=(
            "Synthetic reference market with the Tushare Pro tool surface (fictional entities, real "
            "exchange calendars). Dates are YYYYMMDD; records come newest first; page with limit/offset."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


# --------------------------------------------------------------------------- transports


async def serve_stdio(service: DataService | ForwardingService) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(service)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


MIN_AUTH_TOKEN_CHARS = 16
_TOKEN_ADVICE = "e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'"


def is_loopback_host(host: str) -> bool:
    """Whether every address `host` stands for is a loopback address (127.0.0.0/8, ::1).

    0.0.0.0 and :: (every interface) are not; a name counts only if all its addresses are."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False  # unresolvable: binding fails anyway; never call it safe
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def check_http_auth(host: str, token: str | None) -> None:
    """Refuse to serve HTTP in a way that exposes the service: without a token on a non-loopback
    bind address, or with a token that is short or cannot travel in a header. Raises ValueError."""
    if token:
        if len(token) < MIN_AUTH_TOKEN_CHARS:
            raise ValueError(f"{AUTH_TOKEN_ENV} has {len(token)} characters; use at least {MIN_AUTH_TOKEN_CHARS} random ones ({_TOKEN_ADVICE})")
        if not (token.isascii() and token.isprintable()) or any(c.isspace() for c in token):
            raise ValueError(f"{AUTH_TOKEN_ENV} must be printable ASCII without spaces (it travels in an HTTP header); {_TOKEN_ADVICE}")
        return
    if not is_loopback_host(host):
        raise ValueError(
            f"refusing to serve HTTP on {host!r} without authentication: an address other than loopback exposes the "
            f"data service (and with --provider tushare your Tushare quota and token) to the network. Set "
            f"{AUTH_TOKEN_ENV} to a random secret ({_TOKEN_ADVICE}) and give clients the same variable, or bind 127.0.0.1"
        )


class BearerTokenAuth:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`; anything
    else gets 401 before it reaches the MCP endpoint. The comparison takes constant time."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = token.encode("ascii")

    def __repr__(self) -> str:
        return "BearerTokenAuth(token=***)"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        # Lifespan events carry no request; the Tushare-format routes take their credential from
        # the request body, as Tushare's SDK sends it (dataservice/dataapi.py checks it).
        if scope["type"] != "http" or _is_dataapi_path(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        supplied = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
        scheme, _, credentials = supplied.partition(b" ")
        # compare_digest on every request, whatever the scheme, so timing tells nothing.
        matches = hmac.compare_digest(credentials.strip(), self._expected)
        if scheme.lower() == b"bearer" and matches:
            await self.app(scope, receive, send)
            return
        client = scope.get("client") or ("?", 0)
        logger.warning("HTTP data service: refused a request from %s: %s bearer token", client[0], "wrong" if supplied else "no")
        # A JSON-RPC error body, so that MCP clients show this message rather than a bare status.
        error = {"code": UNAUTHORIZED_RPC_CODE, "message": f"unauthorized: send Authorization: Bearer <the server's {AUTH_TOKEN_ENV}>"}
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        await send({
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="livesearch-data"'),
            ],
        })
        await send({"type": "http.response.body", "body": body})


def _is_dataapi_path(path: str) -> bool:
    return path == DATAAPI_PATH or path.startswith(DATAAPI_PATH + "/")


def transport_security(host: str) -> TransportSecuritySettings | None:
    """The Host/Origin checks of both endpoints (/mcp and /dataapi) for a server bound to `host`.

    On a loopback address a request must name a loopback host (`127.0.0.1:<port>`, `localhost:…`,
    `[::1]:…`, or the bound address itself) and, when it has an Origin, a loopback origin: a web page
    of another site cannot reach the service through DNS rebinding or a cross-site form. Anywhere
    else the bearer token guards the service (check_http_auth insists on one), as the MCP SDK does."""
    if not is_loopback_host(host):
        return None
    bound = f"[{host.strip('[]')}]" if ":" in host else host
    hosts = dict.fromkeys(["127.0.0.1", "localhost", "[::1]", bound])
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts] + list(hosts),
        allowed_origins=[f"http://{h}:*" for h in hosts] + [f"http://{h}" for h in hosts],
    )


def http_app(service: DataService | ForwardingService, *, host: str = "127.0.0.1", token: str | None = None) -> Starlette:
    """A Starlette app serving streamable HTTP at /mcp (JSON responses, stateless sessions) and
    Tushare's wire format at /dataapi[/<api_name>] over the same tools; with `token`, every
    request must carry it (a bearer token; for /dataapi the body's `token`). Both endpoints check
    Host and Origin alike (`transport_security`)."""
    security = transport_security(host)
    dataapi = DataApi(service.mcp_tools, service.handle, token=token, security=security)
    app = build_server(service).streamable_http_app(
        host=host, json_response=True, stateless_http=True, custom_starlette_routes=dataapi.routes(),
        transport_security=security,
    )
    if token:
        app.add_middleware(BearerTokenAuth, token=token)
    return app


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket; port 0 picks a free port (read it from getsockname())."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def http_server(
    service: DataService | ForwardingService,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    log_level: str = "warning",
    token: str | None = None,
) -> Any:
    """A uvicorn server for the HTTP transport; run it with `.run(sockets=[bind_socket(...)])`.
    Raises ValueError (check_http_auth) for a non-loopback `host` without `token`."""
    import uvicorn

    check_http_auth(host, token)
    config = uvicorn.Config(http_app(service, host=host, token=token), host=host, port=port, log_level=log_level, lifespan="on")
    return uvicorn.Server(config)


@contextmanager
def http_server_thread(
    service: DataService | ForwardingService,
    *,
    host: str = "127.0.0.1",
    start_timeout_s: float = 30.0,
    token: str | None = None,
) -> Iterator[str]:
    """Serve `service` over streamable HTTP on a free port in a background thread; yields the URL.

    For tests and benchmarks: the socket is bound before the thread starts, so there is no race
    for the port, and the server is stopped and joined on exit.
    """
    check_http_auth(host, token)
    sock = bind_socket(host, 0)
    port = sock.getsockname()[1]
    server = http_server(service, host=host, port=port, token=token)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="mcp-http", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    try:
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"the HTTP data service did not start within {start_timeout_s:.0f} s")
            time.sleep(0.01)
        yield f"http://{host}:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
