"""The tool-calling loop shared by the web and plugin agents, with step, token and time limits.

Each step sends the conversation to the model. A turn with tool calls runs them and appends
their results; a turn without tool calls is the final answer. Every step, tool call and the
final answer go into the trace, which is stored with the prediction. Hitting a limit ends the
question with `Prediction.error` (and the trace so far) rather than a guessed answer.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence

from livesearch_pipeline.core.models import AnswerLanguage, Prediction, ServedQuestion, Usage
from livesearch_pipeline.evaluation.agents.chat import (
    ChatModel,
    ChatModelConfigurationError,
    ChatModelError,
    Message,
    ModelTurn,
    ToolCallRequest,
)

TraceEntry = dict[str, object]

FINAL_ANSWER_INSTRUCTION = (
    "End your reply with one line of the form `Final answer: <answer>` giving the value with its "
    "unit (for example `Final answer: 1,234.56 CNY` or `Final answer: 3.21%`)."
)

_FINAL_LINE = re.compile(r"^\s*(?:\*\*)?(?:final answer|最终答案|答案)(?:\*\*)?\s*[:：]\s*(?P<answer>.+?)\s*$",
                         re.IGNORECASE)


def extract_final_answer(text: str) -> tuple[str, bool]:
    """The answer from a model reply and whether it came from an explicit final-answer line.

    The last `Final answer: ...` (or `最终答案：...`) line wins. Without one, the whole reply is
    returned and flagged, so that the evaluator's own final-number parsing (and its LLM
    extraction for ambiguous text) decides, and the trace shows that no line was given.
    """
    for line in reversed(text.splitlines()):
        found = _FINAL_LINE.match(line)
        if found:
            return found.group("answer").strip().strip("*").strip(), True
    return text.strip(), False


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns: the text the model reads and the entry kept in the trace."""

    content: str
    trace: TraceEntry


ToolHandler = Callable[[dict[str, Any]], Awaitable[ToolResult]]


class ToolFailure(Exception):
    """A tool could not do what was asked; the message is shown to the model, which may retry."""


@dataclass(frozen=True)
class AgentTool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: ToolHandler

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool schema the model sees."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class LoopLimits:
    max_steps: int = 12
    max_tokens: int = 200_000
    time_limit_s: float = 300.0

    def __post_init__(self) -> None:
        if self.max_steps < 1 or self.max_tokens < 1 or self.time_limit_s <= 0:
            raise ValueError(f"limits must be positive: {self}")


class _LimitReached(Exception):
    pass


def question_text(question: ServedQuestion, lang: AnswerLanguage) -> tuple[str, AnswerLanguage]:
    """The text put to the model and its language: the Chinese text when asked for and served."""
    if lang == "zh" and question.question_zh:
        return question.question_zh, "zh"
    return question.question, "en"


class UsageMeter:
    """Counts one question's model calls, tokens, cost and tool calls as the loop runs."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.model_calls = self.tool_calls = self.input_tokens = self.output_tokens = 0
        self.cost: float | None = 0.0

    def add_turn(self, turn: ModelTurn) -> None:
        self.model_calls += 1
        self.input_tokens += turn.input_tokens
        self.output_tokens += turn.output_tokens
        self.cost = None if self.cost is None or turn.cost_usd is None else self.cost + turn.cost_usd

    def usage(self) -> Usage:
        return Usage(model_calls=self.model_calls, tool_calls=self.tool_calls, input_tokens=self.input_tokens,
                     output_tokens=self.output_tokens,
                     cost_usd=None if self.cost is None or not self.model_calls else round(self.cost, 8),
                     wall_s=round(time.monotonic() - self.started, 3))


async def run_tool_loop(
    question: ServedQuestion,
    *,
    model: ChatModel,
    system_prompt: str,
    tools: Sequence[AgentTool],
    limits: LoopLimits,
    lang: AnswerLanguage = "en",
) -> Prediction:
    """Answer one question with the model and tools; never raises for model or tool trouble,
    except `ChatModelConfigurationError` (an error every question would hit: the run stops).

    `lang` "zh" puts the question's Chinese text to the model when it has one; the prediction
    records the text answered and the question's usage, and carries the conversation.
    """
    trace: list[TraceEntry] = []
    text, asked_lang = question_text(question, lang)
    messages: list[Message] = [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": text},
    ]
    meter = UsageMeter()
    started = meter.started
    try:
        async with asyncio.timeout(limits.time_limit_s):
            answer = await _converse(messages, trace, model=model, tools=tools, limits=limits, meter=meter)
    except TimeoutError:
        return _failed(question, f"time limit of {limits.time_limit_s:g} s reached without a final answer",
                       trace, started, meter, messages, asked_lang)
    except _LimitReached as limit:
        return _failed(question, str(limit), trace, started, meter, messages, asked_lang)
    except ChatModelConfigurationError:
        raise
    except ChatModelError as exc:
        return _failed(question, f"model error: {exc}", trace, started, meter, messages, asked_lang)
    trace.append({"type": "done", "elapsed_s": round(time.monotonic() - started, 3)})
    return Prediction(qid=question.qid, answer=answer, lang=asked_lang, trace=trace,
                      usage=meter.usage()).with_messages(messages)


def _failed(question: ServedQuestion, error: str, trace: list[TraceEntry], started: float,
            meter: UsageMeter | None = None, messages: list[Message] | None = None,
            lang: AnswerLanguage = "en") -> Prediction:
    trace.append({"type": "stopped", "reason": error, "elapsed_s": round(time.monotonic() - started, 3)})
    prediction = Prediction(qid=question.qid, answer=None, lang=lang, error=error, trace=trace,
                            usage=meter.usage() if meter is not None else None)
    return prediction.with_messages(messages) if messages is not None else prediction


async def _converse(
    messages: list[Message],
    trace: list[TraceEntry],
    *,
    model: ChatModel,
    tools: Sequence[AgentTool],
    limits: LoopLimits,
    meter: UsageMeter,
) -> str:
    by_name = {tool.name: tool for tool in tools}
    schemas = [tool.schema() for tool in tools]
    tokens_used = 0
    for step in range(1, limits.max_steps + 1):
        if tokens_used >= limits.max_tokens:
            raise _LimitReached(
                f"token limit of {limits.max_tokens} reached ({tokens_used} used) without a final answer"
            )
        turn = await model.complete(messages, schemas)
        meter.add_turn(turn)
        tokens_used += turn.total_tokens
        trace.append({"type": "model", "step": step, "tokens": turn.total_tokens,
                      "content": turn.content, "tool_calls": [c.name for c in turn.tool_calls]})
        messages.append(turn.as_message())
        if not turn.tool_calls:
            if not turn.content or not turn.content.strip():
                raise _LimitReached(f"step {step}: the model returned neither a tool call nor an answer")
            answer, explicit = extract_final_answer(turn.content)
            trace.append({"type": "final", "answer": answer, "explicit_final_line": explicit})
            return answer
        for call in turn.tool_calls:
            meter.tool_calls += 1
            result = await _run_tool_call(call, by_name, step)
            trace.append(result.trace)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result.content})
    raise _LimitReached(f"max steps ({limits.max_steps}) reached without a final answer")


async def _run_tool_call(call: ToolCallRequest, by_name: dict[str, AgentTool], step: int) -> ToolResult:
    base: TraceEntry = {"type": "tool", "step": step, "tool": call.name}
    tool = by_name.get(call.name)
    if tool is None:
        message = f"unknown tool {call.name!r}; available: {sorted(by_name)}"
        return ToolResult(f"error: {message}", {**base, "arguments": call.arguments, "error": message})
    try:
        arguments = json.loads(call.arguments)
    except json.JSONDecodeError as exc:
        message = f"arguments are not valid JSON ({exc.msg} at position {exc.pos})"
        return ToolResult(f"error: {message}", {**base, "arguments": call.arguments, "error": message})
    if not isinstance(arguments, dict):
        message = "arguments must be a JSON object"
        return ToolResult(f"error: {message}", {**base, "arguments": call.arguments, "error": message})
    try:
        result = await tool.handler(arguments)
    except ToolFailure as exc:
        refused = {"refused": True} if getattr(exc, "refused", False) else {}  # beyond the read budget
        return ToolResult(f"error: {exc}", {**base, "arguments": arguments, "error": str(exc), **refused})
    return ToolResult(result.content, {**base, "arguments": arguments, **result.trace})
