"""Issue 30, findings 17 and 18: what an operator and an auditor see of alerting and freshness.

17: every tick of the alert sensor says what it did, evaluated as the daemon evaluates it
    (`evaluate_tick`): unconfigured, each tick is skipped naming the variable, and two runs that
    failed before one tick are both named; configured, a tick without a failure says so instead
    of "Sensor function returned an empty result", and two failures are both alerted. The
    freshness sensor's unconfigured ticks are skipped naming the variable too.
18: `gold_frozen_by_deadline` is a declared check of `gold_answers` (what the asset's Checks tab
    lists); its evaluation, stored as the daemon stores it, has the partition it judged and the
    run that froze that partition; a gold check that cannot judge is a failed evaluation with its
    partition, not a failed step.
"""

from __future__ import annotations

import datetime as dt
import shutil

import dagster as dg
import pytest
import time_machine

from livesearch_pipeline.defs.ops.alerts import TOKEN_ENV, URL_ENV, AlertWebhookResource, alert_on_run_failure
from livesearch_pipeline.defs.ops.freshness import FRESHNESS_CHECK, GOLD, OpsClockResource, gold_freshness_sensor
from livesearch_pipeline.defs.partitions import daily_partitions
from livesearch_pipeline_tests.defs.ops.test_ops_alerts import NY, TOKEN, failing_job

EMPTY = "Sensor function returned an empty result"


def _unset_alerting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(URL_ENV, raising=False)
    monkeypatch.delenv(TOKEN_ENV, raising=False)


def _tick(instance, resource: AlertWebhookResource, cursor: str | None):
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"alert_webhook": resource})
    return alert_on_run_failure.evaluate_tick(context)


def _fail_twice(instance) -> list[str]:
    return [failing_job.execute_in_process(instance=instance, raise_on_error=False,
                                           tags={"dagster/partition": day}).run_id
            for day in ("2026-11-24", "2026-11-25")]


# --------------------------------------------------------------------------- 17: alert ticks


def test_every_unconfigured_alert_tick_is_skipped_naming_the_variable_and_every_failed_run(instance, monkeypatch):
    _unset_alerting(monkeypatch)
    from livesearch_pipeline.defs.ops.alerts import alert_webhook_from_env

    resource = alert_webhook_from_env()
    first = _tick(instance, resource, None)
    quiet = _tick(instance, resource, first.cursor)
    run_ids = _fail_twice(instance)
    failed = _tick(instance, resource, quiet.cursor)
    after = _tick(instance, resource, failed.cursor)

    for data in (first, quiet, failed, after):
        assert data.skip_message and URL_ENV in data.skip_message and EMPTY not in data.skip_message
        assert not data.run_requests and not data.dagster_run_reactions
    assert "no run failed since the last tick" in quiet.skip_message
    assert "2 failed run(s)" in failed.skip_message
    for run_id, day in zip(run_ids, ("2026-11-24", "2026-11-25")):
        assert f"run {run_id} of failing_job ({day}) failed" in failed.skip_message
    assert "no run failed since the last tick" in after.skip_message  # each failure named once


def test_a_configured_alert_tick_without_failures_says_so_and_two_failures_are_both_sent(webhook, instance):
    resource = AlertWebhookResource(url=webhook.url, token=TOKEN)
    first = _tick(instance, resource, None)
    quiet = _tick(instance, resource, first.cursor)
    assert quiet.skip_message == "no run failed since the last tick"
    run_ids = _fail_twice(instance)
    cursor = quiet.cursor
    for _ in range(3):  # the daemon's ticks until the sensor has caught up
        data = _tick(instance, resource, cursor)
        cursor = data.cursor
    assert {b["run_id"] for b in webhook.bodies() if b["kind"] == "run_failure"} == set(run_ids)
    assert _tick(instance, resource, cursor).skip_message == "no run failed since the last tick"


def test_every_unconfigured_freshness_tick_is_skipped_naming_the_variable(instance, monkeypatch):
    _unset_alerting(monkeypatch)
    from livesearch_pipeline.defs.ops.alerts import alert_webhook_from_env

    cursor = None
    for now in (dt.datetime(2026, 11, 25, 20, 15, tzinfo=NY), dt.datetime(2026, 11, 25, 20, 20, tzinfo=NY)):
        context = dg.build_sensor_context(instance=instance, cursor=cursor, resources={
            "ops_clock": OpsClockResource(now=now.isoformat()), "alert_webhook": alert_webhook_from_env()})
        data = gold_freshness_sensor.evaluate_tick(context)
        assert data.skip_message and URL_ENV in data.skip_message
        cursor = data.cursor
    context = dg.build_sensor_context(instance=instance, resources={
        "ops_clock": OpsClockResource(now="2026-11-25T20:15:00-05:00"), "alert_webhook": alert_webhook_from_env()})
    recorded = gold_freshness_sensor.evaluate_tick(context)
    assert [e.check_name for e in recorded.asset_events] == [FRESHNESS_CHECK]  # recorded all the same


# --------------------------------------------------------------------------- 18: the freshness check


def test_the_freshness_check_is_a_declared_check_of_gold_answers():
    from livesearch_pipeline.definitions import defs

    key = dg.AssetCheckKey(GOLD, FRESHNESS_CHECK)
    graph = defs.resolve_asset_graph()
    assert key in graph.asset_check_keys  # what the asset's Checks tab lists
    assert key not in defs.resolve_job_def("daily_refresh").asset_layer.asset_graph.asset_check_keys


@dg.asset(key=GOLD, partitions_def=daily_partitions)
def gold_answers_stand_in() -> None:
    return None


def test_the_freshness_evaluation_keeps_its_partition_and_the_run_that_froze_it(webhook, instance, monkeypatch):
    monkeypatch.setenv(URL_ENV, webhook.url)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with time_machine.travel(dt.datetime(2026, 11, 25, 21, 5, tzinfo=NY), tick=False):
        frozen = dg.materialize([gold_answers_stand_in], partition_key="2026-11-25", instance=instance)
    context = dg.build_sensor_context(instance=instance, resources={
        "ops_clock": OpsClockResource(now="2026-11-25T23:00:00-05:00"),
        "alert_webhook": AlertWebhookResource(url=webhook.url, token=TOKEN)})
    data = gold_freshness_sensor.evaluate_tick(context)
    for event in data.asset_events:  # as the daemon stores a sensor's events
        instance.report_runless_asset_event(event)

    [record] = instance.event_log_storage.get_asset_check_execution_history(dg.AssetCheckKey(GOLD, FRESHNESS_CHECK),
                                                                             limit=5)
    evaluation = record.event.dagster_event.event_specific_data
    assert record.partition == "2026-11-25" and evaluation.partition == "2026-11-25"
    assert evaluation.target_materialization_data.run_id == frozen.run_id
    assert not evaluation.passed and evaluation.metadata["frozen_by_run"].value == frozen.run_id
    assert webhook.bodies()[0]["run_id"] == frozen.run_id  # the alert links the late run too


def test_a_gold_check_that_cannot_judge_is_a_failed_evaluation_with_its_partition(tmp_path):
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.settings import DataPaths
    from livesearch_pipeline_tests.defs.refresh.test_refresh_assets import (
        DAY, check_evaluations, refresh_definitions, run_refresh, write_trimmed_pool,
    )

    write_trimmed_pool(tmp_path, per_group=1)
    definitions = refresh_definitions(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    assert run_refresh(definitions, DAY, instance).success
    assert SnapshotStore(DataPaths(tmp_path).gold).exists(DAY)
    shutil.rmtree(DataPaths(tmp_path).pool)  # the pool is gone: the latest-session check cannot judge
    DataPaths(tmp_path).served_file(DAY).unlink()  # nor can the coverage check
    result = definitions.resolve_job_def("gold_checks_only").execute_in_process(
        instance=instance, raise_on_error=False, tags={"dagster/partition": DAY.isoformat()})
    failures = [(e.step_key, str(e.event_specific_data.error)[:600]) for e in result.all_events
                if e.event_type_value == "STEP_FAILURE"]
    # Blocking checks that failed fail their step after they are recorded; the checks' code raised nothing.
    assert all("blocking asset checks failed" in error for _, error in failures), failures
    evaluations = check_evaluations(result)
    for name in ("gold_covers_served", "gold_latest_is_last_session"):
        assert not evaluations[name].passed and evaluations[name].partition == DAY.isoformat()
        assert evaluations[name].metadata["error"].value
    assert evaluations["gold_manifest_verifies"].passed
