"""The T3 investigation families (issue 29), modelled on FinSearchComp's T3: a path over a window
(`drawdown`), a ranking over a window read at its winning record (`volume_day`, `best_month`), a
screen across a cross-section of the market (`screen`) and a pick among named instruments
(`three_indices`). Rankings decide on one value: a tie at it is `empty` ("tie: ...",
core/extract.py), dropped at construction and withdrawn on the day it happens.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from livesearch_pipeline.construction.families.base import (
    ADJ_TOOLS,
    CODE,
    PERCENT,
    RESOLVED_SAMPLES,
    YMD,
    DraftInputs,
    Family,
    FamilyDraft,
    answer_format,
    first_number,
    gold_tools,
    nouns,
    return_window,
    session_window,
    subject,
)
from livesearch_pipeline.construction.formats import ask_zh, unit_phrase_en
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.core.catalog import Catalog, ToolMeta
from livesearch_pipeline.core.lexicon import Lexicon
from livesearch_pipeline.core.models import (
    Call,
    DateSpec,
    Extractor,
    Format,
    Membership,
    Pick,
    Program,
    RecordJoin,
    Selection,
    ValueRef,
)

DRAWDOWN_WINDOWS = (60, 120)
# (family parameter, aggregate): the fall itself, and the days of its peak and trough, asked as
# separate questions of one program each so that every answer is matched on its own.
DRAWDOWN_PARTS = (("value", "max_drawdown"), ("peak", "drawdown_peak"), ("trough", "drawdown_trough"))
# Bars of each class whose path a drawdown follows; stocks and funds are adjusted (ADJ_TOOLS).
DRAWDOWN_BARS = {"index": "index_daily"}
# The 60-session window the window aggregates read, and the 20-session one (issue 29's pool share:
# one instrument asked over two windows, both calls shared with the window aggregates).
VOLUME_DAY_WINDOWS = (20, 60)
VOLUME_DAY_BARS = {"cn_equity": "daily", "hk_equity": "hk_daily", "us_equity": "us_daily", "index": "index_daily",
                   "fund": "fund_daily"}
BEST_MONTH_WINDOWS = (12, 24)
BEST_MONTH_BARS = {"cn_equity": "monthly", "index": "index_monthly"}
BEST_MONTH_FIELDS = ("close", "amount")
# Classes whose monthly bars change on unadjusted closes (an index level needs no adjustment).
UNADJUSTED_CLASSES = frozenset({"cn_equity"})
# The cross-section a screen reads (every A-share on one session) and what it ranks or counts:
# (family parameter, tool, field, aggregate).
SCREENS = (("largest_fall", "daily", "pct_chg", "argmin"), ("top_amount", "daily", "amount", "argmax"),
           ("top_turnover", "daily_basic", "turnover_rate", "argmax"), ("count_up", "daily", "pct_chg", "count"))
# The set a screen runs across: an index's constituents at its latest rebalance, or an industry
# index's members (tool, member field, time key of the latest set or None for every member).
SCREEN_SETS = {"index_weight": ("con_code", "trade_date"), "index_member": ("con_code", None)}
PICK_WINDOWS = (5, 20, 60)


def investigation_of(program: Program) -> str | None:
    """The T3 construct a program of these families is built on, or None: `drawdown` (a path over
    a window), `window_rank` (the winning record of a window read at another field), `screen` (a
    cross-section restricted to a set), `pick` (which of named instruments ranks first)."""
    ex = program.extract
    if ex.pick is not None:
        return "pick"
    if ex.select.within is not None:
        return "screen"
    if ex.aggregate in ("max_drawdown", "drawdown_peak", "drawdown_trough"):
        return "drawdown"
    if ex.aggregate in ("argmax", "argmin") and ex.select.mode == "all" and ex.arg_field not in (None, ex.select.key):
        return "window_rank"
    return None


def _drawdown_drafts(catalog: Catalog, entity: EntityInfo) -> list[FamilyDraft]:
    """The largest fall from a running peak over a window, and its peak and trough days."""
    if not entity.calendar:
        return []
    pair = ADJ_TOOLS.get(entity.asset_class)
    bar_name = pair[0] if pair else DRAWDOWN_BARS.get(entity.asset_class)
    tools = gold_tools(catalog, *pair) if pair else gold_tools(catalog, bar_name) if bar_name else None
    if not tools:
        return []
    bar = tools[0]
    out = []
    for n in DRAWDOWN_WINDOWS:
        calls = [Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code}, dates=session_window(bar, entity.calendar, n))]
        join = None
        if pair:
            factor = tools[1]
            calls.append(Call(id="c2", tool=factor.name, args={factor.entity_param: entity.code},
                              dates=session_window(factor, entity.calendar, n)))
            join = RecordJoin(call="c2", field="adj_factor")
        for part, aggregate in DRAWDOWN_PARTS:
            fmt = PERCENT if aggregate == "max_drawdown" else Format(kind="date", in_fmt=YMD, out_fmt="%Y-%m-%d")
            ex = Extractor(call="c1", select=Selection(mode="all", key=bar.time_key, key_fmt=YMD), field="close",
                           aggregate=aggregate, times=join, format=fmt)
            out.append(FamilyDraft(Program(calls=list(calls), extract=ex), entity, bar, bar.field("close"),
                                   f"drawdown:{part}:{n}", aggregate=aggregate))
    return out


def _volume_day_drafts(catalog: Catalog, entity: EntityInfo) -> list[FamilyDraft]:
    """The session of the highest volume among the last 20 or 60, read at that session's change."""
    tools = gold_tools(catalog, VOLUME_DAY_BARS.get(entity.asset_class, ""))
    if not tools or not entity.calendar:
        return []
    bar = tools[0]
    if bar.field("vol") is None or bar.field("pct_chg") is None:
        return []
    out = []
    for n in VOLUME_DAY_WINDOWS:
        c1 = Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code}, dates=session_window(bar, entity.calendar, n))
        ex = Extractor(call="c1", select=Selection(mode="all", key=bar.time_key, key_fmt=YMD), field="vol",
                       aggregate="argmax", arg_field="pct_chg", format=PERCENT)
        out.append(FamilyDraft(Program(calls=[c1], extract=ex), entity, bar, bar.field("pct_chg"),
                               f"volume_day:{n}", aggregate="argmax"))
    return out


def _best_month_drafts(catalog: Catalog, entity: EntityInfo, records: Sequence[Mapping[str, Any]]) -> list[FamilyDraft]:
    """The completed month of the largest gain among the last 12 or 24, read at its close and its
    turnover value."""
    tools = gold_tools(catalog, BEST_MONTH_BARS.get(entity.asset_class, ""))
    if not tools:
        return []
    bar = tools[0]
    start = next(p for p in bar.date_params if p.role == "start")
    end = next(p for p in bar.date_params if p.role == "end")
    out = []
    for n in BEST_MONTH_WINDOWS:
        dates = {start.name: DateSpec(period="month", periods_back=n - 1, edge="start", fmt=start.fmt),
                 end.name: DateSpec(period="month", periods_back=0, edge="end", fmt=end.fmt)}
        c1 = Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code}, dates=dates)
        for name in BEST_MONTH_FIELDS:
            f = bar.field(name)
            if f is None:
                continue
            sample = first_number(records, name) or RESOLVED_SAMPLES.get(name, 10.0)
            ex = Extractor(call="c1", select=Selection(mode="all", key=bar.time_key, key_fmt=YMD), field="pct_chg",
                           aggregate="argmax", arg_field=name, format=answer_format(bar, f, sample))
            out.append(FamilyDraft(Program(calls=[c1], extract=ex), entity, bar, f, f"best_month:{n}",
                                   aggregate="argmax"))
    return out


def _screen_drafts(catalog: Catalog, entity: EntityInfo, members: ToolMeta,
                   lookback: dict[str, DateSpec]) -> list[FamilyDraft]:
    """A screen of the latest session's cross-section of A-shares across the set `members` lists
    for the index: the largest fall, the highest turnover value or rate, how many closed up."""
    member_field, latest_key = SCREEN_SETS[members.name]
    args = {members.entity_param: entity.code}
    c1 = Call(id="c1", tool=members.name, args=args, dates=lookback if members.date_params else {})
    if latest_key is not None:
        listed = Selection(mode="latest", key=latest_key, key_fmt=YMD)
    else:
        listed = Selection(mode="all", key=members.time_key, key_fmt=YMD)
    within = Membership(call="c1", select=listed, field=member_field, key="ts_code")
    out = []
    for name, tool_name, field, aggregate in SCREENS:
        tools = gold_tools(catalog, tool_name)
        f = tools[0].field(field) if tools else None
        if f is None:
            continue
        tool = tools[0]
        point = next(p for p in tool.date_params if p.role == "point")
        c2 = Call(id="c2", tool=tool.name, dates={point.name: DateSpec(sessions_back=0, calendar="XSHG", fmt=point.fmt)})
        if aggregate == "count":
            select = Selection(mode="latest", key=tool.time_key, key_fmt=YMD, within=within, above={field: 0.0})
            ex = Extractor(call="c2", select=select, field=field, aggregate="count", format=Format(kind="integer"))
        else:
            select = Selection(mode="latest", key=tool.time_key, key_fmt=YMD, within=within)
            ex = Extractor(call="c2", select=select, field=field, aggregate=aggregate, arg_field="ts_code", format=CODE)
        out.append(FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, tool, f, f"screen:{name}",
                               aggregate=aggregate))
    return out


def pick_family_drafts(catalog: Catalog, triples: Sequence[tuple[EntityInfo, EntityInfo, EntityInfo]]) -> list[FamilyDraft]:
    """Three named indices over the same sessions: which gained the most, which fell the most."""
    tool = catalog.get("index_daily")
    if tool is None or not tool.defines_gold:
        return []
    out = []
    for trio in triples:
        cal = trio[0].calendar
        if not cal or any(e.calendar != cal for e in trio) or len({e.code for e in trio}) < 3:
            continue
        for n in PICK_WINDOWS:
            dates = return_window(tool, cal, n)
            select = Selection(mode="all", key=tool.time_key, key_fmt=YMD)
            calls = [Call(id=f"c{i + 1}", tool=tool.name, args={tool.entity_param: e.code}, dates=dates)
                     for i, e in enumerate(trio)]
            others = [ValueRef(call=f"c{i + 1}", select=select, field="close", aggregate="pct_change") for i in (1, 2)]
            for op in ("argmax", "argmin"):
                ex = Extractor(call="c1", select=select, field="close", aggregate="pct_change", format=CODE,
                               pick=Pick(op=op, others=others, labels=[e.code for e in trio]))
                out.append(FamilyDraft(Program(calls=calls, extract=ex), trio[0], tool, tool.field("close"),
                                       f"three_indices:{'gain' if op == 'argmax' else 'fall'}:{n}",
                                       other=trio[1], aggregate="pct_change"))
    return out


def investigation_drafts(catalog: Catalog, covered: Mapping[str, Sequence[EntityInfo]],
                         explored: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]],
                         lookback_of: Callable[[ToolMeta, EntityInfo], dict[str, DateSpec]]) -> list[FamilyDraft]:
    """The T3 investigation families over the entities enumeration covered, by tool (see
    `family_drafts`, which calls this)."""
    out: list[FamilyDraft] = []
    seen: set[tuple[str, str]] = set()
    for cls in ("cn_equity", "hk_equity", "us_equity", "fund", "index"):
        bar = VOLUME_DAY_BARS[cls]
        for e in covered.get(bar, ()):
            if (bar, e.code) in seen:
                continue
            seen.add((bar, e.code))
            out.extend(_drawdown_drafts(catalog, e))
            out.extend(_volume_day_drafts(catalog, e))
            if cls in BEST_MONTH_BARS:
                out.extend(_best_month_drafts(catalog, e, explored.get((bar, e.code), [])))
    for name in SCREEN_SETS:
        members = catalog.get(name)
        if members is None or not members.defines_gold:
            continue
        for e in covered.get(name, ()):
            if explored.get((name, e.code)):
                out.extend(_screen_drafts(catalog, e, members, lookback_of(members, e)))
    indices = sorted(covered.get("index_daily", ()), key=lambda e: (e.visibility, e.code))
    k = max(1, len(indices) // 3)
    triples = [(indices[i], indices[(i + k) % len(indices)], indices[(i + 2 * k) % len(indices)])
               for i in range(len(indices))] if len(indices) >= 3 else []
    out.extend(pick_family_drafts(catalog, triples))
    return out


# --------------------------------------------------------------------------- texts

INVESTIGATIONS = frozenset({"drawdown", "volume_day", "best_month", "screen", "three_indices"})
# How a drawdown's closes are adjusted, by class (the bars times the cumulative adjustment factor).
ADJUSTED_EN = {"cn_equity": "closing prices adjusted for splits and dividends",
               "fund": "closing prices adjusted for distributions",
               "hk_equity": "closing prices adjusted for splits", "us_equity": "closing prices adjusted for splits",
               "index": "closing levels"}
ADJUSTED_ZH = {"cn_equity": "后复权收盘价", "fund": "复权收盘价", "hk_equity": "复权收盘价", "us_equity": "复权收盘价",
               "index": "收盘点位"}
# What a screen runs across, by the tool that lists the set.
SCREEN_SET_EN = {"index_weight": "the constituents of {subj} at its most recent rebalance",
                 "index_member": "the member stocks of {subj}"}
SCREEN_SET_ZH = {"index_weight": "{subj}最近一次调整权重后的成分股", "index_member": "{subj}的成分股"}
SCREEN_ASK_EN = {"largest_fall": "had the lowest percentage change",
                 "top_amount": "had the highest turnover value", "top_turnover": "had the highest turnover rate"}
SCREEN_ASK_ZH = {"largest_fall": "涨跌幅最低", "top_amount": "成交额最高", "top_turnover": "换手率最高"}


def _screen_set(c: Candidate) -> str:
    return c.program.calls[0].tool


def _investigation_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    fmt = c.program.extract.format
    unit = unit_phrase_en(fmt)
    subj, _ = subject(c)
    if name == "drawdown":
        part, n = param.split(":")
        prices = ADJUSTED_EN[c.asset_class]
        if part == "value":
            return (f"What was the maximum drawdown of {subj} over the last {n} trading days, that is the largest "
                    f"decline of its {prices} from a preceding peak, stated as a positive percentage of that "
                    f"peak{unit}?")
        which = "peak" if part == "peak" else "trough"
        return (f"On which trading day did {subj} reach the {which} of its maximum drawdown over the last {n} "
                f"trading days, measured on its {prices}? Answer with the date as YYYY-MM-DD.")
    if name == "volume_day":
        return (f"What was the percentage change of {subj} on the session with the highest trading volume among "
                f"the last {param} trading days{unit}?")
    if name == "best_month":
        noun, _ = nouns(c, lexicon)
        # A stock's monthly change is unadjusted (conventions.py): the text says so.
        change = "unadjusted monthly percentage change" if c.asset_class in UNADJUSTED_CLASSES else "monthly percentage change"
        return (f"Among the last {param} completed calendar months, take the month in which {subj} had its highest "
                f"{change}. What was its {noun} in that month{unit}?")
    if name == "screen":
        members = SCREEN_SET_EN[_screen_set(c)].format(subj=subj)
        if param == "count_up":
            return (f"On the most recent trading day, how many of {members} closed higher than their previous "
                    f"close{unit}?")
        return (f"On the most recent trading day, which of {members} {SCREEN_ASK_EN[param]}? "
                f"Answer with its stock code.")
    if name == "three_indices":
        move, n = param.split(":")
        codes = c.program.extract.pick.labels
        extreme = "highest" if move == "gain" else "lowest"
        return (f"Of the indices {codes[0]}, {codes[1]} and {codes[2]}, which had the {extreme} percentage change "
                f"from the close {n} trading days before the most recent one to the most recent close? Answer with "
                f"its index code.")
    raise ValueError(f"{c.qid}: unknown question family {name!r}")


def _investigation_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    fmt = c.program.extract.format
    ask = ask_zh(fmt)
    _, subj = subject(c)
    if name == "drawdown":
        part, n = param.split(":")
        prices = ADJUSTED_ZH[c.asset_class]
        if part == "value":
            return f"{subj}最近{n}个交易日按{prices}计算的最大回撤幅度，即相对此前高点的最大跌幅{ask}"
        which = "高点" if part == "peak" else "低点"
        return f"{subj}最近{n}个交易日按{prices}计算的最大回撤，其{which}出现在哪一个交易日？请按YYYY-MM-DD格式作答。"
    if name == "volume_day":
        return f"{subj}最近{param}个交易日中成交量最大的那个交易日的涨跌幅{ask}"
    if name == "best_month":
        _, noun = nouns(c, lexicon)
        change = "未复权月涨跌幅" if c.asset_class in UNADJUSTED_CLASSES else "月涨跌幅"
        return f"{subj}最近{param}个已结束的自然月中{change}最高的那个月，其{noun}{ask}"
    if name == "screen":
        members = SCREEN_SET_ZH[_screen_set(c)].format(subj=subj)
        if param == "count_up":
            return f"最近一个交易日，{members}中收盘价高于前收盘价的股票有多少只？请给出整数。"
        return f"最近一个交易日，{members}中{SCREEN_ASK_ZH[param]}的是哪一只股票？请给出其股票代码。"
    if name == "three_indices":
        move, n = param.split(":")
        codes = c.program.extract.pick.labels
        verb = "涨跌幅最高" if move == "gain" else "涨跌幅最低"
        return (f"自最近一个交易日之前第{n}个交易日收盘至最近一个交易日收盘，{codes[0]}、{codes[1]}和{codes[2]}"
                f"三个指数中哪一个{verb}？请给出其指数代码。")
    raise ValueError(f"{c.qid}: no Chinese text for question family {name!r}")


def draft(inputs: DraftInputs) -> None:
    inputs.add(investigation_drafts, inputs.catalog, inputs.covered, inputs.explored, inputs.lookback_of)


SPEC = Family(names=tuple(sorted(INVESTIGATIONS)), draft=draft, question_en=_investigation_en,
              question_zh=_investigation_zh, tools={"index": ("index_member", "index_daily")})
