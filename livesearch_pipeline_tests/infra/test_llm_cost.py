"""Cost from litellm's offline price map (issue 21): known models priced, local or unknown ones None."""

from __future__ import annotations

import pytest

from livesearch_pipeline.infra.llm import LLMConfigurationError, configuration_error, token_cost_usd


def test_a_priced_model_costs_its_tokens_and_local_or_unknown_models_cost_none() -> None:
    cost = token_cost_usd("openai/gpt-4o-mini", 1_000_000, 1_000_000)
    assert cost is not None and cost > 0
    assert token_cost_usd("openai/gpt-4o-mini", 2_000_000, 0) == pytest.approx(2 * token_cost_usd("openai/gpt-4o-mini", 1_000_000, 0))
    assert token_cost_usd("openai/gpt-4o-mini", 1000, 10, api_base="http://127.0.0.1:8000/v1") is None
    assert token_cost_usd("openai/no-such-model-xyz", 1000, 10) is None
    assert token_cost_usd("mockllm/model", 1000, 10) is None


def test_transient_errors_are_not_configuration_errors() -> None:
    class RateLimitError(Exception):
        pass

    assert configuration_error(RateLimitError("slow down"), model="m", api_base=None) is None
    assert isinstance(configuration_error(Exception("Missing credentials. Please pass an `api_key`"), model="m",
                                          api_base=None), LLMConfigurationError)
