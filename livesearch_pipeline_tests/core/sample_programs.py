"""A small tool catalog and program builders shared by the program, extract and qid tests."""

from __future__ import annotations

from typing import Any

from livesearch_pipeline.core.catalog import Catalog, DateParamMeta, FieldMeta, ToolMeta
from livesearch_pipeline.core.models import Program


def _fields(**types: str) -> list[FieldMeta]:
    return [FieldMeta(name=name, type=kind, description=name) for name, kind in types.items()]


CATALOG = Catalog(
    service="test-service",
    tools=[
        ToolMeta(
            name="daily", service="quotes", description="A-share daily bars", asset_classes=["cn_equity"],
            role="data", entity_param="ts_code",
            date_params=[
                DateParamMeta(name="trade_date", fmt="%Y%m%d", role="point"),
                DateParamMeta(name="start_date", fmt="%Y%m%d", role="start"),
                DateParamMeta(name="end_date", fmt="%Y%m%d", role="end"),
            ],
            time_key="trade_date", time_key_fmt="%Y%m%d", calendar="XSHG",
            fields=_fields(ts_code="code", trade_date="date", open="number", close="number",
                           vol="number", amount="number", name="text"),
        ),
        ToolMeta(
            name="cn_cpi", service="macro", description="China CPI", asset_classes=["macro"], role="data",
            date_params=[DateParamMeta(name="start_m", fmt="YYYYMM", role="start"),
                         DateParamMeta(name="end_m", fmt="YYYYMM", role="end")],
            time_key="month", time_key_fmt="YYYYMM", refresh_class="monthly",
            fields=_fields(month="text", nt_yoy="number"),
        ),
        ToolMeta(
            name="top10_holders", service="events", description="Top ten holders", asset_classes=["cn_equity"],
            role="data", entity_param="ts_code",
            date_params=[DateParamMeta(name="period", fmt="%Y%m%d", role="period")],
            time_key="end_date", time_key_fmt="%Y%m%d", refresh_class="quarterly",
            fields=_fields(ts_code="code", end_date="date", holder_name="text", hold_ratio="number", rank="integer"),
        ),
        ToolMeta(
            name="stock_basic", service="reference", description="Listing facts", asset_classes=["cn_equity"],
            role="data", entity_param="ts_code", refresh_class="static",
            fields=_fields(ts_code="code", name="text", list_date="date", industry="text"),
        ),
        ToolMeta(name="free_form", service="third", description="A tool without metadata of fields",
                 asset_classes=["market"], role="data"),
        ToolMeta(name="web_search", service="search", description="Web search", asset_classes=["market"],
                 role="search"),
        ToolMeta(name="stk_mins_live", service="quotes", description="Live minute bars",
                 asset_classes=["cn_equity"], role="intraday", entity_param="ts_code"),
        ToolMeta(name="clock", service="utility", description="Service clock", asset_classes=["market"],
                 role="utility"),
    ],
)


def daily_call(call_id: str = "c1", ts_code: str = "600519.SH", window: int = 19, **extra: Any) -> dict[str, Any]:
    return {
        "id": call_id, "tool": "daily", "args": {"ts_code": ts_code},
        "dates": {"start_date": {"sessions_back": window, "calendar": "XSHG"},
                  "end_date": {"sessions_back": 0, "calendar": "XSHG"}},
        **extra,
    }


def mean_close_program(ts_code: str = "600519.SH", window: int = 19) -> Program:
    return Program.model_validate({
        "calls": [daily_call(ts_code=ts_code, window=window)],
        "extract": {"call": "c1", "select": {"mode": "all", "key": "trade_date"}, "field": "close",
                    "aggregate": "mean", "format": {"kind": "number", "decimals": 2, "unit": "CNY"}},
    })


def program(calls: list[dict[str, Any]], extract: dict[str, Any]) -> Program:
    return Program.model_validate({"calls": calls, "extract": extract})


def extract(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"call": "c1", "select": {"mode": "latest", "key": "trade_date"}, "field": "close",
                            "format": {"kind": "number", "decimals": 2, "unit": "CNY"}}
    base.update(overrides)
    return base
