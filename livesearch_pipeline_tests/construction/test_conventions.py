"""The conventions of the gold programs (issue 28, DESIGN "Conventions"): ties, windows, the
semantic rules and honest tiers, each where construction and the refresh enforce it.

Hand-written records and a fake data service (livesearch_pipeline_tests/core/fakes.py): every
expected value below is computed by hand in the comments.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import anyio
import pytest

from livesearch_pipeline.construction.dynamics import DayAnswer, DynamicsPolicy, decide, replay_days, structural_tier
from livesearch_pipeline.construction.enumerate import _Counts, drafts_for, unanswered_filter
from livesearch_pipeline.construction.semantics import aggregate_reason, plain_twin, program_reason, selection_reason
from livesearch_pipeline.core.calendars import sessions_between
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.executor import execute_programs
from livesearch_pipeline.core.models import (
    Call,
    Combine,
    DateSpec,
    Extractor,
    Format,
    MatchRule,
    Program,
    RecordJoin,
    Selection,
    ValueRef,
)
from livesearch_pipeline.core.program import window_rows
from livesearch_pipeline.core.snapshot import withdrawn_answers
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline_tests.construction.builders import YMD, candidate, entity
from livesearch_pipeline_tests.core.fakes import FakeToolClient

CLOCK = dt.date(2026, 11, 27)  # a Friday, a Shanghai session
CODE = "600519.SH"
# Closes of the last seven sessions up to CLOCK. 5 sessions before 11-27 is 11-20
# (11-27, 26, 25, 24, 23 are 0..4 back).
CLOSES = {"20261119": 9.50, "20261120": 10.00, "20261123": 10.40, "20261124": 10.20, "20261125": 10.90,
          "20261126": 11.10, "20261127": 11.25}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    service = DataService(config=ServiceConfig(clock=CLOCK), market=shared_market(DEFAULT_SEED))

    async def listing() -> Catalog:
        async with McpToolClient.in_process(service) as client:
            return await client.list_tools()
    return anyio.run(listing)


def _daily(args: dict[str, Any]) -> dict[str, Any]:
    start, end = (dt.datetime.strptime(args[k], YMD).date() for k in ("start_date", "end_date"))
    days = [d.strftime(YMD) for d in reversed(sessions_between("XSHG", start, end))]
    return {"items": [{"ts_code": args["ts_code"], "trade_date": d, "close": CLOSES[d]} for d in days if d in CLOSES]}


class _Job:
    def __init__(self, qid: str, program: Program) -> None:
        self.qid, self.program, self.match = qid, program, MatchRule(rule="approx", unit="CNY", decimals=2)


def _run(programs: dict[str, Program], tools: dict) -> dict[str, Any]:
    async def go():
        answers, _ = await execute_programs([_Job(q, p) for q, p in programs.items()], CLOCK, FakeToolClient(tools))
        return {a.qid: a for a in answers}
    return anyio.run(go)


# --------------------------------------------------------------------------- windows


def test_a_5_session_change_spans_6_closes_and_a_5_session_mean_5_rows(catalog):
    daily = catalog.get("daily")
    records = [{"ts_code": CODE, "trade_date": d, "close": c} for d, c in sorted(CLOSES.items(), reverse=True)]
    drafts = drafts_for(daily, entity(CODE, 5), records, _Counts())
    by_shape = {(d.anchor, d.aggregate): d.program for d in drafts}
    change, pct, mean = (by_shape[("window:5", agg)] for agg in ("change", "pct_change", "mean"))
    assert change.calls[0].dates["start_date"].sessions_back == 5  # N intervals: from the close 5 sessions back
    assert pct.calls[0].dates["start_date"].sessions_back == 5
    assert mean.calls[0].dates["start_date"].sessions_back == 4  # N rows
    assert {p.calls[0].dates["end_date"].sessions_back for p in (change, pct, mean)} == {0}
    answers = _run({"ls-00000000000000c1": change, "ls-00000000000000c2": pct, "ls-00000000000000c3": mean},
                   {"daily": _daily})
    got_change, got_pct, got_mean = (answers[f"ls-00000000000000c{i}"] for i in (1, 2, 3))
    # 11.25 - 10.00 (the close of 11-20) = 1.25, over the six closes 11-20..11-27.
    assert got_change.value == pytest.approx(1.25) and got_change.answer == "1.25 CNY"
    assert got_change.observed_period == "20261120..20261127"
    assert got_change.args["c1"]["start_date"] == "20261120"
    # 1.25 / 10.00 = 12.50%.
    assert got_pct.answer == "12.50%"
    # (10.40 + 10.20 + 10.90 + 11.10 + 11.25) / 5 = 10.77, over the five rows 11-23..11-27.
    assert got_mean.answer == "10.77 CNY" and got_mean.observed_period == "20261123..20261127"


def test_window_rows_is_the_one_convention():
    assert [window_rows(agg, 20) for agg in ("change", "pct_change", "mean", "sum", "max", "min", "std", None)] == \
        [21, 21, 20, 20, 20, 20, 20, 20]


# --------------------------------------------------------------------------- ties


def _weights(args: dict[str, Any]) -> dict[str, Any]:
    # Capped weights: two constituents at the 30.0% cap (the 801080.SI).
    members = [("601682.SH", 30.0), ("603899.SH", 30.0), ("600000.SH", 12.5)]
    return {"items": [{"index_code": args["index_code"], "trade_date": args["trade_date"], "con_code": c, "weight": w}
                      for c, w in members]}


def _heaviest_constituent_close() -> Program:
    c1 = Call(id="c1", tool="index_weight", args={"index_code": "801080.SI"},
              dates={"trade_date": DateSpec(sessions_back=0, calendar="XSHG", fmt=YMD)})
    top = ValueRef(call="c1", select=Selection(mode="latest", key="trade_date", key_fmt=YMD), field="weight",
                   aggregate="argmax", arg_field="con_code")
    c2 = Call(id="c2", tool="daily", refs={"ts_code": top},
              dates={"start_date": DateSpec(sessions_back=5, calendar="XSHG", fmt=YMD),
                     "end_date": DateSpec(sessions_back=0, calendar="XSHG", fmt=YMD)})
    return Program(calls=[c1, c2], extract=Extractor(call="c2", select=Selection(mode="latest", key="trade_date"),
                                                     field="close", format=Format(kind="number", decimals=2,
                                                                                  unit="CNY")))


def test_a_tie_at_the_top_is_withdrawn_with_its_reason_naming_the_keys_and_value():
    qid = "ls-00000000000000aa"
    answer = _run({qid: _heaviest_constituent_close()}, {"index_weight": _weights, "daily": _daily})[qid]
    assert answer.status == "empty" and answer.answer is None
    assert answer.error == "tie: 601682.SH and 603899.SH at 30.0 (c2 daily; call 'c2' refs.ts_code from call 'c1')"
    # What the refresh lists in the manifest's `withdrawn` (core.snapshot.withdrawn_answers).
    assert withdrawn_answers([answer]) == {qid: f"empty: {answer.error}"}
    assert withdrawn_answers([answer])[qid].startswith("empty: tie: 601682.SH and 603899.SH at 30.0")


def test_a_tie_drops_the_candidate_at_enumeration_and_in_the_replay():
    assert unanswered_filter("empty", "tie: 601682.SH and 603899.SH at 30.0 (c2 daily: ...)") == "tie_at_deciding_value"
    assert unanswered_filter("empty", "not meaningful: combine 'ratio' over a base of -0.07 (not positive)") == \
        "semantic_nonpositive_base"
    assert unanswered_filter("empty", "extract: selection 'latest' matched no record") == "no_value_empty"
    assert unanswered_filter("error", "c1 daily: boom") == "no_value_error"
    # The replay: a candidate that ties on one replayed day (day 7 of 21) is dropped, with that day.
    days = replay_days("XSHG", CLOCK, 21)
    answers = [DayAnswer("ok", f"{10 + i / 10:.2f}", 10 + i / 10, "CNY") for i in range(21)]
    answers[7] = DayAnswer("empty", error="tie: 601682.SH and 603899.SH at 30.0 (c2 daily: ...)")
    decision = decide(candidate(CODE), days, answers, calendar="XSHG", tool_cadence="daily", static_tool=False,
                      point_in_time=True, policy=DynamicsPolicy(workers=1))
    assert decision.dropped == "dynamics_tie"
    assert decision.detail == f"{days[7].isoformat()}: tie: 601682.SH and 603899.SH at 30.0 (c2 daily: ...)"
    answers[7] = DayAnswer("empty", error="not meaningful: combine 'ratio' over a base of -0.07 (not positive)")
    assert decide(candidate(CODE), days, answers, calendar="XSHG", tool_cadence="daily", static_tool=False,
                  point_in_time=True, policy=DynamicsPolicy(workers=1)).dropped == "dynamics_not_meaningful"


# --------------------------------------------------------------------------- semantic rules


@pytest.mark.parametrize(("tool", "field", "aggregate", "reason"), [
    ("daily", "open", "pct_change", "semantic_aggregate_of_session_open"),  # open-to-open over 5 or 60 sessions
    ("daily", "open", "change", "semantic_aggregate_of_session_open"),
    ("fx_daily", "ask_open", "mean", "semantic_aggregate_of_session_open"),  # the average opening ask
    ("index_daily", "open", "max", "semantic_aggregate_of_session_open"),
    ("fx_daily", "bid_close", "change", "semantic_change_of_fx_quote"),
    ("fx_daily", "ask_close", "pct_change", "semantic_change_of_fx_quote"),
    ("fx_daily", "bid_close", "mean", None),  # an average rate is asked
    ("daily", "open", None, None),  # the opening price of a day is asked
    ("daily", "close", "pct_change", None),
])
def test_no_aggregate_of_an_opening_print_and_no_change_of_an_fx_quote(tool, field, aggregate, reason):
    assert aggregate_reason(tool, field, aggregate) == reason


def test_the_opening_price_on_the_day_of_an_extreme_stays_a_question():
    bars = Call(id="c1", tool="daily", args={"ts_code": CODE},
                dates={"start_date": DateSpec(sessions_back=19, calendar="XSHG", fmt=YMD),
                       "end_date": DateSpec(sessions_back=0, calendar="XSHG", fmt=YMD)})
    every = Selection(mode="all", key="trade_date")

    def open_on_the_highest_close(field: str) -> Program:
        return Program(calls=[bars], extract=Extractor(call="c1", select=every, field="close", aggregate="argmax",
                                                       arg_field=field, format=Format(kind="number", decimals=2)))
    assert program_reason(open_on_the_highest_close("open")) is None
    assert program_reason(open_on_the_highest_close("pre_close")) == "semantic_arg_field_of_derived"


def _pinned(tool: str, where: dict[str, Any], field: str) -> Program:
    call = Call(id="c1", tool=tool, args={"ts_code": CODE},
                dates={"end_date": DateSpec(period="year", periods_back=1, fmt=YMD)})
    return Program(calls=[call], extract=Extractor(
        call="c1", select=Selection(mode="latest", key="end_date", key_fmt=YMD, where=where), field=field,
        format=Format(kind="integer", unit="shares")))


def test_no_selection_on_a_person_by_name_and_position(catalog):
    person = _pinned("stk_rewards", {"name": "暨舒桐", "title": "总经理"}, "hold_vol")
    assert selection_reason(person, catalog) == "semantic_select_on_person_and_position"
    holder = _pinned("top10_holders", {"holder_name": "国合资产管理有限公司"}, "hold_amount")
    assert selection_reason(holder, catalog) is None  # a holder of record is one series, a fair question
    assert selection_reason(_heaviest_constituent_close(), catalog) is None


def test_an_adjusted_return_is_compared_with_its_plain_twin():
    bars = Call(id="c1", tool="daily", args={"ts_code": CODE},
                dates={"start_date": DateSpec(sessions_back=5, calendar="XSHG", fmt=YMD),
                       "end_date": DateSpec(sessions_back=0, calendar="XSHG", fmt=YMD)})
    factors = bars.model_copy(update={"id": "c2", "tool": "adj_factor"})
    adjusted = Program(calls=[bars, factors], extract=Extractor(
        call="c1", select=Selection(mode="all", key="trade_date"), field="close", aggregate="pct_change",
        times=RecordJoin(call="c2", field="adj_factor"), format=Format(kind="percent", decimals=2)))
    twin = plain_twin(adjusted)
    assert twin is not None and twin.extract.times is None and twin.extract.aggregate == "pct_change"
    assert plain_twin(twin) is None

    def factor(constant: bool):
        def handler(args: dict[str, Any]) -> dict[str, Any]:
            # An ex-date on 11-25 moves the factor from 1.0 to 1.1, unless it is constant.
            return {"items": [{"trade_date": r["trade_date"], "adj_factor": 1.1 if (not constant and
                                                                                       r["trade_date"] >= "20261125")
                               else 1.0} for r in _daily(args)["items"]]}
        return handler

    programs = {"ls-00000000000000a1": adjusted, "ls-00000000000000a2": twin}
    flat = _run(programs, {"daily": _daily, "adj_factor": factor(True)})
    assert flat["ls-00000000000000a1"].answer == flat["ls-00000000000000a2"].answer == "12.50%"  # a disguise
    moved = _run(programs, {"daily": _daily, "adj_factor": factor(False)})
    # 11.25 × 1.1 / 10.00 - 1 = 23.75%, against the plain 12.50%: a real adjusted return.
    assert moved["ls-00000000000000a1"].answer == "23.75%" and moved["ls-00000000000000a2"].answer == "12.50%"


# --------------------------------------------------------------------------- tiers


def _window(tool: str, code: str, n: int) -> Call:
    return Call(id="c1", tool=tool, args={"ts_code": code},
                dates={"start_date": DateSpec(sessions_back=n, calendar="XSHG", fmt=YMD),
                       "end_date": DateSpec(sessions_back=0, calendar="XSHG", fmt=YMD)})


def test_tier_reasons_say_why():
    dependent = structural_tier(_heaviest_constituent_close())
    assert dependent == ("T3", "two dependent calls: index_weight → daily (ts_code from the argmax con_code)")
    every = Selection(mode="all", key="trade_date")
    compare = Program(calls=[_window("daily", CODE, 5), _window("daily", "000001.SZ", 5).model_copy(update={"id": "c2"})],
                      extract=Extractor(call="c1", select=every, field="close", aggregate="pct_change",
                                        combine=Combine(op="difference", other=ValueRef(
                                            call="c2", select=every, field="close", aggregate="pct_change")),
                                        format=Format(kind="percent", decimals=2)))
    assert structural_tier(compare) == ("T3", "cross-call arithmetic: difference of daily (c1) and daily (c2)")
    # A single call's sum or margin is no multi-call derivation: T1/T2 by its dynamics.
    total = Program(calls=[_window("daily", CODE, 20)], extract=Extractor(
        call="c1", select=every, field="vol", aggregate="sum", format=Format(kind="number", decimals=2)))
    assert structural_tier(total) == (None, "one aggregate of one call (sum of 'vol' over a window)")
    latest = Selection(mode="latest", key="end_date")
    margin = Program(calls=[Call(id="c1", tool="income", args={"ts_code": CODE},
                                 dates={"start_date": DateSpec(days_back=800, fmt=YMD),
                                        "end_date": DateSpec(days_back=0, fmt=YMD)})],
                     extract=Extractor(call="c1", select=latest, field="n_income",
                                       combine=Combine(op="ratio", other=ValueRef(call="c1", select=latest,
                                                                                  field="revenue")),
                                       format=Format(kind="percent", decimals=2, scale=100.0)))
    assert structural_tier(margin) == (None, "one call's arithmetic (ratio of records of one income response)")
    volatility = total.model_copy(update={"extract": total.extract.model_copy(update={"aggregate": "std",
                                                                                      "field": "pct_chg"})})
    assert structural_tier(volatility) == ("T3", "a path over a window: std of 'pct_chg' over every session of it")
    for program in (total, margin):
        days = replay_days("XSHG", CLOCK, 21)
        answers = [DayAnswer("ok", f"{10 + i / 10:.2f}", 10 + i / 10, "CNY") for i in range(21)]
        d = decide(candidate(CODE).model_copy(update={"program": program}), days, answers, calendar="XSHG",
                   tool_cadence="daily", static_tool=False, point_in_time=True,
                   policy=DynamicsPolicy(workers=1), rule=MatchRule(rule="approx", unit="CNY", decimals=2)).dynamics
        assert d.tier == "T1" and "calls)" not in d.tier_reason and "multi-call" not in d.tier_reason
