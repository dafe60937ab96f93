"""Families anchored on a company's periodic reports: the growth of a statement figure
(`growth_period`, `growth_year`), a ratio of two figures of one report (`margin`), the return
since the latest report's announcement (`since_report`) and the highest close since then, the
stock named as people name it (`named_high`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from livesearch_pipeline.construction.families.base import (
    PERCENT,
    RATIO_PERCENT,
    STATEMENT_TOOLS,
    YMD,
    DraftInputs,
    Family,
    FamilyDraft,
    answer_format,
    first_number,
    gold_tools,
    handle,
    latest,
    nouns,
    subject,
)
from livesearch_pipeline.construction.formats import ask_zh, unit_phrase_en
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.core.catalog import Catalog, ToolMeta
from livesearch_pipeline.core.lexicon import Lexicon
from livesearch_pipeline.core.models import Call, Combine, DateSpec, Extractor, Program, Selection

GROWTH_FIELDS = ("revenue", "n_income", "n_income_attr_p", "operate_profit")
# (name, numerator, denominator, EN, ZH): ratios of two fields of one report, in percent.
MARGINS = (
    ("net_margin", "n_income", "revenue", "net profit margin", "净利率"),
    ("operating_margin", "operate_profit", "revenue", "operating profit margin", "营业利润率"),
    ("rd_intensity", "rd_exp", "revenue", "R&D expense ratio", "研发费用率"),
)


def _statement_drafts(catalog: Catalog, entity: EntityInfo, records: Sequence[Mapping[str, Any]],
                      lookback: dict[str, DateSpec]) -> list[FamilyDraft]:
    pair = STATEMENT_TOOLS.get(entity.asset_class)
    tools = gold_tools(catalog, pair[0]) if pair else None
    if not tools or not records:
        return []
    tool = tools[0]
    call = Call(id="c1", tool=tool.name, args={tool.entity_param: entity.code}, dates=lookback)
    key = tool.time_key
    out = []
    for name in GROWTH_FIELDS:
        f = tool.field(name)
        if f is None or first_number(records, name) is None:
            continue
        growth = Extractor(**latest("c1", key, name).model_dump(), format=PERCENT,
                           combine=Combine(op="pct_difference", other=latest("c1", key, name, years_back=1)))
        out.append(FamilyDraft(Program(calls=[call], extract=growth), entity, tool, f, "growth_period"))
        if tool.field("end_type") is not None:
            # The latest annual report: the record of the last completed year, if published.
            year_end = DateSpec(period="year", periods_back=0, fmt=YMD)
            annual = dict(anchor=year_end, where={"end_type": "4"})
            growth_y = Extractor(**latest("c1", key, name, **annual).model_dump(), format=PERCENT,
                                 combine=Combine(op="pct_difference",
                                                 other=latest("c1", key, name, years_back=1, **annual)))
            out.append(FamilyDraft(Program(calls=[call], extract=growth_y), entity, tool, f, "growth_year"))
    for name, num, den, _, _ in MARGINS:
        f, g = tool.field(num), tool.field(den)
        if f is None or g is None or first_number(records, num) is None or not first_number(records, den):
            continue
        margin = Extractor(**latest("c1", key, num).model_dump(), format=RATIO_PERCENT,
                           combine=Combine(op="ratio", other=latest("c1", key, den)))
        out.append(FamilyDraft(Program(calls=[call], extract=margin), entity, tool, f, f"margin:{name}"))
    return out


def _since_report_calls(catalog: Catalog, entity: EntityInfo,
                        lookback: dict[str, DateSpec]) -> tuple[ToolMeta, list[Call], Selection] | None:
    """The calls of the window since the latest report: the statement (c1) and the stock's bars from
    that report's announcement to D (c2, `start_date` read from c1); with the bar tool and the
    selection of every bar of c2. None when the entity's class has no statement/bar pair."""
    pair = STATEMENT_TOOLS.get(entity.asset_class)
    tools = gold_tools(catalog, *pair) if pair else None
    if not tools or not entity.calendar:
        return None
    statement, bar = tools
    c1 = Call(id="c1", tool=statement.name, args={statement.entity_param: entity.code}, dates=lookback)
    announced = latest("c1", statement.time_key, "ann_date")
    end = next(p for p in bar.date_params if p.role == "end")
    c2 = Call(id="c2", tool=bar.name, args={bar.entity_param: entity.code}, refs={"start_date": announced},
              dates={end.name: DateSpec(sessions_back=0, calendar=entity.calendar, fmt=end.fmt)})
    return bar, [c1, c2], Selection(mode="all", key=bar.time_key, key_fmt=YMD)


def _since_report_drafts(catalog: Catalog, entity: EntityInfo, lookback: dict[str, DateSpec]) -> list[FamilyDraft]:
    found = _since_report_calls(catalog, entity, lookback)
    if found is None:
        return []
    bar, calls, every_bar = found
    ex = Extractor(call="c2", select=every_bar, field="close", aggregate="pct_change", format=PERCENT)
    return [FamilyDraft(Program(calls=calls, extract=ex), entity, bar, bar.field("close"), "since_report",
                        aggregate="pct_change")]


def _named_high_drafts(catalog: Catalog, entity: EntityInfo, lookback: dict[str, DateSpec],
                       how: str) -> list[FamilyDraft]:
    """The highest close since the announcement of the latest report, the stock named by `how`
    alone ("name" or "ticker"): the calls of `since_report`, another reading of them."""
    found = _since_report_calls(catalog, entity, lookback)
    if found is None:
        return []
    bar, calls, every_bar = found
    f = bar.field("close")
    ex = Extractor(call="c2", select=every_bar, field="close", aggregate="max", format=answer_format(bar, f, 10.0))
    return [FamilyDraft(Program(calls=calls, extract=ex), entity, bar, f, f"named_high:{how}", aggregate="max")]


def draft(inputs: DraftInputs) -> None:
    """Per statement tool and covered entity with a statement: its growth and margins, the return
    since its latest report, and (when the stock can be named alone) the highest close since."""
    catalog, handles = inputs.catalog, inputs.handles
    for statement, _ in STATEMENT_TOOLS.values():
        tool = catalog.get(statement)
        if tool is None:
            continue
        for e in inputs.entities(statement):
            records = inputs.explored.get((statement, e.code), [])
            if records:
                inputs.add(_statement_drafts, catalog, e, records, inputs.lookback_of(tool, e))
                inputs.add(_since_report_drafts, catalog, e, inputs.lookback_of(tool, e))
                if handles and e.code in handles:
                    inputs.add(_named_high_drafts, catalog, e, inputs.lookback_of(tool, e), handles[e.code])


def margin_of(param: str) -> tuple[tuple[str, str], str]:
    """((EN, ZH) name of the margin, its denominator field) of a `margin:<param>` family."""
    for name, _, den, en, zh in MARGINS:
        if name == param:
            return (en, zh), den
    raise ValueError(f"unknown margin {param!r}")


def question_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    noun, _ = nouns(c, lexicon)
    if name == "growth_period":
        # Growth, which may be negative: no "grew" (issue 40).
        return (f"For {subj}, what was the year-on-year growth of the year-to-date {noun} of its most recently "
                f"reported period over the same period a year earlier{unit}?")
    if name == "growth_year":
        return (f"For {subj}, what was the growth of the {noun} in its most recent annual report over the "
                f"fiscal year before{unit}?")
    if name == "margin":
        label, den = margin_of(param)
        num_en, _ = nouns(c, lexicon)
        den_en, _ = nouns(c, lexicon, den)
        return (f"For {subj}, what was the {label[0]} in its most recently reported period (year to date), "
                f"that is its {num_en} divided by its {den_en}{unit}?")
    if name == "since_report":
        # A report's date is its announcement date (ann_date, conventions.py).
        return (f"By what percentage has the {noun} of {subj} changed from the close on the day its most recent "
                f"financial report was announced, or the first trading day after it, to the most recent trading day{unit}?")
    if name == "named_high":
        return (f"What was the highest {noun} of {handle(c, param)} since the day its most recent financial report "
                f"was announced, counting that day{unit}?")
    raise ValueError(f"{c.qid}: unknown question family {name!r}")


def question_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    ask = ask_zh(c.program.extract.format)
    _, subj = subject(c)
    _, noun = nouns(c, lexicon)
    if name == "growth_period":
        return f"{subj}最近一期已披露财报（年初至报告期末）的{noun}同比增长率{ask}"
    if name == "growth_year":
        return f"{subj}最近一期年度报告的{noun}较上一财年的增长率{ask}"
    if name == "margin":
        label, den = margin_of(param)
        _, den_zh = nouns(c, lexicon, den)
        return f"{subj}最近一期已披露财报（年初至报告期末）的{label[1]}（{noun}除以{den_zh}）{ask}"
    if name == "since_report":
        return f"{subj}自最近一期财报公告当日或其后首个交易日的收盘至最近一个交易日收盘，{noun}的涨跌幅{ask}"
    if name == "named_high":
        return f"{handle(c, param)}自最近一期财报公告当日起至最近一个交易日的最高{noun}{ask}"
    raise ValueError(f"{c.qid}: no Chinese text for question family {name!r}")


SPEC = Family(
    names=("growth_period", "growth_year", "margin", "since_report", "named_high"),
    draft=draft, question_en=question_en, question_zh=question_zh,
    tools={"cn_equity": ("income", "daily"), "hk_equity": ("hk_income", "hk_daily"),
           "us_equity": ("us_income", "us_daily")},
    where_forms={("end_type", "4"): ("annual report", "年度报告")},
)
