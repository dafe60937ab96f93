"""Shared LLM plumbing over litellm: configuration, a request-hash disk cache, retries.

Every LLM call of the project (the judge, the agents, the construction verbalizer) goes through
`complete` / `acomplete` so that all of them share the same guarantees:

- litellm is imported lazily, after its offline defaults are set (it reads them at import time
  and would otherwise fetch a cost map from the network; importing it also takes seconds, which
  the deterministic evaluator must not pay).
- temperature 0, always: benchmark answers and verdicts must be reproducible.
- a disk cache keyed by the sha256 of the canonical JSON of the request (model, messages, tools,
  response format, sampling settings, endpoint, and a caller's `cache_context`, such as the gold a
  judgement was made against; never the API key). litellm's own cache is not used because it is
  broken in the pinned version. Entries are written atomically and hold the full request beside the
  response: an entry is served only to the very request it holds (its key, its request and the
  request's hash all agree), so a file copied under another request's name, or planted with a
  request it was not the answer to, is never an answer. A corrupt entry is an error, not a silent
  miss. The cache lives under the data root's `cache/`, which only the pipeline writes (docs/
  operations.md's threat model; run writers refuse it).
- retries (tenacity, `llm_retrying`) with exponential backoff on rate limits, timeouts and
  server-side failures only; any other error (bad request, authentication, ...) is raised at
  once as `LLMError`.
- fail fast on configuration: an error every call would hit — missing or refused credentials,
  a model the provider does not know, an endpoint that refuses connections before any call to
  it succeeded — is raised at once as `LLMConfigurationError`, one line naming the fix, so a
  run stops at its first question instead of recording the same error on every one.
- an endpoint given by `api_base` is always handed its key explicitly: the key configured for it,
  else a placeholder (local servers such as vLLM or llama.cpp need none; the OpenAI client
  refuses to send a request without one), never a provider variable such as OPENAI_API_KEY read
  from the environment by litellm.
- an agent's own key comes only from a variable named for agent keys
  (`LIVESEARCH_AGENT_<NAME>_KEY`, `agent_key_from_env`), never from one the project uses for
  anything else (the data-service token, the database password, the operator's key); a missing
  or empty one is an error naming it.

Configuration: Dagster code gets it from the `llm` resource (`defs/resources.LLMResource`); the
command line reads LIVESEARCH_LLM_MODEL, LIVESEARCH_LLM_API_BASE, LIVESEARCH_LLM_API_KEY and
LIVESEARCH_JUDGE_MODEL when a command runs (`LLMSettings.from_env`), never at import. Both use
one cache folder, `<data root>/cache/llm` (`DataPaths.llm_cache`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tenacity

from livesearch_pipeline.core.qid import canonical_json
from livesearch_pipeline.core.snapshot import write_atomic
from livesearch_pipeline.core.untrusted import UntrustedFileError, read_untrusted

LITELLM_ENV_DEFAULTS = {"LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
TEMPERATURE = 0.0
CACHE_FORMAT_VERSION = 1
CACHE_CONTEXT = "cache_context"  # the request's field that keys the cache and never reaches the model
MAX_CACHE_ENTRY_BYTES = 64 * 1024 * 1024

# Exception class names (in litellm) that mean "try again later" rather than "this request is wrong".
_RETRYABLE_ERRORS = (
    "RateLimitError",
    "Timeout",
    "APIConnectionError",
    "ServiceUnavailableError",
    "InternalServerError",
    "BadGatewayError",
)


class LLMError(RuntimeError):
    """An LLM call failed for good (non-retryable error, or retries exhausted)."""


class LLMConfigurationError(LLMError):
    """An error every call with this configuration would hit; the message names the fix."""


AGENT_KEY_PREFIX = "LIVESEARCH_AGENT_"
AGENT_KEY_SUFFIX = "_KEY"
_AGENT_KEY_ENV = re.compile(r"^LIVESEARCH_AGENT_[A-Z0-9_]+_KEY$")


def check_agent_key_env(name: str, *, owner: str) -> None:
    """ValueError unless `name` is a variable named for an agent's key (LIVESEARCH_AGENT_<X>_KEY).

    Every other variable may hold a secret the project uses for something else (TUSHARE_TOKEN,
    LIVESEARCH_PG_PASSWORD, LIVESEARCH_DATA_SERVICE_TOKEN, the operator's LIVESEARCH_LLM_API_KEY,
    a provider's OPENAI_API_KEY): an endpoint named by a registry entry or a command line never
    receives it."""
    if not _AGENT_KEY_ENV.fullmatch(name or ""):
        raise ValueError(
            f"{owner}: api_key_env {name!r} is not a variable named for an agent key; fix: put this "
            f"endpoint's key in {AGENT_KEY_PREFIX}<NAME>{AGENT_KEY_SUFFIX} (e.g. LIVESEARCH_AGENT_MYLAB_KEY) "
            "and name that variable")


def agent_key_from_env(name: str, *, owner: str, environ: Mapping[str, str] | None = None) -> str:
    """The key in the agent-key variable `name`; ValueError naming the variable when it is not one
    (`check_agent_key_env`), unset or empty (litellm would fall back to a provider variable)."""
    check_agent_key_env(name, owner=owner)
    env = os.environ if environ is None else environ
    value = env.get(name, "").strip()
    if not value:
        raise ValueError(
            f"{owner}: ${name} is {'empty' if name in env else 'not set'}; fix: export {name} with this "
            "endpoint's key (any placeholder for a local server that needs none)")
    return value


# Sent as the key to an `api_base` when none is configured: such local servers
# ignore it, and the OpenAI client will not send a request without one.
NO_KEY_FOR_LOCAL_ENDPOINT = "no-key-configured"
_AUTH_ERRORS = ("AuthenticationError", "PermissionDeniedError")
_UNKNOWN_MODEL_ERRORS = ("NotFoundError",)
_CONNECTION_REFUSED = ("connection refused", "name or service not known", "nodename nor servname",
                       "all connection attempts failed", "temporary failure in name resolution")
# (model, api_base) pairs that answered once in this process: a later connection error is transient.
_REACHED: set[tuple[str, str | None]] = set()


def _one_line(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _refused_connection(exc: BaseException) -> bool:
    """Whether the error chain holds a refused or unresolvable connection (litellm reports one as
    an InternalServerError "Connection error.", with httpx's ConnectError as its cause)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (ConnectionRefusedError, socket.gaierror)):
            return True
        if type(current).__name__ == "ConnectError" and any(
                marker in str(current).casefold() for marker in _CONNECTION_REFUSED):
            return True
        current = current.__cause__ or current.__context__
    return False


def configuration_error(exc: BaseException, *, model: str, api_base: str | None) -> LLMConfigurationError | None:
    """The configuration error `exc` is (every call would fail alike), or None for any other."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    message = str(exc).casefold()
    where = api_base or "the provider"
    if names & set(_AUTH_ERRORS) or "missing credentials" in message or "api_key client option" in message:
        return LLMConfigurationError(
            f"{model}: no usable credentials for {where} ({_one_line(exc)}); fix: set LIVESEARCH_LLM_API_KEY "
            "for LIVESEARCH_LLM_API_BASE (or, without an api_base, the provider's own variable such as "
            "OPENAI_API_KEY), or the agent's LIVESEARCH_AGENT_<NAME>_KEY for its own endpoint")
    if names & set(_UNKNOWN_MODEL_ERRORS) or "llm provider not provided" in message or "model_not_found" in message:
        return LLMConfigurationError(
            f"{model}: {where} does not know this model ({_one_line(exc)}); fix: pass --model as a litellm "
            "model string <provider>/<model> that the endpoint serves (e.g. openai/gpt-4o-mini)")
    if (model, api_base) not in _REACHED and _refused_connection(exc):
        return LLMConfigurationError(
            f"{model}: cannot connect to {where} ({_one_line(exc)}); fix: start the server or correct "
            "--api-base / LIVESEARCH_LLM_API_BASE")
    return None


def token_cost_usd(model: str, prompt_tokens: int, completion_tokens: int, *, api_base: str | None = None) -> float | None:
    """The tokens' price in USD from litellm's (offline) price map; None when it cannot be known.

    None for a model on a self-hosted or proxy endpoint (`api_base`: the map prices the
    provider's own API, not someone's server) and for a model the map does not list.
    """
    if api_base is not None:
        return None
    try:
        prompt_cost, completion_cost = litellm_module().cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    except Exception:  # litellm raises its own (varied) errors for unmapped models
        return None
    total = float(prompt_cost) + float(completion_cost)
    return total if total >= 0 else None


def litellm_module() -> Any:
    """Import litellm with the project's offline defaults in place (they are read at import)."""
    for name, value in LITELLM_ENV_DEFAULTS.items():
        os.environ.setdefault(name, value)
    import litellm

    # Its "Give Feedback" banner on every exception is noise in our logs; errors still raise.
    litellm.suppress_debug_info = True
    return litellm


@dataclass(frozen=True)
class LLMSettings:
    """Which models and endpoint to use; `from_env` reads the LIVESEARCH_* variables."""

    model: str | None = None
    judge_model: str | None = None
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LLMSettings:
        source = os.environ if env is None else env

        def read(name: str) -> str | None:
            value = source.get(name, "").strip()
            return value or None

        return cls(
            model=read("LIVESEARCH_LLM_MODEL"),
            judge_model=read("LIVESEARCH_JUDGE_MODEL"),
            api_base=read("LIVESEARCH_LLM_API_BASE"),
            api_key=read("LIVESEARCH_LLM_API_KEY"),
        )


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: delay n = min(max_delay_s, base_delay_s * 2**n), `attempts` in all."""

    attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"RetryPolicy.attempts must be at least 1, got {self.attempts}")
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError(
                f"RetryPolicy delays must not be negative, got base_delay_s={self.base_delay_s}, "
                f"max_delay_s={self.max_delay_s}"
            )

    def delay(self, failed_attempts: int) -> float:
        return min(self.max_delay_s, self.base_delay_s * (2 ** (failed_attempts - 1)))


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model (OpenAI tools format)."""

    id: str
    name: str
    arguments: str  # the JSON text the model produced, unparsed

    def parsed_arguments(self) -> dict[str, Any]:
        try:
            parsed = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise LLMError(f"tool call {self.name!r} ({self.id}) has malformed JSON arguments: {exc}") from exc
        if not isinstance(parsed, dict):
            raise LLMError(f"tool call {self.name!r} ({self.id}) arguments are not a JSON object")
        return parsed


@dataclass(frozen=True)
class LLMResponse:
    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    cache_key: str

    def assistant_message(self) -> dict[str, Any]:
        """The reply as an OpenAI-format message, ready to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message

    def to_payload(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls],
            "finish_reason": self.finish_reason,
            "model": self.model,
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens},
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], *, cached: bool, cache_key: str) -> LLMResponse:
        usage = payload.get("usage") or {}
        return cls(
            content=payload.get("content"),
            tool_calls=tuple(
                ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"])
                for c in payload.get("tool_calls") or ()
            ),
            finish_reason=payload.get("finish_reason"),
            model=str(payload.get("model") or ""),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            cached=cached,
            cache_key=cache_key,
        )


def request_key(request: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a request; the cache key."""
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class ResponseCache:
    """One JSON file per request under `root/<first two hex>/<key>.json`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path_for(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """The stored response to `request` (whose key is `key`), or None when none is stored. An entry
        is used only when it holds exactly this request: one that names another key or request, or
        whose request does not hash to its key, is an error naming it (never an answer)."""
        path = self.path_for(key)
        if not os.path.lexists(path):
            return None
        try:
            entry = json.loads(read_untrusted(path, max_bytes=MAX_CACHE_ENTRY_BYTES, what="LLM cache entry"))
            response, stored_key, stored_request = entry["response"], entry["key"], entry["request"]
        except (UntrustedFileError, ValueError, KeyError, TypeError) as exc:
            raise LLMError(f"corrupt LLM cache entry {path}: {exc}; delete it to re-ask") from exc
        if not isinstance(response, dict):
            raise LLMError(f"corrupt LLM cache entry {path}: 'response' is not an object")
        if (stored_key != key or not isinstance(stored_request, dict) or request_key(stored_request) != key
                or canonical_json(stored_request) != canonical_json(request)):
            raise LLMError(f"LLM cache entry {path} does not hold the request it is filed under (a copied or planted "
                           "entry): it is never used as an answer; delete it to re-ask")
        return response

    def put(self, key: str, request: Mapping[str, Any], response: Mapping[str, Any]) -> None:
        entry = {"version": CACHE_FORMAT_VERSION, "key": key, "request": request, "response": response}
        write_atomic(self.path_for(key), (canonical_json(entry) + "\n").encode("utf-8"))


def build_request(
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str,
    tools: Sequence[Mapping[str, Any]] | None,
    response_format: Mapping[str, Any] | None,
    api_base: str | None,
    max_tokens: int | None,
    cache_context: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The part of a call that determines its answer (and so its cache key); no secrets.
    `cache_context`: what else the answer is for (the gold a judgement is made against), part of the
    key and never sent to the model."""
    if not model:
        raise LLMError("no model given: set --model/--judge-model or LIVESEARCH_LLM_MODEL")
    if not messages:
        raise LLMError("no messages to send to the model")
    request: dict[str, Any] = {
        "model": model,
        "messages": [dict(m) for m in messages],
        "temperature": TEMPERATURE,
    }
    if tools:
        request["tools"] = [dict(t) for t in tools]
    if response_format:
        request["response_format"] = dict(response_format)
    if api_base:
        request["api_base"] = api_base
    if max_tokens is not None:
        request["max_tokens"] = max_tokens
    if cache_context:
        request[CACHE_CONTEXT] = dict(cache_context)
    return request


def _litellm_kwargs(
    request: Mapping[str, Any], *, api_key: str | None, timeout_s: float, mock_response: Any
) -> dict[str, Any]:
    kwargs = dict(request)
    kwargs.pop(CACHE_CONTEXT, None)  # the cache's, not the model's
    # Our own retry loop owns retries; the SDK's would hide rate limits and double the waits.
    kwargs["num_retries"] = 0
    kwargs["max_retries"] = 0
    kwargs["timeout"] = timeout_s
    if api_key:
        kwargs["api_key"] = api_key
    elif request.get("api_base"):
        # An explicit endpoint always gets its key explicitly: litellm would otherwise read the
        # provider's variable (OPENAI_API_KEY, ...) from the environment and send it there.
        kwargs["api_key"] = NO_KEY_FOR_LOCAL_ENDPOINT
    if mock_response is not None:
        kwargs["mock_response"] = mock_response
    return kwargs


def _response_payload(raw: Any) -> dict[str, Any]:
    choices = getattr(raw, "choices", None)
    if not choices:
        raise LLMError(f"the model returned no choices: {raw!r}"[:500])
    choice = choices[0]
    message = choice.message
    tool_calls = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or ()):
        function = call.function
        tool_calls.append(
            {
                "id": call.id or f"call_{index}",
                "name": function.name,
                "arguments": function.arguments or "{}",
            }
        )
    usage = getattr(raw, "usage", None)
    return {
        "content": message.content,
        "tool_calls": tool_calls,
        "finish_reason": choice.finish_reason,
        "model": getattr(raw, "model", None) or "",
        "usage": {
            "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
            "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
        },
    }


def is_retryable(exc: BaseException) -> bool:
    return any(cls.__name__ in _RETRYABLE_ERRORS for cls in type(exc).__mro__)


def _retry_after_s(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _delay_for(exc: BaseException, failed_attempts: int, retry: RetryPolicy) -> float:
    suggested = _retry_after_s(exc)
    delay = retry.delay(failed_attempts)
    return min(retry.max_delay_s, max(delay, suggested)) if suggested is not None else delay


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class _Call:
    """One prepared request: all that `complete` and `acomplete` share around the transport call."""

    request: dict[str, Any]
    key: str
    cache: ResponseCache | None
    litellm_kwargs: dict[str, Any]

    def cached_response(self) -> LLMResponse | None:
        hit = self.cache.get(self.key, self.request) if self.cache is not None else None
        return LLMResponse.from_payload(hit, cached=True, cache_key=self.key) if hit is not None else None

    def configuration(self, exc: BaseException) -> LLMConfigurationError | None:
        """The configuration error `exc` reveals (no call with this configuration can succeed), if any."""
        return configuration_error(exc, model=self.request["model"], api_base=self.request.get("api_base"))

    def failure(self, exc: Exception, attempts: int) -> LLMError:
        """The error a call that failed for good raises (a configuration error, not retryable, or
        retries exhausted)."""
        configuration = self.configuration(exc)
        if configuration is not None:
            return configuration
        return LLMError(f"{self.request['model']}: LLM call failed after {attempts} attempt(s): {_describe(exc)}")

    def finish(self, raw: Any) -> LLMResponse:
        _REACHED.add((self.request["model"], self.request.get("api_base")))
        payload = _response_payload(raw)
        if self.cache is not None:
            self.cache.put(self.key, self.request, payload)
        return LLMResponse.from_payload(payload, cached=False, cache_key=self.key)


def _prepare(
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str,
    tools: Sequence[Mapping[str, Any]] | None,
    response_format: Mapping[str, Any] | None,
    cache_dir: Path | str | None,
    mock_response: Any,
    api_base: str | None,
    api_key: str | None,
    max_tokens: int | None,
    timeout_s: float,
    cache_context: Mapping[str, str] | None = None,
) -> _Call:
    request = build_request(
        messages, model=model, tools=tools, response_format=response_format,
        api_base=api_base, max_tokens=max_tokens, cache_context=cache_context,
    )
    # A mocked reply is a test/offline device: it must never be served to a real request later.
    cache = ResponseCache(Path(cache_dir)) if cache_dir is not None and mock_response is None else None
    kwargs = _litellm_kwargs(request, api_key=api_key, timeout_s=timeout_s, mock_response=mock_response)
    return _Call(request=request, key=request_key(request), cache=cache, litellm_kwargs=kwargs)


def complete(
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str,
    tools: Sequence[Mapping[str, Any]] | None = None,
    response_format: Mapping[str, Any] | None = None,
    cache_dir: Path | str | None = None,
    mock_response: Any = None,
    api_base: str | None = None,
    api_key: str | None = None,
    max_tokens: int | None = None,
    timeout_s: float = 120.0,
    retry: RetryPolicy = RetryPolicy(),
    cache_context: Mapping[str, str] | None = None,
) -> LLMResponse:
    """One chat completion at temperature 0, served from `cache_dir` when asked before.

    `mock_response` is passed to litellm (a canned reply, for tests and offline runs) and
    bypasses the cache. `cache_context` joins the cache key (never the model's prompt). Raises
    `LLMError` when the call fails for good.
    """
    call = _prepare(
        messages, model=model, tools=tools, response_format=response_format, cache_dir=cache_dir,
        mock_response=mock_response, api_base=api_base, api_key=api_key, max_tokens=max_tokens,
        timeout_s=timeout_s, cache_context=cache_context,
    )
    return call.cached_response() or call.finish(_send(call, retry))


def cached_complete(
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str,
    cache_dir: Path | str | None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    response_format: Mapping[str, Any] | None = None,
    api_base: str | None = None,
    max_tokens: int | None = None,
    cache_context: Mapping[str, str] | None = None,
    **_transport: Any,
) -> LLMResponse:
    """The cached reply to exactly this request (same key as `complete`), never a call: LLMError when
    the cache holds none. A completer for re-deriving recorded judgements (the leaderboard, the
    store) without trusting any file but the request-hash cache; the transport options of
    `complete` (key, retries, timeout, mock) are accepted and unused."""
    request = build_request(messages, model=model, tools=tools, response_format=response_format,
                            api_base=api_base, max_tokens=max_tokens, cache_context=cache_context)
    key = request_key(request)
    hit = ResponseCache(Path(cache_dir)).get(key, request) if cache_dir is not None else None
    if hit is None:
        raise LLMError(f"{model}: no cached reply for request {key[:16]}… in {cache_dir}: the judgement was never "
                       "made with this question, answer, gold and judge model; evaluate the run again")
    return LLMResponse.from_payload(hit, cached=True, cache_key=key)


def llm_retrying(retry: RetryPolicy, retrying: type[tenacity.BaseRetrying] = tenacity.Retrying,
                 *, fatal: Callable[[BaseException], bool] | None = None) -> tenacity.BaseRetrying:
    """The retry policy of LLM calls (tenacity; `tenacity.AsyncRetrying` for `acomplete`): rate
    limits, timeouts and server-side failures only (`is_retryable`), `retry.attempts` in all,
    exponential waits capped at `retry.max_delay_s` and never shorter than a Retry-After header."""
    return retrying(
        retry=tenacity.retry_if_exception(lambda exc: is_retryable(exc) and not (fatal and fatal(exc))),
        stop=tenacity.stop_after_attempt(retry.attempts),
        wait=lambda state: _delay_for(state.outcome.exception(), state.attempt_number, retry),
        reraise=True,
    )


def _send(call: _Call, retry: RetryPolicy) -> Any:
    completion = litellm_module().completion
    try:
        for attempt in llm_retrying(retry, fatal=lambda exc: call.configuration(exc) is not None):
            with attempt:
                return completion(**call.litellm_kwargs)
    except Exception as exc:  # not retryable, or the last attempt's failure
        raise call.failure(exc, attempt.retry_state.attempt_number) from exc
    raise AssertionError("unreachable: the retry loop returns or raises")


async def acomplete(
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str,
    tools: Sequence[Mapping[str, Any]] | None = None,
    response_format: Mapping[str, Any] | None = None,
    cache_dir: Path | str | None = None,
    mock_response: Any = None,
    api_base: str | None = None,
    api_key: str | None = None,
    max_tokens: int | None = None,
    timeout_s: float = 120.0,
    retry: RetryPolicy = RetryPolicy(),
) -> LLMResponse:
    """The asyncio twin of `complete` (same cache, same retries), for concurrent agents."""
    call = _prepare(
        messages, model=model, tools=tools, response_format=response_format, cache_dir=cache_dir,
        mock_response=mock_response, api_base=api_base, api_key=api_key, max_tokens=max_tokens,
        timeout_s=timeout_s,
    )
    return call.cached_response() or call.finish(await _asend(call, retry))


async def _asend(call: _Call, retry: RetryPolicy) -> Any:
    acompletion = litellm_module().acompletion
    try:
        async for attempt in llm_retrying(retry, tenacity.AsyncRetrying,
                                          fatal=lambda exc: call.configuration(exc) is not None):
            with attempt:
                return await acompletion(**call.litellm_kwargs)
    except Exception as exc:  # not retryable, or the last attempt's failure
        raise call.failure(exc, attempt.retry_state.attempt_number) from exc
    raise AssertionError("unreachable: the retry loop returns or raises")
