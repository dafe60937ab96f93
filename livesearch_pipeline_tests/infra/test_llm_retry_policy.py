"""RetryPolicy refuses settings under which `complete`/`acomplete` could not make a single call."""

from __future__ import annotations

import pytest

from livesearch_pipeline.infra.llm import LLMError, RetryPolicy, complete


@pytest.mark.parametrize("attempts", [0, -1])
def test_retry_policy_needs_at_least_one_attempt(attempts: int) -> None:
    with pytest.raises(ValueError, match="attempts must be at least 1"):
        RetryPolicy(attempts=attempts)


def test_retry_policy_rejects_negative_delays() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        RetryPolicy(base_delay_s=-1.0)


def test_a_single_attempt_reports_the_failure_once() -> None:
    # litellm's mock raises a non-retryable error for this content; one attempt, one message.
    with pytest.raises(LLMError, match=r"failed after 1 attempt\(s\)"):
        complete([{"role": "user", "content": "hi"}], model="openai/gpt-4o-mini",
                 mock_response=Exception("bad request"), retry=RetryPolicy(attempts=1))
