"""The LLM judge: strict JSON verdicts, one re-ask, explicit errors, family independence.

The judge is asked only two kinds of things (see `prompts.py`): whether a text answer means the
same as the reference (`semantic` rules), and which value a long free-text answer commits to
when the deterministic parser finds several candidates (the number is then matched
deterministically, never by the LLM).

Every reply must be exactly one JSON object of the task's schema (a single surrounding markdown
code fence is tolerated, nothing else); pydantic validates it strictly (`"true"` is not a bool).
An unusable reply is re-asked once with the problem stated; a second failure, or a failed call,
becomes a judge error that the evaluator reports separately and never scores as a number.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from livesearch_pipeline.evaluation import prompts
from livesearch_pipeline.infra.llm import LLMError, LLMResponse, RetryPolicy, complete
from livesearch_pipeline.evaluation.prompts import Language

ReplyModel = TypeVar("ReplyModel", bound=BaseModel)
Completer = Callable[..., LLMResponse]


class SemanticReply(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    correct: bool
    reason: str = Field(min_length=1)


class ExtractionReply(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    final_answer: str | None
    reason: str = Field(min_length=1)


@dataclass(frozen=True)
class SemanticJudgement:
    correct: bool | None  # None when `error` is set
    reason: str
    error: str | None


@dataclass(frozen=True)
class Extraction:
    final_answer: str | None  # None: the answer commits to no single value (or `error` is set)
    reason: str
    error: str | None


class JudgeIndependenceError(ValueError):
    """The judge belongs to the same model family as an agent it would rank."""


# --------------------------------------------------------------------------- model families

# Matched against the model name without its routing prefix ("openai/" in litellm means an
# OpenAI-compatible endpoint, not an OpenAI model), so only name keywords decide the family.
_FAMILY_KEYWORDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (family, re.compile(pattern))
    for family, pattern in (
        ("anthropic", r"claude"),
        ("google", r"gemini|gemma|palm|bison"),
        ("qwen", r"qwen|qwq"),
        ("deepseek", r"deepseek"),
        ("meta-llama", r"llama"),
        ("mistral", r"mistral|mixtral|codestral|ministral|magistral|pixtral"),
        ("zhipu", r"glm"),
        ("moonshot", r"kimi|moonshot"),
        ("xai", r"grok"),
        ("baidu", r"ernie"),
        ("bytedance", r"doubao|seed-"),
        ("tencent", r"hunyuan"),
        ("cohere", r"command-r|command-a|cohere"),
        ("minimax", r"minimax|abab"),
        ("01-ai", r"(^|[/_-])yi-"),
        ("openai", r"gpt|chatgpt|davinci|(^|[/_.-])o[1-9](-|$|[/_.])"),
    )
)


def model_family(model: str) -> str:
    """The vendor family of a model name: "openai", "anthropic", "google", "qwen", ...

    Routing prefixes are ignored (`openrouter/anthropic/claude-3.5-sonnet` is "anthropic",
    `openai/qwen2.5-72b` served by an OpenAI-compatible endpoint is "qwen"). An unknown name is
    its own family, `unknown:<name>`, so that the same unknown model is still caught.
    """
    name = model.strip().lower()
    if not name:
        raise ValueError("model_family needs a non-empty model name")
    base = name.rsplit("/", 1)[-1]
    for family, pattern in _FAMILY_KEYWORDS:
        if pattern.search(base):
            return family
    return f"unknown:{base}"


def ensure_judge_independent(judge_model: str, agent_models: Mapping[str, str | None]) -> None:
    """Refuse a judge whose family equals that of any ranked agent's model (None: no LLM)."""
    judge_family = model_family(judge_model)
    clashes = sorted(
        f"{agent} ({model})"
        for agent, model in agent_models.items()
        if model and model_family(model) == judge_family
    )
    if clashes:
        raise JudgeIndependenceError(
            f"judge model {judge_model!r} is of family {judge_family!r}, the same as ranked "
            f"agent(s) {', '.join(clashes)}; pick a judge from a family absent from the leaderboard"
        )


# --------------------------------------------------------------------------- strict parsing

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n(?P<body>.*)\n\s*```$", re.DOTALL)


def parse_reply(content: str | None, schema: type[ReplyModel]) -> tuple[ReplyModel | None, str]:
    """The validated reply, or (None, a description of why it is unusable)."""
    if content is None or not content.strip():
        return None, "the reply was empty"
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    try:
        return schema.model_validate_json(text), ""
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}" for err in exc.errors()[:3]
        )
        return None, f"it is not a JSON object of the required form ({problems})"


# --------------------------------------------------------------------------- the judge


@dataclass
class JudgeStats:
    requests: int = 0  # judgements asked for
    llm_calls: int = 0  # completions sent to the model (re-asks included, cache hits excluded)
    cache_hits: int = 0
    reasks: int = 0
    errors: int = 0


class LLMJudge:
    """A litellm-backed judge; thread-safe, so the evaluator may run judgements concurrently."""

    def __init__(
        self,
        model: str,
        *,
        cache_dir: Path | str | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        mock_response: Any = None,
        retry: RetryPolicy = RetryPolicy(),
        timeout_s: float = 120.0,
        completer: Completer = complete,
    ) -> None:
        if not model or not model.strip():
            raise ValueError("the LLM judge needs a model name")
        self.model = model
        self.family = model_family(model)
        self._call_options: dict[str, Any] = {
            "cache_dir": cache_dir,
            "api_base": api_base,
            "api_key": api_key,
            "mock_response": mock_response,
            "retry": retry,
            "timeout_s": timeout_s,
        }
        self._completer = completer
        self._lock = threading.Lock()
        self.stats = JudgeStats()

    @property
    def label(self) -> str:
        return f"llm:{self.model}"

    def judge_semantic(
        self, question: str, reference: str, candidate: str, *, language: Language | None = None,
        gold: Mapping[str, str] | None = None,
    ) -> SemanticJudgement:
        """Whether `candidate` means `reference`. `gold` names the gold judged against (its question, day
        and value): it joins the cache key, so a judgement is reused only for that very gold."""
        lang = language or prompts.detect_language(candidate)
        messages = prompts.semantic_messages(question, reference, candidate, lang)
        reply, error = self._ask(messages, SemanticReply, lang, cache_context=gold)
        if reply is None:
            return SemanticJudgement(correct=None, reason="judge error", error=error)
        return SemanticJudgement(correct=reply.correct, reason=reply.reason, error=None)

    def extract_final_answer(
        self, question: str, answer: str, *, unit: str | None, language: Language | None = None
    ) -> Extraction:
        lang = language or prompts.detect_language(answer)
        messages = prompts.extraction_messages(question, answer, unit, lang)
        reply, error = self._ask(messages, ExtractionReply, lang)
        if reply is None:
            return Extraction(final_answer=None, reason="judge error", error=error)
        final = reply.final_answer.strip() if reply.final_answer is not None else None
        return Extraction(final_answer=final or None, reason=reply.reason, error=None)

    def _ask(
        self, messages: Sequence[dict[str, Any]], schema: type[ReplyModel], language: Language,
        cache_context: Mapping[str, str] | None = None,
    ) -> tuple[ReplyModel | None, str]:
        self._count(requests=1)
        conversation = list(messages)
        problem = ""
        for attempt in (1, 2):
            try:
                context = {"cache_context": cache_context} if cache_context else {}
                response = self._completer(conversation, model=self.model, **self._call_options, **context)
            except LLMError as exc:
                self._count(errors=1)
                return None, f"judge call failed: {exc}"
            self._count(cache_hits=int(response.cached), llm_calls=int(not response.cached))
            reply, problem = parse_reply(response.content, schema)
            if reply is not None:
                return reply, ""
            if attempt == 1:
                self._count(reasks=1)
                conversation = [
                    *conversation,
                    {"role": "assistant", "content": response.content or ""},
                    prompts.reask_message(problem, language),
                ]
        self._count(errors=1)
        last = (response.content or "")[:200]
        return None, f"unparseable judge output after one re-ask: {problem}; last reply: {last!r}"

    def _count(self, **increments: int) -> None:
        with self._lock:
            for name, value in increments.items():
                setattr(self.stats, name, getattr(self.stats, name) + value)


def judge_from_settings(
    judge_model: str | None, *, cache_dir: Path | str | None, api_base: str | None, api_key: str | None
) -> LLMJudge | None:
    """An LLMJudge when a judge model is configured, else None (deterministic fallback only)."""
    return None if not judge_model else LLMJudge(judge_model, cache_dir=cache_dir, api_base=api_base, api_key=api_key)

