"""Execute gold programs for one as-of date and turn them into gold answers (DESIGN §2.7, §4.6).

Each program runs its calls level by level (a level's calls only depend on earlier levels),
with arguments resolved for the as-of date. Identical tool calls — the same tool with the same
canonical arguments — are executed once for the whole batch and shared by every program that
needs them, so a pool of thousands of questions over a few hundred entities costs a few
thousand tool calls. Concurrency is bounded by a semaphore; transient failures and timeouts are
retried with exponential backoff through tenacity (`data_call_retrying`; no jitter: runs are reproducible).

Programs stream through a bounded window (`ExecutorConfig.max_programs_in_flight`), so memory
does not grow with the batch beyond the answers themselves. The first-level calls of every
program (those without refs) are resolved up front; each distinct one is counted by the programs
that still need it, programs run grouped by the first such call (programs sharing calls run
together), and a response is released as soon as the last program needing it has finished. A
call resolved from another call's response (a ref) is kept as long as the first-level calls of
the program that first asked for it are, so programs of the same shape share it too.

Failures are per program and explicit: a call that fails marks every program that needed it
`error` (naming the program's call id and tool), a reference that selects nothing marks it
`empty`. A program never falls back to another date. Anything else (a bug, a client raising
something other than ToolCallError) aborts the whole batch loudly.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as dt
import gc
import re
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import tenacity

from livesearch_pipeline.core import aio
from livesearch_pipeline.core.calendars import CalendarRangeError
from livesearch_pipeline.core.client import ToolCallError, ToolClient
from livesearch_pipeline.core.extract import ExtractionEmpty, ExtractionError, located, run_extractor
from livesearch_pipeline.core.models import ArgValue, GoldAnswer, Program, Question
from livesearch_pipeline.core.program import ProgramError, call_levels, concrete_args

# Argument names that carry credentials. A program must never hold them: credentials belong to
# the client's configuration, and a snapshot records every argument it sends.
SECRET_ARG_PATTERN = re.compile(r"token|api[_-]?key|password|passwd|secret|credential", re.IGNORECASE)

# Errors that mean "this program cannot be resolved for this date", as opposed to bugs.
PROGRAM_ERRORS = (ExtractionError, ProgramError, CalendarRangeError)

# The timeout of the tool call running in this task (set around `client.call_tool`), so that a
# client queueing for a provider quota can tell it "this wait is not the call hanging".
_CALL_TIMEOUT: contextvars.ContextVar[asyncio.Timeout | None] = contextvars.ContextVar("livesearch_call_timeout", default=None)


def extend_call_deadline(seconds: float) -> None:
    """Push the running tool call's timeout `seconds` later; a no-op outside the executor.

    For clients that wait inside `call_tool` for a provider quota (dataservice/quota.py): with
    32 calls in flight against a per-minute quota a call may queue for minutes, which must not
    count as the provider hanging; the timeout still bounds the request itself.
    """
    timeout = _CALL_TIMEOUT.get()
    if timeout is not None and seconds > 0:
        when = timeout.when()
        if when is not None:
            timeout.reschedule(when + seconds)


@dataclass(frozen=True)
class ExecutorConfig:
    max_concurrency: int = 32
    retries: int = 3  # extra attempts after the first, for transient errors and timeouts
    backoff_s: float = 0.05  # wait before retry n (1-based) is backoff_s * 2**(n-1)
    call_timeout_s: float = 30.0
    # Programs executing at once; the rest wait their turn, so memory stays bounded whatever
    # the batch size. Far above max_concurrency: a program waits for its calls most of the time.
    max_programs_in_flight: int = 512

    def __post_init__(self) -> None:
        if self.max_concurrency < 1:
            raise ValueError(f"ExecutorConfig.max_concurrency must be >= 1, got {self.max_concurrency}")
        if self.retries < 0:
            raise ValueError(f"ExecutorConfig.retries must be >= 0, got {self.retries}")
        if self.backoff_s < 0:
            raise ValueError(f"ExecutorConfig.backoff_s must be >= 0, got {self.backoff_s}")
        if self.call_timeout_s <= 0:
            raise ValueError(f"ExecutorConfig.call_timeout_s must be > 0, got {self.call_timeout_s}")
        if self.max_programs_in_flight < 1:
            raise ValueError(f"ExecutorConfig.max_programs_in_flight must be >= 1, got {self.max_programs_in_flight}")


@dataclass
class ExecutionStats:
    programs: int = 0
    tool_calls_requested: int = 0  # calls programs asked for, before de-duplication
    unique_calls: int = 0  # calls actually executed (distinct tool + arguments)
    failed_calls: int = 0  # distinct calls that failed for good
    retries: int = 0  # retry attempts over all calls
    tool_time_s: float = 0.0  # wall time spent inside client calls, summed over attempts
    wall_time_s: float = 0.0


@dataclass(frozen=True)
class CallFailure:
    tool: str
    message: str


_CallResult = dict[str, Any] | CallFailure


CallKey = tuple[str, tuple[tuple[str, str, ArgValue], ...]]


def call_key(tool: str, args: Mapping[str, ArgValue]) -> CallKey:
    """Identity of a tool call: the tool and its arguments in canonical (sorted) order.

    Each value carries its type name, so `1`, `1.0` and `True` (equal in Python) stay distinct
    calls, exactly as their JSON texts would; a tuple is hashed far faster than JSON is built.
    """
    return tool, tuple(sorted((name, type(value).__name__, value) for name, value in args.items()))


def secret_arg_names(args: Mapping[str, object]) -> list[str]:
    return sorted(name for name in args if SECRET_ARG_PATTERN.search(name))


class _Entry:
    """One distinct call of the batch: how many holders it has, and its task once requested."""

    __slots__ = ("key", "seen", "holds", "task", "riders")

    def __init__(self, key: CallKey, seen: int) -> None:
        self.key = key
        self.seen = seen  # how many distinct calls the batch had met before this one
        self.holds = 0
        self.task: asyncio.Task[_CallResult] | None = None
        self.riders: list[_Entry] | None = None  # entries this one holds (as their anchor)


class _SharedCalls:
    """Runs each distinct tool call once, bounded, with retries; shares the result while needed.

    A call's entry (and its result) lives while somebody holds it: every program holds the
    first-level calls it will request from the start of the batch (`hold`) until it finishes,
    and the calls it requests beyond those (`hold_further`) from the request until it finishes.
    A call first requested beyond a program's first-level calls (one resolved from a ref) is
    also held by each of those first-level calls (its anchors), so it outlives the program for
    as long as programs needing the same first-level calls, which resolve the same ref alike,
    remain. A call released and then requested again is executed again (counted in unique_calls).
    """

    def __init__(self, client: ToolClient, config: ExecutorConfig, stats: ExecutionStats) -> None:
        self._client = client
        self._config = config
        self._stats = stats
        self._semaphore = asyncio.Semaphore(config.max_concurrency)
        self._entries: dict[CallKey, _Entry] = {}
        self._seen = 0
        self._unfinished: set[asyncio.Task[_CallResult]] = set()

    def hold(self, key: CallKey) -> _Entry:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry(key, self._seen)
            self._seen += 1
        entry.holds += 1
        return entry

    def hold_further(self, key: CallKey, held: list[_Entry], anchors: Sequence[_Entry]) -> _Entry:
        """The entry of a call a program requests beyond its first-level ones; `held` is the
        program's list of held entries (extended here), `anchors` its first-level entries."""
        for entry in held:
            if entry.key == key:
                return entry
        fresh = key not in self._entries
        entry = self.hold(key)
        held.append(entry)
        if fresh:
            for anchor in anchors:
                if anchor.riders is None:
                    anchor.riders = []
                anchor.riders.append(entry)
                entry.holds += 1
        return entry

    def request(self, tool: str, args: dict[str, ArgValue], entry: _Entry) -> asyncio.Task[_CallResult]:
        self._stats.tool_calls_requested += 1
        task = entry.task
        if task is None:
            task = entry.task = asyncio.create_task(self._run(tool, args))
            self._unfinished.add(task)
            task.add_done_callback(self._unfinished.discard)
            self._stats.unique_calls += 1
        return task

    def release(self, entries: Sequence[_Entry]) -> None:
        for entry in entries:
            entry.holds -= 1
            if entry.holds:
                continue
            del self._entries[entry.key]
            entry.task = None  # a task still running finishes on its own
            riders, entry.riders = entry.riders, None
            if riders:
                self.release(riders)

    async def cancel_unfinished(self) -> None:
        unfinished = list(self._unfinished)
        for task in unfinished:
            task.cancel()
        await asyncio.gather(*unfinished, return_exceptions=True)

    async def _run(self, tool: str, args: dict[str, ArgValue]) -> _CallResult:
        return await call_with_retries(self._client, tool, args, self._config, self._semaphore, self._stats)


class CallCounters(Protocol):
    retries: int
    failed_calls: int
    tool_time_s: float


class RetryableCallFailure(Exception):
    """What one attempt raises on a transient failure or a timeout: the data-call policy retries it."""


def data_call_retrying(config: ExecutorConfig, counters: CallCounters) -> tenacity.AsyncRetrying:
    """The retry policy of data-service calls: `config.retries` more attempts after the first,
    for transient failures and timeouts only, waiting `backoff_s * 2**(n-1)` before retry n.
    No jitter: the same failures give the same waits, so runs are reproducible."""

    def count_retry(_state: tenacity.RetryCallState) -> None:
        counters.retries += 1

    return tenacity.AsyncRetrying(
        stop=tenacity.stop_after_attempt(config.retries + 1),
        wait=tenacity.wait_exponential(multiplier=config.backoff_s, exp_base=2, min=0),
        retry=tenacity.retry_if_exception_type(RetryableCallFailure),
        before_sleep=count_retry,
        sleep=asyncio.sleep,
        reraise=True,
    )


async def call_with_retries(client: ToolClient, tool: str, args: Mapping[str, ArgValue], config: ExecutorConfig,
                            semaphore: asyncio.Semaphore, counters: CallCounters) -> _CallResult:
    """One tool call under the executor's policy: bounded by `semaphore`, timed out, transient
    failures and timeouts retried by `data_call_retrying`; a failure is returned, not raised.
    Shared by the batch executor and the construction replays, so both treat a provider alike."""
    attempts = config.retries + 1
    try:
        async for attempt in data_call_retrying(config, counters):
            with attempt:
                return await _call_once(client, tool, args, config, semaphore, counters)
    except RetryableCallFailure as exc:
        counters.failed_calls += 1
        plural = "s" if attempts > 1 else ""
        return CallFailure(tool, f"{exc} (gave up after {attempts} attempt{plural})")
    raise AssertionError("unreachable: the retry loop returns or raises")


async def _call_once(client: ToolClient, tool: str, args: Mapping[str, ArgValue], config: ExecutorConfig,
                     semaphore: asyncio.Semaphore, counters: CallCounters) -> _CallResult:
    """One attempt: a response, a CallFailure for good, or `RetryableCallFailure` to be retried. The
    semaphore is held for the attempt only, never during the wait before the next one."""
    async with semaphore:
        started = time.perf_counter()
        try:
            async with asyncio.timeout(config.call_timeout_s) as deadline:
                context_token = _CALL_TIMEOUT.set(deadline)
                try:
                    # A copy: the client must not be able to alter the recorded arguments.
                    response = await client.call_tool(tool, dict(args))
                finally:
                    _CALL_TIMEOUT.reset(context_token)
        except ToolCallError as exc:
            if not exc.transient:
                counters.failed_calls += 1
                return CallFailure(tool, exc.message)
            raise RetryableCallFailure(exc.message) from None
        except TimeoutError:
            raise RetryableCallFailure(f"timed out after {config.call_timeout_s:g} s") from None
        finally:
            counters.tool_time_s += time.perf_counter() - started
    if not isinstance(response, dict):
        counters.failed_calls += 1
        return CallFailure(tool, f"returned {type(response).__name__}, expected a JSON object")
    return response


def _answer(
    question: Question,
    as_of: dt.date,
    sent_args: dict[str, dict[str, ArgValue]],
    *,
    status: str,
    error: str | None = None,
    answer: str | None = None,
    value: float | int | str | None = None,
    unit: str | None = None,
    observed_period: str | None = None,
) -> GoldAnswer:
    return GoldAnswer(
        qid=question.qid,
        date=as_of,
        status=status,
        answer=answer,
        value=value,
        unit=unit,
        observed_period=observed_period,
        args=sent_args,
        match=question.match,
        error=error,
    )


class _Plan:
    """A program before it runs: its call levels, and its first-level calls resolved and held.

    `first` resolves a prefix of the first level: it stops before a call whose arguments cannot
    be resolved or carry credentials, which the program then meets (and reports) as it runs.
    `group` orders the batch: the earliest-met of its first-level calls, so that programs
    sharing a call run close together and its response is released soon after.
    """

    __slots__ = ("levels", "problem", "first", "held", "group")

    def __init__(self, program: Program, as_of: dt.date, calls: _SharedCalls) -> None:
        self.first: list[tuple[dict[str, ArgValue], _Entry]] = []
        self.problem: ProgramError | None = None
        try:
            self.levels = call_levels(program)
        except ProgramError as exc:
            self.levels, self.problem = [], exc
        for call in self.levels[0] if self.levels else ():
            try:
                args = concrete_args(call, as_of, {})  # no refs on the first level
            except (ExtractionEmpty, *PROGRAM_ERRORS):
                break
            if secret_arg_names(args):
                break
            self.first.append((args, calls.hold(call_key(call.tool, args))))
        self.held: list[_Entry] = [entry for _, entry in self.first]
        self.group = min((entry.seen for entry in self.held), default=-1)


async def _execute_program(question: Question, as_of: dt.date, calls: _SharedCalls, plan: _Plan) -> GoldAnswer:
    program = question.program
    responses: dict[str, dict[str, Any]] = {}
    sent_args: dict[str, dict[str, ArgValue]] = {}
    if plan.problem is not None:
        return _answer(question, as_of, sent_args, status="error", error=str(plan.problem))
    anchors = plan.held[:len(plan.first)]
    for depth, level in enumerate(plan.levels):
        in_flight: list[tuple[str, str, asyncio.Task[_CallResult]]] = []
        for position, call in enumerate(level):
            if depth == 0 and position < len(plan.first):
                args, entry = plan.first[position]
            else:
                try:
                    args = concrete_args(call, as_of, responses)
                except ExtractionEmpty as exc:
                    return _answer(question, as_of, sent_args, status="empty", error=located(exc, f"{call.id} {call.tool}"))
                except PROGRAM_ERRORS as exc:
                    return _answer(question, as_of, sent_args, status="error", error=f"{call.id} {call.tool}: {exc}")
                secrets = secret_arg_names(args)
                if secrets:
                    return _answer(
                        question, as_of, sent_args, status="error",
                        error=f"{call.id} {call.tool}: argument(s) {', '.join(secrets)} look like "
                        "credentials; a program never carries credentials, the client does",
                    )
                entry = calls.hold_further(call_key(call.tool, args), plan.held, anchors)
            sent_args[call.id] = args
            in_flight.append((call.id, call.tool, calls.request(call.tool, args, entry)))
        # Awaited in call order, so the failure reported is deterministic, not the fastest one.
        for call_id, tool, task in in_flight:
            result = await task
            if isinstance(result, CallFailure):
                return _answer(
                    question, as_of, sent_args, status="error", error=f"{call_id} {tool}: {result.message}"
                )
            responses[call_id] = result
    try:
        outcome = run_extractor(program.extract, responses, as_of)
    except ExtractionEmpty as exc:
        return _answer(question, as_of, sent_args, status="empty", error=located(exc, "extract"))
    except PROGRAM_ERRORS as exc:
        return _answer(question, as_of, sent_args, status="error", error=f"extract: {exc}")
    return _answer(
        question, as_of, sent_args,
        status=outcome.status,
        error=outcome.error,
        answer=outcome.answer,
        value=outcome.value,
        unit=outcome.unit,
        observed_period=outcome.observed_period,
    )


@contextlib.contextmanager
def existing_objects_exempt_from_gc() -> Iterator[None]:
    """Keep the cyclic GC from rescanning everything that exists before the batch starts.

    A pool of thousands of validated questions is millions of long-lived objects; each full
    collection triggered by the batch's allocations would walk all of them again (measured:
    about 40 % of a 10,000-program run). Freezing moves them to the permanent generation for
    the duration; reference counting still frees everything as usual. A caller that froze
    objects itself (e.g. a pre-forking server) keeps its freeze: we only undo our own.
    """
    already_frozen = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not already_frozen:
            gc.unfreeze()


async def execute_programs(
    questions: Sequence[Question],
    as_of: dt.date,
    client: ToolClient,
    config: ExecutorConfig = ExecutorConfig(),
) -> tuple[list[GoldAnswer], ExecutionStats]:
    """Run every question's gold program for `as_of`; return answers sorted by qid and stats.

    Only `qid`, `program` and `match` of each question are read. At most
    `config.max_programs_in_flight` programs run at once, grouped so that programs sharing a
    call run together; a response is dropped once no program left needs it.
    """
    duplicates = sorted(q for q, n in Counter(q.qid for q in questions).items() if n > 1)
    if duplicates:
        raise ValueError(f"duplicate qids in the questions to execute: {', '.join(duplicates[:10])}")
    started = time.perf_counter()
    stats = ExecutionStats(programs=len(questions))
    calls = _SharedCalls(client, config, stats)
    answers: list[GoldAnswer | None] = [None] * len(questions)
    with existing_objects_exempt_from_gc():
        plans: list[_Plan | None] = [_Plan(q.program, as_of, calls) for q in questions]
        # Stable: programs of one group keep the caller's order.
        pending = iter(sorted(range(len(plans)), key=lambda i: plans[i].group))  # type: ignore[union-attr]

        async def run_pending() -> None:
            for index in pending:  # one iterator shared by every worker: each program runs once
                plan = plans[index]
                plans[index] = None
                assert plan is not None
                try:
                    answers[index] = await _execute_program(questions[index], as_of, calls, plan)
                finally:
                    calls.release(plan.held)

        workers = [asyncio.create_task(run_pending()) for _ in range(min(config.max_programs_in_flight, len(plans)))]
        try:
            await asyncio.gather(*workers)
        finally:
            # Only reached with work left when a program raised: stop the rest before re-raising.
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            await calls.cancel_unfinished()
    stats.wall_time_s = time.perf_counter() - started
    return sorted(answers, key=lambda a: a.qid), stats  # type: ignore[union-attr]


def execute_programs_sync(
    questions: Sequence[Question],
    as_of: dt.date,
    client: ToolClient,
    config: ExecutorConfig = ExecutorConfig(),
) -> tuple[list[GoldAnswer], ExecutionStats]:
    """`execute_programs` for callers without an event loop (the client must not be bound to one)."""
    return aio.run(execute_programs(questions, as_of, client, config))
