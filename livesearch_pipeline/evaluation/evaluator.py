"""The strict evaluator (DESIGN §4.7): score one day's predictions against that day's gold.

Fail-loud rules — any of them raises one `EvaluationError` before anything is scored or
written, and the message names the file, the line numbers or the qids (first few + count):

- the served questions, gold snapshot or predictions file is missing or has malformed lines;
- the gold misses a served qid, holds a qid that was not served, or holds an `empty`/`error`
  answer for a served qid; its rows are not all of one date, or its file name says another date;
- a manifest lies beside the gold and the gold bytes differ from it (sha256, records, date);
- the served file name or the predictions' run metadata names another date or qid set;
- predictions hold unknown or duplicate qids.

Nothing is ever read from another date's gold. A served qid without a prediction, or with an
empty answer or an agent error, scores 0: the denominator is always the served set.

Scoring is deterministic first (`core.matching.match_answer`). The LLM judge is used only when
the matcher says it cannot decide: a `semantic` rule whose normalised texts differ, or a long
answer with several candidate numbers and no marker of the final one (the judge then extracts
the committed value and the number is matched deterministically, and it must be one of the
numbers the text contains). Without a judge those verdicts stay deterministic and incorrect, and
the summary counts them as `unresolved_without_judge`.

Judge errors: a verdict with `correct=None` and an `error`. Accuracy counts them as not correct
(the denominator stays the served set, nothing is averaged in as a number); the summary reports
`judge_errors`, sets `flagged` and says so in `warnings`, and also gives `accuracy_decided`
(correct / verdicts the judge decided) so a reader can bound the effect.

Language breakdown: "zh" for questions served with a Chinese text (`question_zh`, i.e.
Chinese-market entities), "en" otherwise. Predictions do not record which text the agent read,
so the served question is the only reliable, agent-independent signal.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from livesearch_pipeline.core.matching import MatchOutcome, match_answer, normalize_text
from livesearch_pipeline.core.models import (
    GoldAnswer,
    Prediction,
    PredictionRunMeta,
    ServedQuestion,
    SnapshotManifest,
    Verdict,
)
from livesearch_pipeline.core.snapshot import sha256_bytes, write_atomic
from livesearch_pipeline.evaluation.judge import JudgeIndependenceError, LLMJudge, ensure_judge_independent
from livesearch_pipeline.evaluation.prompts import detect_language

DETERMINISTIC = "deterministic"
_GOLD_NAME = re.compile(r"^gold_answers_(\d{4}-\d{2}-\d{2})\.jsonl$")
_SERVED_NAME = re.compile(r"^served_questions_(\d{4}-\d{2}-\d{2})\.jsonl$")
_SHOWN_QIDS = 5
_CANDIDATE_REL_TOL = 1e-9

Record = TypeVar("Record", bound=BaseModel)


class EvaluationError(ValueError):
    """A fail-loud rule was violated; nothing must be written."""


def qid_set_hash(qids: Iterable[str]) -> str:
    """sha256 of the sorted, de-duplicated qids joined by "\\n": the identity of a benchmark day."""
    return hashlib.sha256("\n".join(sorted(set(qids))).encode("utf-8")).hexdigest()


def visibility_band(level: int) -> str:
    if not 0 <= level <= 10:
        raise ValueError(f"visibility level {level} is outside 0..10")
    return "low" if level <= 3 else "mid" if level <= 6 else "high"


def _name_qids(qids: Iterable[str]) -> str:
    ordered = sorted(qids)
    shown = ", ".join(ordered[:_SHOWN_QIDS])
    more = f" and {len(ordered) - _SHOWN_QIDS} more" if len(ordered) > _SHOWN_QIDS else ""
    return f"{len(ordered)} qid(s): {shown}{more}"


# --------------------------------------------------------------------------- loading


def _read_bytes(path: Path, what: str) -> bytes:
    if not path.is_file():
        raise EvaluationError(f"{what} file {path} does not exist")
    return path.read_bytes()


@functools.cache
def _list_adapter(model: type[Record]) -> TypeAdapter[list[Record]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def parse_jsonl(path: Path, data: bytes, model: type[Record], what: str) -> list[Record]:
    """Every line of `data` as `model`; all malformed lines are reported with their numbers.

    The whole file is validated in one pydantic call (about twice as fast as line by line);
    only when that fails are the lines validated one by one, to name every bad line.
    """
    lines = data.splitlines()
    try:
        records = _list_adapter(model).validate_json(b"[" + b",".join(lines) + b"]")
    except ValidationError:
        return _parse_lines_reporting(path, lines, model, what)
    if len(records) != len(lines):  # a line holding several objects, e.g. `{...},{...}`
        return _parse_lines_reporting(path, lines, model, what)
    return records


def _parse_lines_reporting(path: Path, lines: list[bytes], model: type[Record], what: str) -> list[Record]:
    records: list[Record] = []
    problems: list[str] = []
    bad_lines = 0
    for number, line in enumerate(lines, start=1):
        try:
            if not line.strip():
                raise ValueError("blank line")
            records.append(model.model_validate_json(line))
        except (ValidationError, ValueError) as exc:
            bad_lines += 1
            if len(problems) < _SHOWN_QIDS:
                first = exc.errors()[0] if isinstance(exc, ValidationError) else None
                detail = (
                    f"{'.'.join(str(p) for p in first['loc']) or 'line'}: {first['msg']}" if first else str(exc)
                )
                problems.append(f"line {number}: {detail}")
    if bad_lines:
        raise EvaluationError(
            f"{path}: {bad_lines} malformed {what} line(s) — " + "; ".join(problems)
        )
    raise EvaluationError(f"{path}: the {what} file is not valid JSON lines")


def _duplicates(qids: Iterable[str]) -> list[str]:
    return sorted(q for q, n in Counter(qids).items() if n > 1)


def _date_from_name(path: Path, pattern: re.Pattern[str]) -> dt.date | None:
    match = pattern.match(path.name)
    return dt.date.fromisoformat(match.group(1)) if match else None


def manifest_path_beside(gold_path: Path) -> Path:
    return gold_path.with_name(gold_path.name.removesuffix(".jsonl") + ".manifest.json")


def meta_path_beside(predictions_path: Path) -> Path:
    return predictions_path.with_name(predictions_path.name.removesuffix(".jsonl") + ".meta.json")


@dataclass(frozen=True)
class GoldDay:
    date: dt.date
    answers: dict[str, GoldAnswer]
    sha256: str
    manifest_verified: bool


def load_served(path: Path) -> list[ServedQuestion]:
    served = parse_jsonl(path, _read_bytes(path, "served questions"), ServedQuestion, "served question")
    duplicates = _duplicates(q.qid for q in served)
    if duplicates:
        raise EvaluationError(f"{path}: served questions repeat {_name_qids(duplicates)}")
    return served


def load_gold(path: Path) -> GoldDay:
    """The gold of one date, checked against the manifest beside it when there is one."""
    data = _read_bytes(path, "gold snapshot")
    answers = parse_jsonl(path, data, GoldAnswer, "gold answer")
    duplicates = _duplicates(a.qid for a in answers)
    if duplicates:
        raise EvaluationError(f"{path}: gold repeats {_name_qids(duplicates)}")
    dates = sorted({a.date for a in answers})
    named = _date_from_name(path, _GOLD_NAME)
    if len(dates) > 1:
        raise EvaluationError(f"{path}: gold rows carry several dates {[d.isoformat() for d in dates]}")
    if named is not None and dates and dates[0] != named:
        raise EvaluationError(f"{path}: the file is named for {named} but its rows are dated {dates[0]}")
    date = named or (dates[0] if dates else None)
    if date is None:
        raise EvaluationError(f"{path}: empty gold with no date in its name (gold_answers_<D>.jsonl)")
    sha = sha256_bytes(data)
    manifest_path = manifest_path_beside(path)
    verified = manifest_path.is_file()
    if verified:
        _check_manifest(manifest_path, path, sha, len(answers), date)
    return GoldDay(date=date, answers={a.qid: a for a in answers}, sha256=sha, manifest_verified=verified)


def _check_manifest(manifest_path: Path, gold_path: Path, sha: str, records: int, date: dt.date) -> None:
    try:
        manifest = SnapshotManifest.model_validate_json(manifest_path.read_bytes())
    except ValidationError as exc:
        raise EvaluationError(f"{manifest_path} is not a valid snapshot manifest: {exc}") from exc
    if manifest.sha256 != sha:
        raise EvaluationError(
            f"{gold_path} has sha256 {sha} but {manifest_path.name} records {manifest.sha256}: "
            "the gold snapshot was modified or truncated"
        )
    if manifest.records != records or manifest.date != date:
        raise EvaluationError(
            f"{manifest_path.name} describes {manifest.records} records of {manifest.date}, "
            f"but {gold_path.name} holds {records} records of {date}"
        )


def load_predictions(path: Path) -> tuple[list[Prediction], PredictionRunMeta | None]:
    predictions = parse_jsonl(path, _read_bytes(path, "predictions"), Prediction, "prediction")
    duplicates = _duplicates(p.qid for p in predictions)
    if duplicates:
        raise EvaluationError(f"{path}: predictions repeat {_name_qids(duplicates)}")
    meta_path = meta_path_beside(path)
    meta = None
    if meta_path.is_file():
        try:
            meta = PredictionRunMeta.model_validate_json(meta_path.read_bytes())
        except ValidationError as exc:
            raise EvaluationError(f"{meta_path} is not valid predictions run metadata: {exc}") from exc
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
) -> None:
    """Every cross-file fail-loud rule of DESIGN §4.7; raises EvaluationError."""
    served_qids = {q.qid for q in served}
    served_date = _date_from_name(served_path, _SERVED_NAME)
    if served_date is not None and served_date != gold.date:
        raise EvaluationError(
            f"served questions {served_path.name} are of {served_date} but the gold {gold_path.name} "
            f"is of {gold.date}: a day is only scored against its own gold"
        )
    missing = served_qids - gold.answers.keys()
    if missing:
        raise EvaluationError(f"gold {gold_path} misses served {_name_qids(missing)}")
    unserved = gold.answers.keys() - served_qids
    if unserved:
        raise EvaluationError(f"gold {gold_path} holds {_name_qids(unserved)} that were not served ({served_path})")
    unusable = [qid for qid in served_qids if gold.answers[qid].status != "ok"]
    if unusable:
        statuses = Counter(gold.answers[q].status for q in unusable)
        raise EvaluationError(
            f"gold {gold_path} has no usable answer ({dict(sorted(statuses.items()))}) for served {_name_qids(unusable)}"
        )
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


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class PendingJudgement:
    """A verdict the deterministic matcher could not decide, to be settled by the judge."""

    question: ServedQuestion
    gold: GoldAnswer
    answer: str
    outcome: MatchOutcome


def _verdict(qid: str, gold: GoldAnswer, correct: bool | None, judge: str, reason: str, error: str | None = None) -> Verdict:
    return Verdict(qid=qid, correct=correct, rule=gold.match.rule, judge=judge, reason=reason, error=error)


def _match(gold: GoldAnswer, answer: str) -> MatchOutcome:
    if gold.value is None:
        raise EvaluationError(f"{gold.qid}: gold status 'ok' without a value")
    try:
        return match_answer(gold.match, gold.value, answer, gold_unit=gold.unit)
    except ValueError as exc:
        raise EvaluationError(f"{gold.qid}: the gold's rule or unit cannot score answers: {exc}") from exc


def score_deterministic(gold: GoldAnswer, prediction: Prediction | None) -> tuple[Verdict, MatchOutcome | None]:
    """The deterministic verdict; the outcome is returned when the matcher asks for a judge."""
    if prediction is None:
        return _verdict(gold.qid, gold, False, DETERMINISTIC, "no prediction"), None
    answer = prediction.answer
    if answer is None or not answer.strip():
        reason = f"no answer (agent error: {prediction.error})" if prediction.error else "empty answer"
        return _verdict(gold.qid, gold, False, DETERMINISTIC, reason), None
    outcome = _match(gold, answer)
    verdict = _verdict(gold.qid, gold, outcome.correct, DETERMINISTIC, outcome.reason)
    return verdict, (outcome if outcome.needs_judge else None)


def _question_text(question: ServedQuestion, answer: str) -> str:
    if question.question_zh and detect_language(answer) == "zh":
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
    question = _question_text(pending.question, answer)
    if gold.match.rule == "semantic":
        judgement = judge.judge_semantic(question, gold.answer or str(gold.value), answer)
        if judgement.error is not None:
            return _verdict(gold.qid, gold, None, judge.label, "semantic judgement failed", judgement.error)
        return _verdict(gold.qid, gold, judgement.correct, judge.label, f"semantic: {judgement.reason}")
    extraction = judge.extract_final_answer(question, answer, unit=gold.match.unit or gold.unit)
    if extraction.error is not None:
        return _verdict(gold.qid, gold, None, judge.label, "final-answer extraction failed", extraction.error)
    if extraction.final_answer is None:
        return _verdict(
            gold.qid, gold, False, judge.label, f"no single final value in the answer: {extraction.reason}"
        )
    outcome = _match(gold, extraction.final_answer)
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


class EvaluationSummary(BaseModel):
    """`summary.json` of one evaluation run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gold_date: dt.date
    qid_set_hash: str
    agent: str | None
    model: str | None
    judge_model: str | None
    served_file: str
    gold_file: str
    gold_sha256: str
    gold_manifest_verified: bool
    predictions_file: str
    n_served: int
    n_predictions: int
    n_missing: int  # served qids with no prediction line
    n_empty: int  # prediction lines without an answer (agent error or blank)
    n_agent_errors: int
    correct: int
    incorrect: int
    judge_errors: int
    accuracy: float  # correct / n_served; judge errors count as not correct
    accuracy_decided: float | None  # correct / (n_served - judge_errors)
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
    by_tier_and_visibility: dict[str, dict[str, Bucket]]


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


def summarise(
    served: Sequence[ServedQuestion],
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
    rows = [(q, by_qid[q.qid]) for q in served]
    predicted = {p.qid: p for p in predictions}
    n_empty = sum(1 for p in predictions if p.answer is None or not p.answer.strip())
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
    if not gold.manifest_verified:
        warnings.append("no manifest beside the gold snapshot: its integrity was not verified")
    decided = len(verdicts) - judge_errors
    served_path, gold_path, predictions_path = files
    tier_vis: dict[str, dict[str, Bucket]] = {}
    for tier in sorted({q.tier for q in served}):
        tier_vis[tier] = _group((str(q.visibility), v) for q, v in rows if q.tier == tier)
    return EvaluationSummary(
        gold_date=gold.date,
        qid_set_hash=qid_set_hash(by_qid),
        agent=meta.agent if meta else None,
        model=meta.model if meta else None,
        judge_model=judge.model if judge else None,
        served_file=str(served_path),
        gold_file=str(gold_path),
        gold_sha256=gold.sha256,
        gold_manifest_verified=gold.manifest_verified,
        predictions_file=str(predictions_path),
        n_served=len(served),
        n_predictions=len(predictions),
        n_missing=sum(1 for q in served if q.qid not in predicted),
        n_empty=n_empty,
        n_agent_errors=sum(1 for p in predictions if p.error),
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
        by_visibility_band=_group((visibility_band(q.visibility), v) for q, v in rows),
        by_language=_group((language_of(q), v) for q, v in rows),
        by_refresh_class=_group((q.refresh_class, v) for q, v in rows),
        by_tier_and_visibility=tier_vis,
    )


# --------------------------------------------------------------------------- entry points


@dataclass(frozen=True)
class EvaluationResult:
    verdicts: list[Verdict]  # one per served qid, sorted by qid
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
    check_consistency(
        served, gold, predictions, meta,
        served_path=served_path, gold_path=gold_path, predictions_path=predictions_path,
    )
    if judge is not None and meta is not None and meta.model:
        try:
            ensure_judge_independent(judge.model, {meta.agent: meta.model})
        except JudgeIndependenceError as exc:
            raise EvaluationError(str(exc)) from exc
    predicted = {p.qid: p for p in predictions}
    verdicts: dict[str, Verdict] = {}
    pending: list[PendingJudgement] = []
    for question in served:
        prediction = predicted.get(question.qid)
        gold_answer = gold.answers[question.qid]
        verdict, undecided = score_deterministic(gold_answer, prediction)
        verdicts[question.qid] = verdict
        if undecided is not None and prediction is not None and prediction.answer is not None:
            pending.append(PendingJudgement(question, gold_answer, prediction.answer, undecided))
    unresolved = 0
    if pending and judge is not None:
        with ThreadPoolExecutor(max_workers=max(1, judge_concurrency)) as pool:
            for item, verdict in zip(pending, pool.map(lambda p: settle_with_judge(p, judge), pending)):
                verdicts[item.gold.qid] = verdict
    else:
        unresolved = len(pending)
    ordered = [verdicts[qid] for qid in sorted(verdicts)]
    summary = summarise(
        served, ordered, predictions, gold=gold, meta=meta, judge=judge, unresolved=unresolved,
        files=(served_path, gold_path, predictions_path),
    )
    return EvaluationResult(verdicts=ordered, summary=summary)


VERDICTS_FILE = "verdicts.jsonl"
SUMMARY_FILE = "summary.json"


def render_verdicts(verdicts: Sequence[Verdict]) -> bytes:
    return "".join(v.model_dump_json() + "\n" for v in verdicts).encode("utf-8")


def write_evaluation(result: EvaluationResult, out_dir: Path) -> tuple[Path, Path]:
    """Write verdicts.jsonl then summary.json atomically; the summary marks a complete run."""
    out_dir = Path(out_dir)
    verdicts_path, summary_path = out_dir / VERDICTS_FILE, out_dir / SUMMARY_FILE
    summary_bytes = (json.dumps(result.summary.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    write_atomic(verdicts_path, render_verdicts(result.verdicts))
    write_atomic(summary_path, summary_bytes)
    return verdicts_path, summary_path


def load_summary(path: Path) -> EvaluationSummary:
    try:
        return EvaluationSummary.model_validate_json(Path(path).read_bytes())
    except (OSError, ValidationError) as exc:
        raise EvaluationError(f"{path} is not a readable evaluation summary: {exc}") from exc


def load_verdicts(path: Path) -> list[Verdict]:
    return parse_jsonl(Path(path), _read_bytes(Path(path), "verdicts"), Verdict, "verdict")
