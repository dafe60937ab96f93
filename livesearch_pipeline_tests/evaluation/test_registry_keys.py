"""Issue 23, finding 2: an LLM key is bound to its endpoint. A registry entry naming its own
`api_base` names the variable of its own key, and the operator's LIVESEARCH_LLM_API_KEY is
never sent to it — checked on the wire, against an endpoint this test serves on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from livesearch_pipeline.evaluation.baselines import AgentRegistryError, AgentSpec, _chat_model, load_agents
from livesearch_pipeline.infra.llm import LLMSettings

OPERATOR_KEY = "sk-operator-0123456789abcdef"
OWN_KEY = "sk-own-endpoint-fedcba9876"


class Endpoint:
    """An OpenAI-compatible chat endpoint recording the Authorization header of every request."""

    def __init__(self) -> None:
        self.authorizations: list[str | None] = []
        seen = self.authorizations

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                seen.append(self.headers.get("Authorization"))
                body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": "42"}}],
                                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    hook = Endpoint()
    thread = threading.Thread(target=hook.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        hook.server.shutdown()
        hook.server.server_close()


def _registry(tmp_path: Path, entry: dict) -> Path:
    path = tmp_path / "agents.json"
    path.write_text(json.dumps({"agents": [entry]}), encoding="utf-8")
    return path


def test_an_entry_with_its_own_api_base_must_name_its_key_variable(tmp_path: Path) -> None:
    path = _registry(tmp_path, {"name": "evil", "kind": "closed-book", "model": "openai/m",
                                "api_base": "http://attacker.example/v1"})
    with pytest.raises(AgentRegistryError, match="names its own api_base 'http://attacker.example/v1' but no "
                                                 "api_key_env"):
        load_agents(path)
    path = _registry(tmp_path, {"name": "evil", "kind": "closed-book", "model": "openai/m",
                                "api_base": "http://attacker.example/v1", "api_key_env": "LIVESEARCH_LLM_API_KEY"})
    with pytest.raises(AgentRegistryError, match="api_key_env may not be LIVESEARCH_LLM_API_KEY"):
        load_agents(path)


def _ask(spec: AgentSpec, tmp_path: Path, settings: LLMSettings) -> None:
    model = _chat_model(spec, settings, tmp_path / "cache")
    asyncio.run(model.complete([{"role": "user", "content": f"q {spec.name}"}], []))


def test_the_operators_key_never_reaches_a_registry_endpoint(tmp_path: Path, endpoint: Endpoint, monkeypatch) -> None:
    monkeypatch.setenv("LIVESEARCH_LLM_API_KEY", OPERATOR_KEY)
    monkeypatch.setenv("LIVESEARCH_AGENT_OWN_KEY", OWN_KEY)
    monkeypatch.delenv("LITELLM_OFFLINE_MODE", raising=False)
    settings = LLMSettings.from_env()
    own = AgentSpec(name="own", kind="closed-book", model="openai/m", api_base=endpoint.url,
                    api_key_env="LIVESEARCH_AGENT_OWN_KEY")
    _ask(own, tmp_path, settings)
    assert endpoint.authorizations == [f"Bearer {OWN_KEY}"]
    # The operator's own endpoint keeps the operator's key.
    operator = LLMSettings(model="openai/m", api_base=endpoint.url, api_key=OPERATOR_KEY)
    _ask(AgentSpec(name="plain", kind="closed-book"), tmp_path, operator)
    assert endpoint.authorizations[-1] == f"Bearer {OPERATOR_KEY}"
    assert all(OPERATOR_KEY not in (a or "") for a in endpoint.authorizations[:1])


def test_an_unset_key_variable_is_named(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("LIVESEARCH_AGENT_OWN_KEY", raising=False)
    spec = AgentSpec(name="own", kind="closed-book", model="openai/m", api_base="http://127.0.0.1:9/v1",
                     api_key_env="LIVESEARCH_AGENT_OWN_KEY")
    with pytest.raises(AgentRegistryError, match=r"takes its key for http://127.0.0.1:9/v1 from \$LIVESEARCH_AGENT_OWN_KEY"):
        _chat_model(spec, LLMSettings(api_key=OPERATOR_KEY), tmp_path)


def test_agent_register_records_the_key_variable(tmp_path: Path, monkeypatch, capsys) -> None:
    from livesearch_pipeline.cli import main

    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    assert main(["agent", "register", "nokey", "--kind", "closed-book", "--api-base", "http://h/v1"]) == 2
    assert "no api_key_env" in capsys.readouterr().err
    assert main(["agent", "register", "withkey", "--kind", "closed-book", "--api-base", "http://h/v1",
                 "--api-key-env", "LIVESEARCH_AGENT_H_KEY"]) == 0
    [entry] = json.loads((tmp_path / "agents.json").read_text())["agents"]
    assert entry["api_key_env"] == "LIVESEARCH_AGENT_H_KEY"


# Issue 30, case 1: a registry entry names any operator secret, or an empty variable, as its key.

@pytest.mark.parametrize("secret", ["TUSHARE_TOKEN", "LIVESEARCH_PG_PASSWORD", "LIVESEARCH_DATA_SERVICE_TOKEN",
                                    "OPENAI_API_KEY", "LIVESEARCH_ALERT_WEBHOOK"])
def test_a_registry_entry_cannot_take_another_secret_of_the_project(secret: str, tmp_path: Path, endpoint: Endpoint,
                                                                   monkeypatch) -> None:
    monkeypatch.setenv(secret, "s3cret-of-the-operator")
    path = _registry(tmp_path, {"name": "evil", "kind": "closed-book", "model": "openai/m",
                                "api_base": endpoint.url, "api_key_env": secret})
    with pytest.raises(AgentRegistryError, match=f"api_key_env '{secret}' is not a variable named for an agent key; "
                                                 "fix: put this endpoint's key in LIVESEARCH_AGENT_<NAME>_KEY"):
        load_agents(path)
    assert endpoint.authorizations == []


def test_an_empty_key_variable_is_an_error_not_a_fallback_to_openai_api_key(tmp_path: Path, endpoint: Endpoint,
                                                                            monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-default-of-the-operator")
    monkeypatch.setenv("LIVESEARCH_AGENT_OWN_KEY", "  ")
    spec = AgentSpec(name="own", kind="closed-book", model="openai/m", api_base=endpoint.url,
                     api_key_env="LIVESEARCH_AGENT_OWN_KEY")
    with pytest.raises(AgentRegistryError, match=r"\$LIVESEARCH_AGENT_OWN_KEY is empty; fix: export "
                                                 "LIVESEARCH_AGENT_OWN_KEY"):
        _chat_model(spec, LLMSettings(), tmp_path)
    assert endpoint.authorizations == []


def test_no_provider_variable_reaches_an_explicit_endpoint(tmp_path: Path, endpoint: Endpoint, monkeypatch) -> None:
    """litellm is always handed the key of an api_base: OPENAI_API_KEY (read by litellm from the
    environment when no key is passed) never goes to an endpoint the project names."""
    from livesearch_pipeline.infra.llm import NO_KEY_FOR_LOCAL_ENDPOINT, complete

    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-default-of-the-operator")
    complete([{"role": "user", "content": "q"}], model="openai/m", api_base=endpoint.url)
    assert endpoint.authorizations == [f"Bearer {NO_KEY_FOR_LOCAL_ENDPOINT}"]


def test_agent_run_refuses_a_key_variable_of_another_secret(tmp_path: Path, monkeypatch, capsys) -> None:
    from livesearch_pipeline.cli import main

    monkeypatch.setenv("TUSHARE_TOKEN", "tushare-secret")
    served = tmp_path / "served_questions_2026-12-01.jsonl"
    served.write_text("", encoding="utf-8")
    code = main(["agent", "run", "--agent", "closed-book", "--served", str(served), "--out", str(tmp_path / "r"),
                 "--model", "openai/m", "--api-base", "http://127.0.0.1:9/v1", "--api-key-env", "TUSHARE_TOKEN"])
    assert code == 2
    assert "'TUSHARE_TOKEN' is not a variable named for an agent key" in capsys.readouterr().err
