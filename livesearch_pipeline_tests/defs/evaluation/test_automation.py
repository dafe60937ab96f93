"""Declarative automation of the daily evaluation, on a small real pool.

The gold of D-1 and D is frozen by the real `daily_refresh` job; then the project's automation
conditions are evaluated as the automation sensor's ticks would (`dg.evaluate_automation_conditions`
at fixed evaluation times around D's 18:30 tick), and the runs they request are executed. D's
web, every agent partition of D, D's leaderboard and D's stale-gold audit must be materialised,
nothing of an earlier day may be requested, and a further tick must request nothing again.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import dagster as dg
import pytest

from livesearch_pipeline.defs.evaluation.assets import agent_runs, leaderboard, stale_gold_audit
from livesearch_pipeline.defs.evaluation.automation import AUTOMATED_ASSETS, daily_evaluation_automation
from livesearch_pipeline.defs.evaluation.partitions import PREVIOUS_SNAPSHOTS, previous_snapshots
from livesearch_pipeline.defs.partitions import PARTITION_TIMEZONE
from livesearch_pipeline.defs.refresh.assets import daily_refresh_assets, gold_answers, served_questions
from livesearch_pipeline.defs.refresh.schedules import daily_refresh_job
from livesearch_pipeline.defs.resources import DataServiceResource, LLMResource, StorageResource
from livesearch_pipeline.defs.sources import observe_data_service
from livesearch_pipeline.defs.web.assets import web_corpus
from livesearch_pipeline.evaluation.registry import AGENT_PARTITIONS_NAME
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.fixtures import write_small_pool
from livesearch_pipeline_tests.web.web_fixtures import pick

DAY = dt.date(2026, 3, 3)  # a Tuesday: every exchange trades on it and on the Monday before
PREVIOUS = dt.date(2026, 3, 2)
AGENTS = ("oracle", "stale")
TZ = ZoneInfo(PARTITION_TIMEZONE)
# A small web of D (one entity, one market series) keeps the web step to seconds.
WEB_CONFIG = {"history_sessions": 2, "workers": 1, "entities": [pick("cn_equity", 10).code], "tools": ["daily"],
              "market_tools": ["shibor"]}
ASSETS = [observe_data_service, daily_refresh_assets, web_corpus, agent_runs, leaderboard, stale_gold_audit]


def _definitions(root: Path) -> dg.Definitions:
    return dg.Definitions(
        assets=ASSETS, jobs=[daily_refresh_job], sensors=[daily_evaluation_automation],
        resources={"data_service": DataServiceResource(clock=DAY.isoformat()), "storage": StorageResource(root=str(root)),
                   "llm": LLMResource(model="")},
    )


def _at(hour: int, minute: int = 0, day: dt.date = DAY) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=TZ)


def _requested(result) -> dict[str, set[str]]:
    return {key.to_user_string(): {str(k) for k in result.get_requested_partitions(key)}
            for key in (dg.AssetKey(name) for name in AUTOMATED_ASSETS) if result.get_num_requested(key)}


def _execute_requested(definitions: dg.Definitions, instance: dg.DagsterInstance, result) -> list[str]:
    """Run what a tick requested, one run per (asset, partition), upstream first (as the backfill
    the sensor emits would)."""
    done = []
    resources = definitions.resources
    for asset in (web_corpus, agent_runs, leaderboard, stale_gold_audit):
        for key in sorted(result.get_requested_partitions(asset.key), key=str):
            run_config = {"ops": {"web_corpus": {"config": WEB_CONFIG}}} if asset is web_corpus else {}
            run = dg.materialize(ASSETS, selection=[asset], partition_key=key, instance=instance,
                                 resources=resources, run_config=run_config, raise_on_error=False)
            failures = [str(e.step_failure_data.error) for e in run.all_events if e.is_step_failure]
            assert run.success, (asset.key, key, failures)
            done.append(f"{asset.key.to_user_string()}:{key}")
    return done


def _materialized(instance: dg.DagsterInstance, asset) -> set[str]:
    return {str(k) for k in instance.get_materialized_partitions(asset.key)}


def _ticks(definitions: dg.Definitions, instance: dg.DagsterInstance, times: list[dt.datetime], cursor=None):
    """Sensor ticks at `times` (the last one repeated until a tick requests nothing), each tick's
    requests executed before the next: [(time, {asset: partitions requested})], and the cursor."""
    log = []
    for index in range(len(times) + 4):
        when = times[min(index, len(times) - 1)]
        result = dg.evaluate_automation_conditions(defs=definitions, instance=instance, evaluation_time=when,
                                                   cursor=cursor)
        cursor = result.cursor
        requested = _requested(result)
        log.append((when, requested))
        _execute_requested(definitions, instance, result)
        if index >= len(times) - 1 and not requested:
            return log, cursor
    raise AssertionError(f"the automation still requests runs after {len(log)} ticks: {log}")


@pytest.mark.slow
def test_freezing_a_days_gold_materialises_its_evaluation_by_automation(tmp_path: Path) -> None:
    write_small_pool(tmp_path, DAY)
    definitions = _definitions(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(AGENT_PARTITIONS_NAME, list(AGENTS))

    # A tick on D before anything of D exists: nothing to do (no gold, so no web either).
    before = dg.evaluate_automation_conditions(defs=definitions, instance=instance, evaluation_time=_at(12))
    assert _requested(before) == {}

    # The 18:30 schedule's runs: D-1 (frozen the day before in practice) and D.
    for day in (PREVIOUS, DAY):
        assert definitions.resolve_job_def("daily_refresh").execute_in_process(
            partition_key=day.isoformat(), instance=instance).success

    log, _ = _ticks(definitions, instance, [_at(18, 45)], cursor=before.cursor)
    d = DAY.isoformat()
    agent_keys = {str(dg.MultiPartitionKey({"date": d, "agent": agent})) for agent in AGENTS}
    # Tick 1: D's web and audit (D's gold is frozen); tick 2: the agent runs of D (they need D's web);
    # tick 3: the leaderboard of D; tick 4: nothing. Only D: the evaluation of D-1 (missing) is
    # never backfilled, and nothing is requested twice.
    assert [requested for _, requested in log] == [
        {"web_corpus": {d}, "stale_gold_audit": {d}}, {"agent_runs": agent_keys}, {"leaderboard": {d}}, {}]

    assert _materialized(instance, web_corpus) == {d}
    assert _materialized(instance, agent_runs) == agent_keys
    assert _materialized(instance, leaderboard) == {d}
    assert _materialized(instance, stale_gold_audit) == {d}
    paths = DataPaths(tmp_path.resolve())
    assert (paths.runs / d / "leaderboard" / "leaderboard.json").is_file()
    assert (paths.runs / d / "audits" / f"stale_gold_audit_{d}.json").is_file()


@pytest.mark.slow
def test_a_day_without_gold_requests_nothing_and_blocks_nothing(tmp_path: Path) -> None:
    """A weekend is no partition: nothing is requested on Saturday (the latest partition is then Monday's,
    whose gold cannot exist yet: no web is built ahead); Monday is evaluated against Friday's gold."""
    write_small_pool(tmp_path, DAY)
    friday, saturday, monday = dt.date(2026, 3, 6), dt.date(2026, 3, 7), dt.date(2026, 3, 9)
    definitions = dg.Definitions(
        assets=ASSETS, jobs=[daily_refresh_job],
        resources={"data_service": DataServiceResource(clock=monday.isoformat()),
                   "storage": StorageResource(root=str(tmp_path)), "llm": LLMResource(model="")})
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(AGENT_PARTITIONS_NAME, ["stale"])
    assert definitions.resolve_job_def("daily_refresh").execute_in_process(
        partition_key=friday.isoformat(), instance=instance).success

    # Saturday, before and after the 18:30 tick: nothing (no web, agent run, leaderboard or audit).
    log, cursor = _ticks(definitions, instance, [_at(12, day=saturday), _at(19, day=saturday)])
    assert [requested for _, requested in log] == [{}, {}]

    # Monday's gold (Saturday and Sunday have none): Monday is evaluated, its audit reading Friday.
    assert definitions.resolve_job_def("daily_refresh").execute_in_process(
        partition_key=monday.isoformat(), instance=instance).success
    m = monday.isoformat()
    log, _ = _ticks(definitions, instance, [_at(18, 45, day=monday)], cursor=cursor)
    assert [requested for _, requested in log] == [
        {"web_corpus": {m}, "stale_gold_audit": {m}},
        {"agent_runs": {str(dg.MultiPartitionKey({"date": m, "agent": "stale"}))}}, {"leaderboard": {m}}, {}]
    audit = instance.get_latest_materialization_event(stale_gold_audit.key).asset_materialization
    assert audit.partition == m and audit.metadata["previous_date"].value == friday.isoformat()


def test_the_d_minus_1_dependency_is_the_previous_trading_day() -> None:
    from livesearch_pipeline.definitions import defs

    graph = defs.resolve_asset_graph()
    node = graph.get(stale_gold_audit.key)
    assert {gold_answers, served_questions} <= set(node.parent_keys)
    mapping = node.partition_mappings[gold_answers]
    assert mapping == previous_snapshots
    assert (mapping.start_offset, mapping.end_offset) == (-PREVIOUS_SNAPSHOTS, 0)

    def parents(day: str) -> list[str]:
        return list(mapping.get_upstream_mapped_partitions_result_for_partitions(
            stale_gold_audit.partitions_def.subset_with_partition_keys([day]),
            stale_gold_audit.partitions_def, daily_refresh_assets.partitions_def,
        ).partitions_subset.get_partition_keys())

    # Lineage of the audit of a Tuesday: Monday's gold and its own; of a Monday: Friday's; of the
    # first trading day of 2026: the last of 2025 (New Year is no partition).
    assert parents(DAY.isoformat()) == [PREVIOUS.isoformat(), DAY.isoformat()]
    assert parents("2026-03-09") == ["2026-03-06", "2026-03-09"]
    assert parents("2026-01-02") == ["2025-12-31", "2026-01-02"]


def test_the_automation_sensor_is_on_by_default_and_targets_the_daily_evaluation() -> None:
    from livesearch_pipeline.definitions import defs

    sensor = defs.resolve_sensor_def("daily_evaluation_automation")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    graph = defs.resolve_asset_graph()
    assert sensor.asset_selection.resolve(graph) == {dg.AssetKey(name) for name in AUTOMATED_ASSETS}
    for name in AUTOMATED_ASSETS:
        assert graph.get(dg.AssetKey(name)).automation_condition is not None, name
    # No asset is left to Dagster's default automation sensor (which starts stopped).
    assert "default_automation_condition_sensor" not in {s.name for s in defs.get_repository_def().sensor_defs}


def test_livesearch_run_materialises_the_days_selection_in_graph_order() -> None:
    """`livesearch run --date D`: the day's selection split into runs by the asset graph alone."""
    from livesearch_pipeline.definitions import defs
    from livesearch_pipeline.defs.evaluation.daily import daily_loop_targets, plan_runs

    instance = dg.DagsterInstance.ephemeral()
    agents = ["oracle", "stale", "search-read"]
    instance.add_dynamic_partitions(AGENT_PARTITIONS_NAME, agents)
    friday, monday = "2026-11-27", "2026-11-30"
    plan = plan_runs(defs.resolve_asset_graph(),
                     daily_loop_targets(dt.date(2026, 11, 30), dt.date(2026, 11, 27), agents), instance,
                     effective_dt=_at(19, day=dt.date(2026, 11, 30)))
    assert [(str(run.partition_key), run.asset_names) for run in plan] == [
        (friday, ("served_questions", "gold_answers", "analytics_store")),
        # Monday's web is built from Monday's gold (its evidence map), in the refresh's run.
        (monday, ("served_questions", "gold_answers", "web_corpus")),
        # The audit of Monday reads Friday's gold (the declared D-1 dependency): after both freezes.
        (monday, ("stale_gold_audit",)),
        *[(f"{agent}|{monday}", ("agent_runs",)) for agent in sorted(agents)],
        # Monday's Parquet partitions hold its agents' verdicts: after every agent run; the public
        # site of Monday after its board and audit, in the same run (defs/site/assets.py).
        (monday, ("analytics_store", "leaderboard", "public_site")),
    ]
    with pytest.raises(ValueError, match="duplicate"):
        plan_runs(defs.resolve_asset_graph(), [(leaderboard.key, monday)] * 2, instance)
