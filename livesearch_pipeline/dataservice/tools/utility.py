"""Non-data tools of the embedded service: the pipeline recognises them by role and never
builds a gold program on them.

- `search` (role "search"): name or code fragment -> instruments, named as on the clock (a
  former name finds the company too, which it then lists under `former_names`).
- `realtime_quote` (role "intraday"): a live snapshot; it has no date argument, so its answer
  cannot be re-dated, which is exactly why it is excluded. Derived from the daily bar of the
  clock's session, stamped at that exchange's close (the service clock has day resolution).
- `system_clock` (role "utility"): the service's current date and each exchange's last session.
- `entity_visibility` (role "utility"): the web-visibility level 0..10 of instruments, the
  pluggable scorer the coverage stage spreads its pool with.
"""

from __future__ import annotations

import datetime as dt
import importlib
from typing import Any

from livesearch_pipeline.core.calendars import CALENDARS, session_on_or_before
from livesearch_pipeline.core.catalog import FieldMeta, ToolMeta
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec

INSTRUMENT_CLASSES = ("cn_equity", "hk_equity", "us_equity", "index", "fund")

# The daily-bar tool of each instrument class, and the module that defines it.
DAILY_BAR_TOOLS: dict[str, tuple[str, str]] = {
    "cn_equity": ("quotes_cn", "daily"),
    "hk_equity": ("hk_us", "hk_daily"),
    "us_equity": ("hk_us", "us_daily"),
    "index": ("indices", "index_daily"),
    "fund": ("funds", "fund_daily"),
}
CLOSE_TIME = {"XSHG": "15:00:00", "XHKG": "16:00:00", "XNYS": "16:00:00"}
# How far back the quote looks for the last bar (covers the longest holiday closures).
QUOTE_LOOKBACK_DAYS = 30


def _entity(ctx: ToolContext, code: str) -> Any:
    try:
        return ctx.market.universe.get(code)
    except LookupError as exc:
        raise ToolInputError(f"{exc}; find codes with the search tool") from exc


def _asset_class_arg(args: dict[str, Any]) -> str | None:
    return args.get("asset_class")


# --------------------------------------------------------------------------- search


def search(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    keyword: str = args["keyword"].strip()
    if not keyword:
        raise ToolInputError("argument 'keyword' is blank; pass part of a name or code")
    asset_class = _asset_class_arg(args)
    names = ctx.market.names
    return [
        {
            "ts_code": e.code,
            "name": e.name,
            "name_en": e.name_en,
            "former_names": ",".join(s.name for s in names.former(e.code, ctx.clock)) or None,
            "asset_class": e.asset_class,
            "exchange": e.exchange,
            "market": e.market,
            "list_date": e.list_date.strftime("%Y%m%d"),
        }
        for e in names.search(keyword, ctx.clock)
        if asset_class is None or e.asset_class == asset_class
    ]


# --------------------------------------------------------------------------- intraday


def _daily_bar_handler(asset_class: str) -> Any:
    module_name, tool_name = DAILY_BAR_TOOLS[asset_class]
    module = importlib.import_module(f"livesearch_pipeline.dataservice.tools.{module_name}")
    spec = next((t for t in module.TOOLS if t.name == tool_name), None)
    if spec is None:
        raise RuntimeError(f"daily-bar tool {tool_name!r} is missing from tools/{module_name}.py")
    return spec.handler


def realtime_quote(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    entity = _entity(ctx, args["ts_code"])
    handler = _daily_bar_handler(entity.asset_class)
    window = {"ts_code": entity.code, "start_date": ctx.clock - dt.timedelta(days=QUOTE_LOOKBACK_DAYS), "end_date": ctx.clock}
    today = ctx.clock.strftime("%Y%m%d")
    bars = [bar for bar in handler(ctx, window) if bar["trade_date"] <= today]
    if not bars:
        return []
    bar = bars[0]  # handlers return newest first
    price = bar["close"]
    return [
        {
            "ts_code": entity.code,
            "name": ctx.market.names.spell_on(entity.code, ctx.clock).name,
            "date": bar["trade_date"],
            "time": CLOSE_TIME[entity.calendar],
            "price": price,
            "open": bar["open"],
            "high": bar["high"],
            "low": bar["low"],
            "pre_close": bar["pre_close"],
            "volume": bar.get("vol"),
            "amount": bar.get("amount"),
            "bid": round(price - 0.01, 2),
            "ask": round(price + 0.01, 2),
        }
    ]


# --------------------------------------------------------------------------- clock and visibility


def system_clock(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    record: dict[str, Any] = {"today": ctx.clock.strftime("%Y%m%d"), "weekday": ctx.clock.strftime("%A")}
    for name in CALENDARS:
        record[f"last_session_{name.lower()}"] = session_on_or_before(name, ctx.clock).strftime("%Y%m%d")
    return [record]


def entity_visibility(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    if "ts_code" in args:
        entities = [_entity(ctx, args["ts_code"])]
    else:
        asset_class = _asset_class_arg(args)
        universe = ctx.market.universe
        entities = universe.of_class(asset_class) if asset_class else list(universe.entities)
        entities = sorted(entities, key=lambda e: e.code)
    return [
        {"ts_code": e.code, "name": ctx.market.names.spell_on(e.code, ctx.clock).name, "asset_class": e.asset_class,
         "visibility": e.visibility}
        for e in entities
    ]


# --------------------------------------------------------------------------- table rows

_TS_CODE = ParamSpec("ts_code", "str", "instrument code, e.g. 600519.SH, 00700.HK, a US ticker", required=True)
_ASSET_CLASS = ParamSpec("asset_class", "str", "restrict to one instrument class", enum=INSTRUMENT_CLASSES)


def _f(name: str, type_: str, description: str, unit: str | None = None) -> FieldMeta:
    return FieldMeta(name=name, type=type_, unit=unit, description=description)  # type: ignore[arg-type]


TOOLS: list[ToolSpec] = [
    ToolSpec(
        meta=ToolMeta(
            name="search",
            service="utility",
            description="Look up instruments by a fragment of their name (Chinese or English) or code.",
            asset_classes=list(INSTRUMENT_CLASSES),
            role="search",
            refresh_class="static",
            fields=[
                _f("ts_code", "code", "instrument code"),
                _f("name", "text", "display name in the market's language"),
                _f("name_en", "text", "English name"),
                _f("former_names", "text", "earlier short names of the company, newest first, comma separated (empty: none)"),
                _f("asset_class", "text", "instrument class"),
                _f("exchange", "text", "listing exchange or publisher"),
                _f("market", "text", "market board"),
                _f("list_date", "date", "listing date, YYYYMMDD"),
            ],
        ),
        params=(ParamSpec("keyword", "str", "part of a name or code", required=True), _ASSET_CLASS),
        handler=search,
        extra={"default_limit": 20, "max_limit": 200},
    ),
    ToolSpec(
        meta=ToolMeta(
            name="realtime_quote",
            service="utility",
            description="Real-time quote snapshot of an instrument (latest session, at the exchange close).",
            asset_classes=list(INSTRUMENT_CLASSES),
            role="intraday",
            entity_param="ts_code",
            fields=[
                _f("ts_code", "code", "instrument code"),
                _f("name", "text", "display name"),
                _f("date", "date", "session date, YYYYMMDD"),
                _f("time", "text", "snapshot time, HH:MM:SS exchange local time"),
                _f("price", "number", "last price"),
                _f("open", "number", "opening price"),
                _f("high", "number", "session high"),
                _f("low", "number", "session low"),
                _f("pre_close", "number", "previous session close"),
                _f("volume", "number", "volume in the daily bar's unit"),
                _f("amount", "number", "turnover in the daily bar's unit"),
                _f("bid", "number", "best bid"),
                _f("ask", "number", "best ask"),
            ],
        ),
        params=(_TS_CODE,),
        handler=realtime_quote,
    ),
    ToolSpec(
        meta=ToolMeta(
            name="system_clock",
            service="utility",
            description="The data service's current date and the last trading session of each exchange.",
            asset_classes=["market"],
            role="utility",
            fields=[
                _f("today", "date", "service date, YYYYMMDD"),
                _f("weekday", "text", "day of the week"),
                _f("last_session_xshg", "date", "last Shanghai/Shenzhen session on or before today"),
                _f("last_session_xhkg", "date", "last Hong Kong session on or before today"),
                _f("last_session_xnys", "date", "last New York session on or before today"),
            ],
        ),
        params=(),
        handler=system_clock,
    ),
    ToolSpec(
        meta=ToolMeta(
            name="entity_visibility",
            service="utility",
            description="Web-visibility level of instruments, 0 (obscure) to 10 (household name).",
            asset_classes=list(INSTRUMENT_CLASSES),
            role="utility",
            entity_param="ts_code",
            refresh_class="static",
            fields=[
                _f("ts_code", "code", "instrument code"),
                _f("name", "text", "display name"),
                _f("asset_class", "text", "instrument class"),
                _f("visibility", "integer", "web-visibility level 0..10"),
            ],
        ),
        params=(
            ParamSpec("ts_code", "str", "instrument code (omit to list every instrument)"),
            _ASSET_CLASS,
        ),
        handler=entity_visibility,
    ),
]
