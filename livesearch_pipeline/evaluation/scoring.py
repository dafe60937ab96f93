"""Deterministic scoring of one answer against its gold (DESIGN §4.7), before any judge.

A scoring qid without a prediction, or with an empty answer or an agent error, scores 0. An
answer longer than `MAX_ANSWER_CHARS` characters scores wrong without being matched or judged:
it bounds the matcher's work (linear in the answer) and keeps an agent from listing every
candidate value. Everything else goes to `core.matching.match_answer`, scored in the unit and at
the precision of the text the agent answered (`Prediction.lang`: the Chinese text's 万元 at its
decimals, not the English text's millions) and with the lexicon's other names of a text gold
value; when the matcher says it cannot decide (a `semantic` rule whose normalised texts differ,
a long answer with several candidate numbers and no marker of the final one), the verdict stays
deterministic and incorrect and the outcome is handed on for the judge (`settlement`).
"""

from __future__ import annotations

from livesearch_pipeline.core.lexicon import LexiconError, load_lexicon
from livesearch_pipeline.core.matching import MatchOutcome, match_answer
from livesearch_pipeline.core.models import GoldAnswer, Prediction, Verdict
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.limits import MAX_ANSWER_CHARS

DETERMINISTIC = "deterministic"


def make_verdict(qid: str, gold: GoldAnswer, correct: bool | None, judge: str, reason: str,
                 error: str | None = None) -> Verdict:
    return Verdict(qid=qid, correct=correct, rule=gold.match.rule, judge=judge, reason=reason, error=error)


def label_aliases(value: object) -> tuple[str, ...]:
    """The other names of a text gold value in the lexicon's reviewed labels (both languages)."""
    if not isinstance(value, str):
        return ()
    try:
        return load_lexicon().label_names(value)
    except LexiconError as exc:
        raise EvaluationError(f"the label glossary cannot be read: {exc}") from exc


def match_gold(gold: GoldAnswer, answer: str, lang: str = "en") -> MatchOutcome:
    """The matcher's outcome for `answer` against an `ok` gold answer; EvaluationError naming the
    qid when the gold cannot score answers (no value, a rule or unit the matcher refuses)."""
    if gold.value is None:
        raise EvaluationError(f"{gold.qid}: gold status 'ok' without a value")
    try:
        return match_answer(gold.match, gold.value, answer, gold_unit=gold.unit, lang=lang,
                            aliases=label_aliases(gold.value))
    except ValueError as exc:
        raise EvaluationError(f"{gold.qid}: the gold's rule or unit cannot score answers: {exc}") from exc


def too_long_reason() -> str:
    return f"answer longer than {MAX_ANSWER_CHARS} characters"


def score_deterministic(gold: GoldAnswer, prediction: Prediction | None) -> tuple[Verdict, MatchOutcome | None]:
    """The deterministic verdict; the outcome is returned when the matcher asks for a judge."""
    if prediction is None:
        return make_verdict(gold.qid, gold, False, DETERMINISTIC, "no prediction"), None
    answer = prediction.answer
    if answer is None or not answer.strip():
        reason = f"no answer (agent error: {prediction.error})" if prediction.error else "empty answer"
        return make_verdict(gold.qid, gold, False, DETERMINISTIC, reason), None
    if len(answer) > MAX_ANSWER_CHARS:
        return make_verdict(gold.qid, gold, False, DETERMINISTIC, too_long_reason()), None
    outcome = match_gold(gold, answer, prediction.answer_lang)
    verdict = make_verdict(gold.qid, gold, outcome.correct, DETERMINISTIC, outcome.reason)
    return verdict, (outcome if outcome.needs_judge else None)
