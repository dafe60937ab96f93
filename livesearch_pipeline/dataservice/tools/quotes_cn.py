"""A-share quote tools (service "cn_quotes") and the dividend table (service "corporate"),
named, parameterised and unit-ed as Tushare Pro serves them. Also the small helpers the other
market tool modules (hk_us, indices, funds, micro) share: argument handling, record building
and ToolSpec assembly.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable

import numpy as np

from livesearch_pipeline.core.catalog import DateParamMeta, FieldMeta, ToolMeta, with_roles
from livesearch_pipeline.dataservice.market.prices import Bars, aggregate, to_hk_ticks
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec

YMD = "%Y%m%d"
MINUTE_FMT = "%Y-%m-%d %H:%M:%S"
Record = dict[str, Any]
F = tuple[str, str, str | None, str, str]  # (name, type, unit, description, description_zh)

# ------------------------------------------------------------------------ shared helpers


def ymd(day: dt.date | None) -> str | None:
    return None if day is None else day.strftime(YMD)


def num(value: float, decimals: int) -> float | None:
    """A JSON-safe rounded number (NaN -> None)."""
    value = float(value)
    return None if value != value else round(value, decimals)


def entity_arg(ctx: ToolContext, args: dict[str, Any], classes: tuple[str, ...], tool: str, param: str = "ts_code") -> Entity | None:
    """The entity named by `param`, checked against the classes the tool serves."""
    code = args.get(param)
    if code is None:
        return None
    try:
        entity = ctx.market.universe.get(str(code).strip().upper() if str(code).isascii() else str(code))
    except LookupError as exc:
        raise ToolInputError(f"{tool}: {exc}") from exc
    if entity.asset_class not in classes:
        raise ToolInputError(
            f"{tool}: {param}={code!r} is a {entity.asset_class} instrument; this tool serves "
            f"{', '.join(classes)} codes only"
        )
    return entity


def window(ctx: ToolContext, args: dict[str, Any], tool: str) -> tuple[dt.date | None, dt.date]:
    """(start, end) of the requested records: trade_date pins both; end defaults to the clock
    and never passes it; start None means from the beginning of the series."""
    point = args.get("trade_date")
    start, end = args.get("start_date"), args.get("end_date")
    if point is not None:
        if start is not None or end is not None:
            raise ToolInputError(f"{tool}: pass either trade_date or start_date/end_date, not both")
        return point, min(point, ctx.clock)
    end = ctx.clock if end is None else min(end, ctx.clock)
    if start is not None and start > end:
        raise ToolInputError(
            f"{tool}: start_date {ymd(start)} is after end_date {ymd(end)} (dates are YYYYMMDD; "
            "end_date defaults to the service clock)"
        )
    return start, end


def require_one(args: dict[str, Any], tool: str, *names: str) -> None:
    if all(args.get(n) is None for n in names):
        raise ToolInputError(f"{tool}: pass at least one of {', '.join(names)}")


def fields_meta(fields: Iterable[F]) -> list[FieldMeta]:
    return [FieldMeta(name=n, type=t, unit=u, description=d, description_zh=z) for n, t, u, d, z in fields]  # type: ignore[arg-type]


DATE_PARAMS = (
    ParamSpec("trade_date", "date", "trading day (YYYYMMDD); returns that day's record(s)", fmt=YMD),
    ParamSpec("start_date", "date", "first trading day of the window (YYYYMMDD)", fmt=YMD),
    ParamSpec("end_date", "date", "last trading day of the window (YYYYMMDD); defaults to the latest", fmt=YMD),
)
DATE_PARAM_META = [
    DateParamMeta(name="trade_date", fmt=YMD, role="point"),
    DateParamMeta(name="start_date", fmt=YMD, role="start"),
    DateParamMeta(name="end_date", fmt=YMD, role="end"),
]


def ts_code_param(example: str, required: bool = False) -> ParamSpec:
    return ParamSpec("ts_code", "str", f"instrument code, e.g. {example} (find codes with the search tool)", required=required)


def make_tool(
    *,
    name: str,
    service: str,
    description: str,
    asset_classes: list[str],
    fields: Iterable[F],
    handler: Callable[[ToolContext, dict[str, Any]], list[Record]],
    params: tuple[ParamSpec, ...],
    calendar: str | None = "XSHG",
    entity_param: str | None = "ts_code",
    date_params: list[DateParamMeta] | None = None,
    time_key: str | None = "trade_date",
    time_key_fmt: str | None = YMD,
    refresh_class: str = "daily",
    roles: dict[str, str] | None = None,
    series_keys: Iterable[str] = (),
    publication_lag_sessions: int = 0,
    one_series_by: Iterable[str] = (),
) -> ToolSpec:
    """`roles` overrides derived field roles; `series_keys` names the fields that tell apart
    several series on one time key (see core.catalog.ToolMeta)."""
    meta = ToolMeta(
        name=name, service=service, description=description, asset_classes=asset_classes,  # type: ignore[arg-type]
        role="data", entity_param=entity_param,
        date_params=list(DATE_PARAM_META if date_params is None else date_params),
        time_key=time_key, time_key_fmt=time_key_fmt, calendar=calendar,  # type: ignore[arg-type]
        refresh_class=refresh_class, fields=with_roles(fields_meta(fields), roles),  # type: ignore[arg-type]
        series_keys=list(series_keys), publication_lag_sessions=publication_lag_sessions,
        one_series_by=list(one_series_by),
    )
    declared = {f.name for f in meta.fields}

    def checked(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
        records = handler(ctx, args)
        for record in records[:1]:
            if set(record) != declared:
                raise RuntimeError(f"{name}: record fields {sorted(set(record) ^ declared)} differ from its metadata")
        return records

    return ToolSpec(meta=meta, params=params, handler=checked)


def rows_of(bars: Bars, start: dt.date | None, end: dt.date) -> range:
    i, j = bars.span(start, end)
    return range(j - 1, i - 1, -1)


def entities_or_one(ctx: ToolContext, entity: Entity | None, asset_class: str, predicate: Callable[[Entity], bool] = lambda e: True) -> list[Entity]:
    """One entity, or every entity of a class (a trade_date query across the market)."""
    if entity is not None:
        return [entity]
    return [e for e in ctx.market.universe.of_class(asset_class) if predicate(e)]


def bar_record(bars: Bars, k: int, decimals: int, pct_name: str = "pct_chg") -> Record:
    # change and pct_chg follow from the prices as served (rounded to `decimals`), so that a
    # reader recomputing close - pre_close from the record gets the published change exactly.
    close, pre = round(float(bars.close[k]), decimals), round(float(bars.pre_close[k]), decimals)
    change = round(close - pre, decimals)
    return {
        "ts_code": bars.code,
        "trade_date": ymd(bars.dates[k]),
        "open": num(bars.open[k], decimals),
        "high": num(bars.high[k], decimals),
        "low": num(bars.low[k], decimals),
        "close": num(close, decimals),
        "pre_close": num(pre, decimals),
        "change": change,
        pct_name: round(change / pre * 100, 4),
        "vol": num(bars.vol[k], 2),
        "amount": num(bars.amount[k], 3),
    }


def bar_query(
    ctx: ToolContext, args: dict[str, Any], tool: str, classes: tuple[str, ...], series: Callable[[str], Bars],
    build: Callable[[Bars, int], Record], predicate: Callable[[Entity], bool] = lambda e: True,
) -> list[Record]:
    """The common shape of a bar tool: ts_code (+ window) or trade_date across a class. An
    instrument of a served class that the tool does not cover (an open-end fund for ETF bars)
    has no records, as a data vendor answers for a code outside a table's coverage."""
    require_one(args, tool, "ts_code", "trade_date")
    entity = entity_arg(ctx, args, classes, tool)
    start, end = window(ctx, args, tool)
    records: list[Record] = []
    if entity is not None:
        if not predicate(entity):
            return []
        bars = series(entity.code)
        return [build(bars, k) for k in rows_of(bars, start, end)]
    for asset_class in classes:
        for e in entities_or_one(ctx, None, asset_class, predicate):
            bars = series(e.code)
            k = bars.at(end) if start == end else None
            if k is not None:
                records.append(build(bars, k))
    records.sort(key=lambda r: r["ts_code"])
    return records


PRICE_FIELDS_CN: list[F] = [
    ("ts_code", "code", None, "A-share code", "股票代码"),
    ("trade_date", "date", None, "trading day", "交易日期"),
    ("open", "number", "CNY", "opening price (unadjusted), CNY", "开盘价（未复权，元）"),
    ("high", "number", "CNY", "highest price (unadjusted), CNY", "最高价（未复权，元）"),
    ("low", "number", "CNY", "lowest price (unadjusted), CNY", "最低价（未复权，元）"),
    ("close", "number", "CNY", "closing price (unadjusted), CNY", "收盘价（未复权，元）"),
    ("pre_close", "number", "CNY", "previous close (ex-rights adjusted on ex-dates), CNY", "昨收价（除权价，元）"),
    ("change", "number", "CNY", "price change: close minus previous close, CNY", "涨跌额（元）"),
    ("pct_chg", "number", "%", "percentage change versus previous close, percent", "涨跌幅（%）"),
    ("vol", "number", "lots", "trading volume in lots of 100 shares", "成交量（手）"),
    ("amount", "number", "thousand CNY", "turnover value in thousand CNY", "成交额（千元）"),
]

# ------------------------------------------------------------------------ A-share bars


def _daily(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return bar_query(ctx, args, "daily", ("cn_equity",), ctx.market.prices.daily, lambda b, k: bar_record(b, k, 2))


def _weekly(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return bar_query(ctx, args, "weekly", ("cn_equity",), ctx.market.prices.weekly, lambda b, k: bar_record(b, k, 2))


def _monthly(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return bar_query(ctx, args, "monthly", ("cn_equity",), ctx.market.prices.monthly, lambda b, k: bar_record(b, k, 2))


def _adj_factor(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return bar_query(
        ctx, args, "adj_factor", ("cn_equity",), ctx.market.prices.daily,
        lambda b, k: {"ts_code": b.code, "trade_date": ymd(b.dates[k]), "adj_factor": num(b.adj_factor[k], 6)},
    )


def _stk_limit(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return bar_query(
        ctx, args, "stk_limit", ("cn_equity",), ctx.market.prices.daily,
        lambda b, k: {
            "ts_code": b.code, "trade_date": ymd(b.dates[k]), "pre_close": num(b.pre_close[k], 2),
            "up_limit": num(b.up_limit[k], 2), "down_limit": num(b.down_limit[k], 2),
        },
    )


def _dividend_cash_ttm(ctx: ToolContext, code: str, day: dt.date) -> float:
    """Cash dividends per share with ex-dates in the 365 days up to `day` (CNY)."""
    cash = ctx.market.prices.dividend_cash(code)
    return sum(
        cash.get(a.action_id, 0.0)
        for a in ctx.market.corporate.actions(code)
        if day - dt.timedelta(days=365) < a.ex_date <= day
    )


def _ratio(numerator: float, denominator: float | None, decimals: int) -> float | None:
    """numerator / denominator, or None where the ratio is undefined (no or negative base),
    as Tushare leaves PE blank for loss makers."""
    if denominator is None or denominator <= 0:
        return None
    return round(numerator / denominator, decimals)


def daily_basic_record(ctx: ToolContext, bars: Bars, k: int) -> Record:
    day = bars.dates[k]
    close = float(bars.close[k])
    total_share, float_share = float(bars.total_share[k]), float(bars.float_share[k])
    free_share = round(float_share * 0.85, -2)
    total_mv_cny = close * total_share
    lookback = slice(max(0, k - 5), k)
    past_vol = bars.vol[lookback]
    fundamentals = ctx.market.fundamentals
    cash_ttm = _dividend_cash_ttm(ctx, bars.code, day)
    return {
        "ts_code": bars.code,
        "trade_date": ymd(day),
        "close": num(close, 2),
        "turnover_rate": round(float(bars.vol[k]) * 100 / total_share * 100, 4),
        "turnover_rate_f": round(float(bars.vol[k]) * 100 / free_share * 100, 4),
        "volume_ratio": round(float(bars.vol[k]) / float(past_vol.mean()), 2) if len(past_vol) else None,
        "pe_ttm": _ratio(total_mv_cny, fundamentals.ttm_net_profit(bars.code, day), 4),
        "ps_ttm": _ratio(total_mv_cny, fundamentals.ttm_revenue(bars.code, day), 4),
        "pb": _ratio(total_mv_cny, fundamentals.book_equity(bars.code, day), 4),
        "dv_ttm": round(cash_ttm / close * 100, 4),
        "total_share": round(total_share / 1e4, 4),
        "float_share": round(float_share / 1e4, 4),
        "free_share": round(free_share / 1e4, 4),
        "total_mv": round(total_mv_cny / 1e4, 4),
        "circ_mv": round(close * float_share / 1e4, 4),
    }


def _daily_basic(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return bar_query(ctx, args, "daily_basic", ("cn_equity",), ctx.market.prices.daily, lambda b, k: daily_basic_record(ctx, b, k))


def _suspend_d(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    require_one(args, "suspend_d", "ts_code", "trade_date", "start_date")
    entity = entity_arg(ctx, args, ("cn_equity",), "suspend_d")
    start, end = window(ctx, args, "suspend_d")
    wanted_type = args.get("suspend_type")
    records: list[Record] = []
    for e in entities_or_one(ctx, entity, "cn_equity"):
        suspended = ctx.market.corporate.suspensions(e.code)
        if not suspended:
            continue
        bars = ctx.market.prices.daily(e.code)
        resumptions = set()
        for day in suspended:
            k = bars.last_on_or_before(day)
            nxt = (k + 1) if k is not None else 0
            if nxt < len(bars.dates) and bars.dates[nxt] not in suspended:
                resumptions.add(bars.dates[nxt])
        events = [(d, "S") for d in suspended] + [(d, "R") for d in resumptions]
        for day, kind in events:
            if (start is None or day >= start) and day <= end and wanted_type in (None, kind):
                records.append({"ts_code": e.code, "trade_date": ymd(day), "suspend_timing": None if kind == "R" else "全天", "suspend_type": kind})
    records.sort(key=lambda r: (r["trade_date"], r["ts_code"]), reverse=True)
    return records


def _bak_daily(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    def build(bars: Bars, k: int) -> Record:
        entity = ctx.market.universe.get(bars.code)
        base = bar_record(bars, k, 2, pct_name="pct_change")
        close, pre = float(bars.close[k]), float(bars.pre_close[k])
        past = bars.vol[max(0, k - 5):k]
        total_share, float_share = float(bars.total_share[k]), float(bars.float_share[k])
        return {
            "ts_code": bars.code, "trade_date": base["trade_date"], "name": ctx.market.names.spell_on(bars.code, bars.dates[k]).name,
            "pct_change": base["pct_change"], "close": base["close"], "change": base["change"],
            "open": base["open"], "high": base["high"], "low": base["low"], "pre_close": base["pre_close"],
            "vol_ratio": round(float(bars.vol[k]) / float(past.mean()), 2) if len(past) else None,
            "turn_over": round(float(bars.vol[k]) * 100 / float_share * 100, 2),
            "swing": round((float(bars.high[k]) - float(bars.low[k])) / pre * 100, 2),
            "vol": base["vol"], "amount": round(float(bars.amount[k]) / 10, 2),
            "total_share": round(total_share / 1e8, 4), "float_share": round(float_share / 1e8, 4),
            "industry": entity.industry,
            "float_mv": round(close * float_share / 1e8, 4), "total_mv": round(close * total_share / 1e8, 4),
            "avg_price": round(float(bars.amount[k]) * 1000 / (float(bars.vol[k]) * 100), 2) if bars.vol[k] else None,
        }

    return bar_query(ctx, args, "bak_daily", ("cn_equity",), ctx.market.prices.daily, build)


def adjusted_bars(bars: Bars, adj: str | None, reference_factor: float) -> Bars:
    """Forward (qfq: scaled by factor / `reference_factor`, the latest factor) or backward
    (hfq: times the factor) adjusted prices; None returns the bars unchanged. The raw
    pre_close is already ex-adjusted, so pre_close x today's scale equals the previous
    adjusted close and the adjusted series chains without a jump on ex-dates."""
    if adj is None:
        return bars
    scale = bars.adj_factor / reference_factor if adj == "qfq" else bars.adj_factor
    return Bars(
        code=bars.code, dates=bars.dates, open=bars.open * scale, high=bars.high * scale, low=bars.low * scale,
        close=bars.close * scale, pre_close=bars.pre_close * scale, vol=bars.vol, amount=bars.amount,
        adj_factor=bars.adj_factor, decimals=bars.decimals, ordinals=bars.ordinals,
    )


def _pro_bar(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    entity = entity_arg(ctx, args, ("cn_equity",), "pro_bar")
    if entity is None:
        raise ToolInputError("pro_bar: ts_code is required, e.g. 600580.SH")
    freq = args.get("freq") or "D"
    adj = args.get("adj")
    start, end = window(ctx, args, "pro_bar")
    daily = ctx.market.prices.daily(entity.code)
    latest = daily.last_on_or_before(ctx.clock)
    if latest is None:
        return []
    series = {"D": daily, "W": ctx.market.prices.weekly(entity.code), "M": ctx.market.prices.monthly(entity.code)}[freq]
    if freq != "D" and adj is not None:
        series = aggregate(adjusted_bars(daily, adj, float(daily.adj_factor[latest])), freq)
    else:
        series = adjusted_bars(series, adj, float(daily.adj_factor[latest]))
    return [bar_record(series, k, 2) | {"adj_factor": num(series.adj_factor[k], 6)} for k in rows_of(series, start, end)]


# ------------------------------------------------------------------------ minute bars

SESSION_MINUTES = {
    "XSHG": ((9 * 60 + 30, 11 * 60 + 30), (13 * 60, 15 * 60)),
    "XHKG": ((9 * 60 + 30, 12 * 60), (13 * 60, 16 * 60)),
    "XNYS": ((9 * 60 + 30, 16 * 60),),
}
FREQS = {"1min": 1, "5min": 5, "15min": 15, "30min": 30, "60min": 60}
# A window of years would build millions of bars before paging and hold the server for minutes
# (Tushare caps stk_mins per call for the same reason). 100 sessions leaves room above the widest
# window the construction stage explores (60 sessions).
MAX_MINUTE_SESSIONS = 100


@dataclass(frozen=True)
class MinuteBars:
    times: list[str]
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    vol: np.ndarray  # shares
    amount: np.ndarray  # currency units


@lru_cache(maxsize=None)
def _stamp_suffixes(calendar: str) -> tuple[str, ...]:
    return tuple(f" {h:02d}:{m:02d}:00" for h, m in _minute_stamps(calendar))


@lru_cache(maxsize=None)
def _minute_stamps(calendar: str) -> tuple[tuple[int, int], ...]:
    """(hour, minute) of each 1-minute bar's end time in a session."""
    stamps = []
    for open_min, close_min in SESSION_MINUTES[calendar]:
        stamps += [divmod(m, 60) for m in range(open_min + 1, close_min + 1)]
    return tuple(stamps)


@lru_cache(maxsize=4096)
def minute_path(seed: int, code: str, day: dt.date, open_: float, high: float, low: float, close: float, shares: float, calendar: str, decimals: int) -> MinuteBars:
    """One-minute bars of a session, consistent with its daily bar: first open = open, last
    close = close, max high = high, min low = low, volumes summing to the day's shares."""
    from livesearch_pipeline.dataservice.market.rng import generator

    stamps = _minute_stamps(calendar)
    n = len(stamps)
    rng = generator(seed, code, "minutes", day.isoformat())
    steps = rng.standard_normal(n)
    walk = np.concatenate(([0.0], np.cumsum(steps)))
    bridge = walk - np.linspace(0.0, 1.0, n + 1) * walk[-1]
    path = open_ + (close - open_) * np.linspace(0.0, 1.0, n + 1) + bridge
    top, bottom = max(open_, close), min(open_, close)
    above, below = np.maximum(path - top, 0.0), np.maximum(bottom - path, 0.0)
    path = np.where(above > 0, top + above / above.max() * (high - top) if above.max() > 0 else top, path)
    path = np.where(below > 0, bottom - below / below.max() * (bottom - low) if below.max() > 0 else bottom, path)
    path = np.clip(path, low, high)
    # Hong Kong trades at the HKEX spread table's ticks (market.prices.to_hk_ticks).
    path = to_hk_ticks(path) if calendar == "XHKG" else np.round(path, decimals)
    path[0], path[-1] = open_, close
    if high > top and not (path == high).any():
        path[1 + int(rng.integers(0, n - 1))] = high
    if low < bottom and not (path == low).any():
        candidates = np.nonzero(path[1:-1] != high)[0]
        if not len(candidates):  # every inner minute at the high (a one-tick range): any but the first
            candidates = np.arange(1, n - 1)
        path[1 + int(candidates[int(rng.integers(0, len(candidates)))])] = low
    opens, closes = path[:-1], path[1:]
    u_shape = 1.0 + 2.0 * (np.linspace(-1, 1, n) ** 2) + rng.random(n) * 0.5
    vol = np.floor(shares * u_shape / u_shape.sum() / 100) * 100
    vol[-1] += shares - vol.sum()
    prefix = day.isoformat()
    times = [prefix + suffix for suffix in _stamp_suffixes(calendar)]
    return MinuteBars(times, opens, np.maximum(opens, closes), np.minimum(opens, closes), closes, vol, np.round(vol * (opens + closes) / 2, 2))


def minute_records(ctx: ToolContext, args: dict[str, Any], tool: str, classes: tuple[str, ...], shares_per_vol: float) -> list[Record]:
    entity = entity_arg(ctx, args, classes, tool)
    if entity is None:
        raise ToolInputError(f"{tool}: ts_code is required")
    freq = args.get("freq") or "1min"
    if freq not in FREQS:
        raise ToolInputError(f"{tool}: freq {freq!r} is not one of {', '.join(FREQS)}")
    start, end = window(ctx, args, tool)
    if start is None:
        start = end
    bars = ctx.market.prices.daily(entity.code)
    rows = list(rows_of(bars, start, end))
    if len(rows) > MAX_MINUTE_SESSIONS:
        raise ToolInputError(
            f"{tool}: {ymd(start)}..{ymd(end)} spans {len(rows)} sessions; minute bars are served for at most "
            f"{MAX_MINUTE_SESSIONS} sessions per call (up to 390 one-minute bars each): narrow start_date/end_date"
        )
    step = FREQS[freq]
    records: list[Record] = []
    for k in rows:
        minutes = minute_path(
            ctx.seed, entity.code, bars.dates[k], float(bars.open[k]), float(bars.high[k]), float(bars.low[k]),
            float(bars.close[k]), float(bars.vol[k]) * shares_per_vol, entity.calendar, bars.decimals,
        )
        n = len(minutes.times)
        starts = np.arange(0, n, step)
        ends = np.minimum(starts + step, n) - 1
        d = bars.decimals
        columns = zip(
            [minutes.times[i] for i in ends],
            np.round(minutes.open[starts], d).tolist(),
            np.round(minutes.close[ends], d).tolist(),
            np.round(np.maximum.reduceat(minutes.high, starts), d).tolist(),
            np.round(np.minimum.reduceat(minutes.low, starts), d).tolist(),
            np.add.reduceat(minutes.vol, starts).tolist(),
            np.round(np.add.reduceat(minutes.amount, starts), 2).tolist(),
        )
        session = [
            {"ts_code": entity.code, "trade_time": t, "open": o, "close": c, "high": h, "low": lo, "vol": v, "amount": a}
            for t, o, c, h, lo, v, a in columns
        ]
        records.extend(reversed(session))
    return records


def minute_fields(currency: str, code_desc: str) -> list[F]:
    return [
        ("ts_code", "code", None, code_desc, "证券代码"),
        ("trade_time", "date", None, "bar end time (exchange local time)", "交易时间"),
        ("open", "number", currency, f"opening price of the bar, {currency}", f"开盘价（{currency}）"),
        ("close", "number", currency, f"closing price of the bar, {currency}", f"收盘价（{currency}）"),
        ("high", "number", currency, f"highest price of the bar, {currency}", f"最高价（{currency}）"),
        ("low", "number", currency, f"lowest price of the bar, {currency}", f"最低价（{currency}）"),
        ("vol", "number", "shares", "volume in shares", "成交量（股）"),
        ("amount", "number", currency, f"turnover value, {currency}", f"成交金额（{currency}）"),
    ]


MINUTE_PARAMS = (
    ParamSpec("freq", "str", "bar length", enum=tuple(FREQS)),
    ParamSpec("trade_date", "date", "session (YYYYMMDD)", fmt=YMD),
    ParamSpec("start_date", "date", f"first session (YYYYMMDD); at most {MAX_MINUTE_SESSIONS} sessions per call, a session has 240-390 one-minute bars", fmt=YMD),
    ParamSpec("end_date", "date", "last session (YYYYMMDD)", fmt=YMD),
)


def _stk_mins(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    return minute_records(ctx, args, "stk_mins", ("cn_equity",), 100.0)


# ------------------------------------------------------------------------ technical factors


@lru_cache(maxsize=512)
def _factor_table(code: str, bars: Bars) -> dict[str, np.ndarray]:
    import pandas as pd

    close = pd.Series(bars.close * bars.adj_factor)
    high = pd.Series(bars.high * bars.adj_factor)
    low = pd.Series(bars.low * bars.adj_factor)
    dif = close.ewm(span=12, adjust=False).mean() - close.ewm(span=26, adjust=False).mean()
    dea = dif.ewm(span=9, adjust=False).mean()
    low9, high9 = low.rolling(9, min_periods=1).min(), high.rolling(9, min_periods=1).max()
    rsv = ((close - low9) / (high9 - low9).where(high9 > low9) * 100).fillna(50.0)
    k = rsv.ewm(alpha=1 / 3, adjust=False).mean()
    d = k.ewm(alpha=1 / 3, adjust=False).mean()
    delta = close.diff().fillna(0.0)

    def rsi(n: int) -> pd.Series:
        gain = delta.clip(lower=0).ewm(alpha=1 / n, adjust=False).mean()
        loss = (-delta.clip(upper=0)).ewm(alpha=1 / n, adjust=False).mean()
        return (100 * gain / (gain + loss).where(gain + loss > 0)).fillna(50.0)

    mid = close.rolling(20, min_periods=1).mean()
    std = close.rolling(20, min_periods=1).std(ddof=0)
    return {
        "close_hfq": close.to_numpy(), "macd_dif": dif.to_numpy(), "macd_dea": dea.to_numpy(),
        "macd": (2 * (dif - dea)).to_numpy(), "kdj_k": k.to_numpy(), "kdj_d": d.to_numpy(),
        "kdj_j": (3 * k - 2 * d).to_numpy(), "rsi_6": rsi(6).to_numpy(), "rsi_12": rsi(12).to_numpy(),
        "boll_upper": (mid + 2 * std).to_numpy(), "boll_mid": mid.to_numpy(), "boll_lower": (mid - 2 * std).to_numpy(),
    }


def _stk_factor(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    def build(bars: Bars, k: int) -> Record:
        table = _factor_table(bars.code, bars)
        record = {"ts_code": bars.code, "trade_date": ymd(bars.dates[k]), "close": num(bars.close[k], 2)}
        record.update({name: num(values[k], 4) for name, values in table.items()})
        return record

    return bar_query(ctx, args, "stk_factor", ("cn_equity",), ctx.market.prices.daily, build)


# ------------------------------------------------------------------------ dividend


def _dividend(ctx: ToolContext, args: dict[str, Any]) -> list[Record]:
    require_one(args, "dividend", "ts_code", "ann_date", "record_date", "ex_date", "imp_ann_date")
    entity = entity_arg(ctx, args, ("cn_equity",), "dividend")
    filters = {name: ymd(args[name]) for name in ("ann_date", "record_date", "ex_date", "imp_ann_date") if args.get(name) is not None}
    clock = ymd(ctx.clock)
    records = []
    for e in entities_or_one(ctx, entity, "cn_equity"):
        for r in ctx.market.corporate.dividends(e.code):
            if r["ann_date"] <= clock and all(r[k] == v for k, v in filters.items()):
                records.append(r)
    records.sort(key=lambda r: (r["ann_date"], r["ts_code"]), reverse=True)
    return records


DIVIDEND_FIELDS: list[F] = [
    ("ts_code", "code", None, "A-share code", "股票代码"),
    ("end_date", "date", None, "fiscal period end the distribution is paid for", "分红年度"),
    ("ann_date", "date", None, "announcement date of this stage", "预案公告日"),
    ("div_proc", "text", None, "stage of the plan: 预案 (proposal), 股东大会通过 (approved), 实施 (implemented)", "实施进度"),
    ("stk_div", "number", "shares per share", "bonus plus capitalised shares per share", "每股送转"),
    ("stk_bo_rate", "number", "shares per share", "bonus shares per share", "每股送股比例"),
    ("stk_co_rate", "number", "shares per share", "capitalised (transfer) shares per share", "每股转增比例"),
    ("cash_div", "number", "CNY", "cash dividend per share paid (implemented stage only; 0 before), CNY", "每股分红（税后，元）"),
    ("cash_div_tax", "number", "CNY", "cash dividend per share before tax, CNY", "每股分红（税前，元）"),
    ("record_date", "date", None, "share registration (record) date", "股权登记日"),
    ("ex_date", "date", None, "ex-rights / ex-dividend date", "除权除息日"),
    ("pay_date", "date", None, "cash payment date", "派息日"),
    ("div_listdate", "date", None, "listing date of the bonus shares", "红股上市日"),
    ("imp_ann_date", "date", None, "implementation announcement date", "实施公告日"),
]

# ------------------------------------------------------------------------ catalog rows

_CODE = ts_code_param("600580.SH")
_BAR_PARAMS = (_CODE, *DATE_PARAMS)


TOOLS: list[ToolSpec] = [
    make_tool(name="daily", service="cn_quotes", asset_classes=["cn_equity"], params=_BAR_PARAMS, handler=_daily,
              description="A-share daily bars (unadjusted); ts_code with a date window, or trade_date for every stock that day",
              fields=PRICE_FIELDS_CN),
    make_tool(name="weekly", service="cn_quotes", asset_classes=["cn_equity"], params=_BAR_PARAMS, handler=_weekly,
              description="A-share weekly bars aggregated from daily bars, dated on the week's last session",
              fields=PRICE_FIELDS_CN, refresh_class="weekly"),
    make_tool(name="monthly", service="cn_quotes", asset_classes=["cn_equity"], params=_BAR_PARAMS, handler=_monthly,
              description="A-share monthly bars aggregated from daily bars, dated on the month's last session",
              fields=PRICE_FIELDS_CN, refresh_class="monthly"),
    make_tool(name="adj_factor", service="cn_quotes", asset_classes=["cn_equity"], params=_BAR_PARAMS, handler=_adj_factor,
              description="A-share cumulative price adjustment factor; changes only on ex-dates",
              fields=[PRICE_FIELDS_CN[0], PRICE_FIELDS_CN[1],
                      ("adj_factor", "number", None, "cumulative adjustment factor (multiply unadjusted prices to back-adjust)", "复权因子")]),
    make_tool(name="daily_basic", service="cn_quotes", asset_classes=["cn_equity"], params=_BAR_PARAMS, handler=_daily_basic,
              description="A-share daily valuation and share-capital indicators",
              fields=[PRICE_FIELDS_CN[0], PRICE_FIELDS_CN[1], PRICE_FIELDS_CN[5],
                      ("turnover_rate", "number", "%", "turnover rate: volume / total shares, percent", "换手率（%）"),
                      ("turnover_rate_f", "number", "%", "turnover rate on free-float shares, percent", "换手率（自由流通股，%）"),
                      ("volume_ratio", "number", None, "volume ratio: volume / mean volume of the previous 5 sessions", "量比"),
                      ("pe_ttm", "number", None, "price-to-earnings ratio, trailing twelve months (blank for losses)", "市盈率（TTM）"),
                      ("ps_ttm", "number", None, "price-to-sales ratio, trailing twelve months", "市销率（TTM）"),
                      ("pb", "number", None, "price-to-book ratio (latest reported parent equity)", "市净率"),
                      ("dv_ttm", "number", "%", "dividend yield, trailing twelve months, percent", "股息率（TTM，%）"),
                      ("total_share", "number", "10k shares", "total shares, in 10 thousand shares", "总股本（万股）"),
                      ("float_share", "number", "10k shares", "tradable (float) shares, in 10 thousand shares", "流通股本（万股）"),
                      ("free_share", "number", "10k shares", "free-float shares, in 10 thousand shares", "自由流通股本（万股）"),
                      ("total_mv", "number", "10k CNY", "total market value (close x total shares), in 10 thousand CNY", "总市值（万元）"),
                      ("circ_mv", "number", "10k CNY", "float market value (close x float shares), in 10 thousand CNY", "流通市值（万元）")]),
    make_tool(name="stk_limit", service="cn_quotes", asset_classes=["cn_equity"], params=_BAR_PARAMS, handler=_stk_limit,
              description="A-share daily price limits (limit-up / limit-down prices)",
              fields=[PRICE_FIELDS_CN[0], PRICE_FIELDS_CN[1], PRICE_FIELDS_CN[6],
                      ("up_limit", "number", "CNY", "limit-up price, CNY", "涨停价（元）"),
                      ("down_limit", "number", "CNY", "limit-down price, CNY", "跌停价（元）")]),
    make_tool(name="suspend_d", service="cn_quotes", asset_classes=["cn_equity"],
              params=(_CODE, *DATE_PARAMS, ParamSpec("suspend_type", "str", "S: suspended, R: resumed", enum=("S", "R"))),
              handler=_suspend_d, description="A-share trading suspensions (S, one row per suspended session) and resumptions (R)",
              fields=[PRICE_FIELDS_CN[0], PRICE_FIELDS_CN[1],
                      ("suspend_timing", "text", None, "suspension timing within the day (全天 = whole day)", "停牌时间段"),
                      ("suspend_type", "text", None, "S = suspended, R = resumed", "停复牌类型")]),
    make_tool(name="stk_mins", service="cn_quotes", asset_classes=["cn_equity"], params=(_CODE, *MINUTE_PARAMS), handler=_stk_mins,
              description="A-share historical minute bars (1/5/15/30/60min), one session (trade_date) or a window; sessions 09:30-11:30 and 13:00-15:00",
              fields=minute_fields("CNY", "A-share code"), time_key="trade_time", time_key_fmt=MINUTE_FMT),
    make_tool(name="bak_daily", service="cn_quotes", asset_classes=["cn_equity"], params=_BAR_PARAMS, handler=_bak_daily,
              description="A-share daily backup quotes with name, industry, turnover, swing and market value",
              fields=[PRICE_FIELDS_CN[0], PRICE_FIELDS_CN[1],
                      ("name", "text", None, "stock short name", "股票名称"),
                      ("pct_change", "number", "%", "percentage change versus previous close, percent", "涨跌幅（%）"),
                      PRICE_FIELDS_CN[5], PRICE_FIELDS_CN[7], PRICE_FIELDS_CN[2], PRICE_FIELDS_CN[3], PRICE_FIELDS_CN[4], PRICE_FIELDS_CN[6],
                      ("vol_ratio", "number", None, "volume ratio versus the previous 5 sessions' mean", "量比"),
                      ("turn_over", "number", "%", "turnover rate on float shares, percent", "换手率（%）"),
                      ("swing", "number", "%", "intraday amplitude (high - low) / previous close, percent", "振幅（%）"),
                      PRICE_FIELDS_CN[9],
                      ("amount", "number", "10k CNY", "turnover value, in 10 thousand CNY", "成交额（万元）"),
                      ("total_share", "number", "100m shares", "total shares, in 100 million shares", "总股本（亿股）"),
                      ("float_share", "number", "100m shares", "float shares, in 100 million shares", "流通股本（亿股）"),
                      ("industry", "text", None, "industry", "所属行业"),
                      ("float_mv", "number", "100m CNY", "float market value, in 100 million CNY", "流通市值（亿元）"),
                      ("total_mv", "number", "100m CNY", "total market value, in 100 million CNY", "总市值（亿元）"),
                      ("avg_price", "number", "CNY", "volume-weighted average price, CNY", "均价（元）")]),
    make_tool(name="pro_bar", service="cn_quotes", asset_classes=["cn_equity"],
              params=(ts_code_param("600580.SH", required=True), *DATE_PARAMS[1:],
                      ParamSpec("adj", "str", "price adjustment: qfq (forward, to the latest factor) or hfq (backward)", enum=("qfq", "hfq")),
                      ParamSpec("freq", "str", "bar frequency: D daily, W weekly, M monthly", enum=("D", "W", "M"))),
              handler=_pro_bar, date_params=DATE_PARAM_META[1:],
              description="A-share bars with optional forward/backward price adjustment (qfq moves when a new ex-date passes)",
              fields=[*PRICE_FIELDS_CN[:2],
                      *[(n, t, u, d.replace("(unadjusted)", "(adjusted as requested)"), z.replace("未复权", "按复权方式")) for n, t, u, d, z in PRICE_FIELDS_CN[2:]],
                      ("adj_factor", "number", None, "cumulative adjustment factor of the bar", "复权因子")]),
    make_tool(name="stk_factor", service="cn_quotes", asset_classes=["cn_equity"], params=_BAR_PARAMS, handler=_stk_factor,
              description="A-share daily technical indicators on back-adjusted (hfq) prices: MACD(12,26,9) with DIF = EMA12 - EMA26 of the close, DEA = EMA9 of DIF and macd = 2 x (DIF - DEA), the bar Chinese terminals plot (a Western histogram is DIF - DEA, half of it); KDJ(9,3,3) with J = 3K - 2D; Wilder RSI over 6 and 12 days; Bollinger(20,2) = 20-day mean of the close plus or minus 2 population standard deviations",
              fields=[PRICE_FIELDS_CN[0], PRICE_FIELDS_CN[1], PRICE_FIELDS_CN[5],
                      ("close_hfq", "number", "CNY", "back-adjusted close (close x adj_factor), CNY", "后复权收盘价（元）"),
                      ("macd_dif", "number", None, "MACD DIF (EMA12 - EMA26 of hfq close)", "MACD DIF值"),
                      ("macd_dea", "number", None, "MACD DEA (EMA9 of DIF)", "MACD DEA值"),
                      ("macd", "number", None, "MACD bar 2 x (DIF - DEA), as Chinese terminals show it; the Western histogram DIF - DEA is half of it", "MACD柱（2×(DIF-DEA)）"),
                      ("kdj_k", "number", None, "KDJ K (9,3,3)", "KDJ K值"),
                      ("kdj_d", "number", None, "KDJ D (9,3,3)", "KDJ D值"),
                      ("kdj_j", "number", None, "KDJ J = 3K - 2D", "KDJ J值"),
                      ("rsi_6", "number", None, "6-day RSI (Wilder)", "RSI 6日"),
                      ("rsi_12", "number", None, "12-day RSI (Wilder)", "RSI 12日"),
                      ("boll_upper", "number", "CNY", "Bollinger upper band (20, 2) on hfq close", "布林上轨"),
                      ("boll_mid", "number", "CNY", "Bollinger middle band (20-day mean of hfq close)", "布林中轨"),
                      ("boll_lower", "number", "CNY", "Bollinger lower band (20, 2) on hfq close", "布林下轨")]),
    make_tool(name="dividend", service="corporate", asset_classes=["cn_equity"],
              params=(_CODE,
                      ParamSpec("ann_date", "date", "announcement date (YYYYMMDD)", fmt=YMD),
                      ParamSpec("record_date", "date", "record date (YYYYMMDD)", fmt=YMD),
                      ParamSpec("ex_date", "date", "ex-dividend date (YYYYMMDD)", fmt=YMD),
                      ParamSpec("imp_ann_date", "date", "implementation announcement date (YYYYMMDD)", fmt=YMD)),
              handler=_dividend, calendar="XSHG", refresh_class="quarterly",
              date_params=[DateParamMeta(name="ann_date", fmt=YMD, role="point"), DateParamMeta(name="ex_date", fmt=YMD, role="point")],
              time_key="ann_date", description="A-share dividend and bonus-share plans with every stage (proposal, approval, implementation)",
              fields=DIVIDEND_FIELDS),
]
