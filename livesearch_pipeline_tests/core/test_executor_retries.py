"""The retry policy of data-service calls (core/executor.data_call_retrying): deterministic
doubling waits, transient failures only, the attempts it is given, the retries it counts."""

from __future__ import annotations

import asyncio

import pytest

from livesearch_pipeline.core.executor import ExecutionStats, ExecutorConfig, RetryableCallFailure, data_call_retrying


def _waits(config: ExecutorConfig, stats: ExecutionStats, failure: Exception) -> tuple[list[float], int]:
    """Drive the policy with attempts that always fail with `failure`: (the waits, attempts made)."""
    slept: list[float] = []
    attempts = 0

    async def record(seconds: float) -> None:
        slept.append(seconds)

    async def go() -> None:
        nonlocal attempts
        async for attempt in data_call_retrying(config, stats).copy(sleep=record):
            with attempt:
                attempts += 1
                raise failure

    with pytest.raises(type(failure)):
        asyncio.run(go())
    return slept, attempts


def test_waits_double_from_the_backoff_and_are_the_same_every_run():
    config = ExecutorConfig(retries=3, backoff_s=0.5)
    stats = ExecutionStats()
    first = _waits(config, stats, RetryableCallFailure("overloaded"))
    second = _waits(config, stats, RetryableCallFailure("overloaded"))
    # No jitter: two runs meeting the same failures wait exactly alike (reproducible runs).
    assert first == second == ([0.5, 1.0, 2.0], 4)
    assert stats.retries == 6


def test_no_retries_configured_means_one_attempt():
    stats = ExecutionStats()
    assert _waits(ExecutorConfig(retries=0, backoff_s=0.5), stats, RetryableCallFailure("down")) == ([], 1)
    assert stats.retries == 0


def test_anything_but_a_retryable_failure_is_raised_at_once():
    stats = ExecutionStats()
    assert _waits(ExecutorConfig(retries=3, backoff_s=0.5), stats, ValueError("a bug")) == ([], 1)
    assert stats.retries == 0
