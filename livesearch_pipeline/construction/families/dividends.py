"""Families anchored on a company's latest implemented dividend: the close on its ex-dividend date
(`exdate_close`), the return since that date (`since_exdate`) and its payout ratio against the
EPS of the period it pays for (`payout`).
"""

from __future__ import annotations

from livesearch_pipeline.construction.families.base import (
    IMPLEMENTED,
    PERCENT,
    RATIO_PERCENT,
    YMD,
    DraftInputs,
    Family,
    FamilyDraft,
    answer_format,
    gold_tools,
    latest,
    nouns,
    subject,
)
from livesearch_pipeline.construction.formats import ask_zh, unit_phrase_en
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.lexicon import Lexicon
from livesearch_pipeline.core.models import Call, Combine, DateSpec, Extractor, Program, Selection, ValueRef


def _dividend_drafts(catalog: Catalog, entity: EntityInfo) -> list[FamilyDraft]:
    tools = gold_tools(catalog, "dividend", "daily", "fina_indicator")
    if not tools or entity.asset_class != "cn_equity" or not entity.calendar:
        return []
    dividend, daily, indicator = tools
    c1 = Call(id="c1", tool="dividend", args={"ts_code": entity.code})
    done = Selection(mode="all", key=dividend.time_key, key_fmt=YMD, where={"div_proc": IMPLEMENTED})

    def last(fld: str) -> ValueRef:
        return ValueRef(call="c1", select=done, field=fld, aggregate="last")

    out = []
    close = daily.field("close")
    on_ex = Call(id="c2", tool="daily", args={"ts_code": entity.code}, refs={"trade_date": last("ex_date")})
    ex = Extractor(**latest("c2", "trade_date", "close").model_dump(), format=answer_format(daily, close, 10.0))
    out.append(FamilyDraft(Program(calls=[c1, on_ex], extract=ex), entity, daily, close, "exdate_close"))
    since = Call(id="c2", tool="daily", args={"ts_code": entity.code}, refs={"start_date": last("ex_date")},
                 dates={"end_date": DateSpec(sessions_back=0, calendar=entity.calendar, fmt=YMD)})
    ret = Extractor(call="c2", select=Selection(mode="all", key="trade_date", key_fmt=YMD), field="close",
                    aggregate="pct_change", format=PERCENT)
    out.append(FamilyDraft(Program(calls=[c1, since], extract=ret), entity, daily, close, "since_exdate",
                           aggregate="pct_change"))
    period = next((p for p in indicator.date_params if p.role == "period"), None)
    if period is not None and dividend.field("cash_div_tax") is not None:
        eps = Call(id="c2", tool="fina_indicator", args={"ts_code": entity.code}, refs={period.name: last("end_date")})
        payout = Extractor(call="c1", select=done, field="cash_div_tax", aggregate="last", format=RATIO_PERCENT,
                           combine=Combine(op="ratio", other=latest("c2", indicator.time_key, "eps")))
        out.append(FamilyDraft(Program(calls=[c1, eps], extract=payout), entity, dividend,
                               dividend.field("cash_div_tax"), "payout", aggregate="last"))
    return out


def draft(inputs: DraftInputs) -> None:
    """Per A-share with daily bars covered: its ex-date close, return since, payout ratio."""
    for e in inputs.entities("daily"):
        inputs.add(_dividend_drafts, inputs.catalog, e)


def question_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    noun, _ = nouns(c, lexicon)
    if name == "payout":
        return (f"For {subj}, what was the payout ratio of its most recently implemented cash dividend, that is "
                f"the pre-tax cash dividend per share divided by the basic EPS of the period it pays for{unit}?")
    if name == "exdate_close":
        return (f"What was the {noun} of {subj} on the ex-dividend date of its most recently implemented "
                f"dividend{unit}?")
    if name == "since_exdate":
        return (f"For {subj}, by what percentage did the {noun} change from the ex-dividend date of its most "
                f"recently implemented dividend to the most recent trading day{unit}?")
    raise ValueError(f"{c.qid}: unknown question family {name!r}")


def question_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    ask = ask_zh(c.program.extract.format)
    _, subj = subject(c)
    _, noun = nouns(c, lexicon)
    if name == "payout":
        return f"{subj}最近一次实施的现金分红的股利支付率（每股税前现金分红除以其所属报告期的基本每股收益）{ask}"
    if name == "exdate_close":
        return f"{subj}最近一次实施分红的除权除息日的{noun}{ask}"
    if name == "since_exdate":
        return f"{subj}自最近一次实施分红的除权除息日至最近一个交易日，{noun}的涨跌幅{ask}"
    raise ValueError(f"{c.qid}: no Chinese text for question family {name!r}")


SPEC = Family(
    names=("payout", "exdate_close", "since_exdate"),
    draft=draft, question_en=question_en, question_zh=question_zh,
    tools={"cn_equity": ("daily",)},
    where_forms={("div_proc", IMPLEMENTED): ("implemented", "实施")},
)
