"""A small catalog table for server/client tests that must not depend on the full market."""

from __future__ import annotations

import datetime as dt
from typing import Any

from livesearch_pipeline.core.calendars import sessions_between
from livesearch_pipeline.core.catalog import DateParamMeta, FieldMeta, ToolMeta
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec

TOY_CODES = ("600001.SH", "000002.SZ")
CLOCK = dt.date(2026, 1, 9)  # a Friday; 2026-01-01/02 are XSHG holidays


def _close(code: str, day: dt.date) -> float:
    return round(10 + (day.toordinal() % 97) / 10 + TOY_CODES.index(code), 2)


def toy_daily(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args["ts_code"]
    if code not in TOY_CODES:
        raise ToolInputError(f"unknown ts_code {code!r}; try the search tool")
    end = args.get("end_date", ctx.clock)
    start = args.get("start_date", end - dt.timedelta(days=30))
    days = sessions_between("XSHG", start, end)
    records = []
    for prev, day in zip([None, *days], days):
        close = _close(code, day)
        pre = _close(code, prev) if prev else close
        records.append({"ts_code": code, "trade_date": day.strftime("%Y%m%d"), "close": close, "pre_close": pre})
    return records[::-1]


def toy_leaky(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    """Returns records after the clock on purpose: the server must drop them."""
    return [{"day": (ctx.clock + dt.timedelta(days=d)).strftime("%Y%m%d"), "value": float(d)} for d in range(3, -4, -1)]


def toy_monthly(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    start, end = args.get("start_m", dt.date(2025, 6, 1)), args.get("end_m", dt.date(2026, 3, 1))
    months = []
    y, m = end.year, end.month
    while (y, m) >= (start.year, start.month):
        months.append({"month": f"{y}{m:02d}", "cpi": 0.1 * m, "n": m})
        y, m = (y, m - 1) if m > 1 else (y - 1, 12)
    return months


def toy_broken(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    mode = args.get("mode", "raise")
    if mode == "raise":
        raise ZeroDivisionError("division by zero in the toy model")
    if mode == "nan":
        return [{"x": float("nan")}]
    return [{"x": 1.0, "surprise": 2}]


def _meta(name: str, fields: list[FieldMeta], **kw: Any) -> ToolMeta:
    base = {"service": "cn_quotes", "description": f"toy {name}", "asset_classes": ["cn_equity"], "role": "data"}
    return ToolMeta(name=name, fields=fields, **{**base, **kw})


F = FieldMeta
TOY_SPECS: list[ToolSpec] = [
    ToolSpec(
        meta=_meta(
            "toy_daily",
            [
                F(name="ts_code", type="code", description="code"),
                F(name="trade_date", type="date", description="session"),
                F(name="close", type="number", unit="CNY", description="close"),
                F(name="pre_close", type="number", unit="CNY", description="previous close"),
            ],
            entity_param="ts_code",
            date_params=[
                DateParamMeta(name="start_date", fmt="%Y%m%d", role="start"),
                DateParamMeta(name="end_date", fmt="%Y%m%d", role="end"),
            ],
            time_key="trade_date",
            time_key_fmt="%Y%m%d",
            calendar="XSHG",
        ),
        params=(
            ParamSpec("ts_code", "str", "code", required=True),
            ParamSpec("start_date", "date", "window start", fmt="%Y%m%d"),
            ParamSpec("end_date", "date", "window end", fmt="%Y%m%d"),
            ParamSpec("adj", "str", "adjustment", enum=("qfq", "hfq")),
        ),
        handler=toy_daily,
    ),
    ToolSpec(
        meta=_meta(
            "toy_leaky",
            [F(name="day", type="date", description="day"), F(name="value", type="number", description="v")],
            time_key="day",
            time_key_fmt="%Y%m%d",
        ),
        params=(),
        handler=toy_leaky,
    ),
    ToolSpec(
        meta=_meta(
            "toy_monthly",
            [F(name="month", type="text", description="month"), F(name="cpi", type="number", description="cpi"),
             F(name="n", type="integer", description="n")],
            service="macro",
            asset_classes=["macro"],
            date_params=[DateParamMeta(name="start_m", fmt="YYYYMM", role="start"), DateParamMeta(name="end_m", fmt="YYYYMM", role="end")],
            time_key="month",
            time_key_fmt="YYYYMM",
            refresh_class="monthly",
        ),
        params=(ParamSpec("start_m", "month", "first month"), ParamSpec("end_m", "month", "last month")),
        handler=toy_monthly,
    ),
    ToolSpec(
        meta=_meta("toy_broken", [F(name="x", type="number", description="x")]),
        params=(ParamSpec("mode", "str", "how to fail", enum=("raise", "nan", "undeclared")),),
        handler=toy_broken,
    ),
]
