"""Issue 23, finding 3: one writer per run folder and per `livesearch run` day, and a failure inside
an exception group named by its innermost cause.

The first writer is a real second process holding the real lock (`run_folder_lock`,
`day_run_lock`); the second writer is the code under test, in this process or as a real
`livesearch run` subprocess."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import pytest

from livesearch_pipeline.core.errors import describe_exception
from livesearch_pipeline.core.locks import WriterLockedError, writer_lock
from livesearch_pipeline.defs.resources import DataServiceResource
from livesearch_pipeline.evaluation.agents.base import PREDICTIONS_FILE
from livesearch_pipeline.evaluation.agent_run import run_registered_agent
from livesearch_pipeline.evaluation.registry import AgentSpec
from livesearch_pipeline.evaluation.day_inputs import AgentDay
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.core.fakes import MARKET_TOOLS, FakeToolClient
from livesearch_pipeline_tests.evaluation.agents_fakes import write_served
from livesearch_pipeline_tests.evaluation.test_agents_baselines import DAY, POOL, _served, _write_gold

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from livesearch_pipeline.settings import DataPaths
    kind, root, day = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    if kind == "folder":
        from livesearch_pipeline.evaluation.agent_run import run_folder_lock
        lock = run_folder_lock(root / "runs" / day / "oracle")
    else:
        import datetime as dt
        from livesearch_pipeline.pipeline_commands import day_run_lock
        lock = day_run_lock(DataPaths(root), dt.date.fromisoformat(day))
    with lock:
        print("held", flush=True)
        sys.stdin.read()  # until the test closes our stdin
""")


@pytest.fixture
def holder(tmp_path: Path) -> Iterator:
    processes = []

    def start(kind: str) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-c", HOLDER, kind, str(tmp_path), DAY.isoformat()],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        processes.append(process)
        assert process.stdout.readline().strip() == "held"
        return process

    yield start
    for process in processes:
        process.stdin.close()
        process.wait(timeout=30)


def _day(root: Path) -> DataPaths:
    paths = DataPaths(root)
    _write_gold(paths.gold, DAY)
    paths.served.mkdir(parents=True, exist_ok=True)
    write_served(paths.served_file(DAY), _served(POOL))
    return paths


def _run_oracle(paths: DataPaths):
    return asyncio.run(run_registered_agent(AgentSpec(name="oracle", kind="oracle"),
                                            AgentDay.build(paths, DAY, load_pool=lambda: POOL),
                                            FakeToolClient(MARKET_TOOLS)))


def test_a_second_writer_of_a_run_folder_is_refused_naming_the_first(tmp_path: Path, holder) -> None:
    paths = _day(tmp_path)
    first = holder("folder")
    with pytest.raises(WriterLockedError, match=rf"run folder .*oracle is already being written by pid {first.pid} "):
        _run_oracle(paths)
    assert not (paths.run_dir(DAY, "oracle") / PREDICTIONS_FILE).exists()  # nothing appended
    first.stdin.close()
    first.wait(timeout=30)
    result = _run_oracle(paths)  # the lock dies with its holder
    assert result.summary.accuracy == 1.0 and result.summary.n_predictions == len(POOL)


def test_the_lock_is_reentrant_in_its_process_and_released_after(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    with writer_lock(lock, "x"):
        with writer_lock(lock, "x"):
            pass
    with writer_lock(lock, "x"):
        pass


def test_a_second_livesearch_run_of_a_day_is_refused_naming_the_first(tmp_path: Path, holder) -> None:
    first = holder("day")
    env = {**os.environ, "LIVESEARCH_DATA_DIR": str(tmp_path), "DAGSTER_HOME": str(tmp_path / "dagster_home")}
    second = subprocess.run([sys.executable, "-m", "livesearch_pipeline.cli", "run", "--date", DAY.isoformat()],
                            env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode != 0
    last = second.stderr.strip().splitlines()[-1]
    assert last.startswith(f"livesearch run: error: livesearch run of {DAY} in {tmp_path} is already being written "
                           f"by pid {first.pid} "), second.stderr
    assert not (tmp_path / "pool").exists()  # refused before anything ran


def test_a_cli_failure_names_the_innermost_cause_of_an_exception_group(monkeypatch, capsys) -> None:
    from livesearch_pipeline.cli import main
    from livesearch_pipeline.evaluation import commands

    def fails(args) -> int:
        try:
            raise ValueError("runs/2026-11-27/oracle/predictions.jsonl:3: duplicate qid ls-1")
        except ValueError as exc:
            raise ExceptionGroup("unhandled errors in a TaskGroup", [ExceptionGroup("inner", [exc])]) from None

    monkeypatch.setattr(commands, "_leaderboard", fails)
    assert main(["leaderboard", "--runs", "x", "--out", "y"]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == "livesearch leaderboard: error: ValueError: runs/2026-11-27/oracle/predictions.jsonl:3: duplicate qid ls-1"
    group = ExceptionGroup("g", [KeyError("a"), RuntimeError("b")])
    assert describe_exception(group) == "KeyError: 'a' (and 1 other failure(s) in the same task group)"


def test_the_agent_runs_asset_names_the_lock_holder_not_the_task_group(tmp_path: Path, holder) -> None:
    """The run folder's lock is refused inside the data service's task group; the step's error (and
    so the UI and the CLI's last line) names the cause, not "unhandled errors in a TaskGroup"."""
    import dagster as dg

    from livesearch_pipeline.construction.pipeline import TABLES, write_catalog
    from livesearch_pipeline.construction.pool import write_pool
    from livesearch_pipeline.defs.construction.materialize import step_failures
    from livesearch_pipeline.defs.evaluation.assets import agent_runs
    from livesearch_pipeline.defs.resources import DataServiceResource, LLMResource, StorageResource
    from livesearch_pipeline_tests.core.sample_programs import CATALOG

    paths = _day(tmp_path)
    catalog = paths.construction / TABLES["catalog"]
    write_catalog(catalog, CATALOG)
    write_pool(paths.pool, POOL, data_service="fake-service", catalog_bytes=catalog.read_bytes())
    first = holder("folder")
    key = dg.MultiPartitionKey({"date": DAY.isoformat(), "agent": "oracle"})
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("agents", ["oracle"])
        result = dg.materialize([agent_runs], partition_key=key, instance=instance, raise_on_error=False,
                                resources={"data_service": DataServiceResource(clock=DAY.isoformat()),
                                           "storage": StorageResource(root=str(tmp_path)), "llm": LLMResource(model="")},
                                selection=[agent_runs])
    assert not result.success
    [cause] = step_failures(result)
    assert "TaskGroup" not in cause and f"is already being written by pid {first.pid}" in cause, cause
    assert dt.date.fromisoformat(key.keys_by_dimension["date"]) == DAY



def test_any_step_on_the_data_service_names_the_cause_not_the_task_group() -> None:
    """What the CLI's last line reads (`step_failures`) names a failure raised inside the data
    service's client, whose task group would otherwise report "unhandled errors in a TaskGroup"."""
    import dagster as dg

    from livesearch_pipeline.defs.construction.materialize import step_failures

    @dg.asset
    def grouped(data_service: DataServiceResource) -> None:
        async def main() -> None:
            async with data_service.open() as client:
                await client.call_tool("daily", {"ts_code": "600580.SH", "limit": 1})
                raise ValueError("predictions.jsonl:3: duplicate qid ls-1")

        asyncio.run(main())

    result = dg.materialize([grouped], raise_on_error=False,
                            resources={"data_service": DataServiceResource(clock=DAY.isoformat())})
    [cause] = step_failures(result)
    assert cause == "grouped: ValueError: predictions.jsonl:3: duplicate qid ls-1", cause
