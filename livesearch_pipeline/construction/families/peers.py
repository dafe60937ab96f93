"""Peer sets (issue 39): among the member stocks of an industry index, which had the highest
figure of its annual report for the most recently completed fiscal year (net profit margin,
return on equity, revenue growth against the restated comparative, as `fina_indicator` states
them), read from every member's own report — one statement call per member, no cross-section.

The members are the index's current ones (`DraftInputs.members`), named in the text by their
codes, so that the question still means the same set if the index's membership later changes.
An A-share's fiscal year is the calendar year: the selection is the member's record of the last
completed year end, as most recently published; before a member's annual report is out the
question has no answer that day (withdrawn), never a mix of years.
"""

from __future__ import annotations

from livesearch_pipeline.construction.families.base import (
    CODE,
    YMD,
    DraftInputs,
    Family,
    FamilyDraft,
    gold_tools,
    nouns,
    subject,
)
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.lexicon import Lexicon
from livesearch_pipeline.core.models import MAX_PICK, Call, DateSpec, Extractor, Pick, Program, Selection, ValueRef

PEER_TOOL = "fina_indicator"
# (family parameter, field): what the peers are ranked by.
PEER_MEASURES = (("margin", "netprofit_margin"), ("roe", "roe"), ("growth", "or_yoy"))
PEER_MIN = 3  # a peer set of fewer members is no screen
# Announcements the member's call covers: the last completed year's annual report and its lag.
PEER_LOOKBACK_DAYS = 500
# Suffix of the industry indices whose members are peers (Shenwan-style industry indices).
INDUSTRY_SUFFIX = ".SI"


def peer_drafts(catalog: Catalog, index: EntityInfo, members: list[str]) -> list[FamilyDraft]:
    """Per measure: the member whose annual figure of the last completed fiscal year is highest."""
    tools = gold_tools(catalog, PEER_TOOL)
    if not tools or not PEER_MIN <= len(members) <= MAX_PICK:
        return []
    tool = tools[0]
    start = next(p for p in tool.date_params if p.role == "start")
    end = next(p for p in tool.date_params if p.role == "end")
    dates = {start.name: DateSpec(days_back=PEER_LOOKBACK_DAYS, fmt=start.fmt), end.name: DateSpec(days_back=0, fmt=end.fmt)}
    calls = [Call(id=f"c{i + 1}", tool=tool.name, args={tool.entity_param: code}, dates=dates)
             for i, code in enumerate(members)]
    year_end = Selection(mode="snapshot", key=tool.time_key, key_fmt=YMD,
                         anchor=DateSpec(period="year", periods_back=0, fmt=YMD))
    out = []
    for param, name in PEER_MEASURES:
        f = tool.field(name)
        if f is None:
            continue
        refs = [ValueRef(call=c.id, select=year_end, field=name) for c in calls]
        ex = Extractor(**refs[0].model_dump(), format=CODE,
                       pick=Pick(op="argmax", others=refs[1:], labels=list(members)))
        out.append(FamilyDraft(Program(calls=calls, extract=ex), index, tool, f, f"peer_best:{param}"))
    return out


def _draft(inputs: DraftInputs) -> None:
    for code, members in sorted(inputs.members.items()):
        index = inputs.market.get(code)
        if index is not None and code.endswith(INDUSTRY_SUFFIX):
            inputs.add(peer_drafts, inputs.catalog, index, list(members))


def _codes_en(codes: list[str]) -> str:
    return ", ".join(codes[:-1]) + f" and {codes[-1]}"


def _peer_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    subj, _ = subject(c)
    noun, _ = nouns(c, lexicon)
    codes = c.program.extract.pick.labels  # type: ignore[union-attr]
    return (f"Of the member stocks of {subj}, {_codes_en(codes)}, which had the highest {noun} in its annual report "
            f"for the most recently completed fiscal year, as most recently published? Answer with its stock code.")


def _peer_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    _, subj = subject(c)
    _, noun = nouns(c, lexicon)
    codes = c.program.extract.pick.labels  # type: ignore[union-attr]
    return (f"{subj}的成分股{'、'.join(codes)}中，按最新披露数据，最近一个已结束财年的年度报告{noun}最高的是哪一只股票？"
            f"请给出其股票代码。")


PEER_BEST = Family(names=("peer_best",), draft=_draft, question_en=_peer_en, question_zh=_peer_zh)
