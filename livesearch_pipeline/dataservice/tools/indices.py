"""Index tools (service "indices"): constituent-based CN indices (levels follow their
float-cap weighted constituents), industry indices, and fictional global indices."""

from __future__ import annotations

import datetime as dt
from typing import Any

from livesearch_pipeline.dataservice.market.prices import Bars
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec
from livesearch_pipeline.dataservice.tools.quotes_cn import (
    DATE_PARAMS, F, Record, bar_query, bar_record, entity_arg, make_tool, num, require_one, rows_of,
    ts_code_param, window, ymd,
)

CLASSES = ("index",)


def is_cn_index(entity: Entity) -> bool:
    return entity.asset_class == "index" and entity.exchange != "GLOBAL"


def is_global(entity: Entity) -> bool:
    return entity.asset_class == "index" and entity.exchange == "GLOBAL"


def is_industry(entity: Entity) -> bool:
    return entity.asset_class == "index" and entity.industry == "行业指数"


INDEX_FIELDS: list[F] = [
    ("ts_code", "code", None, "index code", "指数代码"),
    ("trade_date", "date", None, "trading day", "交易日期"),
    ("close", "number", "points", "closing level, index points", "收盘点位"),
    ("open", "number", "points", "opening level, index points", "开盘点位"),
    ("high", "number", "points", "highest level, index points", "最高点位"),
    ("low", "number", "points", "lowest level, index points", "最低点位"),
    ("pre_close", "number", "points", "previous closing level, index points", "昨日收盘点"),
    ("change", "number", "points", "change in points versus previous close", "涨跌点"),
    ("pct_chg", "number", "%", "percentage change versus previous close, percent", "涨跌幅（%）"),
    ("vol", "number", "lots", "constituents' total volume in lots of 100 shares", "成交量（手）"),
    ("amount", "number", "thousand CNY", "constituents' total turnover, thousand CNY", "成交额（千元）"),
]


def _index_record(bars: Bars, k: int) -> Record:
    r = bar_record(bars, k, 4)
    return {name: r[name] for name, *_ in INDEX_FIELDS}


def _series_tool(tool: str, series_of: str):
    def handler(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
        series = getattr(ctx.market.prices, series_of)
        return bar_query(ctx, args, tool, CLASSES, series, _index_record, predicate=is_cn_index)

    return handler


def _members_snapshot(ctx: ToolContext, index: Entity, day: dt.date) -> list[tuple[str, float, float, float, float]]:
    """(code, close, total shares, float shares, volume in lots) of each constituent's last bar
    on or before `day`."""
    rows = []
    for code in ctx.market.universe.index_specs[index.code].members:
        bars = ctx.market.prices.daily(code)
        k = bars.last_on_or_before(day)
        if k is None:
            continue
        vol = float(bars.vol[k]) if bars.dates[k] == day else 0.0
        rows.append((code, float(bars.close[k]), float(bars.total_share[k]), float(bars.float_share[k]), vol))
    return rows


def _valuation(ctx: ToolContext, members: list[tuple[str, float, float, float, float]], day: dt.date) -> dict[str, float | None]:
    """Cap-weighted PE (TTM) and PB: total market value over total earnings of the constituents
    that made a profit over the last twelve months (loss makers left out, as Wind's "PE(TTM),
    excluding negatives": a member's write-down would otherwise shrink the sum towards zero), and
    total market value over total book equity of those with positive equity (an A+H company's
    market value counts every share at the A price, as `daily_basic`'s does)."""
    fundamentals = ctx.market.fundamentals
    profit = book = mv_book = mv_profit = 0.0
    for code, close, total, _, _ in members:
        cap = close * total
        p = fundamentals.ttm_net_profit(code, day)
        if p is not None and p > 0:
            profit += p
            mv_profit += cap
        b = fundamentals.book_equity(code, day)
        if b is not None and b > 0:
            book += b
            mv_book += cap
    return {
        "pe_ttm": round(mv_profit / profit, 4) if profit > 0 else None,
        "pb": round(mv_book / book, 4) if book > 0 else None,
    }


def _index_dailybasic(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    require_one(args, "index_dailybasic", "ts_code", "trade_date")
    entity = entity_arg(ctx, args, CLASSES, "index_dailybasic")
    start, end = window(ctx, args, "index_dailybasic")
    indices = [entity] if entity is not None else [e for e in ctx.market.universe.of_class("index") if is_cn_index(e) and not is_industry(e)]
    records = []
    for index in indices:
        if not is_cn_index(index) or is_industry(index):
            continue  # covered by sw_daily (industry) or not at all (global): no records
        bars = ctx.market.prices.daily(index.code)
        for k in rows_of(bars, start, end):
            day = bars.dates[k]
            members = _members_snapshot(ctx, index, day)
            total_mv = sum(c * t for _, c, t, _, _ in members)
            float_mv = sum(c * f for _, c, _, f, _ in members)
            total_share = sum(t for _, _, t, _, _ in members)
            float_share = sum(f for _, _, _, f, _ in members)
            volume_shares = sum(v for *_, v in members) * 100
            records.append({
                "ts_code": index.code, "trade_date": ymd(day),
                "total_mv": round(total_mv, 2), "float_mv": round(float_mv, 2),
                "total_share": total_share, "float_share": float_share, "free_share": round(float_share * 0.85, -2),
                "turnover_rate": round(volume_shares / total_share * 100, 4),
                "turnover_rate_f": round(volume_shares / (float_share * 0.85) * 100, 4),
                **_valuation(ctx, members, day),
            })
    return records


def _index_weight(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    entity = entity_arg(ctx, args, CLASSES, "index_weight", param="index_code")
    if entity is None:
        raise ToolInputError("index_weight: index_code is required, e.g. an index code from index_basic")
    if not is_cn_index(entity):
        return []  # a global index publishes no constituents here
    start, end = window(ctx, args, "index_weight")
    records = []
    for day, weights in reversed(ctx.market.prices.index_weights(entity.code)):
        if day > end or (start is not None and day < start):
            continue
        for con_code, weight in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0])):
            records.append({"index_code": entity.code, "con_code": con_code, "trade_date": ymd(day), "weight": weight})
    return records


def _index_global(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    def build(bars: Bars, k: int) -> Record:
        r = bar_record(bars, k, 4)
        return {
            "ts_code": r["ts_code"], "trade_date": r["trade_date"], "open": r["open"], "close": r["close"],
            "high": r["high"], "low": r["low"], "pre_close": r["pre_close"], "change": r["change"],
            "pct_chg": r["pct_chg"], "swing": round((float(bars.high[k]) - float(bars.low[k])) / float(bars.pre_close[k]) * 100, 4),
            "vol": r["vol"],
        }

    return bar_query(ctx, args, "index_global", CLASSES, ctx.market.prices.daily, build, predicate=is_global)


def _sw_daily(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    def build(bars: Bars, k: int) -> Record:
        index = ctx.market.universe.get(bars.code)
        day = bars.dates[k]
        members = _members_snapshot(ctx, index, day)
        r = bar_record(bars, k, 2, "pct_change")
        return {
            "ts_code": bars.code, "trade_date": r["trade_date"], "name": index.name,
            "open": num(bars.open[k], 2), "low": num(bars.low[k], 2), "high": num(bars.high[k], 2),
            "close": num(bars.close[k], 2), "change": r["change"], "pct_change": r["pct_change"],
            "vol": round(float(bars.vol[k]) / 100, 2), "amount": round(float(bars.amount[k]) / 10, 2),
            **_valuation(ctx, members, day),
            "float_mv": round(sum(c * f for _, c, _, f, _ in members) / 1e4, 2),
            "total_mv": round(sum(c * t for _, c, t, _, _ in members) / 1e4, 2),
        }

    return bar_query(ctx, args, "sw_daily", CLASSES, ctx.market.prices.daily, build, predicate=is_industry)


def _index_member(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    require_one(args, "index_member", "index_code", "ts_code")
    index = entity_arg(ctx, args, CLASSES, "index_member", param="index_code")
    stock = entity_arg(ctx, args, ("cn_equity",), "index_member")
    if index is not None and not is_industry(index):
        return []  # membership lists cover industry indices; index_weight has the others
    indices = [index] if index is not None else [e for e in ctx.market.universe.of_class("index") if is_industry(e)]
    records = []
    for ind in indices:
        spec = ctx.market.universe.index_specs[ind.code]
        for code in spec.members:
            member = ctx.market.universe.get(code)
            in_date = max(spec.base_date, member.list_date)
            if in_date > ctx.clock or (stock is not None and stock.code != code):
                continue
            records.append({"index_code": ind.code, "index_name": ind.name, "con_code": code, "con_name": ctx.market.names.spell_on(code, ctx.clock).name,
                            "in_date": ymd(in_date), "out_date": None, "is_new": "Y"})
    records.sort(key=lambda r: (r["in_date"], r["con_code"]), reverse=True)
    return records


_PARAMS = (ts_code_param("a CN index code from index_basic"), *DATE_PARAMS)
_GLOBAL_PARAMS = (ts_code_param("SGX500"), *DATE_PARAMS)
_POINT_FIELDS = INDEX_FIELDS[:2]

TOOLS: list[ToolSpec] = [
    make_tool(name="index_daily", service="indices", asset_classes=["index"], params=_PARAMS, handler=_series_tool("index_daily", "daily"),
              description="CN index daily levels (broad, theme and industry indices), following float-cap weighted constituents",
              fields=INDEX_FIELDS),
    make_tool(name="index_weekly", service="indices", asset_classes=["index"], params=_PARAMS, handler=_series_tool("index_weekly", "weekly"),
              description="CN index weekly levels aggregated from daily levels, dated on the week's last session",
              fields=INDEX_FIELDS, refresh_class="weekly"),
    make_tool(name="index_monthly", service="indices", asset_classes=["index"], params=_PARAMS, handler=_series_tool("index_monthly", "monthly"),
              description="CN index monthly levels aggregated from daily levels, dated on the month's last session",
              fields=INDEX_FIELDS, refresh_class="monthly"),
    make_tool(name="index_weight", series_keys=["con_code"], service="indices", asset_classes=["index"], entity_param="index_code",
              params=(ParamSpec("index_code", "str", "index code, e.g. a code from index_basic", required=True), *DATE_PARAMS),
              handler=_index_weight, refresh_class="monthly",
              description="CN index constituent weights, rebalanced on each month's last session (percent, summing to 100): float-cap weights capped at 15% per constituent (at 150/n % for an index of n < 10 members), the excess spread over the others, so several capped constituents can share the same top weight",
              fields=[("index_code", "code", None, "index code", "指数代码"),
                      ("con_code", "code", None, "constituent stock code", "成分股代码"),
                      ("trade_date", "date", None, "rebalance date (month's last session)", "交易日期"),
                      ("weight", "number", "%", "constituent weight, percent of the index, capped at 15% (150/n % for n < 10 members); capped constituents tie", "权重（%，单只上限15%）")]),
    make_tool(name="index_dailybasic", service="indices", asset_classes=["index"], params=_PARAMS, handler=_index_dailybasic,
              description="CN broad/theme index daily valuation: constituents' market value, shares, turnover, PE (TTM), PB",
              fields=[*_POINT_FIELDS,
                      ("total_mv", "number", "CNY", "constituents' total market value, CNY", "当日总市值（元）"),
                      ("float_mv", "number", "CNY", "constituents' float market value, CNY", "当日流通市值（元）"),
                      ("total_share", "number", "shares", "constituents' total shares", "当日总股本（股）"),
                      ("float_share", "number", "shares", "constituents' float shares", "当日流通股本（股）"),
                      ("free_share", "number", "shares", "constituents' free-float shares", "当日自由流通股本（股）"),
                      ("turnover_rate", "number", "%", "turnover rate on total shares, percent", "换手率（%）"),
                      ("turnover_rate_f", "number", "%", "turnover rate on free-float shares, percent", "换手率（自由流通，%）"),
                      ("pe_ttm", "number", None, "price-to-earnings (TTM) of the profitable constituents: their market value / their TTM net profit (loss makers left out)", "市盈率（TTM）"),
                      ("pb", "number", None, "price-to-book: market value / constituents' parent equity", "市净率")]),
    make_tool(name="index_global", service="indices", asset_classes=["index"], params=_GLOBAL_PARAMS, handler=_index_global,
              calendar="XNYS", description="Fictional global index daily levels (US indices on XNYS, Hong Kong indices on XHKG sessions)",
              fields=[*_POINT_FIELDS, *[f for f in INDEX_FIELDS[2:9]],
                      ("swing", "number", "%", "intraday amplitude (high - low) / previous close, percent", "振幅（%）"),
                      ("vol", "number", "shares", "volume, shares", "成交量")]),
    make_tool(name="sw_daily", service="indices", asset_classes=["index"], params=(ts_code_param("801010.SI"), *DATE_PARAMS), handler=_sw_daily,
              description="Industry index daily levels with valuation (PE TTM, PB) and market value of its members",
              fields=[*_POINT_FIELDS, ("name", "text", None, "industry index name", "指数名称"),
                      ("open", "number", "points", "opening level", "开盘点位"), ("low", "number", "points", "lowest level", "最低点位"),
                      ("high", "number", "points", "highest level", "最高点位"), ("close", "number", "points", "closing level", "收盘点位"),
                      ("change", "number", "points", "change in points", "涨跌点位"),
                      ("pct_change", "number", "%", "percentage change, percent", "涨跌幅（%）"),
                      ("vol", "number", "10k shares", "volume, in 10 thousand shares", "成交量（万股）"),
                      ("amount", "number", "10k CNY", "turnover, in 10 thousand CNY", "成交额（万元）"),
                      ("pe_ttm", "number", None, "price-to-earnings (TTM) of the profitable members: their market value / their TTM net profit (loss makers left out)", "市盈率（TTM）"),
                      ("pb", "number", None, "price-to-book of the members", "市净率"),
                      ("float_mv", "number", "10k CNY", "members' float market value, 10 thousand CNY", "流通市值（万元）"),
                      ("total_mv", "number", "10k CNY", "members' total market value, 10 thousand CNY", "总市值（万元）")]),
    make_tool(name="index_member", series_keys=["con_code"], service="indices", asset_classes=["index"], entity_param="index_code",
              params=(ParamSpec("index_code", "str", "industry index code, e.g. 801010.SI"), ts_code_param("600580.SH")),
              handler=_index_member, date_params=[], time_key="in_date", refresh_class="static",
              # A stock belongs to one industry: called with its code, the one membership record.
              one_series_by=["ts_code"],
              description="Industry index membership: member stocks with their inclusion dates",
              fields=[("index_code", "code", None, "industry index code", "指数代码"), ("index_name", "text", None, "industry index name", "指数名称"),
                      ("con_code", "code", None, "member stock code", "成分股代码"), ("con_name", "text", None, "member stock name", "成分股名称"),
                      ("in_date", "date", None, "inclusion date", "纳入日期"), ("out_date", "date", None, "exclusion date (blank while a member)", "剔除日期"),
                      ("is_new", "text", None, "Y when the membership is current", "是否最新")]),
]
