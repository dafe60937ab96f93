"""The strict evaluator (DESIGN §4.7): score one day's predictions against that day's gold.

`evaluate` runs the jobs in order, each in its own module, and any fail-loud rule raises one
`EvaluationError` (`errors`) before anything is scored or written, naming the file, the line
numbers or the qids (first few + count):

- `inputs` reads the served questions, D's gold (only through `SnapshotStore.read_verified`, the
  one gold reader) and the predictions with their run metadata, each line exactly one strict
  JSON object of its record type;
- `consistency` checks that they describe one day and one question set, and gives the scoring
  set: the served qids minus the qids D's manifest withdraws;
- `scoring` scores every qid of the scoring set deterministically (`core.matching`);
- `settlement` asks the LLM judge, when one is given, about what the matcher could not decide;
- `summary` counts the verdicts into `summary.json`'s figures;
- `outputs` writes `verdicts.jsonl` and `summary.json` as one unit and reads them back
  (the caller writes: `evaluate` returns the result and writes nothing).

The same files (by path and content) scored again without a judge in the same process (the
leaderboard re-deriving the verdicts of a run `agent_runs` has just scored: `rescore`) give the
result computed the first time: every input is read and hashed again, and the result is reused
only when every byte is the same, so no figure is taken from a file the inputs did not produce.

Nothing is ever read from another date's gold. Every agent is scored on exactly the scoring
set: a scoring qid without a prediction, or with an empty answer or an agent error, scores 0;
a prediction for a withdrawn qid is ignored. A prediction's `lang` decides the text it is scored
against (`core.matching.text_rule`): a bare number is read in that text's unit, and the answer
held to that text's precision; one that says "zh" for a question without a Chinese text is
refused. Without a judge the undecided verdicts stay deterministic and incorrect, and the
summary counts them as `unresolved_without_judge`.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from livesearch_pipeline.core.models import PredictionRunMeta, Verdict
from livesearch_pipeline.core.snapshot import sha256_file
from livesearch_pipeline.evaluation.consistency import check_answer_languages, check_consistency
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.inputs import (
    gold_manifest_path,
    load_gold,
    load_predictions,
    load_served,
    meta_path_beside,
)
from livesearch_pipeline.evaluation.judge import JudgeIndependenceError, LLMJudge, ensure_judge_independent
from livesearch_pipeline.evaluation.scoring import score_deterministic
from livesearch_pipeline.evaluation.settlement import PendingJudgement, settle_with_judge
from livesearch_pipeline.evaluation.summary import EvaluationResult, summarise


# Results of this process's judge-free evaluations, by their inputs' paths and bytes (`_inputs_key`).
_SCORED: OrderedDict[tuple, EvaluationResult] = OrderedDict()
_SCORED_KEEP = 16


def _inputs_key(served_path: Path, gold_path: Path, predictions_path: Path) -> tuple | None:
    """Every file `evaluate` reads (served, gold, its manifest, predictions, their metadata), each
    as (path, sha256 of its bytes); None when one cannot be read (`evaluate` then says why)."""
    files = [served_path, gold_path, predictions_path, meta_path_beside(predictions_path)]
    manifest = gold_manifest_path(gold_path)
    if manifest is not None:
        files.append(manifest)
    try:
        return tuple((str(path), hashlib.sha256(path.read_bytes()).hexdigest()) for path in files)
    except OSError:
        return None


def evaluate(
    served_path: Path,
    gold_path: Path,
    predictions_path: Path,
    *,
    judge: LLMJudge | None = None,
    judge_concurrency: int = 8,
    run_meta: PredictionRunMeta | None = None,
) -> EvaluationResult:
    """Score a predictions file against the gold of its day; raises EvaluationError (fail loud).

    `run_meta` stands in for the predictions' missing metadata file (`evaluate --agent`: the
    caller writes it once the evaluation succeeded) and is checked like one."""
    served_path, gold_path, predictions_path = Path(served_path), Path(gold_path), Path(predictions_path)
    key = _inputs_key(served_path, gold_path, predictions_path) if judge is None and run_meta is None else None
    if key is not None and key in _SCORED:
        done = _SCORED[key]
        return EvaluationResult(verdicts=list(done.verdicts), summary=done.summary)
    result = _evaluate(served_path, gold_path, predictions_path, judge=judge, judge_concurrency=judge_concurrency,
                       run_meta=run_meta)
    if key is not None:
        _SCORED[key] = EvaluationResult(verdicts=list(result.verdicts), summary=result.summary)
        while len(_SCORED) > _SCORED_KEEP:
            _SCORED.popitem(last=False)
    return result


def _evaluate(served_path: Path, gold_path: Path, predictions_path: Path, *, judge: LLMJudge | None,
              judge_concurrency: int, run_meta: PredictionRunMeta | None) -> EvaluationResult:
    served = load_served(served_path)
    gold = load_gold(gold_path)
    predictions, meta = load_predictions(predictions_path, run_meta)
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
