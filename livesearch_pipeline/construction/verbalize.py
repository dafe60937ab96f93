"""Stage 5: candidates become questions — text, proposed rule, clamp, date gate.

Two verbalizers share one pipeline:
- the deterministic **template** verbalizer (no LLM; recorded as `template` in provenance);
- the **LLM** verbalizer (litellm), which may also reject a candidate.
Whatever writes the text, the rule is clamped mechanically (core.matching.clamp_rule) and both
texts pass the date gate (core.dategate), or the candidate lands in the rejects table.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from pydantic import ValidationError

from livesearch_pipeline.construction.enumerate import proposed_rule
from livesearch_pipeline.construction.models import Candidate, RejectRow
from livesearch_pipeline.construction.prompts import VERBALIZER_SYSTEM, verbalizer_user_message
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.matching import clamp_rule
from livesearch_pipeline.core.models import Format, MatchRule, Provenance, Question, StrictModel

TEMPLATE = "template"
MARKET_EN = {"XSHG": "Shanghai/Shenzhen", "XHKG": "Hong Kong", "XNYS": "New York"}
MARKET_ZH = {"XSHG": "沪深", "XHKG": "香港", "XNYS": "纽约"}
ZH_CLASSES = frozenset({"cn_equity", "index", "fund"})
AGG_EN = {
    "mean": "the average of the daily {f}",
    "max": "the highest daily {f}",
    "min": "the lowest daily {f}",
    "sum": "the total of the daily {f}",
    "change": "the change in {f} from the first to the last of those sessions (last minus first)",
    "pct_change": "the percentage change in {f} from the first to the last of those sessions",
    "std": "the sample standard deviation of the daily {f}",
    "argmax": "the session on which the {f} was highest (the earliest, if tied)",
    "argmin": "the session on which the {f} was lowest (the earliest, if tied)",
    "count": "the number of sessions with a reported {f}",
    "first": "the {f} on the first of those sessions",
    "last": "the {f} on the last of those sessions",
}
AGG_ZH = {
    "mean": "{f}的平均值",
    "max": "{f}的最高值",
    "min": "{f}的最低值",
    "sum": "{f}的合计",
    "change": "{f}的变化量（末值减首值）",
    "pct_change": "{f}从首个到最后一个交易日的涨跌幅",
    "std": "{f}的样本标准差",
    "argmax": "{f}最高的交易日（如有并列取最早者）",
    "argmin": "{f}最低的交易日（如有并列取最早者）",
    "count": "有{f}记录的交易日数",
    "first": "首个交易日的{f}",
    "last": "最后一个交易日的{f}",
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


# --------------------------------------------------------------------------- template texts


def _precision_en(fmt: Format) -> str:
    if fmt.kind == "number":
        unit = f" in {fmt.unit}" if fmt.unit else ""
        return f"Give the number{unit}, rounded to {fmt.decimals} decimal places."
    if fmt.kind == "percent":
        return f"Give the answer as a percentage, rounded to {fmt.decimals} decimal places."
    if fmt.kind == "integer":
        unit = f" in {fmt.unit}" if fmt.unit else ""
        return f"Give a whole number{unit}."
    if fmt.kind == "date":
        return "Give the date as YYYY-MM-DD."
    return "Give the exact text as the data source records it."


def _precision_zh(fmt: Format) -> str:
    if fmt.kind == "number":
        unit = f"以{fmt.unit}为单位，" if fmt.unit else ""
        return f"请{unit}保留{fmt.decimals}位小数。"
    if fmt.kind == "percent":
        return f"请以百分比表示，保留{fmt.decimals}位小数。"
    if fmt.kind == "integer":
        unit = f"以{fmt.unit}为单位" if fmt.unit else ""
        return f"请{unit}给出整数。"
    if fmt.kind == "date":
        return "请按YYYY-MM-DD格式给出日期。"
    return "请给出数据源记载的原文。"


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


def _subject(code: str, name: str, tool: str) -> str | None:
    return None if code == tool else f"{name} ({code})"


def template_question_en(c: Candidate) -> str:
    f = c.facts
    fmt = c.program.extract.format
    market = MARKET_EN.get(f.calendar or "", "the exchange's")
    subject = _subject(c.entity, c.entity_name, f.tool)
    of = f" of {subject}" if subject else ""
    what = f.field_description
    kind, _, rest = f.anchor.partition(":")
    if f.other_entity:
        other = f"{f.other_entity_name} ({f.other_entity})"
        text = (f"As of the most recent {market} trading session, what was the {what}{of} minus "
                f"the {what} of {other}?")
    elif f.ref_description:
        n = rest or "20"
        text = (f"On the {market} trading session with the highest closing price{of} during the last {n} "
                f"sessions up to and including the most recent one, what was its {what} "
                f"(as reported by {f.tool_description.rstrip('.')})?")
    elif kind == "static":
        text = f"What is the {what}{of}?"
    elif kind == "latest":
        when = (f"the most recent {market} trading session" if c.refresh_class == "daily"
                else "the most recent period published so far")
        series = "" if subject else f" ({f.tool_description.rstrip('.')})"
        text = f"For {when}, what was the {what}{of}{series}?"
    elif kind == "period":
        text = f"For {period_phrase_en(rest)}, what was the {what}{of}?"
    elif kind == "snapshot":
        text = (f"On the {market} trading session {rest} sessions before the most recent one, "
                f"what was the {what}{of}?")
    elif kind == "window":
        agg = AGG_EN[f.aggregate or "mean"].format(f=what)
        text = (f"Over the last {rest} {market} trading sessions up to and including the most recent one, "
                f"what was {agg}{of}?")
    elif kind == "minute":
        back, _, at = rest.partition(":")
        text = (f"In the one-minute bar stamped {at} (exchange time) of the {market} trading session "
                f"before the most recent one, what was the {what}{of}?")
    elif kind == "match":
        cat, _, value = rest.partition("=")
        pinned = pinned_period(c)
        when = f"For {period_phrase_en(pinned)}, in the data" if pinned else "In the most recent data"
        text = (f"{when}{of} ({f.tool_description.rstrip('.')}), what was the {what} "
                f"of the entry whose {cat} is \"{value}\"?")
    else:
        raise ValueError(f"{c.qid}: unknown anchor {f.anchor!r}")
    return f"{text} {_precision_en(fmt)}"


def template_question_zh(c: Candidate) -> str | None:
    """The Chinese text, for Chinese-market entities whose field has a Chinese description."""
    f = c.facts
    if c.asset_class not in ZH_CLASSES or not f.field_description_zh:
        return None
    fmt = c.program.extract.format
    market = MARKET_ZH.get(f.calendar or "", "")
    subject = f"{c.entity_name}（{c.entity}）"
    what = f.field_description_zh
    kind, _, rest = f.anchor.partition(":")
    if f.other_entity:
        text = f"截至最近一个{market}交易日，{subject}的{what}减去{f.other_entity_name}（{f.other_entity}）的{what}是多少？"
    elif f.ref_description:
        text = f"在最近{rest or '20'}个{market}交易日（含最近一个交易日）中{subject}收盘价最高的那一天，其{what}是多少？"
    elif kind == "static":
        text = f"{subject}的{what}是什么？"
    elif kind == "latest":
        when = f"最近一个{market}交易日" if c.refresh_class == "daily" else "截至目前已发布的最近一期"
        text = f"{when}，{subject}的{what}是多少？"
    elif kind == "period":
        text = f"{period_phrase_zh(rest)}，{subject}的{what}是多少？"
    elif kind == "snapshot":
        text = f"最近一个{market}交易日之前的第{rest}个交易日，{subject}的{what}是多少？"
    elif kind == "window":
        agg = AGG_ZH[f.aggregate or "mean"].format(f=what)
        text = f"最近{rest}个{market}交易日（含最近一个交易日）内，{subject}{agg}是多少？"
    elif kind == "minute":
        _, _, at = rest.partition(":")
        text = f"最近一个{market}交易日的前一个交易日，{subject}在{at}（交易所时间）的一分钟K线中{what}是多少？"
    elif kind == "match":
        cat, _, value = rest.partition("=")
        pinned = pinned_period(c)
        when = f"{period_phrase_zh(pinned)}{subject}的数据中" if pinned else f"在{subject}的最近一期数据中"
        text = f"{when}，{cat}为“{value}”的条目的{what}是多少？"
    else:
        raise ValueError(f"{c.qid}: unknown anchor {f.anchor!r}")
    return f"{text}{_precision_zh(fmt)}"


def template_rule(c: Candidate) -> MatchRule:
    return proposed_rule(c.program.extract.format)


def template_verbalize(candidates: Sequence[Candidate]) -> list[Verbalized]:
    return [Verbalized(c, template_question_en(c), template_question_zh(c), template_rule(c), TEMPLATE)
            for c in candidates]


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
    from livesearch_pipeline.evaluation.llm import LLMError, acomplete

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


def finalize(items: Sequence[Verbalized]) -> tuple[list[Question], list[RejectRow]]:
    """Clamp each proposed rule and gate each text; build the question records."""
    questions: list[Question] = []
    rejects: list[RejectRow] = []
    for v in items:
        c = v.candidate
        fmt = c.program.extract.format
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
            value = c.facts.observed_value
            try:
                rule, decisions = clamp_rule(v.proposed, fmt, aggregate=c.program.extract.aggregate,
                                             value_kind=fmt.kind,
                                             value=float(value) if isinstance(value, (int, float)) else None)
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
