"""Agent runs partitioned by date × agent, materialised in-process on a small real pool.

Gold for D-1 and D is frozen by the real `daily_refresh` job; the baselines run as the
`(D, oracle)` and `(D, stale)` partitions of `agent_runs`; the `daily_evaluation` job ranks them.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.core.models import GoldAnswer, SnapshotManifest
from livesearch_pipeline.core.snapshot import SnapshotStore, scoring_qids
from livesearch_pipeline.defs.evaluation.assets import agent_runs, leaderboard, stale_gold_audit
from livesearch_pipeline.defs.evaluation.jobs import agent_runs_job, daily_evaluation_job
from livesearch_pipeline.defs.evaluation.sensors import agent_registry_sensor
from livesearch_pipeline.defs.refresh.assets import daily_refresh_assets
from livesearch_pipeline.defs.refresh.schedules import daily_refresh_job
from livesearch_pipeline.defs.resources import DataServiceResource, LLMResource, StorageResource
from livesearch_pipeline.evaluation.registry import AGENT_PARTITIONS_NAME, AgentRegistryError, AgentSpec, find_agent, load_agents, register_agent, registry_path
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.evaluation.inputs import load_served
from livesearch_pipeline.evaluation.leaderboard import CHART_CSV, CHART_PNG, LEADERBOARD_JSON, Leaderboard
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.fixtures import write_small_pool

DAY = dt.date(2026, 3, 3)  # a Tuesday: every exchange trades on it and on the Monday before
PREVIOUS = dt.date(2026, 3, 2)


@dataclass(frozen=True)
class Day:
    root: Path
    paths: DataPaths
    definitions: dg.Definitions
    instance: dg.DagsterInstance


def _definitions(root: Path) -> dg.Definitions:
    return dg.Definitions(
        assets=[daily_refresh_assets, agent_runs, leaderboard, stale_gold_audit],
        jobs=[daily_refresh_job, agent_runs_job, daily_evaluation_job],
        sensors=[agent_registry_sensor],
        resources={"data_service": DataServiceResource(clock=DAY.isoformat()), "storage": StorageResource(root=str(root)),
                   "llm": LLMResource()},
    )


def make_day(root: Path) -> Day:
    """A data root with the small pool and gold frozen for PREVIOUS and DAY by `daily_refresh`."""
    write_small_pool(root, DAY)
    definitions = _definitions(root)
    instance = dg.DagsterInstance.ephemeral()
    for day in (PREVIOUS, DAY):
        assert definitions.resolve_job_def("daily_refresh").execute_in_process(
            partition_key=day.isoformat(), instance=instance).success
    instance.add_dynamic_partitions(AGENT_PARTITIONS_NAME, ["oracle", "stale"])
    return Day(root, DataPaths(root.resolve()), definitions, instance)


def copy_day(source: Day, root: Path) -> Day:
    """The pool, served questions and gold of `source` under a new root, with no agent run yet."""
    for part in ("pool", "construction", "served", "gold"):
        shutil.copytree(source.paths.root / part, root / part)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(AGENT_PARTITIONS_NAME, ["oracle", "stale"])
    return Day(root, DataPaths(root.resolve()), _definitions(root), instance)


def run_agent_partition(day: Day, date: dt.date, agent: str) -> dg.ExecuteInProcessResult:
    key = dg.MultiPartitionKey({"date": date.isoformat(), "agent": agent})
    return day.definitions.resolve_job_def("daily_agent_runs").execute_in_process(
        partition_key=key, instance=day.instance, raise_on_error=False)


def run_daily_evaluation(day: Day, date: dt.date = DAY) -> dg.ExecuteInProcessResult:
    return day.definitions.resolve_job_def("daily_evaluation").execute_in_process(
        partition_key=date.isoformat(), instance=day.instance, raise_on_error=False)


def materialization_metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey(asset)]
    return event.materialization.metadata


def failure_messages(result: dg.ExecuteInProcessResult) -> str:
    return "\n".join(str(e.step_failure_data.error) for e in result.all_events if e.is_step_failure)


# Every Dagster test below shares one refreshed and evaluated day (about 20 s of CPU to build).
@pytest.fixture(scope="module")
def evaluated_day(tmp_path_factory: pytest.TempPathFactory) -> Day:
    day = make_day(tmp_path_factory.mktemp("evaluated-day"))
    for agent in ("oracle", "stale"):
        result = run_agent_partition(day, DAY, agent)
        assert result.success, failure_messages(result)
    return day


# --------------------------------------------------------------------------- registry (pure)


def test_registry_holds_the_baselines_and_refuses_conflicts(tmp_path: Path) -> None:
    path = tmp_path / "agents.json"
    assert [s.name for s in load_agents(path)] == ["oracle", "stale", "search-read", "navigator-6", "navigator-20"]
    web = AgentSpec(name="gpt-web", kind="web", model="openai/gpt-4o-mini", searxng_url="http://127.0.0.1:8888")
    assert register_agent(path, web) is True
    assert register_agent(path, web) is False  # identical: idempotent
    with pytest.raises(AgentRegistryError, match="another configuration"):
        register_agent(path, web.model_copy(update={"model": "openai/gpt-4o"}))
    with pytest.raises(AgentRegistryError, match="built-in baseline"):
        register_agent(path, AgentSpec(name="oracle", kind="closed-book"))
    assert find_agent(load_agents(path), "gpt-web") == web
    with pytest.raises(AgentRegistryError, match="'ghost' is not registered .*oracle, stale, search-read, navigator-6, navigator-20, gpt-web"):
        find_agent(load_agents(path), "ghost")
    path.write_text(json.dumps({"agents": [{"name": "Bad Name", "kind": "web"}]}))
    with pytest.raises(AgentRegistryError, match="invalid agent registry"):
        load_agents(path)


# --------------------------------------------------------------------------- Dagster


@pytest.mark.slow
def test_partitions_are_date_by_agent_and_the_leaderboard_maps_on_date(evaluated_day: Day) -> None:
    graph = evaluated_day.definitions.resolve_asset_graph()
    runs_def = graph.get(dg.AssetKey("agent_runs")).partitions_def
    assert isinstance(runs_def, dg.MultiPartitionsDefinition)
    assert {d.name for d in runs_def.partitions_defs} == {"date", "agent"}
    board_node = graph.get(dg.AssetKey("leaderboard"))
    mapping = board_node.partition_mappings[dg.AssetKey("agent_runs")]
    assert isinstance(mapping, dg.MultiToSingleDimensionPartitionMapping)
    assert mapping.partition_dimension_name == "date"
    assert set(evaluated_day.instance.get_dynamic_partitions(AGENT_PARTITIONS_NAME)) == {"oracle", "stale"}


@pytest.mark.slow
def test_baseline_partitions_are_ranked_on_one_qid_set(evaluated_day: Day) -> None:
    day = evaluated_day
    # D-1's oracle run, copied among D's runs: same questions, other gold date, so never ranked with D.
    assert run_agent_partition(day, PREVIOUS, "oracle").success
    shutil.copytree(day.paths.run_dir(PREVIOUS, "oracle"), day.paths.run_dir(DAY, "oracle-of-previous-day"))
    result = run_daily_evaluation(day)
    assert result.success, failure_messages(result)

    board = Leaderboard.model_validate_json((day.paths.runs / DAY.isoformat() / "leaderboard" / LEADERBOARD_JSON).read_bytes())
    # Ranked on D's scoring set: the served qids minus the ones D's manifest withdraws.
    manifest = SnapshotStore(day.paths.gold).verify(DAY)
    served_hash = qid_set_hash(scoring_qids((q.qid for q in load_served(day.paths.served_file(DAY))), manifest))
    assert (board.gold_date, board.qid_set_hash) == (DAY.isoformat(), served_hash)
    assert [(r.rank, r.agent) for r in board.rows] == [(1, "oracle"), (2, "stale")]
    oracle, stale = board.rows
    assert oracle.accuracy == 1.0
    assert oracle.correct == oracle.n == len(load_served(day.paths.served_file(DAY))) - len(manifest.withdrawn)
    assert stale.accuracy < 1.0 and stale.wilson_high < 1.0
    [unranked] = board.unranked
    assert unranked.run_dir.endswith("oracle-of-previous-day") and f"gold date {PREVIOUS}" in unranked.reason

    metadata = materialization_metadata(result, "leaderboard")
    assert metadata["qid_set_hash"].value == served_hash and metadata["ranked"].value == 2
    assert "| 1 | oracle |" in metadata["leaderboard"].value
    # The chart is in the UI as an inline PNG, byte-identical to the file beside the leaderboard.
    png_path = day.paths.runs / DAY.isoformat() / "leaderboard" / CHART_PNG
    prefix = "![accuracy by visibility level and tier](data:image/png;base64,"
    chart_markdown = metadata["chart"].value
    assert chart_markdown.startswith(prefix) and chart_markdown.endswith(")")
    assert base64.b64decode(chart_markdown[len(prefix):-1]) == png_path.read_bytes()
    assert png_path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and png_path.stat().st_size > 10_000
    assert str(png_path) in metadata["files"].value and (png_path.parent / CHART_CSV).is_file()
    oracle_metadata = materialization_metadata(run_agent_partition(day, DAY, "oracle"), "agent_runs")
    assert oracle_metadata["accuracy"].value == 1.0 and oracle_metadata["qid_set_hash"].value == served_hash

    audit = materialization_metadata(result, "stale_gold_audit")
    assert audit["previous_date"].value == PREVIOUS.isoformat()
    by_class = audit["by_refresh_class"].value
    assert by_class["daily"]["failure_rate"] > 0.5


@pytest.mark.slow
def test_an_unregistered_agent_partition_fails_naming_the_registry(evaluated_day: Day) -> None:
    evaluated_day.instance.add_dynamic_partitions(AGENT_PARTITIONS_NAME, ["ghost"])
    result = run_agent_partition(evaluated_day, DAY, "ghost")
    assert not result.success
    assert "'ghost' is not registered" in failure_messages(result)
    assert not evaluated_day.paths.run_dir(DAY, "ghost").exists()


def test_the_sensor_adds_a_partition_per_registered_agent(tmp_path: Path) -> None:
    storage = StorageResource(root=str(tmp_path))
    register_agent(registry_path(storage.paths()), AgentSpec(name="qwen-closed", kind="closed-book", model="openai/qwen"))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(AGENT_PARTITIONS_NAME, ["oracle"])
    context = dg.build_sensor_context(instance=instance, resources={"storage": storage})
    result = agent_registry_sensor(context)
    [request] = result.dynamic_partitions_requests
    assert (request.partitions_def_name, list(request.partition_keys)) == (AGENT_PARTITIONS_NAME, ["stale", "search-read", "navigator-6", "navigator-20", "qwen-closed"])


def _tamper_one_answer(store: SnapshotStore, day: dt.date) -> str:
    """Change one ok answer of D's gold and re-seal the manifest, as a corrupted refresh would."""
    path = store.path_for(day)
    answers = [GoldAnswer.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()]
    index = next(i for i, a in enumerate(answers) if a.status == "ok" and isinstance(a.value, float))
    tampered = answers[index].model_copy(update={"value": answers[index].value * 3 + 7,
                                                 "answer": f"{answers[index].value * 3 + 7:.4f}"})
    answers[index] = tampered
    data = "".join(a.model_dump_json() + "\n" for a in answers).encode("utf-8")
    path.write_bytes(data)
    manifest_path = store.manifest_path_for(day)
    manifest = SnapshotManifest.model_validate_json(manifest_path.read_bytes())
    manifest_path.write_text(manifest.model_copy(update={"sha256": hashlib.sha256(data).hexdigest()}).model_dump_json())
    return tampered.qid


@pytest.mark.slow
def test_the_oracle_partition_fails_the_run_when_gold_is_tampered(evaluated_day: Day, tmp_path: Path) -> None:
    day = copy_day(evaluated_day, tmp_path)
    _tamper_one_answer(SnapshotStore(day.paths.gold), DAY)
    result = run_agent_partition(day, DAY, "oracle")
    assert not result.success
    message = failure_messages(result)
    assert f"gold self-test failed for {DAY}" in message and "not 1.0" in message
    # The stale partition is not a self-test: the same tampered day scores it without failing.
    assert run_agent_partition(day, DAY, "stale").success


@pytest.mark.slow
def test_an_agent_run_logs_its_progress_as_lines_of_its_step(evaluated_day: Day, tmp_path: Path) -> None:
    """The command line prints a step's own INFO lines below it (infra/run_console.py)."""
    day = copy_day(evaluated_day, tmp_path)
    result = run_agent_partition(day, DAY, "stale")
    assert result.success, failure_messages(result)
    logged = [e.user_message for e in day.instance.all_logs(result.run_id)
              if e.dagster_event is None and e.step_key == "agent_runs"]
    served = len(load_served(day.paths.served_file(DAY)))
    progress = [m for m in logged if m.startswith("stale: ")]
    assert 1 <= len(progress) <= 10 and progress[-1] == f"stale: {served:,} of {served:,} answered"
    counts = [int(m.split()[1].replace(",", "")) for m in progress]
    assert counts == sorted(counts)


@pytest.mark.slow
def test_an_agent_run_without_its_days_gold_fails_naming_it_before_running(evaluated_day: Day, tmp_path: Path) -> None:
    day = copy_day(evaluated_day, tmp_path)
    gold = SnapshotStore(day.paths.gold).path_for(DAY)
    gold.unlink()
    result = run_agent_partition(day, DAY, "stale")
    assert not result.success
    assert f"no gold snapshot for {DAY}: {gold} does not exist" in failure_messages(result)
    assert not day.paths.run_dir(DAY, "stale").exists()  # the agent never opened
