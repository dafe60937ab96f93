"""The program language's multi-step extensions (issue 20): `years_back`, `times` joins, the
`product` op and combine chains, cross-series argmax on the latest period; issue 39's
`where_first` (the latest annual report) and `cagr` combine step; validated on load,
executed by the extractor, covered by the qid, and absent from the dump (and qid) when unused."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from pydantic import ValidationError

from livesearch_pipeline.core.catalog import Catalog, DateParamMeta, FieldMeta, ToolMeta
from livesearch_pipeline.core.extract import run_extractor
from livesearch_pipeline.core.models import Extractor, Program
from livesearch_pipeline.core.program import ProgramError, check_question, validate_program
from livesearch_pipeline.core.qid import canonical_json, compute_qid, compute_signature

AS_OF = dt.date(2026, 11, 27)
YMD = "%Y%m%d"


def _tool(name: str, key: str, fields: list[tuple[str, str]], *, entity: str = "ts_code",
          series: list[str] | None = None, refresh: str = "daily", calendar: str | None = "XSHG") -> ToolMeta:
    return ToolMeta(
        name=name, service="fake", description=name, asset_classes=["cn_equity"], role="data", entity_param=entity,
        date_params=[DateParamMeta(name="trade_date", fmt=YMD, role="point"),
                     DateParamMeta(name="start_date", fmt=YMD, role="start"),
                     DateParamMeta(name="end_date", fmt=YMD, role="end")],
        time_key=key, time_key_fmt=YMD, refresh_class=refresh, series_keys=series or [], calendar=calendar,
        fields=[FieldMeta(name=n, type=t, description=n) for n, t in fields],
    )


CATALOG = Catalog(service="fake", tools=[
    _tool("daily", "trade_date", [("ts_code", "code"), ("trade_date", "date"), ("close", "number")]),
    _tool("adj_factor", "trade_date", [("ts_code", "code"), ("trade_date", "date"), ("adj_factor", "number")]),
    _tool("income", "end_date", [("ts_code", "code"), ("end_date", "date"), ("ann_date", "date"),
                                  ("revenue", "number"), ("n_income", "number")], refresh="quarterly"),
    _tool("fund_portfolio", "ann_date", [("ts_code", "code"), ("ann_date", "date"), ("symbol", "code"),
                                         ("mkv", "number")], series=["symbol"], refresh="quarterly"),
    _tool("fx_daily", "trade_date", [("ts_code", "code"), ("trade_date", "date"), ("bid_close", "number")],
          entity="", series=["ts_code"], calendar=None),
])
WINDOW = {"start_date": {"sessions_back": 4, "calendar": "XSHG"}, "end_date": {"sessions_back": 0, "calendar": "XSHG"}}
PCT = {"kind": "percent", "decimals": 2}


def program(calls: list[dict], extract: dict) -> Program:
    return Program.model_validate({"calls": calls, "extract": extract})


def latest(call: str, key: str, field: str, **select) -> dict:
    return {"call": call, "select": {"mode": "latest", "key": key, **select}, "field": field}


INCOME = {"items": [  # newest first, as Tushare returns them
    {"ts_code": "A", "end_date": "20260930", "ann_date": "20261030", "revenue": 330.0, "n_income": 33.0},
    {"ts_code": "A", "end_date": "20260630", "ann_date": "20260828", "revenue": 200.0, "n_income": 21.0},
    {"ts_code": "A", "end_date": "20251231", "ann_date": "20260320", "revenue": 400.0, "n_income": 40.0},
    {"ts_code": "A", "end_date": "20250930", "ann_date": "20251030", "revenue": 300.0, "n_income": 30.0},
]}


def growth_program() -> Program:
    return program([{"id": "c1", "tool": "income", "args": {"ts_code": "A"}, "dates": WINDOW}],
                   {**latest("c1", "end_date", "revenue"), "format": PCT,
                    "combine": {"op": "pct_difference", "other": latest("c1", "end_date", "revenue", years_back=1)}})


def test_years_back_reads_the_same_period_a_year_before_the_latest():
    outcome = run_extractor(growth_program().extract, {"c1": INCOME}, AS_OF)
    assert (outcome.status, outcome.answer) == ("ok", "10.00%")  # 330 vs 300
    assert outcome.observed_period == "20260930 vs 20250930"
    validate_program(growth_program(), CATALOG)


def test_years_back_selects_nothing_when_that_period_is_missing():
    items = {"items": [r for r in INCOME["items"] if r["end_date"] != "20250930"]}
    outcome = run_extractor(growth_program().extract, {"c1": items}, AS_OF)
    assert outcome.status == "empty"


def test_years_back_is_only_for_latest():
    with pytest.raises(ValidationError, match="takes no years_back"):
        program([{"id": "c1", "tool": "daily", "args": {"ts_code": "A"}, "dates": WINDOW}],
                {"call": "c1", "select": {"mode": "all", "key": "trade_date", "years_back": 1}, "field": "close",
                 "aggregate": "mean", "format": PCT})


BARS = {"items": [{"ts_code": "A", "trade_date": d, "close": c} for d, c in
                  (("20261127", 11.0), ("20261126", 10.0), ("20261125", 20.0))]}
FACTORS = {"items": [{"ts_code": "A", "trade_date": d, "adj_factor": f} for d, f in
                     (("20261127", 2.0), ("20261126", 2.0), ("20261125", 1.0))]}


def adjusted_return(join_call: str = "c2") -> Program:
    return program(
        [{"id": "c1", "tool": "daily", "args": {"ts_code": "A"}, "dates": WINDOW},
         {"id": "c2", "tool": "adj_factor", "args": {"ts_code": "A"}, "dates": WINDOW}],
        {"call": "c1", "select": {"mode": "all", "key": "trade_date"}, "field": "close", "aggregate": "pct_change",
         "times": {"call": join_call, "field": "adj_factor"}, "format": PCT})


def test_times_multiplies_each_record_by_the_joined_field_before_the_aggregate():
    # A 1:2 split between the first and second session: 20 -> 10 unadjusted, flat adjusted.
    outcome = run_extractor(adjusted_return().extract, {"c1": BARS, "c2": FACTORS}, AS_OF)
    assert outcome.answer == "10.00%"  # 20*1 -> 11*2 = 22
    validate_program(adjusted_return(), CATALOG)


def test_times_without_a_factor_for_a_selected_day_is_empty_not_skipped():
    factors = {"items": FACTORS["items"][:2]}
    assert run_extractor(adjusted_return().extract, {"c1": BARS, "c2": factors}, AS_OF).status == "empty"


def test_times_is_validated_on_load():
    with pytest.raises(ProgramError, match=r"times.call: unknown call 'c9'"):
        validate_program(adjusted_return("c9"), CATALOG)
    keyed_by_period = program(
        [{"id": "c1", "tool": "daily", "args": {"ts_code": "A"}, "dates": WINDOW},
         {"id": "c2", "tool": "income", "args": {"ts_code": "A"}, "dates": WINDOW}],
        {"call": "c1", "select": {"mode": "all", "key": "trade_date"}, "field": "close", "aggregate": "pct_change",
         "times": {"call": "c2", "field": "revenue"}, "format": PCT})
    with pytest.raises(ProgramError, match="keyed by 'end_date', not by the selection key 'trade_date'"):
        validate_program(keyed_by_period, CATALOG)


FX = {"items": [{"ts_code": "USDCNH.FXCM", "trade_date": "20261127", "bid_close": 7.0},
                {"ts_code": "USDHKD.FXCM", "trade_date": "20261127", "bid_close": 7.8}]}


def conversion() -> Program:
    return program(
        [{"id": "c1", "tool": "daily", "args": {"ts_code": "A"}, "dates": WINDOW},
         {"id": "c2", "tool": "fx_daily", "refs": {"trade_date": latest("c1", "trade_date", "trade_date")}}],
        {**latest("c1", "trade_date", "close"), "format": {"kind": "number", "decimals": 4, "unit": "CNY"},
         "combine": {"op": "product", "other": latest("c2", "trade_date", "bid_close", where={"ts_code": "USDCNH.FXCM"}),
                     "then": {"op": "ratio",
                              "other": latest("c2", "trade_date", "bid_close", where={"ts_code": "USDHKD.FXCM"})}}})


def test_a_combine_chain_converts_at_two_rates():
    outcome = run_extractor(conversion().extract, {"c1": BARS, "c2": FX}, AS_OF)
    assert outcome.answer == f"{11.0 * 7.0 / 7.8:.4f} CNY"
    validate_program(conversion(), CATALOG)


def test_every_step_of_a_chain_is_validated_and_the_chain_is_bounded():
    bad = conversion().model_dump(mode="json")
    bad["extract"]["combine"]["then"]["other"]["select"]["where"] = {}
    with pytest.raises(ProgramError, match=r"extract.combine.then.other.select.where: .*missing: 'ts_code'"):
        validate_program(Program.model_validate(bad), CATALOG)
    step = {"op": "product", "other": latest("c1", "trade_date", "close")}
    chain = {**step, "then": {**step, "then": {**step, "then": step}}}
    with pytest.raises(ValidationError, match="at most 3 steps"):
        program([{"id": "c1", "tool": "daily", "args": {"ts_code": "A"}, "dates": WINDOW}],
                {**latest("c1", "trade_date", "close"), "format": PCT, "combine": chain})


PORTFOLIO = {"items": [
    {"ts_code": "F", "ann_date": "20261020", "symbol": "B", "mkv": 5.0},
    {"ts_code": "F", "ann_date": "20261020", "symbol": "C", "mkv": 9.0},
    {"ts_code": "F", "ann_date": "20260720", "symbol": "D", "mkv": 99.0},  # an older report
]}


def top_holding_close(arg_field: str | None = "symbol") -> Program:
    top = {"call": "c1", "select": {"mode": "latest", "key": "ann_date"}, "field": "mkv", "aggregate": "argmax",
           "arg_field": arg_field}
    return program(
        [{"id": "c1", "tool": "fund_portfolio", "args": {"ts_code": "F"}, "dates": WINDOW},
         {"id": "c2", "tool": "daily", "refs": {"ts_code": top}, "dates": WINDOW}],
        {**latest("c2", "trade_date", "close"), "format": {"kind": "number", "decimals": 2, "unit": "CNY"}})


def test_entity_resolution_argmax_runs_across_the_series_of_the_latest_period():
    from livesearch_pipeline.core.program import concrete_args

    p = top_holding_close()
    validate_program(p, CATALOG)
    assert concrete_args(p.calls[1], AS_OF, {"c1": PORTFOLIO})["ts_code"] == "C"
    with pytest.raises(ProgramError, match="missing: 'symbol'"):
        validate_program(top_holding_close(None), CATALOG)


def test_new_fields_stay_out_of_the_dump_and_qid_until_used():
    plain = growth_program().model_dump(mode="json")
    plain["extract"]["combine"] = None
    plain_program = Program.model_validate(plain)
    text = canonical_json(plain_program)
    for name in ('"years_back"', '"times"', '"then"'):
        assert name not in text
    # The qid of a program without the extensions is the hash of the fields it always had.
    assert compute_qid(plain_program, "A") == compute_qid(Program.model_validate(json.loads(text)), "A")
    with_years = growth_program()
    other = with_years.model_dump(mode="json")
    other["extract"]["combine"]["other"]["select"]["years_back"] = 2
    assert compute_qid(with_years, "A") != compute_qid(Program.model_validate(other), "A")
    assert compute_signature(with_years, CATALOG) != compute_signature(Program.model_validate(other), CATALOG)


def test_chain_refs_and_paths_are_checked_before_running(monkeypatch):
    from livesearch_pipeline.core.models import Question

    bad = conversion().model_dump(mode="json")
    bad["extract"]["combine"]["then"]["other"]["path"] = "data"
    p = Program.model_validate(bad)
    q = Question.model_validate({
        "qid": compute_qid(p, "A"), "question": "q", "program": p.model_dump(mode="json"),
        "match": {"rule": "approx"}, "refresh_class": "daily", "tier": "T3", "asset_class": "hk_equity",
        "entity": "A", "entity_name": "A", "visibility": 1, "signature": "sig-x",
        "provenance": {"verbalizer": "template"}})
    with pytest.raises(ProgramError, match=r"extract.combine.then.other.path"):
        check_question(q, CATALOG)


# --------------------------------------------------------------------------- issue 39: where_first, cagr

ANNUALS = {"items": [
    {"ts_code": "X", "end_date": "20260930", "end_type": "2", "revenue": 70.0},  # a March year's interim
    {"ts_code": "X", "end_date": "20260331", "end_type": "4", "revenue": 133.1},
    {"ts_code": "X", "end_date": "20250331", "end_type": "4", "revenue": 121.0},
    {"ts_code": "X", "end_date": "20240331", "end_type": "4", "revenue": 110.0},
    {"ts_code": "X", "end_date": "20230331", "end_type": "4", "revenue": 100.0},
]}


def _ex(data: dict) -> Extractor:
    return Extractor.model_validate(data)


def _annual_select(**extra) -> dict:
    return {"mode": "latest", "key": "end_date", "where": {"end_type": "4"}, "where_first": True, **extra}


def _cagr(years: int, **combine) -> dict:
    return {"call": "c1", "select": _annual_select(), "field": "revenue",
            "combine": {"op": "cagr", "years": years, **combine,
                        "other": {"call": "c1", "select": _annual_select(years_back=years), "field": "revenue"}},
            "format": {"kind": "percent", "decimals": 2, "unit": "%"}}


def test_where_first_reads_the_latest_annual_report_although_an_interim_came_after_it():
    plain = {"call": "c1", "select": {"mode": "latest", "key": "end_date", "where": {"end_type": "4"}},
             "field": "revenue", "format": {"kind": "number", "decimals": 1}}
    assert run_extractor(_ex(plain), {"c1": ANNUALS}, AS_OF).status == "empty"  # the newest key is the interim
    first = {**plain, "select": _annual_select()}
    assert run_extractor(_ex(first), {"c1": ANNUALS}, AS_OF).answer == "133.1"
    with pytest.raises(ValidationError, match="where_first"):
        _ex({**plain, "select": {"mode": "latest", "key": "end_date", "where_first": True}})


def test_cagr_compounds_over_its_years_and_needs_two_positive_values():
    out = run_extractor(_ex(_cagr(3)), {"c1": ANNUALS}, AS_OF)
    assert (out.status, out.answer, out.observed_period) == ("ok", "10.00%", "20260331 vs 20230331")
    assert run_extractor(_ex(_cagr(2)), {"c1": ANNUALS}, AS_OF).answer == "10.00%"
    loss = {"items": [dict(r, revenue=-5.0) if r["end_date"] == "20260331" else r for r in ANNUALS["items"]]}
    empty = run_extractor(_ex(_cagr(3)), {"c1": loss}, AS_OF)
    assert empty.status == "empty" and empty.error.startswith("not meaningful:")
    with pytest.raises(ValidationError, match="cagr"):
        _ex({**_cagr(3), "combine": {"op": "cagr", "other": _cagr(3)["combine"]["other"]}})
    with pytest.raises(ValidationError, match="cagr"):
        _ex({**_cagr(3), "combine": {"op": "ratio", "years": 3, "other": _cagr(3)["combine"]["other"]}})
