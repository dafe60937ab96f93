"""The cross-file rules of an evaluation (DESIGN §4.7): do the served file, D's gold and the
predictions describe one day and one question set?

Each rule raises one `EvaluationError` before anything is scored, naming the files and the qids
(first few + count): the served file names another date than the gold; the scoring set (served
minus the qids D's manifest withdraws, and, with a site's gold download, minus the golds it
withholds) is empty; the gold misses a scoring qid, or holds one that
was neither served nor withdrawn; the predictions answer an unknown qid, or their run metadata
names another date or qid set; a prediction says it answers a Chinese text the question lacks.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path

from livesearch_pipeline.core.models import Prediction, PredictionRunMeta, ServedQuestion
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.snapshot import scoring_qids
from livesearch_pipeline.evaluation.errors import EvaluationError, name_qids
from livesearch_pipeline.evaluation.inputs import GoldDay, meta_path_beside

_SERVED_NAME = re.compile(r"^served_questions_(\d{4}-\d{2}-\d{2})\.jsonl$")


def _date_from_name(path: Path, pattern: re.Pattern[str]) -> dt.date | None:
    match = pattern.match(path.name)
    return dt.date.fromisoformat(match.group(1)) if match else None


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
    if gold.withheld:
        # A site's gold download: the golds the live-answer rule withheld are not scored.
        scoring = [qid for qid in scoring if qid not in gold.withheld]
        if not scoring:
            raise EvaluationError(
                f"the gold {gold_path} of {gold.date} shows no answer yet: all {len(gold.withheld)} gold(s) of its "
                "scoring set are withheld by the live-answer rule (they may still be an answer); score this day "
                "once a later day's site publishes its gold")
    if not scoring:
        raise EvaluationError(
            f"the scoring set of {gold.date} is empty: {served_path} serves {len(served_qids)} question(s) "
            f"and the manifest of {gold_path} withdraws {len(gold.withdrawn)}; there is nothing to score"
        )
    missing = set(scoring) - gold.answers.keys()
    if missing:
        raise EvaluationError(f"gold {gold_path} misses served {name_qids(missing)}")
    unserved = (gold.answers.keys() | gold.withheld) - served_qids - gold.withdrawn.keys()
    if unserved:
        raise EvaluationError(f"gold {gold_path} holds {name_qids(unserved)} that were not served ({served_path})")
    # read_verified already ties every non-ok answer to a withdrawal; this guards the scoring set itself.
    unusable = [qid for qid in scoring if gold.answers[qid].status != "ok"]
    if unusable:
        raise EvaluationError(f"gold {gold_path} has no usable answer for {name_qids(unusable)}")
    unknown = {p.qid for p in predictions} - served_qids
    if unknown:
        raise EvaluationError(f"predictions {predictions_path} answer unknown (not served) {name_qids(unknown)}")
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


def check_answer_languages(served: Sequence[ServedQuestion], predictions: Sequence[Prediction],
                           predictions_path: Path) -> None:
    """Refuse predictions that say they answer a Chinese text the question does not have."""
    has_zh = {q.qid for q in served if q.question_zh}
    wrong = [p.qid for p in predictions if p.lang == "zh" and p.qid not in has_zh]
    if wrong:
        raise EvaluationError(f"predictions {predictions_path} say lang 'zh' for {name_qids(wrong)} "
                              "served without a Chinese text (question_zh); answer those in 'en'")
