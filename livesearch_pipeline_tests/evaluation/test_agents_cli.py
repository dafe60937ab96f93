"""`livesearch agent run` end to end (stale and closed-book), and its input errors."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.core.executor import execute_programs
from livesearch_pipeline.core.models import Prediction, PredictionRunMeta
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.evaluation.agents.base import META_FILE, PREDICTIONS_FILE
from livesearch_pipeline_tests.core.fakes import MARKET_TOOLS, FakeToolClient
from livesearch_pipeline_tests.evaluation.agents_fakes import scripted_model, served_question, write_served
from livesearch_pipeline_tests.evaluation.test_agents_baselines import POOL, _served

DAY = dt.date(2026, 11, 27)


def _gold(root: Path, day: dt.date) -> None:
    answers, _ = asyncio.run(execute_programs(POOL, day, FakeToolClient(MARKET_TOOLS)))
    SnapshotStore(root).write(day, answers, pool_version="t", pool_sha256="0" * 64, data_service="fake", code_version="t",
                              max_withdrawn_share=0.05, cutoff=dt.datetime(2026, 11, 27, 22, tzinfo=dt.timezone.utc))


def test_stale_run_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _gold(tmp_path / "gold", dt.date(2026, 11, 26))
    served = tmp_path / f"served_questions_{DAY}.jsonl"
    write_served(served, _served(POOL))
    argv = ["agent", "run", "--agent", "stale", "--served", str(served), "--out", str(tmp_path / "run"),
            "--gold-dir", str(tmp_path / "gold")]
    assert main(argv) == 0
    assert "stale on 2026-11-27: 6 served, 0 already answered, 6 asked, 0 errors" in capsys.readouterr().out
    meta = PredictionRunMeta.model_validate_json((tmp_path / "run" / META_FILE).read_text())
    assert (meta.agent, meta.model, meta.date) == ("stale", None, DAY)
    assert len((tmp_path / "run" / PREDICTIONS_FILE).read_text().splitlines()) == 6
    assert main(argv) == 0
    assert "6 already answered, 0 asked" in capsys.readouterr().out


def test_closed_book_run_from_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    question = served_question("What was the close of Alpha on the most recent trading day?")
    served = tmp_path / "questions.jsonl"
    write_served(served, [question])
    # Its own endpoint, its own key (issue 23): the operator's LIVESEARCH_LLM_API_KEY is not sent there.
    monkeypatch.setenv("LIVESEARCH_AGENT_SCRIPTED_KEY", "sk-test")
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path / "data"))
    with scripted_model({question.question: ["Final answer: 7.00 CNY"]}) as model:
        code = main(["agent", "run", "--agent", "closed-book", "--served", str(served), "--out", str(tmp_path),
                     "--date", "2026-11-27", "--model", "openai/scripted", "--api-base", model.api_base,
                     "--api-key-env", "LIVESEARCH_AGENT_SCRIPTED_KEY"])
    assert code == 0
    # The model's reply is cached in the one LLM cache of the data root.
    assert len(list((tmp_path / "data" / "cache" / "llm").rglob("*.json"))) == 1
    prediction = Prediction.model_validate_json((tmp_path / PREDICTIONS_FILE).read_text())
    assert prediction.answer == "7.00 CNY"
    meta = PredictionRunMeta.model_validate_json((tmp_path / META_FILE).read_text())
    assert (meta.agent, meta.model) == ("closed-book", "openai/scripted")


@pytest.mark.parametrize(("extra", "served_name", "message"), [
    ([], "questions.jsonl", "pass --date"),
    (["--date", "2026-11-26"], f"served_questions_{DAY}.jsonl", "contradicts the served file"),
    (["--date", "2026-11-27"], f"served_questions_{DAY}.jsonl", "no gold snapshot dated before 2026-11-27"),
])
def test_bad_inputs_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
                                          served_name: str, message: str) -> None:
    served = tmp_path / served_name
    write_served(served, _served(POOL))
    code = main(["agent", "run", "--agent", "stale", "--served", str(served), "--out", str(tmp_path / "run"),
                 "--gold-dir", str(tmp_path / "gold"), *extra])
    assert code == 2 and message in capsys.readouterr().err


def test_web_agent_without_a_search_backend_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("LIVESEARCH_SEARXNG_URL", raising=False)
    served = tmp_path / f"served_questions_{DAY}.jsonl"
    write_served(served, _served(POOL))
    code = main(["agent", "run", "--agent", "web", "--served", str(served), "--out", str(tmp_path / "run"),
                 "--model", "openai/scripted"])
    assert code == 2 and "needs --searxng-url" in capsys.readouterr().err
