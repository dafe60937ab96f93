"""The summary of one evaluation (`summary.json`, DESIGN §4.7): counts, accuracies and breakdowns
over the scoring set, and what the run's predictions record of their cost.

Judge errors: a verdict with `correct=None` and an `error`. Accuracy counts them as not correct
(the denominator stays the scoring set, nothing is averaged in as a number); the summary reports
`judge_errors`, sets `flagged` and says so in `warnings`, and also gives `accuracy_decided`
(correct / verdicts the judge decided) so a reader can bound the effect. Verdicts that needed the
judge when none was configured are counted as `unresolved_without_judge`.

Language breakdown: `by_language` is by the question ("zh" for questions served with a Chinese
text, `question_zh`, i.e. Chinese-market entities; "en" otherwise), `by_answer_language` by the
text the agent answered (`Prediction.lang`, absent = "en"; a missing prediction counts as "en").

Usage: `usage` sums what the predictions record (`Prediction.usage`: model and tool calls,
tokens, cost, time; a web agent's searches, page reads and budget refusals) over the scoring set,
with the cost and the page reads per correct answer; it is None when no prediction records usage
(baselines that read nothing: oracle, stale), and its cost is None when any recorded question's
cost is unknown (a local or unpriced model). `budget` is the run's declared read budget per
question (its metadata's), so that a score is always read with the budget it was made at.

The summary records the sha256 of the verdicts' bytes (`render_verdicts`, the bytes `outputs`
writes to `verdicts.jsonl`), so that the pair can be checked to be one evaluation.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from livesearch_pipeline.core.jsonl import render_jsonl
from livesearch_pipeline.core.models import Prediction, PredictionRunMeta, ReadBudget, ServedQuestion, Usage, Verdict
from livesearch_pipeline.core.pool import is_instrument, visibility_band
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.snapshot import sha256_bytes
from livesearch_pipeline.evaluation.inputs import GoldDay
from livesearch_pipeline.evaluation.judge import LLMJudge
from livesearch_pipeline.evaluation.limits import MAX_ANSWER_CHARS
from livesearch_pipeline.evaluation.scoring import DETERMINISTIC, too_long_reason


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
    # A web agent's searches and distinct page reads over the scoring set, the searches or reads
    # its budget refused, and its page reads per correct answer (None without a correct answer).
    searches: int = 0
    page_reads: int = 0
    budget_refusals: int = 0
    reads_per_correct: float | None = None


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
        searches=sum(u.searches for u in usages),
        page_reads=(reads := sum(u.page_reads for u in usages)),
        budget_refusals=sum(u.budget_refusals for u in usages),
        reads_per_correct=round(reads / correct, 2) if correct and reads else None,
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
    # The run's declared budget per question (a web agent's; None: none declared).
    budget: ReadBudget | None = None
    # What ran it, from its metadata: the code version (`livesearch agent run`) and the harness
    # (Inspect, own predictions); None when not recorded.
    code_version: str | None = None
    harness: str | None = None
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
    n_scored: int  # the scoring set: served minus withdrawn (minus withheld); the denominator of accuracy
    # Scored against a site's gold download: the scoring set's golds it withheld (live), not scored.
    n_withheld: int = 0
    published_gold: bool = False
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
    if gold.published:
        warnings.append(
            f"scored against the site's published gold of {gold.date}: on the {len(scoring)} published question(s) "
            f"only, {len(gold.withheld)} withheld gold(s) (still live) not scored; this accuracy is not the board's "
            f"(its qid-set hash names the published set)"
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
        budget=meta.budget if meta else None,
        code_version=meta.code_version if meta else None,
        harness=meta.harness if meta else None,
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
        n_withheld=len(served_qids & gold.withheld),
        published_gold=gold.published,
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



@dataclass(frozen=True)
class EvaluationResult:
    verdicts: list[Verdict]  # one per scoring qid, sorted by qid
    summary: EvaluationSummary
