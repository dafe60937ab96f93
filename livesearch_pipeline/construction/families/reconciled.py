"""Families whose answer must be reconciled first (issue 39): compound growth over several annual
reports of a company's own fiscal years, restated where restated (`cagr`), year-on-year growth
against the comparative as first reported, before the restatement a later report made
(`growth_first`; `growth_period` reads the restated one), the growth of the latest annual report
of a company whose fiscal year is not the calendar year over its fiscal year before
(`fiscal_growth`), the A/H premium of a
dual-listed company across two markets and two currencies (`ah_premium`), and a Hong Kong
company's market value (HKD) against a figure of its latest annual report in the currency it
reports in (`cross_currency`: price-to-sales and price-to-earnings in one currency).

Each program is drafted from the market's listings (`DraftInputs.basics`: a stock's H or A code,
its reporting currency) or from the statements enumeration explored; the texts state the
conventions a professional states: which fiscal years, which version of a restated figure, which
exchange's day, which FX rates convert which currency into which.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from livesearch_pipeline.construction.families.base import (
    LATEST_SESSIONS,
    PERCENT,
    STATEMENT_TOOLS,
    YMD,
    DraftInputs,
    Family,
    FamilyDraft,
    first_number,
    gold_tools,
    latest,
    nouns,
    other_names,
    session_window,
    subject,
)
from livesearch_pipeline.construction.formats import ask_zh, unit_phrase_en
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.core.catalog import Catalog, ToolMeta
from livesearch_pipeline.core.lexicon import Lexicon
from livesearch_pipeline.core.models import Call, Combine, DateSpec, Extractor, Format, Program

# --------------------------------------------------------------------------- cagr

CAGR_FIELDS = ("revenue", "n_income_attr_p")
# Years compounded over: from the annual report of the fiscal year 3 (4) years before the latest
# one to the latest, i.e. four (five) annual reports.
CAGR_YEARS = (3, 4)
# Announcement dates the statement call covers: five fiscal years and the lag of a March year's
# annual report (issue 39: a March year's annual report comes within three months).
CAGR_LOOKBACK_DAYS = 2200
ANNUAL = {"end_type": "4"}


def annual_dates(tool: ToolMeta, days: int) -> dict[str, DateSpec]:
    """The statement call's announcement window: the last `days` days to D."""
    start = next(p for p in tool.date_params if p.role == "start")
    end = next(p for p in tool.date_params if p.role == "end")
    return {start.name: DateSpec(days_back=days, fmt=start.fmt), end.name: DateSpec(days_back=0, fmt=end.fmt)}


def _cagr_drafts(catalog: Catalog, entity: EntityInfo, records: Sequence[Mapping[str, Any]]) -> list[FamilyDraft]:
    """Per growth field and horizon: the latest annual report's figure against the one `n` fiscal
    years before it, compounded (both as most recently published: restated where restated)."""
    pair = STATEMENT_TOOLS.get(entity.asset_class)
    tools = gold_tools(catalog, pair[0]) if pair else None
    if not tools or tools[0].field("end_type") is None:
        return []
    tool = tools[0]
    call = Call(id="c1", tool=tool.name, args={tool.entity_param: entity.code},
                dates=annual_dates(tool, CAGR_LOOKBACK_DAYS))
    key = tool.time_key
    out = []
    for name in CAGR_FIELDS:
        f = tool.field(name)
        if f is None or first_number(records, name) is None:
            continue
        for n in CAGR_YEARS:
            ex = Extractor(**latest("c1", key, name, where=ANNUAL, where_first=True).model_dump(), format=PERCENT,
                           combine=Combine(op="cagr", years=n,
                                           other=latest("c1", key, name, where=ANNUAL, where_first=True, years_back=n)))
            out.append(FamilyDraft(Program(calls=[call], extract=ex), entity, tool, f, f"cagr:{n}"))
    return out


def _draft_cagr(inputs: DraftInputs) -> None:
    for statement, _ in STATEMENT_TOOLS.values():
        for e in inputs.entities(statement):
            records = inputs.explored.get((statement, e.code), [])
            if records:
                inputs.add(_cagr_drafts, inputs.catalog, e, records)


def _cagr_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    noun, _ = nouns(c, lexicon)
    return (f"For {subj}, what was the compound annual growth rate of its {noun} over the {param} fiscal years to its "
            f"most recent annual report, from the annual report of the fiscal year {param} years before it, taking "
            f"each year's figure as most recently published, restated where the company restated it{unit}?")


def _cagr_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    _, subj = subject(c)
    _, noun = nouns(c, lexicon)
    return (f"{subj}最近一期年度报告的{noun}相对{param}个财年之前年度报告的年均复合增长率，各财年均按最新披露的数据、"
            f"经追溯重述的取重述后数据计算，{ask_zh(c.program.extract.format)}")


CAGR = Family(names=("cagr",), draft=_draft_cagr, question_en=_cagr_en, question_zh=_cagr_zh,
              where_forms={("end_type", "4"): ("annual report", "年度报告")}, zh_classes=frozenset({"hk_equity"}))

# --------------------------------------------------------------------------- growth_first

GROWTH_FIRST_FIELDS = ("revenue", "n_income_attr_p")


def _growth_first_drafts(catalog: Catalog, entity: EntityInfo, records: Sequence[Mapping[str, Any]],
                         lookback: dict[str, DateSpec]) -> list[FamilyDraft]:
    """The latest reported period (year to date) against the same period a year earlier as first
    reported: `growth_period`'s call, its comparative read at `revision: "first"`."""
    pair = STATEMENT_TOOLS.get(entity.asset_class)
    tools = gold_tools(catalog, pair[0]) if pair else None
    if not tools or tools[0].revision_field is None:
        return []
    tool = tools[0]
    call = Call(id="c1", tool=tool.name, args={tool.entity_param: entity.code}, dates=lookback)
    key = tool.time_key
    out = []
    for name in GROWTH_FIRST_FIELDS:
        f = tool.field(name)
        if f is None or first_number(records, name) is None:
            continue
        ex = Extractor(**latest("c1", key, name).model_dump(), format=PERCENT,
                       combine=Combine(op="pct_difference", other=latest("c1", key, name, years_back=1, revision="first")))
        out.append(FamilyDraft(Program(calls=[call], extract=ex), entity, tool, f, "growth_first"))
    return out


def _draft_growth_first(inputs: DraftInputs) -> None:
    for statement, _ in STATEMENT_TOOLS.values():
        tool = inputs.catalog.get(statement)
        if tool is None:
            continue
        for e in inputs.entities(statement):
            records = inputs.explored.get((statement, e.code), [])
            if records:
                inputs.add(_growth_first_drafts, inputs.catalog, e, records, inputs.lookback_of(tool, e))


def _growth_first_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    noun, _ = nouns(c, lexicon)
    return (f"For {subj}, what was the year-on-year growth of the year-to-date {noun} of its most recently reported "
            f"period over the same period a year earlier as first reported, not as any later report restated "
            f"it{unit}?")


def _growth_first_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    _, subj = subject(c)
    _, noun = nouns(c, lexicon)
    return (f"{subj}最近一期已披露财报（年初至报告期末）的{noun}相对上年同期首次披露数据的同比增长率，上年同期数不采用其后"
            f"报告追溯重述的数据，{ask_zh(c.program.extract.format)}")


GROWTH_FIRST = Family(names=("growth_first",), draft=_draft_growth_first, question_en=_growth_first_en,
                      question_zh=_growth_first_zh)

# --------------------------------------------------------------------------- fiscal_growth

FISCAL_FIELDS = ("revenue", "n_income_attr_p")
FISCAL_PER_LEVEL = 2  # companies per visibility level and class
# Announcements the statement call covers: the latest annual report (up to 15 months old) and the
# one a fiscal year before it.
FISCAL_LOOKBACK_DAYS = 900
CALENDAR_YEAR_END = "1231"


def _fiscal_drafts(catalog: Catalog, entity: EntityInfo) -> list[FamilyDraft]:
    """The latest annual report of the company's own fiscal year against the fiscal year before,
    the prior year as most recently published (restated in the latest annual report where it was)."""
    pair = STATEMENT_TOOLS.get(entity.asset_class)
    tools = gold_tools(catalog, pair[0]) if pair else None
    if not tools or tools[0].field("end_type") is None:
        return []
    tool = tools[0]
    call = Call(id="c1", tool=tool.name, args={tool.entity_param: entity.code},
                dates=annual_dates(tool, FISCAL_LOOKBACK_DAYS))
    key = tool.time_key
    out = []
    for name in FISCAL_FIELDS:
        f = tool.field(name)
        if f is None:
            continue
        ex = Extractor(**latest("c1", key, name, where=ANNUAL, where_first=True).model_dump(), format=PERCENT,
                       combine=Combine(op="pct_difference",
                                       other=latest("c1", key, name, where=ANNUAL, where_first=True, years_back=1)))
        out.append(FamilyDraft(Program(calls=[call], extract=ex), entity, tool, f, "fiscal_growth"))
    return out


def _draft_fiscal(inputs: DraftInputs) -> None:
    taken: dict[tuple[str, int], int] = {}
    for code, basic in sorted(inputs.basics.items(), key=lambda kv: kv[0]):
        e = inputs.market.get(code)
        fy_end = basic.get("fy_end")
        if e is None or e.asset_class not in STATEMENT_TOOLS or not fy_end or fy_end == CALENDAR_YEAR_END:
            continue
        slot = (e.asset_class, e.visibility)
        if taken.get(slot, 0) >= FISCAL_PER_LEVEL:
            continue
        taken[slot] = taken.get(slot, 0) + 1
        inputs.add(_fiscal_drafts, inputs.catalog, e)


def _fiscal_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    noun, _ = nouns(c, lexicon)
    return (f"For {subj}, whose fiscal year is not the calendar year, what was the growth of its {noun} in the fiscal "
            f"year of its most recent annual report over the fiscal year before, the prior year as most recently "
            f"published, restated where the company restated it{unit}?")


def _fiscal_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    _, subj = subject(c)
    _, noun = nouns(c, lexicon)
    return (f"{subj}的财政年度并非自然年度，其最近一期年度报告所属财年的{noun}较上一财年的增长率，上一财年按最新披露的数据、"
            f"经追溯重述的取重述后数据计算，{ask_zh(c.program.extract.format)}")


FISCAL_GROWTH = Family(names=("fiscal_growth",), draft=_draft_fiscal, question_en=_fiscal_en,
                       question_zh=_fiscal_zh, where_forms={("end_type", "4"): ("annual report", "年度报告")},
                       zh_classes=frozenset({"hk_equity"}))

# --------------------------------------------------------------------------- FX legs

FX_TOOL = "fx_daily"
FX_FIELD = "bid_close"
USDCNH, USDHKD = "USDCNH.FXCM", "USDHKD.FXCM"

# --------------------------------------------------------------------------- ah_premium

# Sessions before the latest Shanghai session the premium is read on.
AH_SESSIONS_BACK = (0, 5, 20)


def _ah_drafts(catalog: Catalog, a: EntityInfo, h: EntityInfo) -> list[FamilyDraft]:
    """The A/H premium k sessions before the latest Shanghai session: the A close (CNY) over the
    H close converted into CNY at the closing USD/CNH and USD/HKD bids, minus one; each the
    latest on or before that Shanghai session (A ÷ USDCNH × USDHKD is the A close in HKD, its
    percentage difference from the H close is the premium)."""
    tools = gold_tools(catalog, "daily", "hk_daily", FX_TOOL)
    if not tools:
        return []
    daily, hk_daily, fx = tools
    out = []
    for k in AH_SESSIONS_BACK:
        anchor = DateSpec(sessions_back=k, calendar="XSHG", fmt=YMD)
        # The Shanghai session of the premium (the A share's latest close on or before it): the H
        # close and the rates are each the latest on or before that day.
        day = latest("c1", daily.time_key, daily.time_key, anchor=anchor)
        calls = [
            Call(id="c1", tool=daily.name, args={daily.entity_param: a.code}, dates=session_window(daily, "XSHG", k + 10)),
            Call(id="c2", tool=hk_daily.name, args={hk_daily.entity_param: h.code}, refs={_end(hk_daily): day},
                 dates={_start(hk_daily): DateSpec(sessions_back=k + 15, calendar="XHKG", fmt=YMD)}),
            Call(id="c3", tool=fx.name, refs={_end(fx): day}, dates={_start(fx): DateSpec(days_back=2 * k + 20, fmt=YMD)}),
        ]
        rate = [latest("c3", fx.time_key, FX_FIELD, where={"ts_code": code}) for code in (USDCNH, USDHKD)]
        steps = Combine(op="ratio", other=rate[0], then=Combine(
            op="product", other=rate[1], then=Combine(
                op="pct_difference", other=latest("c2", hk_daily.time_key, "close"))))
        ex = Extractor(**latest("c1", daily.time_key, "close", anchor=anchor).model_dump(), combine=steps,
                       format=PERCENT)
        out.append(FamilyDraft(Program(calls=calls, extract=ex), a, daily, daily.field("close"), f"ah_premium:{k}",
                               other=h))
    return out


def _start(tool: ToolMeta) -> str:
    return next(p.name for p in tool.date_params if p.role == "start")


def _end(tool: ToolMeta) -> str:
    return next(p.name for p in tool.date_params if p.role == "end")


def _draft_ah(inputs: DraftInputs) -> None:
    for code, basic in sorted(inputs.basics.items()):
        h_code = basic.get("h_code")
        a, h = inputs.market.get(code), inputs.market.get(str(h_code)) if h_code else None
        if a is not None and h is not None and a.asset_class == "cn_equity" and h.asset_class == "hk_equity":
            inputs.add(_ah_drafts, inputs.catalog, a, h)


def _ah_when(k: int) -> tuple[str, str]:
    if k == 0:
        return "on the most recent Shanghai Stock Exchange trading day", "最近一个上海证券交易所交易日"
    return (f"on the Shanghai Stock Exchange trading day {k} sessions before the most recent one",
            f"最近一个上海证券交易所交易日之前第{k}个交易日")


def _ah_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    other, _ = other_names(c)
    when, _ = _ah_when(int(param))
    return (f"What was the A/H premium of {subj} over its H share {other} {when}, that is its A share's CNY close "
            f"divided by the H share's HKD close converted into CNY at the closing USD/CNH and USD/HKD bid rates, "
            f"minus one, each the latest on or before that day, a discount being negative{unit}?")


def _ah_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    _, subj = subject(c)
    _, other = other_names(c)
    _, when = _ah_when(int(param))
    ask = ask_zh(c.program.extract.format).replace("？", "？折价以负数表示，", 1)
    return (f"{when}，{subj}相对其H股{other}的A/H溢价率，即A股人民币收盘价除以按美元兑离岸人民币与美元兑港元收盘买入价"
            f"折算为人民币的H股港元收盘价再减一，各价格与汇率均取该日或之前最近的数据，{ask}")


AH_PREMIUM = Family(names=("ah_premium",), draft=_draft_ah, question_en=_ah_en, question_zh=_ah_zh)

# --------------------------------------------------------------------------- cross_currency

# (parameter, statement field): market value over the latest annual revenue (P/S) or net profit
# attributable to shareholders (P/E), both in the reporting currency.
CROSS_MEASURES = (("ps", "revenue"), ("pe", "n_income_attr_p"))
CROSS_LABELS = {"ps": ("price-to-sales ratio", "市销率"), "pe": ("price-to-earnings ratio", "市盈率")}
# Reporting currencies other than the trading currency (HKD), with the FX legs that convert HKD
# into them: (pair, combine op) applied to the HKD market value.
CROSS_LEGS = {"CNY": ((USDCNH, "product"), (USDHKD, "ratio")), "USD": ((USDHKD, "ratio"),)}
CROSS_PER_LEVEL = 2  # reporters per visibility level
CROSS_LOOKBACK_DAYS = 500  # announcements covering the latest annual report (a year and its lag)
MULTIPLE = Format(kind="number", decimals=2)


def _cross_drafts(catalog: Catalog, entity: EntityInfo, currency: str) -> list[FamilyDraft]:
    """The market value on the latest Hong Kong session (HKD), converted at that day's closing
    bids into the reporting currency, over the latest annual report's revenue or profit."""
    tools = gold_tools(catalog, "hk_daily_adj", FX_TOOL, "hk_income")
    legs = CROSS_LEGS.get(currency)
    if not tools or not legs:
        return []
    bar, fx, statement = tools
    c1 = Call(id="c1", tool=bar.name, args={bar.entity_param: entity.code},
              dates=session_window(bar, "XHKG", LATEST_SESSIONS))
    point = next(p for p in fx.date_params if p.role == "point")
    c2 = Call(id="c2", tool=fx.name, refs={point.name: latest("c1", bar.time_key, bar.time_key)})
    c3 = Call(id="c3", tool=statement.name, args={statement.entity_param: entity.code},
              dates=annual_dates(statement, CROSS_LOOKBACK_DAYS))
    out = []
    for param, name in CROSS_MEASURES:
        if statement.field(name) is None:
            continue
        steps: Combine | None = Combine(op="ratio", other=latest("c3", statement.time_key, name, where=ANNUAL,
                                                                  where_first=True))
        for code, op in reversed(legs):
            steps = Combine(op=op, other=latest("c2", fx.time_key, FX_FIELD, where={"ts_code": code}), then=steps)
        ex = Extractor(**latest("c1", bar.time_key, "total_mv").model_dump(), combine=steps, format=MULTIPLE)
        out.append(FamilyDraft(Program(calls=[c1, c2, c3], extract=ex), entity, bar, bar.field("total_mv"),
                               f"cross_currency:{param}"))
    return out


def _draft_cross(inputs: DraftInputs) -> None:
    by_level: dict[int, int] = {}
    # Not the H share of an A+H company: its market value counts the H shares only, while its
    # statements are the whole company's (its valuation needs both classes' market value).
    reporters = sorted((e.visibility, e.code) for code, basic in inputs.basics.items()
                       if basic.get("report_curr") in CROSS_LEGS and not basic.get("a_code")
                       and (e := inputs.market.get(code)) is not None and e.asset_class == "hk_equity")
    for level, code in reporters:
        if by_level.get(level, 0) >= CROSS_PER_LEVEL:
            continue
        by_level[level] = by_level.get(level, 0) + 1
        inputs.add(_cross_drafts, inputs.catalog, inputs.market[code], str(inputs.basics[code]["report_curr"]))


def reporting_currency(c: Candidate) -> str:
    """The currency a cross-currency program converts into, from its FX legs."""
    pairs = [step.other.select.where.get("ts_code") for step in c.program.extract.combine.chain()]  # type: ignore[union-attr]
    return "CNY" if USDCNH in pairs else "USD"


def _cross_en(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    unit = unit_phrase_en(c.program.extract.format)
    subj, _ = subject(c)
    currency = reporting_currency(c)
    label = CROSS_LABELS[param][0]
    figure, _ = nouns(c, lexicon, dict(CROSS_MEASURES)[param])
    rates = "USD/CNH and USD/HKD bid rates" if currency == "CNY" else "USD/HKD bid rate"
    return (f"What was the {label} of {subj} on the most recent Hong Kong Stock Exchange trading day, taken as its "
            f"HKD total market capitalisation converted into {currency} at that day's closing {rates}, divided by "
            f"the {figure} of its most recent annual report, whose reporting currency is {currency}{unit}?")


def _cross_zh(c: Candidate, name: str, param: str, lexicon: Lexicon) -> str:
    _, subj = subject(c)
    currency = reporting_currency(c)
    label = CROSS_LABELS[param][1]
    _, figure = nouns(c, lexicon, dict(CROSS_MEASURES)[param])
    money = "人民币" if currency == "CNY" else "美元"
    rates = "美元兑离岸人民币与美元兑港元收盘买入价" if currency == "CNY" else "美元兑港元收盘买入价"
    return (f"{subj}最近一个香港交易所交易日的{label}，即其港元总市值按当日{rates}折算为{money}后，除以其最近一期"
            f"年度报告以{money}列报的{figure}，{ask_zh(c.program.extract.format)}")


CROSS_CURRENCY = Family(names=("cross_currency",), draft=_draft_cross, question_en=_cross_en, question_zh=_cross_zh,
                        zh_classes=frozenset({"hk_equity"}))
