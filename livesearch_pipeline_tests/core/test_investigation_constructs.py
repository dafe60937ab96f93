"""The program constructs of the T3 investigation families (issue 29): the drawdown aggregates,
a screen's membership set and threshold (`select.within`, `select.above`) and a pick among named
instruments (`extract.pick`) — executed on hand-made responses, ties included, and validated."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.core.extract import run_extractor
from livesearch_pipeline.core.models import (
    Call, DateSpec, Extractor, Format, Membership, Pick, Program, Selection, ValueRef,
)
from livesearch_pipeline.core.qid import compute_qid

DAY = dt.date(2026, 11, 27)
ALL = Selection(mode="all", key="trade_date")
PCT = Format(kind="percent", decimals=2, unit="%")
DAY_FMT = Format(kind="date", in_fmt="%Y%m%d", out_fmt="%Y-%m-%d")


def _bars(*closes: float) -> dict:
    # Newest first, as the service answers.
    rows = [{"trade_date": f"202611{i + 10:02d}", "close": c} for i, c in enumerate(closes)]
    return {"items": list(reversed(rows))}


def _drawdown(aggregate: str, fmt: Format, *closes: float):
    ex = Extractor(call="c1", select=ALL, field="close", aggregate=aggregate, format=fmt)
    return run_extractor(ex, {"c1": _bars(*closes)}, DAY)


def test_max_drawdown_is_the_largest_fall_from_a_running_peak():
    # Peaks 10 then 12; falls 10 -> 8 (20%) and 12 -> 9 (25%): the answer is 25%, peak 12, trough 9.
    closes = (10, 8, 11, 12, 10, 9, 11.5)
    assert _drawdown("max_drawdown", PCT, *closes).answer == "25.00%"
    assert _drawdown("drawdown_peak", DAY_FMT, *closes).answer == "2026-11-13"
    assert _drawdown("drawdown_trough", DAY_FMT, *closes).answer == "2026-11-15"


def test_a_window_that_never_falls_has_no_drawdown():
    out = _drawdown("max_drawdown", PCT, 10, 10.5, 11)
    assert out.status == "empty" and "no drawdown" in out.error


def test_drawdown_days_tie_when_two_days_share_the_trough_or_the_peak():
    trough = _drawdown("drawdown_trough", DAY_FMT, 10, 8, 10, 8)
    assert trough.status == "empty" and trough.error.startswith("tie: 20261111 and 20261113")
    peak = _drawdown("drawdown_peak", DAY_FMT, 10, 10, 7)
    assert peak.status == "empty" and peak.error.startswith("tie: 20261110 and 20261111")
    # The fall itself is one number whichever day it is reached on.
    assert _drawdown("max_drawdown", PCT, 10, 8, 10, 8).answer == "20.00%"


def _screen_responses() -> dict:
    members = {"items": [
        {"index_code": "X", "con_code": "A", "trade_date": "20261127", "weight": 40.0},
        {"index_code": "X", "con_code": "B", "trade_date": "20261127", "weight": 35.0},
        {"index_code": "X", "con_code": "C", "trade_date": "20261127", "weight": 25.0},
        {"index_code": "X", "con_code": "D", "trade_date": "20261031", "weight": 10.0},  # left at the rebalance
    ]}
    day = {"items": [
        {"ts_code": "A", "trade_date": "20261127", "pct_chg": 1.5},
        {"ts_code": "B", "trade_date": "20261127", "pct_chg": -2.0},
        {"ts_code": "C", "trade_date": "20261127", "pct_chg": 0.0},
        {"ts_code": "D", "trade_date": "20261127", "pct_chg": -9.0},
        {"ts_code": "E", "trade_date": "20261127", "pct_chg": 3.0},
    ]}
    return {"c1": members, "c2": day}


WITHIN = Membership(call="c1", select=Selection(mode="latest", key="trade_date"), field="con_code", key="ts_code")


def test_a_screen_ranks_and_counts_only_the_members_of_the_latest_set():
    responses = _screen_responses()
    fall = Extractor(call="c2", select=Selection(mode="latest", key="trade_date", within=WITHIN), field="pct_chg",
                     aggregate="argmin", arg_field="ts_code", format=Format(kind="text"))
    assert run_extractor(fall, responses, DAY).answer == "B"  # D fell more but left the index
    up = Extractor(call="c2", select=Selection(mode="latest", key="trade_date", within=WITHIN, above={"pct_chg": 0.0}),
                   field="pct_chg", aggregate="count", format=Format(kind="integer"))
    assert run_extractor(up, responses, DAY).answer == "1"  # A only: C is flat, E is no member


def test_a_screen_whose_deciding_value_is_shared_is_a_tie():
    responses = _screen_responses()
    responses["c2"]["items"][0]["pct_chg"] = -2.0
    fall = Extractor(call="c2", select=Selection(mode="latest", key="trade_date", within=WITHIN), field="pct_chg",
                     aggregate="argmin", arg_field="ts_code", format=Format(kind="text"))
    out = run_extractor(fall, responses, DAY)
    assert out.status == "empty" and out.error.startswith("tie: A and B at -2.0")


def _pick(op: str, *closes: tuple[float, float]) -> Extractor:
    refs = [ValueRef(call=f"c{i + 2}", select=ALL, field="close", aggregate="pct_change") for i in range(len(closes) - 1)]
    return Extractor(call="c1", select=ALL, field="close", aggregate="pct_change", format=Format(kind="text"),
                     pick=Pick(op=op, others=refs, labels=[f"I{i + 1}" for i in range(len(closes))]))


def test_a_pick_answers_with_the_label_of_the_largest_or_smallest_value():
    series = ((100, 105), (50, 54), (20, 19))  # +5%, +8%, -5%
    responses = {f"c{i + 1}": _bars(*s) for i, s in enumerate(series)}
    assert run_extractor(_pick("argmax", *series), responses, DAY).answer == "I2"
    assert run_extractor(_pick("argmin", *series), responses, DAY).answer == "I3"
    tied = ((100, 105), (20, 21), (20, 19))  # +5% twice
    out = run_extractor(_pick("argmax", *tied), {f"c{i + 1}": _bars(*s) for i, s in enumerate(tied)}, DAY)
    assert out.status == "empty" and out.error.startswith("tie: I1 and I2")


def test_a_pick_labels_each_value_once_and_never_combines():
    ref = ValueRef(call="c2", select=ALL, field="close", aggregate="pct_change")
    with pytest.raises(ValueError, match="labels each"):
        Pick(op="argmax", others=[ref], labels=["a", "b", "c"])
    with pytest.raises(ValueError, match="distinct"):
        Pick(op="argmax", others=[ref], labels=["a", "a"])


def test_the_constructs_are_left_out_of_the_dump_while_unset():
    call = Call(id="c1", tool="daily", args={"ts_code": "600000.SH"},
                dates={"trade_date": DateSpec(sessions_back=0, calendar="XSHG")})
    ex = Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close", format=PCT)
    dump = Program(calls=[call], extract=ex).model_dump()
    assert "pick" not in dump["extract"] and "within" not in dump["extract"]["select"]
    assert "above" not in dump["extract"]["select"]
    assert compute_qid(Program(calls=[call], extract=ex), "600000.SH").startswith("ls-")
