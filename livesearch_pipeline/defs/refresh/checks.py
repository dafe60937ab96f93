"""Blocking checks on the gold snapshot: a failed check stops downstream evaluation.

The four checks are four `AssetCheckSpec`s of one `multi_asset_check`: one step reads the
snapshot (verifying it against its manifest), the served file and the pool once and judges all
four, instead of four steps each starting, reading and logging on their own (under the
multiprocess executor each step is a process). They stay four checks in the UI, each with its
own result and metadata, and `can_subset` lets any one of them run alone.
"""


import datetime as dt
import warnings
from typing import Iterator, Sequence

import dagster as dg

from livesearch_pipeline.core.models import GoldAnswer, Question, ServedQuestion, SnapshotManifest
from livesearch_pipeline.core.snapshot import SnapshotIntegrityError, SnapshotStore
from livesearch_pipeline.defs.partitions import daily_partitions, partition_date
from livesearch_pipeline.defs.refresh.assets import checked_pool, gold_answers, pool_publication_lags
from livesearch_pipeline.defs.resources import StorageResource
from livesearch_pipeline.core.served import read_served as load_served
from livesearch_pipeline.refresh import latest_observations

MANIFEST_VERIFIES = "gold_manifest_verifies"
COVERS_SERVED = "gold_covers_served"
UNANSWERED_SHARE = "gold_unanswered_share"
LATEST_IS_LAST_SESSION = "gold_latest_is_last_session"

# The checks carry the asset's daily partitions, so a date's results are found on that date.
# Partitioned check specs are a Dagster preview (1.13): accepted knowingly, its warning silenced
# here once instead of in every process that loads the code location.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.PreviewWarning)
    GOLD_CHECK_SPECS = [
        dg.AssetCheckSpec(MANIFEST_VERIFIES, asset=gold_answers, blocking=True, partitions_def=daily_partitions,
                          description="The snapshot's bytes hash to its manifest, and the manifest withdraws exactly the "
                                      "empty/error answers."),
        dg.AssetCheckSpec(COVERS_SERVED, asset=gold_answers, blocking=True, partitions_def=daily_partitions,
                          description="Every served qid has gold and the gold holds no qid that was not served."),
        dg.AssetCheckSpec(UNANSWERED_SHARE, asset=gold_answers, blocking=True, partitions_def=daily_partitions,
                          description="Share of withdrawn (`error`/`empty`) answers is at most the cap the refresh froze "
                                      "the day under (recorded in the manifest)."),
        dg.AssetCheckSpec(LATEST_IS_LAST_SESSION, asset=gold_answers, blocking=True, partitions_def=daily_partitions,
                          description="Every `latest` answer of a daily question observed the last session on or before D."),
    ]


def covers_served(served: Sequence[ServedQuestion], answers: Sequence[GoldAnswer]) -> dg.AssetCheckResult:
    served_qids, gold_qids = {q.qid for q in served}, {a.qid for a in answers}
    missing, unknown = sorted(served_qids - gold_qids), sorted(gold_qids - served_qids)
    return dg.AssetCheckResult(check_name=COVERS_SERVED, passed=not missing and not unknown, metadata={
        "served": len(served_qids), "missing": len(missing), "unknown": len(unknown),
        "first_missing": ", ".join(missing[:5]), "first_unknown": ", ".join(unknown[:5]),
    })


def unanswered_share(manifest: SnapshotManifest, answers: Sequence[GoldAnswer]) -> dg.AssetCheckResult:
    bad = [a for a in answers if a.status != "ok"]
    share = len(bad) / len(answers) if answers else 1.0
    cap = manifest.max_withdrawn_share
    return dg.AssetCheckResult(check_name=UNANSWERED_SHARE, passed=share <= cap, metadata={
        "share": round(share, 4), "threshold": cap, "withdrawn": len(manifest.withdrawn),
        "first": dg.MetadataValue.json([{"qid": a.qid, "status": a.status, "error": a.error} for a in bad[:5]]),
    })


def latest_is_last_session(day: dt.date, answers: Sequence[GoldAnswer], pool: dict[str, Question],
                           cap: float, lags: dict[str, int]) -> dg.AssetCheckResult:
    found = latest_observations(day, answers, pool, lags)
    return dg.AssetCheckResult(check_name=LATEST_IS_LAST_SESSION, passed=found.share <= cap, metadata={
        "checked": found.checked, "not_last_session": len(found.stale), "share": round(found.share, 4),
        "threshold": cap, "first": dg.MetadataValue.json(found.stale[:5]),
    })


@dg.multi_asset_check(specs=GOLD_CHECK_SPECS, can_subset=True)
def gold_checks(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> Iterator[dg.AssetCheckResult]:
    """Judge the frozen snapshot of D; a snapshot that does not verify fails every selected check."""
    day = partition_date(context)
    paths = storage.paths()
    selected = {key.name for key in context.selected_asset_check_keys}
    try:
        manifest, answers = SnapshotStore(paths.gold).read_verified(day)
    except SnapshotIntegrityError as exc:
        # The other checks would judge bytes nobody can vouch for: they fail, naming why.
        for name in sorted(selected):
            yield dg.AssetCheckResult(check_name=name, passed=False, metadata={"error": str(exc)})
        return
    if MANIFEST_VERIFIES in selected:
        yield dg.AssetCheckResult(check_name=MANIFEST_VERIFIES, passed=True,
                                  metadata={"sha256": manifest.sha256, "records": manifest.records})
    # A check that cannot judge (served file gone, pool unreadable) is a failed evaluation naming
    # why, not a failed step: an evaluation keeps its partition and its run in the UI's history.
    judges = {
        COVERS_SERVED: lambda: covers_served(load_served(paths.served_file(day)), answers),
        UNANSWERED_SHARE: lambda: unanswered_share(manifest, answers),
        LATEST_IS_LAST_SESSION: lambda: latest_is_last_session(
            day, answers, {q.qid: q for q in checked_pool(paths)[1]}, manifest.max_withdrawn_share,
            pool_publication_lags(paths)),
    }
    for name, judge in judges.items():
        if name not in selected:
            continue
        try:
            yield judge()
        except (dg.Failure, OSError, ValueError) as exc:
            message = exc.description if isinstance(exc, dg.Failure) else f"{type(exc).__name__}: {exc}"
            yield dg.AssetCheckResult(check_name=name, passed=False, metadata={"error": message})
