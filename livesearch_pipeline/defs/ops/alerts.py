"""Alerts to a webhook: failed runs, failed blocking checks and missed freshness reach a person.

One JSON object per alert, POSTed to the URL of `AlertWebhookResource`:

    {"source": "livesearch", "kind": "run_failure" | "check_failure" | "freshness",
     "job": ..., "partition": ..., "step": ..., "message": ..., "run_id": ...}

The URL and the optional bearer token are read from the environment when a sensor builds the
resource sends (LIVESEARCH_ALERT_WEBHOOK_URL, LIVESEARCH_ALERT_WEBHOOK_TOKEN; set the token to
the empty string when the endpoint takes none), never at import. Alerting is opt-in: while the
variables are unset the sensors' ticks are *skipped* with a reason naming the variable (the
daemon page shows "Skipped", not a failed tick with a config stack trace), and the freshness
check is still recorded.

No alert carries a secret: every message goes through the project's one redaction function
(core/redaction.py), given the webhook's own URL and token and the values of secret-looking
environment variables (…TOKEN, …SECRET, …PASSWORD, …PWD, …PASS, …CREDENTIALS, …AUTH, …KEY, …DSN);
it also removes credentials in URLs, bearer tokens, key-like query parameters and secret-looking
`name=value` / `"name": "value"` pairs in every quoting and escaping.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping, Optional, Sequence

import dagster as dg
import httpx
from dagster._core.definitions.run_status_sensor_definition import RunStatusSensorCursor
from dagster._core.definitions.sensor_definition import SensorExecutionData

from livesearch_pipeline.core.redaction import REDACTED as REDACTED  # re-exported: the marker alerts carry
from livesearch_pipeline.core.redaction import redact

ALERT_SOURCE = "livesearch"
URL_ENV, TOKEN_ENV = "LIVESEARCH_ALERT_WEBHOOK_URL", "LIVESEARCH_ALERT_WEBHOOK_TOKEN"
# Long enough to carry the first lines of a stack trace, short enough for any chat webhook.
MAX_MESSAGE_CHARS = 2000
_SECRET_ENV_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|PWD|_PASS|CREDENTIALS?|_AUTH|API_?KEY|_KEY|_DSN)$",
                              re.IGNORECASE)
# Values shorter than this are not redacted literally: "1" or "true" would shred every message.
_MIN_SECRET_CHARS = 6
def secret_values(resource_secrets: Iterable[Optional[str]] = (),
                  environ: Mapping[str, str] | None = None) -> list[str]:
    """Literal strings no alert may contain, longest first (so a secret containing another goes whole)."""
    env = os.environ if environ is None else environ
    values = {v for v in resource_secrets if v}
    values |= {v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v) >= _MIN_SECRET_CHARS}
    return sorted((v for v in values if len(v) >= _MIN_SECRET_CHARS), key=len, reverse=True)


@dataclass(frozen=True)
class Alert:
    kind: str  # run_failure, check_failure or freshness
    job: Optional[str]
    partition: Optional[str]
    step: Optional[str]
    message: str
    run_id: Optional[str] = None
    asset: Optional[str] = None

    def body(self, secrets: Sequence[str]) -> dict:
        fields = {k: (redact(v, secrets) if isinstance(v, str) else v) for k, v in asdict(self).items()}
        message = fields["message"]
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS] + f"… [{len(message) - MAX_MESSAGE_CHARS} more characters]"
        return {"source": ALERT_SOURCE, **fields, "message": message}


class AlertDeliveryError(RuntimeError):
    """The webhook did not accept an alert (the sensor tick fails, so the daemon retries it)."""


class AlertWebhookResource(dg.ConfigurableResource):
    """Where alerts go: a URL that takes a JSON POST, and an optional bearer token.

    Given directly (`url`, `token`) or by the names of the environment variables holding them
    (`url_env`, `token_env`), read when an alert is about to be sent: an unset variable makes
    the resource *not configured* (`missing_configuration` names it) instead of failing the tick."""

    url: Optional[str] = None
    token: Optional[str] = None
    url_env: Optional[str] = None
    token_env: Optional[str] = None
    timeout_s: float = 10.0

    def _resolved(self) -> tuple[Optional[str], Optional[str]]:
        url = self.url if self.url is not None or self.url_env is None else os.environ.get(self.url_env)
        token = self.token if self.token is not None or self.token_env is None else os.environ.get(self.token_env)
        return (url.strip() or None) if url else None, (token.strip() or None) if token else None

    def missing_configuration(self) -> Optional[str]:
        """None when alerts can be sent; otherwise what to set, naming the variable."""
        if self.url is None and (self.url_env is None or not os.environ.get(self.url_env, "").strip()):
            return (f"alerting is not configured: set {self.url_env or URL_ENV} to the webhook URL "
                    f"(and {self.token_env or TOKEN_ENV} to its bearer token, empty for none) to turn alerts on")
        if self.token is None and self.token_env is not None and self.token_env not in os.environ:
            return (f"alerting is not configured: {self.token_env} is not set (set it to the webhook's bearer "
                    "token, or to the empty string when the endpoint takes none)")
        return None

    def secrets(self) -> list[str]:
        return secret_values(self._resolved())

    def send(self, alert: Alert) -> dict:
        """POST the alert; returns the body sent. Raises `AlertDeliveryError` on any non-2xx answer."""
        url, token = self._resolved()
        if not url:
            raise AlertDeliveryError(self.missing_configuration() or f"no alert webhook configured: set {URL_ENV}")
        body = alert.body(self.secrets())
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        # Never echo the URL in an error: a chat webhook URL is itself a credential.
        try:
            response = httpx.post(url, content=json.dumps(body, sort_keys=True), headers=headers,
                                  timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise AlertDeliveryError(redact(f"alert webhook unreachable: {type(exc).__name__}: {exc}",
                                            self.secrets())) from None
        if not 200 <= response.status_code < 300:
            raise AlertDeliveryError(f"alert webhook answered HTTP {response.status_code} to a {alert.kind} alert")
        return body


def alert_webhook_from_env() -> AlertWebhookResource:
    """The resource as deployed: the URL and token are read from their variables when an alert is
    sent; unset, the sensors skip their alerts naming the variable (`missing_configuration`)."""
    return AlertWebhookResource(url_env=URL_ENV, token_env=TOKEN_ENV)


# --------------------------------------------------------------------------- failed runs and blocking checks


def _partition(run: dg.DagsterRun) -> Optional[str]:
    return run.tags.get("dagster/partition")


def failure_alerts(instance: dg.DagsterInstance, run: dg.DagsterRun, run_failure_message: str) -> list[Alert]:
    """One alert per failed check (blocking ones stop the run), one per failed step, or one for
    the run when it failed before any step did (e.g. it could not start)."""
    records = instance.get_records_for_run(run.run_id, of_type={
        dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.ASSET_CHECK_EVALUATION}).records
    alerts: list[Alert] = []
    for record in records:
        event = record.event_log_entry.dagster_event
        if event is None:
            continue
        if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION:
            evaluation = event.event_specific_data
            if evaluation.passed:
                continue
            details = {k: v.value for k, v in evaluation.metadata.items()}
            severity = evaluation.severity.value if evaluation.severity else "ERROR"
            alerts.append(Alert(
                kind="check_failure", job=run.job_name, partition=_partition(run), step=event.step_key,
                message=f"check {evaluation.check_name} on {evaluation.asset_key.to_user_string()} failed "
                        f"(severity {severity}): {json.dumps(details, sort_keys=True, default=str)}",
                run_id=run.run_id, asset=evaluation.asset_key.to_user_string()))
        else:
            error = event.event_specific_data.error
            alerts.append(Alert(kind="run_failure", job=run.job_name, partition=_partition(run), step=event.step_key,
                                message=error.to_string() if error else "step failed without an error record",
                                run_id=run.run_id))
    if not any(a.kind == "run_failure" for a in alerts):
        alerts.append(Alert(kind="run_failure", job=run.job_name, partition=_partition(run), step=None,
                            message=run_failure_message, run_id=run.run_id))
    return alerts


def _failure_reason(instance: dg.DagsterInstance, run: dg.DagsterRun, message: str) -> str:
    """One line naming a failed run and its first cause (redacted), for a skipped tick."""
    first = next((a for a in failure_alerts(instance, run, message) if a.kind == "run_failure"), None)
    cause = (first.message if first else message).strip().splitlines()
    text = cause[0] if cause else "no message"
    partition = _partition(run)
    return redact(f"run {run.run_id} of {run.job_name}{f' ({partition})' if partition else ''} failed: {text}",
                  secret_values())[:300]


def notify_failed_run(context: dg.RunStatusSensorContext, alert_webhook: AlertWebhookResource) -> Optional[dg.SkipReason]:
    """The alerts of one failed run (its failed steps and checks); a SkipReason naming the variable
    to set when alerting is not configured."""
    if not isinstance(context, dg.RunFailureSensorContext):
        context = context.for_run_failure()
    missing = alert_webhook.missing_configuration()
    if missing is not None:
        reason = _failure_reason(context.instance, context.dagster_run, context.failure_event.message or "")
        return dg.SkipReason(f"{missing}; not alerted: {reason}")
    for alert in failure_alerts(context.instance, context.dagster_run, context.failure_event.message or ""):
        alert_webhook.send(alert)
        context.log.info(f"alert sent: {alert.kind} {alert.job} {alert.partition} {alert.step}")
    return None


class RunFailureAlertSensor(dg.RunStatusSensorDefinition):
    """Dagster's run-failure sensor whose every tick says what it did.

    A run status sensor calls its function once per new failed run and, on a tick without one,
    reports "Sensor function returned an empty result"; a function that returns a SkipReason ends
    the tick after that run. Here a tick with nothing new is skipped saying so; and while alerting
    is not configured every tick is skipped naming the variable to set, listing every run that
    failed since the last tick (each once: the cursor, Dagster's own, moves past them)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(run_status=dg.DagsterRunStatus.FAILURE, run_status_sensor_fn=notify_failed_run, **kwargs)

    def with_attributes(self, *, jobs=None, metadata=None) -> "RunFailureAlertSensor":
        return RunFailureAlertSensor(
            name=self.name, minimum_interval_seconds=self.minimum_interval_seconds, description=self.description,
            monitor_all_code_locations=self._monitor_all_code_locations, default_status=self.default_status,
            tags=self._tags, metadata=metadata if metadata is not None else self._metadata)

    def evaluate_tick(self, context: dg.SensorEvaluationContext) -> SensorExecutionData:
        missing = context.resources.alert_webhook.missing_configuration()
        if missing is None:
            data = super().evaluate_tick(context)
            if data.skip_message == _EMPTY_TICK and not data.dagster_run_reactions:
                return SensorExecutionData(skip_message="no run failed since the last tick", cursor=data.cursor,
                                           log_key=data.log_key)
            return data
        return self._unconfigured_tick(context, missing)

    def _unconfigured_tick(self, context: dg.SensorEvaluationContext, missing: str) -> SensorExecutionData:
        instance = context.instance
        if context.cursor is None or not RunStatusSensorCursor.is_valid(context.cursor):
            latest = instance.fetch_run_status_changes(dg.DagsterEventType.RUN_FAILURE, limit=1).records
            start = latest[0].storage_id if latest else -1
            return SensorExecutionData(skip_message=f"{missing}; watching for failed runs from now on",
                                       cursor=RunStatusSensorCursor(record_id=start).to_json())
        after = RunStatusSensorCursor.from_json(context.cursor).record_id
        records = instance.fetch_run_status_changes(
            dg.RunStatusChangeRecordsFilter(event_type=dg.DagsterEventType.RUN_FAILURE, after_storage_id=after),
            ascending=True, limit=_MAX_LISTED_FAILURES).records
        if not records:
            return SensorExecutionData(skip_message=f"{missing}; no run failed since the last tick", cursor=context.cursor)
        runs = {r.dagster_run.run_id: r.dagster_run
                for r in instance.get_run_records(dg.RunsFilter(run_ids=[e.run_id for e in records]))}
        reasons = [_failure_reason(instance, runs[e.run_id], e.event_log_entry.dagster_event.message or "")
                   for e in records if e.run_id in runs]
        cursor = RunStatusSensorCursor(record_id=records[-1].storage_id).to_json()
        return SensorExecutionData(
            skip_message=f"{missing}; not alerted, {len(reasons)} failed run(s): " + "; ".join(reasons), cursor=cursor)


_EMPTY_TICK = "Sensor function returned an empty result"
_MAX_LISTED_FAILURES = 20

alert_on_run_failure = RunFailureAlertSensor(
    name="alert_on_run_failure",
    monitor_all_code_locations=False,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="POSTs every failed run of this code location (its failed steps and failed checks) to the alert "
                f"webhook. Off until configured: set {URL_ENV} (and {TOKEN_ENV}, empty for none) in the daemon's "
                "environment; until then each tick is skipped naming the variable and the runs that failed.",
)
