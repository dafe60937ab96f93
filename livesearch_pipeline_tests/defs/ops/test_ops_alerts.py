"""Alerts reach a webhook: a failed run, a failed blocking check and a missed freshness deadline.

The webhook is a small HTTP server this test starts on 127.0.0.1; every alert it receives is
asserted field by field, and no alert may carry a secret. The freshness sensor judges at a
fixed clock, against materialisations recorded with fixed timestamps.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import dagster as dg
import pytest
from dagster._core.events import DagsterEvent, DagsterEventType, StepMaterializationData
from dagster._core.instance.utils import RUNLESS_JOB_NAME, RUNLESS_RUN_ID

from livesearch_pipeline.defs.ops.alerts import (
    REDACTED, TOKEN_ENV, URL_ENV, AlertDeliveryError, AlertWebhookResource, Alert, alert_on_run_failure,
    alert_webhook_from_env, redact, secret_values,
)
from livesearch_pipeline.defs.ops.freshness import (
    FRESHNESS_CHECK, GOLD, OpsClockResource, deadline_of, due_partition, gold_freshness_sensor,
)

TOKEN = "hook-token-5f3a9c1e77"
DB_PASSWORD = "pg-pass-0b9d41"
NY = dt.timezone(dt.timedelta(hours=-5))  # New York in November (EST)


class Webhook:
    """Records every POST; answers `status` (200 unless a test changes it)."""

    def __init__(self) -> None:
        self.received: list[dict] = []
        self.status = 200
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook.received.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body),
                                      "raw": body.decode("utf-8")})
                self.send_response(hook.status)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/livesearch"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def bodies(self) -> list[dict]:
        return [r["body"] for r in self.received]


def assert_no_secret(hook: Webhook, *secrets: str) -> None:
    for record in hook.received:
        for secret in secrets:
            assert secret not in record["raw"], f"alert carries a secret: {record['raw']}"


# --------------------------------------------------------------------------- redaction


def test_redact_removes_credentials_tokens_and_secret_environment_values():
    secrets = secret_values([TOKEN], environ={"LIVESEARCH_PG_PASSWORD": DB_PASSWORD, "PATH": "/usr/bin:/bin",
                                              "TUSHARE_TOKEN": "ts-abcdef123456", "SHORT_TOKEN": "ab"})
    assert secrets[0] in {TOKEN, "ts-abcdef123456"} and DB_PASSWORD in secrets and "/usr/bin:/bin" not in secrets
    text = (f"connect postgresql://dagster:{DB_PASSWORD}@db:5432/x failed; GET https://api.example.com/q?"
            f"api_key=ZZ99aa&date=20261125 sent Authorization: Bearer {TOKEN}; "
            f"tushare token=ts-abcdef123456; password: hunter22; kept 600519.SH")
    out = redact(text, secrets)
    for secret in (DB_PASSWORD, TOKEN, "ZZ99aa", "ts-abcdef123456", "hunter22"):
        assert secret not in out, out
    assert "postgresql://[redacted]@db:5432/x" in out and "date=20261125" in out and "kept 600519.SH" in out
    assert out.count(REDACTED) >= 5


# --------------------------------------------------------------------------- failed runs and checks


@dg.op
def fetch_quotes() -> None:
    raise RuntimeError(f"vendor refused https://svc:{DB_PASSWORD}@vendor.example/q?token={TOKEN} (HTTP 401)")


@dg.job
def failing_job():
    fetch_quotes()


@dg.asset(partitions_def=dg.DailyPartitionsDefinition(start_date="2026-11-01"))
def small_gold() -> None:
    return None


@dg.asset_check(asset=small_gold, blocking=True)
def small_gold_covers_served() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=False, metadata={"missing": 3, "first_missing": "ls-00ab, ls-01cd"})


def failure_context(result: dg.ExecuteInProcessResult, instance: dg.DagsterInstance, hook: Webhook):
    failure = next(e for e in result.all_events if e.event_type == DagsterEventType.RUN_FAILURE)
    return dg.build_run_status_sensor_context(
        sensor_name=alert_on_run_failure.name, dagster_event=failure, dagster_instance=instance,
        dagster_run=result.dagster_run,
        resources={"alert_webhook": AlertWebhookResource(url=hook.url, token=TOKEN)},
    ).for_run_failure()


def test_a_failed_run_posts_job_partition_step_and_message_without_secrets(webhook, instance, monkeypatch):
    monkeypatch.setenv("LIVESEARCH_PG_PASSWORD", DB_PASSWORD)
    result = failing_job.execute_in_process(instance=instance, raise_on_error=False,
                                            tags={"dagster/partition": "2026-11-25"})
    assert not result.success

    alert_on_run_failure(failure_context(result, instance, webhook))

    assert len(webhook.received) == 1, webhook.bodies()
    request = webhook.received[0]
    assert request["path"] == "/hooks/livesearch"
    assert request["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert request["headers"]["Content-Type"] == "application/json"
    body = request["body"]
    assert {k: body[k] for k in ("source", "kind", "job", "partition", "step", "run_id")} == {
        "source": "livesearch", "kind": "run_failure", "job": "failing_job", "partition": "2026-11-25",
        "step": "fetch_quotes", "run_id": result.run_id}
    assert "vendor refused https://[redacted]@vendor.example/q?token=[redacted] (HTTP 401)" in body["message"]
    assert_no_secret(webhook, TOKEN, DB_PASSWORD, webhook.url)


def test_a_failed_blocking_check_is_alerted_naming_the_check(webhook, instance):
    job = dg.Definitions(assets=[small_gold], asset_checks=[small_gold_covers_served],
                         jobs=[dg.define_asset_job("small_refresh", selection=[small_gold])]).resolve_job_def("small_refresh")
    result = job.execute_in_process(instance=instance, partition_key="2026-11-25", raise_on_error=False)
    assert not result.success, "a failed blocking check fails the run"

    alert_on_run_failure(failure_context(result, instance, webhook))

    checks = [b for b in webhook.bodies() if b["kind"] == "check_failure"]
    assert len(checks) == 1, webhook.bodies()
    assert checks[0]["job"] == "small_refresh" and checks[0]["partition"] == "2026-11-25"
    assert checks[0]["asset"] == "small_gold" and checks[0]["step"]
    assert checks[0]["message"].startswith("check small_gold_covers_served on small_gold failed (severity ERROR)")
    assert '"first_missing": "ls-00ab, ls-01cd"' in checks[0]["message"]
    # The run's own failure is reported too, naming the step that failed.
    assert any(b["kind"] == "run_failure" and b["step"] for b in webhook.bodies())


def test_a_webhook_that_refuses_fails_the_tick_without_echoing_the_url(webhook):
    webhook.status = 500
    resource = AlertWebhookResource(url=webhook.url + "?key=sekret-sig-123", token=TOKEN)
    with pytest.raises(AlertDeliveryError, match="HTTP 500 to a freshness alert") as raised:
        resource.send(Alert(kind="freshness", job="daily_refresh", partition="2026-11-25", step=None, message="m"))
    assert "sekret" not in str(raised.value) and webhook.url not in str(raised.value)


# --------------------------------------------------------------------------- freshness


def record_gold_materialization(instance: dg.DagsterInstance, partition: str, at: dt.datetime) -> None:
    event = DagsterEvent(event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value, job_name=RUNLESS_JOB_NAME,
                         event_specific_data=StepMaterializationData(
                             dg.AssetMaterialization(asset_key=GOLD, partition=partition)))
    instance.report_dagster_event(event, run_id=RUNLESS_RUN_ID, timestamp=at.timestamp())


def test_due_partition_follows_the_deadline_and_the_market_calendars():
    # Wednesday 25 Nov 2026 before and after 19:30 New York.
    assert due_partition(dt.datetime(2026, 11, 25, 19, 29, tzinfo=NY)) == dt.date(2026, 11, 24)
    assert due_partition(dt.datetime(2026, 11, 25, 19, 30, tzinfo=NY)) == dt.date(2026, 11, 25)
    # Thanksgiving (26 Nov): New York is shut but Shanghai and Hong Kong trade, so the day is due.
    assert due_partition(dt.datetime(2026, 11, 26, 20, 0, tzinfo=NY)) == dt.date(2026, 11, 26)
    # A weekend is no market's session: on Sunday evening Friday is the day due.
    assert due_partition(dt.datetime(2026, 11, 29, 21, 0, tzinfo=NY)) == dt.date(2026, 11, 27)
    assert deadline_of(dt.date(2026, 11, 25)).isoformat() == "2026-11-25T19:30:00-05:00"


def freshness_context(instance, hook: Webhook, now: dt.datetime, cursor: str | None = None):
    return dg.build_sensor_context(instance=instance, cursor=cursor, resources={
        "ops_clock": OpsClockResource(now=now.isoformat()), "alert_webhook": alert_webhook_from_env()})


def test_missed_freshness_is_recorded_and_alerted_once(webhook, instance, monkeypatch):
    monkeypatch.setenv(URL_ENV, webhook.url)
    monkeypatch.setenv(TOKEN_ENV, "")  # an endpoint without a token: no Authorization header
    now = dt.datetime(2026, 11, 25, 20, 15, tzinfo=NY)
    record_gold_materialization(instance, "2026-11-24", dt.datetime(2026, 11, 24, 18, 50, tzinfo=NY))

    result = gold_freshness_sensor(freshness_context(instance, webhook, now))

    [evaluation] = result.asset_events
    assert (evaluation.asset_key, evaluation.check_name, evaluation.passed) == (GOLD, FRESHNESS_CHECK, False)
    assert evaluation.metadata["partition"].value == "2026-11-25"
    assert [b["kind"] for b in webhook.bodies()] == ["freshness"]
    body = webhook.bodies()[0]
    assert (body["job"], body["partition"], body["step"], body["asset"]) == ("daily_refresh", "2026-11-25", None,
                                                                               "gold_answers")
    assert body["message"] == ("gold_answers partition 2026-11-25 is not frozen: its deadline "
                               "2026-11-25T19:30:00-05:00 passed 45 min ago")
    assert "Authorization" not in webhook.received[0]["headers"]

    # The next tick, five minutes later, neither records nor alerts again.
    again = gold_freshness_sensor(freshness_context(instance, webhook, now + dt.timedelta(minutes=5), result.cursor))
    assert not again.asset_events and len(webhook.received) == 1


def test_a_day_frozen_before_the_deadline_passes_without_an_alert(webhook, instance, monkeypatch):
    monkeypatch.setenv(URL_ENV, webhook.url)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    record_gold_materialization(instance, "2026-11-25", dt.datetime(2026, 11, 25, 18, 41, tzinfo=NY))
    # A later re-materialisation (identical bytes) does not move the freeze time.
    record_gold_materialization(instance, "2026-11-25", dt.datetime(2026, 11, 25, 22, 0, tzinfo=NY))

    result = gold_freshness_sensor(freshness_context(instance, webhook, dt.datetime(2026, 11, 25, 23, 0, tzinfo=NY)))

    [evaluation] = result.asset_events
    assert evaluation.passed and evaluation.metadata["frozen_at"].value.startswith("2026-11-25T23:41:00")
    assert webhook.received == []


def test_a_day_frozen_late_fails_the_check(webhook, instance, monkeypatch):
    monkeypatch.setenv(URL_ENV, webhook.url)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    record_gold_materialization(instance, "2026-11-25", dt.datetime(2026, 11, 25, 21, 5, tzinfo=NY))

    result = gold_freshness_sensor(freshness_context(instance, webhook, dt.datetime(2026, 11, 25, 23, 0, tzinfo=NY)))

    assert not result.asset_events[0].passed
    assert webhook.bodies()[0]["message"].endswith("(95 min late)")
    assert_no_secret(webhook, TOKEN)


def test_an_unset_webhook_variable_records_the_check_and_names_it(instance, monkeypatch):
    # Issue 23: alerting not configured is not a failed tick; the check is recorded all the same.
    monkeypatch.delenv(URL_ENV, raising=False)
    monkeypatch.setenv(TOKEN_ENV, "")
    resource = alert_webhook_from_env()
    assert URL_ENV in resource.missing_configuration()
    result = gold_freshness_sensor(dg.build_sensor_context(instance=instance, resources={
        "ops_clock": OpsClockResource(now="2026-11-25T20:00:00-05:00"), "alert_webhook": resource}))
    assert [e.check_name for e in result.asset_events] == [FRESHNESS_CHECK]
