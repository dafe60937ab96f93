"""The two executions of the candidates (construction/enumerate.py): forked beside each other or
one after the other, the same answers."""

from __future__ import annotations

import asyncio
import datetime as dt

from livesearch_pipeline.construction.enumerate import _execute_twice, _Job
from livesearch_pipeline.core.executor import ExecutorConfig
from livesearch_pipeline.core.models import MatchRule
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline_tests.construction.builders import bar_program
from livesearch_pipeline_tests.core.fakes import MARKET_TOOLS, FakeToolClient, close_of

AS_OF = dt.date(2026, 11, 27)


def _jobs() -> list[_Job]:
    out = []
    for code in ("600001.SH", "600002.SH", "600003.SH"):
        for aggregate in (None, "mean", "pct_change"):
            program = bar_program(code, tool="daily", aggregate=aggregate, sessions=5)
            out.append(_Job(qid=compute_qid(program, code), program=program, match=MatchRule(rule="exact")))
    return out


def _run(fork: bool):
    client = FakeToolClient(MARKET_TOOLS)
    first, stats, second = asyncio.run(_execute_twice(_jobs(), AS_OF, client, ExecutorConfig(), fork))
    return first, stats, second, client


def test_the_forked_second_execution_answers_as_the_sequential_one():
    first, stats, second, client = _run(fork=True)
    s_first, s_stats, s_second, s_client = _run(fork=False)
    assert first == s_first and second == s_second and first == second
    assert [a.status for a in first] == ["ok"] * 9
    latest = {a.qid: a for a in first}[_jobs()[0].qid]
    assert latest.value == close_of("600001.SH", AS_OF)
    assert stats.unique_calls == s_stats.unique_calls == 6  # a change reads one close more
    # This process made the first execution's calls only; the child made the second's.
    assert len(client.calls) == 6 and len(s_client.calls) == 12
