"""Hong Kong and US equity quote tools (service "hk_us"), Tushare Pro names and units:
prices in HKD / USD, volume in shares, turnover in currency units.

Valuation across currencies (issue 39): `*_daily_adj` carries the trailing P/E and the P/B of the
company, its price converted into the currency its statements are in at the day's closing bid
rates (market/currency.py) times every share of the company (an A+H company's A and H shares)
over its trailing-twelve-month parent net profit or its latest parent equity: a Hong Kong company
reporting in CNY is valued in CNY, whatever currency it trades in. `total_mv` and `free_mv` stay
in the trading currency and count the listed class (an H-share's H shares).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from livesearch_pipeline.dataservice.market.prices import Bars
from livesearch_pipeline.dataservice.spec import ToolContext, ToolSpec
from livesearch_pipeline.dataservice.tools.quotes_cn import (
    DATE_PARAMS, F, MINUTE_FMT, MINUTE_PARAMS, Record, bar_query, bar_record, make_tool, minute_fields,
    minute_records, num, ts_code_param, ymd,
)

MARKETS = {  # prefix -> (asset class, calendar, currency, example code, market name)
    "hk": ("hk_equity", "XHKG", "HKD", "00905.HK", "Hong Kong"),
    "us": ("us_equity", "XNYS", "USD", "QNDR", "US"),
}


def _price_fields(currency: str, code_desc: str, pct_name: str) -> list[F]:
    return [
        ("ts_code", "code", None, code_desc, "股票代码"),
        ("trade_date", "date", None, "trading day", "交易日期"),
        ("open", "number", currency, f"opening price (unadjusted), {currency}", f"开盘价（未复权，{currency}）"),
        ("high", "number", currency, f"highest price (unadjusted), {currency}", f"最高价（未复权，{currency}）"),
        ("low", "number", currency, f"lowest price (unadjusted), {currency}", f"最低价（未复权，{currency}）"),
        ("close", "number", currency, f"closing price (unadjusted), {currency}", f"收盘价（未复权，{currency}）"),
        ("pre_close", "number", currency, f"previous close (split-adjusted on ex-dates), {currency}", f"昨收价（{currency}）"),
        ("change", "number", currency, f"close minus previous close, {currency}", f"涨跌额（{currency}）"),
        (pct_name, "number", "%", "percentage change versus previous close, percent", "涨跌幅（%）"),
        ("vol", "number", "shares", "trading volume in shares", "成交量（股）"),
        ("amount", "number", currency, f"turnover value, {currency}", f"成交额（{currency}）"),
    ]


def _adj_fields(currency: str) -> list[F]:
    return [
        ("vwap", "number", currency, f"volume-weighted average price, {currency}", f"均价（{currency}）"),
        ("adj_factor", "number", None, "cumulative split adjustment factor", "复权因子"),
        ("turnover_ratio", "number", "%", "turnover: volume / float shares, percent", "换手率（%）"),
        ("free_share", "number", "shares", "float shares", "流通股本（股）"),
        ("total_share", "number", "shares", "total shares", "总股本（股）"),
        ("free_mv", "number", currency, f"float market value (close x float shares), {currency}", f"流通市值（{currency}）"),
        ("total_mv", "number", currency, f"total market value (close x total shares of the listed class), {currency}", f"总市值（{currency}）"),
        ("pe_ttm", "number", None, "price-to-earnings ratio, trailing twelve months: the close converted into the reporting currency at the day's closing bid rates x all the company's shares / TTM parent net profit (blank for losses)", "市盈率（TTM，按报告币种折算）"),
        ("pb", "number", None, "price-to-book ratio: the close converted into the reporting currency x all the company's shares / latest reported parent equity", "市净率（按报告币种折算）"),
    ]


def _daily_record(bars: Bars, k: int, pct_name: str) -> Record:
    return bar_record(bars, k, bars.decimals, pct_name)


def company_valuation(ctx: ToolContext, code: str, close: float, currency: str, day: dt.date) -> dict[str, float | None]:
    """The trailing P/E and the P/B of the company at `close` (in `currency`), in its reporting
    currency (module doc); None where the base is not positive, as Tushare leaves them blank."""
    market = ctx.market
    fundamentals = market.fundamentals
    company = fundamentals.company(code)
    value = close * market.currencies.rate(currency, fundamentals.reporting_currency(code), day) \
        * market.corporate.total_shares(company, day)
    profit, book = fundamentals.ttm_net_profit(company, day), fundamentals.book_equity(company, day)
    return {"pe_ttm": round(value / profit, 4) if profit is not None and profit > 0 else None,
            "pb": round(value / book, 4) if book is not None and book > 0 else None}


def _adj_record(ctx: ToolContext, bars: Bars, k: int, pct_name: str, currency: str) -> Record:
    close = float(bars.close[k])
    total, free = float(bars.total_share[k]), float(bars.float_share[k])
    record = bar_record(bars, k, bars.decimals, pct_name)
    record.update({
        "vwap": num(bars.amount[k] / bars.vol[k], 4) if bars.vol[k] else None,
        "adj_factor": num(bars.adj_factor[k], 6),
        "turnover_ratio": round(float(bars.vol[k]) / free * 100, 4),
        "free_share": free, "total_share": total,
        "free_mv": round(close * free, 2), "total_mv": round(close * total, 2),
        **company_valuation(ctx, bars.code, close, currency, bars.dates[k]),
    })
    return record


def _tools_for(prefix: str) -> list[ToolSpec]:
    asset_class, calendar, currency, example, market_name = MARKETS[prefix]
    classes = (asset_class,)
    pct_name = "pct_chg" if prefix == "hk" else "pct_change"
    code_desc = f"{market_name} stock code"
    params = (ts_code_param(example), *DATE_PARAMS)

    def daily(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
        return bar_query(ctx, args, f"{prefix}_daily", classes, ctx.market.prices.daily, lambda b, k: _daily_record(b, k, pct_name))

    def daily_adj(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
        return bar_query(ctx, args, f"{prefix}_daily_adj", classes, ctx.market.prices.daily, lambda b, k: _adj_record(ctx, b, k, pct_name, currency))

    def adjfactor(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
        return bar_query(
            ctx, args, f"{prefix}_adjfactor", classes, ctx.market.prices.daily,
            lambda b, k: {"ts_code": b.code, "trade_date": ymd(b.dates[k]), "adj_factor": num(b.adj_factor[k], 6)},
        )

    def mins(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
        return minute_records(ctx, args, f"{prefix}_mins", classes, 1.0)

    price_fields = _price_fields(currency, code_desc, pct_name)
    common = dict(service="hk_us", asset_classes=[asset_class], calendar=calendar)
    return [
        make_tool(name=f"{prefix}_daily", params=params, handler=daily, fields=price_fields,
                  description=f"{market_name} equity daily bars (unadjusted), {currency}", **common),
        make_tool(name=f"{prefix}_daily_adj", params=params, handler=daily_adj, fields=price_fields + _adj_fields(currency),
                  description=f"{market_name} equity daily bars with adjustment factor, turnover and market value", **common),
        make_tool(name=f"{prefix}_adjfactor", params=params, handler=adjfactor,
                  fields=price_fields[:2] + [("adj_factor", "number", None, "cumulative split adjustment factor; changes only on split ex-dates", "复权因子")],
                  description=f"{market_name} equity cumulative adjustment factor (moves on split ex-dates)", **common),
        make_tool(name=f"{prefix}_mins", params=(ts_code_param(example, required=True), *MINUTE_PARAMS), handler=mins,
                  fields=minute_fields(currency, code_desc), time_key="trade_time", time_key_fmt=MINUTE_FMT,
                  description=f"{market_name} equity historical minute bars (1/5/15/30/60min), one session (trade_date) or a window", **common),
    ]


TOOLS: list[ToolSpec] = _tools_for("hk") + _tools_for("us")
