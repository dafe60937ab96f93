"""Stage 5: candidates become questions — text, proposed rule, clamp, date gate.

Two verbalizers share one pipeline:
- the deterministic **template** verbalizer (no LLM; recorded as `template` in provenance);
- the **LLM** verbalizer (litellm), which may also reject a candidate.
Both write from the reviewed field lexicon (core/lexicon.py): the template the way an
analyst asks — entity first by name and code, the quantity in the lexicon's words, the relative
time, then one unit stated once with its precision (construction/formats.py) — and the LLM from
a prompt carrying the lexicon entry and professional examples. Whatever writes the text, both
texts pass the date gate (core.dategate) and the text lint (construction/lint.py), and the rule
is clamped mechanically (core.matching.clamp_rule), or the candidate lands in the rejects table.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from pydantic import ValidationError

from livesearch_pipeline.construction import families
from livesearch_pipeline.construction.families.base import other_names, subject_names
from livesearch_pipeline.construction.conventions import (
    SEGMENT_TOOLS,
    SEGMENT_WHEN,
    SERIES_NAMES,
    WEEKDAYS,
    Days,
    days_of,
    minute_before,
    program_calendar,
    with_conventions,
)
from livesearch_pipeline.construction.formats import ask_zh, proposed_rule, unit_phrase_en, zh_unit
from livesearch_pipeline.core.lexicon import Lexicon, LexiconError, load_lexicon
from livesearch_pipeline.construction.lint import LintContext, lint_question
from livesearch_pipeline.construction.models import Candidate, RejectRow
from livesearch_pipeline.construction.prompts import VERBALIZER_SYSTEM
from livesearch_pipeline.core.catalog import Catalog, unit_phrase
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.matching import clamp_rule
from livesearch_pipeline.core.models import MatchRule, Program, Provenance, Question, StrictModel

TEMPLATE = "template"
# Instruments of the Chinese market always get a Chinese text; series of it that are not
# instruments (China's statistics, Chinese rates, A-share market totals, yuan FX pairs) get one
# when the lexicon lists them (`chinese_market` in dataservice/lexicon.yaml; see has_chinese_text).
ZH_CLASSES = frozenset({"cn_equity", "index", "fund"})

# Statement tools whose flows accumulate from the start of the fiscal year to the period end.
YTD_TOOLS = frozenset({
    "income", "cashflow", "fina_indicator", "fina_mainbz", "hk_income", "hk_cashflow",
    "hk_fina_indicator", "us_income", "us_cashflow", "us_fina_indicator",
})
# Event tools: a stock has a record only on the days the event happened, so "the most recent
# trading day" would be wrong; the question names the event instead.
EVENT_WHEN = {
    "top_list": ("on the most recent day it appeared on the exchange's top-traders list", "最近一次登上龙虎榜当日"),
    "top_inst": ("on the most recent day it appeared on the exchange's top-traders list", "最近一次登上龙虎榜当日"),
    "hsgt_top10": ("on the most recent day it ranked among the ten most-traded Stock Connect stocks",
                   "最近一次进入沪深港通十大成交股当日"),
    "block_trade": ("in its most recent block trade", "最近一笔大宗交易中"),
    "limit_list": ("on the most recent day it closed at a price limit", "最近一次涨跌停当日"),
    "suspend_d": ("in its most recent suspension record", "最近一次停复牌记录中"),
    # Published on one day a month: the latest record is the latest publication, not the day's.
    "shibor_lpr": ("as most recently published", "最近一次公布时"),
    # Weights are published at a rebalance (a month's last session), not every session: the
    # latest record is the latest rebalance's, as the screens and chains over them say.
    "index_weight": ("at the index's most recent rebalance", "最近一次权重调整时"),
    # An audit covers a fiscal year: its fees and opinion are of the year, not a balance at its end.
    "fina_audit": ("for its most recently audited fiscal year", "最近一个已审计会计年度"),
}
EXCHANGES = {
    "SSE": ("Shanghai Stock Exchange", "上交所"), "SH": ("Shanghai Stock Exchange", "上交所"),
    "SZSE": ("Shenzhen Stock Exchange", "深交所"), "SZ": ("Shenzhen Stock Exchange", "深交所"),
    "BSE": ("Beijing Stock Exchange", "北交所"), "HKEX": ("Hong Kong Stock Exchange", "港交所"),
    "NYSE": ("New York Stock Exchange", "纽交所"), "NASDAQ": ("Nasdaq", "纳斯达克"),
}


class VerbalizationReply(StrictModel):
    """The JSON object the LLM verbalizer must return."""

    keep: bool
    reason: str
    question: str | None = None
    question_zh: str | None = None
    match: MatchRule | None = None


@dataclass(frozen=True)
class Verbalized:
    candidate: Candidate
    question: str
    question_zh: str | None
    proposed: MatchRule
    verbalizer: str
    # Set when no text could be written (e.g. a field missing from the lexicon): finalize turns
    # it into a reject with this reason instead of a question.
    problem: str | None = None


# --------------------------------------------------------------------------- relative periods

PERIOD_EN = {"month": "calendar month", "quarter": "calendar quarter", "half": "half-year", "year": "calendar year"}
PERIOD_ZH = {"month": "月份", "quarter": "季度", "half": "半年度", "year": "年度"}


def _period_parts(rest: str) -> tuple[str, int]:
    name, _, back = rest.partition(":")
    if name not in PERIOD_EN or not back.isdigit():
        raise ValueError(f"malformed period anchor {rest!r}; expected <month|quarter|half|year>:<periods_back>")
    return name, int(back)


def period_phrase_en(rest: str) -> str:
    """The completed period a `period:<name>:<n>` anchor pins (n=0: the most recent one)."""
    name, back = _period_parts(rest)
    unit = PERIOD_EN[name]
    if back == 0:
        return f"the most recently completed {unit}"
    if back == 1:
        return f"the {unit} before the most recently completed one"
    return f"the {unit} {back} {unit}s before the most recently completed one"


def period_phrase_zh(rest: str) -> str:
    name, back = _period_parts(rest)
    unit = PERIOD_ZH[name]
    if back == 0:
        return f"最近一个已结束的{unit}"
    if back == 1:
        return f"最近一个已结束{unit}的上一个{unit}"
    return f"最近一个已结束{unit}之前的第{back}个{unit}"


def pinned_period(c: Candidate) -> str | None:
    """`<name>:<periods_back>` when the extracted call is pinned to one completed period."""
    call = next(call for call in c.program.calls if call.id == c.program.extract.call)
    spec = next((s for s in call.dates.values() if s.period is not None), None)
    return None if spec is None else f"{spec.period}:{spec.periods_back}"


# --------------------------------------------------------------------------- parts of a text


@dataclass(frozen=True)
class _Parts:
    """What every template needs, in both languages."""

    noun_en: str
    noun_zh: str
    plural: bool
    subject_en: str | None  # "Hengyu Electric (600123.SH)", "USD/CNH", or None for a series tool
    subject_zh: str | None
    series_en: str  # " for the shareholder “X”", " on the Shanghai Stock Exchange", or ""
    series_zh: str
    freq: str | None  # "week" / "month" for weekly and monthly bars
    fx_pair: bool = False  # the subject is an FX pair ("USD/CNH", 美元兑离岸人民币)
    # How the text counts days: named when the subject implies no calendar (a rate, a statistic,
    # a market total, an FX pair: conventions.py).
    days: Days = days_of(None)


def _fx_pair(code: str) -> str | None:
    head = code.split(".")[0]
    return f"{head[:3]}/{head[3:]}" if len(head) == 6 and head.isalpha() and head.isupper() else None


def _pair_zh(pair: str, lexicon: Lexicon) -> str | None:
    """"美元兑离岸人民币" for "USD/CNH", from the lexicon's currency names."""
    base, _, quote = pair.partition("/")
    return lexicon.pair_zh(base, quote)


def _pairs(c: Candidate) -> list[str]:
    """The FX pairs ("USD/CNH") the program selects by code."""
    select = c.program.extract.select
    codes = [v for k, v in select.where.items() if k == "ts_code"]
    if select.mode == "match" and select.key == "ts_code" and select.value is not None:
        codes.append(select.value)
    return [p for p in (_fx_pair(str(code)) for code in codes) if p is not None]


def has_chinese_text(c: Candidate, lexicon: Lexicon | None = None) -> bool:
    """Whether the candidate is about the Chinese market and so gets a Chinese text too: a stock,
    index or fund of it (ZH_CLASSES), a family's candidate of a class it writes Chinese for
    (`Family.zh_classes`), a series tool the lexicon lists as Chinese-market, or an FX
    pair with a yuan leg."""
    if c.asset_class in ZH_CLASSES:
        return True
    family = families.family_of(c)
    if family is not None and family[0] in families.BY_NAME and c.asset_class in families.BY_NAME[family[0]].zh_classes:
        return True  # a family about the Chinese market beyond it (a Hong Kong company reporting in CNY)
    lexicon = lexicon or load_lexicon()
    market = lexicon.chinese_market
    if c.facts.tool in market.tools:
        return True
    return any(set(p.split("/")) & set(market.currencies) for p in _pairs(c))


def _series_phrase(key: str, value: str, lexicon: Lexicon, tool: str) -> tuple[str, str]:
    """How a professional names the series `key = value` selects, in English and Chinese."""
    if key in ("exchange_id", "exchange", "market") and value in EXCHANGES:
        en, zh = EXCHANGES[value]
        return f" on the {en}", f"{zh}"
    if key == "holder_name":
        return f" for the shareholder “{value}”", f"股东“{value}”"
    if key == "bz_item":
        return f" for the business segment “{value}”", f"主营业务“{value}”"
    if key in ("con_code", "symbol"):
        return f" for the constituent {value}", f"成分股{value}"
    entry = lexicon.entry(tool, key)
    noun_en, noun_zh = (entry.en, entry.zh) if entry else (key.replace("_", " "), key)
    return f" for the {noun_en} “{value}”", f"{noun_zh}为“{value}”的"


def _parts(c: Candidate, lexicon: Lexicon) -> _Parts:
    f = c.facts
    entry = lexicon.require(f.tool, f.field)
    select = c.program.extract.select
    series = dict(select.where)
    kind, _, rest = f.anchor.partition(":")
    if kind == "match":
        cat, _, value = rest.partition("=")
        series.setdefault(cat, value)
    subject_en = subject_zh = None
    if c.entity != f.tool and c.entity not in series.values():
        subject_en, subject_zh = subject_names(c)
    series_en = series_zh = ""
    fx_pair = False
    for key, value in series.items():
        pair = _fx_pair(str(value)) if key == "ts_code" else None
        if pair is not None:
            subject_en, subject_zh, fx_pair = pair, _pair_zh(pair, lexicon) or pair, True
            continue
        if str(value) == c.entity and subject_en is None:
            subject_en = subject_zh = str(value)
            continue
        en, zh = _series_phrase(key, str(value), lexicon, f.tool)
        series_en += en
        series_zh += zh
    parts = _Parts(entry.en, entry.zh, entry.plural, subject_en, subject_zh, series_en, series_zh,
                   lexicon.bars.get(f.tool), fx_pair)
    return replace(parts, days=days_of(text_calendar(c.entity, f.tool, series, c.program, f.calendar)))


def text_calendar(entity: str, tool: str, series: Mapping[str, Any], program: Program,
                  calendar: str | None = None) -> str | None:
    """The calendar a text must name (DESIGN §4.8, issue 40): the program's exchange calendar, or
    WEEKDAYS for FX, when the subject implies none — a market-wide series (a rate, a statistic, a
    market total) or an FX pair; None for an instrument (its exchange) or a series on a named
    exchange. `series` is what the program selects (its `where`, a match's key and value);
    `calendar` the tool's own (the candidate's facts) when the program's dates name none."""
    fx = any(k == "ts_code" and _fx_pair(str(v)) for k, v in series.items())
    named = [k for k, v in series.items() if not (k == "ts_code" and _fx_pair(str(v))) and str(v) != entity]
    instrument = entity != tool and entity not in (str(v) for v in series.values())
    if named or instrument:
        return None
    return program_calendar(program) or calendar or (WEEKDAYS if fx else None)


def _when(c: Candidate, p: _Parts) -> tuple[str, str]:
    """The relative time of a `latest` record of the candidate's tool (EN, ZH)."""
    f = c.facts
    key = c.program.extract.select.key
    kind, _, rest = f.anchor.partition(":")
    pinned = rest if kind == "period" else pinned_period(c)
    if pinned:
        return f"for {period_phrase_en(pinned)}", period_phrase_zh(pinned)
    if f.tool in EVENT_WHEN:
        return EVENT_WHEN[f.tool]
    if p.freq == "week":
        return "for the most recent completed week", "最近一个完整交易周"
    if p.freq == "month":
        return "for the most recent completed month", "最近一个完整交易月"
    if f.tool in SEGMENT_TOOLS:
        return SEGMENT_WHEN
    if key == "end_date":
        entry = lexicon_entry(c)
        if f.tool in YTD_TOOLS and (entry is None or entry.quantity_of != "stock"):
            return ("for the most recently reported period (year to date)",
                    "最近一期已披露财报（年初至报告期末）")
        return "at the end of the most recently reported period", "最近一期报告期末"
    if key == "month":
        return "for the most recent month published", "最近一个已公布月份"
    if key == "quarter":
        return "for the most recent quarter published", "最近一个已公布季度"
    if key == "nav_date":
        return ("on the most recent trading day for which it has been published",
                "最近一个已公布净值的交易日")
    if key in ("ann_date", "ipo_date", "in_date", "start_date", "imp_anndate"):
        return "in the most recent announcement", "最近一次公告中"
    return f"on the most recent {p.days.one_en}", f"最近一个{p.days.zh}"


def lexicon_entry(c: Candidate, lexicon: Lexicon | None = None):
    """The lexicon entry of the candidate's field as its tool uses it (None when it has none)."""
    return (lexicon or load_lexicon()).entry(c.facts.tool, c.facts.field)


def window_span(c: Candidate) -> int | None:
    """How many sessions the extracted call's window spans, from its first session to its last
    (a window of 5 closes spans 4; one "from the close 5 sessions earlier" spans 5), or None
    when the window is not counted in sessions (FX's calendar spans, a period)."""
    call = next(call for call in c.program.calls if call.id == c.program.extract.call)
    start, end = call.dates.get("start_date"), call.dates.get("end_date")
    if start is None or end is None or start.sessions_back is None or end.sessions_back is None:
        return None
    return start.sessions_back - end.sessions_back


def span_en(k: int, days: Days = days_of(None)) -> str:
    """The window convention of a change, stated: from the trading day k sessions back to the
    most recent one (k from `window_span`), on the named calendar when `days` names one."""
    return f"from the {days.one_en} {k} {days.back_en} before the most recent one to the most recent {days.one_en}"


def span_zh(k: int, days: Days = days_of(None)) -> str:
    return f"自最近一个{days.zh}之前第{k}个{days.zh_bare}至最近一个{days.zh_bare}"


def with_definition(text: str, c: Candidate, lang: str, lexicon: Lexicon | None = None) -> str:
    """The text followed by the field's definition when the lexicon gives one (a derived
    indicator: MACD as 2 × (DIF − DEA), Bollinger's parameters), as a terminal states it."""
    entry = lexicon_entry(c, lexicon)
    definition = None if entry is None else (entry.define_en if lang == "en" else entry.define_zh)
    if not definition:
        return text
    return f"{text} {definition}" if lang == "en" else f"{text}{definition}"


def _be(p: _Parts) -> str:
    return "were" if p.plural else "was"


def _of(p: _Parts) -> str:
    return f" of {p.subject_en}" if p.subject_en else ""


AGG_EN = {"mean": "average", "max": "highest", "min": "lowest", "sum": "total", "first": "first", "last": "last"}
AGG_ZH = {"mean": "平均值", "max": "最高值", "min": "最低值", "sum": "合计", "first": "首日值", "last": "末日值"}


def template_question_en(c: Candidate, lexicon: Lexicon | None = None) -> str:
    """The English text: entity first, the quantity, the relative time, one unit; a derived
    indicator's definition follows as a sentence of its own."""
    lexicon = lexicon or load_lexicon()
    if families.family_of(c) is not None:
        return families.question_en(c, lexicon)
    return with_conventions(with_definition(_question_en(c, lexicon), c, "en", lexicon), c, "en")


def _question_en(c: Candidate, lexicon: Lexicon) -> str:
    f = c.facts
    p = _parts(c, lexicon)
    fmt = c.program.extract.format
    unit = unit_phrase_en(fmt)
    kind, _, rest = f.anchor.partition(":")
    noun, be, of, series = p.noun_en, _be(p), _of(p), p.series_en
    if f.other_entity:
        # A signed difference, first minus second: no sign presupposed (issue 40).
        when, _ = _when(c, p)
        other, _ = other_names(c)
        return (f"What {be} the {noun}{of} minus that of {other} {when}{unit}? A negative value means the first "
                f"was lower.")
    if f.ref_description:
        n = rest or "20"
        return (f"On the trading day within the last {n} sessions when {p.subject_en} closed highest, "
                f"what {be} its {noun}{unit}?")
    if kind == "static":
        return f"What {'are' if p.plural else 'is'} the {noun}{of}{series}{unit}?"
    if kind in ("latest", "period", "match"):
        when, _ = _when(c, p)
        return f"What {be} the {noun}{of}{series} {when}{unit}?"
    if kind == "snapshot":
        bar = f" latest completed {p.freq}'s" if p.freq else ""
        # "on the trading day k sessions before": the record of that one session ("the price change
        # of X 5 trading days before" would read as a change over five sessions).
        day = p.days
        return (f"What {be} the{bar} {noun}{of}{series} on the {day.one_en} {rest} {day.back_en} before the most "
                f"recent one{unit}?")
    if kind == "minute":
        _, _, at = rest.partition(":")
        # Bars are stamped at their end (conventions.py): the 10:30 bar covers 10:29 to 10:30.
        return (f"What {be} the {noun}{of}{series} in the one-minute bar from {minute_before(at)} to {at} on the "
                f"trading day before the most recent one{unit}?")
    if kind == "window":
        window = f"the last {rest} {p.days.many_en}"
        bars = f"the {p.freq}ly bars of " if p.freq else ""
        agg = f.aggregate or "mean"
        if agg in AGG_EN:
            # "total northbound net buying" already says total.
            head = noun if noun.split()[0] == AGG_EN[agg] else f"{AGG_EN[agg]} {noun}"
            return f"What {be} the {head}{of}{series} over {bars}{window}{unit}?"
        if agg == "std":
            return f"What was the sample standard deviation of the {noun}{of}{series} over {bars}{window}{unit}?"
        k = None if p.freq else window_span(c)
        span = span_en(k, p.days) if k else f"over {bars}{window}, from the first to the last"
        if agg == "change":
            return f"By how much did the {noun}{of}{series} change {span}{unit}?"
        if agg == "pct_change":
            return f"By what percentage did the {noun}{of}{series} change {span}{unit}?"
        if agg in ("argmax", "argmin"):
            extreme = "highest" if agg == "argmax" else "lowest"
            if p.subject_en is None:
                return (f"On which of the last {rest} {p.days.many_en} {'were' if p.plural else 'was'} the {noun}"
                        f"{series} at its {extreme}? Give the date as YYYY-MM-DD.")
            return (f"On which {p.days.one_en} in the last {rest} {p.days.back_en} did {p.subject_en}{series} record "
                    f"its {extreme} {noun}? Give the date as YYYY-MM-DD.")
        if agg == "count":
            if p.subject_en is None:
                return f"On how many of the last {rest} {p.days.many_en} was the {noun}{series} reported{unit}?"
            return f"On how many of the last {rest} trading days did {p.subject_en}{series} report a {noun}{unit}?"
        raise ValueError(f"{c.qid}: unknown aggregate {agg!r}")
    raise ValueError(f"{c.qid}: unknown anchor {f.anchor!r}")


def template_question_zh(c: Candidate, lexicon: Lexicon | None = None) -> str | None:
    """The Chinese text, for the Chinese market (`has_chinese_text`): entirely Chinese, one unit,
    stated once."""
    lexicon = lexicon or load_lexicon()
    if not has_chinese_text(c, lexicon):
        return None
    if families.family_of(c) is not None:
        return families.question_zh(c, lexicon)
    return with_conventions(with_definition(_question_zh(c, lexicon), c, "zh", lexicon), c, "zh")


def _question_zh(c: Candidate, lexicon: Lexicon) -> str:
    f = c.facts
    p = _parts(c, lexicon)
    fmt = c.program.extract.format
    ask = ask_zh(fmt)
    kind, _, rest = f.anchor.partition(":")
    # A name without its code runs into the series that follows it (霁渺价值精选混合成分股…): 的 parts them.
    joint = ("的" if c.facts.named_as is not None and p.subject_zh and p.series_zh
             and not p.subject_zh.endswith("公司") else "")
    noun, who = p.noun_zh, f"{p.subject_zh or ''}{joint}{p.series_zh}"
    if f.other_entity:
        _, when = _when(c, p)
        _, other = other_names(c)
        return f"{when}，{who}的{noun}减去{other}的{noun}{ask}为负表示前者较低。"
    if f.ref_description:
        return f"{who}最近{rest or '20'}个交易日中收盘价最高的那一天，其{noun}{ask}"
    if kind == "static":
        return f"{who}的{noun}{ask}"
    if kind in ("latest", "period", "match"):
        _, when = _when(c, p)
        if p.fx_pair and not p.series_zh:
            # An FX pair is named with its quote, time first: 最近一个交易日的美元兑离岸人民币买入收盘价.
            return f"{when}的{p.subject_zh}{noun}{ask}"
        return f"{who}{when}的{noun}{ask}"
    if kind == "snapshot":
        bar = f"截至该日最近一个完整交易{'周' if p.freq == 'week' else '月'}的" if p.freq else ""
        day = p.days
        return f"{who}最近一个{day.zh}之前第{rest}个{day.zh_bare}{bar}的{noun}{ask}"
    if kind == "minute":
        _, _, at = rest.partition(":")
        return f"{who}在最近一个交易日的前一个交易日{minute_before(at)}至{at}的一分钟K线中，{noun}{ask}"
    if kind == "window":
        window = f"最近{rest}个{p.days.zh}（含最近一个{p.days.zh_bare}）"
        bars = f"的{'周' if p.freq == 'week' else '月'}线" if p.freq else ""
        agg = f.aggregate or "mean"
        if agg in AGG_ZH:
            return f"{who}{window}{bars}{noun}的{AGG_ZH[agg]}{ask}"
        if agg == "std":
            return f"{who}{window}{bars}{noun}的样本标准差{ask}"
        k = None if p.freq else window_span(c)
        span = span_zh(k, p.days) if k else f"{window}{bars}从首日至末日"
        if agg == "change":
            return f"{who}{span}，{noun}的变化{ask}"
        if agg == "pct_change":
            return f"{who}{span}，{noun}的涨跌幅{ask}"
        if agg in ("argmax", "argmin"):
            extreme = "最高" if agg == "argmax" else "最低"
            return f"{who}最近{rest}个{p.days.zh}中{noun}{extreme}的是哪一个交易日？请按YYYY-MM-DD格式作答。"
        if agg == "count":
            return f"{who}最近{rest}个{p.days.zh}中有{noun}记录的交易日有多少个？请给出整数。"
        raise ValueError(f"{c.qid}: unknown aggregate {agg!r}")
    raise ValueError(f"{c.qid}: unknown anchor {f.anchor!r}")


def template_rule(c: Candidate) -> MatchRule:
    return proposed_rule(c.program.extract.format)


def template_verbalize(candidates: Sequence[Candidate], lexicon: Lexicon | None = None) -> list[Verbalized]:
    lexicon = lexicon or load_lexicon()
    out = []
    for c in candidates:
        try:
            en, zh = template_question_en(c, lexicon), template_question_zh(c, lexicon)
        except LexiconError as exc:
            out.append(Verbalized(c, "", None, template_rule(c), TEMPLATE, problem=str(exc)))
            continue
        out.append(Verbalized(c, en, zh, template_rule(c), TEMPLATE))
    return out


# --------------------------------------------------------------------------- LLM texts


@dataclass(frozen=True)
class LLMVerbalizerConfig:
    model: str
    api_base: str | None = None
    api_key: str | None = None
    cache_dir: Path | None = None
    concurrency: int = 8
    mock_response: str | None = None  # tests and offline dry runs only


async def llm_verbalize(candidates: Sequence[Candidate], config: LLMVerbalizerConfig) -> tuple[list[Verbalized], list[RejectRow]]:
    from livesearch_pipeline.infra.llm import LLMError, acomplete

    semaphore = asyncio.Semaphore(config.concurrency)

    async def one(c: Candidate) -> Verbalized | RejectRow:
        messages = [{"role": "system", "content": VERBALIZER_SYSTEM},
                    {"role": "user", "content": verbalizer_user_message(c)}]
        async with semaphore:
            try:
                reply = await acomplete(messages, model=config.model, api_base=config.api_base,
                                        api_key=config.api_key, cache_dir=config.cache_dir,
                                        mock_response=config.mock_response,
                                        response_format={"type": "json_object"})
            except LLMError as exc:
                return RejectRow(qid=c.qid, stage="llm_error", reason=str(exc))
        try:
            parsed = VerbalizationReply.model_validate_json(_strip_fences(reply.content or ""))
        except ValidationError as exc:
            first = exc.errors()[0]
            return RejectRow(qid=c.qid, stage="malformed",
                             reason=f"reply is not a valid verbalization object: {first['msg']} at {first['loc']}")
        if not parsed.keep:
            return RejectRow(qid=c.qid, stage="llm_reject", reason=parsed.reason)
        if not parsed.question or parsed.match is None:
            return RejectRow(qid=c.qid, stage="malformed", reason="kept without a question or a match rule")
        return Verbalized(c, parsed.question, parsed.question_zh, parsed.match, f"litellm:{config.model}")

    results = await asyncio.gather(*(one(c) for c in candidates))
    return ([r for r in results if isinstance(r, Verbalized)], [r for r in results if isinstance(r, RejectRow)])


def _strip_fences(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.index("\n") + 1:] if "\n" in text else text
    return text


# --------------------------------------------------------------------------- clamp and gate


def series_forms(c: Candidate) -> tuple[tuple[str, ...], ...]:
    """Each series the program selects (its `where` keys), as the forms a text may name it by."""
    return _series_forms_of(c.program.extract.select.where)


def lint_context(c: Candidate, catalog: Catalog | None = None, lexicon: Lexicon | None = None) -> LintContext:
    """What the text lint needs to know about a candidate beside its texts."""
    lexicon = lexicon or load_lexicon()
    f = c.facts
    fmt = c.program.extract.format
    select = c.program.extract.select
    tool = catalog.get(f.tool) if catalog is not None else None
    descriptions = [f.field_description]
    descriptions_zh = [f.field_description_zh or ""]
    identifiers = {f.field, select.key, *select.where, *(a for call in c.program.calls for a in call.args)}
    unpinned: tuple[str, ...] = ()
    if tool is not None:
        descriptions += [x.description for x in tool.fields]
        descriptions_zh += [x.description_zh or "" for x in tool.fields]
        identifiers |= {x.name for x in tool.fields}
        keys = [k for k in getattr(tool, "series_keys", []) if k != tool.entity_param]
        unpinned = tuple(k for k in keys if k not in select.where
                         and not (select.mode == "match" and select.key == k))
    entry = lexicon.entry(f.tool, f.field)
    # The observed value is the executor's, already scaled by the format (core.extract.format_answer).
    value = f.observed_value
    scaled = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    named = [x for n in (f.named_as, f.other_named_as) if n is not None for x in (n.name, n.en, n.zh)]
    names = tuple(n for n in (c.entity_name, f.other_entity_name, *named, *(str(v) for v in select.where.values()))
                  if n)
    # A question that names its entity as people do gives no code of it (construction/naming.py).
    withheld = tuple(code for code, n in ((c.entity, f.named_as), (f.other_entity, f.other_named_as))
                     if code and n is not None)
    # A Chinese text names an FX pair in Chinese ("美元兑离岸人民币" for USDCNH.FXCM).
    series = tuple((*forms, *filter(None, (_pair_zh(x, lexicon) for x in forms if "/" in x)))
                   for forms in series_forms(c))
    # A pick among named instruments (construction/families/, issue 29) names every choice,
    # its answer among them: that is the question, not a give-away.
    answer = f.observed_answer if fmt.kind == "text" and c.program.extract.pick is None else None
    freq = lexicon.bars.get(f.tool)
    series_dict = dict(select.where)
    kind, _, rest = f.anchor.partition(":")
    if kind == "match":
        cat, _, value = rest.partition("=")
        series_dict.setdefault(cat, value)
    calendar = text_calendar(c.entity, f.tool, series_dict, c.program, f.calendar)
    return LintContext(
        calendar_names=days_of(calendar).names, series_names=_series_names(c.entity, f.tool, series_dict),
        withheld_codes=withheld, fmt=fmt, kind=entry.kind if entry else None, descriptions=tuple(descriptions),
        tool_descriptions=(f.tool_description,),
        descriptions_zh=tuple(descriptions_zh), identifiers=tuple(sorted(i for i in identifiers if i)),
        names=names, series=series, series_unpinned=unpinned, bar_frequency=freq,
        answer=answer, value=scaled, quantity=entry.quantity_of if entry else None, tool_unit=f.field_unit,
        definition_en=entry.define_en if entry else None, definition_zh=entry.define_zh if entry else None,
    )


def question_lint_context(q: Question, catalog: Catalog, names: Sequence[str] = (),
                          lexicon: Lexicon | None = None) -> LintContext:
    """The lint context of a built question (a pool's, read back): what `lint_context` knows of a
    candidate, from the question's program, the catalog it was built from and the lexicon.
    `names` are the display names of other instruments the text may name (a compared stock)."""
    lexicon = lexicon or load_lexicon()
    ex = q.program.extract
    tool_name = next(call.tool for call in q.program.calls if call.id == ex.call)
    tool = catalog.get(tool_name)
    meta = tool.field(ex.field) if tool is not None and ex.field else None
    select = ex.select
    descriptions = [x.description for x in tool.fields] if tool is not None else []
    descriptions_zh = [x.description_zh or "" for x in tool.fields] if tool is not None else []
    identifiers = {ex.field or "", select.key or "", *select.where, *(a for call in q.program.calls for a in call.args)}
    if tool is not None:
        identifiers |= {x.name for x in tool.fields}
    entry = lexicon.entry(tool_name, ex.field) if ex.field else None
    forms = tuple((*fs, *filter(None, (_pair_zh(x, lexicon) for x in fs if "/" in x)))
                  for fs in _series_forms_of(select.where))
    series = dict(select.where)
    if select.mode == "match" and select.key and select.value is not None:
        series.setdefault(select.key, select.value)
    calendar = text_calendar(q.entity, tool_name, series, q.program)
    return LintContext(
        calendar_names=days_of(calendar).names, series_names=_series_names(q.entity, tool_name, series),
        fmt=ex.format, kind=entry.kind if entry else None, descriptions=tuple(descriptions),
        tool_descriptions=(tool.description,) if tool is not None else (),
        descriptions_zh=tuple(descriptions_zh), identifiers=tuple(sorted(i for i in identifiers if i)),
        names=tuple(n for n in (q.entity_name, *names, *(str(v) for v in select.where.values())) if n),
        series=forms, bar_frequency=lexicon.bars.get(tool_name),
        quantity=entry.quantity_of if entry else None, tool_unit=meta.unit if meta else None,
        definition_en=entry.define_en if entry else None, definition_zh=entry.define_zh if entry else None,
    )


def _days_named(c: Candidate, lexicon: Lexicon) -> dict[str, str] | None:
    """How the LLM's text names the days a market-wide series counts, or None when its instrument
    implies them."""
    try:
        days = _parts(c, lexicon).days
    except LexiconError:
        return None
    return None if days.calendar is None else {"en": days.many_en, "zh": days.zh}


def _series_names(entity: str, tool: str, series: Mapping[str, Any]) -> tuple[str, ...]:
    """The words one of which a text about a market-wide series must hold (conventions.SERIES_NAMES):
    none for an instrument, whose name and code name it."""
    if entity != tool or any(str(v) == entity for v in series.values()):
        return ()
    return SERIES_NAMES.get(tool, ())


def _series_forms_of(where) -> tuple[tuple[str, ...], ...]:
    out = []
    for key, value in where.items():
        value = str(value)
        forms = [value]
        if key in ("exchange_id", "exchange", "market") and value in EXCHANGES:
            forms += list(EXCHANGES[value])
        pair = _fx_pair(value) if key == "ts_code" else None
        if pair:
            forms.append(pair)
        forms += families.WHERE_FORMS.get((key, value), ())
        out.append(tuple(forms))
    return tuple(out)


def finalize(items: Sequence[Verbalized], catalog: Catalog | None = None) -> tuple[list[Question], list[RejectRow]]:
    """Gate, lint and clamp: each text must pass the date gate and the text lint (both the
    template's and the LLM's), each proposed rule is clamped; a failing candidate lands in the
    rejects table with its reason. `catalog` (optional) lets the lint check every description
    of the tool and its series keys; without it, the candidate's own facts are used."""
    questions: list[Question] = []
    rejects: list[RejectRow] = []
    lexicon = load_lexicon()
    for v in items:
        c = v.candidate
        fmt = c.program.extract.format
        if v.problem is not None:
            rejects.append(RejectRow(qid=c.qid, stage="lint", reason=v.problem, proposed_match=v.proposed))
            continue
        for text in (v.question, v.question_zh):
            if text is None:
                continue
            gate = check_text(text)
            if not gate.passed:
                spans = "; ".join(f"{h.text!r} ({h.reason})" for h in gate.hits)
                rejects.append(RejectRow(qid=c.qid, stage="date_gate", reason=f"absolute date in text: {spans}",
                                         question=v.question, question_zh=v.question_zh, proposed_match=v.proposed))
                break
        else:
            findings = lint_question(v.question, v.question_zh, lint_context(c, catalog, lexicon))
            if findings:
                rejects.append(RejectRow(qid=c.qid, stage="lint", reason="; ".join(str(f) for f in findings),
                                         question=v.question, question_zh=v.question_zh, proposed_match=v.proposed))
                continue
            value = c.facts.observed_value
            try:
                # The Chinese text's unit and decimals are recorded beside the English ones (issue 28).
                zh_precision = (zh_unit(fmt) if v.question_zh is not None and fmt.kind in ("number", "integer", "percent")
                                else None)
                rule, decisions = clamp_rule(v.proposed, fmt, aggregate=c.program.extract.aggregate,
                                             value_kind=fmt.kind,
                                             value=float(value) if isinstance(value, (int, float)) else None,
                                             zh_precision=zh_precision)
            except ValueError as exc:
                rejects.append(RejectRow(qid=c.qid, stage="clamp", reason=str(exc), question=v.question,
                                         question_zh=v.question_zh, proposed_match=v.proposed))
                continue
            questions.append(Question(
                qid=c.qid, question=v.question, question_zh=v.question_zh, program=c.program, match=rule,
                refresh_class=c.refresh_class, tier=c.tier, asset_class=c.asset_class, entity=c.entity,
                entity_name=c.entity_name, visibility=c.visibility, signature=c.signature,
                provenance=Provenance(verbalizer=v.verbalizer, proposed_match=v.proposed, clamp=decisions),
            ))
    return questions, rejects


def verbalizer_user_message(candidate: Candidate, lexicon: Lexicon | None = None) -> str:
    """The user message of the LLM verbalizer: the candidate's facts as one JSON object."""
    lexicon = lexicon or load_lexicon()
    facts = candidate.facts
    fmt = candidate.program.extract.format
    entry = lexicon.entry(facts.tool, facts.field)
    try:
        unit_zh = zh_unit(fmt)[0] if fmt.kind in ("number", "integer") else None
    except LexiconError:
        unit_zh = None
    payload = {
        "instrument": {"code": candidate.entity, "name": candidate.entity_name,
                       "asset_class": candidate.asset_class,
                       # Named as people name it, without its code (construction/naming.py).
                       "named_as": facts.named_as.model_dump(exclude={"kind"}) if facts.named_as else None},
        "field": {"name": facts.field,
                  "lexicon": entry.model_dump(mode="json", exclude={"quantity"}, exclude_none=True) if entry else None,
                  # The unit of the tool's raw values, as the served tool description states it.
                  "tool_unit": unit_phrase(facts.field_unit) if facts.field_unit else None},
        "anchor": facts.anchor,
        "refresh_class": candidate.refresh_class,
        "aggregate": facts.aggregate,
        # Sessions from the window's first close to its last: a change or return states it.
        "window_span_sessions": window_span(candidate),
        "exchange_calendar": facts.calendar,
        # The calendar the text must name (a market-wide series or an FX pair; conventions.py), the
        # words one of which names the series, and the convention sentence to end with.
        "days_named": _days_named(candidate, lexicon),
        "series_names": list(_series_names(candidate.entity, facts.tool, dict(candidate.program.extract.select.where))),
        "convention_en": with_conventions("", candidate, "en").strip() or None,
        "convention_zh": with_conventions("", candidate, "zh") or None,
        "series": [forms[-1] for forms in series_forms(candidate)],
        "compared_with": ({"code": facts.other_entity, "name": facts.other_entity_name,
                           "named_as": facts.other_named_as.model_dump(exclude={"kind"}) if facts.other_named_as else None}
                          if facts.other_entity else None),
        "date_resolved_by": facts.ref_description,
        # A multi-step family: the chain the text must state, step by step (construction/families/).
        "chain": families.chain_en(candidate) if families.family_of(candidate) is not None else None,
        "answer_format": fmt.model_dump(mode="json", exclude_defaults=True),
        "unit_en": unit_phrase_en(fmt).lstrip(", ") or None,
        "unit_zh": unit_zh,
        "chinese_text": has_chinese_text(candidate, lexicon),
        "todays_value": facts.observed_answer,
    }
    return json.dumps(payload, ensure_ascii=False, sort_keys=True)
