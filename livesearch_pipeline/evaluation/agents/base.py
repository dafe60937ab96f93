"""The agent protocol and the runner that puts a day's served questions to an agent.

The runner asks questions concurrently with bounded parallelism, appends each prediction to
`predictions.jsonl` in the order asked as soon as it and the questions asked before it are
answered (write, flush, fsync: an interrupted run loses at most the line being written; the
answers still waiting for an earlier question are written before it stops), and resumes an
interrupted run without re-asking the questions already answered. The order asked is the served
order; an agent that can be forked (`ForkableAgent`: the deterministic web baselines) is asked
each entity's questions together (`by_entity`) and may answer in several forked worker processes
(`workers`), each taking chunks of whole entities in turn: one worker and two write the same
bytes. An agent failing on one question is recorded on that question's line
(`Prediction.error`) and the run goes on — except for an error every question would hit (no
credentials, an unknown model, an unreachable endpoint: `ChatModelConfigurationError`), which
stops the run at once with `AgentConfigurationError`, the question unrecorded so a fixed rerun
asks it.

Beside the predictions, `trajectories.jsonl` holds one line per answered question
(`TrajectoryLine`: the conversation's messages, the tool calls with their arguments and what came
back — every search and page read of a web agent, scripted or not, and each one its budget refused
— and the usage), kept in step with the predictions on resume. A web agent's declared budget
(`budget`) goes into the run metadata.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncContextManager, Protocol, Sequence, runtime_checkable

from pydantic import ValidationError

from livesearch_pipeline.core.jsonl import JsonlError, parse_jsonl_numbered
from livesearch_pipeline.core.models import Prediction, PredictionRunMeta, ServedQuestion, TrajectoryLine
from livesearch_pipeline.core.progress import Progress, Report
from livesearch_pipeline.core.snapshot import write_atomic
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.workers import forked_pool, inherited
from livesearch_pipeline.evaluation.agents.chat import ChatModelConfigurationError
from livesearch_pipeline.evaluation.inputs import load_served

# Served files are read exactly as the evaluator reads them (`evaluation.inputs.load_served` and
# `qid_set_hash` are re-exported), so a run's qid-set hash always equals the one the evaluator computes.
__all__ = ["Agent", "AgentConfigurationError", "AgentRunError", "ForkableAgent", "RunReport", "date_from_served_path", "load_served", "qid_set_hash",
           "read_predictions_for_resume", "run_agent"]

log = logging.getLogger(__name__)

PREDICTIONS_FILE = "predictions.jsonl"
META_FILE = "predictions.meta.json"
TRAJECTORIES_FILE = "trajectories.jsonl"
_SERVED_NAME = re.compile(r"served_questions_(\d{4}-\d{2}-\d{2})\.jsonl$")


class AgentRunError(RuntimeError):
    """The run cannot start or resume: bad inputs, or an output folder holding another run."""


class AgentConfigurationError(AgentRunError):
    """The agent's configuration fails every question (credentials, model, endpoint): run stopped."""


class Agent(Protocol):
    @property
    def name(self) -> str:
        """The agent kind recorded in the run metadata (`oracle`, `web`, ...)."""

    @property
    def model(self) -> str | None:
        """The model behind the agent, when there is one."""

    # A web agent also declares `budget` (a `ReadBudget`: pages and searches per question), which
    # the runner records in the run metadata; agents without one record none.

    async def prepare(self, questions: Sequence[ServedQuestion]) -> None:
        """Work shared by the questions about to be asked (called once, before any answer)."""

    async def answer(self, question: ServedQuestion) -> Prediction:
        """Answer one question. Raising is allowed: the runner records it on that question."""


@runtime_checkable
class ForkableAgent(Agent, Protocol):
    """An agent whose answers do not depend on which process asks them, so that the runner may
    fork worker processes that answer chunks of the questions side by side (`run_agent`'s
    `workers`)."""

    def forked(self) -> AsyncContextManager[Agent]:
        """In a forked worker process: this agent with its own connections (opened on the worker's
        event loop, closed at exit); what it inherited at the fork (caches) it may keep."""


# --------------------------------------------------------------------------- served questions


def date_from_served_path(path: Path) -> dt.date | None:
    """D from a `served_questions_<D>.jsonl` file name, or None for any other name."""
    found = _SERVED_NAME.search(path.name)
    return dt.date.fromisoformat(found.group(1)) if found else None


# --------------------------------------------------------------------------- predictions file


def read_predictions_for_resume(path: Path) -> list[Prediction]:
    """The predictions already on disk, repairing a torn last line.

    A last line without its newline was cut by an interruption: it is dropped with a warning
    naming the file, and the file is truncated to the last complete line so that appends stay
    well-formed. Any other malformed line, or a duplicate qid, is corruption and fails loudly.
    """
    if not path.exists():
        return []
    data = path.read_bytes()
    complete_end = data.rfind(b"\n") + 1
    if complete_end < len(data):
        log.warning("%s: dropping torn last line (%d bytes, no newline) left by an interrupted run; "
                    "its question will be asked again", path, len(data) - complete_end)
        with path.open("r+b") as handle:
            handle.truncate(complete_end)
            handle.flush()
            os.fsync(handle.fileno())
    try:
        numbered = parse_jsonl_numbered(path, data[:complete_end], Prediction, "prediction", skip_blank=True)
    except JsonlError as exc:
        raise AgentRunError(str(exc)) from exc
    predictions: list[Prediction] = []
    seen: set[str] = set()
    for number, prediction in numbered:
        if prediction.qid in seen:
            raise AgentRunError(f"{path}:{number}: duplicate qid {prediction.qid}")
        seen.add(prediction.qid)
        predictions.append(prediction)
    return predictions


def prediction_line(prediction: Prediction) -> bytes:
    return (prediction.model_dump_json(exclude_none=True) + "\n").encode("utf-8")


def trajectory_of(prediction: Prediction) -> TrajectoryLine:
    """The trajectory line of a prediction: its conversation (none for agents without a model)
    and the tool calls of its trace."""
    tool_calls = [entry for entry in prediction.trace or [] if entry.get("type") == "tool"]
    return TrajectoryLine(qid=prediction.qid, lang=prediction.answer_lang, messages=prediction.messages or [],
                          tool_calls=tool_calls, usage=prediction.usage, error=prediction.error)


def trajectory_line(prediction: Prediction) -> bytes:
    return (trajectory_of(prediction).model_dump_json(exclude_none=True) + "\n").encode("utf-8")


def _keep_trajectories(path: Path, qids: set[str]) -> None:
    """Rewrite `path` with the lines of `qids` only (a resumed run's answered questions): lines of
    questions asked again, and a torn last line, go. Unreadable lines are dropped too: the
    trajectories are a record beside the predictions, which stay the run's source of truth."""
    if not path.exists():
        return
    kept: list[bytes] = []
    for raw in path.read_bytes().splitlines(keepends=True):
        if not raw.endswith(b"\n"):
            continue
        try:
            line = TrajectoryLine.model_validate_json(raw)
        except ValidationError:
            log.warning("%s: dropping an unreadable trajectory line", path)
            continue
        if line.qid in qids:
            kept.append(raw)
    write_atomic(path, b"".join(kept))


class _PredictionAppender:
    """Appends one line per prediction (and its trajectory line) and forces them to disk.

    Called from the event loop without awaiting in between, so lines never interleave. The
    trajectory goes first: a prediction on disk always has its trajectory."""

    def __init__(self, path: Path, trajectories: Path | None = None) -> None:
        self._trajectories = trajectories.open("ab") if trajectories is not None else None
        self._handle = path.open("ab")

    def append_lines(self, prediction: bytes, trajectory: bytes) -> None:
        if self._trajectories is not None:
            self._trajectories.write(trajectory)
            self._trajectories.flush()
            os.fsync(self._trajectories.fileno())
        self._handle.write(prediction)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()
        if self._trajectories is not None:
            self._trajectories.close()


class _InOrder:
    """Holds the lines of answered questions until every question asked before them has its
    lines, then appends them: the file is in the order asked however the answers complete."""

    def __init__(self, qids: Sequence[str], appender: _PredictionAppender) -> None:
        self._order = list(qids)
        self._next = 0
        self._ready: dict[str, tuple[bytes, bytes]] = {}
        self._appender = appender

    def add(self, qid: str, prediction: bytes, trajectory: bytes) -> None:
        self._ready[qid] = (prediction, trajectory)
        while self._next < len(self._order) and self._order[self._next] in self._ready:
            self._appender.append_lines(*self._ready.pop(self._order[self._next]))
            self._next += 1

    def flush(self) -> None:
        """A stopped run: the answers still waiting for an earlier question are written too (in
        order), so that a resumed run does not ask them again."""
        for qid in self._order[self._next:]:
            if qid in self._ready:
                self._appender.append_lines(*self._ready.pop(qid))


# --------------------------------------------------------------------------- runner


@dataclass(frozen=True)
class RunReport:
    served: int
    already_answered: int
    asked: int
    errors: int
    wall_s: float
    predictions_path: Path
    meta_path: Path


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _load_meta(path: Path) -> PredictionRunMeta | None:
    if not path.exists():
        return None
    try:
        return PredictionRunMeta.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise AgentRunError(f"{path}: malformed run metadata: {exc}") from exc


def _code_version() -> str:
    """The version of the code running the agent, recorded in the run's metadata (the site's agent card)."""
    from livesearch_pipeline.settings import code_version

    return code_version()


def _check_same_run(existing: PredictionRunMeta, wanted: PredictionRunMeta, meta_path: Path) -> None:
    mine = (wanted.agent, wanted.model, wanted.date, wanted.served_qid_set_hash, wanted.budget)
    theirs = (existing.agent, existing.model, existing.date, existing.served_qid_set_hash, existing.budget)
    if mine != theirs:
        raise AgentRunError(
            f"{meta_path} belongs to another run (agent, model, date, qid-set hash, budget) = {theirs}; "
            f"this run is {mine}: use another --out folder"
        )


def _prepare_output(
    out_dir: Path, wanted: PredictionRunMeta, served_qids: set[str], *, retry_errors: bool
) -> tuple[PredictionRunMeta, dict[str, Prediction]]:
    predictions_path, meta_path = out_dir / PREDICTIONS_FILE, out_dir / META_FILE
    existing_meta = _load_meta(meta_path)
    if existing_meta is None and predictions_path.exists():
        raise AgentRunError(f"{predictions_path} exists without {META_FILE}: not a run this tool resumes")
    if existing_meta is not None:
        _check_same_run(existing_meta, wanted, meta_path)
        wanted = wanted.model_copy(update={"started_at": existing_meta.started_at})
    done = {p.qid: p for p in read_predictions_for_resume(predictions_path)}
    foreign = sorted(set(done) - served_qids)
    if foreign:
        raise AgentRunError(f"{predictions_path} holds {len(foreign)} qid(s) not served: {foreign[:5]}")
    if retry_errors and any(p.error for p in done.values()):
        done = {qid: p for qid, p in done.items() if not p.error}
        write_atomic(predictions_path, b"".join(prediction_line(p) for p in done.values()))
    _keep_trajectories(out_dir / TRAJECTORIES_FILE, set(done))
    write_atomic(meta_path, wanted.model_dump_json(indent=2).encode("utf-8") + b"\n")
    return wanted, done


async def _ask(agent: Agent, question: ServedQuestion) -> Prediction:
    try:
        prediction = await agent.answer(question)
    except ChatModelConfigurationError as exc:
        raise AgentConfigurationError(f"{question.qid}: {exc}") from exc
    except Exception as exc:  # one failing question must not stop the run; it is recorded
        log.warning("%s: %s failed: %s: %s", question.qid, agent.name, type(exc).__name__, exc)
        return Prediction(qid=question.qid, answer=None, error=f"{type(exc).__name__}: {exc}")
    if prediction.qid != question.qid:
        return Prediction(qid=question.qid, answer=None,
                          error=f"agent {agent.name} answered qid {prediction.qid} for {question.qid}")
    return prediction


PROGRESS_STEPS = 10  # progress lines per run: about one every 10% of the served questions
# Questions per chunk handed to a forked worker: small enough that the workers finish together
# and the served-order writes keep up, large enough that a chunk's event loop and connections
# cost little next to its answers.
FORK_CHUNK = 32


def by_entity(questions: Sequence[ServedQuestion]) -> list[ServedQuestion]:
    """The order a forkable agent is asked (and its lines written) in: the served order with each
    entity's questions together (entities in the order they first come), so that a worker that
    reads an entity's pages for one question has them at hand for the next."""
    groups: dict[str, list[ServedQuestion]] = {}
    for question in questions:
        groups.setdefault(question.entity, []).append(question)
    return [question for group in groups.values() for question in group]


def _chunks(questions: Sequence[ServedQuestion]) -> list[list[ServedQuestion]]:
    """Consecutive chunks of at least `FORK_CHUNK` questions (the last may be shorter), cut only
    between two entities: an entity's questions go to one worker."""
    chunks: list[list[ServedQuestion]] = [[]]
    for question in questions:
        current = chunks[-1]
        if len(current) >= FORK_CHUNK and current[-1].entity != question.entity:
            chunks.append(current := [])
        current.append(question)
    return [chunk for chunk in chunks if chunk]


async def _answer_all(agent: Agent, questions: Sequence[ServedQuestion], concurrency: int, done) -> None:
    """Ask `questions`, `concurrency` at a time; `done(question, prediction)` as each is answered."""
    queue: asyncio.Queue[ServedQuestion] = asyncio.Queue()
    for question in questions:
        queue.put_nowait(question)

    async def worker() -> None:
        while not queue.empty():
            question = queue.get_nowait()
            done(question, await _ask(agent, question))

    try:
        # A task group: a configuration error in one worker cancels the others at once.
        async with asyncio.TaskGroup() as group:
            for _ in range(min(concurrency, len(questions))):
                group.create_task(worker())
    except BaseExceptionGroup as failed:  # the first worker's error, as asyncio.gather raised it
        raise failed.exceptions[0] from None


_Lines = list[tuple[str, bytes, bytes, bool]]  # (qid, prediction line, trajectory line, error?)


async def _answer_chunk(agent: Agent, questions: Sequence[ServedQuestion], concurrency: int) -> _Lines:
    answers: dict[str, Prediction] = {}
    await agent.prepare(questions)
    await _answer_all(agent, questions, concurrency, lambda q, p: answers.__setitem__(q.qid, p))
    return [(q.qid, prediction_line(answers[q.qid]), trajectory_line(answers[q.qid]), answers[q.qid].error is not None)
            for q in questions]


# In a forked worker: its event loop and the agent opened on it (`ForkableAgent.forked`), kept for
# the worker's next chunks (its connections and what it has read with them); the worker process
# ends with its pool.
_WORKER: tuple[asyncio.AbstractEventLoop, Agent, contextlib.AsyncExitStack] | None = None


def _forked_chunk(questions: Sequence[ServedQuestion]) -> _Lines:
    """A forked worker's chunk, on the worker's own event loop with the agent's own connections."""
    global _WORKER
    agent, concurrency = inherited()  # forked by `_run_forked`, never pickled
    if _WORKER is None:
        loop, stack = asyncio.new_event_loop(), contextlib.AsyncExitStack()  # the stack held: never closed
        _WORKER = (loop, loop.run_until_complete(stack.enter_async_context(agent.forked())), stack)
    loop, worker, _ = _WORKER
    return loop.run_until_complete(_answer_chunk(worker, questions, concurrency))


async def _run_forked(agent: ForkableAgent, pending: Sequence[ServedQuestion], concurrency: int, workers: int,
                      appender: _PredictionAppender, answered: Progress) -> int:
    """Answer `pending` in `workers` forked processes, chunk by chunk (`prepare` is called per
    chunk); append the lines in the order asked as the chunks come back. The errors recorded."""
    chunks = _chunks(pending)
    errors = 0
    with forked_pool(workers, (agent, concurrency)) as pool:
        loop = asyncio.get_running_loop()
        futures = [loop.run_in_executor(pool, _forked_chunk, chunk) for chunk in chunks]
        try:
            for future in futures:  # in order: the order asked
                for _qid, prediction, trajectory, error in await future:
                    appender.append_lines(prediction, trajectory)
                    errors += error
                    answered.advance()
        except BaseException:
            for future in futures:
                future.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return errors


async def run_agent(
    agent: Agent,
    served: Sequence[ServedQuestion],
    out_dir: Path,
    *,
    date: dt.date,
    concurrency: int = 4,
    retry_errors: bool = False,
    progress: Report = None,
    workers: int = 1,
) -> RunReport:
    """Ask every served question not yet answered in `out_dir`, `concurrency` at a time.

    Writes `predictions.jsonl` (one `Prediction` per line, in the served order, each entity's
    questions together for a `ForkableAgent` (`by_entity`); a resumed run's new lines after the
    earlier ones) and
    `predictions.meta.json` (`PredictionRunMeta`; `finished_at` set when every question has a
    line). With `retry_errors`, lines that recorded an error are removed and asked again.

    `progress`, when given, receives a line about every 10% of the served questions answered
    (`search-read: 698 of 2,325 answered`, a resumed run's earlier answers counted; core.progress),
    in order, at most `PROGRESS_STEPS` of them: a run of minutes says how far it is (the Dagster
    asset passes its step's log, which the command line prints below the step). It changes
    nothing written.

    `workers` > 1 forks that many worker processes for a `ForkableAgent` (others ignore it), each
    answering chunks of `FORK_CHUNK` questions, `concurrency` at a time; what is written does not
    depend on it.
    """
    if concurrency < 1:
        raise AgentRunError(f"concurrency must be at least 1, got {concurrency}")
    if workers < 1:
        raise AgentRunError(f"workers must be at least 1, got {workers}")
    started = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    qids = [q.qid for q in served]
    wanted = PredictionRunMeta(agent=agent.name, model=agent.model, date=date,
                               served_qid_set_hash=qid_set_hash(qids), started_at=_now(),
                               budget=getattr(agent, "budget", None), code_version=_code_version())
    meta, done = _prepare_output(out_dir, wanted, set(qids), retry_errors=retry_errors)
    pending = [q for q in served if q.qid not in done]
    predictions_path, meta_path = out_dir / PREDICTIONS_FILE, out_dir / META_FILE
    errors = 0
    answered = Progress(total=len(served), what=agent.name, report=progress, unit="answered",
                        steps=PROGRESS_STEPS, done=len(done))
    if pending:
        appender = _PredictionAppender(predictions_path, out_dir / TRAJECTORIES_FILE)
        try:
            if isinstance(agent, ForkableAgent):
                pending = by_entity(pending)
            workers = min(workers, -(-len(pending) // FORK_CHUNK))
            if workers > 1 and isinstance(agent, ForkableAgent):
                errors = await _run_forked(agent, pending, concurrency, workers, appender, answered)
            else:
                await agent.prepare(pending)
                ordered = _InOrder([q.qid for q in pending], appender)

                def record(question: ServedQuestion, prediction: Prediction) -> None:
                    nonlocal errors
                    errors += prediction.error is not None
                    ordered.add(question.qid, prediction_line(prediction), trajectory_line(prediction))
                    answered.advance()

                try:
                    await _answer_all(agent, pending, concurrency, record)
                finally:
                    ordered.flush()
        finally:
            appender.close()
    finished = meta.model_copy(update={"finished_at": _now()})
    write_atomic(meta_path, finished.model_dump_json(indent=2).encode("utf-8") + b"\n")
    return RunReport(served=len(served), already_answered=len(done), asked=len(pending), errors=errors,
                     wall_s=time.monotonic() - started, predictions_path=predictions_path, meta_path=meta_path)
