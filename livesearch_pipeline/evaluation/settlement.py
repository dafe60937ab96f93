"""Settling with the LLM judge the verdicts the deterministic matcher could not decide (DESIGN §4.7).

A `semantic` rule whose normalised texts differ is judged as a whole. A long answer with several
candidate numbers and no marker of the final one is handed to the judge to extract the committed
value, which is then matched deterministically; the extraction must be grounded in what the
agent wrote (one of the numbers the text contains, or a text the answer states), so the judge can
never supply an answer itself. A failed judgement is a verdict with `correct=None` and an
`error`: the summary counts it as a judge error, never as a number.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from livesearch_pipeline.core.matching import MatchOutcome, normalize_text, text_rule
from livesearch_pipeline.core.models import GoldAnswer, ServedQuestion, Verdict
from livesearch_pipeline.evaluation.judge import LLMJudge
from livesearch_pipeline.evaluation.prompts import detect_language
from livesearch_pipeline.evaluation.scoring import make_verdict, match_gold

_CANDIDATE_REL_TOL = 1e-9


@dataclass(frozen=True)
class PendingJudgement:
    """A verdict the deterministic matcher could not decide, to be settled by the judge."""

    question: ServedQuestion
    gold: GoldAnswer
    answer: str
    outcome: MatchOutcome
    lang: str = "en"  # the text the answer replies to


def _question_text(question: ServedQuestion, answer: str, lang: str = "en") -> str:
    if question.question_zh and (lang == "zh" or detect_language(answer) == "zh"):
        return question.question_zh
    return question.question


def _is_candidate(value: float | str | None, candidates: Sequence[float]) -> bool:
    if not isinstance(value, (int, float)):
        return False
    return any(math.isclose(value, c, rel_tol=_CANDIDATE_REL_TOL, abs_tol=1e-12) for c in candidates)


def _extraction_is_grounded(gold: GoldAnswer, pending: PendingJudgement, extracted: str, outcome: MatchOutcome) -> bool:
    # The judge may only point at what the agent wrote; an invented value would let it answer.
    if isinstance(gold.value, str):
        return normalize_text(extracted) in normalize_text(pending.answer)
    return _is_candidate(outcome.parsed, pending.outcome.candidates)


def gold_context(gold: GoldAnswer) -> dict[str, str]:
    """The gold a semantic judgement is made against, as the judge's cache key names it: its question,
    day, value and unit (a reply cached for one gold is never the verdict on another)."""
    return {"qid": gold.qid, "gold_date": gold.date.isoformat(), "gold_value": json.dumps(gold.value, ensure_ascii=False),
            "gold_answer": gold.answer or "", "gold_unit": gold.unit or ""}


def settle_with_judge(pending: PendingJudgement, judge: LLMJudge) -> Verdict:
    gold, answer = pending.gold, pending.answer
    question = _question_text(pending.question, answer, pending.lang)
    if gold.match.rule == "semantic":
        judgement = judge.judge_semantic(question, gold.answer or str(gold.value), answer, gold=gold_context(gold))
        if judgement.error is not None:
            return make_verdict(gold.qid, gold, None, judge.label, "semantic judgement failed", judgement.error)
        return make_verdict(gold.qid, gold, judgement.correct, judge.label, f"semantic: {judgement.reason}")
    unit = text_rule(gold.match, pending.lang).unit or gold.unit  # the unit of the text answered
    extraction = judge.extract_final_answer(question, answer, unit=unit)
    if extraction.error is not None:
        return make_verdict(gold.qid, gold, None, judge.label, "final-answer extraction failed", extraction.error)
    if extraction.final_answer is None:
        return make_verdict(
            gold.qid, gold, False, judge.label, f"no single final value in the answer: {extraction.reason}"
        )
    outcome = match_gold(gold, extraction.final_answer, pending.lang)
    if not _extraction_is_grounded(gold, pending, extraction.final_answer, outcome):
        return make_verdict(
            gold.qid, gold, None, judge.label, "final-answer extraction failed",
            f"the judge extracted {extraction.final_answer!r}, which the answer does not state",
        )
    correct = outcome.correct and not outcome.needs_judge
    return make_verdict(
        gold.qid, gold, correct, judge.label, f"extracted {extraction.final_answer!r}: {outcome.reason}"
    )
