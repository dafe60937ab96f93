"""`McpToolClient`: the core ToolClient over an MCP client session.

Three ways to reach a server: the embedded service in-process (no sockets), a stdio command
(launched as a subprocess), or a streamable-HTTP URL (with a bearer token from the caller or
LIVESEARCH_DATA_SERVICE_TOKEN when set). The client classifies failures; the executor
(core/executor.py) owns retries of transient ones and timeouts:
- a tool error result (`isError`) or a malformed response -> ToolCallError(transient=False);
- an error result marked retryable in `_meta["livesearch/retry"]` (a forwarder whose provider is
  down) -> ToolCallError(transient=True);
- a broken connection or a timeout -> ToolCallError(transient=True).
The one retry the client makes itself is for quota: an error result marked rate limited (a
forwarder to a metered provider such as Tushare) holds that tool for the time it names and is
sent again, with the limiter semantics of dataservice/quota.py shared by all concurrent calls.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from livesearch_pipeline.core.catalog import META_KEY, Catalog, ToolMeta
from livesearch_pipeline.core.client import ToolCallError, ToolClient
from livesearch_pipeline.dataservice.auth import AUTH_TOKEN_ENV, UNAUTHORIZED_RPC_CODE
from livesearch_pipeline.dataservice.quota import RETRY_META_KEY, QuotaLimiter, call_with_quota, error_from_retry_meta

# JSON-RPC error codes that say "try again later" rather than "this request is wrong".
_TRANSIENT_RPC_CODES = frozenset({types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT})


def _connection_error_types() -> tuple[type[BaseException], ...]:
    import httpx2

    return (
        OSError,
        TimeoutError,
        anyio.ClosedResourceError,
        anyio.BrokenResourceError,
        anyio.EndOfStream,
        httpx2.TransportError,
    )


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _connection_failure(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first connection-level failure inside `exc` (transports raise them in task groups)."""
    return next((leaf for leaf in _leaves(exc) if isinstance(leaf, kinds)), None)


def _unauthorized(exc: BaseException) -> bool:
    """Whether `exc` holds the server's "missing or wrong bearer token": a credential problem,
    not an outage (never retried)."""
    import httpx2

    for leaf in _leaves(exc):
        if isinstance(leaf, MCPError) and leaf.code == UNAUTHORIZED_RPC_CODE:
            return True
        if isinstance(leaf, httpx2.HTTPStatusError) and leaf.response.status_code in (401, 403):
            return True
    return False


@asynccontextmanager
async def _bearer_http_transport(url: str, token: str) -> AsyncIterator[Any]:
    """Streamable HTTP with `Authorization: Bearer <token>` on every request (httpx2 masks the
    header in reprs; the token is never logged)."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            yield streams


class McpToolClient(ToolClient):
    """An async context manager; `call_tool` returns the tool's structured content."""

    def __init__(
        self,
        target: Any,
        *,
        description: str,
        read_timeout_s: float | None = 120.0,
        manifest: Any = None,
        limiter: QuotaLimiter | None = None,
        rate_limit_retries: int = 3,
        max_quota_wait_s: float = 3600.0,
    ) -> None:
        """`target`: an `mcp` Server (in-process), StdioServerParameters, a URL string or an
        MCP transport. `manifest`: a ServiceManifest describing tools that carry no `_meta`
        (third-party servers). `limiter`: paces calls per tool (default: no cap of its own, only
        the holds that rate-limited answers impose; tests inject a clock and a sleep).
        `rate_limit_retries`: refusals by the provider a call waits out before it fails;
        `max_quota_wait_s`: the most one call waits for quota in all."""
        self._client = Client(target, read_timeout_seconds=read_timeout_s, cache=None)
        self._description = description
        self._manifest = manifest
        self._identity: str | None = None
        self._connection_errors = _connection_error_types()
        self._limiter = limiter if limiter is not None else QuotaLimiter(None)
        self._rate_limit_retries = rate_limit_retries
        self._max_quota_wait_s = max_quota_wait_s

    # -- constructors

    @classmethod
    def in_process(cls, service: Any = None, **kwargs: Any) -> McpToolClient:
        """The embedded synthetic market (a DataService; default: seed and real-date clock)."""
        from livesearch_pipeline.dataservice.server import DataService, build_server

        service = service if service is not None else DataService()
        return cls(build_server(service), description="in-process", **kwargs)

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **kwargs: Any,
    ) -> McpToolClient:
        params = StdioServerParameters(command=command, args=list(args), env=dict(env) if env else None, cwd=cwd)
        return cls(params, description=f"stdio:{Path(command).name}", **kwargs)

    @classmethod
    def url(cls, url: str, *, token: str | None = None, **kwargs: Any) -> McpToolClient:
        """A streamable-HTTP server; `token` (default: ${LIVESEARCH_DATA_SERVICE_TOKEN} when set)
        is sent as `Authorization: Bearer <token>`."""
        if "@" in url.split("//", 1)[-1].split("/", 1)[0]:
            raise ValueError(f"put credentials in {AUTH_TOKEN_ENV}, not in the MCP server URL")
        token = token if token is not None else os.environ.get(AUTH_TOKEN_ENV) or None
        target: Any = _bearer_http_transport(url, token) if token else url
        return cls(target, description=url, **kwargs)

    # -- lifecycle

    async def __aenter__(self) -> McpToolClient:
        try:
            await self._client.__aenter__()
        except Exception as exc:
            if _unauthorized(exc):
                raise ToolCallError("<connect>", self._refused_message(), transient=False) from exc
            failure = _connection_failure(exc, self._connection_errors)
            if failure is None:
                raise
            message = f"cannot reach MCP server {self._description}: {type(failure).__name__}: {failure}"
            raise ToolCallError("<connect>", message, transient=True) from exc
        info = self._client.server_info
        if info is not None and info.description:
            self._identity = info.description
        elif info is not None:
            self._identity = f"{info.name}/{info.version} ({self._description})"
        else:
            self._identity = f"mcp ({self._description})"
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        await self._client.__aexit__(exc_type, exc, tb)

    @property
    def identity(self) -> str:
        if self._identity is None:
            raise RuntimeError("McpToolClient.identity is known once the client is entered (async with)")
        return self._identity

    def _refused_message(self) -> str:
        return (
            f"the MCP server {self._description} refused the request (HTTP 401, missing or wrong bearer token); "
            f"set {AUTH_TOKEN_ENV} to the server's token"
        )

    # -- calls

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await call_with_quota(
            self._limiter, name, lambda: self._call_once(name, arguments),
            tool=name, max_rejections=self._rate_limit_retries, max_wait_s=self._max_quota_wait_s,
        )

    async def _call_once(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            result = await self._client.call_tool(name, arguments)
        except MCPError as exc:
            if exc.code == UNAUTHORIZED_RPC_CODE:
                raise ToolCallError(name, self._refused_message(), transient=False) from exc
            raise ToolCallError(name, f"MCP error {exc.code}: {exc.error.message}", transient=exc.code in _TRANSIENT_RPC_CODES) from exc
        except RuntimeError as exc:
            # The session raises RuntimeError when structured content breaks the output schema.
            raise ToolCallError(name, str(exc), transient=False) from exc
        except Exception as exc:
            if _unauthorized(exc):
                raise ToolCallError(name, self._refused_message(), transient=False) from exc
            failure = _connection_failure(exc, self._connection_errors)
            if failure is None:
                raise
            message = f"connection to {self._description} failed: {type(failure).__name__}: {failure}"
            raise ToolCallError(name, message, transient=True) from exc
        if result.is_error:
            message = _text_of(result) or "tool error without a message"
            raise error_from_retry_meta(name, message, (result.meta or {}).get(RETRY_META_KEY))
        content = result.structured_content
        if content is None:
            content = _parse_text_json(name, result)
        if not isinstance(content, dict):
            raise ToolCallError(name, f"structured content is a {type(content).__name__}, expected an object")
        return content

    async def list_mcp_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await self._client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def list_tools(self) -> Catalog:
        """The server's tools as a core Catalog: `_meta` first, the manifest for the rest."""
        tools = await self.list_mcp_tools()
        return catalog_from_tools(tools, identity=self.identity, manifest=self._manifest)


def catalog_from_tools(tools: Sequence[types.Tool], *, identity: str, manifest: Any = None) -> Catalog:
    described: list[ToolMeta] = []
    undescribed: list[types.Tool] = []
    for tool in tools:
        meta = (tool.meta or {}).get(META_KEY)
        if meta is None:
            undescribed.append(tool)
            continue
        try:
            described.append(ToolMeta.model_validate(meta))
        except ValidationError as exc:
            raise ValueError(f"tool {tool.name!r}: invalid _meta.{META_KEY}: {exc}") from exc
    if undescribed:
        if manifest is None:
            names = ", ".join(t.name for t in undescribed)
            raise ValueError(f"tools without _meta.{META_KEY} and no service manifest to describe them: {names}")
        from livesearch_pipeline.dataservice.manifest import overlay_manifest

        pairs = [(t.name, t.description or "") for t in undescribed]
        described.extend(overlay_manifest(manifest, pairs, listed={t.name for t in tools}))
    return Catalog(service=identity, tools=described)


def _text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def _parse_text_json(name: str, result: types.CallToolResult) -> Any:
    text = _text_of(result)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolCallError(name, f"no structured content and the text is not JSON: {text[:200]!r}") from exc


class BlockingToolClient:
    """Synchronous use of an McpToolClient from code outside an event loop.

    The client lives in a background event loop (anyio blocking portal) for the duration of the
    `with` block, so one connection serves every call.
    """

    def __init__(self, client: McpToolClient) -> None:
        self._client = client
        self._portal: Any = None

    @contextmanager
    def _session(self) -> Iterator[BlockingToolClient]:
        from anyio.from_thread import start_blocking_portal

        with start_blocking_portal() as portal, portal.wrap_async_context_manager(self._client):
            self._portal = portal
            try:
                yield self
            finally:
                self._portal = None

    def __enter__(self) -> BlockingToolClient:
        self._cm = self._session()
        return self._cm.__enter__()

    def __exit__(self, *exc_info: Any) -> None:
        self._cm.__exit__(*exc_info)

    def _require_portal(self) -> Any:
        if self._portal is None:
            raise RuntimeError("BlockingToolClient must be used inside a `with` block")
        return self._portal

    @property
    def identity(self) -> str:
        return self._client.identity

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self._require_portal().call(self._client.call_tool, name, arguments)

    def list_tools(self) -> Catalog:
        return self._require_portal().call(self._client.list_tools)
