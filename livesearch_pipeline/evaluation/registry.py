"""The registry of the agents the pipeline runs on a day: the built-in baselines plus agents
registered by users.

The registry is `<data>/agents.json` (`{"agents": [AgentSpec, ...]}`); the baselines `oracle`
(runs the gold programs itself: the gold self-test), `stale` (answers with the previous
snapshot's gold), `search-read`, `navigator-6` and `navigator-20` (deterministic web agents over
D's offline web; the navigators at budgets of 6 and 20 page reads and searches per question) are
always present and need no entry. Each registered name is one partition of the Dagster
`agents` dimension. Shared by the Dagster evaluation assets, `livesearch agent register|list` and
`livesearch run`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from livesearch_pipeline.core.models import ReadBudget
from livesearch_pipeline.core.snapshot import write_atomic
from livesearch_pipeline.evaluation.errors import AgentRegistryError
from livesearch_pipeline.evaluation.keys import check_key_binding
from livesearch_pipeline.settings import DataPaths

__all__ = ["AGENT_PARTITIONS_NAME", "BASELINES", "BUILTIN_AGENTS", "LLM_KINDS", "REGISTRY_FILE", "AgentKind",
           "AgentRegistryError", "AgentSpec", "agents_without_partition", "find_agent", "load_agents",
           "register_agent", "registry_path"]

# The navigator baselines of `make run`, at two declared budgets (page reads and searches per
# question), each part of its name: a score is made at a budget.
NAVIGATOR_BASELINE = "navigator-6"
NAVIGATOR_BUDGET = 6
NAVIGATOR_WIDE_BASELINE = "navigator-20"
NAVIGATOR_WIDE_BUDGET = 20
BASELINES = ("oracle", "stale", "search-read", NAVIGATOR_BASELINE, NAVIGATOR_WIDE_BASELINE)
# Kinds that read the web and so declare a budget (`read_budget`, `search_budget`).
WEB_KINDS = ("search-read", "navigator", "web")
# The Dagster dynamic partitions definition holding one key per registered agent.
AGENT_PARTITIONS_NAME = "agents"
REGISTRY_FILE = "agents.json"
AgentKind = Literal["oracle", "stale", "search-read", "navigator", "closed-book", "web", "plugin"]
LLM_KINDS = ("closed-book", "web", "plugin")


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
    # A web agent's budget per question (navigator, web): distinct pages it may read and searches
    # it may run (None: no limit); the run's metadata declares it and the board shows it.
    read_budget: int | None = Field(default=None, ge=1)
    search_budget: int | None = Field(default=None, ge=1)
    # The environment variable holding the key of `api_base` (required with it): a registry entry
    # never receives the operator's LIVESEARCH_LLM_API_KEY, which belongs to the operator's endpoint.
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Z_][A-Z0-9_]{0,127}$")

    @model_validator(mode="after")
    def _key_bound_to_endpoint(self) -> AgentSpec:
        check_key_binding(self.name, self.api_base, self.api_key_env)
        return self

    @model_validator(mode="after")
    def _budget_for_web_agents(self) -> AgentSpec:
        if (self.read_budget is not None or self.search_budget is not None) and self.kind not in ("navigator", "web"):
            raise ValueError(f"agent {self.name!r}: read_budget and search_budget are a web agent's budget "
                             f"(navigator, web), not options of the {self.kind} kind")
        return self

    def budget(self) -> ReadBudget:
        """The budget its runs declare: pages and searches per question."""
        return ReadBudget(max_reads=self.read_budget, max_searches=self.search_budget)


class _RegistryFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agents: list[AgentSpec]


BUILTIN_AGENTS = (AgentSpec(name="oracle", kind="oracle"), AgentSpec(name="stale", kind="stale"),
                  AgentSpec(name="search-read", kind="search-read"),
                  AgentSpec(name=NAVIGATOR_BASELINE, kind="navigator", read_budget=NAVIGATOR_BUDGET,
                            search_budget=NAVIGATOR_BUDGET),
                  AgentSpec(name=NAVIGATOR_WIDE_BASELINE, kind="navigator", read_budget=NAVIGATOR_WIDE_BUDGET,
                            search_budget=NAVIGATOR_WIDE_BUDGET))


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


def registered_names(paths: DataPaths) -> set[str]:
    """Every registered agent's name, baselines included: the names whose runs the pipeline writes into
    `runs/<D>/<name>` (the leaderboard ranks that folder's run under the name). An unreadable registry
    gives the baselines only: the board of the day must not depend on it."""
    try:
        return {spec.name for spec in load_agents(registry_path(paths))}
    except AgentRegistryError:
        return set(BASELINES)


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
