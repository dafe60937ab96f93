"""The executor streams programs through a bounded window and releases responses after their last use,
without changing what is shared or what is answered."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import pytest

from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.core.executor import ExecutorConfig, execute_programs
from livesearch_pipeline.core.models import Call, Extractor, Program, Selection, ValueRef
from livesearch_pipeline.core.snapshot import render_answers
from livesearch_pipeline_tests.core.fakes import MARKET_TOOLS, FakeToolClient, close_of
from livesearch_pipeline_tests.core.test_executor import (
    AS_OF,
    PRICE,
    latest_close,
    mean_close,
    question,
    session,
)

CODES = [f"6{i:05d}.SH" for i in range(1, 61)]


def window(programs: int, concurrency: int = 2) -> ExecutorConfig:
    return ExecutorConfig(max_concurrency=concurrency, retries=0, backoff_s=0.0, call_timeout_s=2.0,
                          max_programs_in_flight=programs)


class _Response(dict):
    """A response that can be watched with a weak reference (a plain dict cannot)."""


class WatchingClient(FakeToolClient):
    """Records, at each call, how many earlier responses are still alive somewhere."""

    def __init__(self) -> None:
        super().__init__(MARKET_TOOLS, delay_s=0.001)
        self._responses: list[weakref.ref[_Response]] = []
        self.alive_at_call: list[int] = []

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.alive_at_call.append(sum(1 for ref in self._responses if ref() is not None))
        response = _Response(await super().call_tool(name, arguments))
        self._responses.append(weakref.ref(response))
        return response


def top_member_close(field: str = "close") -> Program:
    """index_weight -> the heaviest member -> its daily bar: a call resolved from a ref."""
    top_member = ValueRef(call="c1", select=Selection(mode="all", key="trade_date"), field="weight",
                          aggregate="argmax", arg_field="con_code")
    return Program(
        calls=[Call(id="c1", tool="index_weight", args={"index_code": "000300.SH"}, dates={"trade_date": session(0)}),
               Call(id="c2", tool="daily", dates={"trade_date": session(0)}, refs={"ts_code": top_member})],
        extract=Extractor(call="c2", select=Selection(mode="latest", key="trade_date"), field=field, format=PRICE),
    )


def test_responses_are_released_after_their_last_use():
    # Two programs per entity share one call; the caller lists every entity's first program
    # before any second one, so a batch holding every response would hold all 60 at the end.
    questions = [question(i, latest_close(code)) for i, code in enumerate(CODES, 1)]
    questions += [question(100 + i, mean_close(code, 5)) for i, code in enumerate(CODES, 1)]
    client = WatchingClient()
    answers, stats = asyncio.run(execute_programs(questions, AS_OF, client, window(2)))
    assert all(a.status == "ok" for a in answers)
    assert (stats.tool_calls_requested, stats.unique_calls) == (120, 60)  # still shared across the batch
    assert len(client.alive_at_call) == 60
    assert max(client.alive_at_call) <= 4, client.alive_at_call  # window + calls in flight, not 60


def test_programs_in_flight_are_bounded_by_the_window():
    questions = [question(i, latest_close(code)) for i, code in enumerate(CODES, 1)]
    client = FakeToolClient(MARKET_TOOLS, delay_s=0.002)
    answers, stats = asyncio.run(execute_programs(questions, AS_OF, client, window(3, concurrency=16)))
    assert all(a.status == "ok" for a in answers) and stats.unique_calls == 60
    assert client.max_in_flight == 3  # the semaphore would allow 16; three programs are running

    client = FakeToolClient(MARKET_TOOLS, delay_s=0.002)
    asyncio.run(execute_programs(questions, AS_OF, client, window(512, concurrency=16)))
    assert client.max_in_flight == 16


def test_a_call_resolved_from_a_ref_is_shared_by_later_programs_of_the_same_first_call():
    questions = [question(1, top_member_close("close")), question(2, latest_close("600009.SH")),
                 question(3, top_member_close("vol"))]
    client = FakeToolClient(MARKET_TOOLS)
    answers, stats = asyncio.run(execute_programs(questions, AS_OF, client, window(1)))
    assert [a.status for a in answers] == ["ok", "ok", "ok"]
    assert answers[0].value == close_of("600002.SH", AS_OF)
    # One index_weight, one daily of the heaviest member (not two), one daily of 600009.SH.
    assert (stats.tool_calls_requested, stats.unique_calls) == (5, 3)
    assert sorted(name for name, _ in client.calls) == ["daily", "daily", "index_weight"]


def _mixed_batch():
    unknown_tool = Program(
        calls=[Call(id="c1", tool="no_such_tool", args={"ts_code": "600001.SH"})],
        extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close", format=PRICE),
    )
    no_member = Program(
        calls=[Call(id="c1", tool="index_weight", args={"index_code": "000300.SH"}, dates={"trade_date": session(0)})],
        extract=Extractor(call="c1", select=Selection(mode="match", key="con_code", value="699999.SH"),
                          field="weight", format=PRICE),
    )
    questions = [question(1, unknown_tool), question(2, no_member), question(3, top_member_close())]
    for i, code in enumerate(CODES[:20]):
        questions.append(question(10 + i, latest_close(code) if i % 2 else mean_close(code, 1 + i % 7)))
        questions.append(question(50 + i, mean_close(CODES[(i * 7) % 20], 5)))
    return questions


@pytest.mark.parametrize("programs", [1, 3, 512])
def test_answers_do_not_depend_on_the_window(programs: int):
    reference, reference_stats = asyncio.run(execute_programs(_mixed_batch(), AS_OF, FakeToolClient(MARKET_TOOLS),
                                                              window(10_000, concurrency=8)))
    answers, stats = asyncio.run(execute_programs(_mixed_batch(), AS_OF, FakeToolClient(MARKET_TOOLS),
                                                  window(programs, concurrency=8)))
    assert {a.status for a in answers} == {"ok", "empty", "error"}
    assert render_answers(answers) == render_answers(reference)
    assert (stats.tool_calls_requested, stats.unique_calls) == (reference_stats.tool_calls_requested,
                                                               reference_stats.unique_calls)


def test_a_client_bug_aborts_a_streamed_batch_and_leaves_nothing_running():
    client = FakeToolClient(MARKET_TOOLS, delay_s=0.001)
    client.script("daily", RuntimeError("client bug"), when={"ts_code": CODES[30]})
    questions = [question(i, latest_close(code)) for i, code in enumerate(CODES, 1)]

    async def scenario():
        with pytest.raises(RuntimeError, match="client bug"):
            await execute_programs(questions, AS_OF, client, window(4))
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    assert asyncio.run(scenario()) == []
    assert len(client.calls) < len(CODES)  # the programs after the failure never started


def test_a_permanent_failure_is_shared_while_needed():
    client = FakeToolClient(MARKET_TOOLS)
    client.script("daily", ToolCallError("daily", "invalid ts_code"), when={"ts_code": "600001.SH"})
    questions = [question(1, latest_close("600001.SH")), question(2, latest_close("600002.SH")),
                 question(3, mean_close("600001.SH", 5))]
    answers, stats = asyncio.run(execute_programs(questions, AS_OF, client, window(1)))
    assert [a.status for a in answers] == ["error", "ok", "error"]
    assert answers[2].error == "c1 daily: invalid ts_code"
    assert (stats.unique_calls, stats.failed_calls) == (2, 1)


def test_window_must_be_positive():
    with pytest.raises(ValueError, match="max_programs_in_flight must be >= 1, got 0"):
        ExecutorConfig(max_programs_in_flight=0)
