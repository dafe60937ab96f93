"""Fail fast on configuration (issue 21): an error every question would hit stops the run at the
first question with one line naming the fix; a local OpenAI-compatible endpoint needs no key."""

from __future__ import annotations

import datetime as dt
import json
import socket
import time
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.evaluation.agents.base import (
    PREDICTIONS_FILE,
    TRAJECTORIES_FILE,
    AgentConfigurationError,
    run_agent,
)
from livesearch_pipeline.evaluation.agents.chat import LitellmChatModel
from livesearch_pipeline.evaluation.agents.closed_book import ClosedBookAgent
from livesearch_pipeline.infra.llm import RetryPolicy
from livesearch_pipeline_tests.evaluation.agents_fakes import served_question, write_served
from livesearch_pipeline_tests.evaluation.llm_fakes import scripted_chat_server

DAY = dt.date(2026, 11, 27)
QUESTIONS = [served_question(f"What was the close of stock {n} on the most recent trading day?") for n in range(6)]
PATIENT = RetryPolicy(attempts=5, base_delay_s=1.0, max_delay_s=30.0)  # the default: 15 s of backoff


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _agent(model: str, api_base: str | None) -> ClosedBookAgent:
    return ClosedBookAgent(chat_model=LitellmChatModel(model=model, api_base=api_base, retry=PATIENT), as_of=DAY)


def _run(agent: ClosedBookAgent, out: Path, concurrency: int = 1):
    import asyncio

    return asyncio.run(run_agent(agent, QUESTIONS, out, date=DAY, concurrency=concurrency))


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "LIVESEARCH_LLM_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_a_local_openai_compatible_endpoint_works_without_a_key(tmp_path: Path) -> None:
    replies = [f"Final answer: {n}.00 CNY" for n in range(len(QUESTIONS))]
    with scripted_chat_server(*replies) as server:
        report = _run(_agent("openai/local-model", server.api_base), tmp_path, concurrency=2)
    assert report.errors == 0 and report.asked == len(QUESTIONS)
    predictions = _lines(tmp_path / PREDICTIONS_FILE)
    assert all(p["answer"].endswith("CNY") and p["lang"] == "en" for p in predictions)
    usage = predictions[0]["usage"]
    assert (usage["model_calls"], usage["input_tokens"], usage["output_tokens"]) == (1, 11, 7)
    assert "cost_usd" not in usage  # a local endpoint: no price is known, recorded as absent (null)
    trajectories = _lines(tmp_path / TRAJECTORIES_FILE)
    assert {t["qid"] for t in trajectories} == {q.qid for q in QUESTIONS}
    assert [m["role"] for m in trajectories[0]["messages"]] == ["system", "user", "assistant"]


def test_refused_credentials_stop_the_run_at_the_first_question(tmp_path: Path) -> None:
    with scripted_chat_server(401, "never reached") as server:
        started = time.monotonic()
        with pytest.raises(AgentConfigurationError) as caught:
            _run(_agent("openai/local-model", server.api_base), tmp_path)
        elapsed = time.monotonic() - started
    message = str(caught.value)
    assert "\n" not in message and "LIVESEARCH_LLM_API_KEY" in message and QUESTIONS[0].qid in message
    assert len(server.requests) == 1  # not retried, and no other question asked
    assert _lines(tmp_path / PREDICTIONS_FILE) == []  # nothing recorded: a fixed rerun asks every question
    assert elapsed < 10  # retrying would wait 1 + 2 + 4 + 8 s


def test_an_unreachable_endpoint_stops_the_run_without_backoff(tmp_path: Path) -> None:
    port = _closed_port()
    started = time.monotonic()
    with pytest.raises(AgentConfigurationError, match=r"cannot connect to http://127\.0\.0\.1:\d+/v1 .*fix: start the server"):
        _run(_agent("openai/local-model", f"http://127.0.0.1:{port}/v1"), tmp_path, concurrency=4)
    assert time.monotonic() - started < 10
    assert _lines(tmp_path / PREDICTIONS_FILE) == []


def test_missing_credentials_and_unknown_models_fail_fast(tmp_path: Path) -> None:
    with pytest.raises(AgentConfigurationError, match="no usable credentials .*fix: set LIVESEARCH_LLM_API_KEY"):
        _run(_agent("openai/gpt-4o-mini", None), tmp_path / "nokey")
    with pytest.raises(AgentConfigurationError, match="does not know this model .*fix: pass --model"):
        _run(_agent("no-such-provider/some-model", None), tmp_path / "unknown")


def test_the_cli_prints_one_line_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    served = tmp_path / f"served_questions_{DAY}.jsonl"
    write_served(served, QUESTIONS)
    code = main(["agent", "run", "--agent", "closed-book", "--served", str(served), "--out", str(tmp_path / "run"),
                 "--model", "openai/local-model", "--api-base", f"http://127.0.0.1:{_closed_port()}/v1",
                 "--llm-cache", str(tmp_path / "cache")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "fix: start the server" in err


@pytest.mark.slow
def test_the_plugin_cli_reports_the_one_line_through_the_mcp_client(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The plugin's run happens inside the MCP client's task group, which wraps what it raises.
    served = tmp_path / f"served_questions_{DAY}.jsonl"
    write_served(served, QUESTIONS)
    code = main(["agent", "run", "--agent", "plugin", "--served", str(served), "--out", str(tmp_path / "run"),
                 "--model", "openai/local-model", "--api-base", f"http://127.0.0.1:{_closed_port()}/v1",
                 "--llm-cache", str(tmp_path / "cache")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("error: AgentConfigurationError: ")
