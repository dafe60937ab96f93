"""The LLM resource: one model/endpoint/key for the pipeline and one cache, `<data>/cache/llm`,
shared by the Dagster assets and the command line (no network: litellm mock replies and a
scripted OpenAI-compatible server on 127.0.0.1)."""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import anyio
import dagster as dg
import pytest

from livesearch_pipeline.construction.verbalize import llm_verbalize
from livesearch_pipeline.defs.resources import LLMResource, StorageResource
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.construction.builders import candidate
from livesearch_pipeline_tests.evaluation.llm_fakes import scripted_chat_server

MODEL = "openai/verbalizer-test"
KEY = "sk-resource-secret-5678"
GOOD = {
    "keep": True, "reason": "answerable from exchange data",
    "question": "What was the closing price of Kweichow Moutai (600519.SH) on the most recent trading day, "
                "in CNY to 2 decimals?",
    "question_zh": "贵州茅台（600519.SH）最近一个交易日的收盘价是多少元？保留2位小数。",
    "match": {"rule": "approx", "abs_tol": 0.005, "rel_tol": None, "unit": "CNY", "decimals": 2},
}

def _verbalize_in_a_run(llm: LLMResource, root: Path, times: int = 1) -> list:
    """Materialise an asset that verbalizes one candidate `times` times through the LLM resource."""
    outcomes: list = []

    @dg.asset
    def verbalize(llm: LLMResource, storage: StorageResource) -> None:
        config = llm.verbalizer(storage.paths())
        for _ in range(times):
            outcomes.append(anyio.run(llm_verbalize, [candidate()], config))

    result = dg.materialize([verbalize], resources={"llm": llm, "storage": StorageResource(root=str(root))},
                            instance=dg.DagsterInstance.ephemeral())
    assert result.success
    return outcomes


def test_a_mock_reply_is_verbalized_through_the_resource_and_never_cached(tmp_path: Path):
    ((kept, rejects),) = _verbalize_in_a_run(LLMResource(model=MODEL, mock_response=json.dumps(GOOD)), tmp_path)
    assert rejects == [] and [v.verbalizer for v in kept] == [f"litellm:{MODEL}"]
    assert kept[0].question == GOOD["question"]
    # A canned reply must never be served to a real request later.
    assert not DataPaths(tmp_path).llm_cache.exists()


def test_without_a_model_the_resource_gives_no_verbalizer(tmp_path: Path):
    assert LLMResource().verbalizer(DataPaths(tmp_path)) is None
    assert LLMResource(api_base="http://127.0.0.1:9/v1").verbalizer(DataPaths(tmp_path)) is None


def test_real_requests_are_cached_once_under_data_cache_llm_without_the_key(tmp_path: Path):
    with scripted_chat_server(json.dumps(GOOD)) as server:
        llm = LLMResource(model=MODEL, api_base=server.api_base, api_key=KEY)
        (first, second) = _verbalize_in_a_run(llm, tmp_path, times=2)
    assert len(server.requests) == 1  # the second verbalization was served from the cache
    assert first[0][0].question == second[0][0].question == GOOD["question"]
    entries = sorted(DataPaths(tmp_path).llm_cache.rglob("*.json"))
    assert len(entries) == 1 and entries[0].parent.parent == tmp_path / "cache" / "llm"
    assert KEY not in entries[0].read_text(encoding="utf-8")
    # One cache: nothing else under the data root holds LLM replies.
    assert [p.relative_to(tmp_path) for p in tmp_path.rglob("*.json")] == [entries[0].relative_to(tmp_path)]


def test_the_command_line_uses_the_same_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import argparse

    from livesearch_pipeline.evaluation.agents import cli as agents_cli
    from livesearch_pipeline.evaluation.opening import open_agent
    from livesearch_pipeline.evaluation.registry import AgentSpec
    from livesearch_pipeline.evaluation.commands import default_llm_cache_dir
    from livesearch_pipeline_tests.evaluation.eval_fixtures import agent_day

    root = tmp_path / "data"
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(root))
    monkeypatch.setenv("LIVESEARCH_LLM_MODEL", MODEL)
    one_cache = LLMResource().cache_path(StorageResource().paths())
    assert one_cache == root.resolve() / "cache" / "llm"
    # livesearch evaluate --judge-model …
    assert default_llm_cache_dir() == one_cache
    # livesearch agent run --agent closed-book …
    args = argparse.Namespace(model=None, api_base=None, llm_cache=None)
    assert agents_cli._chat_model(args).cache_dir == one_cache

    # a registered LLM agent run by agent_runs / livesearch run
    async def registered() -> Path:
        async with open_agent(AgentSpec(name="cb", kind="closed-book", model=MODEL), agent_day(root.resolve()),
                              client=None) as agent:
            return agent.chat_model.cache_dir

    assert anyio.run(registered) == one_cache
