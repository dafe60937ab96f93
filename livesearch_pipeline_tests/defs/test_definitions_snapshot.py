"""A snapshot of the definitions the UI and the daemon load: asset keys (with group, partitions,
upstream keys, automation), asset checks, jobs, schedules, sensors, partitions and resources.

An unintended change to the asset graph (a renamed key, a lost dependency, a check dropped, a
schedule's cron edited) fails here with the difference; an intended one is recorded by
regenerating the snapshot and committing it with the change:

    LIVESEARCH_UPDATE_SNAPSHOT=1 .venv/bin/python -m pytest livesearch_pipeline_tests/defs/test_definitions_snapshot.py

(`make snapshot` does the same.) Review the diff of `definitions_snapshot.json` like code.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import dagster as dg

SNAPSHOT = Path(__file__).with_name("definitions_snapshot.json")
UPDATE_ENV = "LIVESEARCH_UPDATE_SNAPSHOT"


def _partitions(partitions_def: dg.PartitionsDefinition | None) -> Any:
    if partitions_def is None:
        return None
    if isinstance(partitions_def, dg.TimeWindowPartitionsDefinition):
        return {"kind": "time_window", "cron": partitions_def.cron_schedule, "timezone": partitions_def.timezone,
                "start": partitions_def.start.isoformat(), "format": partitions_def.fmt,
                "end_offset": partitions_def.end_offset,
                "end": partitions_def.end.isoformat() if partitions_def.end else None,
                "exclusions": [_exclusion(e, partitions_def.timezone) for e in partitions_def.exclusions or ()]}
    if isinstance(partitions_def, dg.DynamicPartitionsDefinition):
        return {"kind": "dynamic", "name": partitions_def.name}
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return {"kind": "multi", "dimensions": {d.name: _partitions(d.partitions_def)
                                                for d in partitions_def.partitions_defs}}
    if isinstance(partitions_def, dg.StaticPartitionsDefinition):
        return {"kind": "static", "keys": partitions_def.get_partition_keys()}
    return {"kind": type(partitions_def).__name__, "description": str(partitions_def)}


def _exclusion(exclusion: Any, timezone: str) -> str:
    """A cron string as it is; an excluded instant as its date in the partitions' timezone."""
    if isinstance(exclusion, str):
        return exclusion
    from zoneinfo import ZoneInfo
    import datetime as dt

    return dt.datetime.fromtimestamp(exclusion.timestamp, ZoneInfo(timezone)).date().isoformat()


def definitions_snapshot(defs: dg.Definitions) -> dict[str, Any]:
    """What the snapshot records, as plain JSON values in a stable order."""
    graph = defs.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "partitions": _partitions(node.partitions_def),
            "upstream": sorted(k.to_user_string() for k in node.parent_keys),
            "automation": str(node.automation_condition.get_label() or type(node.automation_condition).__name__)
            if node.automation_condition is not None else None,
            "materializable": node.is_materializable,
            "owners": list(node.owners),
        }
    checks = {}
    for check_key in sorted(graph.asset_check_keys, key=lambda k: (k.asset_key.to_user_string(), k.name)):
        spec = graph.get_check_spec(check_key)
        checks[f"{check_key.asset_key.to_user_string()}:{check_key.name}"] = {"blocking": spec.blocking}
    repository = defs.get_repository_def()
    jobs = {}
    for job in sorted(repository.get_all_jobs(), key=lambda j: j.name):
        if job.name.startswith("__"):
            continue  # Dagster's implicit asset jobs
        jobs[job.name] = {
            "partitions": _partitions(job.partitions_def),
            "assets": sorted(k.to_user_string() for k in job.asset_layer.executable_asset_keys),
            "executor": job.executor_def.name,
        }
    schedules = {
        s.name: {"cron": s.cron_schedule, "timezone": s.execution_timezone, "job": s.job_name,
                 "default_status": s.default_status.value}
        for s in sorted(repository.schedule_defs, key=lambda s: s.name)
    }
    sensors = {
        s.name: {"type": s.sensor_type.value, "jobs": sorted(t.job_name for t in s.targets), "default_status": s.default_status.value,
                 "minimum_interval_seconds": s.minimum_interval_seconds}
        for s in sorted(repository.sensor_defs, key=lambda s: s.name)
    }
    return {
        "assets": assets,
        "asset_checks": checks,
        "jobs": jobs,
        "schedules": schedules,
        "sensors": sensors,
        "resources": sorted(defs.resources or {}),
    }


def _dump(snapshot: dict[str, Any]) -> str:
    return json.dumps(snapshot, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_the_definitions_match_their_snapshot():
    from livesearch_pipeline.definitions import defs

    current = _dump(definitions_snapshot(defs))
    if os.environ.get(UPDATE_ENV):
        SNAPSHOT.write_text(current, encoding="utf-8")
    recorded = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    if current != recorded:
        diff = "".join(difflib.unified_diff(recorded.splitlines(True), current.splitlines(True),
                                            "definitions_snapshot.json (recorded)", "the definitions (now)"))
        raise AssertionError(
            f"the definitions differ from {SNAPSHOT.name}:\n{diff}\n"
            f"If the change is intended, regenerate the snapshot and commit it with the change:\n"
            f"  make snapshot\n"
            f"(that is: {UPDATE_ENV}=1 .venv/bin/python -m pytest livesearch_pipeline_tests/defs/test_definitions_snapshot.py)"
        )


def test_the_snapshot_sees_a_changed_graph():
    """The snapshot is sensitive to what it claims to record: a dependency, a partitioning, a check."""
    from livesearch_pipeline.definitions import defs

    before = definitions_snapshot(defs)

    @dg.asset(partitions_def=dg.DailyPartitionsDefinition(start_date="2026-01-01", timezone="UTC"))
    def extra_asset(gold_answers) -> None:  # noqa: ARG001
        return None

    @dg.asset_check(asset=extra_asset, blocking=True)
    def extra_check() -> dg.AssetCheckResult:
        return dg.AssetCheckResult(passed=True)

    after = definitions_snapshot(dg.Definitions.merge(defs, dg.Definitions(assets=[extra_asset],
                                                                         asset_checks=[extra_check])))
    assert set(after["assets"]) - set(before["assets"]) == {"extra_asset"}
    assert after["assets"]["extra_asset"]["upstream"] == ["gold_answers"]
    assert after["assets"]["extra_asset"]["partitions"]["kind"] == "time_window"
    assert after["asset_checks"]["extra_asset:extra_check"] == {"blocking": True}
