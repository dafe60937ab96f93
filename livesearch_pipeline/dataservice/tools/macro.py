"""Macro, rates and FX tools (service "macro").

Monthly statistics take `m` / `start_m` / `end_m` (YYYYMM), GDP takes `q` / `start_q` / `end_q`
(YYYYQn), daily series `date` / `start_date` / `end_date` (YYYYMMDD), as Tushare does. A
statistic is returned only once published (its release date on or before the service clock),
so the latest month of `cn_cpi` on 2026-11-05 is September, and October appears mid-November.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from livesearch_pipeline.dataservice.market.macro import (
    FX_PAIRS,
    HIBOR_TENORS,
    REAL_TENORS,
    SHIBOR_TENORS,
    TBILL_WEEKS,
    UST_TENORS,
    DailySeries,
    Release,
)
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec
from livesearch_pipeline.dataservice.tools.statements import YMD, date_param, fld, make_tool, optional_date, ymd

MONTH_FMT = "%Y%m"
QUARTER_FMT = "YYYYQn"
_QUARTER_RE = re.compile(r"^(\d{4})Q([1-4])$")


# ------------------------------------------------------------------ argument parsing


def parse_month(value: Any, name: str) -> str:
    """A month as YYYYMM; accepts the string or a date (servers may pre-parse month params)."""
    if isinstance(value, dt.date):
        return value.strftime(MONTH_FMT)
    text = str(value)
    try:
        dt.datetime.strptime(text, MONTH_FMT)
    except ValueError:
        raise ToolInputError(f"{name} must be a month YYYYMM such as 202609; got {value!r}") from None
    if len(text) != 6:
        raise ToolInputError(f"{name} must be a month YYYYMM such as 202609; got {value!r}")
    return text


def parse_quarter(value: Any, name: str) -> str:
    """A quarter as YYYYQn; accepts the string or a date (the quarter containing it)."""
    if isinstance(value, dt.date):
        return f"{value.year}Q{(value.month - 1) // 3 + 1}"
    text = str(value).upper()
    if not _QUARTER_RE.match(text):
        raise ToolInputError(f"{name} must be a quarter YYYYQn such as 2026Q3; got {value!r}")
    return text


def _release_records(
    ctx: ToolContext, releases: list[Release], key: str, point: str | None, start: str | None, end: str | None
) -> list[dict[str, Any]]:
    if point is not None and (start is not None or end is not None):
        raise ToolInputError(f"give either the single period or a start/end range, not both (got {point!r} and a range)")
    if start is not None and end is not None and start > end:
        raise ToolInputError(f"the range start {start} is after its end {end}")
    records = []
    for release in releases:
        if release.release_date > ctx.clock:
            continue
        if point is not None and release.period != point:
            continue
        if (start is not None and release.period < start) or (end is not None and release.period > end):
            continue
        records.append({key: release.period, **{k: float(v) for k, v in release.values.items()}})
    records.reverse()  # newest first
    return records


def _monthly_handler(attribute: str):
    def handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
        releases = getattr(ctx.market.macro, attribute)
        point = parse_month(args["m"], "m") if args.get("m") is not None else None
        start = parse_month(args["start_m"], "start_m") if args.get("start_m") is not None else None
        end = parse_month(args["end_m"], "end_m") if args.get("end_m") is not None else None
        return _release_records(ctx, releases, "month", point, start, end)

    return handler


def _gdp_handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    point = parse_quarter(args["q"], "q") if args.get("q") is not None else None
    start = parse_quarter(args["start_q"], "start_q") if args.get("start_q") is not None else None
    end = parse_quarter(args["end_q"], "end_q") if args.get("end_q") is not None else None
    return _release_records(ctx, ctx.market.macro.gdp, "quarter", point, start, end)


def _window(ctx: ToolContext, args: dict[str, Any], point_name: str) -> tuple[dt.date | None, dt.date]:
    point = optional_date(args, point_name)
    start, end = optional_date(args, "start_date"), optional_date(args, "end_date")
    if point is not None:
        if start is not None or end is not None:
            raise ToolInputError(f"give either {point_name} or start_date/end_date, not both")
        return point, min(point, ctx.clock)
    last = min(end, ctx.clock) if end is not None else ctx.clock
    if start is not None and end is not None and start > end:
        raise ToolInputError(f"start_date {ymd(start)} is after end_date {ymd(end)}")
    return start, last


def _daily_records(ctx: ToolContext, series: DailySeries, args: dict[str, Any], key: str, head: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    start, last = _window(ctx, args, key)
    i, j = series.span(start, last)
    return [{**(head or {}), key: series.keys[k], **series.row(k)} for k in range(j - 1, i - 1, -1)]


def _daily_handler(attribute: str):
    def handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
        return _daily_records(ctx, getattr(ctx.market.macro, attribute), args, "date")

    return handler


def _lpr_handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    start, last = _window(ctx, args, "date")
    rows = [
        {"date": ymd(day), "1y": one, "5y": five}
        for day, one, five in ctx.market.macro.lpr
        if day <= last and (start is None or day >= start)
    ]
    rows.reverse()
    return rows


def _fx_daily_handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args.get("ts_code")
    if code is None:
        codes = [p.code for p in FX_PAIRS]
    else:
        try:
            ctx.market.macro.fx_pair(code)
        except LookupError as exc:
            raise ToolInputError(str(exc)) from None
        codes = [code]
    exchange = args.get("exchange")
    if exchange is not None and exchange != "FXCM":
        raise ToolInputError(f"exchange must be FXCM (the only FX venue served); got {exchange!r}")
    records = []
    for c in codes:
        rows = _daily_records(ctx, ctx.market.macro.fx(c), args, "trade_date", {"ts_code": c})
        for row in rows:
            row["tick_qty"] = int(row["tick_qty"])
            row["exchange"] = "FXCM"
        records.extend(rows)
    records.sort(key=lambda r: (r["trade_date"], r["ts_code"]), reverse=True)
    return records


def _fx_obasic_handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    exchange, classify, code = args.get("exchange"), args.get("classify"), args.get("ts_code")
    rows = []
    for pair in FX_PAIRS:
        row = {
            "ts_code": pair.code, "name": pair.name, "classify": "FX", "exchange": "FXCM",
            "min_unit": 1000.0, "max_unit": 50_000_000.0, "pip": pair.pip,
            "pip_cost": 0.1 if pair.pip == 0.0001 else 0.09, "traget_spread": pair.spread_pips,
            "min_stop_distance": 5.0, "trading_hours": "周一05:00-周六05:00", "break_time": None,
        }
        if exchange is not None and row["exchange"] != exchange:
            continue
        if classify is not None and row["classify"] != classify:
            continue
        if code is not None and row["ts_code"] != code:
            continue
        rows.append(row)
    return rows


# ------------------------------------------------------------------ catalog rows

_MONTH_PARAMS = [
    ParamSpec("m", "month", "month YYYYMM, e.g. 202609"),
    ParamSpec("start_m", "month", "first month YYYYMM"),
    ParamSpec("end_m", "month", "last month YYYYMM"),
]
_MONTH_DATES = [("m", MONTH_FMT, "point"), ("start_m", MONTH_FMT, "start"), ("end_m", MONTH_FMT, "end")]
_DAILY_PARAMS = [date_param("date", "date YYYYMMDD"), date_param("start_date", "first date YYYYMMDD"), date_param("end_date", "last date YYYYMMDD")]
_DAILY_DATES = [("date", YMD, "point"), ("start_date", YMD, "start"), ("end_date", YMD, "end")]
_MONTH_FIELD = fld("month", "date", None, "statistical month (YYYYMM)", "月份")
_DATE_FIELD = fld("date", "date", None, "date (YYYYMMDD)", "日期")


def _monthly_tool(name: str, description: str, attribute: str, fields: list, refresh: str = "monthly") -> ToolSpec:
    return make_tool(
        name=name, service="macro", description=description, asset_classes=["macro"],
        fields=[_MONTH_FIELD, *fields], params=_MONTH_PARAMS, handler=_monthly_handler(attribute),
        date_params=_MONTH_DATES, time_key="month", time_key_fmt=MONTH_FMT, refresh_class=refresh,
    )


def _daily_tool(name: str, description: str, handler, fields: list, calendar: str | None, asset_class: str = "rates_fx") -> ToolSpec:
    return make_tool(
        name=name, service="macro", description=description, asset_classes=[asset_class],
        fields=[_DATE_FIELD, *fields], params=_DAILY_PARAMS, handler=handler, date_params=_DAILY_DATES,
        time_key="date", calendar=calendar, refresh_class="daily",
    )


def _cpi_fields() -> list:
    out = []
    for prefix, en, zh in (("nt", "national", "全国"), ("town", "urban", "城市"), ("cnt", "rural", "农村")):
        out += [
            fld(f"{prefix}_val", "number", "index", f"{en} CPI, same month last year = 100", f"{zh}当月值(上年同月=100)"),
            fld(f"{prefix}_yoy", "number", "%", f"{en} CPI year-over-year change", f"{zh}同比(%)"),
            fld(f"{prefix}_mom", "number", "%", f"{en} CPI month-over-month change", f"{zh}环比(%)"),
            fld(f"{prefix}_accu", "number", "index", f"{en} CPI year-to-date average, same period last year = 100", f"{zh}累计值(上年同期=100)"),
        ]
    return out


_PMI_FIELDS = [
    ("pmi010000", "manufacturing PMI", "制造业PMI"),
    ("pmi010100", "manufacturing PMI, large enterprises", "制造业PMI:企业规模/大型企业"),
    ("pmi010200", "manufacturing PMI, medium enterprises", "制造业PMI:企业规模/中型企业"),
    ("pmi010300", "manufacturing PMI, small enterprises", "制造业PMI:企业规模/小型企业"),
    ("pmi010400", "manufacturing PMI production index", "制造业PMI:构成指数/生产指数"),
    ("pmi010500", "manufacturing PMI new orders index", "制造业PMI:构成指数/新订单指数"),
    ("pmi010600", "manufacturing PMI supplier delivery times index", "制造业PMI:构成指数/供应商配送时间指数"),
    ("pmi010700", "manufacturing PMI raw materials inventory index", "制造业PMI:构成指数/原材料库存指数"),
    ("pmi010800", "manufacturing PMI employment index", "制造业PMI:构成指数/从业人员指数"),
    ("pmi020100", "non-manufacturing business activity index", "非制造业PMI:商务活动"),
    ("pmi030000", "composite PMI output index", "综合PMI产出指数"),
]


def _build_tools() -> list[ToolSpec]:
    tools = [
        _monthly_tool(
            "cn_cpi", "China consumer price index (national, urban, rural), published 9th-15th of the next month", "cpi", _cpi_fields(),
        ),
        _monthly_tool(
            "cn_ppi", "China producer price index, published 9th-15th of the next month", "ppi",
            [
                fld("ppi_yoy", "number", "%", "PPI (all industrial products) year-over-year change", "PPI:全部工业品:当月同比(%)"),
                fld("ppi_mom", "number", "%", "PPI month-over-month change", "PPI:全部工业品:环比(%)"),
                fld("ppi_mp_yoy", "number", "%", "PPI means of production, year-over-year", "PPI:生产资料:当月同比(%)"),
                fld("ppi_mp_mom", "number", "%", "PPI means of production, month-over-month", "PPI:生产资料:环比(%)"),
                fld("ppi_cg_yoy", "number", "%", "PPI consumer goods, year-over-year", "PPI:生活资料:当月同比(%)"),
                fld("ppi_cg_mom", "number", "%", "PPI consumer goods, month-over-month", "PPI:生活资料:环比(%)"),
                fld("ppi_accu", "number", "%", "PPI year-to-date average year-over-year change", "PPI:全部工业品:累计同比(%)"),
            ],
        ),
        _monthly_tool(
            "cn_m", "China money supply M0/M1/M2 (100 million CNY), published 10th-15th of the next month", "money_supply",
            [
                fld(f"{m}{suffix}", "number", unit, f"{m.upper()} {what}", f"{m.upper()}{zh}")
                for m in ("m0", "m1", "m2")
                for suffix, unit, what, zh in (
                    ("", "100M CNY", "money supply at month end, 100 million CNY (亿元)", "(亿元)"),
                    ("_yoy", "%", "year-over-year growth", "同比(%)"),
                    ("_mom", "%", "month-over-month growth", "环比(%)"),
                )
            ],
        ),
        _monthly_tool(
            "sf_month", "China aggregate social financing: monthly increment (100 million CNY) and stock (trillion CNY)", "social_financing",
            [
                fld("inc_month", "number", "100M CNY", "social financing increment in the month, 100 million CNY (亿元)", "社融增量当月值(亿元)"),
                fld("inc_cumval", "number", "100M CNY", "social financing increment year to date, 100 million CNY (亿元)", "社融增量累计值(亿元)"),
                fld("stk_endval", "number", "trillion CNY", "social financing stock at month end, trillion CNY (万亿元)", "社融存量期末值(万亿元)"),
            ],
        ),
        _monthly_tool(
            "cn_pmi", "China official purchasing managers' index, published on the last day of the month", "pmi",
            [fld(n, "number", "index", f"{d} (50 = no change)", z) for n, d, z in _PMI_FIELDS],
        ),
        make_tool(
            name="cn_gdp", service="macro", description="China gross domestic product, cumulative year to date, published 15-20 days after the quarter: levels at current prices (nominal, 100 million CNY); every *_yoy field is real growth at constant prices, year to date against the same period a year earlier, percent",
            asset_classes=["macro"],
            fields=[
                fld("quarter", "date", None, "quarter (YYYYQn)", "季度"),
                fld("gdp", "number", "100M CNY", "GDP year to date, current prices, 100 million CNY (亿元)", "GDP累计值(亿元)"),
                fld("gdp_yoy", "number", "%", "real GDP growth at constant prices, year to date against the same period a year earlier, percent", "GDP累计同比实际增速(不变价,%)"),
                fld("pi", "number", "100M CNY", "primary industry value added year to date (亿元)", "第一产业累计值(亿元)"),
                fld("pi_yoy", "number", "%", "primary industry value added, real growth at constant prices, year to date against the same period a year earlier, percent", "第一产业累计同比实际增速(不变价,%)"),
                fld("si", "number", "100M CNY", "secondary industry value added year to date (亿元)", "第二产业累计值(亿元)"),
                fld("si_yoy", "number", "%", "secondary industry value added, real growth at constant prices, year to date against the same period a year earlier, percent", "第二产业累计同比实际增速(不变价,%)"),
                fld("ti", "number", "100M CNY", "tertiary industry value added year to date (亿元)", "第三产业累计值(亿元)"),
                fld("ti_yoy", "number", "%", "tertiary industry value added, real growth at constant prices, year to date against the same period a year earlier, percent", "第三产业累计同比实际增速(不变价,%)"),
            ],
            params=[ParamSpec("q", "quarter", "quarter YYYYQn, e.g. 2026Q3"), ParamSpec("start_q", "quarter", "first quarter YYYYQn"),
                    ParamSpec("end_q", "quarter", "last quarter YYYYQn")],
            handler=_gdp_handler, date_params=[("q", QUARTER_FMT, "point"), ("start_q", QUARTER_FMT, "start"), ("end_q", QUARTER_FMT, "end")],
            time_key="quarter", time_key_fmt=QUARTER_FMT, refresh_class="quarterly",
        ),
        _daily_tool(
            "shibor", "Shanghai interbank offered rates (SHIBOR) by tenor, percent per year, on SSE sessions", _daily_handler("shibor"),
            [fld(t, "number", "%", f"SHIBOR {t.upper()} rate, percent per year", f"SHIBOR {t}利率(%)") for t in SHIBOR_TENORS], "XSHG",
        ),
        make_tool(
            name="shibor_lpr", service="macro", description="China loan prime rates (LPR) 1-year and 5-year, fixed monthly on the 20th (next session if a holiday)",
            asset_classes=["rates_fx"],
            fields=[_DATE_FIELD, fld("1y", "number", "%", "1-year loan prime rate, percent per year", "1年期贷款基础利率(%)"),
                    fld("5y", "number", "%", "over-5-year loan prime rate, percent per year", "5年期以上贷款基础利率(%)")],
            params=_DAILY_PARAMS, handler=_lpr_handler, date_params=_DAILY_DATES, time_key="date", calendar="XSHG", refresh_class="monthly",
        ),
        _daily_tool(
            "hibor", "Hong Kong interbank offered rates (HIBOR) by tenor, percent per year, on HKEX sessions", _daily_handler("hibor"),
            [fld(t, "number", "%", f"HIBOR {t.upper()} rate, percent per year", f"HIBOR {t}利率(%)") for t in HIBOR_TENORS], "XHKG",
        ),
        _daily_tool(
            "us_tycr", "US Treasury par yield curve rates by maturity, percent, on NYSE sessions", _daily_handler("us_tycr"),
            [fld(t, "number", "%", f"Treasury par yield, {t[1:]} {'month' if t[0] == 'm' else 'year'}(s), percent", f"{t[1:]}{'月' if t[0] == 'm' else '年'}期国债收益率(%)") for t in UST_TENORS], "XNYS",
        ),
        _daily_tool(
            "us_trycr", "US Treasury real (TIPS) yield curve rates, percent, on NYSE sessions", _daily_handler("us_trycr"),
            [fld(t, "number", "%", f"Treasury real yield, {t[1:]} years, percent", f"{t[1:]}年期实际收益率(%)") for t in REAL_TENORS], "XNYS",
        ),
        _daily_tool(
            "us_tbr", "US Treasury bill rates: bank discount and coupon equivalent, percent, on NYSE sessions", _daily_handler("us_tbr"),
            [f for w in TBILL_WEEKS for f in (
                fld(f"w{w}_bd", "number", "%", f"{w}-week bill, bank discount rate, percent", f"{w}周银行折现收益率(%)"),
                fld(f"w{w}_ce", "number", "%", f"{w}-week bill, coupon equivalent yield, percent", f"{w}周票面利率收益率(%)"),
            )], "XNYS",
        ),
        _daily_tool(
            "us_tltr", "US Treasury long-term rates: composite over 10 years and 20-year CMT, percent", _daily_handler("us_tltr"),
            [fld("ltc", "number", "%", "long-term composite rate (maturities over 10 years), percent", "收益率LT COMPOSITE(>10年)(%)"),
             fld("cmt", "number", "%", "20-year constant maturity Treasury yield, percent", "20年期CMT收益率(%)"),
             fld("e_factor", "number", "%", "extrapolation factor: composite minus 20-year CMT, percentage points", "外推因子(百分点)")], "XNYS",
        ),
        _daily_tool(
            "us_trltr", "US Treasury real long-term rate average, percent", _daily_handler("us_trltr"),
            [fld("ltr_avg", "number", "%", "real long-term rate average (over 10 years), percent", "实际长期利率平均值(%)")], "XNYS",
        ),
        make_tool(
            name="fx_daily", series_keys=["ts_code"], service="macro", description="FX daily bid/ask bars (FXCM) for major pairs and offshore CNY, on weekdays",
            # FX pairs are not instruments of the universe (no visibility level to cover), so the
            # tool is entity-free like the other macro series: `ts_code` is an optional filter.
            asset_classes=["rates_fx"], entity_param=None,
            fields=[fld("ts_code", "code", None, "FX pair code, e.g. USDCNH.FXCM", "外汇代码"),
                    fld("trade_date", "date", None, "trading date (YYYYMMDD)", "交易日期"),
                    *[fld(f"{side}_{p}", "number", "quote currency", f"{side} {p} price, quote currency per unit of base currency", f"{'买入' if side == 'bid' else '卖出'}{ {'open': '开盘价', 'close': '收盘价', 'high': '最高价', 'low': '最低价'}[p]}")
                      for side in ("bid", "ask") for p in ("open", "close", "high", "low")],
                    fld("tick_qty", "integer", "ticks", "number of price changes in the day", "报价笔数"),
                    fld("exchange", "text", None, "quoting venue", "交易商")],
            params=[ParamSpec("ts_code", "str", "FX code, e.g. USDCNH.FXCM or EURUSD.FXCM"), date_param("trade_date", "trading date YYYYMMDD"),
                    date_param("start_date", "first date YYYYMMDD"), date_param("end_date", "last date YYYYMMDD"),
                    ParamSpec("exchange", "str", "venue; only FXCM", enum=("FXCM",))],
            handler=_fx_daily_handler, date_params=[("trade_date", YMD, "point"), ("start_date", YMD, "start"), ("end_date", YMD, "end")],
            time_key="trade_date", refresh_class="daily",
        ),
        make_tool(
            name="fx_obasic", series_keys=["ts_code"], service="macro", description="FX instrument reference data: pairs, pip size and cost, target spread, trading hours",
            asset_classes=["rates_fx"], entity_param=None,
            fields=[fld("ts_code", "code", None, "FX pair code", "外汇代码"), fld("name", "text", None, "pair name", "名称"),
                    fld("classify", "text", None, "class (FX)", "分类"), fld("exchange", "text", None, "venue", "交易商"),
                    fld("min_unit", "number", None, "minimum trade size, in units of the base currency (1000 = 1,000 EUR for EUR/USD), not fund units", "最小交易单位（基础货币数量）"),
                    fld("max_unit", "number", None, "maximum trade size, in units of the base currency", "最大交易单位（基础货币数量）"),
                    fld("pip", "number", "quote currency", "pip size", "最小变动单位"),
                    fld("pip_cost", "number", "USD", "value of one pip per 1000 units, USD", "点值"),
                    fld("traget_spread", "number", "pips", "target spread in pips", "目标差价"),
                    fld("min_stop_distance", "number", "pips", "minimum stop distance in pips", "最小止损距离"),
                    fld("trading_hours", "text", None, "trading hours (Beijing time)", "交易时间"),
                    fld("break_time", "text", None, "daily break", "休市时间")],
            params=[ParamSpec("exchange", "str", "venue, FXCM"), ParamSpec("classify", "str", "class, FX"), ParamSpec("ts_code", "str", "FX code")],
            handler=_fx_obasic_handler, refresh_class="static", time_key=None,
        ),
    ]
    return tools


TOOLS: list[ToolSpec] = _build_tools()
