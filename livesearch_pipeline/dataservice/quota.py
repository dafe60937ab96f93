"""Provider quotas: a calls-per-minute limiter shared by concurrent calls, and the retry loop
that waits for the next window when a provider answers "rate limited".

Tushare Pro meters every interface per token and minute (code 40203, "每分钟最多访问该接口N次").
Retrying such an answer after a few hundred milliseconds only burns more of the quota, so:

- `QuotaLimiter` admits at most N calls per key (one key per interface) in any window of
  `period_s`, shared by every call of a client (and, for Tushare, by every client of one token
  in the process): a call that would exceed it waits until the oldest call of the window ages
  out. A "rate limited" answer blocks the key for a whole window, so every concurrent caller
  pauses instead of each discovering the limit on its own.
- `call_with_quota` runs one call under the limiter and retries rate-limited answers after the
  block (the tenacity policy `quota_retrying`: the Retry-After a refusal names, else a whole
  window), at most `max_rejections` times for refusals by the provider itself (a quota set higher
  than the account's, or another process using the same token); waiting for our own limiter is
  queueing, not failure, and is bounded only by `max_wait_s`.

Waiting time is handed to `core.executor.extend_call_deadline`, so the executor's per-call
timeout keeps bounding the request itself, not the queue in front of it. The clock and the sleep
are injectable: tests run minutes of quota in no real time.

An MCP server that forwards to a metered provider reports a rate-limited call as a tool error
result whose `_meta[RETRY_META_KEY]` says `{"retryable": true, "reason": "rate_limited" |
"quota" | "unavailable", "retry_after_s": float | null}`; `McpToolClient` turns it back into a
`RateLimitedError` and runs the same loop on its side.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import tenacity

from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.core.executor import extend_call_deadline

logger = logging.getLogger(__name__)

RETRY_META_KEY = "livesearch/retry"
# Reasons in RETRY_META_KEY: the provider refused the call for quota; our forwarder held it back
# before sending (its own limiter); the provider is down or overloaded (retry with back-off).
RATE_LIMITED, QUOTA, UNAVAILABLE = "rate_limited", "quota", "unavailable"
RETRY_REASONS = (RATE_LIMITED, QUOTA, UNAVAILABLE)

T = TypeVar("T")


class RateLimitedError(ToolCallError):
    """A call refused for quota: the request is fine, send it again after `retry_after_s`.

    `upstream`: the provider itself refused it (Tushare 40203), as opposed to a limiter of ours
    holding it back before anything was sent."""

    def __init__(self, tool: str, message: str, *, retry_after_s: float | None, upstream: bool) -> None:
        super().__init__(tool, message, transient=True)
        self.retry_after_s = retry_after_s
        self.upstream = upstream


def retry_meta(exc: ToolCallError) -> dict[str, Any]:
    """The `_meta[RETRY_META_KEY]` entry describing how a caller may retry `exc`."""
    if isinstance(exc, RateLimitedError):
        reason = RATE_LIMITED if exc.upstream else QUOTA
        return {"retryable": True, "reason": reason, "retry_after_s": exc.retry_after_s}
    return {"retryable": exc.transient, "reason": UNAVAILABLE if exc.transient else None, "retry_after_s": None}


def error_from_retry_meta(tool: str, message: str, meta: Any) -> ToolCallError:
    """The ToolCallError an MCP error result stands for, given its `_meta[RETRY_META_KEY]`."""
    if meta is None:
        return ToolCallError(tool, message, transient=False)
    if not isinstance(meta, dict) or not isinstance(meta.get("retryable"), bool):
        return ToolCallError(tool, f"malformed _meta[{RETRY_META_KEY!r}] on the error result: {meta!r}; message: {message}")
    reason, after = meta.get("reason"), meta.get("retry_after_s")
    if reason is not None and reason not in RETRY_REASONS:
        return ToolCallError(tool, f"unknown _meta[{RETRY_META_KEY!r}].reason {reason!r} (expected one of {', '.join(RETRY_REASONS)}); message: {message}")
    if after is not None and (isinstance(after, bool) or not isinstance(after, (int, float)) or not math.isfinite(after) or after < 0):
        return ToolCallError(tool, f"_meta[{RETRY_META_KEY!r}].retry_after_s must be a non-negative number, got {after!r}; message: {message}")
    if meta["retryable"] and reason in (RATE_LIMITED, QUOTA):
        return RateLimitedError(tool, message, retry_after_s=None if after is None else float(after), upstream=reason == RATE_LIMITED)
    return ToolCallError(tool, message, transient=meta["retryable"])


@dataclass
class _Window:
    admitted: deque[float] = field(default_factory=deque)  # admission times inside the last period
    blocked_until: float = -math.inf


class QuotaLimiter:
    """At most `calls_per_period` admissions per key in any window of `period_s` seconds.

    Thread-safe (a plain lock guards the bookkeeping; nobody sleeps while holding it), so one
    limiter can serve several event loops of a process. `calls_per_period=None`: no cap, only
    the blocks that rate-limited answers impose.
    """

    def __init__(
        self,
        calls_per_period: int | None,
        *,
        period_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        if calls_per_period is not None and calls_per_period < 1:
            raise ValueError(f"calls_per_period must be >= 1 (or None for no cap), got {calls_per_period}")
        if period_s <= 0:
            raise ValueError(f"period_s must be > 0, got {period_s}")
        self.calls_per_period = calls_per_period
        self.period_s = period_s
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.Lock()
        self._windows: dict[str, _Window] = {}

    def __repr__(self) -> str:
        return f"QuotaLimiter(calls_per_period={self.calls_per_period}, period_s={self.period_s:g})"

    def _wait_locked(self, window: _Window, now: float) -> float:
        while window.admitted and window.admitted[0] <= now - self.period_s:
            window.admitted.popleft()
        wait = window.blocked_until - now
        if self.calls_per_period is not None and len(window.admitted) >= self.calls_per_period:
            wait = max(wait, window.admitted[-self.calls_per_period] + self.period_s - now)
        return max(wait, 0.0)

    def wait_s(self, key: str) -> float:
        """Seconds until a call for `key` could be admitted (admits nothing)."""
        with self._lock:
            return self._wait_locked(self._windows.setdefault(key, _Window()), self.clock())

    def try_acquire(self, key: str) -> float:
        """Admit one call now (returns 0.0) or return the seconds until it could be admitted."""
        with self._lock:
            window = self._windows.setdefault(key, _Window())
            now = self.clock()
            wait = self._wait_locked(window, now)
            if wait == 0.0 and self.calls_per_period is not None:  # without a cap nothing needs counting
                window.admitted.append(now)
            return wait

    async def acquire(self, key: str) -> float:
        """Wait until one call may go, admit it; return the seconds waited."""
        waited = 0.0
        while (wait := self.try_acquire(key)) > 0.0:
            # Re-checked after the sleep: a block may have been imposed meanwhile, or other
            # waiters may have taken the freed slots.
            extend_call_deadline(wait)
            await self.sleep(wait)
            waited += wait
        return waited

    def block(self, key: str, seconds: float | None = None) -> bool:
        """Admit nothing for `key` during the next `seconds` (default: a whole period).

        Returns True when this starts a new block (False when one was already running), so that
        a burst of concurrent refusals is logged once."""
        seconds = self.period_s if seconds is None else seconds
        with self._lock:
            window = self._windows.setdefault(key, _Window())
            now = self.clock()
            fresh = window.blocked_until <= now
            window.blocked_until = max(window.blocked_until, now + seconds)
            return fresh


@dataclass
class _QuotaCall:
    """What one call under `call_with_quota` has spent: provider refusals, seconds queued."""

    rejections: int = 0
    waited_s: float = 0.0


def quota_retrying(limiter: QuotaLimiter, key: str, spent: _QuotaCall, *, tool: str, max_rejections: int,
                   max_wait_s: float) -> tenacity.AsyncRetrying:
    """The retry policy of metered-provider calls: rate-limited answers only, each retried after
    the time the refusal names (its Retry-After; a whole window when it names none); at most
    `max_rejections` refusals by the provider itself and `max_wait_s` of waiting in all.

    The wait is a hold on `key` in the shared limiter, not a private sleep: the next attempt's
    `limiter.acquire` waits it out, with every concurrent caller of the key, and hands the time
    to the executor's call deadline. So tenacity's own sleep has nothing left to do."""

    def retry_after(state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception()
        return exc.retry_after_s if exc.retry_after_s is not None else limiter.period_s

    def give_up(state: tenacity.RetryCallState) -> bool:
        return spent.rejections > max_rejections or spent.waited_s + state.upcoming_sleep > max_wait_s

    def hold(state: tenacity.RetryCallState) -> None:
        exc, after = state.outcome.exception(), state.upcoming_sleep
        if limiter.block(key, after) and exc.upstream:
            logger.warning("%s: rate limited by the provider; holding calls to %s for %.0f s", tool, key, after)

    async def waited_in_acquire(_seconds: float) -> None:
        return None

    return tenacity.AsyncRetrying(
        retry=tenacity.retry_if_exception_type(RateLimitedError),
        wait=retry_after,
        stop=give_up,
        before_sleep=hold,
        sleep=waited_in_acquire,
        reraise=True,
    )


async def call_with_quota(
    limiter: QuotaLimiter,
    key: str,
    send: Callable[[], Awaitable[T]],
    *,
    tool: str,
    max_rejections: int = 3,
    max_wait_s: float = 3600.0,
    hint: str = "",
) -> T:
    """`await send()` once admitted by `limiter`; on RateLimitedError block `key` for the time
    the refusal names (a whole period when it names none) and send again (`quota_retrying`).

    Raises a non-transient ToolCallError when the provider refused the call more than
    `max_rejections` times, or when the call has waited more than `max_wait_s` in all: retrying
    that later within the same run only burns quota. `hint` ends those messages (what to change).
    """
    spent = _QuotaCall()
    try:
        async for attempt in quota_retrying(limiter, key, spent, tool=tool, max_rejections=max_rejections,
                                            max_wait_s=max_wait_s):
            with attempt:
                spent.waited_s += await limiter.acquire(key)
                try:
                    return await send()
                except RateLimitedError as exc:
                    spent.rejections += exc.upstream
                    raise
    except RateLimitedError as exc:
        if spent.rejections > max_rejections:
            raise ToolCallError(
                tool, f"{exc.message}; still refused after waiting out {max_rejections} rate-limit "
                f"window(s){hint}", transient=False,
            ) from None
        raise ToolCallError(
            tool, f"{exc.message}; gave up after waiting {spent.waited_s:.0f} s for quota (limit {max_wait_s:.0f} s){hint}",
            transient=False,
        ) from None
    raise AssertionError("unreachable: the retry loop returns or raises")
