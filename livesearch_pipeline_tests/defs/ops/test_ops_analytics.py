"""The `analytics_store` asset derives D's Parquet partitions; its sensor follows the source jobs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.defs.ops.analytics import analytics_store, analytics_store_sensor
from livesearch_pipeline.defs.resources import StorageResource
from livesearch_pipeline.evaluation.store import partition_path, read_table, store_root
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.evaluation.test_store import DAYS, _day


def materialize(root: Path, day: dt.date, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    return dg.materialize([analytics_store], partition_key=day.isoformat(), instance=instance,
                          resources={"storage": StorageResource(root=str(root))}, raise_on_error=False)


def test_the_asset_writes_the_partitions_of_its_date(tmp_path: Path):
    _day(tmp_path, DAYS[0], 100.0)
    with dg.instance_for_test() as instance:
        result = materialize(tmp_path, DAYS[0], instance)
    assert result.success
    [event] = result.get_asset_materialization_events()
    assert event.materialization.metadata["rows"].value == {"gold": 5, "served": 4, "verdicts": 8}
    root = store_root(DataPaths(tmp_path))
    assert all(partition_path(root, t, DAYS[0]).is_file() for t in ("gold", "served", "verdicts"))
    assert read_table(root, "gold").num_rows == 5


def test_the_asset_refuses_a_date_without_gold(tmp_path: Path):
    _day(tmp_path, DAYS[0], 100.0)
    with dg.instance_for_test() as instance:
        result = materialize(tmp_path, DAYS[1], instance)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "no frozen gold snapshot of 2026-03-03" in failure.event_specific_data.error.to_string()


@pytest.mark.parametrize(("job", "tags", "expected"), [
    ("daily_refresh", {"dagster/partition": "2026-03-02"}, "2026-03-02"),
    ("daily_agent_runs", {"dagster/partition/date": "2026-03-03", "dagster/partition/agent": "m"}, "2026-03-03"),
    ("daily_evaluation", {"dagster/partition": "2026-03-02"}, None),
])
def test_the_sensor_requests_the_date_of_a_successful_source_run(job, tags, expected):
    with dg.instance_for_test() as instance:
        run = instance.create_run_for_job(dg.GraphDefinition(name=job).to_job(), tags=tags)
        run = run.with_status(dg.DagsterRunStatus.SUCCESS)
        event = dg.DagsterEvent(event_type_value="PIPELINE_SUCCESS", job_name=job)
        context = dg.build_run_status_sensor_context(sensor_name=analytics_store_sensor.name, dagster_event=event,
                                                     dagster_instance=instance, dagster_run=run)
        outcome = analytics_store_sensor(context)
    if expected is None:
        assert isinstance(outcome, dg.SkipReason)
    else:
        assert isinstance(outcome, dg.RunRequest)
        assert outcome.partition_key == expected and outcome.run_key == f"analytics:{run.run_id}"
