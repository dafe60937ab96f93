"""Which key an agent's own endpoint gets: the binding of a registry entry's `api_base` to the
environment variable naming its key (`check_key_binding`, checked when an `AgentSpec` is made), and
reading that key when the agent opens (`agent_api_key`). The operator's LIVESEARCH_LLM_API_KEY
belongs to the operator's endpoint and is never sent to a registry endpoint.
"""

from __future__ import annotations

from typing import Protocol

from livesearch_pipeline.evaluation.errors import AgentRegistryError


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
    if api_base and not api_key_env:
        raise ValueError(f"agent {name!r} names its own api_base {api_base!r} but no api_key_env: name the "
                         "environment variable holding that endpoint's key (set it empty for an endpoint "
                         f"without a key); the operator's {OPERATOR_KEY_ENV} is never sent to a registry endpoint")
    if api_key_env and not api_base:
        raise ValueError(f"agent {name!r}: api_key_env {api_key_env} is the key of an api_base; set api_base too")


def agent_api_key(spec: KeyedAgent, environ=None) -> str | None:
    """The key of the agent's own endpoint, read now from `spec.api_key_env` (None: the operator's
    endpoint and key, or an endpoint without a key). AgentRegistryError naming an unset variable."""
    import os

    if spec.api_key_env is None:
        return None
    env = os.environ if environ is None else environ
    if spec.api_key_env not in env:
        raise AgentRegistryError(f"agent {spec.name!r} takes its key for {spec.api_base} from ${spec.api_key_env}, "
                                 "which is not set (set it empty for an endpoint without a key)")
    return env[spec.api_key_env].strip() or None
