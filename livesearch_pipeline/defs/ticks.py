"""Sensor ticks that say what they did: no tick of ours reads "Sensor function returned an empty result".

Dagster reports that message for a tick whose function returned nothing, which a run-status
sensor does on every tick without a new run of the watched status, and which a `SensorResult`
carrying only asset events or dynamic-partition requests gets too. `ExplainedRunStatusSensor`
replaces it with the sensor's own idle reason; plain sensors return a `SkipReason`, or a
`SensorResult` whose `skip_reason` says what it recorded or added.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
from dagster._core.definitions.sensor_definition import (
    SensorExecutionData,
    resolve_jobs_from_targets_for_with_attributes,
)

EMPTY_TICK = "Sensor function returned an empty result"


class ExplainedRunStatusSensor(dg.RunStatusSensorDefinition):
    """A run-status sensor whose ticks without a new run of the watched status are skipped with
    `idle_reason` instead of Dagster's "Sensor function returned an empty result". A tick that
    handled a run says what its function returned for it (a run request, or its SkipReason)."""

    def __init__(self, *, idle_reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.idle_reason = idle_reason
        self._init_kwargs = kwargs

    def evaluate_tick(self, context: dg.SensorEvaluationContext) -> SensorExecutionData:
        data = super().evaluate_tick(context)
        if data.skip_message == EMPTY_TICK and not data.run_requests and not data.dagster_run_reactions:
            return SensorExecutionData(skip_message=self.idle_reason, cursor=data.cursor, log_key=data.log_key)
        return data

    def with_attributes(self, *, jobs=None, metadata=None) -> "ExplainedRunStatusSensor":
        """A copy with other target jobs or metadata that keeps explaining its ticks (Dagster's own
        copy would be a plain RunStatusSensorDefinition)."""
        _, job, jobs_ = resolve_jobs_from_targets_for_with_attributes(self, jobs)
        kwargs = {**self._init_kwargs, "request_job": job, "request_jobs": jobs_}
        if metadata is not None:
            kwargs["metadata"] = metadata
        return ExplainedRunStatusSensor(idle_reason=self.idle_reason, **kwargs)
