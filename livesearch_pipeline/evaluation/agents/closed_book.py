"""Closed-book baseline: the model answers from memory, with no tools.

It shows how much of the benchmark a model can answer without looking anything up; on a live
benchmark whose answers move every trading day that should be close to nothing.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import Sequence

from livesearch_pipeline.core.models import AnswerLanguage, Prediction, ServedQuestion
from livesearch_pipeline.evaluation.agents.chat import ChatModel, ChatModelConfigurationError, ChatModelError
from livesearch_pipeline.evaluation.agents.loop import (
    FINAL_ANSWER_INSTRUCTION,
    UsageMeter,
    extract_final_answer,
    question_text,
)

CLOSED_BOOK_SYSTEM_PROMPT = (
    "You are a financial analyst answering questions about markets, companies, funds and the "
    "economy. Today's date is {today}. You have no tools and no internet access: answer from "
    "what you know, giving your best single estimate even when unsure. " + FINAL_ANSWER_INSTRUCTION
)


@dataclass
class ClosedBookAgent:
    chat_model: ChatModel
    as_of: dt.date
    system_prompt: str = CLOSED_BOOK_SYSTEM_PROMPT
    name: str = "closed-book"
    lang: AnswerLanguage = "en"  # "zh": the Chinese text where the question has one

    @property
    def model(self) -> str:
        return self.chat_model.name

    async def prepare(self, questions: Sequence[ServedQuestion]) -> None:
        """Nothing is shared between questions."""

    async def answer(self, question: ServedQuestion) -> Prediction:
        started = time.monotonic()
        meter = UsageMeter()
        text, lang = question_text(question, self.lang)
        messages = [{"role": "system", "content": self.system_prompt.format(today=self.as_of.isoformat())},
                    {"role": "user", "content": text}]
        try:
            turn = await self.chat_model.complete(messages, [])
        except ChatModelConfigurationError:
            raise  # every question would fail the same way: the runner stops the run
        except ChatModelError as exc:
            return Prediction(qid=question.qid, lang=lang, error=f"model error: {exc}",
                              trace=[{"type": "stopped", "reason": str(exc)}],
                              usage=meter.usage()).with_messages(messages)
        meter.add_turn(turn)
        messages.append(turn.as_message())
        trace: list[dict[str, object]] = [{"type": "model", "step": 1, "tokens": turn.total_tokens,
                                           "content": turn.content, "tool_calls": []}]
        if turn.tool_calls or not (turn.content or "").strip():
            error = "the model returned no text answer" + (" (it asked for tools it does not have)"
                                                          if turn.tool_calls else "")
            trace.append({"type": "stopped", "reason": error})
            return Prediction(qid=question.qid, lang=lang, error=error, trace=trace,
                              usage=meter.usage()).with_messages(messages)
        answer, explicit = extract_final_answer(turn.content or "")
        trace.append({"type": "final", "answer": answer, "explicit_final_line": explicit,
                      "elapsed_s": round(time.monotonic() - started, 3)})
        return Prediction(qid=question.qid, answer=answer, lang=lang, trace=trace,
                          usage=meter.usage()).with_messages(messages)
