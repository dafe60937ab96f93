"""The chat model an LLM agent talks to: one conversation in, one assistant turn out.

Agents depend on the small `ChatModel` protocol rather than on litellm, so the tool-calling
loop is testable with any scripted model. `LitellmChatModel` is the production implementation:
any litellm model string (`openai/...`, `anthropic/...`, an OpenAI-compatible server through
`api_base`), called through the project's shared plumbing (`infra/llm.py`: lazy litellm
import with offline defaults, temperature 0, retries on transient failures, optional
request-hash disk cache).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from livesearch_pipeline.infra.llm import (
    LLMConfigurationError,
    LLMError,
    LLMSettings,
    RetryPolicy,
    acomplete,
    token_cost_usd,
)

Message = dict[str, Any]
ToolSchema = dict[str, Any]


class ChatModelError(RuntimeError):
    """The model could not be reached, or failed for good after retries."""


class ChatModelConfigurationError(ChatModelError):
    """An error every question would hit (credentials, model name, endpoint): the run must stop."""


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call the model asked for; `arguments` is the raw JSON text the model wrote."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelTurn:
    content: str | None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    total_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # litellm's price map; None for a local or unpriced model

    def as_message(self) -> Message:
        """The assistant message to append to the conversation (OpenAI chat format)."""
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


class ChatModel(Protocol):
    @property
    def name(self) -> str:
        """The model identifier recorded in the run metadata."""

    async def complete(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> ModelTurn:
        """Return the model's next turn; raise ChatModelError when it cannot."""


@dataclass(frozen=True)
class LitellmChatModel:
    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    max_output_tokens: int | None = 2048
    request_timeout_s: float = 120.0
    cache_dir: Path | None = None
    retry: RetryPolicy = RetryPolicy()

    @classmethod
    def from_settings(
        cls, settings: LLMSettings, *, model: str | None = None, api_base: str | None = None,
        api_key: str | None = None, **options: Any
    ) -> LitellmChatModel:
        """Explicit `model`/`api_base` win over LIVESEARCH_LLM_MODEL / _API_BASE.

        The operator's key (LIVESEARCH_LLM_API_KEY) goes only to the operator's endpoint: with an
        explicit `api_base` other than LIVESEARCH_LLM_API_BASE the key is `api_key` (None: none)."""
        chosen = model or settings.model
        if not chosen:
            raise ChatModelError("no model configured: pass --model or set LIVESEARCH_LLM_MODEL "
                                 "(a litellm model string such as openai/gpt-4o-mini)")
        own_endpoint = api_base is not None and api_base != settings.api_base
        key = api_key if own_endpoint else (api_key or settings.api_key)
        return cls(model=chosen, api_base=api_base or settings.api_base, api_key=key, **options)

    @property
    def name(self) -> str:
        return self.model

    async def complete(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> ModelTurn:
        try:
            response = await acomplete(
                messages, model=self.model, tools=list(tools) or None, cache_dir=self.cache_dir,
                api_base=self.api_base, api_key=self.api_key, max_tokens=self.max_output_tokens,
                timeout_s=self.request_timeout_s, retry=self.retry,
            )
        except LLMConfigurationError as exc:
            raise ChatModelConfigurationError(str(exc)) from exc
        except LLMError as exc:
            raise ChatModelError(str(exc)) from exc
        return ModelTurn(
            content=response.content,
            tool_calls=tuple(ToolCallRequest(id=c.id, name=c.name, arguments=c.arguments)
                             for c in response.tool_calls),
            total_tokens=response.prompt_tokens + response.completion_tokens,
            input_tokens=response.prompt_tokens,
            output_tokens=response.completion_tokens,
            cost_usd=token_cost_usd(self.model, response.prompt_tokens, response.completion_tokens,
                                    api_base=self.api_base),
        )
