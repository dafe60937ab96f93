"""Multi-step question families (DESIGN §8, issue 20): gold programs an analyst investigates.

Each family is a typed DAG in the program language (calls with `refs`, `times` joins, a combine
chain), drafted from what enumeration explored, executed and replayed like every other candidate,
and verbalized from the field lexicon as the chain an analyst states (entity first, relative time
only, one unit). A family's candidate carries the anchor `family:<name>[:<n>]`; the template
verbalizer and the LLM payload read its chain from here.

| family | chain |
|---|---|
| growth_period | a statement's latest reported period vs the same period a year earlier (`years_back`) |
| growth_year | the latest annual report vs the fiscal year before (A-shares: `end_type` 4) |
| margin | a ratio of two fields of the latest report (net margin, operating margin, R&D intensity) |
| payout | dividend of the latest implemented plan → EPS of the period it pays for |
| exdate_close / since_exdate | the ex-date of the latest implemented dividend → the close that day / the return since |
| since_report | the announcement day of the latest report → the return since |
| top_holding | a fund's largest holding in its latest report → that stock's close, turnover, ... |
| top_constituent | an index's heaviest constituent at its latest rebalance → that stock's figures |
| adj_return | a window's closes times the cumulative adjustment factor (`times`) → the adjusted return |
| fx_convert | a Hong Kong or US figure × the day's FX rate(s) → CNY |
| price_to_nav | the latest published NAV date → the ETF's close that day, its premium over the NAV |
| compare | two instruments' returns over the same window, the difference in percentage points |

To add a family: write a `_<name>_drafts` generator returning `_Draft`s with anchor
`family:<name>`, add it to `family_drafts`, and give it a text in `question_en` / `question_zh`
and a chain in `chain_en` (the LLM payload); tests in livesearch_pipeline_tests/construction/test_families.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from livesearch_pipeline.construction.formats import ask_zh, unit_phrase_en, value_format
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.core.catalog import Catalog, FieldMeta, ToolMeta
from livesearch_pipeline.core.lexicon import Lexicon, LexiconError, load_lexicon
from livesearch_pipeline.core.program import window_rows
from livesearch_pipeline.core.models import (
    PERCENTAGE_POINTS,
    Call,
    Combine,
    DateSpec,
    Extractor,
    Format,
    Program,
    RecordJoin,
    Selection,
    ValueRef,
)

FAMILY = "family"
YMD = "%Y%m%d"
PERCENT = Format(kind="percent", decimals=2, unit="%")
# A difference of two returns: percentage points, as an analyst states a return gap.
POINTS_GAP = Format(kind="percent", decimals=2, unit=PERCENTAGE_POINTS)
# A ratio of two amounts, as a percentage (net margin, payout ratio).
RATIO_PERCENT = Format(kind="percent", decimals=2, unit="%", scale=100.0)
# Statement tool and bar tool of each equity class (growth, margins, the return since a report).
STATEMENT_TOOLS = {"cn_equity": ("income", "daily"), "hk_equity": ("hk_income", "hk_daily"),
                   "us_equity": ("us_income", "us_daily")}
GROWTH_FIELDS = ("revenue", "n_income", "n_income_attr_p", "operate_profit")
# (name, numerator, denominator, EN, ZH): ratios of two fields of one report, in percent.
MARGINS = (
    ("net_margin", "n_income", "revenue", "net profit margin", "净利率"),
    ("operating_margin", "operate_profit", "revenue", "operating profit margin", "营业利润率"),
    ("rd_intensity", "rd_exp", "revenue", "R&D expense ratio", "研发费用率"),
)
# The stock a resolution lands on: its daily figures (tool, field).
RESOLVED_FIELDS = (("daily", "close"), ("daily", "pct_chg"), ("daily", "amount"),
                   ("daily_basic", "turnover_rate"), ("daily_basic", "total_mv"))
ADJ_TOOLS = {"cn_equity": ("daily", "adj_factor"), "hk_equity": ("hk_daily", "hk_adjfactor"),
             "us_equity": ("us_daily", "us_adjfactor"), "fund": ("fund_daily", "fund_adj")}
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
# The answer scale of a figure of a stock the program resolves at run time (no sample of it was
# observed): a typical value in the catalog unit, which picks the scale word.
RESOLVED_SAMPLES = {"amount": 1e5, "total_mv": 1e6}
IMPLEMENTED = "实施"
# How a text names the records a family's `where` keeps (the lint checks that it does).
WHERE_FORMS = {("end_type", "4"): ("annual report", "年度报告"),
               ("div_proc", IMPLEMENTED): ("implemented", "实施")}
LATEST_SESSIONS = 10


# Instruments per visibility level a family is drafted for, from every instrument enumeration
# covered in the class (coverage draws one per level per tool: a family gets a spread of its own).
FAMILY_ENTITIES_PER_LEVEL = 2
# The tools whose response a family's drafts read (their records are explored for its entities).
FAMILY_TOOLS = {
    "cn_equity": ("income", "daily"), "hk_equity": ("hk_income", "hk_daily", "hk_daily_adj"),
    "us_equity": ("us_income", "us_daily", "us_daily_adj"), "fund": ("fund_portfolio", "fund_nav", "fund_daily"),
    "index": ("index_weight",),
}


def family_entities(entities: Sequence[EntityInfo]) -> dict[str, list[EntityInfo]]:
    """Per instrument class, up to FAMILY_ENTITIES_PER_LEVEL instruments at each visibility level
    (in code order) among `entities` (those enumeration covered): the entities families are drafted for."""
    by_class: dict[str, dict[int, list[EntityInfo]]] = {}
    for e in sorted({e.code: e for e in entities}.values(), key=lambda e: e.code):
        level = by_class.setdefault(e.asset_class, {}).setdefault(e.visibility, [])
        if len(level) < FAMILY_ENTITIES_PER_LEVEL:
            level.append(e)
    return {cls: [e for lv in sorted(levels) for e in levels[lv]] for cls, levels in sorted(by_class.items())}


def family_targets(catalog: Catalog, entities: Sequence[EntityInfo]) -> dict[str, list[EntityInfo]]:
    """tool -> the entities whose response to it the families read (see FAMILY_TOOLS)."""
    out: dict[str, list[EntityInfo]] = {}
    for asset_class, group in family_entities(entities).items():
        for name in FAMILY_TOOLS.get(asset_class, ()):
            tool = catalog.get(name)
            if tool is not None and tool.defines_gold:
                out[name] = list(group)
    return out


@dataclass
class FamilyDraft:
    """A family's program and the facts enumeration's `_Draft` needs."""

    program: Program
    entity: EntityInfo
    tool: ToolMeta  # the tool of the extracted call (its lexicon entry names the quantity)
    field: FieldMeta
    family: str
    other: EntityInfo | None = None
    aggregate: str | None = None


def family_of(c: Candidate) -> tuple[str, str] | None:
    """(family, parameter) of a family candidate, or None."""
    kind, _, rest = c.facts.anchor.partition(":")
    if kind != FAMILY:
        return None
    name, _, param = rest.partition(":")
    return name, param


def is_multi_step(program: Program) -> bool:
    """Two or more calls, or a combine: what issue 20 counts as a multi-step program."""
    return len(program.calls) > 1 or program.extract.combine is not None


def shape_of(program: Program) -> str:
    """A program's shape: calls, combine ops, refs, joins, tools and fields (issue 20's 'shapes')."""
    calls = "+".join(c.tool for c in program.calls)
    refs = ",".join(f"{c.id}.{n}<-{r.call}.{r.field}" for c in program.calls for n, r in sorted(c.refs.items()))
    ex = program.extract
    ops = ",".join(f"{s.op}:{s.other.field}" for s in ex.combine.chain()) if ex.combine else ""
    join = f"*{ex.times.field}" if ex.times else ""
    return f"{calls}|{ex.field}{join}:{ex.aggregate or ''}|{ops}|{refs}"


# --------------------------------------------------------------------------- helpers


def _latest(call: str, key: str, fld: str, **kw: Any) -> ValueRef:
    return ValueRef(call=call, select=Selection(mode="latest", key=key, key_fmt=YMD, **kw), field=fld)


def _window(tool: ToolMeta, calendar: str, sessions: int) -> dict[str, DateSpec]:
    start = next(p for p in tool.date_params if p.role == "start")
    end = next(p for p in tool.date_params if p.role == "end")
    return {start.name: DateSpec(sessions_back=sessions - 1, calendar=calendar, fmt=start.fmt),
            end.name: DateSpec(sessions_back=0, calendar=calendar, fmt=end.fmt)}


def _return_window(tool: ToolMeta, calendar: str, sessions: int) -> dict[str, DateSpec]:
    """A return "over the last N sessions": N + 1 closes (core.program.window_rows)."""
    return _window(tool, calendar, window_rows("pct_change", sessions))


def _lookback(tool: ToolMeta, days: int) -> dict[str, DateSpec]:
    start = next(p for p in tool.date_params if p.role == "start")
    end = next(p for p in tool.date_params if p.role == "end")
    return {start.name: DateSpec(days_back=days, fmt=start.fmt), end.name: DateSpec(days_back=0, fmt=end.fmt)}


def _fmt(tool: ToolMeta, f: FieldMeta, sample: Any, *, unit: str | None = None) -> Format:
    meta = f if unit is None else f.model_copy(update={"unit": unit})
    return value_format(meta, None, sample, YMD, tool=tool.name)


def _sample(records: Sequence[Mapping[str, Any]], name: str) -> Any:
    return next((r.get(name) for r in records if isinstance(r.get(name), (int, float))), None)


def _tools(catalog: Catalog, *names: str) -> list[ToolMeta] | None:
    found = [catalog.get(n) for n in names]
    return None if any(t is None or not t.defines_gold for t in found) else found  # type: ignore[return-value]


# --------------------------------------------------------------------------- families


def _statement_drafts(catalog: Catalog, entity: EntityInfo, records: Sequence[Mapping[str, Any]],
                      lookback: dict[str, DateSpec]) -> list[FamilyDraft]:
    pair = STATEMENT_TOOLS.get(entity.asset_class)
    tools = _tools(catalog, pair[0]) if pair else None
    if not tools or not records:
        return []
    tool = tools[0]
    call = Call(id="c1", tool=tool.name, args={tool.entity_param: entity.code}, dates=lookback)
    key = tool.time_key
    out = []
    for name in GROWTH_FIELDS:
        f = tool.field(name)
        if f is None or _sample(records, name) is None:
            continue
        growth = Extractor(**_latest("c1", key, name).model_dump(), format=PERCENT,
                           combine=Combine(op="pct_difference", other=_latest("c1", key, name, years_back=1)))
        out.append(FamilyDraft(Program(calls=[call], extract=growth), entity, tool, f, "growth_period"))
        if tool.field("end_type") is not None:
            # The latest annual report: the record of the last completed year, if published.
            year_end = DateSpec(period="year", periods_back=0, fmt=YMD)
            annual = dict(anchor=year_end, where={"end_type": "4"})
            growth_y = Extractor(**_latest("c1", key, name, **annual).model_dump(), format=PERCENT,
                                 combine=Combine(op="pct_difference",
                                                 other=_latest("c1", key, name, years_back=1, **annual)))
            out.append(FamilyDraft(Program(calls=[call], extract=growth_y), entity, tool, f, "growth_year"))
    for name, num, den, _, _ in MARGINS:
        f, g = tool.field(num), tool.field(den)
        if f is None or g is None or _sample(records, num) is None or not _sample(records, den):
            continue
        margin = Extractor(**_latest("c1", key, num).model_dump(), format=RATIO_PERCENT,
                           combine=Combine(op="ratio", other=_latest("c1", key, den)))
        out.append(FamilyDraft(Program(calls=[call], extract=margin), entity, tool, f, f"margin:{name}"))
    return out


def _since_report_drafts(catalog: Catalog, entity: EntityInfo, lookback: dict[str, DateSpec]) -> list[FamilyDraft]:
    pair = STATEMENT_TOOLS.get(entity.asset_class)
    tools = _tools(catalog, *pair) if pair else None
    if not tools or not entity.calendar:
        return []
    statement, bar = tools
    c1 = Call(id="c1", tool=statement.name, args={statement.entity_param: entity.code}, dates=lookback)
    announced = _latest("c1", statement.time_key, "ann_date")
    end = next(p for p in bar.date_params if p.role == "end")
    c2 = Call(id="c2", tool=bar.name, args={bar.entity_param: entity.code}, refs={"start_date": announced},
              dates={end.name: DateSpec(sessions_back=0, calendar=entity.calendar, fmt=end.fmt)})
    ex = Extractor(call="c2", select=Selection(mode="all", key=bar.time_key, key_fmt=YMD), field="close",
                   aggregate="pct_change", format=PERCENT)
    return [FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, bar, bar.field("close"), "since_report",
                        aggregate="pct_change")]


def _dividend_drafts(catalog: Catalog, entity: EntityInfo) -> list[FamilyDraft]:
    tools = _tools(catalog, "dividend", "daily", "fina_indicator")
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
    ex = Extractor(**_latest("c2", "trade_date", "close").model_dump(), format=_fmt(daily, close, 10.0))
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
                           combine=Combine(op="ratio", other=_latest("c2", indicator.time_key, "eps")))
        out.append(FamilyDraft(Program(calls=[c1, eps], extract=payout), entity, dividend,
                               dividend.field("cash_div_tax"), "payout", aggregate="last"))
    return out


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
        c2 = Call(id="c2", tool=tool.name, refs={"ts_code": top}, dates=_window(tool, "XSHG", LATEST_SESSIONS))
        ex = Extractor(**_latest("c2", tool.time_key, name).model_dump(),
                       format=_fmt(tool, f, RESOLVED_SAMPLES.get(name, 10.0)))
        out.append(FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, tool, f, family))
    return out


def _adj_return_drafts(catalog: Catalog, entity: EntityInfo) -> list[FamilyDraft]:
    pair = ADJ_TOOLS.get(entity.asset_class)
    tools = _tools(catalog, *pair) if pair else None
    if not tools or not entity.calendar:
        return []
    bar, factor = tools
    out = []
    for n in ADJ_WINDOWS:
        c1 = Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code},
                  dates=_return_window(bar, entity.calendar, n))
        c2 = Call(id="c2", tool=factor.name, args={factor.entity_param: entity.code},
                  dates=_return_window(factor, entity.calendar, n))
        ex = Extractor(call="c1", select=Selection(mode="all", key=bar.time_key, key_fmt=YMD), field="close",
                       aggregate="pct_change", times=RecordJoin(call="c2", field="adj_factor"), format=PERCENT)
        out.append(FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, bar, bar.field("close"),
                               f"adj_return:{n}", aggregate="pct_change"))
    return out


def _fx_drafts(catalog: Catalog, entity: EntityInfo, records: Sequence[Mapping[str, Any]]) -> list[FamilyDraft]:
    plan = FX_CONVERSIONS.get(entity.asset_class)
    tools = _tools(catalog, plan[0], FX_TOOL) if plan else None
    if not tools or not entity.calendar:
        return []
    bar, fx = tools
    legs = plan[1]
    c1 = Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code},
              dates=_window(bar, entity.calendar, LATEST_SESSIONS))
    day = _latest("c1", bar.time_key, bar.time_key)
    point = next(p for p in fx.date_params if p.role == "point")
    c2 = Call(id="c2", tool=fx.name, refs={point.name: day})
    out = []
    for name in FX_FIELDS:
        f = bar.field(name)
        sample = _sample(records, name)
        if f is None or sample is None:
            continue
        steps: Combine | None = None
        for code, op in reversed(legs):
            steps = Combine(op=op, other=_latest("c2", fx.time_key, FX_FIELD, where={"ts_code": code}), then=steps)
        # Roughly the value in CNY, for the scale word: 0.9 CNY per HKD, 7 CNY per USD.
        rate = 0.9 if entity.asset_class == "hk_equity" else 7.0
        ex = Extractor(**_latest("c1", bar.time_key, name).model_dump(), combine=steps,
                       format=_fmt(bar, f, sample * rate, unit="CNY"))
        out.append(FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, bar, f, "fx_convert"))
    return out


def _price_to_nav_drafts(catalog: Catalog, entity: EntityInfo) -> list[FamilyDraft]:
    tools = _tools(catalog, "fund_nav", "fund_daily")
    if not tools or entity.asset_class != "fund":
        return []
    nav, bar = tools
    c1 = Call(id="c1", tool="fund_nav", args={"ts_code": entity.code}, dates=_window(nav, "XSHG", LATEST_SESSIONS))
    nav_day = _latest("c1", nav.time_key, nav.time_key)
    c2 = Call(id="c2", tool="fund_daily", args={"ts_code": entity.code}, refs={"trade_date": nav_day})
    ex = Extractor(**_latest("c2", bar.time_key, "close").model_dump(), format=PERCENT,
                   combine=Combine(op="pct_difference", other=_latest("c1", nav.time_key, "unit_nav")))
    return [FamilyDraft(Program(calls=[c1, c2], extract=ex), entity, bar, bar.field("close"), "price_to_nav")]


def compare_family_drafts(catalog: Catalog, pairs: Sequence[tuple[EntityInfo, EntityInfo]]) -> list[FamilyDraft]:
    """Two instruments of one class over the same sessions: the difference of their returns."""
    out = []
    for a, b in pairs:
        tool = catalog.get(COMPARE_TOOLS.get(a.asset_class, ""))
        if tool is None or not a.calendar or a.calendar != b.calendar:
            continue
        for n in COMPARE_WINDOWS:
            dates = _return_window(tool, a.calendar, n)
            select = Selection(mode="all", key=tool.time_key, key_fmt=YMD)
            calls = [Call(id="c1", tool=tool.name, args={tool.entity_param: a.code}, dates=dates),
                     Call(id="c2", tool=tool.name, args={tool.entity_param: b.code}, dates=dates)]
            ex = Extractor(call="c1", select=select, field="close", aggregate="pct_change", format=POINTS_GAP,
                           combine=Combine(op="difference", other=ValueRef(call="c2", select=select, field="close",
                                                                           aggregate="pct_change")))
            out.append(FamilyDraft(Program(calls=calls, extract=ex), a, tool, tool.field("close"), f"compare:{n}",
                                   other=b, aggregate="pct_change"))
    return out


def family_drafts(catalog: Catalog, covered: Mapping[str, Sequence[EntityInfo]],
                  explored: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]],
                  lookback_of: Callable[[ToolMeta, EntityInfo], dict[str, DateSpec]],
                  problems: list[str] | None = None) -> list[FamilyDraft]:
    """Every family's drafts over the entities enumeration covered, by tool (`covered[tool]`).

    `lookback_of(tool, entity)` gives the date arguments enumeration used for the tool's latest
    record, so that a family's first call is the very call of the single-step questions (the
    refresh executes it once for all of them). A generator whose field has no lexicon reading
    is skipped with its reason appended to `problems`.
    """
    out: list[FamilyDraft] = []

    def entities(tool: str) -> Sequence[EntityInfo]:
        return covered.get(tool, ())

    def add(generate: Callable[..., list[FamilyDraft]], *args: Any) -> None:
        try:
            out.extend(generate(*args))
        except LexiconError as exc:
            if problems is not None:
                problems.append(f"{generate.__name__}: {exc}")

    for statement, _ in STATEMENT_TOOLS.values():
        tool = catalog.get(statement)
        if tool is None:
            continue
        for e in entities(statement):
            records = explored.get((statement, e.code), [])
            if records:
                add(_statement_drafts, catalog, e, records, lookback_of(tool, e))
                add(_since_report_drafts, catalog, e, lookback_of(tool, e))
    for e in entities("daily"):
        add(_dividend_drafts, catalog, e)
    for first, measure, series, family in (("fund_portfolio", "mkv", "symbol", "top_holding"),
                                           ("index_weight", "weight", "con_code", "top_constituent")):
        tool = catalog.get(first)
        if tool is None or not tool.defines_gold:
            continue
        for e in entities(first):
            if explored.get((first, e.code)):
                add(_resolution_drafts, catalog, e, tool, lookback_of(tool, e), measure, series, family)
    for bar, _ in ADJ_TOOLS.values():
        for e in entities(bar):
            add(_adj_return_drafts, catalog, e)
    for bar, _ in FX_CONVERSIONS.values():
        for e in entities(bar):
            add(_fx_drafts, catalog, e, explored.get((bar, e.code), []))
    seen: set[str] = set()
    for e in [*entities("fund_nav"), *entities("fund_daily")]:
        if e.code not in seen:
            seen.add(e.code)
            add(_price_to_nav_drafts, catalog, e)
    return out


# --------------------------------------------------------------------------- texts


def _nouns(c: Candidate, lexicon: Lexicon, field: str | None = None) -> tuple[str, str]:
    entry = lexicon.require(c.facts.tool, field or c.facts.field)
    return entry.en, entry.zh


def _subject(c: Candidate) -> tuple[str, str]:
    return f"{c.entity_name} ({c.entity})", f"{c.entity_name}（{c.entity}）"


def question_en(c: Candidate, lexicon: Lexicon | None = None) -> str:
    """The English text of a family candidate."""
    lexicon = lexicon or load_lexicon()
    family = family_of(c)
    assert family is not None, f"{c.qid} is not a family candidate"
    name, param = family
    fmt = c.program.extract.format
    unit = unit_phrase_en(fmt)
    subj, _ = _subject(c)
    noun, _ = _nouns(c, lexicon)
    if name == "growth_period":
        return (f"For {subj}, by what percentage did the year-to-date {noun} of its most recently reported period "
                f"grow over the same period a year earlier{unit}?")
    if name == "growth_year":
        return (f"For {subj}, what was the growth of the {noun} in its most recent annual report over the "
                f"fiscal year before{unit}?")
    if name == "margin":
        label, den = _margin(param)
        num_en, _ = _nouns(c, lexicon)
        den_en, _ = _nouns(c, lexicon, den)
        return (f"For {subj}, what was the {label[0]} in its most recently reported period (year to date), "
                f"that is its {num_en} divided by its {den_en}{unit}?")
    if name == "payout":
        return (f"For {subj}, what was the payout ratio of its most recently implemented cash dividend, that is "
                f"the pre-tax cash dividend per share divided by the basic EPS of the period it pays for{unit}?")
    if name == "exdate_close":
        return (f"What was the {noun} of {subj} on the ex-dividend date of its most recently implemented "
                f"dividend{unit}?")
    if name == "since_exdate":
        return (f"For {subj}, by what percentage did the {noun} change from the ex-dividend date of its most "
                f"recently implemented dividend to the most recent trading day{unit}?")
    if name == "since_report":
        return (f"By what percentage has the {noun} of {subj} changed from the close on the day its most recent "
                f"financial report was published, or the first trading day after it, to the most recent trading day{unit}?")
    if name == "top_holding":
        return (f"For the largest stock holding of {subj} by market value in its most recently published "
                f"portfolio, what was that stock's {noun} on the most recent trading day{unit}?")
    if name == "top_constituent":
        return (f"For the constituent of {subj} with the highest weight at its most recent rebalance, what "
                f"was that stock's {noun} on the most recent trading day{unit}?")
    if name == "adj_return":
        what = "splits" if c.asset_class in ("hk_equity", "us_equity") else "splits and dividends"
        k = _sessions_spanned(c)
        span = (f"from the close {k} trading days before the most recent one to the most recent close" if k
                else f"over the last {param} trading days, from the first close to the most recent one")
        return (f"What was the return of {subj} {span}, adjusted for {what} with the cumulative "
                f"adjustment factor{unit}?")
    if name == "fx_convert":
        rates = "USD/CNH and USD/HKD" if c.asset_class == "hk_equity" else "USD/CNH"
        market = "Hong Kong" if c.asset_class == "hk_equity" else "New York"
        return (f"What was the {noun} of {subj} on the most recent {market} trading day, converted into CNY "
                f"at that day's closing {rates} bid {'rates' if '/HKD' in rates else 'rate'}{unit}?")
    if name == "price_to_nav":
        return (f"What was the premium of the {noun} of {subj} over its NAV per unit on the most recent trading "
                f"day whose NAV has been published, a discount being negative{unit}?")
    if name == "compare":
        other = f"{c.facts.other_entity_name} ({c.facts.other_entity})"
        k = _sessions_spanned(c) or int(param)
        return (f"By how much did the return of {subj} beat that of {other} from the close {k} trading days "
                f"before the most recent one to the most recent close{unit}?")
    raise ValueError(f"{c.qid}: unknown question family {name!r}")


def question_zh(c: Candidate, lexicon: Lexicon | None = None) -> str:
    """The Chinese text of a family candidate of the Chinese market."""
    lexicon = lexicon or load_lexicon()
    family = family_of(c)
    assert family is not None, f"{c.qid} is not a family candidate"
    name, param = family
    fmt = c.program.extract.format
    ask = ask_zh(fmt)
    _, subj = _subject(c)
    _, noun = _nouns(c, lexicon)
    if name == "growth_period":
        return f"{subj}最近一期已披露财报（年初至报告期末）的{noun}较上年同期增长了多少{ask.removeprefix('是多少')}"
    if name == "growth_year":
        return f"{subj}最近一期年度报告的{noun}较上一财年的增长率{ask}"
    if name == "margin":
        label, den = _margin(param)
        _, den_zh = _nouns(c, lexicon, den)
        return f"{subj}最近一期已披露财报（年初至报告期末）的{label[1]}（{noun}除以{den_zh}）{ask}"
    if name == "payout":
        return f"{subj}最近一次实施的现金分红的股利支付率（每股税前现金分红除以其所属报告期的基本每股收益）{ask}"
    if name == "exdate_close":
        return f"{subj}最近一次实施分红的除权除息日的{noun}{ask}"
    if name == "since_exdate":
        return f"{subj}自最近一次实施分红的除权除息日至最近一个交易日，{noun}的涨跌幅{ask}"
    if name == "since_report":
        return f"{subj}自最近一期财报公告当日或其后首个交易日的收盘至最近一个交易日收盘，{noun}的涨跌幅{ask}"
    if name == "top_holding":
        return f"{subj}最近一期公布的持仓中市值最大的股票，最近一个交易日的{noun}{ask}"
    if name == "top_constituent":
        return f"{subj}最近一次调整权重后权重最大的成分股，最近一个交易日的{noun}{ask}"
    if name == "adj_return":
        k = _sessions_spanned(c)
        start = f"最近一个交易日之前第{k}个交易日" if k else f"最近{param}个交易日的首日"
        return f"{subj}自{start}收盘至最近一个交易日收盘，按复权因子调整后的涨跌幅{ask}"
    if name == "price_to_nav":
        return f"{subj}最近一个已公布净值的交易日，{noun}相对单位净值的溢价率{ask.replace('？', '？折价以负数表示，', 1)}"
    if name == "compare":
        other = f"{c.facts.other_entity_name}（{c.facts.other_entity}）"
        k = _sessions_spanned(c) or int(param)
        return (f"自最近一个交易日之前第{k}个交易日收盘至最近一个交易日收盘，{subj}的涨跌幅比{other}"
                f"高多少{ask.removeprefix('是多少')}")
    raise ValueError(f"{c.qid}: no Chinese text for question family {name!r}")


def _sessions_spanned(c: Candidate) -> int | None:
    """Sessions from the first close of the extracted window to its last (the window convention
    the text states), or None when the window is not counted in sessions."""
    call = next(call for call in c.program.calls if call.id == c.program.extract.call)
    start, end = call.dates.get("start_date"), call.dates.get("end_date")
    if start is None or end is None or start.sessions_back is None or end.sessions_back is None:
        return None
    return start.sessions_back - end.sessions_back


def _margin(param: str) -> tuple[tuple[str, str], str]:
    for name, _, den, en, zh in MARGINS:
        if name == param:
            return (en, zh), den
    raise ValueError(f"unknown margin {param!r}")


def chain_en(c: Candidate) -> list[str]:
    """The steps of a family's program in words, for the LLM verbalizer's payload."""
    steps = []
    for call in c.program.calls:
        refs = ", ".join(f"{name} from {ref.call} ({ref.aggregate or ref.select.mode} {ref.arg_field or ref.field})"
                         for name, ref in call.refs.items())
        steps.append(f"{call.id}: {call.tool}" + (f" with {refs}" if refs else ""))
    ex = c.program.extract
    head = f"answer: {ex.aggregate or ex.select.mode} {ex.field} of {ex.call}"
    if ex.select.years_back:
        head += f" {ex.select.years_back} year(s) before the latest"
    if ex.times is not None:
        head += f" times {ex.times.field} of {ex.times.call}"
    if ex.combine is not None:
        for step in ex.combine.chain():
            other = step.other
            where = f" ({', '.join(f'{k}={v}' for k, v in other.select.where.items())})" if other.select.where else ""
            back = f" {other.select.years_back} year(s) before the latest" if other.select.years_back else ""
            head += f", {step.op} with {other.aggregate or other.select.mode} {other.field}{where}{back} of {other.call}"
    return [*steps, head]
