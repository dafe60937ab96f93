"""Tushare Pro forwarder: the embedded service's tool surface answered by the real Tushare API.

Request: POST {api_name, token, params, fields} as JSON; reply {code, msg, data: {fields,
items[, has_more]}}; a non-zero code is an error. `fields` is sent only when the caller asked
for it (Tushare's default columns otherwise): the synthetic catalog's field list describes our
market, not the provider's.

Quota: Tushare meters calls per interface, token and minute and answers 40203 beyond that. A
`QuotaLimiter` shared by every client of one token in the process admits at most
`calls_per_minute` calls per interface in any window (TUSHARE_CALLS_PER_MINUTE, default
200: the 2,000-point tier), and a 40203 holds the interface for a whole window before the call
is sent again (dataservice/quota.py). With `wait_for_quota=False` (the `serve-data` forwarder)
the client never sleeps: it raises RateLimitedError with the time to wait, which the MCP server
passes on to its caller as a retryable error result.

Secrets: the token comes from the caller or `TUSHARE_TOKEN` and is kept out of every repr, log
line and error message, including the provider's `msg` and quoted rows (a provider may echo the
request, token included, back in either) and every relayed row (names and values), in its raw,
repr-, JSON- and URL-escaped spellings, through the one redaction function (core/redaction.py).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from typing import Any

import httpx

from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.client import ToolCallError, ToolClient
from livesearch_pipeline.core.redaction import redact, spellings
from livesearch_pipeline.dataservice.quota import QuotaLimiter, RateLimitedError, call_with_quota

logger = logging.getLogger(__name__)

TUSHARE_URL = "http://api.tushare.pro"
TOKEN_ENV = "TUSHARE_TOKEN"
CALLS_PER_MINUTE_ENV = "TUSHARE_CALLS_PER_MINUTE"
DEFAULT_CALLS_PER_MINUTE = 200
# Calls are spaced as if a minute had 61 s: request latency jitter must not push call N+1 into
# the provider's window of call 1.
QUOTA_WINDOW_S = 61.0
# "Too many calls to this interface per minute / per day".
RATE_LIMIT_CODES = frozenset({40203})
# A per-day refusal does not lift within the run: retrying it only delays the failure.
_PER_DAY_MARKERS = ("每天", "每日", "per day")
CREDENTIAL_ARG_NAMES = ("token", "api_key", "apikey", "password", "secret")
REDACTED = "***"
MAX_QUOTED_CHARS = 300  # of a malformed row quoted in an error message

_shared_limiters: dict[str, QuotaLimiter] = {}
_shared_limiters_lock = threading.Lock()


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


def calls_per_minute_from_env() -> int:
    text = os.environ.get(CALLS_PER_MINUTE_ENV, "").strip()
    if not text:
        return DEFAULT_CALLS_PER_MINUTE
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{CALLS_PER_MINUTE_ENV} must be a positive whole number of calls per minute, got {text!r}")
    return int(text)


def shared_limiter(url: str, token: str, calls_per_minute: int) -> QuotaLimiter:
    """The process-wide limiter of one token at one endpoint (the quota is the account's, not a
    client's). Two clients asking for different rates get the stricter one."""
    key = hashlib.sha256(f"{url}\0{token}".encode()).hexdigest()
    with _shared_limiters_lock:
        limiter = _shared_limiters.get(key)
        if limiter is None:
            limiter = _shared_limiters[key] = QuotaLimiter(calls_per_minute, period_s=QUOTA_WINDOW_S)
        elif limiter.calls_per_period is None or calls_per_minute < limiter.calls_per_period:
            limiter.calls_per_period = calls_per_minute
        return limiter


class TushareClient(ToolClient):
    """A ToolClient over Tushare Pro; `async with` closes its HTTP connection pool at the end."""

    def __init__(
        self,
        token: str | None = None,
        *,
        url: str = TUSHARE_URL,
        catalog: Catalog | None = None,
        timeout_s: float = 30.0,
        calls_per_minute: int | None = None,
        limiter: QuotaLimiter | None = None,
        wait_for_quota: bool = True,
        rate_limit_retries: int = 3,
    ) -> None:
        """`catalog`: the tool surface to accept (only its data tools are forwarded); without it
        every api_name is forwarded. `calls_per_minute`: the account's per-interface quota
        (default ${TUSHARE_CALLS_PER_MINUTE} or 200). `limiter`: replaces the process-wide one
        (tests inject a clock and a sleep). `wait_for_quota=False`: raise RateLimitedError
        instead of waiting (a server passing the wait on to its callers). `rate_limit_retries`:
        40203 refusals of one call waited out before it fails."""
        token = token if token is not None else os.environ.get(TOKEN_ENV)
        if not token:
            raise ValueError(f"a Tushare Pro token is needed: set {TOKEN_ENV} or pass token=")
        if rate_limit_retries < 0:
            raise ValueError(f"rate_limit_retries must be >= 0, got {rate_limit_retries}")
        self._token = _Secret(token)
        self._spellings = tuple(_Secret(s) for s in spellings(token))
        self._url = url
        self._catalog = catalog
        self._timeout_s = timeout_s
        if limiter is None:
            rate = calls_per_minute if calls_per_minute is not None else calls_per_minute_from_env()
            limiter = shared_limiter(url, token, rate)
        self._limiter = limiter
        self._wait_for_quota = wait_for_quota
        self._rate_limit_retries = rate_limit_retries
        self._http: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        return f"TushareClient(url={self._url!r}, token={REDACTED}, limiter={self._limiter!r})"

    @property
    def identity(self) -> str:
        return f"tushare-pro {self._url}"

    @property
    def limiter(self) -> QuotaLimiter:
        return self._limiter

    async def __aenter__(self) -> TushareClient:
        self._http = httpx.AsyncClient(timeout=self._timeout_s)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # -- secrets

    def _redact(self, text: str) -> str:
        return redact(text, (self._token.reveal(),), marker=REDACTED)

    def _scrub(self, value: Any) -> Any:
        """A relayed value without the token: a provider may echo the request back in a row."""
        if isinstance(value, str):
            return self._redact(value) if any(s.reveal() in value for s in self._spellings) else value
        if isinstance(value, list):
            return [self._scrub(v) for v in value]
        if isinstance(value, dict):
            return {self._scrub(k): self._scrub(v) for k, v in value.items()}
        return value

    def _quote(self, value: Any) -> str:
        """`value` for an error message: redacted first, then shortened (a cut made first could
        leave a partial token that no longer matches)."""
        text = self._redact(repr(value))
        return text if len(text) <= MAX_QUOTED_CHARS else text[:MAX_QUOTED_CHARS] + f"... ({len(text)} chars)"

    def _error(self, name: str, message: str, *, transient: bool = False) -> ToolCallError:
        return ToolCallError(name, self._redact(message), transient=transient)

    # -- calls

    def _request_body(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        credentials = [k for k in arguments if k.lower() in CREDENTIAL_ARG_NAMES]
        if credentials:
            raise ToolCallError(name, f"credentials are never tool arguments (got {', '.join(credentials)}); set {TOKEN_ENV}")
        if self._catalog is not None:
            meta = self._catalog.get(name)
            if meta is None or not meta.is_provider_tool:
                raise ToolCallError(name, f"not a data tool of the forwarded surface ({self._catalog.service})")
        fields = arguments.get("fields")
        if fields is not None and not isinstance(fields, str):
            raise ToolCallError(name, f"argument 'fields' must be a comma-separated string, got {type(fields).__name__}")
        params = {k: v for k, v in arguments.items() if k != "fields"}
        return {"api_name": name, "token": self._token.reveal(), "params": params, "fields": fields or ""}

    @property
    def _quota_hint(self) -> str:
        rate = self._limiter.calls_per_period
        return (
            f"; the limiter allows {rate} calls per minute per interface: lower {CALLS_PER_MINUTE_ENV} to your "
            "account's quota, or stop other processes using the same token"
        )

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = self._request_body(name, arguments)  # a bad request spends no quota
        if self._wait_for_quota:
            return await call_with_quota(
                self._limiter, name, lambda: self._send(name, body),
                tool=name, max_rejections=self._rate_limit_retries, hint=self._quota_hint,
            )
        wait = self._limiter.try_acquire(name)
        if wait > 0:
            raise RateLimitedError(
                name, f"the forwarder's quota of {self._limiter.calls_per_period} calls per minute to {name} is used up; "
                f"retry in {wait:.1f} s", retry_after_s=wait, upstream=False,
            )
        try:
            return await self._send(name, body)
        except RateLimitedError as exc:
            if self._limiter.block(name, exc.retry_after_s):
                logger.warning("%s: rate limited by Tushare; refusing calls to it for %.0f s", name, exc.retry_after_s or self._limiter.period_s)
            # The caller learns the hold actually imposed (the whole window when Tushare named none).
            raise RateLimitedError(name, exc.message, retry_after_s=self._limiter.wait_s(name), upstream=True) from None

    async def _send(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        if self._http is None:
            # A long-lived server (serve-data --provider tushare) has no `async with` around it.
            self._http = httpx.AsyncClient(timeout=self._timeout_s)
        try:
            response = await self._http.post(self._url, json=body)
        except httpx.TransportError as exc:
            raise self._error(name, f"Tushare unreachable: {type(exc).__name__}: {exc}", transient=True) from None
        except httpx.HTTPError as exc:
            raise self._error(name, f"Tushare request failed: {type(exc).__name__}: {exc}") from None
        if response.status_code == 429:
            raise RateLimitedError(name, "Tushare HTTP 429 (too many requests)", retry_after_s=_retry_after(response), upstream=True)
        if response.status_code != 200:
            raise ToolCallError(name, f"Tushare HTTP {response.status_code}", transient=response.status_code >= 500)
        try:
            reply = response.json()
        except ValueError:
            raise ToolCallError(name, "Tushare replied with something that is not JSON") from None
        return self._records(name, reply)

    def _records(self, name: str, reply: Any) -> dict[str, Any]:
        if not isinstance(reply, dict) or "code" not in reply:
            raise ToolCallError(name, "Tushare reply has no 'code'")
        code = reply["code"]
        if code != 0:
            message = self._redact(str(reply.get("msg") or "no message"))
            text = f"Tushare error {self._quote(code)}: {message}"
            rate_limited = isinstance(code, int) and code in RATE_LIMIT_CODES
            if rate_limited and not any(marker in message.lower() for marker in _PER_DAY_MARKERS):
                # No retry time in the reply: the whole window (the limiter's default) is waited.
                raise RateLimitedError(name, text, retry_after_s=None, upstream=True)
            if rate_limited:
                text += " (a per-day quota: it does not lift within this run)"
            raise ToolCallError(name, text, transient=False)
        data = reply.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("fields"), list) or not isinstance(data.get("items"), list):
            raise ToolCallError(name, "Tushare reply has no data.fields/data.items lists")
        fields: list[Any] = data["fields"]
        if not all(isinstance(f, str) for f in fields) or len(set(fields)) != len(fields):
            raise self._error(name, f"Tushare data.fields must be distinct names, got {self._quote(fields)}")
        items = []
        for index, row in enumerate(data["items"]):
            if not isinstance(row, list) or len(row) != len(fields):
                raise ToolCallError(
                    name, f"Tushare row {index} does not match its {len(fields)} fields: {self._quote(row)}"
                )
            items.append({self._scrub(field): self._scrub(value) for field, value in zip(fields, row)})
        has_more = data.get("has_more", False)
        if not isinstance(has_more, bool):
            raise self._error(name, f"Tushare data.has_more must be true or false, got {self._quote(has_more)}")
        return {"items": items, "total": len(items), "has_more": has_more}


def _retry_after(response: httpx.Response) -> float | None:
    """A Retry-After header given in seconds (the HTTP-date form is not worth parsing here: the
    limiter then waits its whole window)."""
    text = response.headers.get("retry-after", "").strip()
    return float(text) if text.isdigit() else None
