"""Small, explicit construction records for the construction tests (no service involved)."""

from __future__ import annotations

from livesearch_pipeline.construction.models import Candidate, CandidateFacts, EntityInfo
from livesearch_pipeline.core.catalog import Catalog, DateParamMeta, FieldMeta, ToolMeta
from livesearch_pipeline.core.models import (
    Call,
    DateSpec,
    Extractor,
    Format,
    MatchRule,
    Program,
    Provenance,
    Question,
    Selection,
)
from livesearch_pipeline.core.program import window_rows
from livesearch_pipeline.core.qid import compute_qid

YMD = "%Y%m%d"


def bar_tool(name: str = "bars", *, refresh_class: str = "daily", role: str = "data") -> ToolMeta:
    return ToolMeta(
        name=name, service="fake", description="Daily bars of a stock.", asset_classes=["cn_equity"],
        role=role, entity_param="ts_code",
        date_params=[DateParamMeta(name="start_date", fmt=YMD, role="start"),
                     DateParamMeta(name="end_date", fmt=YMD, role="end")],
        time_key="trade_date", time_key_fmt=YMD, refresh_class=refresh_class,
        fields=[FieldMeta(name="close", type="number", unit="CNY", description="closing price",
                          description_zh="收盘价")],
    )


def series_tool(name: str = "cpi") -> ToolMeta:
    return ToolMeta(
        name=name, service="fake", description="Consumer price index.", asset_classes=["macro"], role="data",
        date_params=[DateParamMeta(name="month", fmt="YYYYMM", role="point")], time_key="month",
        time_key_fmt="%Y%m", refresh_class="monthly",
        fields=[FieldMeta(name="yoy", type="number", unit="%", description="year-on-year change")],
    )


def utility_tool(name: str = "entity_visibility") -> ToolMeta:
    return ToolMeta(name=name, service="fake", description="Visibility scorer.", asset_classes=["cn_equity"],
                    role="utility")


def catalog_of(*tools: ToolMeta) -> Catalog:
    return Catalog(service="fake-service", tools=list(tools))


def entity(code: str, visibility: int, asset_class: str = "cn_equity") -> EntityInfo:
    return EntityInfo(code=code, name=f"Name {code}", asset_class=asset_class, visibility=visibility,
                      calendar="XSHG")


def bar_program(code: str, *, tool: str = "bars", aggregate: str | None = None, sessions: int = 10,
                fmt: Format | None = None) -> Program:
    # A change over N sessions reads N + 1 closes, every other aggregate N rows (core.program.window_rows).
    dates = {"start_date": DateSpec(sessions_back=window_rows(aggregate, sessions) - 1, calendar="XSHG", fmt=YMD),
             "end_date": DateSpec(sessions_back=0, calendar="XSHG", fmt=YMD)}
    mode = "all" if aggregate else "latest"
    return Program(
        calls=[Call(id="c1", tool=tool, args={"ts_code": code}, dates=dates)],
        extract=Extractor(call="c1", select=Selection(mode=mode, key="trade_date", key_fmt=YMD), field="close",
                          aggregate=aggregate,
                          format=fmt or Format(kind="number", decimals=2, unit="CNY")),
    )


def candidate(code: str = "600519.SH", *, anchor: str = "latest", aggregate: str | None = None,
              tier: str = "T1", asset_class: str = "cn_equity", visibility: int = 10,
              fmt: Format | None = None, observed_value: float = 1688.5) -> Candidate:
    sessions = int(anchor.split(":")[1]) if anchor.startswith("window:") else 10
    program = bar_program(code, aggregate=aggregate, sessions=sessions, fmt=fmt)
    return Candidate(
        qid=compute_qid(program, code), signature=f"sig-{anchor}-{aggregate}", tier=tier, refresh_class="daily",
        asset_class=asset_class, entity=code, entity_name=f"Name {code}", visibility=visibility, program=program,
        facts=CandidateFacts(
            tool="bars", tool_description="Daily bars of a stock.", field="close",
            field_description="closing price", field_description_zh="收盘价", field_unit="CNY", anchor=anchor,
            aggregate=aggregate, calendar="XSHG", observed_value=observed_value,
            observed_answer=f"{observed_value:.2f}",
        ),
    )


def question(code: str, *, signature: str, visibility: int, tool: str = "bars", tier: str = "T1",
             sessions: int = 10) -> Question:
    program = bar_program(code, tool=tool, sessions=sessions)
    return Question(
        qid=compute_qid(program, code), question=f"What was the closing price of {code}?", program=program,
        match=MatchRule(rule="approx", unit="CNY", decimals=2), refresh_class="daily", tier=tier,
        asset_class="cn_equity", entity=code, entity_name=f"Name {code}", visibility=visibility,
        signature=signature, provenance=Provenance(verbalizer="template"),
    )
