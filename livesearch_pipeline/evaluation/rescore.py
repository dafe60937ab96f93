"""Re-derive a run's verdicts: its predictions scored again against the configured gold.

The one source of truth for a score (issue 30): the leaderboard and the analytical store never
take a `verdicts.jsonl` at its word. `rescored_differences` runs the evaluator again on the run's
predictions (bound by their sha256 elsewhere) against the gold of the configured folder (the
evaluator verifies its manifest) and compares the verdicts; a judge verdict is reused only from
the LLM request-hash cache (`infra.llm.cached_complete`), whose key is the question, the answer,
the gold and the judge model, so no judgement is trusted that was not asked exactly so.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.judge import LLMJudge
from livesearch_pipeline.infra.llm import cached_complete

NOT_CACHED = "no cached reply"


def cached_judge(judge_model: str | None, *, llm_cache: Path | None, api_base: str | None) -> LLMJudge | None:
    """The run's judge answering only from the LLM cache; None for a run scored without a judge."""
    if not judge_model:
        return None
    return LLMJudge(judge_model, cache_dir=llm_cache, api_base=api_base or None, completer=cached_complete)


def rescored_differences(served: Path, gold: Path, predictions: Path, recorded: Mapping[str, bool | None], *,
                         judge_model: str | None, llm_cache: Path | None, api_base: str | None) -> str | None:
    """Why the `recorded` verdicts (qid -> correct) are not what `predictions` score against `gold`,
    or None when they are (the same qids, the same verdict on each)."""
    judge = cached_judge(judge_model, llm_cache=llm_cache, api_base=api_base)
    try:
        result = evaluate(served, gold, predictions, judge=judge, judge_concurrency=4)
    except EvaluationError as exc:
        return f"its predictions cannot be scored against the gold {gold}: {exc}"
    rescored: dict[str, bool | None] = {v.qid: v.correct for v in result.verdicts}
    wrong = sorted(q for q in set(recorded) | set(rescored) if rescored.get(q, "missing") != recorded.get(q, "missing"))
    if not wrong:
        return None
    unjudged = sum(1 for v in result.verdicts if v.qid in wrong and v.error and NOT_CACHED in v.error)
    hint = f" ({unjudged} judge verdict(s) are not in the LLM cache {llm_cache})" if unjudged else ""
    return (f"its verdicts are not what its predictions score against the gold: {len(wrong)} differ "
            f"(e.g. {', '.join(wrong[:3])}){hint}; evaluate again")
