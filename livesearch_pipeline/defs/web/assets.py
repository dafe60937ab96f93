"""The offline web of D: pages generated from the embedded market as of D, indexed for search.

The search-and-read baseline's agent run of D searches this corpus (served on 127.0.0.1 for
the duration of the run), so an agent run of D reads the web as of D, never a later one.

Upstream: the `data_service` source asset (the embedded market it is generated from,
defs/sources.py), the pool (how far back the quote histories reach, web/needs.py) and D's gold
(what the evidence map is made of). The automation sensor builds the latest day's web once that
day's gold is frozen, so a web is built only for a trading day whose refresh ran, never ahead.
"""

from typing import Optional

import dagster as dg
from pydantic import Field

from livesearch_pipeline.defs.owners import owners_of
from livesearch_pipeline.defs.partitions import daily_partitions, partition_date
from livesearch_pipeline.defs.refresh.assets import gold_answers
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource
from livesearch_pipeline.defs.sources import DATA_SERVICE

GROUP = "web"


class WebCorpusConfig(dg.Config):
    history_sessions: int = Field(20, ge=1, le=400, description=(
        "Sessions of dated pages (news items, market wraps) before D. 20 gives ~30,000 pages; the benchmark's "
        "100,000-page corpus uses 250."))
    workers: int = Field(2, ge=1, le=16, description="Processes generating pages.")
    entities: Optional[list[str]] = Field(None, description="Only these entities' pages (a partial web for demos "
                                                            "and tests); unset: every entity of the market.")
    market_tools: Optional[list[str]] = Field(None, description="Only these market series (unset: all).")
    tools: Optional[list[str]] = Field(None, description="Only these entity tools' pages (unset: all).")


AC = dg.AutomationCondition

# The automation sensor (defs/evaluation/automation.py) builds the latest day's web when that day's
# gold is frozen (the schedule's 18:30 refresh of a trading day), so D's agent runs find it next.
# On a day without trading the latest partition is the next trading day's, whose gold cannot exist
# before its own close: nothing is built ahead. Past days: explicit runs (`daily_web`).
web_of_the_day = (
    AC.in_latest_time_window()
    & AC.any_deps_updated().allow(dg.AssetSelection.assets(gold_answers)).since_last_handled()
    & ~AC.any_deps_missing().allow(dg.AssetSelection.assets(gold_answers))
    & ~AC.any_deps_in_progress()
    & ~AC.in_progress()
).with_label("when D's gold is frozen")


@dg.asset(group_name=GROUP, partitions_def=daily_partitions, kinds={"sqlite"}, owners=owners_of(GROUP),
          deps=[DATA_SERVICE, "question_pool", gold_answers], automation_condition=web_of_the_day)
def web_corpus(context: dg.AssetExecutionContext, config: WebCorpusConfig, data_service: DataServiceResource,
               storage: StorageResource) -> dg.MaterializeResult:
    """The offline web as of D: quote pages, profiles, filings and periodic reports, news, market wraps,
    macro releases and spam, in English and Chinese, in one SQLite file with a full-text index."""
    from livesearch_pipeline.dataservice.market import DEFAULT_SEED
    from livesearch_pipeline.web.build import build_web
    from livesearch_pipeline.web.corpus import CorpusConfig

    if data_service.service_kind != "embedded":
        raise dg.Failure(f"the offline web is generated from the embedded market; the data service is "
                         f"{data_service.service_kind!r}. Materialise web_corpus with the embedded service (kind=embedded).")
    day = partition_date(context)
    seed = data_service.seed if data_service.seed is not None else DEFAULT_SEED
    part = {name: tuple(value) for name, value in
            (("entities", config.entities), ("market_tools", config.market_tools), ("tools", config.tools))
            if value is not None}
    from livesearch_pipeline.core.pool import POOL_FILE
    from livesearch_pipeline.core.snapshot import SnapshotStore

    paths = storage.paths()
    # The whole web's monthly quote histories reach as far back as the pool's questions read
    # (web/needs.py); a partial web (demos, tests) keeps the recent months only.
    needs = {} if part else {"pool_file": paths.pool / POOL_FILE, "gold_file": SnapshotStore(paths.gold).path_for(day)}
    # The build takes about a minute for the whole web: its progress lines show below the step.
    built = build_web(CorpusConfig(clock=day, seed=seed, history_sessions=config.history_sessions, **part),
                      paths.web, workers=config.workers, progress=context.log.info, **needs)
    evidence = _evidence_summary(storage.paths(), day, built.directory, context.log.info) if not part else None
    return dg.MaterializeResult(
        data_version=dg.DataVersion(built.identity),
        metadata={
            "identity": built.identity, "market": built.market_identity, "pages": built.stats.pages,
            "by_kind": dg.MetadataValue.json(built.stats.by_kind), "index_mb": round(built.stats.bytes / 1e6, 1),
            "build_seconds": round(built.generate_and_index_s, 1),
            "path": dg.MetadataValue.path(str(built.directory)),
            **({"evidence": dg.MetadataValue.json(evidence)} if evidence is not None else {}),
        },
    )


def _evidence_summary(paths, day, directory, progress) -> Optional[dict]:
    """The evidence map's summary when D's gold is already frozen (else the leaderboard of D writes
    the map once the gold exists)."""
    from livesearch_pipeline.core.pool import POOL_FILE
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.web.build import attach_evidence

    gold = SnapshotStore(paths.gold)
    if not gold.exists(day) or not (paths.pool / POOL_FILE).is_file():
        return None
    return attach_evidence(directory, paths.pool / POOL_FILE, gold.path_for(day), progress=progress)["summary"]


web_corpus_job = dg.define_asset_job(
    name="daily_web", selection=dg.AssetSelection.assets(web_corpus),
    description="Generate and index the offline web of D (searched by the search-and-read agent run of D).",
    tags={"livesearch/kind": "web"},
)
