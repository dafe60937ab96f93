"""The public static site as a daily asset: `public_site` of D rebuilds data/site/ as of D (or, when
data/site/ already shows a newer day, as of that day: a backfill never rolls the public site back).

Downstream of D's leaderboard and stale-gold audit (same partition). The work is
livesearch_pipeline/site/build.py: the site of D shows the frozen days up to D, withholds every
gold that could still be tomorrow's answer, and rebuilds only what changed (a day whose inputs
did not change is not rebuilt). Its automation sensor requests the latest partition whenever the
leaderboard or the audit of that day lands; `livesearch run` builds it in the day's loop.
"""

import dagster as dg

from livesearch_pipeline.defs.evaluation.assets import leaderboard, stale_gold_audit
from livesearch_pipeline.defs.partitions import daily_partitions, partition_date
from livesearch_pipeline.defs.owners import owners_of
from livesearch_pipeline.defs.resources import StorageResource

GROUP = "publication"
AC = dg.AutomationCondition

after_board_and_audit = (
    AC.in_latest_time_window()
    & AC.any_deps_updated().since_last_handled()
    & ~AC.any_deps_missing()
    & ~AC.any_deps_in_progress()
    & ~AC.in_progress()
).with_label("when D's leaderboard or stale-gold audit lands")


@dg.asset(group_name=GROUP, owners=owners_of(GROUP), partitions_def=daily_partitions, kinds={"html"}, automation_condition=after_board_and_audit,
          deps=[leaderboard, stale_gold_audit])
def public_site(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    """The benchmark's static site as of D under data/site/ (board, history, agents, days, questions,
    downloads, methodology); no gold that could still be an answer is published."""
    from livesearch_pipeline.site.build import NewerSiteError, build_site

    day = partition_date(context)
    try:
        built = build_site(storage.paths(), day, progress=context.log.info)
    except NewerSiteError as exc:
        # A backfilled day never rolls the public site back: the site of its newer day is rebuilt
        # (D is one of its days, so D's new files are published all the same).
        context.log.info(f"{exc}; rebuilding the site of {exc.published} instead")
        built = build_site(storage.paths(), exc.published, progress=context.log.info)
        day = built.latest
    if built.latest != day:
        raise dg.Failure(f"the site of {day} has no frozen day {day} (latest {built.latest}): materialise "
                         f"gold_answers and served_questions of {day} first")
    return dg.MaterializeResult(metadata={
        "latest_day": built.latest.isoformat(), "days": built.days, "questions": built.questions,
        "written": built.written, "unchanged": built.unchanged, "skipped": built.skipped, "removed": built.removed,
        "gold_withheld": built.hidden, "seconds": round(built.seconds, 2),
        "index": dg.MetadataValue.path(str(built.out_dir / "index.html")),
    })


public_site_automation = dg.AutomationConditionSensorDefinition(
    "public_site_automation",
    target=dg.AssetSelection.assets(public_site),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=60,
    run_tags={"livesearch/kind": "publication"},
    description="Rebuild the public site of the latest day after its leaderboard or stale-gold audit lands.",
)

publish_site_job = dg.define_asset_job(
    name="publish_site", selection=dg.AssetSelection.assets(public_site),
    description="Rebuild data/site/ as of D (incremental: unchanged days are not rebuilt).",
    tags={"livesearch/kind": "publication"},
)
