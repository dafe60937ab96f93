"""Freshness of `gold_answers`: partition D must be frozen by 19:30 New York time on D, on every D
that is a session of at least one covered market (Shanghai, Hong Kong, New York).

`gold_frozen_by_deadline` is a declared, partitioned asset check of `gold_answers` (listed on the
asset's Checks tab, non-blocking, severity WARN). It is judged by a sensor, not by a step of the
refresh (the `daily_refresh` job leaves it out, so no refresh or backfill judges the wall clock):
every 5 minutes the sensor judges the last due partition and reports the evaluation with that
partition and the materialisation it judged (its run), and POSTs a `freshness` alert once per
missed partition. While alerting is not configured every tick is *skipped* naming the variable
(the evaluation is recorded all the same). The check can also be executed on a partition by hand
(`AssetSelection.checks(...)`, tag `dagster/partition`): it judges the same rule at the ops clock.

"Frozen by" means: the earliest materialisation of partition D of `gold_answers` (the write-
once snapshot's freeze) has a timestamp at or before the deadline. A day frozen late stays a
failed check for that day; it is alerted once.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Iterator, Optional
from zoneinfo import ZoneInfo

import warnings

import dagster as dg
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)

from livesearch_pipeline.core.calendars import CALENDARS, is_session
from livesearch_pipeline.defs.ops.alerts import Alert, AlertWebhookResource
from livesearch_pipeline.defs.partitions import PARTITION_START, PARTITION_TIMEZONE, daily_partitions

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
    frozen_by: Optional[AssetCheckEvaluationTargetMaterializationData] = None  # its storage id and run

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
    if not records:
        return Freshness(partition=day, deadline=deadline_of(day), frozen_at=None)
    first = records[0]
    return Freshness(partition=day, deadline=deadline_of(day),
                     frozen_at=dt.datetime.fromtimestamp(first.timestamp, dt.timezone.utc),
                     frozen_by=AssetCheckEvaluationTargetMaterializationData(
                         storage_id=first.storage_id, run_id=first.run_id, timestamp=first.timestamp))


def _metadata(result: Freshness, now: dt.datetime) -> dict:
    return {"partition": result.partition.isoformat(), "deadline": result.deadline.isoformat(),
            "frozen_at": result.frozen_at.isoformat() if result.frozen_at else "not frozen",
            "frozen_by_run": result.frozen_by.run_id if result.frozen_by else "not frozen",
            "evaluated_at": now.isoformat(), "message": result.message(now)}


def check_evaluation(result: Freshness, now: dt.datetime) -> dg.AssetCheckEvaluation:
    """The check's evaluation as the sensor reports it: on D's partition, against D's first
    materialisation (so the UI links the run that froze D)."""
    return dg.AssetCheckEvaluation(
        asset_key=GOLD, check_name=FRESHNESS_CHECK, passed=result.passed, severity=dg.AssetCheckSeverity.WARN,
        partition=result.partition.isoformat(), target_materialization_data=result.frozen_by,
        metadata=_metadata(result, now),
    )


# A partitioned check spec is a Dagster preview (1.13), as for the refresh's blocking checks.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.PreviewWarning)
    FRESHNESS_SPEC = dg.AssetCheckSpec(
        FRESHNESS_CHECK, asset=GOLD, blocking=False, partitions_def=daily_partitions,
        description=f"Partition D was frozen (first materialised) by {DEADLINE:%H:%M} America/New_York on D. Judged "
                    "every 5 minutes by gold_freshness_sensor for the last due market day; never part of a refresh run.")


@dg.multi_asset_check(specs=[FRESHNESS_SPEC], can_subset=True)
def gold_frozen_by_deadline(context) -> Iterator[dg.AssetCheckResult]:  # an AssetCheckExecutionContext
    """The freshness of one partition executed in a run (the check selected alone, tagged with the
    partition): the rule the sensor judges. A frozen partition is judged on its first
    materialisation's time alone; the current time only says how late a day not frozen yet is.
    (No resource: the refresh's own definitions, which carry this check, need none for it.)"""
    day = dt.date.fromisoformat(context.partition_key)
    now = dt.datetime.now(dt.timezone.utc)
    result = gold_freshness(context.instance, day)
    yield dg.AssetCheckResult(check_name=FRESHNESS_CHECK, passed=result.passed,
                              severity=dg.AssetCheckSeverity.WARN, metadata=_metadata(result, now))


@dg.sensor(
    name="gold_freshness_sensor",
    minimum_interval_seconds=300,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Checks that gold_answers of the last market day was frozen by 19:30 America/New_York and records "
                "the check gold_frozen_by_deadline on that partition; alerts once per missed day when alerting is "
                "configured (set LIVESEARCH_ALERT_WEBHOOK_URL and LIVESEARCH_ALERT_WEBHOOK_TOKEN, empty for none); "
                "until then every tick is skipped naming the variable.",
)
def gold_freshness_sensor(context: dg.SensorEvaluationContext, ops_clock: OpsClockResource,
                          alert_webhook: AlertWebhookResource) -> dg.SensorResult:
    now = ops_clock.current()
    missing = alert_webhook.missing_configuration()
    unconfigured = f"; no freshness alert is sent: {missing}" if missing is not None else ""
    day = due_partition(now)
    if day is None:
        return dg.SensorResult(skip_reason=f"no partition is due yet at {now.isoformat()}{unconfigured}")
    result = gold_freshness(context.instance, day)
    # Cursor: the last (partition, verdict) recorded, so a tick every 5 minutes records a verdict
    # and alerts once, yet records again when the verdict of the same day changes.
    recorded = f"{day.isoformat()}:{'passed' if result.passed else 'failed'}"
    if context.cursor == recorded:
        return dg.SensorResult(skip_reason=f"already recorded: {result.message(now)}{unconfigured}")
    evaluation = check_evaluation(result, now)
    if missing is not None:
        # Recorded all the same: the check is the record, the alert only a notification.
        return dg.SensorResult(asset_events=[evaluation], cursor=recorded,
                               skip_reason=f"recorded {FRESHNESS_CHECK} for {day}: {result.message(now)}{unconfigured}")
    alerted = ""
    if not result.passed:
        alert_webhook.send(Alert(kind="freshness", job="daily_refresh", partition=day.isoformat(),
                                 step=None, message=result.message(now), asset=GOLD.to_user_string(),
                                 run_id=result.frozen_by.run_id if result.frozen_by else None))
        alerted = "; freshness alert sent"
    # The reason says what the tick did: a SensorResult without one reads "returned an empty result".
    return dg.SensorResult(asset_events=[evaluation], cursor=recorded,
                           skip_reason=f"recorded {FRESHNESS_CHECK} for {day}: {result.message(now)}{alerted}")
