"""The market tool modules (quotes_cn, hk_us, indices, funds, micro): metadata, record shape,
newest-first order, the clock, argument errors, and cross-table consistency."""

from __future__ import annotations

import datetime as dt
import json
import statistics
import time

import pytest

from livesearch_pipeline.core.calendars import sessions_back
from livesearch_pipeline.dataservice.spec import ToolContext, ToolInputError
from livesearch_pipeline.dataservice.tools import funds, hk_us, indices, micro, quotes_cn

SEED = 20260101
CLOCK = dt.date(2026, 11, 27)  # a Friday; the US session after Thanksgiving
SERVICES = {"reference", "cn_quotes", "hk_us", "indices", "funds", "statements", "corporate", "microstructure", "macro"}
ALL_TOOLS = quotes_cn.TOOLS + hk_us.TOOLS + indices.TOOLS + funds.TOOLS + micro.TOOLS
BY_NAME = {t.name: t for t in ALL_TOOLS}


@pytest.fixture(scope="module")
def ctx(market):
    return ToolContext(market=market, clock=CLOCK, seed=SEED)


@pytest.fixture(scope="module")
def codes(market):
    u = market.universe
    cn = u.of_class("cn_equity")
    fund_list = u.of_class("fund")
    index_list = u.of_class("index")
    return {
        "cn": next(e.code for e in cn if market.corporate.actions(e.code) and e.list_date < dt.date(2015, 1, 1)),
        "margin_cn": next(e.code for e in cn if micro.margin_eligible(SEED, e)),
        "hk": u.of_class("hk_equity")[0].code,
        "us": u.of_class("us_equity")[0].code,
        "cn_index": next(e.code for e in index_list if e.industry in ("规模指数", "主题指数")),
        "sw_index": next(e.code for e in index_list if e.industry == "行业指数"),
        "global_index": next(e.code for e in index_list if e.exchange == "GLOBAL"),
        "etf": next(e.code for e in fund_list if e.market == "E"),
        "equity_fund": next(e.code for e in fund_list if e.market == "O" and u.fund_specs[e.code].fund_type in ("股票型", "混合型")),
        "paying_fund": next(e.code for e in fund_list if market.prices.nav(e.code).distributions),
    }


def sample_args(name: str, codes: dict[str, str]) -> dict:
    window = {"start_date": dt.date(2026, 10, 30), "end_date": CLOCK}
    day = {"trade_date": CLOCK}
    table = {
        "daily": {"ts_code": codes["cn"], **window}, "weekly": {"ts_code": codes["cn"]}, "monthly": {"ts_code": codes["cn"]},
        "adj_factor": {"ts_code": codes["cn"], **window}, "daily_basic": {"ts_code": codes["cn"], **window},
        "stk_limit": {"ts_code": codes["cn"], **window}, "suspend_d": {"start_date": dt.date(2026, 1, 1)},
        "stk_mins": {"ts_code": codes["cn"], "trade_date": CLOCK, "freq": "5min"}, "bak_daily": {"ts_code": codes["cn"], **window},
        "pro_bar": {"ts_code": codes["cn"], "adj": "qfq", "start_date": dt.date(2026, 1, 1)}, "stk_factor": {"ts_code": codes["cn"], **window},
        "dividend": {"ts_code": codes["cn"]},
        "hk_daily": {"ts_code": codes["hk"], **window}, "hk_daily_adj": {"ts_code": codes["hk"], **window},
        "hk_adjfactor": {"ts_code": codes["hk"], **window}, "hk_mins": {"ts_code": codes["hk"], "trade_date": CLOCK},
        "us_daily": {"ts_code": codes["us"], **window}, "us_daily_adj": {"ts_code": codes["us"], **window},
        "us_adjfactor": {"ts_code": codes["us"], **window}, "us_mins": {"ts_code": codes["us"], "trade_date": dt.date(2026, 11, 25), "freq": "15min"},
        "index_daily": {"ts_code": codes["cn_index"], **window}, "index_weekly": {"ts_code": codes["cn_index"]},
        "index_monthly": {"ts_code": codes["sw_index"]}, "index_weight": {"index_code": codes["cn_index"], "start_date": dt.date(2026, 9, 1)},
        "index_dailybasic": {"ts_code": codes["cn_index"], "start_date": dt.date(2026, 11, 20)},
        "index_global": {"ts_code": codes["global_index"], **window}, "sw_daily": {"ts_code": codes["sw_index"], "start_date": dt.date(2026, 11, 20)},
        "index_member": {"index_code": codes["sw_index"]},
        "fund_nav": {"ts_code": codes["equity_fund"], **window}, "fund_daily": {"ts_code": codes["etf"], **window},
        "fund_adj": {"ts_code": codes["paying_fund"], **window}, "fund_share": {"ts_code": codes["etf"], **window},
        "etf_share_size": {"ts_code": codes["etf"], **window}, "fund_div": {"ts_code": codes["paying_fund"]},
        "fund_manager": {"ts_code": codes["equity_fund"]}, "fund_portfolio": {"ts_code": codes["equity_fund"]},
        "moneyflow": {"ts_code": codes["cn"], **window}, "moneyflow_hsgt": window, "hsgt_top10": day,
        "hk_hold": {"ts_code": codes["cn"], **window}, "margin": window, "margin_detail": {"ts_code": codes["margin_cn"], **window},
        "top_list": {"start_date": dt.date(2026, 11, 16)}, "top_inst": {"start_date": dt.date(2026, 11, 16)},
        "block_trade": day, "limit_list": {"start_date": dt.date(2026, 11, 2)},
    }
    return table[name]


def test_catalog_rows_are_complete():
    assert len(ALL_TOOLS) >= 45
    assert len(BY_NAME) == len(ALL_TOOLS), "tool names are unique"
    for tool in ALL_TOOLS:
        meta = tool.meta
        assert meta.service in SERVICES and meta.role == "data"
        assert meta.fields and all(f.description and f.description_zh for f in meta.fields)
        assert meta.time_key is None or meta.field(meta.time_key) is not None, tool.name
        params = {p.name for p in tool.params}
        assert meta.entity_param is None or meta.entity_param in params, tool.name
        assert {d.name for d in meta.date_params} <= params, tool.name
        for p in tool.params:
            assert p.type != "date" or p.fmt == "%Y%m%d", (tool.name, p.name)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_tool_returns_well_formed_records(ctx, codes, name):
    tool = BY_NAME[name]
    args = sample_args(name, codes)
    records = tool.handler(ctx, args)
    assert records, f"{name} returned nothing for {args}"
    declared = [f.name for f in tool.meta.fields]
    for record in records:
        assert set(record) == set(declared)
    key, fmt = tool.meta.time_key, tool.meta.time_key_fmt
    if key is not None:
        stamps = [dt.datetime.strptime(r[key], fmt) for r in records]
        assert max(stamps).date() <= CLOCK, "nothing after the clock"
        assert stamps == sorted(stamps, reverse=True), "newest first"
    assert json.dumps(records, sort_keys=True, ensure_ascii=False) == json.dumps(tool.handler(ctx, args), sort_keys=True, ensure_ascii=False)


def test_no_record_on_a_closed_day(ctx, codes):
    national_day = dt.date(2026, 10, 1)
    assert BY_NAME["daily"].handler(ctx, {"trade_date": national_day}) == []
    assert BY_NAME["daily"].handler(ctx, {"ts_code": codes["cn"], "trade_date": national_day}) == []
    assert BY_NAME["us_daily"].handler(ctx, {"ts_code": codes["us"], "trade_date": dt.date(2026, 11, 26)}) == []


def test_trade_date_returns_the_cross_section(ctx, market):
    records = BY_NAME["daily"].handler(ctx, {"trade_date": CLOCK})
    trading = [e.code for e in market.universe.of_class("cn_equity") if market.prices.daily(e.code).at(CLOCK) is not None]
    assert sorted(r["ts_code"] for r in records) == sorted(trading) and len(trading) > 250


@pytest.mark.parametrize(
    "name,args,message",
    [
        ("daily", {"ts_code": "999999.SH"}, "search"),
        ("daily", {"ts_code": "00700.HK"}, "search"),
        ("daily", {}, "ts_code, trade_date"),
        ("daily", {"ts_code": "{cn}", "start_date": dt.date(2026, 11, 20), "end_date": dt.date(2026, 11, 2)}, "after end_date"),
        ("daily", {"ts_code": "{hk}"}, "hk_equity"),
        ("hk_daily", {"ts_code": "{cn}"}, "cn_equity"),
        ("stk_mins", {"ts_code": "{cn}", "freq": "2min"}, "freq"),
        ("fund_portfolio", {"ts_code": "{equity_fund}", "period": dt.date(2026, 5, 31)}, "quarter end"),
    ],
)
def test_bad_arguments_raise_actionable_errors(ctx, codes, name, args, message):
    filled = {k: v.format(**codes) if isinstance(v, str) else v for k, v in args.items()}
    with pytest.raises(ToolInputError, match=message):
        BY_NAME[name].handler(ctx, filled)


@pytest.mark.parametrize(
    "name,param,code_key",
    [("fund_daily", "ts_code", "equity_fund"), ("etf_share_size", "ts_code", "equity_fund"),
     ("index_weight", "index_code", "global_index"), ("index_global", "ts_code", "cn_index"),
     ("index_dailybasic", "ts_code", "sw_index"), ("index_member", "index_code", "cn_index")],
)
def test_uncovered_instruments_of_a_served_class_have_no_records(ctx, codes, name, param, code_key):
    assert BY_NAME[name].handler(ctx, {param: codes[code_key]}) == []


def test_daily_basic_units(ctx, codes):
    for r in BY_NAME["daily_basic"].handler(ctx, sample_args("daily_basic", codes)):
        assert r["total_mv"] == pytest.approx(r["close"] * r["total_share"], rel=1e-6)  # 万元 = 元 x 万股
        assert r["circ_mv"] == pytest.approx(r["close"] * r["float_share"], rel=1e-6)
        assert r["float_share"] <= r["total_share"]


def test_daily_change_fields(ctx, codes):
    for r in BY_NAME["daily"].handler(ctx, {"ts_code": codes["cn"]})[:300]:
        assert r["change"] == pytest.approx(r["close"] - r["pre_close"], abs=1e-9)
        assert r["pct_chg"] == round(r["change"] / r["pre_close"] * 100, 4)


def test_minute_bars_aggregate_to_the_daily_bar(ctx, codes):
    for name, code, day, lot in (("stk_mins", codes["cn"], CLOCK, 100), ("hk_mins", codes["hk"], CLOCK, 1)):
        minutes = BY_NAME[name].handler(ctx, {"ts_code": code, "trade_date": day, "freq": "1min"})
        daily_tool = "daily" if name == "stk_mins" else "hk_daily"
        bar = BY_NAME[daily_tool].handler(ctx, {"ts_code": code, "trade_date": day})[0]
        assert minutes[-1]["open"] == bar["open"] and minutes[0]["close"] == bar["close"]
        assert max(m["high"] for m in minutes) == bar["high"] and min(m["low"] for m in minutes) == bar["low"]
        assert sum(m["vol"] for m in minutes) == pytest.approx(bar["vol"] * lot)
    stamps = [m["trade_time"][11:16] for m in BY_NAME["stk_mins"].handler(ctx, {"ts_code": codes["cn"], "trade_date": CLOCK, "freq": "1min"})]
    assert len(stamps) == 240 and "11:30" in stamps and "11:31" not in stamps and stamps[0] == "15:00" and stamps[-1] == "09:31"


def test_moneyflow_buckets_sum_to_volume(ctx, codes):
    daily = {r["trade_date"]: r for r in BY_NAME["daily"].handler(ctx, sample_args("moneyflow", codes))}
    for r in BY_NAME["moneyflow"].handler(ctx, sample_args("moneyflow", codes)):
        total = sum(r[f"{side}_{b}_vol"] for side in ("buy", "sell") for b in ("sm", "md", "lg", "elg"))
        assert total == daily[r["trade_date"]]["vol"]
        buys = sum(r[f"buy_{b}_vol"] for b in ("sm", "md", "lg", "elg"))
        assert r["net_mf_vol"] == buys - (total - buys)


def test_margin_totals_sum_the_details(ctx):
    details = BY_NAME["margin_detail"].handler(ctx, {"trade_date": CLOCK})
    totals = {r["exchange_id"]: r for r in BY_NAME["margin"].handler(ctx, {"trade_date": CLOCK})}
    for exchange, suffix in (("SSE", ".SH"), ("SZSE", ".SZ")):
        assert totals[exchange]["rzye"] == pytest.approx(sum(d["rzye"] for d in details if d["ts_code"].endswith(suffix)), rel=1e-9)
    for d in details[:20]:
        history = BY_NAME["margin_detail"].handler(ctx, {"ts_code": d["ts_code"], "start_date": dt.date(2026, 11, 1)})
        for today, yesterday in zip(history, history[1:]):
            assert today["rzye"] == pytest.approx(yesterday["rzye"] + today["rzmre"] - today["rzche"], abs=0.02)


def test_limit_list_holds_exactly_the_limit_closes(ctx):
    start = dt.date(2026, 11, 2)
    listed = {(r["ts_code"], r["trade_date"], r["limit"]) for r in BY_NAME["limit_list"].handler(ctx, {"start_date": start})}
    expected = set()
    for day in {r["trade_date"] for r in BY_NAME["moneyflow_hsgt"].handler(ctx, {"start_date": start})}:
        the_day = dt.datetime.strptime(day, "%Y%m%d").date()
        limits = {r["ts_code"]: r for r in BY_NAME["stk_limit"].handler(ctx, {"trade_date": the_day})}
        for bar in BY_NAME["daily"].handler(ctx, {"trade_date": the_day}):
            limit = limits[bar["ts_code"]]
            if bar["close"] in (limit["up_limit"], limit["down_limit"]):
                expected.add((bar["ts_code"], day, "U" if bar["close"] == limit["up_limit"] else "D"))
    assert listed == expected and listed


def test_top_list_seats_add_up(ctx):
    entries = BY_NAME["top_list"].handler(ctx, {"start_date": dt.date(2026, 11, 16)})
    seats = BY_NAME["top_inst"].handler(ctx, {"start_date": dt.date(2026, 11, 16)})
    for entry in entries:
        mine = [s for s in seats if (s["ts_code"], s["trade_date"]) == (entry["ts_code"], entry["trade_date"])]
        assert len(mine) == 10
        assert entry["l_buy"] == pytest.approx(sum(s["buy"] for s in mine), abs=0.05)
        assert abs(entry["pct_change"]) >= 7 or entry["turnover_rate"] >= 20


def test_pro_bar_adjustments_chain_over_ex_dates(ctx, market, codes):
    raw = BY_NAME["daily"].handler(ctx, {"ts_code": codes["cn"]})
    qfq = BY_NAME["pro_bar"].handler(ctx, {"ts_code": codes["cn"], "adj": "qfq"})
    hfq = BY_NAME["pro_bar"].handler(ctx, {"ts_code": codes["cn"], "adj": "hfq"})
    assert qfq[0]["close"] == raw[0]["close"], "forward adjustment is anchored on the latest bar"
    ex_dates = {a.ex_date.strftime("%Y%m%d") for a in market.corporate.actions(codes["cn"])}
    checked = 0
    for series in (qfq, hfq):
        for today, yesterday in zip(series, series[1:]):
            if today["trade_date"] in ex_dates:
                assert today["pre_close"] == pytest.approx(yesterday["close"], abs=0.011)
                checked += 1
    assert checked >= 2


def test_dividends_are_point_in_time(market, codes):
    early = ToolContext(market=market, clock=dt.date(2020, 1, 2), seed=SEED)
    late = ToolContext(market=market, clock=CLOCK, seed=SEED)
    before = BY_NAME["dividend"].handler(early, {"ts_code": codes["cn"]})
    after = BY_NAME["dividend"].handler(late, {"ts_code": codes["cn"]})
    assert all(r["ann_date"] <= "20200102" for r in before)
    assert len(after) > len(before) and all(r in after for r in before)


def test_fund_nav_is_published_the_next_weekday(ctx, codes):
    records = BY_NAME["fund_nav"].handler(ctx, {"ts_code": codes["equity_fund"]})
    assert records[0]["nav_date"] == "20261126" and records[0]["ann_date"] == "20261127"


def test_etf_holdings_follow_the_tracked_index(ctx, market, codes):
    holdings = BY_NAME["fund_portfolio"].handler(ctx, {"ts_code": codes["etf"], "period": dt.date(2026, 9, 30)})
    index = market.universe.fund_specs[codes["etf"]].benchmark_index
    weights = BY_NAME["index_weight"].handler(ctx, {"index_code": index, "trade_date": dt.date(2026, 9, 30)})
    assert {h["symbol"] for h in holdings} == {w["con_code"] for w in weights[:10]}
    by_code = {w["con_code"]: w["weight"] for w in weights}
    for h in holdings:  # each holding is the index weight (95% invested) of the fund's net assets
        assert h["stk_mkv_ratio"] == pytest.approx(by_code[h["symbol"]] * 0.95, abs=0.05)


def test_daily_window_latency(ctx, codes):
    tool = BY_NAME["daily"]
    args = {"ts_code": codes["cn"], "start_date": sessions_back("XSHG", CLOCK, 19), "end_date": CLOCK}
    assert len(tool.handler(ctx, args)) == 20
    timings = []
    for _ in range(50):
        t0 = time.perf_counter()
        tool.handler(ctx, args)
        timings.append(time.perf_counter() - t0)
    assert statistics.median(timings) < 0.005
