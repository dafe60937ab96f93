"""Program executor: level-by-level execution, shared calls, retries, failures per program."""

from __future__ import annotations

import asyncio
import datetime as dt
import math

import pytest

from livesearch_pipeline.core.calendars import sessions_back
from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.core.executor import (
    ExecutorConfig,
    execute_programs,
    execute_programs_sync,
    secret_arg_names,
)
from livesearch_pipeline.core.extract import round_half_up
from livesearch_pipeline.core.models import (
    Call,
    DateSpec,
    Extractor,
    Format,
    MatchRule,
    Program,
    Provenance,
    Question,
    Selection,
    ValueRef,
)
from livesearch_pipeline_tests.core.fakes import MARKET_TOOLS, FakeToolClient, close_of

AS_OF = dt.date(2026, 3, 16)  # a Monday and an XSHG session
APPROX = MatchRule(rule="approx", abs_tol=0.005, unit="CNY", decimals=2)
FAST = ExecutorConfig(max_concurrency=8, retries=2, backoff_s=0.001, call_timeout_s=1.0)
PRICE = Format(kind="number", decimals=2, unit="CNY")


def session(n: int) -> DateSpec:
    return DateSpec(sessions_back=n, calendar="XSHG")


def daily_call(code: str, window: int = 5, call_id: str = "c1") -> Call:
    return Call(id=call_id, tool="daily", args={"ts_code": code},
                dates={"start_date": session(window - 1), "end_date": session(0)})


def latest_close(code: str, window: int = 5) -> Program:
    return Program(
        calls=[daily_call(code, window)],
        extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close", format=PRICE),
    )


def mean_close(code: str, window: int) -> Program:
    return Program(
        calls=[daily_call(code, window)],
        extract=Extractor(call="c1", select=Selection(mode="all", key="trade_date"), field="close",
                          aggregate="mean", format=PRICE),
    )


def question(n: int, program: Program, entity: str = "600001.SH") -> Question:
    return Question(
        qid=f"ls-{n:016x}", question="What was the closing price on the most recent trading day?",
        program=program, match=APPROX, refresh_class="daily", tier="T1", asset_class="cn_equity",
        entity=entity, entity_name="Fictional Co", visibility=5, signature="sig-test",
        provenance=Provenance(verbalizer="template"),
    )


def run(questions, client, config=FAST, as_of=AS_OF):
    return asyncio.run(execute_programs(questions, as_of, client, config))


def ymd(day: dt.date) -> str:
    return day.strftime("%Y%m%d")


# --------------------------------------------------------------------------- results


def test_latest_close_answer_records_everything():
    client = FakeToolClient(MARKET_TOOLS)
    [answer], stats = run([question(1, latest_close("600001.SH"))], client)
    expected = close_of("600001.SH", AS_OF)
    assert answer.status == "ok" and answer.error is None
    assert answer.value == expected and answer.answer == f"{round_half_up(expected, 2)} CNY"
    assert answer.unit == "CNY" and answer.observed_period == "20260316"
    assert answer.date == AS_OF and answer.qid == "ls-0000000000000001" and answer.match == APPROX
    start = ymd(sessions_back("XSHG", AS_OF, 4))
    assert answer.args == {"c1": {"ts_code": "600001.SH", "start_date": start, "end_date": "20260316"}}
    assert client.calls == [("daily", {"ts_code": "600001.SH", "start_date": start, "end_date": "20260316"})]
    assert (stats.programs, stats.tool_calls_requested, stats.unique_calls) == (1, 1, 1)
    assert (stats.failed_calls, stats.retries) == (0, 0)
    assert 0 < stats.tool_time_s <= stats.wall_time_s


def test_program_is_redated_not_replayed():
    """The same program on a later date sends later dates and reads the later record."""
    program = latest_close("600001.SH")
    later = dt.date(2026, 3, 20)
    [first], _ = run([question(1, program)], FakeToolClient(MARKET_TOOLS))
    [second], _ = run([question(1, program)], FakeToolClient(MARKET_TOOLS), as_of=later)
    assert first.observed_period == "20260316" and second.observed_period == "20260320"
    assert second.args["c1"]["end_date"] == "20260320" and second.date == later
    assert second.value == close_of("600001.SH", later)


def test_mean_over_sessions_matches_independent_computation():
    client = FakeToolClient(MARKET_TOOLS)
    [answer], _ = run([question(1, mean_close("600002.SH", 20))], client)
    days = [sessions_back("XSHG", AS_OF, n) for n in range(20)]
    expected = math.fsum(close_of("600002.SH", d) for d in days) / 20
    assert answer.status == "ok" and answer.value == pytest.approx(expected, abs=1e-12)
    assert answer.observed_period == f"{ymd(days[-1])}..{ymd(days[0])}"


def test_identical_calls_run_once_across_programs():
    client = FakeToolClient(MARKET_TOOLS, delay_s=0.002)
    questions = [
        question(4, latest_close("600001.SH")),
        question(2, mean_close("600001.SH", 5)),  # same tool, same args as the one above
        question(3, latest_close("600001.SH")),
        question(1, latest_close("600002.SH")),
    ]
    answers, stats = run(questions, client)
    assert [a.qid for a in answers] == sorted(q.qid for q in questions)
    assert all(a.status == "ok" for a in answers)
    assert (stats.tool_calls_requested, stats.unique_calls) == (4, 2)
    assert sorted(args["ts_code"] for _, args in client.calls) == ["600001.SH", "600002.SH"]


def test_concurrency_is_bounded_by_the_semaphore():
    client = FakeToolClient(MARKET_TOOLS, delay_s=0.005)
    questions = [question(i, latest_close(f"6{i:05d}.SH")) for i in range(1, 41)]
    config = ExecutorConfig(max_concurrency=4, retries=0, backoff_s=0.0, call_timeout_s=1.0)
    answers, stats = run(questions, client, config)
    assert stats.unique_calls == 40 and all(a.status == "ok" for a in answers)
    assert client.max_in_flight == 4


def test_dag_resolves_arguments_from_an_earlier_call():
    top_member = ValueRef(call="c1", select=Selection(mode="all", key="trade_date"), field="weight",
                          aggregate="argmax", arg_field="con_code")
    program = Program(
        calls=[
            Call(id="c2", tool="daily", dates={"trade_date": session(0)}, refs={"ts_code": top_member}),
            Call(id="c1", tool="index_weight", args={"index_code": "000300.SH"}, dates={"trade_date": session(0)}),
        ],
        extract=Extractor(call="c2", select=Selection(mode="latest", key="trade_date"), field="close", format=PRICE),
    )
    client = FakeToolClient(MARKET_TOOLS)
    [answer], stats = run([question(1, program, entity="000300.SH")], client)
    assert answer.status == "ok", answer.error
    assert answer.value == close_of("600002.SH", AS_OF)
    assert answer.args == {
        "c1": {"index_code": "000300.SH", "trade_date": "20260316"},
        "c2": {"trade_date": "20260316", "ts_code": "600002.SH"},
    }
    assert [name for name, _ in client.calls] == ["index_weight", "daily"]
    assert stats.unique_calls == 2


def test_reference_selecting_nothing_is_empty_and_stops_the_program():
    nothing = ValueRef(call="c1", select=Selection(mode="all", key="trade_date"), field="weight",
                       aggregate="argmax", arg_field="con_code")
    program = Program(
        calls=[
            Call(id="c1", tool="index_weight", args={"index_code": "999999.SH"}, dates={"trade_date": session(0)}),
            Call(id="c2", tool="daily", dates={"trade_date": session(0)}, refs={"ts_code": nothing}),
        ],
        extract=Extractor(call="c2", select=Selection(mode="latest", key="trade_date"), field="close", format=PRICE),
    )
    client = FakeToolClient(MARKET_TOOLS)
    [answer], _ = run([question(1, program)], client)
    assert answer.status == "empty" and answer.answer is None
    assert answer.error.startswith("c2 daily:")
    assert list(answer.args) == ["c1"] and [n for n, _ in client.calls] == ["index_weight"]


def test_no_record_on_the_date_is_empty_never_an_older_record():
    # The window is a single non-session day: the executor must not reach back to Friday.
    program = Program(
        calls=[Call(id="c1", tool="daily", args={"ts_code": "600001.SH"},
                    dates={"start_date": DateSpec(days_back=1), "end_date": DateSpec(days_back=1)})],
        extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close", format=PRICE),
    )
    [answer], _ = run([question(1, program)], FakeToolClient(MARKET_TOOLS))  # 2026-03-15 is a Sunday
    assert answer.status == "empty" and answer.value is None
    assert answer.args["c1"]["end_date"] == "20260315"


def test_extraction_mismatch_is_an_error_naming_the_problem():
    program = Program(
        calls=[daily_call("600001.SH")],
        extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close",
                          format=Format(kind="date")),
    )
    [answer], _ = run([question(1, program)], FakeToolClient(MARKET_TOOLS))
    assert answer.status == "error" and "format 'date'" in answer.error


# --------------------------------------------------------------------------- failures


def test_transient_errors_are_retried_then_succeed():
    client = FakeToolClient(MARKET_TOOLS)
    client.script("daily", ToolCallError("daily", "overloaded", transient=True),
                  ToolCallError("daily", "overloaded", transient=True))
    [answer], stats = run([question(1, latest_close("600001.SH"))], client)
    assert answer.status == "ok"
    assert (stats.retries, stats.failed_calls, stats.unique_calls, len(client.calls)) == (2, 0, 1, 3)


def test_exhausted_retries_fail_every_program_that_needed_the_call():
    client = FakeToolClient(MARKET_TOOLS)
    client.script("daily", *[ToolCallError("daily", "overloaded", transient=True)] * 3,
                  when={"ts_code": "600001.SH"})
    shared = latest_close("600001.SH")
    questions = [question(1, shared), question(2, mean_close("600001.SH", 5)),
                 question(3, latest_close("600003.SH", window=6))]
    config = ExecutorConfig(max_concurrency=1, retries=2, backoff_s=0.001, call_timeout_s=1.0)
    answers, stats = run(questions, client, config)
    assert [a.status for a in answers] == ["error", "error", "ok"]
    for failed in answers[:2]:
        assert failed.error == "c1 daily: overloaded (gave up after 3 attempts)"
        assert failed.answer is None and failed.args["c1"]["ts_code"] == "600001.SH"
    assert (stats.failed_calls, stats.retries, stats.unique_calls) == (1, 2, 2)


def test_permanent_error_is_not_retried():
    client = FakeToolClient(MARKET_TOOLS)
    client.script("daily", ToolCallError("daily", "invalid ts_code"))
    [answer], stats = run([question(1, latest_close("600001.SH"))], client)
    assert answer.status == "error" and answer.error == "c1 daily: invalid ts_code"
    assert (stats.retries, stats.failed_calls, len(client.calls)) == (0, 1, 1)


def test_unknown_tool_is_an_error_for_that_program_only():
    bad = Program(
        calls=[Call(id="c1", tool="no_such_tool", args={"ts_code": "600001.SH"})],
        extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close", format=PRICE),
    )
    answers, _ = run([question(1, bad), question(2, latest_close("600001.SH"))], FakeToolClient(MARKET_TOOLS))
    assert answers[0].status == "error" and "unknown tool 'no_such_tool'" in answers[0].error
    assert answers[1].status == "ok"


def test_timeouts_are_retried_and_reported():
    client = FakeToolClient(MARKET_TOOLS)
    client.script("daily", 5.0, 5.0)
    config = ExecutorConfig(max_concurrency=2, retries=1, backoff_s=0.0, call_timeout_s=0.05)
    [answer], stats = run([question(1, latest_close("600001.SH"))], client, config)
    assert answer.status == "error"
    assert answer.error == "c1 daily: timed out after 0.05 s (gave up after 2 attempts)"
    assert stats.retries == 1 and stats.wall_time_s < 1.0

    client.script("daily", 5.0)  # one timeout, then a normal answer
    [answer], stats = run([question(1, latest_close("600001.SH"))], client, config)
    assert answer.status == "ok" and stats.retries == 1


def test_reported_failure_follows_call_order_not_completion_order():
    program = Program(
        calls=[daily_call("600001.SH", call_id="c1"), daily_call("600002.SH", window=3, call_id="c2")],
        extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close", format=PRICE),
    )
    client = FakeToolClient(MARKET_TOOLS)
    # c1 fails slowly, c2 fails at once: the answer names c1, the earlier call of the level.
    client.script("daily", (0.02, ToolCallError("daily", "slow failure")), when={"ts_code": "600001.SH"})
    client.script("daily", (0.0, ToolCallError("daily", "fast failure")), when={"ts_code": "600002.SH"})
    [answer], stats = run([question(1, program)], client)
    assert answer.error == "c1 daily: slow failure" and stats.failed_calls == 2


def test_secret_arguments_are_refused_and_never_sent():
    program = Program(
        calls=[Call(id="c1", tool="daily", args={"ts_code": "600001.SH", "api_token": "s3cr3t"})],
        extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close", format=PRICE),
    )
    client = FakeToolClient(MARKET_TOOLS)
    [answer], stats = run([question(1, program)], client)
    assert answer.status == "error" and "api_token" in answer.error and "s3cr3t" not in answer.model_dump_json()
    assert client.calls == [] and stats.tool_calls_requested == 0
    assert secret_arg_names({"Password": 1, "API-Key": 2, "apikey": 3, "ts_code": 4}) == ["API-Key", "Password", "apikey"]


def test_unexpected_client_exception_aborts_the_batch_loudly():
    client = FakeToolClient(MARKET_TOOLS, delay_s=0.001)
    client.script("daily", RuntimeError("client bug"))
    questions = [question(i, latest_close(f"6{i:05d}.SH")) for i in range(1, 20)]

    async def scenario():
        with pytest.raises(RuntimeError, match="client bug"):
            await execute_programs(questions, AS_OF, client, FAST)
        # Nothing of the batch is left running in the loop.
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    assert asyncio.run(scenario()) == []


def test_duplicate_qids_are_refused():
    with pytest.raises(ValueError, match="duplicate qids.*ls-0000000000000001"):
        run([question(1, latest_close("600001.SH")), question(1, latest_close("600002.SH"))],
            FakeToolClient(MARKET_TOOLS))


def test_calendar_out_of_range_is_a_program_error():
    [answer], _ = run([question(1, latest_close("600001.SH"))], FakeToolClient(MARKET_TOOLS),
                      as_of=dt.date(2030, 1, 2))
    assert answer.status == "error" and answer.error.startswith("c1 daily:") and "XSHG" in answer.error


def test_sync_wrapper_and_config_validation():
    answers, stats = execute_programs_sync([question(1, latest_close("600001.SH"))], AS_OF,
                                           FakeToolClient(MARKET_TOOLS), FAST)
    assert answers[0].status == "ok" and stats.programs == 1
    with pytest.raises(ValueError, match="max_concurrency"):
        ExecutorConfig(max_concurrency=0)
    with pytest.raises(ValueError, match="call_timeout_s"):
        ExecutorConfig(call_timeout_s=0)


def test_gc_freeze_is_undone_after_the_batch():
    import gc

    assert gc.get_freeze_count() == 0
    run([question(1, latest_close("600001.SH"))], FakeToolClient(MARKET_TOOLS))
    assert gc.get_freeze_count() == 0


def test_call_key_is_order_free_but_type_exact():
    from livesearch_pipeline.core.executor import call_key

    assert call_key("daily", {"a": "1", "b": 2}) == call_key("daily", {"b": 2, "a": "1"})
    keys = {call_key("daily", {"limit": v}) for v in (1, 1.0, True, "1")}
    assert len(keys) == 4
    assert call_key("daily", {"a": 1}) != call_key("weekly", {"a": 1})
