"""Families that resolve a stock first: a fund's largest holding (`top_holding`) or an index's
heaviest constituent (`top_constituent`), then that stock's figures on the most recent trading
day; and a fund's largest holding's industry index, then that index's return
(`holding_industry`, three dependent calls).
"""

from __future__ import annotations

from livesearch_pipeline.construction.families.base import (
    LATEST_SESSIONS,
    PERCENT,
    RESOLVED_SAMPLES,
    YMD,
    DraftInputs,
    Family,
    FamilyDraft,
    answer_format,
    latest,
    nouns,
    return_window,
    session_window,
    sessions_spanned,
    subject,
)
from livesearch_pipeline.construction.formats import ask_zh, unit_phrase_en
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.core.catalog import Catalog, ToolMeta
from livesearch_pipeline.core.lexicon import Lexicon
from livesearch_pipeline.core.models import Call, DateSpec, Extractor, Program, Selection, ValueRef

# The stock a resolution lands on: its daily figures (tool, field).
RESOLVED_FIELDS = (("daily", "close"), ("daily", "pct_chg"), ("daily", "amount"),
                   ("daily_basic", "turnover_rate"), ("daily_basic", "total_mv"))
# Three steps: a fund's largest holding, that stock's industry index, the index's return.
HOLDING_INDUSTRY_WINDOWS = (5, 20, 60)
# (first tool, measure ranked, series answered, family)
RESOLUTIONS = (("fund_portfolio", "mkv", "symbol", "top_holding"),
               ("index_weight", "weight", "con_code", "top_constituent"))


def _resolution_drafts(catalog: Catalog, entity: EntityInfo, first: ToolMeta, lookback: dict[str, DateSpec],
                       measure: str, series: str, family: str) -> list[FamilyDraft]:
    """The stock that ranks first by `measure` among the series of `first`'s latest record set,
    then its figures on the most recent trading day."""
    c1 = Call(id="c1", tool=first.name, args={first.entity_param: entity.code}, dates=lookback)
    top = ValueRef(call="c1", select=Selection(mode="latest", key=first.time_key, key_fmt=YMD), field=measure,
                   aggregate="argmax", arg_field=series)
    out = []
    for tool_name, name in RESOLVED_FIELDS:
        tool = catalog.get(tool_name)
        f = tool.field(name) if tool is not None and tool.defines_gold else None
        if f is None:
            continue
        c2 = Call(id="c2", tool=tool.name, refs={"ts_code": top}, dates=session_window(tool, "XSHG", LATEST_SESSIONS))
        ex = Extractor(**latest("c2", tool.time_key, name).model_dump(),
                       format=answer_format(tool, f, RESOLVED_SAMPLES.get(name, 10.0)))
        out.append(FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, tool, f, family))
    return out


def _holding_industry_drafts(catalog: Catalog, entity: EntityInfo, first: ToolMeta,
                             lookback: dict[str, DateSpec]) -> list[FamilyDraft]:
    """Three dependent calls: the fund's largest holding by market value in its latest report →
    the industry index that stock belongs to (`index_member` by the stock's code: one series,
    ToolMeta.one_series_by) → that index's return over the last N sessions (N + 1 closes)."""
    members, bars = catalog.get("index_member"), catalog.get("index_daily")
    if (members is None or bars is None or not members.defines_gold or not bars.defines_gold
            or "ts_code" not in members.one_series_by):
        return []
    c1 = Call(id="c1", tool=first.name, args={first.entity_param: entity.code}, dates=lookback)
    top = ValueRef(call="c1", select=Selection(mode="latest", key=first.time_key, key_fmt=YMD), field="mkv",
                   aggregate="argmax", arg_field="symbol")
    c2 = Call(id="c2", tool=members.name, refs={"ts_code": top})
    industry = ValueRef(call="c2", select=Selection(mode="latest", key=members.time_key, key_fmt=YMD),
                        field="index_code")
    out = []
    for n in HOLDING_INDUSTRY_WINDOWS:
        c3 = Call(id="c3", tool=bars.name, refs={bars.entity_param: industry},
                  dates=return_window(bars, "XSHG", n))
        ex = Extractor(call="c3", select=Selection(mode="all", key=bars.time_key, key_fmt=YMD), field="close",
                       aggregate="pct_change", format=PERCENT)
        out.append(FamilyDraft(Program(calls=[c1, c2, c3], extract=ex), entity, bars, bars.field("close"),
                               f"holding_industry:{n}", aggregate="pct_change"))
    return out


def draft(inputs: DraftInputs) -> None:
    """Per fund (index) whose latest portfolio (weights) was explored: the resolved stock's figures;
    for a fund, its largest holding's industry index's return too."""
    for first, measure, series, family in RESOLUTIONS:
        tool = inputs.catalog.get(first)
        if tool is None or not tool.defines_gold:
            continue
        for e in inputs.entities(first):
            if inputs.explored.get((first, e.code)):
                inputs.add(_resolution_drafts, inputs.catalog, e, tool, inputs.lookback_of(tool, e), measure, series,
                           family)
                if family == "top_holding":
                    inputs.add(_holding_industry_drafts, inputs.catalog, e, tool, inputs.lookback_of(tool, e))


def question_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    noun, _ = nouns(c, lexicon)
    if name == "top_holding":
        return (f"For the largest stock holding of {subj} by market value in its most recently published "
                f"portfolio, what was that stock's {noun} on the most recent trading day{unit}?")
    if name == "top_constituent":
        return (f"For the constituent of {subj} with the highest weight at its most recent rebalance, what "
                f"was that stock's {noun} on the most recent trading day{unit}?")
    if name == "holding_industry":
        k = sessions_spanned(c) or int(param)
        return (f"Take the largest stock holding of {subj} by market value in its most recently published "
                f"portfolio. By what percentage did the industry index that stock belongs to change from the close "
                f"{k} trading days before the most recent one to the most recent close{unit}?")
    raise ValueError(f"{c.qid}: unknown question family {name!r}")


def question_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    ask = ask_zh(c.program.extract.format)
    _, subj = subject(c)
    _, noun = nouns(c, lexicon)
    if name == "top_holding":
        return f"{subj}最近一期公布的持仓中市值最大的股票，最近一个交易日的{noun}{ask}"
    if name == "top_constituent":
        return f"{subj}最近一次调整权重后权重最大的成分股，最近一个交易日的{noun}{ask}"
    if name == "holding_industry":
        k = sessions_spanned(c) or int(param)
        return (f"{subj}最近一期公布的持仓中市值最大的股票，其所属行业指数自最近一个交易日之前第{k}个交易日收盘"
                f"至最近一个交易日收盘的涨跌幅{ask}")
    raise ValueError(f"{c.qid}: no Chinese text for question family {name!r}")


SPEC = Family(
    names=("top_holding", "top_constituent", "holding_industry"),
    draft=draft, question_en=question_en, question_zh=question_zh,
    tools={"fund": ("fund_portfolio",), "index": ("index_weight",)},
)
