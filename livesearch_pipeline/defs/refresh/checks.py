"""Blocking checks on the gold snapshot: a failed check stops downstream evaluation."""


import datetime as dt
import os

import dagster as dg

from livesearch_pipeline.core.calendars import session_on_or_before
from livesearch_pipeline.core.program import load_pool
from livesearch_pipeline.core.snapshot import SnapshotIntegrityError, SnapshotStore
from livesearch_pipeline.defs.partitions import partition_date
from livesearch_pipeline.defs.refresh.assets import gold_answers
from livesearch_pipeline.defs.resources import StorageResource
from livesearch_pipeline.evaluation.evaluator import load_served

MAX_UNANSWERED_SHARE = float(os.environ.get("LIVESEARCH_MAX_UNANSWERED_SHARE", "0.05"))


def _gold(context, storage: StorageResource):
    day = partition_date(context)
    return day, SnapshotStore(storage.paths().gold)


@dg.asset_check(asset=gold_answers, blocking=True, description="The snapshot's bytes hash to its manifest.")
def gold_manifest_verifies(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    day, store = _gold(context, storage)
    try:
        manifest = store.verify(day)
    except SnapshotIntegrityError as exc:
        return dg.AssetCheckResult(passed=False, metadata={"error": str(exc)})
    return dg.AssetCheckResult(passed=True, metadata={"sha256": manifest.sha256, "records": manifest.records})


@dg.asset_check(asset=gold_answers, blocking=True,
                description="Every served qid has gold and the gold holds no qid that was not served.")
def gold_covers_served(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    day, store = _gold(context, storage)
    served = {q.qid for q in load_served(storage.paths().served_file(day))}
    gold = {a.qid for a in store.read(day)}
    missing, unknown = sorted(served - gold), sorted(gold - served)
    return dg.AssetCheckResult(passed=not missing and not unknown, metadata={
        "served": len(served), "missing": len(missing), "unknown": len(unknown),
        "first_missing": ", ".join(missing[:5]), "first_unknown": ", ".join(unknown[:5]),
    })


@dg.asset_check(asset=gold_answers, blocking=True,
                description=f"Share of `error`/`empty` answers is at most {MAX_UNANSWERED_SHARE:.0%}.")
def gold_unanswered_share(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    day, store = _gold(context, storage)
    answers = store.read(day)
    bad = [a for a in answers if a.status != "ok"]
    share = len(bad) / len(answers) if answers else 1.0
    return dg.AssetCheckResult(passed=share <= MAX_UNANSWERED_SHARE, metadata={
        "share": round(share, 4), "threshold": MAX_UNANSWERED_SHARE, "unanswered": len(bad),
        "first": dg.MetadataValue.json([{"qid": a.qid, "status": a.status, "error": a.error} for a in bad[:5]]),
    })


@dg.asset_check(asset=gold_answers, blocking=True,
                description="Every `latest` answer of a daily question observed the last session on or before D.")
def gold_latest_is_last_session(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    day, store = _gold(context, storage)
    paths = storage.paths()
    pool = {q.qid: q for q in load_pool(paths.pool / "questions.jsonl")}
    stale = []
    checked = 0
    for a in store.read(day):
        q = pool.get(a.qid)
        if q is None or a.status != "ok" or q.refresh_class != "daily":
            continue
        select = q.program.extract.select
        if select.mode != "latest" or select.key_fmt != "%Y%m%d" or q.program.extract.combine is not None:
            continue
        calendar = next((s.calendar for c in q.program.calls for s in c.dates.values() if s.calendar), None)
        if calendar is None:
            continue
        checked += 1
        expected = session_on_or_before(calendar, day).strftime("%Y%m%d")
        if a.observed_period != expected:
            stale.append({"qid": a.qid, "observed": a.observed_period, "expected": expected})
    # A suspended instrument legitimately has no bar on the last session; tolerate a small share.
    share = len(stale) / checked if checked else 0.0
    return dg.AssetCheckResult(passed=share <= MAX_UNANSWERED_SHARE, metadata={
        "checked": checked, "not_last_session": len(stale), "share": round(share, 4),
        "first": dg.MetadataValue.json(stale[:5]),
    })
