from __future__ import annotations

import datetime as dt
import statistics

import pytest

from livesearch_pipeline.core.extract import (
    ExtractedValue,
    ExtractionEmpty,
    ExtractionError,
    ExtractionNotMeaningful,
    ExtractionTie,
    is_not_meaningful,
    is_tie,
    ranking_tie,
    read_value,
    round_half_up,
    run_extractor,
)
from livesearch_pipeline.core.models import Extractor, ValueRef

AS_OF = dt.date(2026, 11, 27)  # a Friday; XSHG session

# Newest first, as Tushare returns records.
DAILY = [
    {"ts_code": "600519.SH", "trade_date": "20261127", "close": 10.0, "vol": 100, "name": "Alpha"},
    {"ts_code": "600519.SH", "trade_date": "20261126", "close": 12.0, "vol": 300, "name": "Alpha"},
    {"ts_code": "600519.SH", "trade_date": "20261125", "close": 11.0, "vol": 200, "name": "Alpha"},
    {"ts_code": "600519.SH", "trade_date": "20261124", "close": 9.0, "vol": 300, "name": "Alpha"},
    {"ts_code": "600519.SH", "trade_date": "20261123", "close": 8.0, "vol": 50, "name": "Alpha"},
]
CPI = [
    {"month": "202611", "nt_yoy": 9.9},  # not yet complete on AS_OF
    {"month": "202610", "nt_yoy": 0.4},
    {"month": "202609", "nt_yoy": 0.3},
]
HOLDERS = [
    {"end_date": "20260930", "holder_name": "Fund A", "rank": 1, "hold_ratio": 30.5},
    {"end_date": "20260930", "holder_name": "Fund B", "rank": 2, "hold_ratio": 12.25},
    {"end_date": "20260930", "holder_name": "Fund C", "rank": 3, "hold_ratio": None},
]
MINUTES = [
    {"trade_time": "2026-11-27 10:31:00", "close": 10.2},
    {"trade_time": "2026-11-27 10:30:00", "close": 10.1},
    {"trade_time": "2026-11-26 10:30:00", "close": 11.9},
]
RESPONSES = {
    "c1": {"items": DAILY},
    "cpi": {"items": CPI},
    "hold": {"data": {"items": HOLDERS}},
    "mins": MINUTES,
    "other": {"items": [{"trade_date": "20261127", "close": 8.0}, {"trade_date": "20261126", "close": 0.0}]},
}


def ref(**kwargs) -> ValueRef:
    kwargs.setdefault("call", "c1")
    kwargs.setdefault("field", "close")
    return ValueRef.model_validate(kwargs)


def sel(mode: str, key: str = "trade_date", **kwargs) -> dict:
    return {"mode": mode, "key": key, **kwargs}


def read(**kwargs) -> ExtractedValue:
    return read_value(ref(**kwargs), RESPONSES, AS_OF)


# --------------------------------------------------------------------------- selection modes


@pytest.mark.parametrize(
    ("kwargs", "value", "period"),
    [
        ({"select": sel("latest")}, 10.0, "20261127"),
        # An anchor moves the window end: 1 session back is Thursday.
        ({"select": sel("latest", anchor={"sessions_back": 1, "calendar": "XSHG"})}, 12.0, "20261126"),
        # Weekends: the latest record not after Sunday is Friday's.
        ({"select": sel("latest", anchor={"days_back": 0})}, 10.0, "20261127"),
        ({"select": sel("snapshot", anchor={"sessions_back": 2, "calendar": "XSHG"})}, 11.0, "20261125"),
        ({"select": sel("match", key="vol", value=200)}, 11.0, None),
        # `where` names a series on the latest time key of the response (see the test below).
        ({"select": sel("latest", where={"vol": 100})}, 10.0, "20261127"),
        # Period keys are compared as their period end: November is not complete on AS_OF.
        ({"call": "cpi", "field": "nt_yoy", "select": sel("latest", key="month", key_fmt="YYYYMM")}, 0.4, "202610"),
        ({"call": "cpi", "field": "nt_yoy",
          "select": sel("snapshot", key="month", key_fmt="YYYYMM",
                        anchor={"period": "month", "periods_back": 1, "edge": "start"})}, 0.3, "202609"),
        ({"call": "hold", "path": "data.items", "field": "holder_name", "select": sel("match", key="rank", value=2)},
         "Fund B", None),
    ],
)
def test_selection_modes(kwargs, value, period):
    assert read(**kwargs) == ExtractedValue(value, period)


def test_minute_mode_reads_the_bar_at_a_time_of_the_anchor_session():
    minute = sel("minute", key="trade_time", key_fmt="%Y-%m-%d %H:%M:%S",
                 anchor={"sessions_back": 0, "calendar": "XSHG"}, time="10:30")
    assert read(call="mins", path="", select=minute) == ExtractedValue(10.1, "2026-11-27 10:30:00")
    yesterday = {**minute, "anchor": {"sessions_back": 1, "calendar": "XSHG"}}
    assert read(call="mins", path="", select=yesterday) == ExtractedValue(11.9, "2026-11-26 10:30:00")
    with pytest.raises(ExtractionEmpty, match="matched no record"):
        read(call="mins", path="", select={**minute, "time": "14:00"})


def test_latest_on_a_holiday_reads_the_session_before():
    # National Day: on 2026-10-05 the latest record not after D is Sep 30.
    records = {"c1": {"items": [{"trade_date": "20261008", "close": 2.0}, {"trade_date": "20260930", "close": 1.0}]}}
    got = read_value(ref(select=sel("latest")), records, dt.date(2026, 10, 5))
    assert got == ExtractedValue(1.0, "20260930")


def test_keys_are_compared_as_dates_not_strings():
    # "2026-11-3" would sort after "2026-11-27" as a string.
    records = {"c1": {"items": [{"d": "2026-11-3", "close": 1.0}, {"d": "2026-11-27", "close": 2.0}]}}
    got = read_value(ref(select=sel("latest", key="d", key_fmt="%Y-%m-%d")), records, AS_OF)
    assert got == ExtractedValue(2.0, "2026-11-27")


# --------------------------------------------------------------------------- aggregates

CLOSES = [8.0, 9.0, 11.0, 12.0, 10.0]  # ascending by trade_date


@pytest.mark.parametrize(
    ("aggregate", "field", "expected"),
    [
        ("sum", "close", 50.0),
        ("sum", "vol", 950),
        ("mean", "close", 10.0),
        ("min", "close", 8.0),
        ("max", "close", 12.0),
        ("first", "close", 8.0),
        ("last", "close", 10.0),
        ("count", "close", 5),
        ("change", "close", 2.0),
        ("pct_change", "close", 25.0),
        ("std", "close", statistics.stdev(CLOSES)),
        ("argmax", "close", "20261126"),
        ("argmin", "close", "20261123"),
        ("argmin", "vol", "20261123"),
        ("first", "name", "Alpha"),
        ("count", "name", 5),
    ],
)
def test_aggregates_over_all_records(aggregate, field, expected):
    got = read(select=sel("all"), field=field, aggregate=aggregate)
    assert got.value == pytest.approx(expected) if isinstance(expected, float) else got.value == expected
    assert type(got.value) is type(expected)
    if aggregate not in ("first", "last"):
        assert got.observed_period == "20261123..20261127"


def test_first_and_last_observe_their_own_record():
    assert read(select=sel("all"), aggregate="first").observed_period == "20261123"
    assert read(select=sel("all"), aggregate="last").observed_period == "20261127"


def test_argmax_returns_a_named_field():
    got = read(call="hold", path="data.items", field="hold_ratio", aggregate="argmax", arg_field="holder_name",
               select=sel("all", key="end_date"))
    assert got == ExtractedValue("Fund A", "20260930")


def test_aggregates_skip_nulls_and_count_counts_non_null():
    records = {"c1": {"items": [
        {"trade_date": "20261127", "close": None}, {"trade_date": "20261126", "close": 4.0},
        {"trade_date": "20261125", "close": 2.0},
    ]}}
    mean = read_value(ref(select=sel("all"), aggregate="mean"), records, AS_OF)
    assert mean == ExtractedValue(3.0, "20261125..20261126")
    count = read_value(ref(select=sel("all"), aggregate="count"), records, AS_OF)
    assert count == ExtractedValue(2, "20261125..20261126")
    last = read_value(ref(select=sel("all"), aggregate="last"), records, AS_OF)
    assert last == ExtractedValue(4.0, "20261126")


def test_aggregate_over_a_window_selected_by_latest():
    # latest with an aggregate aggregates every record sharing the newest key.
    records = {"c1": {"items": [
        {"trade_date": "20261127", "ts_code": "A", "close": 1.0},
        {"trade_date": "20261127", "ts_code": "B", "close": 3.0},
        {"trade_date": "20261126", "ts_code": "A", "close": 100.0},
    ]}}
    got = read_value(ref(select=sel("latest"), aggregate="sum"), records, AS_OF)
    assert got == ExtractedValue(4.0, "20261127")
    got = read_value(ref(select=sel("latest"), aggregate="argmax", arg_field="ts_code"), records, AS_OF)
    assert got.value == "B"


# --------------------------------------------------------------------------- empty and error outcomes


@pytest.mark.parametrize(
    ("kwargs", "responses", "message"),
    [
        ({"select": sel("latest")}, {"c1": {"items": []}}, "matched no record"),
        ({"select": sel("match", key="vol", value=999)}, RESPONSES, "matched no record"),
        ({"select": sel("latest")}, {"c1": {"items": [{"trade_date": "20261127", "close": None}]}},
         "field 'close' is null"),
        ({"select": sel("latest")}, {"c1": {"items": [{"trade_date": "20261127"}]}}, "field 'close' is null or absent"),
        ({"select": sel("all"), "aggregate": "mean"},
         {"c1": {"items": [{"trade_date": "20261127", "close": None}]}}, "null in all 1 selected"),
        # Only future records: nothing on or before D.
        ({"select": sel("latest")}, {"c1": {"items": [{"trade_date": "20261130", "close": 1.0}]}}, "matched no record"),
        ({"select": sel("all"), "aggregate": "argmax", "arg_field": "name"},
         {"c1": {"items": [{"trade_date": "20261127", "close": 1.0, "name": None}]}}, "field 'name' of the argmax"),
    ],
)
def test_empty(kwargs, responses, message):
    with pytest.raises(ExtractionEmpty, match=message):
        read_value(ref(**kwargs), responses, AS_OF)


@pytest.mark.parametrize(
    ("kwargs", "responses", "message"),
    [
        ({"select": sel("latest")}, {}, "no response for call 'c1'"),
        ({"select": sel("latest")}, {"c1": {"rows": []}}, "path 'items' not found"),
        ({"select": sel("latest"), "path": "items.x"}, {"c1": {"items": []}}, "cannot descend into list"),
        ({"select": sel("latest"), "path": "items.5"}, {"c1": {"items": [[]]}}, "index out of range"),
        ({"select": sel("latest")}, {"c1": {"items": {"a": 1}}}, "holds dict, not a list"),
        ({"select": sel("latest"), "path": ""}, {"c1": {"items": []}}, "holds dict, not a list"),
        ({"select": sel("latest")}, {"c1": {"items": [1, 2]}}, "record 0 is int"),
        ({"select": sel("all")}, RESPONSES, "ambiguous: selection 'all' matched 5 records"),
        ({"select": sel("match", key="name", value="Alpha")}, RESPONSES, "ambiguous: selection 'match' matched 5"),
        ({"select": sel("latest")}, {"c1": {"items": [{"trade_date": "2026-11-27", "close": 1.0}]}},
         "time key 'trade_date'.*not a date in format '%Y%m%d'"),
        ({"select": sel("latest")}, {"c1": {"items": [{"close": 1.0}]}}, "no time key 'trade_date'"),
        ({"select": sel("latest")}, {"c1": {"items": [{"trade_date": 20261127.0, "close": 1.0}]}}, "is float"),
        ({"select": sel("all"), "aggregate": "mean", "field": "name"}, RESPONSES, "'mean' needs numbers"),
        ({"select": sel("all"), "aggregate": "sum"}, {"c1": {"items": [{"trade_date": "20261127", "close": True}]}},
         "holds bool"),
        ({"select": sel("latest")}, {"c1": {"items": [{"trade_date": "20261127", "close": [1]}]}}, "holds list"),
        ({"select": sel("latest")}, {"c1": {"items": [{"trade_date": "20261127", "close": float("nan")}]}},
         "non-finite"),
        ({"select": sel("all"), "aggregate": "std"}, {"c1": {"items": [{"trade_date": "20261127", "close": 1.0}]}},
         "at least 2"),
        ({"select": sel("all"), "aggregate": "change"}, {"c1": {"items": [{"trade_date": "20261127", "close": 1.0}]}},
         "at least 2"),
        ({"select": sel("match", key="name", value="Alpha"), "aggregate": "last"}, RESPONSES, "mode 'match' has no order"),
    ],
)
def test_errors(kwargs, responses, message):
    with pytest.raises(ExtractionError, match=message):
        read_value(ref(**kwargs), responses, AS_OF)


def test_match_compares_values_strictly():
    records = {"c1": {"items": [{"flag": True, "rank": 1, "close": 5.0}, {"flag": 1, "rank": "1", "close": 6.0}]}}
    assert read_value(ref(select=sel("match", key="rank", value=1)), records, AS_OF).value == 5.0
    assert read_value(ref(select=sel("match", key="rank", value="1")), records, AS_OF).value == 6.0
    assert read_value(ref(select=sel("match", key="flag", value=True)), records, AS_OF).value == 5.0
    assert read_value(ref(select=sel("match", key="flag", value=1)), records, AS_OF).value == 6.0


def test_snapshot_selecting_several_records_is_ambiguous():
    snapshot = sel("snapshot", key="end_date", anchor={"period": "quarter", "periods_back": 0})
    with pytest.raises(ExtractionError, match="ambiguous.*3 records"):
        read(call="hold", path="data.items", field="hold_ratio", select=snapshot)


# --------------------------------------------------------------------------- run_extractor


def extractor(fmt: dict, **kwargs) -> Extractor:
    kwargs.setdefault("call", "c1")
    kwargs.setdefault("field", "close")
    kwargs.setdefault("select", sel("latest"))
    return Extractor.model_validate({**kwargs, "format": fmt})


@pytest.mark.parametrize(
    ("fmt", "kwargs", "answer", "value", "unit"),
    [
        ({"kind": "number", "decimals": 2, "unit": "CNY"}, {}, "10.00 CNY", 10.0, "CNY"),
        ({"kind": "number", "decimals": 0}, {}, "10", 10.0, None),
        ({"kind": "number", "decimals": 3, "unit": "亿元", "scale": 1e-4}, {"field": "vol", "aggregate": "sum", "select": sel("all")},
         "0.095 亿元", 0.095, "亿元"),
        ({"kind": "percent", "decimals": 1}, {"select": sel("all"), "aggregate": "pct_change"}, "25.0%", 25.0, "%"),
        ({"kind": "percent", "decimals": 1, "unit": "percentage points"}, {"select": sel("all"), "aggregate": "pct_change"},
         "25.0 percentage points", 25.0, "%"),
        ({"kind": "percent", "decimals": 2, "scale": 100}, {"call": "cpi", "field": "nt_yoy",
         "select": sel("latest", key="month", key_fmt="YYYYMM")}, "40.00%", 40.0, "%"),
        ({"kind": "integer", "unit": "lots"}, {"field": "vol"}, "100 lots", 100, "lots"),
        ({"kind": "integer", "unit": "shares", "scale": 100}, {"field": "vol"}, "10000 shares", 10000.0, "shares"),
        ({"kind": "integer"}, {"select": sel("all"), "aggregate": "count"}, "5", 5, None),
        ({"kind": "date"}, {"select": sel("all"), "aggregate": "argmax"}, "2026-11-26", "20261126", None),
        ({"kind": "date", "in_fmt": "YYYYMM", "out_fmt": "YYYYMM"}, {"call": "cpi", "field": "month",
         "select": sel("latest", key="month", key_fmt="YYYYMM")}, "202610", "202610", None),
        ({"kind": "date", "out_fmt": "%d %b %Y"}, {"select": sel("all"), "aggregate": "argmin"},
         "23 Nov 2026", "20261123", None),
        ({"kind": "text"}, {"field": "name"}, "Alpha", "Alpha", None),
    ],
)
def test_formats(fmt, kwargs, answer, value, unit):
    outcome = run_extractor(extractor(fmt, **kwargs), RESPONSES, AS_OF)
    assert (outcome.status, outcome.answer, outcome.unit, outcome.error) == ("ok", answer, unit, None)
    assert outcome.value == pytest.approx(value) if isinstance(value, float) else outcome.value == value


@pytest.mark.parametrize(
    ("value", "decimals", "expected"),
    [
        (2.675, 2, "2.68"),  # binary 2.67499999... but written 2.675: half-up on the decimal form
        (2.665, 2, "2.67"),
        (0.5, 0, "1"),
        (1.5, 0, "2"),
        (2.5, 0, "3"),  # half-even would give 2
        (-2.5, 0, "-3"),
        (-0.004, 2, "0.00"),  # never "-0.00"
        (-0.005, 2, "-0.01"),
        (1234567.891, 1, "1234567.9"),
        (7, 2, "7.00"),
        (1e-7, 8, "0.00000010"),
        (1.5e300, 0, "15" + "0" * 299),
    ],
)
def test_round_half_up(value, decimals, expected):
    assert round_half_up(value, decimals) == expected


@pytest.mark.parametrize(
    ("op", "other_select", "answer"),
    [
        ("difference", sel("latest"), "2.00"),  # 10 - 8
        ("ratio", sel("latest"), "1.25"),
        ("pct_difference", sel("latest"), "25.00"),
    ],
)
def test_combine(op, other_select, answer):
    ex = extractor({"kind": "number", "decimals": 2},
                   combine={"op": op, "other": {"call": "other", "field": "close", "select": other_select}})
    outcome = run_extractor(ex, RESPONSES, AS_OF)
    assert (outcome.status, outcome.answer, outcome.observed_period) == ("ok", answer, "20261127")


def test_combine_with_different_periods_reports_both():
    ex = extractor({"kind": "number", "decimals": 2},
                   combine={"op": "difference", "other": {"call": "cpi", "field": "nt_yoy",
                                                          "select": sel("latest", key="month", key_fmt="YYYYMM")}})
    outcome = run_extractor(ex, RESPONSES, AS_OF)
    assert (outcome.answer, outcome.observed_period) == ("9.60", "20261127 vs 202610")


@pytest.mark.parametrize(
    ("ex", "status", "message"),
    [
        (extractor({"kind": "number", "decimals": 2},
                   combine={"op": "ratio", "other": {"call": "other", "field": "close",
                                                     "select": sel("snapshot", anchor={"sessions_back": 1, "calendar": "XSHG"})}}),
         "empty", "not meaningful: combine 'ratio' over a base of 0.0 (not positive) (call 'c1' path 'items' field 'close')"),
        (extractor({"kind": "number", "decimals": 2},
                   combine={"op": "difference", "other": {"call": "missing", "field": "close", "select": sel("latest")}}),
         "error", "call 'missing' path 'items' field 'close': no response for call 'missing'"),
        (extractor({"kind": "number", "decimals": 2}, field="name"),
         "error", "call 'c1' path 'items' field 'name': format 'number' needs a number, got str 'Alpha'"),
        (extractor({"kind": "date"}, field="close"), "error", "format 'date' needs a time key"),
        (extractor({"kind": "date"}, field="name"), "error", "format 'date': 'Alpha' is not a date"),
        (extractor({"kind": "number", "decimals": 2}, select=sel("match", key="vol", value=7)),
         "empty", "call 'c1' path 'items' field 'close': selection 'match' on key 'vol' matched no record"),
        (extractor({"kind": "number", "decimals": 2}, field="nope"),
         "empty", "field 'nope' is null or absent"),
        (extractor({"kind": "number", "decimals": 2}, combine={"op": "difference", "other": {
            "call": "other", "field": "close", "select": sel("match", key="close", value=99.0)}}),
         "empty", "call 'other'"),
    ],
)
def test_run_extractor_maps_data_problems_to_status(ex, status, message):
    outcome = run_extractor(ex, RESPONSES, AS_OF)
    assert (outcome.status, outcome.answer, outcome.value) == (status, None, None)
    assert message in outcome.error


def test_combine_needs_numbers():
    ex = extractor({"kind": "number", "decimals": 2}, field="name",
                   combine={"op": "difference", "other": {"call": "other", "field": "close", "select": sel("latest")}})
    outcome = run_extractor(ex, RESPONSES, AS_OF)
    assert outcome.status == "error" and "needs two numbers, got 'Alpha' and 8.0" in outcome.error


def test_run_extractor_is_deterministic_and_does_not_mutate_responses():
    import copy

    before = copy.deepcopy(RESPONSES)
    ex = extractor({"kind": "number", "decimals": 4}, select=sel("all"), aggregate="std")
    assert run_extractor(ex, RESPONSES, AS_OF) == run_extractor(ex, RESPONSES, AS_OF)
    assert RESPONSES == before


def test_an_anchor_outside_the_calendar_is_raised_not_reported_as_data():
    from livesearch_pipeline.core.calendars import CalendarRangeError

    ex = extractor({"kind": "number", "decimals": 2},
                   select=sel("snapshot", anchor={"sessions_back": 0, "calendar": "XSHG"}))
    with pytest.raises(CalendarRangeError, match="outside the XSHG calendar"):
        run_extractor(ex, RESPONSES, dt.date(2031, 1, 6))


def test_latest_of_a_named_series_reads_the_latest_period_of_the_whole_response():
    """A holder that left the top ten has no record in the latest period: the question selects
    nothing (withdrawn on that day) instead of answering with an older period's holding."""
    holders = {"hold": {"items": [
        {"end_date": "20260930", "holder_name": "Fund A", "hold_ratio": 30.5},
        {"end_date": "20260930", "holder_name": "Fund B", "hold_ratio": 12.25},
        {"end_date": "20260630", "holder_name": "Fund A", "hold_ratio": 29.0},
        {"end_date": "20260630", "holder_name": "Fund C", "hold_ratio": 8.0},
    ]}}
    latest = {"mode": "latest", "key": "end_date"}
    fund_a = ref(call="hold", field="hold_ratio", select={**latest, "where": {"holder_name": "Fund A"}})
    assert read_value(fund_a, holders, AS_OF) == ExtractedValue(30.5, "20260930")
    fund_c = ref(call="hold", field="hold_ratio", select={**latest, "where": {"holder_name": "Fund C"}})
    with pytest.raises(ExtractionEmpty, match="matched no record"):
        read_value(fund_c, holders, AS_OF)


# --------------------------------------------------------------------------- ties (issue 28)


def test_argmax_that_ties_at_the_top_is_empty_with_the_tied_keys_and_value():
    # vol 300 on 20261124 and on 20261126: the day of the highest volume is not one day.
    with pytest.raises(ExtractionTie, match=r"^tie: 20261124 and 20261126 at 300$"):
        read(select=sel("all"), field="vol", aggregate="argmax")
    outcome = run_extractor(extractor({"kind": "date"}, select=sel("all"), field="vol", aggregate="argmax"),
                            RESPONSES, AS_OF)
    assert outcome.status == "empty"
    assert outcome.error == "tie: 20261124 and 20261126 at 300 (call 'c1' path 'items' field 'vol')"
    assert is_tie(outcome.error) and is_tie(f"empty: {outcome.error}")


def test_heaviest_constituent_tie_names_both_constituents():
    weights = {"w": {"items": [
        {"trade_date": "20261127", "con_code": "601682.SH", "weight": 30.0},
        {"trade_date": "20261127", "con_code": "603899.SH", "weight": 30.0},
        {"trade_date": "20261127", "con_code": "600000.SH", "weight": 12.5},
    ]}}
    top = ref(call="w", field="weight", aggregate="argmax", arg_field="con_code", select=sel("latest"))
    with pytest.raises(ExtractionTie, match=r"^tie: 601682.SH and 603899.SH at 30.0$"):
        read_value(top, weights, AS_OF)
    lowest = read_value(ref(call="w", field="weight", aggregate="argmin", arg_field="con_code", select=sel("latest")),
                        weights, AS_OF)
    assert lowest.value == "600000.SH"  # the bottom is decided: no tie there


@pytest.mark.parametrize(
    ("entries", "highest", "n", "expected"),
    [
        ([("a", 3), ("b", 2), ("c", 1)], True, 1, None),
        ([("a", 3), ("b", 3), ("c", 1)], True, 1, "tie: a and b at 3"),
        ([("a", 3), ("b", 3), ("c", 1)], False, 1, None),
        ([("a", 1), ("b", 2), ("c", 1), ("d", 1)], False, 1, "tie: a, c and d at 1"),
        # A top-2 is decided when the 2nd and 3rd differ, undecided when they tie.
        ([("a", 5), ("b", 4), ("c", 3)], True, 2, None),
        ([("a", 5), ("b", 4), ("c", 4)], True, 2, "tie: b and c at 4"),
        ([("a", 5), ("b", 5)], True, 2, None),  # all of them: nothing to tell apart
        ([("a", 5)], True, 1, None),
        ([(f"d{i}", 1.5) for i in range(8)], True, 1, "tie: d0, d1, d2, d3, d4 and 3 more at 1.5"),
    ],
)
def test_ranking_tie(entries, highest, n, expected):
    assert ranking_tie(entries, highest=highest, n=n) == expected


def test_ranking_tie_rejects_a_ranking_of_nothing():
    with pytest.raises(ValueError, match="n must be >= 1"):
        ranking_tie([("a", 1)], highest=True, n=0)


# --------------------------------------------------------------------------- non-positive bases (issue 28)


def test_a_ratio_over_a_loss_is_not_meaningful():
    # A payout ratio: 0.30 CNY dividend per share against an EPS of -0.07 (a loss).
    responses = {"div": {"items": [{"trade_date": "20261127", "cash_div_tax": 0.30}]},
                 "eps": {"items": [{"trade_date": "20261127", "eps": -0.07}]}}
    ex = Extractor.model_validate({
        "call": "div", "select": sel("latest"), "field": "cash_div_tax",
        "combine": {"op": "ratio", "other": {"call": "eps", "select": sel("latest"), "field": "eps"}},
        "format": {"kind": "percent", "decimals": 2, "scale": 100.0}})
    outcome = run_extractor(ex, responses, AS_OF)
    assert outcome.status == "empty" and outcome.answer is None
    assert outcome.error.startswith("not meaningful: combine 'ratio' over a base of -0.07")
    assert is_not_meaningful(outcome.error) and not is_tie(outcome.error)


def test_growth_from_a_loss_and_a_return_from_a_non_positive_price_are_not_meaningful():
    responses = {"c1": {"items": [{"trade_date": "20261127", "close": 2.0}, {"trade_date": "20261126", "close": -1.0}]}}
    with pytest.raises(ExtractionNotMeaningful, match="pct_change from a first value of -1.0"):
        read_value(ref(select=sel("all"), aggregate="pct_change"), responses, AS_OF)
    growth = extractor({"kind": "percent", "decimals": 2},
                       combine={"op": "pct_difference", "other": {"call": "other", "field": "close",
                                                                  "select": sel("snapshot", anchor={"sessions_back": 1, "calendar": "XSHG"})}})
    assert run_extractor(growth, RESPONSES, AS_OF).status == "empty"
