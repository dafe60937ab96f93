"""The agent runner: predictions file, bounded concurrency, per-question errors, resume."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from pathlib import Path

import pytest

from livesearch_pipeline.core.models import Prediction, PredictionRunMeta
from livesearch_pipeline.settings import code_version
from livesearch_pipeline.evaluation.agents.base import (
    META_FILE,
    PREDICTIONS_FILE,
    AgentRunError,
    date_from_served_path,
    qid_set_hash,
    read_predictions_for_resume,
    run_agent,
)
from livesearch_pipeline_tests.evaluation.agents_fakes import ScriptedAgent, served_question

DAY = dt.date(2026, 11, 27)
SERVED = [served_question(f"What was the close of instrument {n} on the most recent trading day?")
          for n in range(12)]


class Interrupted(BaseException):
    """Stands in for Ctrl-C: not an Exception, so the runner must not record it as an answer."""


def _lines(path: Path) -> list[Prediction]:
    return [Prediction.model_validate_json(line) for line in path.read_text().splitlines()]


def _run(agent: ScriptedAgent, out: Path, **options: object) -> object:
    return asyncio.run(run_agent(agent, SERVED, out, date=DAY, **options))


def test_every_question_gets_one_line_and_the_meta_identifies_the_run(tmp_path: Path) -> None:
    agent = ScriptedAgent(lambda q: q.qid[-4:])
    report = _run(agent, tmp_path, concurrency=4)
    lines = _lines(tmp_path / PREDICTIONS_FILE)
    assert sorted(p.qid for p in lines) == sorted(q.qid for q in SERVED)
    assert all(p.answer == p.qid[-4:] and p.trace == [{"type": "scripted"}] for p in lines)
    meta = PredictionRunMeta.model_validate_json((tmp_path / META_FILE).read_text())
    assert (meta.agent, meta.model, meta.date) == ("scripted", "none", DAY)
    assert meta.served_qid_set_hash == qid_set_hash([q.qid for q in SERVED])
    assert meta.finished_at is not None and meta.finished_at >= meta.started_at
    assert meta.code_version == code_version()  # the site's agent card shows the code that ran it
    assert (report.served, report.asked, report.already_answered, report.errors) == (12, 12, 0, 0)


def test_parallelism_is_bounded_by_concurrency(tmp_path: Path) -> None:
    agent = ScriptedAgent(lambda q: "1", delay_s=0.02)
    _run(agent, tmp_path, concurrency=3)
    assert agent.max_in_flight == 3


def test_a_failing_question_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    broken = SERVED[4].qid

    def answer(question: object) -> str:
        if question.qid == broken:
            raise ValueError("page layout changed")
        return "42"

    report = _run(ScriptedAgent(answer), tmp_path, concurrency=2)
    by_qid = {p.qid: p for p in _lines(tmp_path / PREDICTIONS_FILE)}
    assert by_qid[broken].answer is None
    assert by_qid[broken].error == "ValueError: page layout changed"
    assert all(p.answer == "42" for q, p in by_qid.items() if q != broken)
    assert report.errors == 1


def test_an_interrupted_run_resumes_without_asking_answered_questions_again(tmp_path: Path) -> None:
    stop_at = SERVED[5].qid

    def answer(question: object) -> str:
        if question.qid == stop_at:
            raise Interrupted()
        return "first"

    with pytest.raises(Interrupted):
        _run(ScriptedAgent(answer), tmp_path, concurrency=1)
    answered_before = {p.qid for p in _lines(tmp_path / PREDICTIONS_FILE)}
    assert answered_before == {q.qid for q in SERVED[:5]}
    unfinished = PredictionRunMeta.model_validate_json((tmp_path / META_FILE).read_text())
    assert unfinished.finished_at is None

    second = ScriptedAgent(lambda q: "second")
    report = _run(second, tmp_path, concurrency=4)
    assert set(second.asked) == {q.qid for q in SERVED[5:]} == set(second.prepared)
    lines = _lines(tmp_path / PREDICTIONS_FILE)
    assert len(lines) == len(SERVED) and len({p.qid for p in lines}) == len(SERVED)
    assert (report.already_answered, report.asked) == (5, 7)
    finished = PredictionRunMeta.model_validate_json((tmp_path / META_FILE).read_text())
    assert finished.started_at == unfinished.started_at and finished.finished_at is not None

    third = ScriptedAgent(lambda q: "third")
    assert _run(third, tmp_path).asked == 0 and third.asked == []


def test_a_torn_last_line_is_dropped_with_a_warning_and_asked_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _run(ScriptedAgent(lambda q: "x"), tmp_path)
    path = tmp_path / PREDICTIONS_FILE
    complete = path.read_text().splitlines(keepends=True)
    torn_qid = json.loads(complete[-1])["qid"]
    path.write_text("".join(complete[:-1]) + complete[-1][:25])
    with caplog.at_level(logging.WARNING):
        again = ScriptedAgent(lambda q: "y")
        _run(again, tmp_path)
    assert again.asked == [torn_qid]
    assert any("torn last line" in r.message and str(path) in r.message for r in caplog.records)
    lines = _lines(path)
    assert len(lines) == len(SERVED) and {p.qid: p.answer for p in lines}[torn_qid] == "y"


def test_a_malformed_line_before_the_end_fails_loudly_with_its_line_number(tmp_path: Path) -> None:
    _run(ScriptedAgent(lambda q: "x"), tmp_path)
    path = tmp_path / PREDICTIONS_FILE
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = '{"qid": "not-a-qid"}\n'
    path.write_text("".join(lines))
    with pytest.raises(AgentRunError, match=rf"{PREDICTIONS_FILE}: 1 malformed prediction line\(s\) — line 3: "):
        read_predictions_for_resume(path)


def test_an_output_folder_of_another_run_is_refused(tmp_path: Path) -> None:
    _run(ScriptedAgent(lambda q: "x", name="web"), tmp_path)
    with pytest.raises(AgentRunError, match="belongs to another run"):
        _run(ScriptedAgent(lambda q: "x", name="closed-book"), tmp_path)
    with pytest.raises(AgentRunError, match="belongs to another run"):
        asyncio.run(run_agent(ScriptedAgent(lambda q: "x", name="web"), SERVED[:3], tmp_path, date=DAY))


def test_predictions_without_meta_are_not_resumed(tmp_path: Path) -> None:
    (tmp_path / PREDICTIONS_FILE).write_text("")
    with pytest.raises(AgentRunError, match="without predictions.meta.json"):
        _run(ScriptedAgent(lambda q: "x"), tmp_path)


def test_retry_errors_asks_the_failed_questions_again(tmp_path: Path) -> None:
    flaky = {SERVED[1].qid, SERVED[7].qid}

    def answer(question: object) -> str:
        if question.qid in flaky:
            raise TimeoutError("search backend slow")
        return "ok"

    _run(ScriptedAgent(answer), tmp_path)
    plain = ScriptedAgent(lambda q: "later")
    assert _run(plain, tmp_path).asked == 0
    retry = ScriptedAgent(lambda q: "later")
    report = _run(retry, tmp_path, retry_errors=True)
    assert set(retry.asked) == flaky and report.errors == 0
    lines = _lines(tmp_path / PREDICTIONS_FILE)
    assert len(lines) == len(SERVED) and not any(p.error for p in lines)
    assert {p.qid for p in lines if p.answer == "later"} == flaky


def test_a_prediction_for_the_wrong_qid_is_an_error_on_the_question(tmp_path: Path) -> None:
    class Confused(ScriptedAgent):
        async def answer(self, question: object) -> Prediction:
            return Prediction(qid=SERVED[0].qid, answer="1")

    asyncio.run(run_agent(Confused(lambda q: "1"), SERVED[:2], tmp_path, date=DAY))
    by_qid = {p.qid: p for p in _lines(tmp_path / PREDICTIONS_FILE)}
    assert by_qid[SERVED[1].qid].error.startswith("agent scripted answered qid")


def test_concurrency_below_one_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(AgentRunError, match="concurrency"):
        _run(ScriptedAgent(lambda q: "x"), tmp_path, concurrency=0)


def test_date_comes_from_the_served_file_name() -> None:
    assert date_from_served_path(Path("data/served/served_questions_2026-11-27.jsonl")) == DAY
    assert date_from_served_path(Path("questions.jsonl")) is None


# --------------------------------------------------------------------------- progress


MANY = [served_question(f"What was the close of instrument {n} on the most recent trading day?") for n in range(123)]


def test_progress_comes_about_every_tenth_in_order_and_changes_nothing_written(tmp_path: Path) -> None:
    lines: list[str] = []
    quiet, told = tmp_path / "quiet", tmp_path / "told"
    asyncio.run(run_agent(ScriptedAgent(lambda q: q.qid[-4:]), MANY, quiet, date=DAY, concurrency=1))
    asyncio.run(run_agent(ScriptedAgent(lambda q: q.qid[-4:]), MANY, told, date=DAY, concurrency=1,
                          progress=lines.append))
    # 123 questions: a line at each tenth of them crossed, the last one included.
    assert lines == [f"scripted: {n} of 123 answered" for n in (13, 25, 37, 50, 62, 74, 87, 99, 111, 123)]
    for name in (PREDICTIONS_FILE, "trajectories.jsonl"):
        assert (told / name).read_bytes() == (quiet / name).read_bytes()


def test_progress_is_bounded_for_a_days_questions_and_counts_a_resumed_runs_answers(tmp_path: Path) -> None:
    stop_at = MANY[100].qid

    def answer(question: object) -> str:
        if question.qid == stop_at:
            raise Interrupted()
        return "1"

    first: list[str] = []
    with pytest.raises(Interrupted):
        asyncio.run(run_agent(ScriptedAgent(answer), MANY, tmp_path, date=DAY, concurrency=1, progress=first.append))
    assert first[-1] == "scripted: 99 of 123 answered"  # the 100 answered before the interruption
    resumed: list[str] = []
    asyncio.run(run_agent(ScriptedAgent(lambda q: "1"), MANY, tmp_path, date=DAY, concurrency=4,
                          progress=resumed.append))
    assert resumed == [f"scripted: {n} of 123 answered" for n in (111, 123)]
    answered = [int(line.split()[1]) for line in first + resumed]
    assert answered == sorted(answered) and len(answered) <= 10


def test_progress_of_a_days_questions_is_ten_lines_with_thousands_grouped(tmp_path: Path) -> None:
    from livesearch_pipeline.evaluation.agents.base import PROGRESS_STEPS

    lines: list[str] = []
    served = [served_question(f"Question {n}?") for n in range(2325)]  # the size of make run's day
    asyncio.run(run_agent(ScriptedAgent(lambda q: "1", name="search-read"), served, tmp_path, date=DAY,
                          concurrency=8, progress=lines.append))
    assert len(lines) == PROGRESS_STEPS
    assert lines[2] == "search-read: 698 of 2,325 answered" and lines[-1] == "search-read: 2,325 of 2,325 answered"


# --------------------------------------------------------------------------- forked workers


class ForkableScripted(ScriptedAgent):
    """A scripted agent the runner may fork (`ForkableAgent`); a varying delay makes the completion
    order differ from the order asked."""

    def forked(self):
        import contextlib

        @contextlib.asynccontextmanager
        async def opened():
            yield self

        return opened()

    async def answer(self, question):
        await asyncio.sleep(0.001 * (hash(question.qid) % 5))
        return await super().answer(question)


def _entities(n: int) -> list:
    # Entities interleaved in the served order: e0, e1, e2, e0, e1, ...
    return [served_question(f"What was the close of instrument {i} on the most recent trading day?",
                            entity=f"60000{i % 3}.SH") for i in range(n)]


def test_workers_write_the_same_bytes_as_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from livesearch_pipeline.evaluation.agents import base

    monkeypatch.setattr(base, "FORK_CHUNK", 4)  # several chunks for a few questions
    served = _entities(30)
    broken = served[7].qid

    def answer(question: object) -> str:
        if question.qid == broken:
            raise ValueError("page layout changed")
        return question.qid[-4:]

    reports, agents = {}, {}
    for workers in (1, 2, 3):
        agents[workers] = ForkableScripted(answer)
        reports[workers] = asyncio.run(run_agent(agents[workers], served, tmp_path / str(workers), date=DAY,
                                                 concurrency=3, workers=workers))
    for name in (PREDICTIONS_FILE, "trajectories.jsonl"):
        assert (tmp_path / "2" / name).read_bytes() == (tmp_path / "1" / name).read_bytes()
        assert (tmp_path / "3" / name).read_bytes() == (tmp_path / "1" / name).read_bytes()
    # The order: the served order with each entity's questions together (entities as they first come).
    lines = _lines(tmp_path / "2" / PREDICTIONS_FILE)
    by_qid = {q.qid: q for q in served}
    assert [p.qid for p in lines] == [q.qid for e in ("600000.SH", "600001.SH", "600002.SH")
                                      for q in served if q.entity == e]
    assert [by_qid[p.qid].entity for p in lines] == sorted(by_qid[p.qid].entity for p in lines)
    assert {p.qid: p.error for p in lines if p.error} == {broken: "ValueError: page layout changed"}
    assert all(r.errors == 1 and r.asked == 30 for r in reports.values())
    # One worker asks here; more ask in forked processes (this process's agent asked nothing).
    assert len(agents[1].asked) == 30 and agents[2].asked == agents[3].asked == []


def test_chunks_keep_an_entitys_questions_together() -> None:
    from livesearch_pipeline.evaluation.agents.base import FORK_CHUNK, _chunks, by_entity

    served = _entities(3 * FORK_CHUNK + 5)
    chunks = _chunks(by_entity(served))
    assert [q for chunk in chunks for q in chunk] == by_entity(served)
    for before, after in zip(chunks, chunks[1:]):
        assert len(before) >= FORK_CHUNK and before[-1].entity != after[0].entity
    assert len({frozenset(q.entity for q in chunk) for chunk in chunks}) == len(chunks)


def test_workers_below_one_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(AgentRunError, match="workers"):
        _run(ForkableScripted(lambda q: "x"), tmp_path, workers=0)


def test_an_agent_that_cannot_be_forked_answers_in_one_process_in_the_served_order(tmp_path: Path) -> None:
    served = _entities(20)
    agent = ScriptedAgent(lambda q: "1", delay_s=0.001)
    asyncio.run(run_agent(agent, served, tmp_path, date=DAY, concurrency=4, workers=2))
    assert sorted(agent.asked) == sorted(q.qid for q in served)  # asked here, not in a worker
    assert [p.qid for p in _lines(tmp_path / PREDICTIONS_FILE)] == [q.qid for q in served]
