"""Tushare Pro forwarder: the embedded service's tool surface answered by the real Tushare API.

Request: POST {api_name, token, params, fields} as JSON; reply {code, msg, data: {fields,
items[, has_more]}}; a non-zero code is an error. The token comes from the caller or
`TUSHARE_TOKEN` and is kept out of every repr, log line, error message and argument dict: the
reply's `msg` is redacted too, in case a provider echoes the request.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.client import ToolCallError, ToolClient

TUSHARE_URL = "http://api.tushare.pro"
TOKEN_ENV = "TUSHARE_TOKEN"
# Tushare's "too many calls per minute / per day" answers: worth retrying after a back-off.
RATE_LIMIT_CODES = frozenset({40203})
CREDENTIAL_ARG_NAMES = ("token", "api_key", "apikey", "password", "secret")
REDACTED = "***"


class _Secret:
    """A string that never shows itself in repr/str (tracebacks, logs, debuggers)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return REDACTED

    __str__ = __repr__


class TushareClient(ToolClient):
    """A ToolClient over Tushare Pro; `async with` closes its HTTP connection pool at the end."""

    def __init__(
        self,
        token: str | None = None,
        *,
        url: str = TUSHARE_URL,
        catalog: Catalog | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        """`catalog`: the tool surface (names and record fields) to accept and to request;
        without it every api_name is forwarded and Tushare's default fields come back."""
        token = token if token is not None else os.environ.get(TOKEN_ENV)
        if not token:
            raise ValueError(f"a Tushare Pro token is needed: set {TOKEN_ENV} or pass token=")
        self._token = _Secret(token)
        self._url = url
        self._catalog = catalog
        self._timeout_s = timeout_s
        self._http: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        return f"TushareClient(url={self._url!r}, token={REDACTED})"

    @property
    def identity(self) -> str:
        return f"tushare-pro {self._url}"

    async def __aenter__(self) -> TushareClient:
        self._http = httpx.AsyncClient(timeout=self._timeout_s)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def _redact(self, text: str) -> str:
        return text.replace(self._token.reveal(), REDACTED)

    def _request_body(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        credentials = [k for k in arguments if k.lower() in CREDENTIAL_ARG_NAMES]
        if credentials:
            raise ToolCallError(name, f"credentials are never tool arguments (got {', '.join(credentials)}); set {TOKEN_ENV}")
        params = {k: v for k, v in arguments.items() if k != "fields"}
        fields = arguments.get("fields")
        if self._catalog is not None:
            meta = self._catalog.get(name)
            if meta is None or not meta.defines_gold:
                raise ToolCallError(name, f"not a data tool of the forwarded surface ({self._catalog.service})")
            if fields is None:
                fields = ",".join(f.name for f in meta.fields)
        return {"api_name": name, "token": self._token.reveal(), "params": params, "fields": fields or ""}

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self._http is None:
            # A long-lived server (serve-data --provider tushare) has no `async with` around it.
            self._http = httpx.AsyncClient(timeout=self._timeout_s)
        body = self._request_body(name, arguments)
        try:
            response = await self._http.post(self._url, json=body)
        except httpx.TransportError as exc:
            raise ToolCallError(name, f"Tushare unreachable: {type(exc).__name__}: {self._redact(str(exc))}", transient=True) from None
        if response.status_code != 200:
            transient = response.status_code >= 500 or response.status_code == 429
            raise ToolCallError(name, f"Tushare HTTP {response.status_code}", transient=transient)
        try:
            reply = response.json()
        except ValueError:
            raise ToolCallError(name, "Tushare replied with something that is not JSON") from None
        return self._records(name, reply)

    def _records(self, name: str, reply: Any) -> dict[str, Any]:
        if not isinstance(reply, dict) or "code" not in reply:
            raise ToolCallError(name, "Tushare reply has no 'code'")
        if reply["code"] != 0:
            message = self._redact(str(reply.get("msg") or "no message"))
            raise ToolCallError(name, f"Tushare error {reply['code']}: {message}", transient=reply["code"] in RATE_LIMIT_CODES)
        data = reply.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("fields"), list) or not isinstance(data.get("items"), list):
            raise ToolCallError(name, "Tushare reply has no data.fields/data.items")
        fields: list[str] = data["fields"]
        items = []
        for row in data["items"]:
            if not isinstance(row, list) or len(row) != len(fields):
                raise ToolCallError(name, f"Tushare row does not match its {len(fields)} fields: {row!r}")
            items.append(dict(zip(fields, row)))
        return {"items": items, "total": len(items), "has_more": bool(data.get("has_more", False))}
