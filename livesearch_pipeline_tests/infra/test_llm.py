from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from livesearch_pipeline.infra.llm import (
    LLMError,
    LLMSettings,
    RetryPolicy,
    ToolCall,
    acomplete,
    build_request,
    complete,
    litellm_module,
    request_key,
)
from livesearch_pipeline_tests.evaluation.llm_fakes import scripted_chat_server

FAST = RetryPolicy(attempts=3, base_delay_s=0.0, max_delay_s=0.0)
MODEL = "openai/scripted"
HELLO = [{"role": "user", "content": "hello"}]


def _cache_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json"))


def test_settings_from_env_reads_livesearch_variables() -> None:
    settings = LLMSettings.from_env(
        {
            "LIVESEARCH_LLM_MODEL": "openai/gpt-4o-mini",
            "LIVESEARCH_JUDGE_MODEL": " anthropic/claude-3-5-haiku ",
            "LIVESEARCH_LLM_API_BASE": "http://127.0.0.1:9/v1",
            "LIVESEARCH_LLM_API_KEY": "sk-secret",
        }
    )
    assert settings.model == "openai/gpt-4o-mini"
    assert settings.judge_model == "anthropic/claude-3-5-haiku"
    assert settings.api_base == "http://127.0.0.1:9/v1"
    assert settings.api_key == "sk-secret"
    assert "sk-secret" not in repr(settings)
    assert LLMSettings.from_env({"LIVESEARCH_LLM_MODEL": "  "}).model is None


@pytest.mark.slow  # imports litellm in a fresh interpreter (seconds): outside `make test-fast`
def test_litellm_module_sets_offline_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LITELLM_OFFLINE_MODE", raising=False)
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    litellm_module()
    assert os.environ["LITELLM_OFFLINE_MODE"] == "true"
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def test_request_key_is_canonical_and_excludes_secrets() -> None:
    first = build_request(
        [{"role": "user", "content": "x"}], model="m", tools=None,
        response_format={"type": "json_object", "b": 1}, api_base=None, max_tokens=None,
    )
    reordered = build_request(
        [{"content": "x", "role": "user"}], model="m", tools=None,
        response_format={"b": 1, "type": "json_object"}, api_base=None, max_tokens=None,
    )
    other_model = build_request(
        [{"role": "user", "content": "x"}], model="m2", tools=None, response_format=None, api_base=None, max_tokens=None
    )
    assert request_key(first) == request_key(reordered)
    assert request_key(first) != request_key(other_model)
    assert first["temperature"] == 0.0
    assert "api_key" not in first


def test_missing_model_or_messages_is_a_clear_error() -> None:
    with pytest.raises(LLMError, match="no model"):
        complete(HELLO, model="")
    with pytest.raises(LLMError, match="no messages"):
        complete([], model=MODEL)


def test_mock_response_never_touches_the_cache(tmp_path: Path) -> None:
    response = complete(HELLO, model="openai/gpt-4o-mini", mock_response="canned", cache_dir=tmp_path)
    assert response.content == "canned"
    assert not response.cached
    assert _cache_files(tmp_path) == []


def test_disk_cache_serves_repeated_requests_without_calling_the_server(tmp_path: Path) -> None:
    with scripted_chat_server("first answer", "second answer") as server:
        options = dict(model=MODEL, api_base=server.api_base, api_key="sk-test-key", cache_dir=tmp_path, retry=FAST)
        fresh = complete(HELLO, **options)
        again = complete(HELLO, **options)
        different = complete([{"role": "user", "content": "other"}], **options)
    assert (fresh.content, fresh.cached) == ("first answer", False)
    assert (again.content, again.cached) == ("first answer", True)
    assert different.content == "second answer"
    assert len(server.requests) == 2
    assert server.requests[0]["temperature"] == 0
    files = _cache_files(tmp_path)
    assert len(files) == 2
    entry = json.loads(files[0].read_text(encoding="utf-8"))
    assert set(entry) == {"version", "key", "request", "response"}
    assert "sk-test-key" not in "".join(f.read_text(encoding="utf-8") for f in files)
    assert not list(tmp_path.rglob("*.tmp"))


def test_rate_limit_is_retried_with_backoff() -> None:
    with scripted_chat_server(429, 429, "finally") as server:
        response = complete(HELLO, model=MODEL, api_base=server.api_base, api_key="k", retry=FAST)
    assert response.content == "finally"
    assert len(server.requests) == 3


def test_retries_exhausted_raise_llm_error() -> None:
    with scripted_chat_server(503, 503, 503, "never reached") as server:
        with pytest.raises(LLMError, match="after 3 attempt"):
            complete(HELLO, model=MODEL, api_base=server.api_base, api_key="k", retry=FAST)
    assert len(server.requests) == 3


def test_bad_request_is_not_retried() -> None:
    with scripted_chat_server(400, "never reached") as server:
        with pytest.raises(LLMError, match="after 1 attempt"):
            complete(HELLO, model=MODEL, api_base=server.api_base, api_key="k", retry=FAST)
    assert len(server.requests) == 1


def test_corrupt_cache_entry_is_an_error_naming_the_file(tmp_path: Path) -> None:
    request = build_request(HELLO, model=MODEL, tools=None, response_format=None, api_base=None, max_tokens=None)
    key = request_key(request)
    path = tmp_path / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(LLMError, match=key):
        complete(HELLO, model=MODEL, cache_dir=tmp_path)


def test_tool_calls_are_returned_and_replayable() -> None:
    tools = [{"type": "function", "function": {"name": "web_search", "parameters": {"type": "object"}}}]
    with scripted_chat_server({"tool_calls": [{"name": "web_search", "arguments": {"q": "贵州茅台 close"}}]}) as server:
        response = complete(HELLO, model=MODEL, api_base=server.api_base, api_key="k", tools=tools, retry=FAST)
    assert server.requests[0]["tools"][0]["function"]["name"] == "web_search"
    (call,) = response.tool_calls
    assert call.name == "web_search"
    assert call.parsed_arguments() == {"q": "贵州茅台 close"}
    message = response.assistant_message()
    assert message["tool_calls"][0]["function"]["name"] == "web_search"
    assert response.finish_reason == "tool_calls"


def test_malformed_tool_arguments_are_reported() -> None:
    with pytest.raises(LLMError, match="malformed JSON"):
        ToolCall(id="c1", name="fetch_page", arguments="{url:").parsed_arguments()


def test_acomplete_shares_the_cache_with_complete(tmp_path: Path) -> None:
    with scripted_chat_server("async answer") as server:
        options = dict(model=MODEL, api_base=server.api_base, api_key="k", cache_dir=tmp_path, retry=FAST)
        first = asyncio.run(acomplete(HELLO, **options))
        second = complete(HELLO, **options)
    assert first.content == second.content == "async answer"
    assert second.cached
    assert len(server.requests) == 1
