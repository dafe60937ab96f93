"""Alerts to a webhook: failed runs, failed blocking checks and missed freshness reach a person.

One JSON object per alert, POSTed to the URL of `AlertWebhookResource`:

    {"source": "livesearch", "kind": "run_failure" | "check_failure" | "freshness",
     "job": ..., "partition": ..., "step": ..., "message": ..., "run_id": ...}

The URL and the optional bearer token are read from the environment when a sensor builds the
resource (LIVESEARCH_ALERT_WEBHOOK_URL, LIVESEARCH_ALERT_WEBHOOK_TOKEN; set the token to the
empty string when the endpoint takes none), never at import. A sensor whose variables are
unset fails its tick naming the variable, in the UI: an alert destination nobody configured
is an operations error, not something to skip quietly.

No alert carries a secret: every message goes through `redact`, which removes the webhook's
own URL and token, the values of secret-looking environment variables (…TOKEN, …SECRET,
…PASSWORD, …KEY), credentials inside URLs, bearer tokens and secret-looking query parameters.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping, Optional, Sequence

import dagster as dg
import httpx

ALERT_SOURCE = "livesearch"
URL_ENV, TOKEN_ENV = "LIVESEARCH_ALERT_WEBHOOK_URL", "LIVESEARCH_ALERT_WEBHOOK_TOKEN"
REDACTED = "[redacted]"
# Long enough to carry the first lines of a stack trace, short enough for any chat webhook.
MAX_MESSAGE_CHARS = 2000
_SECRET_ENV_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|_KEY)$", re.IGNORECASE)
# Values shorter than this are not redacted literally: "1" or "true" would shred every message.
_MIN_SECRET_CHARS = 6
_URL_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/@:]+(?::[^\s/@]*)?@")
_AUTH_HEADER = re.compile(r"(?i)\b(bearer|basic|token)(\s+|:\s*)[A-Za-z0-9._~+/=-]{8,}")
_SECRET_PARAM = re.compile(
    r"(?i)\b([A-Za-z0-9_-]*(?:token|secret|password|passwd|api[_-]?key|access[_-]?key|signature|sig))"
    r"(\s*[=:]\s*)(['\"]?)[^\s&'\",;]+")


def secret_values(resource_secrets: Iterable[Optional[str]] = (),
                  environ: Mapping[str, str] | None = None) -> list[str]:
    """Literal strings no alert may contain, longest first (so a secret containing another goes whole)."""
    env = os.environ if environ is None else environ
    values = {v for v in resource_secrets if v}
    values |= {v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v) >= _MIN_SECRET_CHARS}
    return sorted((v for v in values if len(v) >= _MIN_SECRET_CHARS), key=len, reverse=True)


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    for value in secrets:
        text = text.replace(value, REDACTED)
    text = _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    text = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _SECRET_PARAM.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}", text)


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
    """Where alerts go: a URL that takes a JSON POST, and an optional bearer token."""

    url: str
    token: Optional[str] = None
    timeout_s: float = 10.0

    def secrets(self) -> list[str]:
        return secret_values([self.url, self.token])

    def send(self, alert: Alert) -> dict:
        """POST the alert; returns the body sent. Raises `AlertDeliveryError` on any non-2xx answer."""
        if not self.url:
            raise AlertDeliveryError(f"no alert webhook configured: set {URL_ENV}")
        body = alert.body(self.secrets())
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        # Never echo the URL in an error: a chat webhook URL is itself a credential.
        try:
            response = httpx.post(self.url, content=json.dumps(body, sort_keys=True), headers=headers,
                                  timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise AlertDeliveryError(redact(f"alert webhook unreachable: {type(exc).__name__}: {exc}",
                                            self.secrets())) from None
        if not 200 <= response.status_code < 300:
            raise AlertDeliveryError(f"alert webhook answered HTTP {response.status_code} to a {alert.kind} alert")
        return body


def alert_webhook_from_env() -> AlertWebhookResource:
    """The resource as deployed: both fields are `dg.EnvVar`s, resolved when a sensor runs."""
    return AlertWebhookResource(url=dg.EnvVar(URL_ENV), token=dg.EnvVar(TOKEN_ENV))


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


@dg.run_failure_sensor(
    name="alert_on_run_failure",
    monitor_all_code_locations=False,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="POSTs every failed run of this code location (its failed steps and failed checks) to the alert webhook.",
)
def alert_on_run_failure(context: dg.RunFailureSensorContext, alert_webhook: AlertWebhookResource) -> None:
    for alert in failure_alerts(context.instance, context.dagster_run, context.failure_event.message or ""):
        alert_webhook.send(alert)
        context.log.info(f"alert sent: {alert.kind} {alert.job} {alert.partition} {alert.step}")
