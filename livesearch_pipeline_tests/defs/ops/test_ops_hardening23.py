"""Issue 23, findings 7 and 10: redaction of every secret form, end to end on the alert payload;
unconfigured alerting as a skipped tick naming the variable (the freshness check still recorded);
the analytical store following any run that froze gold or wrote verdicts (incl. __ASSET_JOB)."""

from __future__ import annotations

import datetime as dt
import json

import dagster as dg
import pytest

from livesearch_pipeline.defs.ops.alerts import (
    TOKEN_ENV, URL_ENV, AlertWebhookResource, alert_on_run_failure, alert_webhook_from_env,
)
from livesearch_pipeline.defs.ops.analytics import analytics_store_sensor
from livesearch_pipeline.defs.ops.freshness import FRESHNESS_CHECK, GOLD, OpsClockResource, gold_freshness_sensor
from livesearch_pipeline_tests.defs.ops.test_ops_alerts import NY, TOKEN, assert_no_secret

BROKER_PASSWORD = "brokerpw-7d2c11"
QUERY_KEY = "QQkey-5e8a90b1"
PWD = 'pg"pwd/3c9e\\x'  # escaped by JSON: \" and \\ and (unescaped) /
CREDENTIALS = "svc-credential-4f7a2b"
JSON_TOKEN = "jsontok-88aa77bb"


@dg.op
def call_the_service() -> None:
    raise RuntimeError(f"data service http://svc.internal/mcp?key={QUERY_KEY}&date=20261125 unreachable; "
                       f"celery broker redis://:{BROKER_PASSWORD}@broker:6379/0 refused")


@dg.job
def leaky_job():
    call_the_service()


@dg.asset(partitions_def=dg.DailyPartitionsDefinition(start_date="2026-11-01"))
def leaky_gold() -> None:
    return None


@dg.asset_check(asset=leaky_gold, blocking=True)
def leaky_check() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=False, metadata={
        "config": json.dumps({"db": {"password": PWD, "api_token": JSON_TOKEN}}),
        "note": f"credentials file held {CREDENTIALS}"})


def _context(result, instance, resource):
    failure = next(e for e in result.all_events if e.event_type == dg.DagsterEventType.RUN_FAILURE)
    return dg.build_run_status_sensor_context(
        sensor_name=alert_on_run_failure.name, dagster_event=failure, dagster_instance=instance,
        dagster_run=result.dagster_run, resources={"alert_webhook": resource}).for_run_failure()


def test_every_secret_form_is_redacted_from_the_alert_payload(webhook, instance, monkeypatch):
    monkeypatch.setenv("LIVESEARCH_PG_PWD", PWD)
    monkeypatch.setenv("VENDOR_CREDENTIALS", CREDENTIALS)
    resource = AlertWebhookResource(url=webhook.url, token=TOKEN)
    result = leaky_job.execute_in_process(instance=instance, raise_on_error=False)
    alert_on_run_failure(_context(result, instance, resource))
    job = dg.Definitions(assets=[leaky_gold], asset_checks=[leaky_check],
                         jobs=[dg.define_asset_job("leaky_refresh", selection=[leaky_gold])]).resolve_job_def("leaky_refresh")
    checked = job.execute_in_process(instance=instance, partition_key="2026-11-25", raise_on_error=False)
    alert_on_run_failure(_context(checked, instance, resource))

    kinds = [b["kind"] for b in webhook.bodies()]
    assert "run_failure" in kinds and "check_failure" in kinds
    assert_no_secret(webhook, QUERY_KEY, BROKER_PASSWORD, PWD, json.dumps(PWD)[1:-1], CREDENTIALS, JSON_TOKEN)
    messages = " ".join(b["message"] for b in webhook.bodies())
    assert "?key=[redacted]&date=20261125" in messages and "redis://[redacted]@broker:6379/0" in messages
    assert "leaky_check" in messages  # the alert still says what failed


def test_unconfigured_alerting_skips_the_tick_naming_the_variable(instance, monkeypatch):
    monkeypatch.delenv(URL_ENV, raising=False)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = leaky_job.execute_in_process(instance=instance, raise_on_error=False)
    outcome = alert_on_run_failure(_context(result, instance, alert_webhook_from_env()))
    assert isinstance(outcome, dg.SkipReason)
    assert URL_ENV in outcome.skip_message and "not configured" in outcome.skip_message
    assert URL_ENV in alert_on_run_failure.description and "skipped" in alert_on_run_failure.description
    monkeypatch.setenv(URL_ENV, "http://127.0.0.1:9/hook")  # the URL alone: the token's variable is named
    outcome = alert_on_run_failure(_context(result, instance, alert_webhook_from_env()))
    assert isinstance(outcome, dg.SkipReason) and TOKEN_ENV in outcome.skip_message


def test_the_freshness_check_is_recorded_without_alerting_configured(instance, monkeypatch):
    monkeypatch.delenv(URL_ENV, raising=False)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    now = dt.datetime(2026, 11, 25, 20, 15, tzinfo=NY)
    context = dg.build_sensor_context(instance=instance, resources={
        "ops_clock": OpsClockResource(now=now.isoformat()), "alert_webhook": alert_webhook_from_env()})
    result = gold_freshness_sensor(context)  # a missed deadline, nobody to tell: no failed tick
    [evaluation] = result.asset_events
    assert (evaluation.asset_key, evaluation.check_name, evaluation.passed) == (GOLD, FRESHNESS_CHECK, False)
    assert URL_ENV in gold_freshness_sensor.description


@dg.asset(name="gold_answers", partitions_def=dg.DailyPartitionsDefinition(start_date="2026-03-01"))
def fake_gold() -> None:
    return None


@dg.asset(name="agent_runs", partitions_def=dg.MultiPartitionsDefinition({
    "date": dg.DailyPartitionsDefinition(start_date="2026-03-01"), "agent": dg.StaticPartitionsDefinition(["oracle"])}))
def fake_agent_runs() -> None:
    return None


@pytest.mark.parametrize(("asset", "partition", "expected"), [
    (fake_gold, "2026-03-03", "2026-03-03"),
    (fake_agent_runs, dg.MultiPartitionKey({"date": "2026-03-04", "agent": "oracle"}), "2026-03-04"),
])
def test_the_store_follows_a_backfill_launched_from_an_asset_page(instance, asset, partition, expected):
    # An asset page's backfill runs as the implicit asset job, not as daily_refresh.
    job = dg.Definitions(assets=[asset]).resolve_implicit_global_asset_job_def()
    run = job.execute_in_process(partition_key=partition, instance=instance, asset_selection=[asset.key])
    assert run.success and run.dagster_run.job_name == "__ASSET_JOB"
    event = dg.DagsterEvent(event_type_value="PIPELINE_SUCCESS", job_name=run.dagster_run.job_name)
    context = dg.build_run_status_sensor_context(sensor_name=analytics_store_sensor.name, dagster_event=event,
                                                 dagster_instance=instance, dagster_run=run.dagster_run)
    outcome = analytics_store_sensor(context)
    assert isinstance(outcome, dg.RunRequest), outcome
    assert outcome.partition_key == expected and outcome.run_key == f"analytics:{run.run_id}"
