"""The agents the pipeline runs on a day: the built-in baselines plus agents registered by users.

The registry is `<data>/agents.json` (`{"agents": [AgentSpec, ...]}`); the baselines `oracle`
(runs the gold programs itself: the gold self-test) and `stale` (answers with the previous
snapshot's gold) are always present and need no entry. Each registered name is one partition
of the Dagster `agents` dimension. Running one agent for D writes
`<data>/runs/<D>/<name>/{predictions.jsonl, predictions.meta.json, verdicts.jsonl, summary.json}`.

Shared by the Dagster evaluation assets, `livesearch agent register|list` and `livesearch run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, AsyncIterator, Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.core.progress import Report
from livesearch_pipeline.core.snapshot import SnapshotStore, write_atomic
from livesearch_pipeline.evaluation.day_inputs import AgentDay
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.inputs import evaluation_inputs
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.evaluation.summary import EvaluationSummary
from livesearch_pipeline.infra.llm import LLMSettings, agent_key_from_env, check_agent_key_env
from livesearch_pipeline.settings import DataPaths

if TYPE_CHECKING:
    from livesearch_pipeline.evaluation.agents.base import Agent

BASELINES = ("oracle", "stale", "search-read")
# The Dagster dynamic partitions definition holding one key per registered agent.
AGENT_PARTITIONS_NAME = "agents"
REGISTRY_FILE = "agents.json"
AgentKind = Literal["oracle", "stale", "search-read", "closed-book", "web", "plugin"]
LLM_KINDS = ("closed-book", "web", "plugin")


class AgentRegistryError(ValueError):
    """The registry file or a registration is invalid (bad name, duplicate, unknown agent)."""


class AgentSpec(BaseModel):
    """One registered agent: its partition key (`name`), its kind and the kind's options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    kind: AgentKind
    model: str | None = None
    api_base: str | None = None
    searxng_url: str | None = None
    services: tuple[str, ...] | None = None
    concurrency: int = Field(default=4, ge=1)
    max_steps: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    time_limit_s: float | None = Field(default=None, gt=0)
    # The environment variable holding the key of `api_base` (required with it): a registry entry
    # never receives the operator's LIVESEARCH_LLM_API_KEY, which belongs to the operator's endpoint.
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Z_][A-Z0-9_]{0,127}$")

    @model_validator(mode="after")
    def _key_bound_to_endpoint(self) -> AgentSpec:
        check_key_binding(self.name, self.api_base, self.api_key_env)
        return self


OPERATOR_KEY_ENV = "LIVESEARCH_LLM_API_KEY"


def check_key_binding(name: str, api_base: str | None, api_key_env: str | None) -> None:
    """ValueError unless an agent with its own `api_base` names its own key variable."""
    if api_key_env == OPERATOR_KEY_ENV:
        raise ValueError(f"agent {name!r}: api_key_env may not be {OPERATOR_KEY_ENV}, the operator's key of "
                         "LIVESEARCH_LLM_API_BASE; name the variable holding this endpoint's own key")
    if api_key_env:
        check_agent_key_env(api_key_env, owner=f"agent {name!r}")
    if api_base and not api_key_env:
        raise ValueError(f"agent {name!r} names its own api_base {api_base!r} but no api_key_env: name the "
                         "LIVESEARCH_AGENT_<NAME>_KEY variable holding that endpoint's key (any placeholder for "
                         f"an endpoint without a key); the operator's {OPERATOR_KEY_ENV} is never sent to a registry endpoint")
    if api_key_env and not api_base:
        raise ValueError(f"agent {name!r}: api_key_env {api_key_env} is the key of an api_base; set api_base too")


def agent_api_key(spec: AgentSpec, environ=None) -> str | None:
    """The key of the agent's own endpoint, read now from `spec.api_key_env` (None: the operator's
    endpoint and key). AgentRegistryError naming a variable unset, empty or not an agent key's."""
    if spec.api_key_env is None:
        return None
    try:
        return agent_key_from_env(spec.api_key_env, owner=f"agent {spec.name!r} takes its key for {spec.api_base} "
                                  f"from ${spec.api_key_env}", environ=environ)
    except ValueError as exc:
        raise AgentRegistryError(str(exc)) from None


class _RegistryFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agents: list[AgentSpec]


BUILTIN_AGENTS = (AgentSpec(name="oracle", kind="oracle"), AgentSpec(name="stale", kind="stale"),
                  AgentSpec(name="search-read", kind="search-read"))


def registry_path(paths: DataPaths) -> Path:
    return paths.root / REGISTRY_FILE


def _read_registered(path: Path) -> list[AgentSpec]:
    if not path.exists():
        return []
    try:
        registered = _RegistryFile.model_validate_json(path.read_bytes()).agents
    except ValidationError as exc:
        raise AgentRegistryError(f"invalid agent registry {path}: {exc}") from exc
    seen: set[str] = set()
    for spec in registered:
        if spec.name in BASELINES:
            raise AgentRegistryError(f"{path}: {spec.name!r} is a built-in baseline and cannot be registered")
        if spec.name in seen:
            raise AgentRegistryError(f"{path}: agent {spec.name!r} is registered twice")
        seen.add(spec.name)
    return registered


def load_agents(path: Path) -> list[AgentSpec]:
    """The baselines followed by the agents registered in `path` (absent file: baselines only)."""
    return [*BUILTIN_AGENTS, *_read_registered(path)]


def agents_without_partition(paths: DataPaths, partitioned: Iterable[str]) -> list[str]:
    """Registered agents (baselines included) that have no `agents` partition yet, in registry order."""
    known = set(partitioned)
    return [spec.name for spec in load_agents(registry_path(paths)) if spec.name not in known]


def find_agent(specs: Sequence[AgentSpec], name: str) -> AgentSpec:
    for spec in specs:
        if spec.name == name:
            return spec
    known = ", ".join(s.name for s in specs)
    raise AgentRegistryError(f"agent {name!r} is not registered (known: {known}); "
                             "add it with `livesearch agent register`")


def register_agent(path: Path, spec: AgentSpec) -> bool:
    """Add `spec` to the registry file; False when the identical spec is already there.

    A different spec under an existing name is refused: the name's earlier runs were made by
    the old configuration, and a partition key must keep meaning one agent.
    """
    if spec.name in BASELINES:
        raise AgentRegistryError(f"{spec.name!r} is a built-in baseline and cannot be registered")
    registered = _read_registered(path)
    for existing in registered:
        if existing.name == spec.name:
            if existing == spec:
                return False
            raise AgentRegistryError(
                f"agent {spec.name!r} is already registered in {path} with another configuration "
                f"({existing.model_dump(exclude_defaults=True)}); choose a new name")
    document = {"agents": [s.model_dump(mode="json", exclude_defaults=True) for s in [*registered, spec]]}
    write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return True


@dataclass(frozen=True)
class AgentRunResult:
    agent: str
    run_dir: Path
    summary: EvaluationSummary


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


def _judge(llm: LLMSettings, llm_cache: Path):
    """The judge `livesearch evaluate` would use (the settings' judge model), None for deterministic only."""
    from livesearch_pipeline.evaluation.judge import judge_from_settings

    return judge_from_settings(llm.judge_model, cache_dir=llm_cache, api_base=llm.api_base, api_key=llm.api_key)


@contextlib.asynccontextmanager
async def open_agent(spec: AgentSpec, inputs: AgentDay, *, client: ToolClient,
                     llm: LLMSettings | None = None) -> AsyncIterator[Agent]:
    """The agent `spec` describes, named after its registry entry, its resources open for the run.

    Everything it reads of the day comes from `inputs` (one lookup, one error: `AgentDay`): the
    oracle's checked pool (loaded only here, for the oracle), the gold snapshots the stale agent
    answers with, D's offline web for search-read, the LLM cache of the LLM kinds. `client` is
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
    elif spec.kind == "web":
        import httpx

        from livesearch_pipeline.evaluation.agents.web import WebAgent, WebTools, WebToolsConfig

        if not spec.searxng_url:
            raise AgentRegistryError(f"web agent {spec.name!r} has no searxng_url in the registry")
        async with httpx.AsyncClient() as http:
            tools = WebTools(WebToolsConfig(searxng_url=spec.searxng_url), http)
            yield WebAgent(chat_model=_chat_model(spec, llm, inputs.llm_cache), tools=tools, as_of=day,
                           limits=_limits(spec), name=spec.name)
    else:
        from livesearch_pipeline.evaluation.agents.plugin import PluginAgent

        yield PluginAgent(chat_model=_chat_model(spec, llm, inputs.llm_cache), source=client, as_of=day,
                          limits=_limits(spec), services=frozenset(spec.services) if spec.services else None,
                          name=spec.name)


async def run_registered_agent(spec: AgentSpec, inputs: AgentDay, client: ToolClient, *,
                               llm: LLMSettings | None = None,
                               progress: Report = None) -> AgentRunResult:
    """Put D's served questions to one agent (resuming an interrupted run) and score it on D's gold.

    `inputs` is the day, built once by its caller (`AgentDay.build`: the served file, the gold,
    the run folder, the LLM cache), so that the run, its scoring and its record of the web read
    the same files and a missing one fails before the agent opens. `llm`: the LLM settings of the
    LLM kinds and of their judge (Dagster passes its LLM resource's; default: the environment,
    read now). `progress` receives a line about every 10% of the questions answered (`run_agent`)."""
    from livesearch_pipeline.evaluation.agents.base import run_agent

    out_dir = inputs.run_dir(spec.name)
    llm = llm if llm is not None else LLMSettings.from_env()
    # One writer per run folder: a second run of this agent and day is refused, naming the first.
    with run_folder_lock(out_dir):
        async with open_agent(spec, inputs, client=client, llm=llm) as agent:
            await run_agent(agent, inputs.served, out_dir, date=inputs.day, concurrency=spec.concurrency,
                            progress=progress)
        judge = _judge(llm, inputs.llm_cache) if spec.kind in LLM_KINDS else None
        predictions_path = out_dir / "predictions.jsonl"
        result = await asyncio.to_thread(evaluate, inputs.served_path, inputs.gold_path, predictions_path,
                                         judge=judge)
        web = searched_web(spec, inputs.web_dir)
        if web is not None:
            result = dataclasses.replace(result, summary=result.summary.model_copy(update={"web": web}))
        write_evaluation(result, out_dir, inputs=evaluation_inputs(inputs.served_path, inputs.gold_path,
                                                                   predictions_path))
    return AgentRunResult(spec.name, out_dir, result.summary)


def searched_web(spec: AgentSpec, web_dir: Path) -> dict[str, str] | None:
    """The identity of the offline web in `web_dir` (the day's, `AgentDay.web_dir`) a search-read run
    searched; for an agent pointed at its own SearXNG (web kinds), the URL, marked unchecked; None
    for agents that search no web."""
    if spec.searxng_url:
        return {"searxng_url": spec.searxng_url, "scope": "external search backend (identity not checked)"}
    if spec.kind != "search-read":
        return None
    from livesearch_pipeline.web.index import WebIndex
    from livesearch_pipeline.web.server import web_identity

    return web_identity(WebIndex(web_dir))


def run_folder_lock(out_dir: Path):
    """The writer lock of a run folder (core.locks): held while predictions and verdicts are written."""
    from livesearch_pipeline.core.locks import LOCK_FILE, writer_lock

    return writer_lock(Path(out_dir) / LOCK_FILE, f"run folder {out_dir}")
