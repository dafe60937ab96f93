"""The strict evaluator (DESIGN §4.7): score one day's predictions against that day's gold.

Fail-loud rules — any of them raises one `EvaluationError` before anything is scored or
written, and the message names the file, the line numbers or the qids (first few + count):

- the served questions, gold snapshot or predictions file is missing, or a line of it is not
  exactly one JSON object of its record type (blank lines, two objects on a line, an object
  split over two lines, a non-object are all refused);
- the gold is read only through `SnapshotStore.read_verified`, the one gold reader: a missing
  or mismatched manifest (sha256, `file`, date, counts), an orphan JSONL without a manifest, or
  an `empty`/`error` answer the manifest does not withdraw is refused;
- the scoring set — the served qids minus the qids D's manifest withdraws — is empty; the gold
  misses a qid of it, or holds a qid that was neither served nor withdrawn;
- the served file name or the predictions' run metadata names another date or qid set;
- predictions hold unknown (not served) or duplicate qids.

Nothing is ever read from another date's gold. Every agent is scored on exactly the scoring
set: a scoring qid without a prediction, or with an empty answer or an agent error, scores 0;
a prediction for a withdrawn qid is ignored. An answer longer than `MAX_ANSWER_CHARS`
characters scores wrong without being matched or judged: it bounds the matcher's work (linear
in the answer) and keeps an agent from listing every candidate value.

Scoring is deterministic first (`core.matching.match_answer`). The LLM judge is used only when
the matcher says it cannot decide: a `semantic` rule whose normalised texts differ, or a long
answer with several candidate numbers and no marker of the final one (the judge then extracts
the committed value and the number is matched deterministically, and it must be one of the
numbers the text contains). Without a judge those verdicts stay deterministic and incorrect, and
the summary counts them as `unresolved_without_judge`.

Judge errors: a verdict with `correct=None` and an `error`. Accuracy counts them as not correct
(the denominator stays the scoring set, nothing is averaged in as a number); the summary reports
`judge_errors`, sets `flagged` and says so in `warnings`, and also gives `accuracy_decided`
(correct / verdicts the judge decided) so a reader can bound the effect.

Output: `verdicts.jsonl` and `summary.json` in one directory, written as one unit (see
`write_evaluation`): the summary records the verdicts' sha256, and a run counts as evaluated
only when both exist and agree (`load_evaluation`).

Language breakdown: `by_language` is by the question ("zh" for questions served with a Chinese
text, `question_zh`, i.e. Chinese-market entities; "en" otherwise), `by_answer_language` by the
text the agent answered (`Prediction.lang`, absent = "en"; a missing prediction counts as "en").
A prediction's `lang` decides the unit a bare number is read in (`core.matching`); one that says
"zh" for a question without a Chinese text is refused.

Usage: `usage` sums what the predictions record (`Prediction.usage`: model and tool calls,
tokens, cost, time) over the scoring set, with the cost per correct answer; it is None when no
prediction records usage (baselines without a model), and its cost is None when any recorded
question's cost is unknown (a local or unpriced model).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from livesearch_pipeline.core.jsonl import JsonlError, parse_jsonl, read_jsonl, read_jsonl_bytes, render_jsonl
from livesearch_pipeline.core.lexicon import LexiconError, load_lexicon
from livesearch_pipeline.core.matching import MatchOutcome, match_answer, normalize_text
from livesearch_pipeline.core.normalize import reading_unit
from livesearch_pipeline.core.served import ServedFileError, read_served
from livesearch_pipeline.core.models import (
    GoldAnswer,
    Prediction,
    PredictionRunMeta,
    ServedQuestion,
    SnapshotManifest,
    Usage,
    Verdict,
)
from livesearch_pipeline.core.pool import is_instrument, visibility_band
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.snapshot import (
    SnapshotIntegrityError,
    SnapshotNotFoundError,
    SnapshotStore,
    scoring_qids,
    sha256_bytes,
    snapshot_date,
    sha256_file,
    write_atomic,
)
from livesearch_pipeline.evaluation.limits import MAX_ANSWER_CHARS
from livesearch_pipeline.evaluation.judge import JudgeIndependenceError, LLMJudge, ensure_judge_independent
from livesearch_pipeline.evaluation.prompts import detect_language

DETERMINISTIC = "deterministic"
_SERVED_NAME = re.compile(r"^served_questions_(\d{4}-\d{2}-\d{2})\.jsonl$")
_SHOWN_QIDS = 5
_CANDIDATE_REL_TOL = 1e-9

Record = TypeVar("Record", bound=BaseModel)


class EvaluationError(ValueError):
    """A fail-loud rule was violated; nothing must be written."""


def _name_qids(qids: Iterable[str]) -> str:
    ordered = sorted(qids)
    shown = ", ".join(ordered[:_SHOWN_QIDS])
    more = f" and {len(ordered) - _SHOWN_QIDS} more" if len(ordered) > _SHOWN_QIDS else ""
    return f"{len(ordered)} qid(s): {shown}{more}"


# --------------------------------------------------------------------------- loading


def _read_jsonl(path: Path, model: type[Record], file_what: str, what: str) -> list[Record]:
    """The records of a JSONL input (core.jsonl: every malformed line counted, the first named)."""
    try:
        return parse_jsonl(path, read_jsonl_bytes(path, file_what), model, what)
    except JsonlError as exc:
        raise EvaluationError(str(exc)) from exc


def _duplicates(qids: Iterable[str]) -> list[str]:
    return sorted(q for q, n in Counter(qids).items() if n > 1)


def _date_from_name(path: Path, pattern: re.Pattern[str]) -> dt.date | None:
    match = pattern.match(path.name)
    return dt.date.fromisoformat(match.group(1)) if match else None


def meta_path_beside(predictions_path: Path) -> Path:
    return predictions_path.with_name(predictions_path.name.removesuffix(".jsonl") + ".meta.json")


@dataclass(frozen=True)
class GoldDay:
    date: dt.date
    answers: dict[str, GoldAnswer]
    manifest: SnapshotManifest

    @property
    def sha256(self) -> str:
        return self.manifest.sha256

    @property
    def withdrawn(self) -> dict[str, str]:
        return self.manifest.withdrawn


def load_served(path: Path) -> list[ServedQuestion]:
    """The served file (core.served), its faults as EvaluationError."""
    try:
        return read_served(path)
    except (JsonlError, ServedFileError) as exc:
        raise EvaluationError(str(exc)) from exc


def load_gold(path: Path) -> GoldDay:
    """The gold of one date, read and verified by the snapshot store (the one gold reader).

    `path` must be a snapshot's JSONL, `gold_answers_<D>.jsonl`; its manifest lies beside it.
    """
    path = Path(path)
    date = snapshot_date(path)
    if date is None:
        raise EvaluationError(f"{path}: a gold snapshot is named gold_answers_<YYYY-MM-DD>.jsonl")
    try:
        manifest, answers = SnapshotStore(path.parent).read_verified(date)
    except (SnapshotIntegrityError, SnapshotNotFoundError) as exc:
        raise EvaluationError(f"gold snapshot {path} cannot be trusted: {exc}") from exc
    except OSError as exc:
        raise EvaluationError(f"gold snapshot {path} cannot be read: {exc}") from exc
    return GoldDay(date=date, answers={a.qid: a for a in answers}, manifest=manifest)


class _StrictJsonError(ValueError):
    pass


def _refuse_constant(name: str) -> float:
    raise _StrictJsonError(f"non-finite number {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _StrictJsonError(f"number {text[:40]} is not finite")
    return value


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise _StrictJsonError(f"key {key[:40]!r} appears twice in one object")
        seen[key] = value
    return seen


def check_strict_json_lines(path: Path, data: bytes, what: str) -> None:
    """Refuse what pydantic's parser lets through: a key given twice in one object (the last would
    win: `"answer":"wrong","answer":"<gold>"`) and NaN/Infinity (or a literal overflowing to
    infinity) anywhere in a line, `trace` included. EvaluationError names the file and lines."""
    problems: list[str] = []
    bad = 0
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_refuse_constant,
                       parse_float=_finite_float)
        except _StrictJsonError as exc:
            bad += 1
            if len(problems) < _SHOWN_QIDS:
                problems.append(f"line {number}: {exc}")
        except ValueError:
            continue  # not JSON at all: the record parser names it
    if bad:
        raise EvaluationError(f"{path}: {bad} {what} line(s) are not strict JSON — " + "; ".join(problems))


def load_predictions(path: Path) -> tuple[list[Prediction], PredictionRunMeta | None]:
    """The predictions and their run metadata (`predictions.meta.json` beside them, required:
    without it the day and qid-set checks could not run)."""
    path = Path(path)
    if path.is_file():
        try:
            check_strict_json_lines(path, path.read_bytes(), "prediction")
        except OSError as exc:
            raise EvaluationError(f"predictions file {path} cannot be read: {exc}") from exc
    predictions = _read_jsonl(path, Prediction, "predictions", "prediction")
    duplicates = _duplicates(p.qid for p in predictions)
    if duplicates:
        raise EvaluationError(f"{path}: predictions repeat {_name_qids(duplicates)}")
    meta_path = meta_path_beside(path)
    if not meta_path.is_file():
        raise EvaluationError(
            f"{meta_path} is missing: predictions are scored only with their run metadata (agent, date, "
            "qid-set hash), which the agent runner writes beside predictions.jsonl"
        )
    try:
        meta_bytes = meta_path.read_bytes()
        check_strict_json_lines(meta_path, meta_bytes.replace(b"\n", b" "), "run metadata")
        meta = PredictionRunMeta.model_validate_json(meta_bytes)
    except ValidationError as exc:
        raise EvaluationError(f"{meta_path} is not valid predictions run metadata: {exc}") from exc
    except OSError as exc:
        raise EvaluationError(f"{meta_path} cannot be read: {exc}") from exc
    return predictions, meta


def check_consistency(
    served: Sequence[ServedQuestion],
    gold: GoldDay,
    predictions: Sequence[Prediction],
    meta: PredictionRunMeta | None,
    *,
    served_path: Path,
    gold_path: Path,
    predictions_path: Path,
) -> list[str]:
    """Every cross-file fail-loud rule of DESIGN §4.7; returns the scoring set (sorted qids).

    The scoring set is the served set minus the qids D's manifest withdraws. A withdrawn qid
    need not have been served (a refresh may leave withdrawn questions out of the served file);
    any other gold qid must have been.
    """
    served_qids = {q.qid for q in served}
    served_date = _date_from_name(served_path, _SERVED_NAME)
    if served_date is not None and served_date != gold.date:
        raise EvaluationError(
            f"served questions {served_path.name} are of {served_date} but the gold {gold_path.name} "
            f"is of {gold.date}: a day is only scored against its own gold"
        )
    scoring = scoring_qids(served_qids, gold.manifest)
    if not scoring:
        raise EvaluationError(
            f"the scoring set of {gold.date} is empty: {served_path} serves {len(served_qids)} question(s) "
            f"and the manifest of {gold_path} withdraws {len(gold.withdrawn)}; there is nothing to score"
        )
    missing = set(scoring) - gold.answers.keys()
    if missing:
        raise EvaluationError(f"gold {gold_path} misses served {_name_qids(missing)}")
    unserved = gold.answers.keys() - served_qids - gold.withdrawn.keys()
    if unserved:
        raise EvaluationError(f"gold {gold_path} holds {_name_qids(unserved)} that were not served ({served_path})")
    # read_verified already ties every non-ok answer to a withdrawal; this guards the scoring set itself.
    unusable = [qid for qid in scoring if gold.answers[qid].status != "ok"]
    if unusable:
        raise EvaluationError(f"gold {gold_path} has no usable answer for {_name_qids(unusable)}")
    unknown = {p.qid for p in predictions} - served_qids
    if unknown:
        raise EvaluationError(f"predictions {predictions_path} answer unknown (not served) {_name_qids(unknown)}")
    if meta is not None:
        if meta.date != gold.date:
            raise EvaluationError(
                f"{meta_path_beside(predictions_path)} says the run is of {meta.date}, the gold is of {gold.date}"
            )
        expected_hash = qid_set_hash(served_qids)
        if meta.served_qid_set_hash != expected_hash:
            raise EvaluationError(
                f"{meta_path_beside(predictions_path)} records qid-set hash {meta.served_qid_set_hash}, "
                f"but {served_path} has {expected_hash}: the predictions answer another question set"
            )
    return scoring


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class PendingJudgement:
    """A verdict the deterministic matcher could not decide, to be settled by the judge."""

    question: ServedQuestion
    gold: GoldAnswer
    answer: str
    outcome: MatchOutcome
    lang: str = "en"  # the text the answer replies to


def _verdict(qid: str, gold: GoldAnswer, correct: bool | None, judge: str, reason: str, error: str | None = None) -> Verdict:
    return Verdict(qid=qid, correct=correct, rule=gold.match.rule, judge=judge, reason=reason, error=error)


def label_aliases(value: object) -> tuple[str, ...]:
    """The other names of a text gold value in the lexicon's reviewed labels (both languages)."""
    if not isinstance(value, str):
        return ()
    try:
        return load_lexicon().label_names(value)
    except LexiconError as exc:
        raise EvaluationError(f"the label glossary cannot be read: {exc}") from exc


def _match(gold: GoldAnswer, answer: str, lang: str = "en") -> MatchOutcome:
    if gold.value is None:
        raise EvaluationError(f"{gold.qid}: gold status 'ok' without a value")
    try:
        return match_answer(gold.match, gold.value, answer, gold_unit=gold.unit, lang=lang,
                            aliases=label_aliases(gold.value))
    except ValueError as exc:
        raise EvaluationError(f"{gold.qid}: the gold's rule or unit cannot score answers: {exc}") from exc


def check_answer_languages(served: Sequence[ServedQuestion], predictions: Sequence[Prediction],
                           predictions_path: Path) -> None:
    """Refuse predictions that say they answer a Chinese text the question does not have."""
    has_zh = {q.qid for q in served if q.question_zh}
    wrong = [p.qid for p in predictions if p.lang == "zh" and p.qid not in has_zh]
    if wrong:
        raise EvaluationError(f"predictions {predictions_path} say lang 'zh' for {_name_qids(wrong)} "
                              "served without a Chinese text (question_zh); answer those in 'en'")


def too_long_reason() -> str:
    return f"answer longer than {MAX_ANSWER_CHARS} characters"


def score_deterministic(gold: GoldAnswer, prediction: Prediction | None) -> tuple[Verdict, MatchOutcome | None]:
    """The deterministic verdict; the outcome is returned when the matcher asks for a judge."""
    if prediction is None:
        return _verdict(gold.qid, gold, False, DETERMINISTIC, "no prediction"), None
    answer = prediction.answer
    if answer is None or not answer.strip():
        reason = f"no answer (agent error: {prediction.error})" if prediction.error else "empty answer"
        return _verdict(gold.qid, gold, False, DETERMINISTIC, reason), None
    if len(answer) > MAX_ANSWER_CHARS:
        return _verdict(gold.qid, gold, False, DETERMINISTIC, too_long_reason()), None
    outcome = _match(gold, answer, prediction.answer_lang)
    verdict = _verdict(gold.qid, gold, outcome.correct, DETERMINISTIC, outcome.reason)
    return verdict, (outcome if outcome.needs_judge else None)


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


def settle_with_judge(pending: PendingJudgement, judge: LLMJudge) -> Verdict:
    gold, answer = pending.gold, pending.answer
    question = _question_text(pending.question, answer, pending.lang)
    if gold.match.rule == "semantic":
        judgement = judge.judge_semantic(question, gold.answer or str(gold.value), answer)
        if judgement.error is not None:
            return _verdict(gold.qid, gold, None, judge.label, "semantic judgement failed", judgement.error)
        return _verdict(gold.qid, gold, judgement.correct, judge.label, f"semantic: {judgement.reason}")
    unit = reading_unit(gold.match.unit, pending.lang) or gold.unit
    extraction = judge.extract_final_answer(question, answer, unit=unit)
    if extraction.error is not None:
        return _verdict(gold.qid, gold, None, judge.label, "final-answer extraction failed", extraction.error)
    if extraction.final_answer is None:
        return _verdict(
            gold.qid, gold, False, judge.label, f"no single final value in the answer: {extraction.reason}"
        )
    outcome = _match(gold, extraction.final_answer, pending.lang)
    if not _extraction_is_grounded(gold, pending, extraction.final_answer, outcome):
        return _verdict(
            gold.qid, gold, None, judge.label, "final-answer extraction failed",
            f"the judge extracted {extraction.final_answer!r}, which the answer does not state",
        )
    correct = outcome.correct and not outcome.needs_judge
    return _verdict(
        gold.qid, gold, correct, judge.label, f"extracted {extraction.final_answer!r}: {outcome.reason}"
    )


# --------------------------------------------------------------------------- summary


class Bucket(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    n: int
    correct: int
    judge_errors: int
    accuracy: float


class RunUsage(BaseModel):
    """The run's usage over the scoring set, summed from its predictions' `usage`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    questions_with_usage: int  # scoring qids whose prediction records usage
    model_calls: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None when a recorded question's cost is unknown (local/unpriced model)
    cost_per_correct_usd: float | None  # cost_usd / correct; None without a cost or a correct answer
    wall_s: float  # summed per-question time
    run_wall_s: float | None  # the run's started_at -> finished_at (meta), when finished


def summarise_usage(predictions: Iterable[Prediction], correct: int,
                    meta: PredictionRunMeta | None) -> RunUsage | None:
    usages: list[Usage] = [p.usage for p in predictions if p.usage is not None]
    if not usages:
        return None
    costs = [u.cost_usd for u in usages]
    cost = None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 6)
    run_wall = None
    if meta is not None and meta.finished_at is not None:
        run_wall = round((meta.finished_at - meta.started_at).total_seconds(), 3)
    return RunUsage(
        questions_with_usage=len(usages),
        model_calls=sum(u.model_calls for u in usages),
        tool_calls=sum(u.tool_calls for u in usages),
        input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        cost_usd=cost,
        cost_per_correct_usd=round(cost / correct, 6) if cost is not None and correct else None,
        wall_s=round(sum(u.wall_s for u in usages), 3),
        run_wall_s=run_wall,
    )


class EvaluationSummary(BaseModel):
    """`summary.json` of one evaluation run. Counts and accuracies are over the scoring set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gold_date: dt.date
    qid_set_hash: str  # of the scoring set: runs rank together only when it is equal
    served_qid_set_hash: str  # of the served file (what the agent was asked)
    agent: str | None
    model: str | None
    judge_model: str | None
    served_file: str
    gold_file: str
    gold_sha256: str
    gold_pool_sha256: str
    # Point in time of the gold (DESIGN §4.6): the cut-off it was computed at, or, for a provider
    # without a clock, its retrieval time and whether that was after D's cut-off.
    gold_cutoff: dt.datetime | None
    gold_vintage: dt.datetime | None
    gold_late_backfill: bool
    predictions_file: str
    max_answer_chars: int
    n_served: int
    n_withdrawn: int  # served qids the gold manifest withdraws (not scored)
    n_scored: int  # the scoring set: served minus withdrawn; the denominator of accuracy
    n_predictions: int
    n_ignored_withdrawn: int  # prediction lines for withdrawn qids
    n_missing: int  # scoring qids with no prediction line
    n_empty: int  # scoring qids whose prediction has no answer (agent error or blank)
    n_agent_errors: int
    n_too_long: int  # answers longer than max_answer_chars, scored wrong unread
    correct: int
    incorrect: int
    judge_errors: int
    accuracy: float  # correct / n_scored; judge errors count as not correct
    accuracy_decided: float | None  # correct / (n_scored - judge_errors)
    llm_verdicts: int  # verdicts that needed the LLM (judge errors included)
    llm_semantic: int
    llm_extraction: int
    unresolved_without_judge: int
    judge_llm_calls: int
    judge_cache_hits: int
    flagged: bool
    warnings: list[str] = Field(default_factory=list)
    by_tier: dict[str, Bucket]
    by_asset_class: dict[str, Bucket]
    by_visibility_band: dict[str, Bucket]
    by_language: dict[str, Bucket]
    by_refresh_class: dict[str, Bucket]
    # By the text answered (Prediction.lang); None in summaries written before it was recorded.
    by_answer_language: dict[str, Bucket] | None = None
    usage: RunUsage | None = None
    by_tier_and_visibility: dict[str, dict[str, Bucket]]
    verdicts_sha256: str  # of verdicts.jsonl beside it: the pair is complete only when they agree
    # The predictions scored (None only in summaries written before it was recorded: not ranked).
    predictions_sha256: str | None = None
    # The offline web the agent searched (web identity, clock, scope), for agents that search it.
    web: dict[str, str] | None = None


def _group(pairs: Iterable[tuple[str, Verdict]]) -> dict[str, Bucket]:
    # One pass of counters [n, correct, judge errors] per key: summaries run over every verdict.
    counts: dict[str, list[int]] = {}
    for key, verdict in pairs:
        tally = counts.get(key)
        if tally is None:
            tally = counts[key] = [0, 0, 0]
        tally[0] += 1
        if verdict.correct is True:
            tally[1] += 1
        elif verdict.correct is None:
            tally[2] += 1
    return {
        key: Bucket(n=n, correct=correct, judge_errors=errors, accuracy=correct / n)
        for key, (n, correct, errors) in sorted(counts.items())
    }


def language_of(question: ServedQuestion) -> str:
    return "zh" if question.question_zh else "en"


def render_verdicts(verdicts: Sequence[Verdict]) -> bytes:
    return render_jsonl(verdicts)


def summarise(
    served: Sequence[ServedQuestion],
    scoring: Sequence[str],
    verdicts: Sequence[Verdict],
    predictions: Sequence[Prediction],
    *,
    gold: GoldDay,
    meta: PredictionRunMeta | None,
    judge: LLMJudge | None,
    unresolved: int,
    files: tuple[Path, Path, Path],
) -> EvaluationSummary:
    by_qid = {v.qid: v for v in verdicts}
    scored = set(scoring)
    rows = [(q, by_qid[q.qid]) for q in served if q.qid in scored]
    predicted = {p.qid: p for p in predictions if p.qid in scored}
    n_empty = sum(1 for p in predicted.values() if p.answer is None or not p.answer.strip())
    correct = sum(1 for v in verdicts if v.correct is True)
    judge_errors = sum(1 for v in verdicts if v.correct is None)
    llm = [v for v in verdicts if v.judge != DETERMINISTIC]
    warnings: list[str] = []
    if judge_errors:
        warnings.append(
            f"{judge_errors} verdict(s) are judge errors, counted as not correct in accuracy; "
            "re-run the evaluation (cached judgements are reused) or inspect verdicts.jsonl"
        )
    if unresolved:
        warnings.append(
            f"{unresolved} answer(s) needed the LLM judge but none was configured; they are scored "
            "by the deterministic fallback (not correct)"
        )
    if gold.manifest.late_backfill:
        warnings.append(
            f"the gold of {gold.date} was recomputed after its cut-off (retrieved {gold.manifest.vintage}); "
            "it may hold figures published after that day"
        )
    decided = len(verdicts) - judge_errors
    served_path, gold_path, predictions_path = files
    served_qids = {q.qid for q in served}
    tier_vis: dict[str, dict[str, Bucket]] = {}
    for tier in sorted({q.tier for q, _ in rows}):
        # Levels of instruments only: market-wide series are their own band (by_visibility_band).
        tier_vis[tier] = _group((str(q.visibility), v) for q, v in rows if q.tier == tier and is_instrument(q.asset_class))
    too_long = too_long_reason()
    return EvaluationSummary(
        gold_date=gold.date,
        qid_set_hash=qid_set_hash(scoring),
        served_qid_set_hash=qid_set_hash(served_qids),
        agent=meta.agent if meta else None,
        model=meta.model if meta else None,
        judge_model=judge.model if judge else None,
        served_file=str(served_path),
        gold_file=str(gold_path),
        gold_sha256=gold.sha256,
        gold_pool_sha256=gold.manifest.pool_sha256,
        gold_cutoff=gold.manifest.cutoff,
        gold_vintage=gold.manifest.vintage,
        gold_late_backfill=gold.manifest.late_backfill,
        predictions_file=str(predictions_path),
        max_answer_chars=MAX_ANSWER_CHARS,
        n_served=len(served),
        n_withdrawn=len(served_qids & gold.withdrawn.keys()),
        n_scored=len(scoring),
        n_predictions=len(predictions),
        n_ignored_withdrawn=sum(1 for p in predictions if p.qid in gold.withdrawn),
        n_missing=sum(1 for qid in scoring if qid not in predicted),
        n_empty=n_empty,
        n_agent_errors=sum(1 for p in predicted.values() if p.error),
        n_too_long=sum(1 for v in verdicts if v.judge == DETERMINISTIC and v.reason == too_long),
        correct=correct,
        incorrect=len(verdicts) - correct - judge_errors,
        judge_errors=judge_errors,
        accuracy=correct / len(verdicts) if verdicts else 0.0,
        accuracy_decided=correct / decided if decided else None,
        llm_verdicts=len(llm),
        llm_semantic=sum(1 for v in llm if v.rule == "semantic"),
        llm_extraction=sum(1 for v in llm if v.rule != "semantic"),
        unresolved_without_judge=unresolved,
        judge_llm_calls=judge.stats.llm_calls if judge else 0,
        judge_cache_hits=judge.stats.cache_hits if judge else 0,
        flagged=bool(judge_errors),
        warnings=warnings,
        by_tier=_group((q.tier, v) for q, v in rows),
        by_asset_class=_group((q.asset_class, v) for q, v in rows),
        by_visibility_band=_group((visibility_band(q.visibility, q.asset_class), v) for q, v in rows),
        by_language=_group((language_of(q), v) for q, v in rows),
        by_refresh_class=_group((q.refresh_class, v) for q, v in rows),
        by_answer_language=_group(
            ((predicted[q.qid].answer_lang if q.qid in predicted else "en"), v) for q, v in rows),
        usage=summarise_usage(predicted.values(), correct, meta),
        by_tier_and_visibility=tier_vis,
        verdicts_sha256=sha256_bytes(render_verdicts(verdicts)),
    )


# --------------------------------------------------------------------------- entry points


@dataclass(frozen=True)
class EvaluationResult:
    verdicts: list[Verdict]  # one per scoring qid, sorted by qid
    summary: EvaluationSummary


def evaluate(
    served_path: Path,
    gold_path: Path,
    predictions_path: Path,
    *,
    judge: LLMJudge | None = None,
    judge_concurrency: int = 8,
) -> EvaluationResult:
    """Score a predictions file against the gold of its day; raises EvaluationError (fail loud)."""
    served_path, gold_path, predictions_path = Path(served_path), Path(gold_path), Path(predictions_path)
    served = load_served(served_path)
    gold = load_gold(gold_path)
    predictions, meta = load_predictions(predictions_path)
    predictions_sha256 = sha256_file(predictions_path)
    scoring = check_consistency(
        served, gold, predictions, meta,
        served_path=served_path, gold_path=gold_path, predictions_path=predictions_path,
    )
    check_answer_languages(served, predictions, predictions_path)
    if judge is not None and meta is not None and meta.model:
        try:
            ensure_judge_independent(judge.model, {meta.agent: meta.model})
        except JudgeIndependenceError as exc:
            raise EvaluationError(str(exc)) from exc
    predicted = {p.qid: p for p in predictions}
    scored = set(scoring)
    verdicts: dict[str, Verdict] = {}
    pending: list[PendingJudgement] = []
    for question in served:
        if question.qid not in scored:
            continue  # withdrawn from D: its prediction, if any, is ignored
        prediction = predicted.get(question.qid)
        gold_answer = gold.answers[question.qid]
        verdict, undecided = score_deterministic(gold_answer, prediction)
        verdicts[question.qid] = verdict
        if undecided is not None and prediction is not None and prediction.answer is not None:
            pending.append(PendingJudgement(question, gold_answer, prediction.answer, undecided,
                                            prediction.answer_lang))
    unresolved = 0
    if pending and judge is not None:
        with ThreadPoolExecutor(max_workers=max(1, judge_concurrency)) as pool:
            for item, verdict in zip(pending, pool.map(lambda p: settle_with_judge(p, judge), pending)):
                verdicts[item.gold.qid] = verdict
    else:
        unresolved = len(pending)
    ordered = [verdicts[qid] for qid in sorted(verdicts)]
    summary = summarise(
        served, scoring, ordered, predictions, gold=gold, meta=meta, judge=judge, unresolved=unresolved,
        files=(served_path, gold_path, predictions_path),
    ).model_copy(update={"predictions_sha256": predictions_sha256})
    return EvaluationResult(verdicts=ordered, summary=summary)


VERDICTS_FILE = "verdicts.jsonl"
SUMMARY_FILE = "summary.json"
# Files the evaluator reads beside its inputs; an output must never land on one of them.
_OUTPUTS = (VERDICTS_FILE, SUMMARY_FILE)


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)  # hard links, bind mounts
    except OSError:
        return False


def check_output_paths(out_dir: Path, inputs: Sequence[Path]) -> None:
    """Refuse an output directory whose writes would land on an input, or that cannot be one.

    Symlinks and relative paths are resolved, and hard links compared by inode, so `--out .`
    beside a predictions file named `summary.json`, or a `verdicts.jsonl` symlinked to the
    gold, are caught before anything is evaluated or written.
    """
    out_dir = Path(out_dir)
    for ancestor in (out_dir, *out_dir.parents):
        if ancestor.exists() and not ancestor.is_dir():
            raise EvaluationError(f"output directory {out_dir}: {ancestor} is a file, not a directory")
    check_not_protected(out_dir, inputs)
    for name in _OUTPUTS:
        target = out_dir / name
        for source in inputs:
            if _same_file(target, Path(source)):
                raise EvaluationError(
                    f"output {target} is the input {source}: writing it would overwrite an input; "
                    "choose another --out directory"
                )
        if target.exists() and not target.is_file():
            raise EvaluationError(f"output {target} exists and is not a regular file")


def protected_directories(inputs: Sequence[Path] = ()) -> list[Path]:
    """Folders no evaluation output may land in: the data root's gold, served and pool folders,
    and the folder of any gold snapshot among `inputs` (write-once territory)."""
    from livesearch_pipeline.settings import DataPaths

    paths = DataPaths.from_env()
    folders = [paths.gold, paths.served, paths.pool]
    folders += [Path(p).parent for p in inputs if snapshot_date(Path(p)) is not None]
    return folders


def _inside(path: Path, folder: Path) -> bool:
    try:
        resolved, base = path.resolve(), folder.resolve()
    except OSError:
        return False
    return resolved == base or base in resolved.parents


def check_not_protected(out_dir: Path, inputs: Sequence[Path] = ()) -> None:
    """EvaluationError when `out_dir` is inside the gold, served or pool folder (`protected_directories`)."""
    for folder in protected_directories(inputs):
        if _inside(Path(out_dir), folder):
            raise EvaluationError(
                f"output directory {out_dir} is inside {folder}, which holds the benchmark's gold, served "
                "questions or pool: an evaluation is never written there; choose another --out directory"
            )


def evaluation_inputs(served_path: Path, gold_path: Path, predictions_path: Path) -> list[Path]:
    """Every file `evaluate` reads for these inputs (the gold manifest and run metadata included)."""
    gold_path = Path(gold_path)
    gold_date = snapshot_date(gold_path)  # a gold file named otherwise is refused by `load_gold`
    gold_manifest = [SnapshotStore(gold_path.parent).manifest_path_for(gold_date)] if gold_date else []
    return [Path(served_path), gold_path, *gold_manifest, Path(predictions_path), meta_path_beside(Path(predictions_path))]


def _render_summary(summary: EvaluationSummary) -> bytes:
    return (json.dumps(summary.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_evaluation(result: EvaluationResult, out_dir: Path, *, inputs: Sequence[Path] = ()) -> tuple[Path, Path]:
    """Write summary.json and verdicts.jsonl as one unit; never verdicts without their summary.

    Two files in a directory that also holds the run's predictions cannot be renamed together,
    so the unit is made by order and by hash: the old verdicts are removed first, the summary
    (which records the new verdicts' sha256) is written next, the verdicts last, each file
    atomically (temporary file, fsync, rename). A crash at any point leaves either the complete
    pair, or a summary whose verdicts are missing — which `load_evaluation` (and so the
    leaderboard) reports as an incomplete evaluation — and never verdicts without a summary,
    nor a summary beside another run's verdicts. `inputs` are checked first with
    `check_output_paths`.
    """
    out_dir = Path(out_dir)
    check_output_paths(out_dir, inputs)
    verdicts_path, summary_path = out_dir / VERDICTS_FILE, out_dir / SUMMARY_FILE
    verdicts_bytes = render_verdicts(result.verdicts)
    if sha256_bytes(verdicts_bytes) != result.summary.verdicts_sha256:
        raise EvaluationError("the verdicts differ from the ones the summary was made from")
    out_dir.mkdir(parents=True, exist_ok=True)
    if verdicts_path.exists() or verdicts_path.is_symlink():
        verdicts_path.unlink()
    write_atomic(summary_path, _render_summary(result.summary))
    write_atomic(verdicts_path, verdicts_bytes)
    return verdicts_path, summary_path


class IncompleteEvaluationError(EvaluationError):
    """A run directory whose summary.json and verdicts.jsonl do not form a complete evaluation."""


def load_summary(path: Path) -> EvaluationSummary:
    try:
        return EvaluationSummary.model_validate_json(Path(path).read_bytes())
    except (OSError, ValidationError) as exc:
        raise EvaluationError(f"{path} is not a readable evaluation summary: {exc}") from exc


def load_evaluation(run_dir: Path) -> tuple[EvaluationSummary, Path]:
    """The summary of a complete evaluation in `run_dir`, checked against its verdicts.jsonl.

    IncompleteEvaluationError when either file is missing or the verdicts' sha256 differs from
    the summary's record (an interrupted write, or files from two runs).
    """
    run_dir = Path(run_dir)
    summary_path, verdicts_path = run_dir / SUMMARY_FILE, run_dir / VERDICTS_FILE
    if not summary_path.is_file():
        raise IncompleteEvaluationError(f"{run_dir} has no {SUMMARY_FILE}: evaluate the run first")
    summary = load_summary(summary_path)
    if not verdicts_path.is_file():
        raise IncompleteEvaluationError(
            f"{run_dir} has {SUMMARY_FILE} but no {VERDICTS_FILE}: the evaluation was interrupted; evaluate again"
        )
    actual = sha256_file(verdicts_path)
    if actual != summary.verdicts_sha256:
        raise IncompleteEvaluationError(
            f"{verdicts_path} has sha256 {actual} but {summary_path.name} records {summary.verdicts_sha256}: "
            "the pair is not one evaluation; evaluate again"
        )
    return summary, verdicts_path


def read_verdicts(path: Path) -> list[Verdict]:
    """The verdicts of a `verdicts.jsonl` (blank lines skipped); JsonlError names the file and bad lines."""
    return read_jsonl(path, Verdict, "verdict", skip_blank=True)
