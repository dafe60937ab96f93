"""Which key an agent's own endpoint gets: the binding of a registry entry's `api_base` to the
environment variable naming its key (`check_key_binding`, checked when an `AgentSpec` is made), and
reading that key when the agent opens (`agent_api_key`). The operator's LIVESEARCH_LLM_API_KEY
belongs to the operator's endpoint and is never sent to a registry endpoint.
"""

from __future__ import annotations

from typing import Protocol

from livesearch_pipeline.evaluation.errors import AgentRegistryError
from livesearch_pipeline.infra.llm import agent_key_from_env, check_agent_key_env


class KeyedAgent(Protocol):
    """What the key of an agent's endpoint depends on (an `AgentSpec` of evaluation/registry.py)."""

    @property
    def name(self) -> str: ...
    @property
    def api_base(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...

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


def agent_api_key(spec: KeyedAgent, environ=None) -> str | None:
    """The key of the agent's own endpoint, read now from `spec.api_key_env` (None: the operator's
    endpoint and key). AgentRegistryError naming a variable unset, empty or not an agent key's."""
    if spec.api_key_env is None:
        return None
    try:
        return agent_key_from_env(spec.api_key_env, owner=f"agent {spec.name!r} takes its key for {spec.api_base} "
                                  f"from ${spec.api_key_env}", environ=environ)
    except ValueError as exc:
        raise AgentRegistryError(str(exc)) from None
