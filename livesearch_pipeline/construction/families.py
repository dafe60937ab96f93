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
| holding_industry | a fund's largest holding → that stock's industry index → the index's return over 5/20/60 sessions |
| named_high | a stock named as people name it (its short name or its ticker alone, where exactly one entity of the market answers to it): the announcement day of its latest report → its highest close since |
| adj_return | a window's closes times the cumulative adjustment factor (`times`) → the adjusted return |
| fx_convert | a Hong Kong or US figure × the day's FX rate(s) → CNY |
| price_to_nav | the latest published NAV date → the ETF's close that day, its premium over the NAV |
| compare | two instruments' returns over the same window, the difference in percentage points |
| drawdown | the largest fall from a running peak over 60/120 sessions (adjusted closes for a stock or fund): the fall, its peak day, its trough day |
| volume_day | the session of the highest volume among the last 20/60 → that session's change |
| best_month | the month of the largest gain among the last 12/24 completed months → its closing level, its turnover value |
| screen | an index's constituents (latest rebalance) or an industry's members in the latest session's cross-section: the largest fall, the highest turnover value or turnover rate, how many closed up |
| three_indices | three named indices over the same 5/20/60 sessions: which gained (fell) the most |

To add a family: write a `_<name>_drafts` generator returning `_Draft`s with anchor
`family:<name>`, add it to `family_drafts`, and give it a text in `question_en` / `question_zh`
and a chain in `chain_en` (the LLM payload); tests in livesearch_pipeline_tests/construction/test_families.py.
"""

from __future__ import annotations

from collections import Counter
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
    Membership,
    Pick,
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
# Three steps: a fund's largest holding, that stock's industry index, the index's return.
HOLDING_INDUSTRY_WINDOWS = (5, 20, 60)
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
    "index": ("index_weight", "index_member", "index_daily"),
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


def _since_report_calls(catalog: Catalog, entity: EntityInfo,
                        lookback: dict[str, DateSpec]) -> tuple[ToolMeta, list[Call], Selection] | None:
    """The calls of the window since the latest report: the statement (c1) and the stock's bars from
    that report's announcement to D (c2, `start_date` read from c1); with the bar tool and the
    selection of every bar of c2. None when the entity's class has no statement/bar pair."""
    pair = STATEMENT_TOOLS.get(entity.asset_class)
    tools = _tools(catalog, *pair) if pair else None
    if not tools or not entity.calendar:
        return None
    statement, bar = tools
    c1 = Call(id="c1", tool=statement.name, args={statement.entity_param: entity.code}, dates=lookback)
    announced = _latest("c1", statement.time_key, "ann_date")
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


TICKER_CLASSES = ("cn_equity", "hk_equity", "us_equity")


def ticker_of(code: str) -> str:
    """A stock's ticker as people type it: its code without the exchange suffix (600123, 00721, AAPL)."""
    return code.split(".")[0]


def unique_handles(entities: Sequence[EntityInfo]) -> dict[str, str]:
    """code -> how a question may name the stock alone: "name" when exactly one entity of the
    market answers to its short name, else "ticker" when exactly one answers to its ticker (no
    other entity has it as name, code or ticker); stocks with neither are left out."""
    seen: Counter = Counter()
    for e in entities:
        # Every code's bare digits count (people say 000001 for an index too), but only a stock
        # is named by its ticker.
        handles = {e.name, e.code, ticker_of(e.code)}
        seen.update(h.casefold() for h in handles)
    out = {}
    for e in entities:
        if e.asset_class not in TICKER_CLASSES:
            continue
        if seen[e.name.casefold()] == 1:
            out[e.code] = "name"
        elif seen[ticker_of(e.code).casefold()] == 1:
            out[e.code] = "ticker"
    return out


def _named_high_drafts(catalog: Catalog, entity: EntityInfo, lookback: dict[str, DateSpec],
                       handle: str) -> list[FamilyDraft]:
    """The highest close since the announcement of the latest report, the stock named by `handle`
    alone ("name" or "ticker"): the calls of `since_report`, another reading of them."""
    found = _since_report_calls(catalog, entity, lookback)
    if found is None:
        return []
    bar, calls, every_bar = found
    f = bar.field("close")
    ex = Extractor(call="c2", select=every_bar, field="close", aggregate="max", format=_fmt(bar, f, 10.0))
    return [FamilyDraft(Program(calls=calls, extract=ex), entity, bar, f, f"named_high:{handle}",
                        aggregate="max")]


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
                  dates=_return_window(bars, "XSHG", n))
        ex = Extractor(call="c3", select=Selection(mode="all", key=bars.time_key, key_fmt=YMD), field="close",
                       aggregate="pct_change", format=PERCENT)
        out.append(FamilyDraft(Program(calls=[c1, c2, c3], extract=ex), entity, bars, bars.field("close"),
                               f"holding_industry:{n}", aggregate="pct_change"))
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
                  problems: list[str] | None = None, handles: Mapping[str, str] | None = None) -> list[FamilyDraft]:
    """Every family's drafts over the entities enumeration covered, by tool (`covered[tool]`).

    `handles` (`unique_handles` over every entity of the market) names the stocks a question may
    name by their short name or ticker alone (`named_high`); without it none is.

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
                if handles and e.code in handles:
                    add(_named_high_drafts, catalog, e, lookback_of(tool, e), handles[e.code])
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
                if family == "top_holding":
                    add(_holding_industry_drafts, catalog, e, tool, lookback_of(tool, e))
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
    add(investigation_drafts, catalog, covered, explored, lookback_of)
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
    if name == "named_high":
        return (f"What was the highest {noun} of {_handle(c, param)} since the day its most recent financial report "
                f"was published, counting that day{unit}?")
    if name == "holding_industry":
        k = _sessions_spanned(c) or int(param)
        return (f"Take the largest stock holding of {subj} by market value in its most recently published "
                f"portfolio. By what percentage did the industry index that stock belongs to change from the close "
                f"{k} trading days before the most recent one to the most recent close{unit}?")
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
    if name in INVESTIGATIONS:
        return _investigation_en(c, name, param, lexicon)
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
    if name == "named_high":
        return f"{_handle(c, param)}自最近一期财报公告当日起至最近一个交易日的最高{noun}{ask}"
    if name == "holding_industry":
        k = _sessions_spanned(c) or int(param)
        return (f"{subj}最近一期公布的持仓中市值最大的股票，其所属行业指数自最近一个交易日之前第{k}个交易日收盘"
                f"至最近一个交易日收盘的涨跌幅{ask}")
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
    if name in INVESTIGATIONS:
        return _investigation_zh(c, name, param, lexicon)
    raise ValueError(f"{c.qid}: no Chinese text for question family {name!r}")


def _handle(c: Candidate, how: str) -> str:
    """The stock as people name it: its short name or its ticker alone (`unique_handles`)."""
    return c.entity_name if how == "name" else ticker_of(c.entity)


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
    if ex.select.within is not None:
        member = ex.select.within
        head += (f" across the records whose {member.key} is a {member.field} of {member.call} "
                 f"({member.select.mode} {member.select.key})")
    if ex.select.above:
        head += " with " + ", ".join(f"{k} above {v:g}" for k, v in ex.select.above.items())
    if ex.arg_field is not None:
        head += f", answered with the winning record's {ex.arg_field}"
    if ex.pick is not None:
        compared = ", ".join(f"{o.aggregate or o.select.mode} {o.field} of {o.call}" for o in ex.pick.others)
        head += f", against {compared}: the {ex.pick.op} among {', '.join(ex.pick.labels)}"
    if ex.combine is not None:
        for step in ex.combine.chain():
            other = step.other
            where = f" ({', '.join(f'{k}={v}' for k, v in other.select.where.items())})" if other.select.where else ""
            back = f" {other.select.years_back} year(s) before the latest" if other.select.years_back else ""
            head += f", {step.op} with {other.aggregate or other.select.mode} {other.field}{where}{back} of {other.call}"
    return [*steps, head]


# --------------------------------------------------------------------------- T3 investigations (issue 29)
# Modelled on FinSearchComp's T3: a path over a window, a ranking over a window read at its
# winning record, a screen across a cross-section of the market, a pick among named instruments.
# Rankings decide on one value: a tie at it is `empty` ("tie: ...", core/extract.py), dropped at
# construction and withdrawn on the day it happens.

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
# The cross-section a screen reads (every A-share on one session) and what it ranks or counts:
# (family parameter, tool, field, aggregate).
SCREENS = (("largest_fall", "daily", "pct_chg", "argmin"), ("top_amount", "daily", "amount", "argmax"),
           ("top_turnover", "daily_basic", "turnover_rate", "argmax"), ("count_up", "daily", "pct_chg", "count"))
# The set a screen runs across: an index's constituents at its latest rebalance, or an industry
# index's members (tool, member field, time key of the latest set or None for every member).
SCREEN_SETS = {"index_weight": ("con_code", "trade_date"), "index_member": ("con_code", None)}
PICK_WINDOWS = (5, 20, 60)
CODE = Format(kind="text")


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
    tools = _tools(catalog, *pair) if pair else _tools(catalog, bar_name) if bar_name else None
    if not tools:
        return []
    bar = tools[0]
    out = []
    for n in DRAWDOWN_WINDOWS:
        calls = [Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code}, dates=_window(bar, entity.calendar, n))]
        join = None
        if pair:
            factor = tools[1]
            calls.append(Call(id="c2", tool=factor.name, args={factor.entity_param: entity.code},
                              dates=_window(factor, entity.calendar, n)))
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
    tools = _tools(catalog, VOLUME_DAY_BARS.get(entity.asset_class, ""))
    if not tools or not entity.calendar:
        return []
    bar = tools[0]
    if bar.field("vol") is None or bar.field("pct_chg") is None:
        return []
    out = []
    for n in VOLUME_DAY_WINDOWS:
        c1 = Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code}, dates=_window(bar, entity.calendar, n))
        ex = Extractor(call="c1", select=Selection(mode="all", key=bar.time_key, key_fmt=YMD), field="vol",
                       aggregate="argmax", arg_field="pct_chg", format=PERCENT)
        out.append(FamilyDraft(Program(calls=[c1], extract=ex), entity, bar, bar.field("pct_chg"),
                               f"volume_day:{n}", aggregate="argmax"))
    return out


def _best_month_drafts(catalog: Catalog, entity: EntityInfo, records: Sequence[Mapping[str, Any]]) -> list[FamilyDraft]:
    """The completed month of the largest gain among the last 12 or 24, read at its close and its
    turnover value."""
    tools = _tools(catalog, BEST_MONTH_BARS.get(entity.asset_class, ""))
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
            sample = _sample(records, name) or RESOLVED_SAMPLES.get(name, 10.0)
            ex = Extractor(call="c1", select=Selection(mode="all", key=bar.time_key, key_fmt=YMD), field="pct_chg",
                           aggregate="argmax", arg_field=name, format=_fmt(bar, f, sample))
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
        tools = _tools(catalog, tool_name)
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
            dates = _return_window(tool, cal, n)
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


# --------------------------------------------------------------------------- texts of the investigations

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
SCREEN_ASK_EN = {"largest_fall": "fell the most in percentage terms",
                 "top_amount": "had the highest turnover value", "top_turnover": "had the highest turnover rate"}
SCREEN_ASK_ZH = {"largest_fall": "涨跌幅最低", "top_amount": "成交额最高", "top_turnover": "换手率最高"}


def _screen_set(c: Candidate) -> str:
    return c.program.calls[0].tool


def _investigation_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    fmt = c.program.extract.format
    unit = unit_phrase_en(fmt)
    subj, _ = _subject(c)
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
        noun, _ = _nouns(c, lexicon)
        return (f"Among the last {param} completed calendar months, take the month in which {subj} had its highest "
                f"monthly percentage change. What was its {noun} in that month{unit}?")
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
        verb = "rose the most" if move == "gain" else "fell the most"
        return (f"Of the indices {codes[0]}, {codes[1]} and {codes[2]}, which {verb} in percentage terms from the "
                f"close {n} trading days before the most recent one to the most recent close? Answer with its "
                f"index code.")
    raise ValueError(f"{c.qid}: unknown question family {name!r}")


def _investigation_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    fmt = c.program.extract.format
    ask = ask_zh(fmt)
    _, subj = _subject(c)
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
        _, noun = _nouns(c, lexicon)
        return f"{subj}最近{param}个已结束的自然月中月涨跌幅最高的那个月，其{noun}{ask}"
    if name == "screen":
        members = SCREEN_SET_ZH[_screen_set(c)].format(subj=subj)
        if param == "count_up":
            return f"最近一个交易日，{members}中收盘价高于前收盘价的股票有多少只？请给出整数。"
        return f"最近一个交易日，{members}中{SCREEN_ASK_ZH[param]}的是哪一只股票？请给出其股票代码。"
    if name == "three_indices":
        move, n = param.split(":")
        codes = c.program.extract.pick.labels
        verb = "涨幅最大" if move == "gain" else "跌幅最大"
        return (f"自最近一个交易日之前第{n}个交易日收盘至最近一个交易日收盘，{codes[0]}、{codes[1]}和{codes[2]}"
                f"三个指数中哪一个{verb}？请给出其指数代码。")
    raise ValueError(f"{c.qid}: no Chinese text for question family {name!r}")
