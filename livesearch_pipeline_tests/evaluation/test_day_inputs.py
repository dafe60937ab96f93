"""`AgentDay`: a day's agent-run inputs looked up once, a missing one refused by name before any run."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from livesearch_pipeline.core.program import PoolLoadError
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.evaluation.agent_run import run_registered_agent
from livesearch_pipeline.evaluation.opening import open_agent
from livesearch_pipeline.evaluation.registry import AgentSpec
from livesearch_pipeline.evaluation.day_inputs import AgentDay
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.core.fakes import MARKET_TOOLS, FakeToolClient
from livesearch_pipeline_tests.evaluation.eval_fixtures import DAY, agent_day, standard_cases, write_gold, write_served


def test_the_day_holds_every_path_of_its_runs_and_its_served_questions(tmp_path: Path) -> None:
    inputs = agent_day(tmp_path)
    paths = DataPaths(tmp_path)
    assert inputs.day == DAY
    assert inputs.served_path == paths.served_file(DAY)
    assert [q.qid for q in inputs.served] == sorted(c.served.qid for c in standard_cases())
    assert inputs.gold_dir == paths.gold and inputs.gold_path == SnapshotStore(paths.gold).path_for(DAY)
    assert inputs.web_dir == paths.web / DAY.isoformat()
    assert inputs.run_dir("stale") == paths.run_dir(DAY, "stale")
    assert inputs.llm_cache == paths.llm_cache
    assert AgentDay.build(paths, DAY, llm_cache=tmp_path / "elsewhere").llm_cache == tmp_path / "elsewhere"


def test_a_day_without_its_served_file_is_refused_naming_it(tmp_path: Path) -> None:
    cases = standard_cases()
    write_gold(tmp_path, [c.gold for c in cases])
    served = DataPaths(tmp_path).served_file(DAY)
    with pytest.raises(EvaluationError, match=re.escape(f"no served file for {DAY}: {served} does not exist")):
        AgentDay.build(DataPaths(tmp_path), DAY)


@pytest.mark.parametrize("missing", ["jsonl", "manifest"])
def test_a_day_without_its_gold_is_refused_naming_the_file_before_any_run(tmp_path: Path, missing: str) -> None:
    cases = standard_cases()
    write_served(tmp_path, cases)
    write_gold(tmp_path, [c.gold for c in cases])
    store = SnapshotStore(DataPaths(tmp_path).gold)
    gone = store.path_for(DAY) if missing == "jsonl" else store.manifest_path_for(DAY)
    gone.unlink()
    with pytest.raises(EvaluationError, match=re.escape(f"no gold snapshot for {DAY}: {gone} does not exist")):
        AgentDay.build(DataPaths(tmp_path), DAY)
    assert not DataPaths(tmp_path).runs.exists()  # refused before a run folder is made


def test_the_pool_is_loaded_only_when_the_oracle_opens(tmp_path: Path) -> None:
    loads: list[int] = []

    def load_pool() -> list:
        loads.append(1)
        return []

    cases = standard_cases()
    write_served(tmp_path, cases)
    write_gold(tmp_path, [c.gold for c in cases])
    inputs = AgentDay.build(DataPaths(tmp_path), DAY, load_pool=load_pool)

    async def open_oracle() -> None:
        async with open_agent(AgentSpec(name="oracle", kind="oracle"), inputs, client=FakeToolClient(MARKET_TOOLS)):
            pass

    assert loads == []
    asyncio.run(open_oracle())
    assert loads == [1]


def test_without_a_pool_the_default_loader_fails_only_for_the_oracle(tmp_path: Path) -> None:
    inputs = agent_day(tmp_path)  # a data root with no pool: the other agents need none
    with pytest.raises(PoolLoadError, match="no pool manifest"):
        asyncio.run(run_registered_agent(AgentSpec(name="oracle", kind="oracle"), inputs, FakeToolClient(MARKET_TOOLS)))
