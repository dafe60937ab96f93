"""Fund tools (service "funds"): NAVs, ETF market bars, adjustment factors, shares, cash
distributions, managers and quarterly top holdings. ETFs track one CN index of the market;
open-end funds follow the A-share market factor (equity / mixed), a bond drift, or a money
market yield."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

from livesearch_pipeline.core.catalog import DateParamMeta
from livesearch_pipeline.dataservice.market.prices import Bars, FundNav
from livesearch_pipeline.dataservice.market.rng import generator
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec
from livesearch_pipeline.dataservice.tools.quotes_cn import (
    DATE_PARAMS, YMD, Record, bar_query, bar_record, entities_or_one, entity_arg, make_tool, num, require_one,
    ts_code_param, window, ymd,
)

CLASSES = ("fund",)
_SURNAMES = "王李张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗"
_GIVEN = "琨澜曦翊珩璟湛霁砚棠芷沅峤溯骁珂筠泠崧蔚旻翎樾琰昶赟珈骞槿霈滢晞钰"
_EDU = ("硕士", "博士", "本科")


def is_etf(entity: Entity) -> bool:
    return entity.asset_class == "fund" and entity.market == "E"


def _next_weekday(day: dt.date) -> dt.date:
    day += dt.timedelta(days=1)
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return day


def _nav_window(ctx: ToolContext, args: dict[str, Any], tool: str, point: str) -> tuple[dt.date | None, dt.date]:
    translated = {"trade_date": args.get(point), "start_date": args.get("start_date"), "end_date": args.get("end_date")}
    return window(ctx, {k: v for k, v in translated.items() if v is not None}, tool)


def _nav_rows(ctx: ToolContext, nav: FundNav, start: dt.date | None, end: dt.date) -> range:
    """NAV rows in the window that are already published: a NAV is announced the next weekday."""
    i, j = nav.span(start, end)
    while j > i and _next_weekday(nav.dates[j - 1]) > ctx.clock:
        j -= 1
    return range(j - 1, i - 1, -1)


def _fund_nav(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    require_one(args, "fund_nav", "ts_code", "nav_date")
    entity = entity_arg(ctx, args, CLASSES, "fund_nav")
    start, end = _nav_window(ctx, args, "fund_nav", "nav_date")
    records = []
    for fund in entities_or_one(ctx, entity, "fund"):
        nav = ctx.market.prices.nav(fund.code)
        for k in _nav_rows(ctx, nav, start, end):
            net_asset = round(float(nav.fund_share[k]) * 1e4 * float(nav.unit_nav[k]), 2)
            records.append({
                "ts_code": fund.code, "ann_date": ymd(_next_weekday(nav.dates[k])), "nav_date": ymd(nav.dates[k]),
                "unit_nav": num(nav.unit_nav[k], 4), "accum_nav": num(nav.accum_nav[k], 4),
                "accum_div": num(nav.accum_div[k], 4), "net_asset": net_asset,
                "adj_nav": num(nav.unit_nav[k] * nav.adj_factor[k], 4),
            })
    if entity is None:
        records.sort(key=lambda r: r["ts_code"])
    return records


def _fund_daily(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return bar_query(ctx, args, "fund_daily", CLASSES, ctx.market.prices.daily, lambda b, k: bar_record(b, k, 3), predicate=is_etf)


def _fund_adj(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    require_one(args, "fund_adj", "ts_code", "trade_date")
    entity = entity_arg(ctx, args, CLASSES, "fund_adj")
    start, end = window(ctx, args, "fund_adj")
    records = []
    for fund in entities_or_one(ctx, entity, "fund"):
        nav = ctx.market.prices.nav(fund.code)
        i, j = nav.span(start, end)
        records += [{"ts_code": fund.code, "trade_date": ymd(nav.dates[k]), "adj_factor": num(nav.adj_factor[k], 6)} for k in range(j - 1, i - 1, -1)]
    return records


def _fund_share(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    def build(bars: Bars, k: int) -> Record:
        nav = ctx.market.prices.nav(bars.code)
        return {"ts_code": bars.code, "trade_date": ymd(bars.dates[k]), "fd_share": num(nav.fund_share[k], 2),
                "fund_type": "ETF", "market": "SH" if bars.code.endswith(".SH") else "SZ"}

    return bar_query(ctx, args, "fund_share", CLASSES, ctx.market.prices.daily, build, predicate=is_etf)


def _etf_share_size(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    def build(bars: Bars, k: int) -> Record:
        nav = ctx.market.prices.nav(bars.code)
        entity = ctx.market.universe.get(bars.code)
        shares = float(nav.fund_share[k])
        return {"ts_code": bars.code, "trade_date": ymd(bars.dates[k]), "etf_name": entity.name,
                "total_share": round(shares, 2), "total_size": round(shares * float(nav.unit_nav[k]), 2),
                "nav": num(nav.unit_nav[k], 4), "close": num(bars.close[k], 3), "exchange": entity.exchange}

    return bar_query(ctx, args, "etf_share_size", CLASSES, ctx.market.prices.daily, build, predicate=is_etf)


def _fund_div(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    require_one(args, "fund_div", "ts_code", "ann_date", "ex_date")
    entity = entity_arg(ctx, args, CLASSES, "fund_div")
    wanted = {k: ymd(args[k]) for k in ("ann_date", "ex_date") if args.get(k) is not None}
    clock = ymd(ctx.clock)
    records = []
    for fund in entities_or_one(ctx, entity, "fund"):
        nav = ctx.market.prices.nav(fund.code)
        for ex_date, cash in nav.distributions:
            ann = ex_date - dt.timedelta(days=7)
            record_date = ex_date - dt.timedelta(days=1)
            while record_date.weekday() >= 5:
                record_date -= dt.timedelta(days=1)
            k = nav.span(None, record_date)[1] - 1
            r = {"ts_code": fund.code, "ann_date": ymd(ann), "imp_anndate": ymd(ann), "base_date": ymd(nav.dates[max(k, 0)]),
                 "div_proc": "实施", "record_date": ymd(record_date), "ex_date": ymd(ex_date), "pay_date": ymd(_next_weekday(ex_date)),
                 "div_cash": cash, "base_unit": 1.0}
            if r["ann_date"] <= clock and all(r[key] == v for key, v in wanted.items()):
                records.append(r)
    records.sort(key=lambda r: (r["ann_date"], r["ts_code"]), reverse=True)
    return records


def fund_managers(seed: int, entity: Entity, found_date: dt.date) -> list[dict[str, Any]]:
    """The fund's manager history: one to three tenures from the founding date on."""
    rng = generator(seed, entity.code, "managers")
    tenures = int(rng.integers(1, 4))
    starts = sorted({found_date} | {found_date + dt.timedelta(days=int(d)) for d in rng.integers(400, 4000, size=tenures - 1)})
    managers = []
    for i, begin in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else None
        name = str(rng.choice(list(_SURNAMES))) + "".join(str(c) for c in rng.choice(list(_GIVEN), size=int(rng.integers(1, 3)), replace=False))
        managers.append({
            "ts_code": entity.code, "ann_date": ymd(begin), "name": name, "gender": str(rng.choice(["M", "F"])),
            "birth_year": str(int(rng.integers(1970, 1992))), "edu": str(rng.choice(_EDU)), "nationality": "中国",
            "begin_date": ymd(begin), "end_date": ymd(end),
            "resume": f"{name}，曾任{_research_house_name(rng)}研究员，{begin.year}年起担任本基金基金经理。",
        })
    return managers


def _research_house_name(rng: np.random.Generator) -> str:
    return "".join(str(c) for c in rng.choice(list(_GIVEN), size=2, replace=False)) + "证券研究所"


def _fund_manager(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    entity = entity_arg(ctx, args, CLASSES, "fund_manager")
    if entity is None:
        raise ToolInputError("fund_manager: ts_code is required, e.g. a fund code from fund_basic")
    clock = ymd(ctx.clock)
    records = []
    for m in fund_managers(ctx.seed, entity, ctx.market.universe.fund_specs[entity.code].found_date):
        if m["ann_date"] > clock:
            continue
        records.append(m | {"end_date": m["end_date"] if m["end_date"] and m["end_date"] <= clock else None})
    return sorted(records, key=lambda r: r["ann_date"], reverse=True)


def _quarter_ends(first: dt.date, last: dt.date) -> list[dt.date]:
    ends = []
    year = first.year
    while year <= last.year:
        for month, day in ((3, 31), (6, 30), (9, 30), (12, 31)):
            q = dt.date(year, month, day)
            if first <= q <= last:
                ends.append(q)
        year += 1
    return ends


# Active weight of a benchmark fund's holding (log-normal spread around its index weight), and
# the regulatory ceiling of one stock in a fund's net assets (CSRC: 10 %).
TILT_SIGMA = 0.3
ETF_TRACKING_SIGMA = 0.002
SINGLE_STOCK_CAP_PCT = 10.0


def fund_holdings(ctx: ToolContext, fund: Entity, end_date: dt.date) -> list[Record]:
    """Top-10 stock holdings of an equity fund at a quarter end (announced 20 days later)."""
    spec = ctx.market.universe.fund_specs[fund.code]
    if spec.fund_type in ("债券型", "货币市场型"):
        return []
    nav = ctx.market.prices.nav(fund.code)
    k = nav.span(None, end_date)[1] - 1
    if k < 0:
        return []
    net_asset = float(nav.fund_share[k]) * 1e4 * float(nav.unit_nav[k])
    if spec.benchmark_index is not None:
        weights = [w for day, w in ctx.market.prices.index_weights(spec.benchmark_index) if day <= end_date]
        if not weights:
            return []
        ranked = sorted(weights[-1].items(), key=lambda kv: (-kv[1], kv[0]))[:10]
        # A fund holds its benchmark's largest constituents, each at its own weight: an active
        # manager over- or underweights each (then the 双十 rule: no single stock above 10 % of
        # the fund's net assets); an ETF replicates the index up to a small tracking deviation
        # (index funds are exempt from the 10 % rule). A holding at exactly its index weight
        # would own the same share of every constituent's float.
        rng = generator(ctx.seed, fund.code, "tilts", end_date.isoformat())
        etf = is_etf(fund)
        tilts = np.exp(rng.normal(0.0, ETF_TRACKING_SIGMA if etf else TILT_SIGMA, len(ranked)))
        caps = np.full(len(ranked), np.inf) if etf else SINGLE_STOCK_CAP_PCT - rng.uniform(0.05, 0.6, len(ranked))
        picks = [(code, float(min(weight * 0.95 * tilt, cap)))
                 for (code, weight), tilt, cap in zip(ranked, tilts, caps)]
    else:
        rng = generator(ctx.seed, fund.code, "holdings", end_date.isoformat())
        listed = [e.code for e in ctx.market.universe.of_class("cn_equity") if e.list_date <= end_date]
        chosen = rng.choice(len(listed), size=10, replace=False)
        raw = np.sort(rng.uniform(2.0, 9.5, 10))[::-1]
        picks = [(listed[int(i)], float(w)) for i, w in zip(chosen, raw)]
    ann_date = end_date + dt.timedelta(days=20)
    records = []
    for code, weight_pct in picks:
        bars = ctx.market.prices.daily(code)
        b = bars.last_on_or_before(end_date)
        if b is None:
            continue
        close = float(bars.close[b])
        amount = round(net_asset * weight_pct / 100 / close, -2)
        mkv = round(amount * close, 2)
        records.append({
            "ts_code": fund.code, "ann_date": ymd(ann_date), "end_date": ymd(end_date), "symbol": code,
            "mkv": mkv, "amount": amount, "stk_mkv_ratio": round(mkv / net_asset * 100, 2),
            "stk_float_ratio": round(amount / float(bars.float_share[b]) * 100, 4),
        })
    records.sort(key=lambda r: (-r["mkv"], r["symbol"]))
    return records


def _fund_portfolio(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    entity = entity_arg(ctx, args, CLASSES, "fund_portfolio")
    if entity is None:
        raise ToolInputError("fund_portfolio: ts_code is required, e.g. a fund code from fund_basic")
    period = args.get("period")
    start, end = args.get("start_date"), min(args.get("end_date") or ctx.clock, ctx.clock)
    if start is not None and start > end:
        raise ToolInputError(f"fund_portfolio: start_date {ymd(start)} is after end_date {ymd(end)}")
    if period is not None and (period.month, period.day) not in ((3, 31), (6, 30), (9, 30), (12, 31)):
        raise ToolInputError(f"fund_portfolio: period {ymd(period)} is not a quarter end (YYYY0331/0630/0930/1231)")
    first = max(entity.list_date, dt.date(2015, 1, 1))
    quarters = [period] if period is not None else _quarter_ends(first, end)
    records = []
    for q in reversed(quarters):
        ann = q + dt.timedelta(days=20)
        if ann > ctx.clock or (start is not None and ann < start) or (period is None and ann > end) or q < first:
            continue
        records += fund_holdings(ctx, entity, q)
    return records


_PARAMS = (ts_code_param("510xxx.SH / 16xxxx.OF"), *DATE_PARAMS)

TOOLS: list[ToolSpec] = [
    make_tool(name="fund_nav", service="funds", asset_classes=["fund"],
              params=(ts_code_param("16xxxx.OF"), ParamSpec("nav_date", "date", "NAV date (YYYYMMDD)", fmt=YMD), *DATE_PARAMS[1:]),
              handler=_fund_nav, time_key="nav_date", publication_lag_sessions=1,
              date_params=[DateParamMeta(name="nav_date", fmt=YMD, role="point"), DateParamMeta(name="start_date", fmt=YMD, role="start"),
                           DateParamMeta(name="end_date", fmt=YMD, role="end")],
              description="Fund net asset value per unit, accumulated NAV and net assets (published the next weekday)",
              fields=[("ts_code", "code", None, "fund code", "基金代码"),
                      ("ann_date", "date", None, "publication date (next weekday after the NAV date)", "公告日期"),
                      ("nav_date", "date", None, "NAV date", "净值日期"),
                      ("unit_nav", "number", "CNY", "NAV per unit, CNY", "单位净值（元）"),
                      ("accum_nav", "number", "CNY", "accumulated NAV per unit (unit NAV plus distributions), CNY", "累计净值（元）"),
                      ("accum_div", "number", "CNY", "accumulated cash distributions per unit, CNY", "累计分红（元）"),
                      ("net_asset", "number", "CNY", "net assets of the fund, CNY", "资产净值（元）"),
                      ("adj_nav", "number", "CNY", "distribution-adjusted NAV, CNY", "复权单位净值（元）")]),
    make_tool(name="fund_daily", service="funds", asset_classes=["fund"], params=(ts_code_param("510xxx.SH"), *DATE_PARAMS), handler=_fund_daily,
              description="Exchange-traded fund (ETF) daily market bars, trading close to NAV",
              fields=[("ts_code", "code", None, "ETF code", "基金代码"), ("trade_date", "date", None, "trading day", "交易日期"),
                      ("open", "number", "CNY", "opening price, CNY", "开盘价（元）"), ("high", "number", "CNY", "highest price, CNY", "最高价（元）"),
                      ("low", "number", "CNY", "lowest price, CNY", "最低价（元）"), ("close", "number", "CNY", "closing price, CNY", "收盘价（元）"),
                      ("pre_close", "number", "CNY", "previous close, CNY", "昨收盘价（元）"), ("change", "number", "CNY", "close minus previous close, CNY", "涨跌额（元）"),
                      ("pct_chg", "number", "%", "percentage change, percent", "涨跌幅（%）"), ("vol", "number", "lots", "volume in lots of 100 units", "成交量（手）"),
                      ("amount", "number", "thousand CNY", "turnover, thousand CNY", "成交额（千元）")]),
    make_tool(name="fund_adj", service="funds", asset_classes=["fund"], params=_PARAMS, handler=_fund_adj,
              description="Fund cumulative adjustment factor (moves on distribution ex-dates)",
              fields=[("ts_code", "code", None, "fund code", "基金代码"), ("trade_date", "date", None, "trading day", "交易日期"),
                      ("adj_factor", "number", None, "cumulative distribution adjustment factor", "复权因子")]),
    make_tool(name="fund_share", service="funds", asset_classes=["fund"], params=(ts_code_param("510xxx.SH"), *DATE_PARAMS), handler=_fund_share,
              description="ETF units outstanding per trading day",
              fields=[("ts_code", "code", None, "fund code", "基金代码"), ("trade_date", "date", None, "trading day", "交易日期"),
                      ("fd_share", "number", "10k units", "units outstanding, in 10 thousand units", "基金份额（万份）"),
                      ("fund_type", "text", None, "fund type", "基金类型"), ("market", "text", None, "exchange: SH or SZ", "市场")]),
    make_tool(name="etf_share_size", service="funds", asset_classes=["fund"], params=(ts_code_param("510xxx.SH"), *DATE_PARAMS), handler=_etf_share_size,
              description="ETF units outstanding and fund size (units x NAV) per trading day",
              fields=[("ts_code", "code", None, "ETF code", "基金代码"), ("trade_date", "date", None, "trading day", "交易日期"),
                      ("etf_name", "text", None, "ETF name", "基金名称"),
                      ("total_share", "number", "10k units", "units outstanding, 10 thousand units", "总份额（万份）"),
                      ("total_size", "number", "10k CNY", "fund size: units x NAV, 10 thousand CNY", "总规模（万元）"),
                      ("nav", "number", "CNY", "NAV per unit, CNY", "单位净值（元）"), ("close", "number", "CNY", "closing price, CNY", "收盘价（元）"),
                      ("exchange", "text", None, "listing exchange", "交易所")]),
    make_tool(name="fund_div", service="funds", asset_classes=["fund"],
              params=(ts_code_param("16xxxx.OF"), ParamSpec("ann_date", "date", "announcement date (YYYYMMDD)", fmt=YMD),
                      ParamSpec("ex_date", "date", "ex-distribution date (YYYYMMDD)", fmt=YMD)),
              handler=_fund_div, time_key="ann_date", refresh_class="quarterly",
              date_params=[DateParamMeta(name="ann_date", fmt=YMD, role="point"), DateParamMeta(name="ex_date", fmt=YMD, role="point")],
              description="Fund cash distributions (per unit) with announcement, record, ex and payment dates",
              fields=[("ts_code", "code", None, "fund code", "基金代码"), ("ann_date", "date", None, "announcement date", "公告日期"),
                      ("imp_anndate", "date", None, "implementation announcement date", "分红实施公告日"),
                      ("base_date", "date", None, "NAV base date of the distribution", "分配收益基准日"),
                      ("div_proc", "text", None, "stage (实施 = implemented)", "方案进度"),
                      ("record_date", "date", None, "record date", "权益登记日"), ("ex_date", "date", None, "ex-distribution date", "除息日"),
                      ("pay_date", "date", None, "payment date", "派息日"),
                      ("div_cash", "number", "CNY", "cash distribution per unit, CNY", "每股派息（元）"),
                      ("base_unit", "number", "units", "base unit of the distribution", "基准基金份额（万份）")]),
    make_tool(name="fund_manager", roles={"name": "label"}, series_keys=["name"], service="funds", asset_classes=["fund"], params=(ts_code_param("16xxxx.OF", required=True),),
              handler=_fund_manager, date_params=[], time_key="ann_date", refresh_class="static",
              description="Fund managers with tenure (begin/end dates), education and resume",
              fields=[("ts_code", "code", None, "fund code", "基金代码"), ("ann_date", "date", None, "announcement date", "公告日期"),
                      ("name", "text", None, "manager name", "基金经理姓名"), ("gender", "text", None, "gender (M/F)", "性别"),
                      ("birth_year", "text", None, "year of birth", "出生年份"), ("edu", "text", None, "education", "学历"),
                      ("nationality", "text", None, "nationality", "国籍"), ("begin_date", "date", None, "tenure start", "任职日期"),
                      ("end_date", "date", None, "tenure end (blank while in office)", "离任日期"), ("resume", "text", None, "resume", "简历")]),
    make_tool(name="fund_portfolio", series_keys=["symbol"], service="funds", asset_classes=["fund"],
              params=(ts_code_param("16xxxx.OF", required=True),
                      ParamSpec("period", "date", "quarter end (YYYYMMDD: 0331/0630/0930/1231)", fmt=YMD),
                      ParamSpec("start_date", "date", "first announcement date (YYYYMMDD)", fmt=YMD),
                      ParamSpec("end_date", "date", "last announcement date (YYYYMMDD)", fmt=YMD)),
              handler=_fund_portfolio, time_key="ann_date", refresh_class="quarterly",
              date_params=[DateParamMeta(name="period", fmt=YMD, role="period"), DateParamMeta(name="start_date", fmt=YMD, role="start"),
                           DateParamMeta(name="end_date", fmt=YMD, role="end")],
              description="Fund top-10 stock holdings at each quarter end (announced 20 days after the quarter)",
              fields=[("ts_code", "code", None, "fund code", "基金代码"), ("ann_date", "date", None, "announcement date", "公告日期"),
                      ("end_date", "date", None, "quarter end of the holdings", "截止日期"), ("symbol", "code", None, "stock code held", "股票代码"),
                      ("mkv", "number", "CNY", "market value of the holding, CNY", "持有股票市值（元）"),
                      ("amount", "number", "shares", "number of shares held", "持有股票数量（股）"),
                      ("stk_mkv_ratio", "number", "%", "holding value as percent of the fund's net assets", "占股票市值比（%）"),
                      ("stk_float_ratio", "number", "%", "shares held as percent of the stock's float shares", "占流通股本比例（%）")]),
]
