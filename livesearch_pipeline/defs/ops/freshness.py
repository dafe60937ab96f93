"""Freshness of `gold_answers`: partition D must be frozen by 19:30 New York time on D, on every D
that is a session of at least one covered market (Shanghai, Hong Kong, New York).

The check is evaluated by a sensor, not by a job step: an asset check on `gold_answers` would
join the `daily_refresh` selection and judge the wall clock inside every refresh (and backfill)
run, which is not what a refresh of an old day should report. The sensor reports the result as
the asset check evaluation `gold_frozen_by_deadline` on `gold_answers` (the daemon stores it
like a check run by a step, visible on the asset's Checks tab) and POSTs a `freshness` alert
once per missed partition.

"Frozen by" means: the earliest materialisation of partition D of `gold_answers` (the write-
once snapshot's freeze) has a timestamp at or before the deadline. A day frozen late stays a
failed check for that day; it is alerted once.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Optional
from zoneinfo import ZoneInfo

import dagster as dg

from livesearch_pipeline.core.calendars import CALENDARS, is_session
from livesearch_pipeline.defs.ops.alerts import Alert, AlertWebhookResource
from livesearch_pipeline.defs.partitions import PARTITION_START, PARTITION_TIMEZONE

GOLD = dg.AssetKey("gold_answers")
FRESHNESS_CHECK = "gold_frozen_by_deadline"
DEADLINE = dt.time(19, 30)
# Long enough to reach back over the longest run of days on which no covered market trades
# (Lunar New Year + a weekend is 9 days in Shanghai, but Hong Kong and New York trade then).
_LOOKBACK_DAYS = 15
_TZ = ZoneInfo(PARTITION_TIMEZONE)


class OpsClockResource(dg.ConfigurableResource):
    """The time the freshness sensor judges at. Unset: the real time. Tests fix it."""

    now: Optional[str] = None  # ISO 8601 with an offset, e.g. 2026-11-25T19:45:00-05:00

    def current(self) -> dt.datetime:
        if self.now is None:
            return dt.datetime.now(dt.timezone.utc)
        parsed = dt.datetime.fromisoformat(self.now)
        if parsed.tzinfo is None:
            raise ValueError(f"ops clock `now` {self.now!r} has no UTC offset; write e.g. {self.now}-05:00")
        return parsed


def deadline_of(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, DEADLINE, tzinfo=_TZ)


def is_market_day(day: dt.date) -> bool:
    return any(is_session(calendar, day) for calendar in CALENDARS)


def due_partition(now: dt.datetime) -> Optional[dt.date]:
    """The latest D whose deadline has passed at `now` and that is a session of a covered market."""
    today = now.astimezone(_TZ).date()
    start = dt.date.fromisoformat(PARTITION_START)
    for back in range(_LOOKBACK_DAYS):
        day = today - dt.timedelta(days=back)
        if day < start:
            return None
        if deadline_of(day) <= now and is_market_day(day):
            return day
    raise RuntimeError(f"no session of {', '.join(CALENDARS)} in the {_LOOKBACK_DAYS} days up to {today}")


@dataclass(frozen=True)
class Freshness:
    partition: dt.date
    deadline: dt.datetime
    frozen_at: Optional[dt.datetime]  # the earliest materialisation, if any

    @property
    def passed(self) -> bool:
        return self.frozen_at is not None and self.frozen_at <= self.deadline

    def message(self, now: dt.datetime) -> str:
        if self.frozen_at is None:
            late = int((now - self.deadline).total_seconds() // 60)
            return (f"gold_answers partition {self.partition} is not frozen: its deadline "
                    f"{self.deadline.isoformat()} passed {late} min ago")
        verdict = "on time" if self.passed else f"{int((self.frozen_at - self.deadline).total_seconds() // 60)} min late"
        return f"gold_answers partition {self.partition} frozen at {self.frozen_at.astimezone(_TZ).isoformat()} ({verdict})"


def gold_freshness(instance: dg.DagsterInstance, day: dt.date) -> Freshness:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=GOLD, asset_partitions=[day.isoformat()]), limit=1, ascending=True).records
    frozen_at = dt.datetime.fromtimestamp(records[0].timestamp, dt.timezone.utc) if records else None
    return Freshness(partition=day, deadline=deadline_of(day), frozen_at=frozen_at)


def check_evaluation(result: Freshness, now: dt.datetime) -> dg.AssetCheckEvaluation:
    return dg.AssetCheckEvaluation(
        asset_key=GOLD, check_name=FRESHNESS_CHECK, passed=result.passed, severity=dg.AssetCheckSeverity.WARN,
        metadata={"partition": result.partition.isoformat(), "deadline": result.deadline.isoformat(),
                  "frozen_at": result.frozen_at.isoformat() if result.frozen_at else "not frozen",
                  "evaluated_at": now.isoformat(), "message": result.message(now)},
    )


@dg.sensor(
    name="gold_freshness_sensor",
    minimum_interval_seconds=300,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Checks that gold_answers of the last market day was frozen by 19:30 America/New_York and records "
                "the check gold_frozen_by_deadline; alerts once per missed day when alerting is configured "
                "(set LIVESEARCH_ALERT_WEBHOOK_URL and LIVESEARCH_ALERT_WEBHOOK_TOKEN, empty for none).",
)
def gold_freshness_sensor(context: dg.SensorEvaluationContext, ops_clock: OpsClockResource,
                          alert_webhook: AlertWebhookResource) -> dg.SensorResult:
    now = ops_clock.current()
    day = due_partition(now)
    if day is None:
        return dg.SensorResult(skip_reason=f"no partition is due yet at {now.isoformat()}")
    result = gold_freshness(context.instance, day)
    # Cursor: the last (partition, verdict) recorded, so a tick every 5 minutes records a verdict
    # and alerts once, yet records again when the verdict of the same day changes.
    recorded = f"{day.isoformat()}:{'passed' if result.passed else 'failed'}"
    if context.cursor == recorded:
        return dg.SensorResult(skip_reason=f"already recorded: {result.message(now)}")
    if not result.passed:
        missing = alert_webhook.missing_configuration()
        if missing is not None:
            # Recorded all the same: the check is the record, the alert only a notification.
            context.log.warning(f"{result.message(now)}; no alert sent: {missing}")
        else:
            alert_webhook.send(Alert(kind="freshness", job="daily_refresh", partition=day.isoformat(),
                                     step=None, message=result.message(now), asset=GOLD.to_user_string()))
    return dg.SensorResult(asset_events=[check_evaluation(result, now)], cursor=recorded)
