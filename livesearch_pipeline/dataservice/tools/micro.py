"""Microstructure and flow tools (service "microstructure"): money flow by order size, Stock
Connect flows and holdings, margin trading, the daily dragon-tiger list (龙虎榜), block trades
and limit-up/limit-down lists. Every figure derives from the daily bars of the stocks involved
(volumes, amounts, closes, limits) plus keyed noise, so the tables agree with the quotes:
money-flow buckets sum to the day's volume, exchange margin totals are sums of the stock
details, limit lists hold exactly the stocks that closed at a limit."""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from typing import Any

import numpy as np

from livesearch_pipeline.core.calendars import session_dates
from livesearch_pipeline.dataservice.market.prices import Bars, ornstein_uhlenbeck, weekday_grid
from livesearch_pipeline.dataservice.market.rng import GRID_LENGTH, generator, stable_hash, unit_uniform
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec
from livesearch_pipeline.dataservice.tools.quotes_cn import (
    DATE_PARAMS, F, Record, bar_query, entities_or_one, entity_arg, make_tool, require_one, rows_of,
    ts_code_param, window, ymd,
)

CN = ("cn_equity",)
_BUCKETS = ("sm", "md", "lg", "elg")
_BUCKET_NAMES = {"sm": "small (< 50k CNY)", "md": "medium (50k-200k CNY)", "lg": "large (200k-1m CNY)", "elg": "extra-large (>= 1m CNY)"}
_BUCKET_ZH = {"sm": "小单", "md": "中单", "lg": "大单", "elg": "特大单"}


def _day_rng(ctx: ToolContext, code: str, purpose: str, day: dt.date) -> np.random.Generator:
    return generator(ctx.seed, code, purpose, day.isoformat())


# ------------------------------------------------------------------------ moneyflow


def moneyflow_record(ctx: ToolContext, bars: Bars, k: int) -> Record:
    """Each lot traded has one active side and one order-size bucket: the buckets' buy and
    sell volumes sum to the day's volume; buying dominates on up days."""
    rng = _day_rng(ctx, bars.code, "moneyflow", bars.dates[k])
    vol = float(bars.vol[k])
    vwap_yuan = float(bars.amount[k]) * 1000 / (vol * 100) if vol else float(bars.close[k])
    pct = (float(bars.close[k]) / float(bars.pre_close[k]) - 1) * 100
    shares = rng.dirichlet([8.0, 6.0, 4.0, 2.0])
    lots = np.floor(shares * vol)
    lots[0] += vol - lots.sum()
    record: Record = {"ts_code": bars.code, "trade_date": ymd(bars.dates[k])}
    net_vol = net_amount = 0.0
    for bucket, bucket_lots, tilt in zip(_BUCKETS, lots, (0.05, 0.1, 0.2, 0.3)):
        buy_frac = float(np.clip(0.5 + tilt * np.tanh(pct / 4) + rng.normal(0, 0.04), 0.05, 0.95))
        buy = float(np.floor(bucket_lots * buy_frac))
        sell = float(bucket_lots - buy)
        record[f"buy_{bucket}_vol"] = buy
        record[f"buy_{bucket}_amount"] = round(buy * 100 * vwap_yuan / 1e4, 2)
        record[f"sell_{bucket}_vol"] = sell
        record[f"sell_{bucket}_amount"] = round(sell * 100 * vwap_yuan / 1e4, 2)
        net_vol += buy - sell
        net_amount += (buy - sell) * 100 * vwap_yuan / 1e4
    record["net_mf_vol"] = net_vol
    record["net_mf_amount"] = round(net_amount, 2)
    return record


def _moneyflow(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return bar_query(ctx, args, "moneyflow", CN, ctx.market.prices.daily, lambda b, k: moneyflow_record(ctx, b, k))


MONEYFLOW_FIELDS: list[F] = [("ts_code", "code", None, "A-share code", "股票代码"), ("trade_date", "date", None, "trading day", "交易日期")]
for _b in _BUCKETS:
    for _side, _side_zh in (("buy", "买入"), ("sell", "卖出")):
        MONEYFLOW_FIELDS += [
            (f"{_side}_{_b}_vol", "number", "lots", f"active {_side} volume of {_BUCKET_NAMES[_b]} orders, lots", f"{_BUCKET_ZH[_b]}{_side_zh}量（手）"),
            (f"{_side}_{_b}_amount", "number", "10k CNY", f"active {_side} value of {_BUCKET_NAMES[_b]} orders, 10 thousand CNY", f"{_BUCKET_ZH[_b]}{_side_zh}金额（万元）"),
        ]
MONEYFLOW_FIELDS += [
    ("net_mf_vol", "number", "lots", "net inflow volume: active buys minus active sells, lots", "净流入量（手）"),
    ("net_mf_amount", "number", "10k CNY", "net inflow value: active buys minus active sells, 10 thousand CNY", "净流入额（万元）"),
]

# ------------------------------------------------------------------------ market panel


@lru_cache(maxsize=4)
def _panel(market) -> dict[str, Any]:
    """Every A-share's bars on the XSHG sessions (NaN where it has none): the cross-section
    the market-wide lists rank."""
    stocks = market.universe.of_class("cn_equity")
    sessions = session_dates("XSHG")
    first = next(i for i, d in enumerate(sessions) if d >= dt.date(2015, 1, 1))
    days = list(sessions[first:])
    ordinals = np.array([d.toordinal() for d in days], dtype=np.int64)
    names = ("close", "pre_close", "vol", "amount", "up_limit", "down_limit", "float_share", "high", "low")
    panel = {n: np.full((len(stocks), len(days)), np.nan) for n in names}
    for i, e in enumerate(stocks):
        bars = market.prices.daily(e.code)
        pos = np.searchsorted(ordinals, bars.ordinals)
        for n in names:
            panel[n][i, pos] = getattr(bars, n)
    panel["codes"] = [e.code for e in stocks]
    panel["entities"] = stocks
    panel["days"] = days
    panel["ordinals"] = ordinals
    return panel


def _panel_days(ctx: ToolContext, start: dt.date | None, end: dt.date) -> tuple[dict[str, Any], range]:
    panel = _panel(ctx.market)
    ordinals = panel["ordinals"]
    i = 0 if start is None else int(np.searchsorted(ordinals, start.toordinal(), "left"))
    j = int(np.searchsorted(ordinals, end.toordinal(), "right"))
    return panel, range(j - 1, i - 1, -1)


def _market_window(ctx: ToolContext, args: dict[str, Any], tool: str, default_sessions: int | None = None) -> tuple[dt.date | None, dt.date]:
    start, end = window(ctx, args, tool)
    if start is None and default_sessions is not None:
        sessions = session_dates("XSHG")
        k = max(0, int(np.searchsorted(np.array([d.toordinal() for d in sessions]), end.toordinal(), "right")) - default_sessions)
        start = sessions[k]
    return start, end


# ------------------------------------------------------------------------ Stock Connect


def _moneyflow_hsgt(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    start, end = window(ctx, args, "moneyflow_hsgt")
    records = []
    for day in reversed([d for d in session_dates("XSHG") if d >= dt.date(2015, 1, 1) and (start is None or d >= start) and d <= end]):
        rng = _day_rng(ctx, "HSGT", "flows", day)
        hgt, sgt, ggt_ss, ggt_sz = (float(x) for x in np.round(rng.normal([800, 600, 500, 300], [3000, 2500, 1500, 1000]), 2))
        records.append({"trade_date": ymd(day), "ggt_ss": ggt_ss, "ggt_sz": ggt_sz, "hgt": hgt, "sgt": sgt,
                        "north_money": round(hgt + sgt, 2), "south_money": round(ggt_ss + ggt_sz, 2)})
    return records


@lru_cache(maxsize=4096)
def _top_by_amount(market, k: int, suffix: str) -> tuple[tuple[int, float], ...]:
    """(panel row, turnover) of a session's ten largest turnovers on one exchange (by code
    suffix), largest first: worked out once per session and exchange, not once per stock asked
    about (the web asks for each A-share's list). Bounded: a key holds its market, which must not
    outlive `_panel`'s few (two exchanges × every session of a few markets fit)."""
    panel = _panel(market)
    amount = np.nan_to_num(panel["amount"][:, k], nan=-1.0)
    rows = [i for i in np.argsort(-amount, kind="stable") if panel["codes"][i].endswith(suffix) and amount[i] > 0][:10]
    return tuple((int(i), float(amount[i])) for i in rows)


def _hsgt_top10(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    entity = entity_arg(ctx, args, CN, "hsgt_top10")
    start, end = _market_window(ctx, args, "hsgt_top10", default_sessions=None if entity is not None else 1)
    market_type = args.get("market_type")
    panel, days = _panel_days(ctx, start, end)
    records = []
    for k in days:
        for mtype, suffix in (("1", ".SH"), ("3", ".SZ")):
            if market_type not in (None, mtype):
                continue
            for rank, (i, turnover) in enumerate(_top_by_amount(ctx.market, k, suffix), start=1):
                code = panel["codes"][i]
                if entity is not None and code != entity.code:
                    continue
                day = panel["days"][k]
                rng = _day_rng(ctx, code, "hsgt", day)
                total = turnover * 1000 * float(rng.uniform(0.05, 0.2))
                buy = round(total * float(rng.uniform(0.3, 0.7)), 2)
                close, pre = float(panel["close"][i, k]), float(panel["pre_close"][i, k])
                records.append({"trade_date": ymd(day), "ts_code": code, "name": ctx.market.names.spell_on(code, day).name, "close": close,
                                "change": round((close / pre - 1) * 100, 4), "rank": rank, "market_type": mtype,
                                "amount": round(total, 2), "net_amount": round(2 * buy - total, 2), "buy": buy, "sell": round(total - buy, 2)})
    return records


@lru_cache(maxsize=1024)
def _hold_ratio(seed: int, code: str, bars: Bars) -> np.ndarray:
    """Stock Connect holding ratio (%) on each bar: a mean-reverting log walk on the fixed
    weekday grid, so a day's ratio depends on the seed and earlier days only (never on how
    many sessions the calendar has, nor on later ones)."""
    rng = generator(seed, code, "hk_hold")
    level = float(rng.uniform(0.2, 8.0))
    walk = ornstein_uhlenbeck(rng.normal(0, 0.02, GRID_LENGTH), 0.998)
    return np.round(level * np.exp(walk[weekday_grid(bars.ordinals)]), 4)


def _hk_hold(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    def build(bars: Bars, k: int) -> Record:
        ratio = float(_hold_ratio(ctx.seed, bars.code, bars)[k])
        code = bars.code.split(".")[0]
        return {"code": f"{'9' if bars.code.endswith('.SH') else '7'}{int(code) % 10000:04d}", "trade_date": ymd(bars.dates[k]),
                "ts_code": bars.code, "name": ctx.market.names.spell_on(bars.code, bars.dates[k]).name, "vol": float(round(float(bars.total_share[k]) * ratio / 100, -2)),
                "ratio": ratio, "exchange": "SH" if bars.code.endswith(".SH") else "SZ"}

    exchange = args.get("exchange")
    return bar_query(ctx, args, "hk_hold", CN, ctx.market.prices.daily, build,
                     predicate=lambda e: exchange is None or e.code.endswith("." + exchange))


# ------------------------------------------------------------------------ margin


def margin_eligible(seed: int, entity: Entity) -> bool:
    return entity.visibility >= 5 or unit_uniform(seed, entity.code, "margin") < 0.6


@lru_cache(maxsize=1024)
def _margin_series(seed: int, code: str, bars: Bars) -> dict[str, np.ndarray]:
    """Balances follow float value times a slowly moving leverage ratio; repayments are what
    keeps the identity balance(t) = balance(t-1) + buys - repayments exact. Random arrays are
    drawn on the fixed weekday grid and read at the bars' dates, so no value depends on how many
    sessions the calendar has."""
    n = len(bars.dates)
    grid = weekday_grid(bars.ordinals)
    rng = generator(seed, code, "margin")
    level = float(rng.uniform(0.015, 0.06))
    walk = np.cumsum(rng.normal(0, 0.01, GRID_LENGTH))[grid]
    ratio = level * np.exp((walk - walk[0] if n else walk) * 0.5)
    float_value = bars.close * bars.float_share
    rzye = np.round(float_value * ratio, 2)
    rzmre = np.round(bars.amount * 1000 * rng.uniform(0.05, 0.12, GRID_LENGTH)[grid], 2)
    previous = np.concatenate(([rzye[0]], rzye[:-1])) if n else rzye
    rzmre = np.maximum(rzmre, np.round(rzye - previous, 2))
    rzche = np.round(previous + rzmre - rzye, 2)
    short_level = float(rng.uniform(0.0002, 0.002))
    rqyl = np.round(bars.float_share * short_level * np.exp(rng.normal(0, 0.1, GRID_LENGTH)[grid]), -2)
    previous_rq = np.concatenate(([rqyl[0]], rqyl[:-1])) if n else rqyl
    rqmcl = np.maximum(np.round(bars.vol * 100 * rng.uniform(0.001, 0.01, GRID_LENGTH)[grid], -2), rqyl - previous_rq)
    rqchl = previous_rq + rqmcl - rqyl
    rqye = np.round(rqyl * bars.close, 2)
    return {"rzye": rzye, "rzmre": rzmre, "rzche": rzche, "rqye": rqye, "rqyl": rqyl, "rqmcl": rqmcl, "rqchl": rqchl,
            "rzrqye": np.round(rzye + rqye, 2)}


def margin_detail_record(ctx: ToolContext, bars: Bars, k: int) -> Record:
    series = _margin_series(ctx.seed, bars.code, bars)
    return {"trade_date": ymd(bars.dates[k]), "ts_code": bars.code, "name": ctx.market.names.spell_on(bars.code, bars.dates[k]).name,
            **{key: float(series[key][k]) for key in ("rzye", "rqye", "rzmre", "rqyl", "rzche", "rqchl", "rqmcl", "rzrqye")}}


def _margin_detail(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return bar_query(ctx, args, "margin_detail", CN, ctx.market.prices.daily, lambda b, k: margin_detail_record(ctx, b, k),
                     predicate=lambda e: margin_eligible(ctx.seed, e))


def _margin(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    start, end = _market_window(ctx, args, "margin", default_sessions=None)
    wanted = args.get("exchange_id")
    if wanted not in (None, "SSE", "SZSE"):
        raise ToolInputError(f"margin: exchange_id {wanted!r} must be SSE or SZSE")
    panel, days = _panel_days(ctx, start, end)
    keys = ("rzye", "rzmre", "rzche", "rqye", "rqmcl", "rzrqye", "rqyl")
    totals: dict[str, dict[str, np.ndarray]] = {}
    for exchange, suffix in (("SSE", ".SH"), ("SZSE", ".SZ")):
        acc = {key: np.zeros(len(panel["days"])) for key in keys}
        for e in panel["entities"]:
            if not e.code.endswith(suffix) or not margin_eligible(ctx.seed, e):
                continue
            bars = ctx.market.prices.daily(e.code)
            series = _margin_series(ctx.seed, e.code, bars)
            pos = np.searchsorted(panel["ordinals"], bars.ordinals)
            for key in keys:
                np.add.at(acc[key], pos, series[key])
        totals[exchange] = acc
    records = []
    for k in days:
        for exchange in ("SSE", "SZSE"):
            if wanted in (None, exchange):
                records.append({"trade_date": ymd(panel["days"][k]), "exchange_id": exchange,
                                **{key: round(float(totals[exchange][key][k]), 2) for key in keys}})
    return records


# ------------------------------------------------------------------------ dragon-tiger list

_SEAT_CITIES = ("上海", "深圳", "杭州", "成都", "武汉", "南京", "西安", "厦门")
_SEAT_ROADS = ("滨江路", "中山路", "人民路", "解放路", "建设路", "长江路")


def _seat_name(ctx: ToolContext, key: str) -> str:
    h = stable_hash(ctx.seed, "seat", key)
    if h % 5 == 0:
        return "机构专用"
    stem = "琨澜曦翊珩璟湛霁砚棠芷沅峤"
    return f"{stem[h % 13]}{stem[(h >> 8) % 13]}证券股份有限公司{_SEAT_CITIES[(h >> 16) % 8]}{_SEAT_ROADS[(h >> 24) % 6]}证券营业部"


def _top_list_reason(pct: float, turnover: float) -> str | None:
    if pct >= 7:
        return "日涨幅偏离值达到7%的前5只证券"
    if pct <= -7:
        return "日跌幅偏离值达到7%的前5只证券"
    if turnover >= 20:
        return "日换手率达到20%的前5只证券"
    return None


def _top_entries(ctx: ToolContext, start: dt.date | None, end: dt.date, code: str | None) -> list[tuple[int, int, str]]:
    """(stock row, session column, reason) of every dragon-tiger entry in the window."""
    panel, days = _panel_days(ctx, start, end)
    entries = []
    for k in days:
        pct = (panel["close"][:, k] / panel["pre_close"][:, k] - 1) * 100
        turnover = panel["vol"][:, k] * 100 / panel["float_share"][:, k] * 100
        for i in np.nonzero((np.abs(np.nan_to_num(pct)) >= 7) | (np.nan_to_num(turnover) >= 20))[0]:
            if code is None or panel["codes"][i] == code:
                entries.append((int(i), k, _top_list_reason(float(pct[i]), float(turnover[i])) or ""))
    return entries


def _seats(ctx: ToolContext, code: str, day: dt.date, amount_yuan: float) -> list[Record]:
    rng = _day_rng(ctx, code, "seats", day)
    seats = []
    for side in ("0", "1"):
        for n in range(5):
            value = round(amount_yuan * float(rng.uniform(0.002, 0.04)), 2)
            other = round(value * float(rng.uniform(0.0, 0.1)), 2)
            buy, sell = (value, other) if side == "0" else (other, value)
            seats.append({"exalter": _seat_name(ctx, f"{code}{day}{side}{n}"), "side": side, "buy": buy, "sell": sell})
    return seats


def _top_list(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    entity = entity_arg(ctx, args, CN, "top_list")
    start, end = _market_window(ctx, args, "top_list", default_sessions=None if entity is not None else 1)
    panel = _panel(ctx.market)
    records = []
    for i, k, reason in _top_entries(ctx, start, end, entity.code if entity else None):
        code, day = panel["codes"][i], panel["days"][k]
        amount = float(panel["amount"][i, k]) * 1000
        seats = _seats(ctx, code, day, amount)
        l_buy, l_sell = round(sum(s["buy"] for s in seats), 2), round(sum(s["sell"] for s in seats), 2)
        close, pre = float(panel["close"][i, k]), float(panel["pre_close"][i, k])
        float_value = close * float(panel["float_share"][i, k])
        records.append({
            "trade_date": ymd(day), "ts_code": code, "name": ctx.market.names.spell_on(code, day).name, "close": close,
            "pct_change": round((close / pre - 1) * 100, 4),
            "turnover_rate": round(float(panel["vol"][i, k]) * 100 / float(panel["float_share"][i, k]) * 100, 4),
            "amount": round(amount, 2), "l_sell": l_sell, "l_buy": l_buy, "l_amount": round(l_buy + l_sell, 2),
            "net_amount": round(l_buy - l_sell, 2), "net_rate": round((l_buy - l_sell) / amount * 100, 4),
            "amount_rate": round((l_buy + l_sell) / amount * 100, 4), "float_values": round(float_value, 2), "reason": reason,
        })
    return records


def _top_inst(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    entity = entity_arg(ctx, args, CN, "top_inst")
    start, end = _market_window(ctx, args, "top_inst", default_sessions=None if entity is not None else 1)
    panel = _panel(ctx.market)
    records = []
    for i, k, reason in _top_entries(ctx, start, end, entity.code if entity else None):
        code, day = panel["codes"][i], panel["days"][k]
        amount = float(panel["amount"][i, k]) * 1000
        for seat in _seats(ctx, code, day, amount):
            records.append({"trade_date": ymd(day), "ts_code": code, "exalter": seat["exalter"], "side": seat["side"],
                            "buy": seat["buy"], "buy_rate": round(seat["buy"] / amount * 100, 4), "sell": seat["sell"],
                            "sell_rate": round(seat["sell"] / amount * 100, 4), "net_buy": round(seat["buy"] - seat["sell"], 2),
                            "reason": reason})
    return records


# ------------------------------------------------------------------------ block trades and limits


def _block_trade(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    require_one(args, "block_trade", "ts_code", "trade_date")
    entity = entity_arg(ctx, args, CN, "block_trade")
    start, end = window(ctx, args, "block_trade")
    records = []
    for e in entities_or_one(ctx, entity, "cn_equity"):
        bars = ctx.market.prices.daily(e.code)
        for k in rows_of(bars, start, end):
            day = bars.dates[k]
            if unit_uniform(ctx.seed, e.code, "block", day.isoformat()) >= 0.02:
                continue
            rng = _day_rng(ctx, e.code, "block", day)
            for n in range(int(rng.integers(1, 4))):
                price = round(float(bars.close[k]) * (1 - float(rng.uniform(0.0, 0.1))), 2)
                vol = round(float(bars.float_share[k]) * float(rng.uniform(0.0002, 0.003)) / 1e4, 2)
                records.append({"ts_code": e.code, "trade_date": ymd(day), "price": price, "vol": vol,
                                "amount": round(price * vol, 2), "buyer": _seat_name(ctx, f"{e.code}{day}b{n}"),
                                "seller": _seat_name(ctx, f"{e.code}{day}s{n}")})
    if entity is None:
        records.sort(key=lambda r: (r["trade_date"], r["ts_code"]), reverse=True)
    return records


def _limit_list(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    entity = entity_arg(ctx, args, CN, "limit_list")
    start, end = _market_window(ctx, args, "limit_list", default_sessions=None if entity is not None else 1)
    wanted = args.get("limit_type")
    panel, days = _panel_days(ctx, start, end)
    records = []
    for k in days:
        close = panel["close"][:, k]
        up_hit = np.nan_to_num(close) == np.nan_to_num(panel["up_limit"][:, k], nan=-1)
        down_hit = np.nan_to_num(close) == np.nan_to_num(panel["down_limit"][:, k], nan=-1)
        for i in np.nonzero(up_hit | down_hit)[0]:
            code = panel["codes"][i]
            limit = "U" if up_hit[i] else "D"
            if (entity is not None and code != entity.code) or wanted not in (None, limit):
                continue
            day = panel["days"][k]
            rng = _day_rng(ctx, code, "limit", day)
            pre = float(panel["pre_close"][i, k])
            float_value = float(close[i]) * float(panel["float_share"][i, k])
            sealed = round(float_value * float(rng.uniform(0.001, 0.03)), 2)
            first = 9 * 60 + 30 + int(rng.integers(0, 330))
            first = first if first < 11 * 60 + 30 else first + 90
            records.append({
                "trade_date": ymd(day), "ts_code": code, "name": ctx.market.names.spell_on(code, day).name, "close": float(close[i]),
                "pct_chg": round((float(close[i]) / pre - 1) * 100, 4),
                "amp": round((float(panel["high"][i, k]) - float(panel["low"][i, k])) / pre * 100, 4),
                "fc_ratio": round(sealed / (float(panel["amount"][i, k]) * 1000) * 100, 4),
                "fl_ratio": round(sealed / float_value * 100, 4), "fd_amount": sealed,
                "first_time": f"{first // 60:02d}:{first % 60:02d}:00", "last_time": "14:57:00" if rng.random() < 0.3 else f"{first // 60:02d}:{first % 60:02d}:00",
                "open_times": int(rng.integers(0, 6)), "strth": round(float(rng.uniform(0, 100)), 2), "limit": limit,
            })
    return records


_PARAMS = (ts_code_param("600580.SH"), *DATE_PARAMS)
_MARKET_DATES = DATE_PARAMS

TOOLS: list[ToolSpec] = [
    make_tool(name="moneyflow", service="microstructure", asset_classes=["cn_equity"], params=_PARAMS, handler=_moneyflow,
              description="A-share daily money flow by order size (small/medium/large/extra-large), active buys and sells",
              fields=MONEYFLOW_FIELDS),
    make_tool(name="moneyflow_hsgt", service="microstructure", asset_classes=["market"], params=_MARKET_DATES, handler=_moneyflow_hsgt,
              entity_param=None, description="Stock Connect daily net flows: northbound (Shanghai/Shenzhen Connect) and southbound, million CNY",
              fields=[("trade_date", "date", None, "trading day", "交易日期"),
                      ("ggt_ss", "number", "million CNY", "southbound net buying via Shanghai, million CNY", "港股通（沪）（百万元）"),
                      ("ggt_sz", "number", "million CNY", "southbound net buying via Shenzhen, million CNY", "港股通（深）（百万元）"),
                      ("hgt", "number", "million CNY", "northbound net buying of Shanghai stocks, million CNY", "沪股通（百万元）"),
                      ("sgt", "number", "million CNY", "northbound net buying of Shenzhen stocks, million CNY", "深股通（百万元）"),
                      ("north_money", "number", "million CNY", "northbound net buying total, million CNY", "北向资金（百万元）"),
                      ("south_money", "number", "million CNY", "southbound net buying total, million CNY", "南向资金（百万元）")]),
    make_tool(name="hsgt_top10", service="microstructure", asset_classes=["cn_equity"],
              params=(*_PARAMS, ParamSpec("market_type", "str", "1: Shanghai Connect, 3: Shenzhen Connect", enum=("1", "3"))),
              handler=_hsgt_top10, description="Top 10 stocks traded via Stock Connect each day per market (rank by turnover)",
              fields=[("trade_date", "date", None, "trading day", "交易日期"), ("ts_code", "code", None, "A-share code", "股票代码"),
                      ("name", "text", None, "stock name", "股票名称"), ("close", "number", "CNY", "closing price, CNY", "收盘价（元）"),
                      ("change", "number", "%", "percentage change, percent", "涨跌幅（%）"), ("rank", "integer", None, "rank by Connect turnover (1 = largest)", "资金排名"),
                      ("market_type", "text", None, "1 = Shanghai Connect, 3 = Shenzhen Connect", "市场类型"),
                      ("amount", "number", "CNY", "Connect turnover, CNY", "成交金额（元）"), ("net_amount", "number", "CNY", "Connect net buying, CNY", "净成交金额（元）"),
                      ("buy", "number", "CNY", "Connect buying, CNY", "买入金额（元）"), ("sell", "number", "CNY", "Connect selling, CNY", "卖出金额（元）")]),
    make_tool(name="hk_hold", service="microstructure", asset_classes=["cn_equity"],
              params=(*_PARAMS, ParamSpec("exchange", "str", "SH or SZ", enum=("SH", "SZ"))), handler=_hk_hold,
              description="Northbound (Stock Connect) holdings of A-shares: shares held and percent of total shares",
              fields=[("code", "code", None, "Connect security code", "原始代码"), ("trade_date", "date", None, "trading day", "交易日期"),
                      ("ts_code", "code", None, "A-share code", "股票代码"), ("name", "text", None, "stock name", "股票名称"),
                      ("vol", "number", "shares", "shares held via Stock Connect", "持股数量（股）"),
                      ("ratio", "number", "%", "holding as percent of total shares", "持股占比（%）"), ("exchange", "text", None, "SH or SZ", "类型")]),
    make_tool(name="margin", series_keys=["exchange_id"], service="microstructure", asset_classes=["market"],
              params=(*_MARKET_DATES, ParamSpec("exchange_id", "str", "SSE or SZSE", enum=("SSE", "SZSE"))), handler=_margin, entity_param=None,
              description="Exchange margin trading totals per day (sums of the eligible stocks' margin_detail records), CNY",
              fields=[("trade_date", "date", None, "trading day", "交易日期"), ("exchange_id", "text", None, "exchange (SSE/SZSE)", "交易所代码"),
                      ("rzye", "number", "CNY", "margin financing balance, CNY", "融资余额（元）"), ("rzmre", "number", "CNY", "margin financing purchases, CNY", "融资买入额（元）"),
                      ("rzche", "number", "CNY", "margin financing repayments, CNY", "融资偿还额（元）"), ("rqye", "number", "CNY", "securities lending balance (value), CNY", "融券余额（元）"),
                      ("rqmcl", "number", "shares", "securities lending short sales, shares", "融券卖出量（股）"),
                      ("rzrqye", "number", "CNY", "margin financing plus securities lending balance, CNY", "融资融券余额（元）"),
                      ("rqyl", "number", "shares", "securities lending balance, shares", "融券余量（股）")]),
    make_tool(name="margin_detail", service="microstructure", asset_classes=["cn_equity"], params=_PARAMS, handler=_margin_detail,
              description="Per-stock margin trading detail (financing balance = previous + purchases - repayments)",
              fields=[("trade_date", "date", None, "trading day", "交易日期"), ("ts_code", "code", None, "A-share code", "股票代码"),
                      ("name", "text", None, "stock name", "股票名称"),
                      ("rzye", "number", "CNY", "margin financing balance, CNY", "融资余额（元）"), ("rqye", "number", "CNY", "securities lending balance (value), CNY", "融券余额（元）"),
                      ("rzmre", "number", "CNY", "margin financing purchases, CNY", "融资买入额（元）"), ("rqyl", "number", "shares", "securities lending balance, shares", "融券余量（股）"),
                      ("rzche", "number", "CNY", "margin financing repayments, CNY", "融资偿还额（元）"), ("rqchl", "number", "shares", "securities lending returns, shares", "融券偿还量（股）"),
                      ("rqmcl", "number", "shares", "securities lending short sales, shares", "融券卖出量（股）"),
                      ("rzrqye", "number", "CNY", "margin financing plus securities lending balance, CNY", "融资融券余额（元）")]),
    make_tool(name="top_list", service="microstructure", asset_classes=["cn_equity"], params=_PARAMS, handler=_top_list,
              description="Daily dragon-tiger list (龙虎榜): stocks with |change| >= 7% or turnover >= 20%, with top seats' buying and selling",
              fields=[("trade_date", "date", None, "trading day", "交易日期"), ("ts_code", "code", None, "A-share code", "股票代码"),
                      ("name", "text", None, "stock name", "股票名称"), ("close", "number", "CNY", "closing price, CNY", "收盘价（元）"),
                      ("pct_change", "number", "%", "percentage change, percent", "涨跌幅（%）"), ("turnover_rate", "number", "%", "turnover on float shares, percent", "换手率（%）"),
                      ("amount", "number", "CNY", "total turnover, CNY", "总成交额（元）"), ("l_sell", "number", "CNY", "top seats' selling, CNY", "龙虎榜卖出额（元）"),
                      ("l_buy", "number", "CNY", "top seats' buying, CNY", "龙虎榜买入额（元）"), ("l_amount", "number", "CNY", "top seats' turnover, CNY", "龙虎榜成交额（元）"),
                      ("net_amount", "number", "CNY", "top seats' net buying, CNY", "龙虎榜净买入额（元）"),
                      ("net_rate", "number", "%", "net buying as percent of total turnover", "龙虎榜净买额占比（%）"),
                      ("amount_rate", "number", "%", "top seats' turnover as percent of total turnover", "龙虎榜成交额占比（%）"),
                      ("float_values", "number", "CNY", "float market value, CNY", "当日流通市值（元）"), ("reason", "text", None, "listing reason", "上榜理由")]),
    make_tool(name="top_inst", series_keys=["exalter", "side"], service="microstructure", asset_classes=["cn_equity"], params=_PARAMS, handler=_top_inst,
              description="Dragon-tiger list seat detail: the five top buying and five top selling brokerage seats per listed stock",
              fields=[("trade_date", "date", None, "trading day", "交易日期"), ("ts_code", "code", None, "A-share code", "股票代码"),
                      ("exalter", "text", None, "brokerage seat (营业部) or 机构专用", "营业部名称"), ("side", "text", None, "0 = top buyer, 1 = top seller", "买卖类型"),
                      ("buy", "number", "CNY", "seat buying, CNY", "买入额（元）"), ("buy_rate", "number", "%", "seat buying as percent of turnover", "买入占总成交比例（%）"),
                      ("sell", "number", "CNY", "seat selling, CNY", "卖出额（元）"), ("sell_rate", "number", "%", "seat selling as percent of turnover", "卖出占总成交比例（%）"),
                      ("net_buy", "number", "CNY", "seat net buying, CNY", "净成交额（元）"), ("reason", "text", None, "listing reason", "上榜理由")]),
    make_tool(name="block_trade", series_keys=["buyer", "seller"], service="microstructure", asset_classes=["cn_equity"], params=_PARAMS, handler=_block_trade,
              description="A-share block trades: price, volume, value and counterparties",
              fields=[("ts_code", "code", None, "A-share code", "股票代码"), ("trade_date", "date", None, "trading day", "交易日期"),
                      ("price", "number", "CNY", "block trade price, CNY", "成交价（元）"), ("vol", "number", "10k shares", "volume, 10 thousand shares", "成交量（万股）"),
                      ("amount", "number", "10k CNY", "value, 10 thousand CNY", "成交金额（万元）"),
                      ("buyer", "text", None, "buying seat", "买方营业部"), ("seller", "text", None, "selling seat", "卖方营业部")]),
    make_tool(name="limit_list", service="microstructure", asset_classes=["cn_equity"],
              params=(*_PARAMS, ParamSpec("limit_type", "str", "U: limit-up, D: limit-down", enum=("U", "D"))), handler=_limit_list,
              description="A-shares that closed at their daily limit (U limit-up / D limit-down), with sealing statistics",
              fields=[("trade_date", "date", None, "trading day", "交易日期"), ("ts_code", "code", None, "A-share code", "股票代码"),
                      ("name", "text", None, "stock name", "股票名称"), ("close", "number", "CNY", "closing price (the limit price), CNY", "收盘价（元）"),
                      ("pct_chg", "number", "%", "percentage change, percent", "涨跌幅（%）"), ("amp", "number", "%", "intraday amplitude, percent", "振幅（%）"),
                      ("fc_ratio", "number", "%", "sealing orders as percent of turnover", "封单金额/日成交金额（%）"),
                      ("fl_ratio", "number", "%", "sealing orders as percent of float value", "封单手数/流通股本（%）"),
                      ("fd_amount", "number", "CNY", "sealing order value, CNY", "封单金额（元）"), ("first_time", "text", None, "first time at the limit", "首次涨停时间"),
                      ("last_time", "text", None, "last time the limit was sealed", "最后封板时间"), ("open_times", "integer", None, "times the limit opened", "打开次数"),
                      ("strth", "number", None, "limit strength score 0-100", "涨跌停强度"), ("limit", "text", None, "U = limit-up, D = limit-down", "涨跌停类型")]),
]
