"""Sharded gold refresh: the fan-out over shards freezes the same bytes as one shard, once."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.core.executor import ExecutionStats
from livesearch_pipeline.core.models import GoldAnswer
from livesearch_pipeline.core.program import load_pool
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.defs.refresh import checks
from livesearch_pipeline.defs.refresh.assets import (
    RefreshConfig,
    RefreshPlan,
    ShardResult,
    assemble_answers,
    daily_refresh_assets,
    gold_answers,
    point_in_time_fields,
    served_programs,
    shard_count,
    split_into_shards,
)
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.fixtures import write_small_pool

CLOCK = dt.date(2026, 3, 16)
DAY = dt.date(2026, 3, 13)  # a Friday on which every calendar traded and no pool instrument was suspended
GOLD_CHECKS = [checks.gold_checks]


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    write_small_pool(tmp_path, CLOCK)
    return tmp_path


def refresh(root: Path, shards: int | None, *, with_checks: bool = False, raise_on_error: bool = True):
    return dg.materialize(
        [daily_refresh_assets, *(GOLD_CHECKS if with_checks else [])],
        partition_key=DAY.isoformat(),
        resources={"data_service": DataServiceResource(clock=CLOCK.isoformat()),
                   "storage": StorageResource(root=str(root))},
        run_config=dg.RunConfig(ops={"gold_answers": RefreshConfig(shards=shards)}),
        raise_on_error=raise_on_error,
    )


def gold_metadata(result) -> dict:
    (materialization,) = [m for m in result.asset_materializations_for_node("gold_answers") if m.asset_key == gold_answers]
    return {key: value.value for key, value in materialization.metadata.items()}


# --------------------------------------------------------------------------- pure split / assembly


def test_split_is_contiguous_in_entity_then_qid_order_balanced_and_never_empty(data_root: Path):
    questions = load_pool(data_root / "pool" / "questions.jsonl")
    ordered = [q.qid for q in sorted(questions, key=lambda q: (q.entity, q.qid))]
    for shards in (1, 2, 3, 7):
        slices = split_into_shards(list(reversed(questions)), shards)
        assert len(slices) == shards
        assert [q.qid for s in slices for q in s] == ordered
        assert max(map(len, slices)) - min(map(len, slices)) <= 1
    assert [len(s) for s in split_into_shards(questions[:3], 5)] == [1, 1, 1]
    with pytest.raises(ValueError, match="shards must be >= 1"):
        split_into_shards(questions, 0)


def test_steps_refuse_a_pool_rebuilt_during_the_refresh(data_root: Path):
    from livesearch_pipeline.core.pool import read_manifest

    version = read_manifest(data_root / "pool").version
    served = served_programs(DataPaths(data_root), version)
    assert [q.qid for q in served] == sorted(q.qid for q in load_pool(data_root / "pool" / "questions.jsonl"))
    with pytest.raises(dg.Failure, match=f"changed during the refresh: planned on version pool-older, now {version}"):
        served_programs(DataPaths(data_root), "pool-older")


def _answer(qid: str, match) -> GoldAnswer:
    return GoldAnswer(qid=qid, date=DAY, status="ok", answer="1", value=1, match=match)


def test_assembly_rejects_missing_repeated_or_unplanned_answers_and_mixed_services(data_root: Path):
    questions = sorted(load_pool(data_root / "pool" / "questions.jsonl"), key=lambda q: q.qid)[:4]
    plan = RefreshPlan(day=DAY, pool_version="v", pool_sha256="0" * 64, qids=tuple(q.qid for q in questions),
                       shard_count=2, max_withdrawn_share=0.05, planned_at=0.0)
    answers = [_answer(q.qid, q.match) for q in questions]

    def shard(index: int, part: list[GoldAnswer], service: str = "svc") -> ShardResult:
        return ShardResult(index=index, answers=tuple(part), data_service=service, stats=ExecutionStats(programs=len(part)))

    assembled, identity = assemble_answers(plan, [shard(1, answers[2:]), shard(0, answers[:2])])
    assert [a.qid for a in assembled] == [q.qid for q in questions] and identity == "svc"
    with pytest.raises(ValueError, match=r"expected results of shards 0..1, got \[0\]"):
        assemble_answers(plan, [shard(0, answers)])
    with pytest.raises(ValueError, match="missing"):
        assemble_answers(plan, [shard(0, answers[:1]), shard(1, answers[2:])])
    with pytest.raises(ValueError, match=f"repeated \\['{answers[1].qid}'\\]"):
        assemble_answers(plan, [shard(0, answers[:2]), shard(1, answers[1:])])
    with pytest.raises(ValueError, match="different data services"):
        assemble_answers(plan, [shard(0, answers[:2]), shard(1, answers[2:], "other")])


# --------------------------------------------------------------------------- through Dagster


@pytest.mark.slow
def test_fan_out_freezes_the_bytes_of_a_single_shard_once(tmp_path: Path):
    single, fanned = tmp_path / "single", tmp_path / "fanned"
    for root in (single, fanned):
        write_small_pool(root, CLOCK)
    refresh(single, shards=1)
    result = refresh(fanned, shards=3, with_checks=True)

    store_single, store_fanned = SnapshotStore(single / "gold"), SnapshotStore(fanned / "gold")
    assert store_fanned.path_for(DAY).read_bytes() == store_single.path_for(DAY).read_bytes()
    assert store_fanned.verify(DAY).sha256 == store_single.verify(DAY).sha256

    metadata = gold_metadata(result)
    assert metadata["shards"] == 3 and metadata["created"] is True
    programs = len(load_pool(fanned / "pool" / "questions.jsonl"))
    assert sum(metadata["programs_by_shard"]) == sum(metadata["counts_by_status"].values()) == programs
    assert metadata["sha256"] == store_fanned.verify(DAY).sha256
    assert metadata["pool_version"].startswith("pool-") and f"clock={DAY.isoformat()}" in metadata["data_service"]
    for key in ("counts_by_tier", "counts_by_asset_class", "code_version", "preview", "cutoff", "withdrawn"):
        assert key in metadata
    (materialization,) = [m for m in result.asset_materializations_for_node("gold_answers") if m.asset_key == gold_answers]
    assert materialization.tags["dagster/data_version"] == metadata["sha256"]
    # Shards travel through the IO manager; the snapshot is written by the store alone.
    handled = {e.step_key for e in result.all_events if e.event_type_value == "HANDLED_OUTPUT"}
    assert "gold_answers.freeze_gold_snapshot" not in handled
    assert {"gold_answers.plan_gold_shards", "gold_answers.execute_gold_shard[shard_002]"} <= handled
    evaluations = [e.event_specific_data for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert sorted(e.check_name for e in evaluations if e.passed) == sorted(k.name for c in GOLD_CHECKS for k in c.check_keys)

    # A different shard count re-renders the same bytes: a no-op on the frozen snapshot.
    before = store_fanned.manifest_path_for(DAY).read_bytes()
    again = gold_metadata(refresh(fanned, shards=2))
    assert again["created"] is False and again["shards"] == 2
    assert store_fanned.manifest_path_for(DAY).read_bytes() == before


@pytest.mark.slow
def test_differing_snapshot_fails_the_run_naming_both_hashes(data_root: Path):
    questions = load_pool(data_root / "pool" / "questions.jsonl")
    store = SnapshotStore(data_root / "gold")
    planted = store.write(DAY, [GoldAnswer(qid=q.qid, date=DAY, status="empty", match=q.match) for q in questions],
                          pool_version="planted", pool_sha256="0" * 64, data_service="planted", code_version="planted",
                          max_withdrawn_share=1.0, cutoff=dt.datetime(2026, 3, 16, 23, 59, tzinfo=dt.timezone.utc))
    result = refresh(data_root, shards=2, raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert failure.step_key == "gold_answers.freeze_gold_snapshot"
    error = failure.event_specific_data.error.to_string()
    named = re.search(r"already exists with sha256 ([0-9a-f]{64}); this run renders sha256 ([0-9a-f]{64})", error)
    assert named is not None, error
    assert named.group(1) == planted.manifest.sha256 and named.group(2) != planted.manifest.sha256
    assert store.verify(DAY).sha256 == planted.manifest.sha256  # the frozen snapshot is untouched


def test_shard_count_below_one_fails_before_any_work(data_root: Path):
    result = refresh(data_root, shards=0, raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert failure.step_key == "gold_answers.plan_gold_shards"
    assert "`shards` must be >= 1" in failure.event_specific_data.error.to_string()
    assert not (data_root / "gold").exists() or not SnapshotStore(data_root / "gold").exists(DAY)


def test_shard_count_defaults_to_one_per_parallel_step():
    assert shard_count(None, "execute_in_process_executor") == 1 and shard_count(None, "in_process") == 1
    assert shard_count(None, "refresh_multiprocess_executor") == 2 and shard_count(None, "multiprocess") == 2
    assert shard_count(3, "in_process") == 3
    with pytest.raises(dg.Failure, match="`shards` must be >= 1, got 0"):
        shard_count(0, "multiprocess")


@pytest.mark.slow
def test_in_process_refresh_runs_one_shard_unless_told(data_root: Path):
    metadata = gold_metadata(refresh(data_root, shards=None))
    assert metadata["shards"] == 1
    assert metadata["programs_by_shard"] == [len(load_pool(data_root / "pool" / "questions.jsonl"))]


def test_a_provider_without_a_clock_records_its_vintage_and_a_late_backfill():
    """Point in time: a clocked service states D's cut-off; a provider without one states when it
    was asked, and whether that was after D's cut-off (recomputed gold)."""
    def result(retrieved_at):
        return ShardResult(index=0, answers=(), data_service="svc", stats=ExecutionStats(), retrieved_at=retrieved_at)

    new_york = ZoneInfo("America/New_York")
    assert point_in_time_fields(DAY, [result(None)]) == {"cutoff": dt.datetime(2026, 3, 13, 23, 59, 59, tzinfo=new_york)}
    live = dt.datetime(2026, 3, 13, 18, 35, tzinfo=new_york)  # the 18:30 schedule's run
    assert point_in_time_fields(DAY, [result(live)]) == {"vintage": live, "late_backfill": False}
    next_week = dt.datetime(2026, 3, 20, 9, 0, tzinfo=new_york)
    assert point_in_time_fields(DAY, [result(live), result(next_week)]) == {"vintage": next_week, "late_backfill": True}
    with pytest.raises(ValueError, match="some shards ran as of D's cut-off and others without a clock"):
        point_in_time_fields(DAY, [result(None), result(live)])


def test_the_resource_refuses_a_point_in_time_it_cannot_give():
    """Only the embedded market has a clock to set; asking another provider for D's cut-off fails."""
    import asyncio

    async def open_url():
        async with DataServiceResource(kind="url", url="http://127.0.0.1:9/mcp").open(as_of=DAY):
            pass

    assert DataServiceResource().point_in_time and not DataServiceResource(kind="tushare").point_in_time
    with pytest.raises(ValueError, match="kind 'url' has no point-in-time clock; it cannot be queried as of 2026-03-13"):
        asyncio.run(open_url())
