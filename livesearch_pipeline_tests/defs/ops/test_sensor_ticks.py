"""Issue 42: every sensor tick says what it did or why it skipped.

Each sensor of the project's definitions (the automation sensors aside: their ticks record an
evaluation per asset, the asset's Automation tab) is evaluated as the daemon evaluates it
(`evaluate_tick`) on a fresh instance, twice (the second tick with the first one's cursor), and
around the events each one reacts to: a tick that requests nothing must carry a reason, never
Dagster's "Sensor function returned an empty result".
"""

from __future__ import annotations

import datetime as dt

import dagster as dg
import pytest

from livesearch_pipeline.defs.ops.alerts import TOKEN_ENV, URL_ENV
from livesearch_pipeline.defs.ops.analytics import analytics_store_sensor
from livesearch_pipeline.defs.ops.freshness import OpsClockResource
from livesearch_pipeline.defs.resources import StorageResource
from livesearch_pipeline.defs.ticks import EMPTY_TICK, ExplainedRunStatusSensor
from livesearch_pipeline_tests.defs.ops.test_ops_alerts import NY, record_gold_materialization

NOW = "2026-11-25T20:00:00-05:00"


@pytest.fixture(scope="module")
def defs():
    from livesearch_pipeline.definitions import defs

    return defs


def _tick(defs, sensor, instance, cursor, resources):
    context = dg.build_sensor_context(instance=instance, cursor=cursor, repository_def=defs.get_repository_def(),
                                      resources=resources)
    return sensor.evaluate_tick(context)


def _said_something(data) -> bool:
    return bool(data.run_requests) or bool(data.skip_message and data.skip_message != EMPTY_TICK)


@pytest.mark.parametrize("alerting", [False, True])
def test_no_sensor_tick_of_the_project_says_nothing(defs, tmp_path, monkeypatch, webhook, alerting):
    if alerting:  # configured: the freshness tick records its check, and says so
        monkeypatch.setenv(URL_ENV, webhook.url)
        monkeypatch.setenv(TOKEN_ENV, "")
    else:
        monkeypatch.delenv(URL_ENV, raising=False)
        monkeypatch.delenv(TOKEN_ENV, raising=False)
    repository = defs.get_repository_def()
    sensors = [s for s in repository.sensor_defs if not isinstance(s, dg.AutomationConditionSensorDefinition)]
    assert {s.name for s in sensors} == {"agent_registry_sensor", "alert_on_run_failure", "analytics_store_sensor",
                                         "gold_freshness_sensor", "orphaned_cli_runs"}
    resources = {"storage": StorageResource(root=str(tmp_path)), "ops_clock": OpsClockResource(now=NOW),
                 "alert_webhook": defs.resources["alert_webhook"]}
    with dg.instance_for_test() as instance:
        if alerting:  # the due day (2026-11-25) frozen on time: the freshness tick records, sends nothing
            record_gold_materialization(instance, "2026-11-25", dt.datetime(2026, 11, 25, 18, 45, tzinfo=NY))
        for sensor in sensors:
            first = _tick(defs, sensor, instance, None, resources)
            second = _tick(defs, sensor, instance, first.cursor, resources)
            for n, data in enumerate((first, second), start=1):
                assert _said_something(data), (sensor.name, n, data.skip_message)
    assert webhook.received == []


def test_the_store_sensor_says_it_has_nothing_to_follow(defs, tmp_path):
    """Before issue 42 every idle tick of analytics_store_sensor read "Sensor function returned an
    empty result"; it says that no run succeeded since the last tick, and a run that does not change
    the store is named with the reason."""
    assert isinstance(analytics_store_sensor, ExplainedRunStatusSensor)
    assert isinstance(defs.get_repository_def().get_sensor_def("analytics_store_sensor"), ExplainedRunStatusSensor)
    resources = {"storage": StorageResource(root=str(tmp_path))}
    with dg.instance_for_test() as instance:
        first = _tick(defs, analytics_store_sensor, instance, None, resources)
        idle = _tick(defs, analytics_store_sensor, instance, first.cursor, resources)
        assert idle.skip_message == "no run succeeded since the last tick: the store is as current as the runs"
        assert not idle.run_requests

        @dg.op
        def noop():
            return None

        run = dg.GraphDefinition(name="some_job", node_defs=[noop]).to_job().execute_in_process(instance=instance)
        handled = _tick(defs, analytics_store_sensor, instance, idle.cursor, resources)
        assert handled.skip_message == (f"run {run.run_id} of some_job materialised none of agent_runs, gold_answers, "
                                        "served_questions: it does not change the store")
        again = _tick(defs, analytics_store_sensor, instance, handled.cursor, resources)
        assert again.skip_message.startswith("no run succeeded since the last tick")


def test_a_copy_of_the_store_sensor_keeps_explaining_its_ticks():
    copy = analytics_store_sensor.with_attributes(metadata={"owner": "team:ops"})
    assert isinstance(copy, ExplainedRunStatusSensor) and copy.idle_reason == analytics_store_sensor.idle_reason
    assert copy.name == analytics_store_sensor.name and copy.job_name == analytics_store_sensor.job_name
