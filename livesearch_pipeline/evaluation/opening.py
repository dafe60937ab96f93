"""Opening an agent for a day: the agent a registry entry describes, named after it, with its
resources (the pool, the gold snapshots, D's offline web, a chat model on its endpoint and key)
open for the run.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, AsyncIterator

from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.evaluation.day_inputs import AgentDay
from livesearch_pipeline.evaluation.errors import AgentRegistryError
from livesearch_pipeline.evaluation.keys import agent_api_key
from livesearch_pipeline.evaluation.registry import AgentSpec
from livesearch_pipeline.infra.llm import LLMSettings

if TYPE_CHECKING:
    from pathlib import Path

    from livesearch_pipeline.evaluation.agents.base import Agent


def _limits(spec: AgentSpec):
    from livesearch_pipeline.evaluation.agents.loop import LoopLimits

    defaults = LoopLimits()
    return LoopLimits(max_steps=spec.max_steps or defaults.max_steps,
                      max_tokens=spec.max_tokens or defaults.max_tokens,
                      time_limit_s=spec.time_limit_s or defaults.time_limit_s)


def _chat_model(spec: AgentSpec, llm: LLMSettings, llm_cache: Path):
    from livesearch_pipeline.evaluation.agents.chat import LitellmChatModel

    if spec.api_base is not None:
        # Its own endpoint, its own key (never the operator's): `AgentSpec.api_key_env`.
        return LitellmChatModel(model=spec.model or LitellmChatModel.from_settings(llm).model, api_base=spec.api_base,
                                api_key=agent_api_key(spec), cache_dir=llm_cache)
    return LitellmChatModel.from_settings(llm, model=spec.model, cache_dir=llm_cache)


@contextlib.asynccontextmanager
async def open_agent(spec: AgentSpec, inputs: AgentDay, *, client: ToolClient,
                     llm: LLMSettings | None = None) -> AsyncIterator[Agent]:
    """The agent `spec` describes, named after its registry entry, its resources open for the run.

    Everything it reads of the day comes from `inputs` (one lookup, one error: `AgentDay`): the
    oracle's checked pool (loaded only here, for the oracle), the gold snapshots the stale agent
    answers with, D's offline web for search-read and the navigator, the LLM cache of the LLM kinds. `client` is
    the data service (used by the oracle's programs and the plugin agent's tools). `llm` (default:
    the LIVESEARCH_LLM_* variables, read now) serves the LLM kinds.
    """
    llm = llm if llm is not None else LLMSettings.from_env()
    day = inputs.day
    if spec.kind == "oracle":
        from livesearch_pipeline.evaluation.agents.oracle import OracleAgent

        yield OracleAgent(pool=inputs.load_pool(), client=client, as_of=day, name=spec.name)
    elif spec.kind == "stale":
        from livesearch_pipeline.evaluation.agents.stale import StaleAgent

        stale = StaleAgent.from_store(SnapshotStore(inputs.gold_dir), day)
        yield StaleAgent(as_of=stale.as_of, gold_date=stale.gold_date, gold=stale.gold, name=spec.name)
    elif spec.kind == "closed-book":
        from livesearch_pipeline.evaluation.agents.closed_book import ClosedBookAgent

        yield ClosedBookAgent(chat_model=_chat_model(spec, llm, inputs.llm_cache), as_of=day, name=spec.name)
    elif spec.kind == "search-read":
        from livesearch_pipeline.evaluation.agents.search_read import open_search_read_agent

        # Without a searxng_url it searches the offline web of D (the web_corpus asset of D).
        async with open_search_read_agent(web_dir=inputs.web_dir, day=day, name=spec.name,
                                          searxng_url=spec.searxng_url, concurrency=spec.concurrency) as agent:
            yield agent
    elif spec.kind == "navigator":
        from livesearch_pipeline.evaluation.agents.navigator import open_navigator

        # Like search-read, over D's offline web unless the registry names a SearXNG URL.
        async with open_navigator(web_dir=inputs.web_dir, day=day, name=spec.name, read_budget=spec.read_budget,
                                  search_budget=spec.search_budget, searxng_url=spec.searxng_url,
                                  concurrency=spec.concurrency) as agent:
            yield agent
    elif spec.kind == "web":
        import httpx

        from livesearch_pipeline.evaluation.agents.web import WebAgent, WebTools, WebToolsConfig

        if not spec.searxng_url:
            raise AgentRegistryError(f"web agent {spec.name!r} has no searxng_url in the registry")
        async with httpx.AsyncClient() as http:
            tools = WebTools(WebToolsConfig(searxng_url=spec.searxng_url), http)
            yield WebAgent(chat_model=_chat_model(spec, llm, inputs.llm_cache), tools=tools, as_of=day,
                           limits=_limits(spec), name=spec.name, budget=spec.budget())
    else:
        from livesearch_pipeline.evaluation.agents.plugin import PluginAgent

        yield PluginAgent(chat_model=_chat_model(spec, llm, inputs.llm_cache), source=client, as_of=day,
                          limits=_limits(spec), services=frozenset(spec.services) if spec.services else None,
                          name=spec.name)
