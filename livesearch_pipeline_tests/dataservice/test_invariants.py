"""Issue 3 invariants checked through the tools themselves (the served records, not the model
arrays): change fields, OHLC, weekly/monthly aggregation, market-value units, adjustment factors
against the dividend table, sessions only, paging, the clock, random access and determinism."""

from __future__ import annotations

import datetime as dt
import json
import statistics
import time
from collections import defaultdict
from typing import Any

import pytest

from livesearch_pipeline.core.calendars import is_session, sessions_back
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.server import DataService, render_json

SEED = 20260101
CLOCK = dt.date(2026, 1, 9)  # a Friday
WINDOW = {"start_date": "20250901", "end_date": "20260109"}


@pytest.fixture(scope="module")
def service() -> DataService:
    return DataService(config=ServiceConfig(seed=SEED, clock=CLOCK), market=Market(SEED))


@pytest.fixture(scope="module")
def codes(service) -> dict[str, str]:
    u = service.market.universe
    old = dt.date(2015, 1, 1)
    return {
        "cn": next(e.code for e in u.of_class("cn_equity") if e.list_date < old and service.market.corporate.actions(e.code)),
        "hk": next(e.code for e in u.of_class("hk_equity") if e.list_date < old),
        "us": next(e.code for e in u.of_class("us_equity") if e.list_date < old),
        "cn_index": next(e.code for e in u.of_class("index") if u.index_specs[e.code].members and e.industry != "行业指数"),
        "sw_index": next(e.code for e in u.of_class("index") if e.industry == "行业指数"),
        "global_index": next(e.code for e in u.of_class("index") if e.exchange == "GLOBAL"),
        "etf": next(e.code for e in u.of_class("fund") if e.market == "E"),
    }


def items(service: DataService, name: str, **args: Any) -> list[dict[str, Any]]:
    return service.call(name, {"limit": 10000, **args})["items"]


BAR_TOOLS = [  # (tool, code key, percent-change field, price decimals)
    ("daily", "cn", "pct_chg", 2), ("weekly", "cn", "pct_chg", 2), ("monthly", "cn", "pct_chg", 2),
    ("hk_daily", "hk", "pct_chg", 3), ("us_daily", "us", "pct_change", 2),
    ("index_daily", "cn_index", "pct_chg", 4), ("index_weekly", "cn_index", "pct_chg", 4),
    ("index_monthly", "cn_index", "pct_chg", 4), ("index_global", "global_index", "pct_chg", 4),
    ("sw_daily", "sw_index", "pct_change", 4), ("fund_daily", "etf", "pct_chg", 3),
]


@pytest.mark.parametrize(("tool", "code_key", "pct", "decimals"), BAR_TOOLS, ids=[t[0] for t in BAR_TOOLS])
def test_change_fields_and_ohlc_of_every_bar_tool(service, codes, tool, code_key, pct, decimals):
    bars = items(service, tool, ts_code=codes[code_key], start_date="20230101")
    assert len(bars) >= 12, tool
    tolerance = 10.0**-decimals
    for b, older in zip(bars, bars[1:]):
        pre_close = b.get("pre_close", older["close"])  # sw_daily, as Tushare's, has no pre_close field
        assert b["change"] == pytest.approx(b["close"] - pre_close, abs=tolerance), (tool, b)
        assert b[pct] == pytest.approx(b["change"] / pre_close * 100, abs=1e-3 + 100 * tolerance / pre_close), (tool, b)
        if "open" in b:
            assert b["high"] >= max(b["open"], b["close"]) and b["low"] <= min(b["open"], b["close"]), (tool, b)
            assert b["low"] > 0


@pytest.mark.parametrize(("daily_tool", "period_tool", "code_key", "key"), [
    ("daily", "weekly", "cn", lambda d: d.isocalendar()[:2]),
    ("daily", "monthly", "cn", lambda d: (d.year, d.month)),
    ("index_daily", "index_weekly", "cn_index", lambda d: d.isocalendar()[:2]),
    ("index_daily", "index_monthly", "cn_index", lambda d: (d.year, d.month)),
], ids=["weekly", "monthly", "index_weekly", "index_monthly"])
def test_period_tools_aggregate_the_daily_tool(service, codes, daily_tool, period_tool, code_key, key):
    code = codes[code_key]
    daily = list(reversed(items(service, daily_tool, ts_code=code, start_date="20240101")))
    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for bar in daily:
        groups[key(dt.datetime.strptime(bar["trade_date"], "%Y%m%d").date())].append(bar)
    if period_tool.endswith("monthly"):  # January 2026 is not over on the clock's date: no bar yet
        del groups[key(CLOCK)]
    periods = items(service, period_tool, ts_code=code, start_date="20240101")
    assert len(periods) == len(groups)
    for p in periods:
        members = groups[key(dt.datetime.strptime(p["trade_date"], "%Y%m%d").date())]
        assert p["trade_date"] == members[-1]["trade_date"], "dated on the period's last session"
        assert (p["open"], p["close"], p["pre_close"]) == (members[0]["open"], members[-1]["close"], members[0]["pre_close"])
        assert p["high"] == max(m["high"] for m in members) and p["low"] == min(m["low"] for m in members)
        assert p["vol"] == pytest.approx(sum(m["vol"] for m in members), rel=1e-9)
        assert p["amount"] == pytest.approx(sum(m["amount"] for m in members), rel=1e-6)


def test_period_bar_of_an_unfinished_week_or_month_is_not_served(service, codes):
    wednesday = DataService(config=ServiceConfig(seed=SEED, clock=dt.date(2026, 1, 7)), market=service.market)
    weeks = items(wednesday, "weekly", ts_code=codes["cn"], start_date="20251201")
    months = items(wednesday, "monthly", ts_code=codes["cn"], start_date="20251001")
    assert weeks[0]["trade_date"] == "20251231" and months[0]["trade_date"] == "20251231"
    assert items(service, "weekly", ts_code=codes["cn"], start_date="20251201")[0]["trade_date"] == "20260109"


def test_market_value_units_agree_across_tools(service, codes):
    basic = {r["trade_date"]: r for r in items(service, "daily_basic", ts_code=codes["cn"], **WINDOW)}
    backup = {r["trade_date"]: r for r in items(service, "bak_daily", ts_code=codes["cn"], **WINDOW)}
    daily = {r["trade_date"]: r for r in items(service, "daily", ts_code=codes["cn"], **WINDOW)}
    assert basic.keys() == backup.keys() == daily.keys()
    for day, b in basic.items():
        assert b["close"] == daily[day]["close"]
        assert b["total_mv"] == pytest.approx(b["close"] * b["total_share"], rel=1e-6)  # 万元 = 元 x 万股
        assert backup[day]["total_mv"] == pytest.approx(b["total_mv"] / 1e4, abs=1e-4)  # 亿元
        assert backup[day]["total_share"] == pytest.approx(b["total_share"] / 1e4, abs=1e-4)  # 亿股
        assert backup[day]["amount"] == pytest.approx(daily[day]["amount"] / 10, abs=0.01)  # 万元 vs 千元
        assert b["turnover_rate"] == pytest.approx(daily[day]["vol"] * 100 / (b["total_share"] * 1e4) * 100, rel=1e-3)
    for tool, code_key in (("hk_daily_adj", "hk"), ("us_daily_adj", "us")):
        for r in items(service, tool, ts_code=codes[code_key], **WINDOW):
            assert r["total_mv"] == pytest.approx(r["close"] * r["total_share"], rel=1e-6, abs=0.01)
            assert r["free_mv"] == pytest.approx(r["close"] * r["free_share"], rel=1e-6, abs=0.01)
            assert r["free_share"] <= r["total_share"]


def test_adj_factor_moves_only_on_ex_dates_listed_by_the_dividend_table(service):
    payers = [e.code for e in service.market.universe.of_class("cn_equity")
              if e.list_date < dt.date(2015, 1, 1) and service.market.corporate.actions(e.code)][:4]
    moves_seen = 0
    for code in payers:
        factors = list(reversed(items(service, "adj_factor", ts_code=code)))
        moved = {b["trade_date"] for a, b in zip(factors, factors[1:]) if a["adj_factor"] != b["adj_factor"]}
        listed = {r["ex_date"] for r in items(service, "dividend", ts_code=code) if r["div_proc"] == "实施"}
        assert moved == {d for d in listed if factors[0]["trade_date"] < d <= factors[-1]["trade_date"]}, code
        bars = {b["trade_date"]: b for b in items(service, "daily", ts_code=code)}
        for day in moved:  # pre_close on the ex-date is the ex-rights price, not the last close
            assert bars[day]["pre_close"] < max(b["close"] for d, b in bars.items() if d < day)
        moves_seen += len(moved)
    assert moves_seen >= 4


def _window_args(service: DataService, name: str, codes: dict[str, str]) -> dict[str, Any] | None:
    spec = service.spec(name)
    meta = spec.meta
    params = {p.name: p for p in spec.params}
    args: dict[str, Any] = {}
    if meta.entity_param:
        by_class = {"cn_equity": "cn", "hk_equity": "hk", "us_equity": "us", "fund": "etf",
                    "index": "global_index" if name == "index_global" else "sw_index" if name == "sw_daily" else "cn_index"}
        key = next((by_class[c] for c in meta.asset_classes if c in by_class), None)
        if key is not None:
            args[meta.entity_param] = codes[key]
    if "start_date" in params and "end_date" in params:
        args.update(start_date="20251215", end_date="20260109")
    for p in spec.params:
        if p.required and p.name not in args:
            return None
    return args


@pytest.mark.slow
def test_no_daily_record_is_dated_on_a_closed_day(service, codes):
    """Every tool keyed by a trading day, over a window across the New Year holidays."""
    checked = []
    for spec in service.specs:
        meta = spec.meta
        if meta.role != "data" or meta.time_key_fmt != "%Y%m%d" or meta.calendar is None:
            continue
        if meta.time_key not in ("trade_date", "date", "nav_date") or "start_date" not in {p.name for p in spec.params}:
            continue
        args = _window_args(service, meta.name, codes)
        if args is None:
            continue
        records = items(service, meta.name, **args)
        for r in records:
            day = dt.datetime.strptime(r[meta.time_key], "%Y%m%d").date()
            assert is_session(meta.calendar, day), (meta.name, r[meta.time_key], meta.calendar)
            assert "20251215" <= r[meta.time_key] <= "20260109", meta.name
        checked.append(meta.name)
    assert len(checked) >= 40, checked


def test_global_indices_are_served_on_the_calendar_their_tool_declares(service):
    declared = service.spec("index_global").meta.calendar
    for e in service.market.universe.of_class("index"):
        if e.exchange == "GLOBAL":
            for r in items(service, "index_global", ts_code=e.code, start_date="20251201"):
                assert is_session(declared, dt.datetime.strptime(r["trade_date"], "%Y%m%d").date()), (e.code, e.calendar)


def test_pages_concatenate_to_the_full_answer_newest_first(service, codes):
    args = {"ts_code": codes["cn"], "start_date": "20250101"}
    full = service.call("daily", args)
    assert full["total"] == len(full["items"]) and not full["has_more"]
    dates = [r["trade_date"] for r in full["items"]]
    assert dates == sorted(dates, reverse=True) and dates[0] == "20260109"
    pages, offset = [], 0
    while True:
        page = service.call("daily", {**args, "limit": 37, "offset": offset})
        assert page["total"] == full["total"]
        pages.extend(page["items"])
        offset += 37
        if not page["has_more"]:
            break
    assert pages == full["items"]
    assert service.call("daily", {**args, "offset": full["total"]})["items"] == []


TOOLS_ACROSS_SERVICES = {  # one or more tools of every data service, with arguments
    "daily": {"ts_code": "{cn}", "start_date": "20251001"},
    "daily_basic": {"ts_code": "{cn}", "start_date": "20251001"},
    "hk_daily_adj": {"ts_code": "{hk}", "start_date": "20251001"},
    "us_daily": {"ts_code": "{us}", "start_date": "20251001"},
    "index_daily": {"ts_code": "{cn_index}", "start_date": "20251001"},
    "index_weight": {"index_code": "{cn_index}", "start_date": "20250601"},
    "fund_nav": {"ts_code": "{etf}", "start_date": "20251001"},
    "income": {"ts_code": "{cn}"},
    "fina_indicator": {"ts_code": "{cn}"},
    "top10_holders": {"ts_code": "{cn}"},
    "dividend": {"ts_code": "{cn}"},
    "moneyflow": {"ts_code": "{cn}", "start_date": "20251001"},
    "margin": {"start_date": "20251001"},
    "trade_cal": {"start_date": "20251001"},
    "namechange": {"ts_code": "{cn}"},
    "cn_cpi": {"start_m": "202401"},
    "cn_gdp": {"start_q": "2023Q1"},
    "shibor": {"start_date": "20251001"},
}


def _filled(args: dict[str, Any], codes: dict[str, str]) -> dict[str, Any]:
    return {k: v.format(**codes) if isinstance(v, str) else v for k, v in args.items()}


def test_the_sample_reaches_every_data_service(service):
    from livesearch_pipeline.dataservice.catalog import DATA_SERVICES

    assert {service.spec(name).meta.service for name in TOOLS_ACROSS_SERVICES} == set(DATA_SERVICES)


def test_history_does_not_change_when_the_clock_moves(service, codes):
    """What was served at clock A is served again at a later clock B: no record dated on or
    before A depends on anything after A (no look-ahead)."""
    later = DataService(config=ServiceConfig(seed=SEED, clock=dt.date(2026, 6, 30)), market=service.market)
    for name, raw in TOOLS_ACROSS_SERVICES.items():
        meta = service.spec(name).meta
        args = _filled(raw, codes)
        early = items(service, name, **args)
        assert early, name
        known = {json.dumps(r, sort_keys=True, ensure_ascii=False) for r in items(later, name, **args)}
        missing = [r for r in early if json.dumps(r, sort_keys=True, ensure_ascii=False) not in known]
        assert not missing, (name, meta.time_key, missing[:2])


def test_identical_calls_on_fresh_services_give_identical_bytes(service, codes):
    fresh = DataService(config=ServiceConfig(seed=SEED, clock=CLOCK))
    for name in ("daily", "income", "dividend", "trade_cal", "cn_cpi", "shibor"):
        raw = TOOLS_ACROSS_SERVICES[name]
        args = _filled(raw, codes)
        assert render_json(fresh.call(name, args)) == render_json(service.call(name, args)), name


def test_any_date_is_served_directly_and_in_constant_time(service, codes):
    """A 20-session window costs the same in 2015 as at the clock, and a fresh market answers
    an early date without first being asked about anything else."""
    code = codes["cn"]
    early_end, late_end = dt.date(2015, 3, 31), CLOCK
    latencies = {}
    for end in (early_end, late_end):
        args = {"ts_code": code, "start_date": sessions_back("XSHG", end, 19).strftime("%Y%m%d"), "end_date": end.strftime("%Y%m%d")}
        assert len(service.call("daily", args)["items"]) == 20
        timings = []
        for _ in range(30):
            t0 = time.perf_counter()
            service.call("daily", args)
            timings.append(time.perf_counter() - t0)
        latencies[end] = statistics.median(timings)
    assert max(latencies.values()) < 0.005, latencies
    assert latencies[early_end] < 3 * latencies[late_end] + 0.001 and latencies[late_end] < 3 * latencies[early_end] + 0.001

    fresh = DataService(config=ServiceConfig(seed=SEED, clock=CLOCK))
    early = {"ts_code": code, "trade_date": "20150305"}
    assert fresh.call("daily", early) == service.call("daily", early)


BAD_CALLS = [  # (tool, arguments, what the message must say)
    ("daily", {"ts_code": "999999.SH"}, "search"),
    ("daily", {"ts_code": "{cn}", "start_date": "2025-01-01"}, "format YYYYMMDD"),
    ("daily", {"ts_code": "{cn}", "start_date": "20251231", "end_date": "20250101"}, "before start_date"),
    ("daily", {"ts_code": "{cn}", "fields": "close,volume"}, "unknown field(s) volume"),
    ("hk_daily", {"ts_code": "{cn}"}, "cn_equity"),
    ("income", {}, "missing required argument(s) ts_code"),
    ("income", {"ts_code": "{cn}", "period": "20250231"}, "format YYYYMMDD"),
    ("fund_nav", {"ts_code": "NOPE.OF"}, "search"),
    ("index_weight", {"index_code": "{cn_index}", "start_date": "20250101", "end_date": "20240101"}, "before start_date"),
    ("cn_cpi", {"start_m": "202513"}, "format YYYYMM"),
    ("cn_gdp", {"start_q": "2025Q5"}, "format YYYYQn"),
    ("shibor", {"start_date": "tomorrow"}, "format YYYYMMDD"),
    ("top10_holders", {"ts_code": "{us}"}, "us_equity"),
    ("stk_mins", {"ts_code": "{cn}", "start_date": "20150105"}, "at most 100 sessions"),
    ("daily", {"ts_code": "{cn}", "limit": 0}, "'limit'"),
    ("dayly", {"ts_code": "{cn}"}, "did you mean daily"),
]


def test_bad_arguments_are_tool_errors_and_the_real_server_keeps_serving(service, codes):
    import anyio
    from mcp import Client

    from livesearch_pipeline.dataservice.server import build_server

    async def go():
        async with Client(build_server(service)) as client:
            failures = []
            for name, raw, _ in BAD_CALLS:
                failures.append(await client.call_tool(name, _filled(raw, codes)))
            after = await client.call_tool("daily", {"ts_code": codes["cn"], "limit": 1})
            return failures, after

    failures, after = anyio.run(go)
    for (name, _, fragment), result in zip(BAD_CALLS, failures):
        text = result.content[0].text
        assert result.is_error and fragment in text, (name, text)
        assert "internal error" not in text, (name, text)
    assert not after.is_error and after.structured_content["items"][0]["trade_date"] == "20260109"
