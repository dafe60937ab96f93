"""Families over an instrument's prices in one market or across two: the return adjusted with the
cumulative adjustment factor (`adj_return`), a Hong Kong or US figure converted into CNY at the
day's FX rates (`fx_convert`), an ETF's close against its published NAV (`price_to_nav`) and the
difference of two instruments' returns over the same sessions (`compare`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from livesearch_pipeline.construction.families.base import (
    ADJ_TOOLS,
    LATEST_SESSIONS,
    PERCENT,
    POINTS_GAP,
    YMD,
    DraftInputs,
    Family,
    FamilyDraft,
    answer_format,
    first_number,
    gold_tools,
    latest,
    nouns,
    other_names,
    return_window,
    session_window,
    sessions_spanned,
    subject,
)
from livesearch_pipeline.construction.formats import ask_zh, unit_phrase_en
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.lexicon import Lexicon
from livesearch_pipeline.core.models import Call, Combine, Extractor, Program, RecordJoin, Selection, ValueRef

ADJ_WINDOWS = (20, 60)
COMPARE_TOOLS = {"cn_equity": "daily", "hk_equity": "hk_daily", "us_equity": "us_daily",
                 "index": "index_daily", "fund": "fund_daily"}
COMPARE_WINDOWS = (5, 20, 60)
# Cross-market conversion: (tool, calendar, FX legs as (pair code, combine op)).
FX_TOOL = "fx_daily"
FX_FIELD = "bid_close"
FX_CONVERSIONS = {
    "hk_equity": ("hk_daily_adj", (("USDCNH.FXCM", "product"), ("USDHKD.FXCM", "ratio"))),
    "us_equity": ("us_daily_adj", (("USDCNH.FXCM", "product"),)),
}
FX_FIELDS = ("total_mv", "amount", "close")


# --------------------------------------------------------------------------- adj_return


def _adj_return_drafts(catalog: Catalog, entity: EntityInfo) -> list[FamilyDraft]:
    pair = ADJ_TOOLS.get(entity.asset_class)
    tools = gold_tools(catalog, *pair) if pair else None
    if not tools or not entity.calendar:
        return []
    bar, factor = tools
    out = []
    for n in ADJ_WINDOWS:
        c1 = Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code},
                  dates=return_window(bar, entity.calendar, n))
        c2 = Call(id="c2", tool=factor.name, args={factor.entity_param: entity.code},
                  dates=return_window(factor, entity.calendar, n))
        ex = Extractor(call="c1", select=Selection(mode="all", key=bar.time_key, key_fmt=YMD), field="close",
                       aggregate="pct_change", times=RecordJoin(call="c2", field="adj_factor"), format=PERCENT)
        out.append(FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, bar, bar.field("close"),
                               f"adj_return:{n}", aggregate="pct_change"))
    return out


def _draft_adj_return(inputs: DraftInputs) -> None:
    for bar, _ in ADJ_TOOLS.values():
        for e in inputs.entities(bar):
            inputs.add(_adj_return_drafts, inputs.catalog, e)


def _adj_return_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    what = "splits" if c.asset_class in ("hk_equity", "us_equity") else "splits and dividends"
    k = sessions_spanned(c)
    span = (f"from the close {k} trading days before the most recent one to the most recent close" if k
            else f"over the last {param} trading days, from the first close to the most recent one")
    return f"What was the return of {subj} {span}, adjusted for {what} with the cumulative adjustment factor{unit}?"


def _adj_return_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    ask = ask_zh(c.program.extract.format)
    _, subj = subject(c)
    k = sessions_spanned(c)
    start = f"最近一个交易日之前第{k}个交易日" if k else f"最近{param}个交易日的首日"
    return f"{subj}自{start}收盘至最近一个交易日收盘，按复权因子调整后的涨跌幅{ask}"


ADJ_RETURN = Family(names=("adj_return",), draft=_draft_adj_return, question_en=_adj_return_en,
                    question_zh=_adj_return_zh)


# --------------------------------------------------------------------------- fx_convert


def _fx_drafts(catalog: Catalog, entity: EntityInfo, records: Sequence[Mapping[str, Any]]) -> list[FamilyDraft]:
    plan = FX_CONVERSIONS.get(entity.asset_class)
    tools = gold_tools(catalog, plan[0], FX_TOOL) if plan else None
    if not tools or not entity.calendar:
        return []
    bar, fx = tools
    legs = plan[1]
    c1 = Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code},
              dates=session_window(bar, entity.calendar, LATEST_SESSIONS))
    day = latest("c1", bar.time_key, bar.time_key)
    point = next(p for p in fx.date_params if p.role == "point")
    c2 = Call(id="c2", tool=fx.name, refs={point.name: day})
    out = []
    for name in FX_FIELDS:
        f = bar.field(name)
        sample = first_number(records, name)
        if f is None or sample is None:
            continue
        steps: Combine | None = None
        for code, op in reversed(legs):
            steps = Combine(op=op, other=latest("c2", fx.time_key, FX_FIELD, where={"ts_code": code}), then=steps)
        # Roughly the value in CNY, for the scale word: 0.9 CNY per HKD, 7 CNY per USD.
        rate = 0.9 if entity.asset_class == "hk_equity" else 7.0
        ex = Extractor(**latest("c1", bar.time_key, name).model_dump(), combine=steps,
                       format=answer_format(bar, f, sample * rate, unit="CNY"))
        out.append(FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, bar, f, "fx_convert"))
    return out


def _draft_fx(inputs: DraftInputs) -> None:
    for bar, _ in FX_CONVERSIONS.values():
        for e in inputs.entities(bar):
            inputs.add(_fx_drafts, inputs.catalog, e, inputs.explored.get((bar, e.code), []))


def _fx_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    noun, _ = nouns(c, lexicon)
    rates = "USD/CNH and USD/HKD" if c.asset_class == "hk_equity" else "USD/CNH"
    market = "Hong Kong" if c.asset_class == "hk_equity" else "New York"
    return (f"What was the {noun} of {subj} on the most recent {market} trading day, converted into CNY "
            f"at that day's closing {rates} bid {'rates' if '/HKD' in rates else 'rate'}{unit}?")


FX_CONVERT = Family(names=("fx_convert",), draft=_draft_fx, question_en=_fx_en,
                    tools={"hk_equity": ("hk_daily_adj",), "us_equity": ("us_daily_adj",)})


# --------------------------------------------------------------------------- price_to_nav


def _price_to_nav_drafts(catalog: Catalog, entity: EntityInfo) -> list[FamilyDraft]:
    tools = gold_tools(catalog, "fund_nav", "fund_daily")
    if not tools or entity.asset_class != "fund":
        return []
    nav, bar = tools
    c1 = Call(id="c1", tool="fund_nav", args={"ts_code": entity.code},
              dates=session_window(nav, "XSHG", LATEST_SESSIONS))
    nav_day = latest("c1", nav.time_key, nav.time_key)
    c2 = Call(id="c2", tool="fund_daily", args={"ts_code": entity.code}, refs={"trade_date": nav_day})
    ex = Extractor(**latest("c2", bar.time_key, "close").model_dump(), format=PERCENT,
                   combine=Combine(op="pct_difference", other=latest("c1", nav.time_key, "unit_nav")))
    return [FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, bar, bar.field("close"), "price_to_nav")]


def _draft_price_to_nav(inputs: DraftInputs) -> None:
    seen: set[str] = set()
    for e in [*inputs.entities("fund_nav"), *inputs.entities("fund_daily")]:
        if e.code not in seen:
            seen.add(e.code)
            inputs.add(_price_to_nav_drafts, inputs.catalog, e)


def _price_to_nav_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    noun, _ = nouns(c, lexicon)
    return (f"What was the premium of the {noun} of {subj} over its NAV per unit on the most recent trading "
            f"day whose NAV has been published, a discount being negative{unit}?")


def _price_to_nav_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    ask = ask_zh(c.program.extract.format)
    _, subj = subject(c)
    _, noun = nouns(c, lexicon)
    return f"{subj}最近一个已公布净值的交易日，{noun}相对单位净值的溢价率{ask.replace('？', '？折价以负数表示，', 1)}"


PRICE_TO_NAV = Family(names=("price_to_nav",), draft=_draft_price_to_nav, question_en=_price_to_nav_en,
                      question_zh=_price_to_nav_zh, tools={"fund": ("fund_nav", "fund_daily")})


# --------------------------------------------------------------------------- compare


def compare_family_drafts(catalog: Catalog, pairs: Sequence[tuple[EntityInfo, EntityInfo]]) -> list[FamilyDraft]:
    """Two instruments of one class over the same sessions: the difference of their returns."""
    out = []
    for a, b in pairs:
        tool = catalog.get(COMPARE_TOOLS.get(a.asset_class, ""))
        if tool is None or not a.calendar or a.calendar != b.calendar:
            continue
        for n in COMPARE_WINDOWS:
            dates = return_window(tool, a.calendar, n)
            select = Selection(mode="all", key=tool.time_key, key_fmt=YMD)
            calls = [Call(id="c1", tool=tool.name, args={tool.entity_param: a.code}, dates=dates),
                     Call(id="c2", tool=tool.name, args={tool.entity_param: b.code}, dates=dates)]
            ex = Extractor(call="c1", select=select, field="close", aggregate="pct_change", format=POINTS_GAP,
                           combine=Combine(op="difference", other=ValueRef(call="c2", select=select, field="close",
                                                                           aggregate="pct_change")))
            out.append(FamilyDraft(Program(calls=calls, extract=ex), a, tool, tool.field("close"), f"compare:{n}",
                                   other=b, aggregate="pct_change"))
    return out


def _compare_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    other, _ = other_names(c)
    k = sessions_spanned(c) or int(param)
    # A signed difference, first minus second, with what its sign means: no sign presupposed (issue 40).
    return (f"What was the return of {subj} minus the return of {other} from the close {k} trading days before the "
            f"most recent one to the most recent close{unit}? A negative value means the first returned less.")


def _compare_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    ask = ask_zh(c.program.extract.format)
    _, subj = subject(c)
    _, other = other_names(c)
    k = sessions_spanned(c) or int(param)
    return (f"自最近一个交易日之前第{k}个交易日收盘至最近一个交易日收盘，{subj}的涨跌幅减去{other}的涨跌幅"
            f"{ask}为负表示前者涨幅较低。")


# Drafted by enumeration, over pairs of the instruments it covered (`compare_family_drafts`).
COMPARE = Family(names=("compare",), draft=None, question_en=_compare_en, question_zh=_compare_zh)
