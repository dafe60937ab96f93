"""Tushare Pro's own wire format on the HTTP data service: `POST /dataapi[/<api_name>]`.

Tushare's SDK (`ts.pro_api(token)`) posts `{"api_name", "token", "params", "fields"}` to
`<http_url>/<api_name>` and reads `{"code", "msg", "data": {"fields", "items", "has_more"}}`:
rows as lists in the order of `fields`, `code` 0 on success. These routes answer that format
with the very tools of the MCP endpoint: each request becomes one call of the service's
`handle` (the MCP `tools/call` path), so the clock, the point-in-time rules, paging, argument
checks and, for a forwarder, the provider's quota are the same bytes apart. Only the envelope
differs, plus Tushare's leniencies: an empty string or null parameter means "not given", integer
parameters may come as digit strings, `fields` may be a list, and the SDK's own `ts_type_name`
parameter is dropped.

Authentication: when the server has a token (LIVESEARCH_DATA_SERVICE_TOKEN), the body's `token`
is the credential (the SDK sends no header; an `Authorization: Bearer` header is accepted too),
compared in constant time and never logged. Every failure answers HTTP 200 with a non-zero
`code` and a message, as Tushare does: the SDK turns a non-zero code into an exception, while a
non-2xx status would make it return an empty DataFrame without a word.

Requests: the Host and Origin checks of the MCP endpoint apply here too (a loopback server answers
421 to a foreign Host and 403 to a foreign Origin: no DNS rebinding, no cross-site page), and only
`Content-Type: application/json` bodies are read (a cross-site form cannot send one). A body that
is not a JSON object, nests too deeply, or names `fields` that are not field names gets 40001 and
one line, never a traceback.

Codes: 0 ok; 40001 malformed request or invalid arguments; 40004 unknown api_name; 40101 missing
or wrong token; 40203 rate limited (Tushare's code; `msg` says when to retry); 50001 internal or
provider error; 50301 provider unavailable (retry later).
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import mcp_types as types
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from livesearch_pipeline.dataservice.auth import AUTH_TOKEN_ENV
from livesearch_pipeline.dataservice.quota import QUOTA, RATE_LIMITED, RETRY_META_KEY

logger = logging.getLogger(__name__)

DATAAPI_PATH = "/dataapi"
MAX_BODY_BYTES = 1 << 20
# Added to every request by the SDK (its own endpoint URL), not an argument of any interface.
SDK_PARAMS = frozenset({"ts_type_name"})
ERROR_KIND_META_KEY = "livesearch/error"

OK = 0
BAD_REQUEST = 40001
UNKNOWN_API = 40004
UNAUTHORIZED = 40101
RATE_LIMITED_CODE = 40203
INTERNAL = 50001
UNAVAILABLE = 50301

_INTEGER = re.compile(r"^[+-]?\d+$")
# A record field's name (Tushare's are snake_case identifiers).
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_QUOTED_FIELD_CHARS = 40

Handle = Callable[[str, Mapping[str, Any]], Awaitable[types.CallToolResult]]


class DataApiError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def reply(code: int, msg: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"code": code, "msg": msg, "data": data}


def _types_of(schema: Mapping[str, Any]) -> set[str]:
    """JSON types a property schema allows (its own `type` and those of its `anyOf` branches)."""
    found: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        found.add(declared)
    elif isinstance(declared, list):
        found.update(t for t in declared if isinstance(t, str))
    for branch in schema.get("anyOf") or ():
        if isinstance(branch, Mapping):
            found |= _types_of(branch)
    return found


def tool_arguments(tool: types.Tool, params: Any, fields: Any) -> tuple[dict[str, Any], list[str] | None]:
    """The MCP arguments of one Tushare request, and the fields it asked for (None: all).

    Raises DataApiError(BAD_REQUEST) for a body the tool cannot take; everything else (unknown
    parameters, malformed dates, out-of-range limits) is left to the tool's own checks.
    """
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise DataApiError(BAD_REQUEST, f"'params' must be a JSON object of the interface's parameters, got {type(params).__name__}")
    properties = tool.input_schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name, value in params.items():
        if name in SDK_PARAMS or value is None or value == "":
            continue
        allowed = _types_of(properties.get(name) or {})
        if isinstance(value, str) and "integer" in allowed and "string" not in allowed and _INTEGER.match(value.strip()):
            value = int(value)
        arguments[str(name)] = value
    wanted: list[str] | None = None
    if isinstance(fields, str):
        wanted = [f.strip() for f in fields.split(",") if f.strip()] or None
    elif isinstance(fields, list) and all(isinstance(f, str) for f in fields):
        wanted = [f.strip() for f in fields if f.strip()] or None
    elif fields is not None:
        raise DataApiError(BAD_REQUEST, f"'fields' must be a comma-separated string or a list of names, got {type(fields).__name__}")
    if wanted is not None:
        bad = [f for f in wanted if not _FIELD_NAME.match(f)]
        if bad:
            shown = ", ".join(repr(f[:MAX_QUOTED_FIELD_CHARS]) for f in bad[:5])
            raise DataApiError(BAD_REQUEST, f"'fields' names {shown}, not a field name: give a list of names "
                               '(["close", "open"]) or one comma-separated string ("close,open")')
        arguments["fields"] = ",".join(wanted)
    return arguments, wanted


def _declared_fields(tool: types.Tool) -> list[str]:
    schema = tool.output_schema or {}
    record = ((schema.get("properties") or {}).get("items") or {}).get("items") or {}
    return list((record.get("properties") or {}).keys())


def _error_code(result: types.CallToolResult) -> int:
    meta = result.meta or {}
    retry = meta.get(RETRY_META_KEY)
    if isinstance(retry, Mapping) and retry.get("retryable"):
        return RATE_LIMITED_CODE if retry.get("reason") in (RATE_LIMITED, QUOTA) else UNAVAILABLE
    kind = meta.get(ERROR_KIND_META_KEY)
    if kind == "invalid_arguments":
        return BAD_REQUEST
    if kind == "unknown_tool":
        return UNKNOWN_API
    return INTERNAL


def _message(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent)) or "error"


def table(result: types.CallToolResult, tool: types.Tool, wanted: list[str] | None) -> dict[str, Any]:
    """`data` of a successful call: the records as rows in the order of `fields`."""
    content = result.structured_content
    if not isinstance(content, Mapping) or not isinstance(content.get("items"), list):
        raise DataApiError(INTERNAL, f"{tool.name} returned no records table")
    items: list[Mapping[str, Any]] = content["items"]
    if wanted is not None:
        fields = list(wanted)
        missing = [name for name in fields if items and all(name not in item for item in items)]
        if missing:
            raise DataApiError(BAD_REQUEST, f"{tool.name} records have no field(s) {', '.join(missing)}; "
                               f"they have: {', '.join(items[0].keys())}")
    elif items:
        fields = list(items[0].keys())
    else:
        fields = _declared_fields(tool)
    rows = [[item.get(name) for name in fields] for item in items]
    return {"fields": fields, "items": rows, "has_more": bool(content.get("has_more", False))}


class DataApi:
    """The two routes over one service: `tools` is what its MCP endpoint lists."""

    def __init__(self, tools: Sequence[types.Tool], handle: Handle, *, token: str | None = None,
                 security: TransportSecuritySettings | None = None) -> None:
        """`security`: the Host/Origin checks of the server's MCP endpoint (server.transport_security),
        applied here alike; None checks neither (a server guarded by its token)."""
        self._tools = {tool.name: tool for tool in tools}
        self._handle = handle
        self._expected = token.encode("ascii") if token else None
        self._security = TransportSecurityMiddleware(security) if security is not None else None

    def __repr__(self) -> str:
        return f"DataApi(tools={len(self._tools)}, token={'***' if self._expected else None})"

    def routes(self) -> list[Route]:
        return [
            Route(DATAAPI_PATH, self.endpoint, methods=["POST"]),
            Route(DATAAPI_PATH + "/{api_name}", self.endpoint, methods=["POST"]),
        ]

    async def endpoint(self, request: Request) -> Response:
        if self._security is not None:
            # The MCP endpoint's own answers: 421 for a foreign Host, 403 for a foreign Origin.
            refused = await self._security.validate_request(request, is_post=False)
            if refused is not None:
                return refused
        try:
            body = await self._body(request)
            self._authenticate(body, request)
            return JSONResponse(await self.answer(body, request.path_params.get("api_name")))
        except DataApiError as exc:
            return JSONResponse(reply(exc.code, exc.message))

    async def _body(self, request: Request) -> dict[str, Any]:
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY_BYTES:
                raise DataApiError(BAD_REQUEST, f"request body over {MAX_BODY_BYTES} bytes")
        # Only JSON, as the SDK sends it: a cross-site form (text/plain, form-urlencoded) gets nothing.
        content_type = request.headers.get("content-type", "")
        if content_type.split(";")[0].strip().lower() != "application/json":
            raise DataApiError(BAD_REQUEST, f"the request's Content-Type is {content_type or 'missing'!r}; "
                               "send the body as application/json")
        try:
            body = json.loads(raw or b"null")
        except RecursionError:
            raise DataApiError(BAD_REQUEST, "the request body nests too deeply; send {api_name, token, params, fields}") from None
        except ValueError:
            raise DataApiError(BAD_REQUEST, "the request body is not JSON; send {api_name, token, params, fields}") from None
        if not isinstance(body, dict):
            raise DataApiError(BAD_REQUEST, "the request body must be a JSON object {api_name, token, params, fields}")
        return body

    def _authenticate(self, body: Mapping[str, Any], request: Request) -> None:
        if self._expected is None:
            return
        supplied = body.get("token")
        if not isinstance(supplied, str) or not supplied:
            scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
            supplied = credentials.strip() if scheme.lower() == "bearer" else ""
        candidate = supplied.encode("utf-8", "replace")
        # compare_digest on every request, so timing tells nothing.
        if not hmac.compare_digest(candidate, self._expected):
            client = request.client.host if request.client else "?"
            logger.warning("Tushare-format data API: refused a request from %s: %s token", client, "wrong" if supplied else "no")
            raise DataApiError(UNAUTHORIZED, f"unauthorized: send the server's {AUTH_TOKEN_ENV} as the token (ts.pro_api(token))")

    async def answer(self, body: Mapping[str, Any], path_api_name: str | None = None) -> dict[str, Any]:
        """The reply to one authenticated request body."""
        name = body.get("api_name", path_api_name)
        if path_api_name is not None and name != path_api_name:
            raise DataApiError(BAD_REQUEST, f"api_name {name!r} in the body differs from {path_api_name!r} in the path")
        if not isinstance(name, str) or not name:
            raise DataApiError(BAD_REQUEST, "no api_name: POST to /dataapi/<api_name> or put api_name in the body")
        tool = self._tools.get(name)
        if tool is None:
            raise DataApiError(UNKNOWN_API, f"unknown api_name {name!r}; this server has {len(self._tools)} interfaces: "
                               + ", ".join(sorted(self._tools)))
        arguments, wanted = tool_arguments(tool, body.get("params"), body.get("fields"))
        result = await self._handle(name, arguments)
        if result.is_error:
            return reply(_error_code(result), _message(result))
        return reply(OK, "", table(result, tool, wanted))
