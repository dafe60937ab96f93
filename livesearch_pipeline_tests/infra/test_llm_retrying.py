"""The retry policy of LLM calls (infra/llm.llm_retrying): which failures are retried, how long
it waits (exponential, capped, never shorter than a Retry-After), and how many attempts."""

from __future__ import annotations

import asyncio

import pytest
import tenacity

from livesearch_pipeline.infra.llm import RetryPolicy, llm_retrying


class RateLimitError(Exception):
    """Named like litellm's: `is_retryable` goes by the class name (litellm is imported lazily)."""

    def __init__(self, retry_after: str | None = None) -> None:
        super().__init__("429 rate limited")
        self.response = type("Response", (), {"headers": {"retry-after": retry_after} if retry_after else {}})()


class BadRequestError(Exception):
    pass


def _run(policy: RetryPolicy, failure: Exception) -> tuple[list[float], int]:
    slept: list[float] = []
    attempts = 0
    with pytest.raises(type(failure)):
        for attempt in llm_retrying(policy).copy(sleep=slept.append):
            with attempt:
                attempts += 1
                raise failure
    return slept, attempts


def test_rate_limits_back_off_exponentially_up_to_the_cap():
    policy = RetryPolicy(attempts=5, base_delay_s=1.0, max_delay_s=5.0)
    assert _run(policy, RateLimitError()) == ([1.0, 2.0, 4.0, 5.0], 5)


def test_a_retry_after_header_lengthens_the_wait_within_the_cap():
    assert _run(RetryPolicy(attempts=3, base_delay_s=1.0, max_delay_s=30.0), RateLimitError("12")) == ([12.0, 12.0], 3)
    assert _run(RetryPolicy(attempts=2, base_delay_s=1.0, max_delay_s=5.0), RateLimitError("12")) == ([5.0], 2)


def test_a_request_error_is_not_retried():
    assert _run(RetryPolicy(attempts=5, base_delay_s=1.0), BadRequestError("no such model")) == ([], 1)


def test_the_async_policy_is_the_same_policy():
    slept: list[float] = []
    attempts = 0

    async def record(seconds: float) -> None:
        slept.append(seconds)

    async def go() -> None:
        nonlocal attempts
        retrying = llm_retrying(RetryPolicy(attempts=3, base_delay_s=0.5, max_delay_s=30.0), tenacity.AsyncRetrying)
        async for attempt in retrying.copy(sleep=record):
            with attempt:
                attempts += 1
                raise RateLimitError()

    with pytest.raises(RateLimitError):
        asyncio.run(go())
    assert (slept, attempts) == ([0.5, 1.0], 3)
