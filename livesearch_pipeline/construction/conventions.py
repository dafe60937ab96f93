"""The conventions of docs/design.md §4.8 that a question's text states (issue 40): whose trading
days a window counts, what a stock's suspension does to a window, which minute a one-minute bar
covers, which report a segment figure comes from, what an ETF's volume counts, which change picks a
"best month" and which series a market-wide figure belongs to. One place for the phrases, so the
template verbalizer, the families' texts, the lint and the LLM verbalizer's payload say the same.

| convention | what the program does | what the text says |
|---|---|---|
| calendar of a series | a rate, statistic, market total or FX pair counts the sessions of its program's calendar (FX: weekdays) | the calendar by name: "Shanghai Stock Exchange trading days", "上海证券交易所交易日", "weekdays", "工作日" |
| suspended stocks | a window is the exchange's last N sessions; a session the stock was suspended on has no record (an aggregate reads its traded sessions, a change runs from its first close in the window to its last); a snapshot or latest record on a suspended day is withdrawn | a stock's window question ends with the sentence `SUSPENSION_EN` / `SUSPENSION_ZH` |
| minute bars | a bar is stamped at its end (`trade_time`): the 10:30 bar covers 10:29–10:30 | "the one-minute bar from 10:29 to 10:30" |
| a report's date | a statement's `ann_date` (equal to `f_ann_date`): the announcement | "announced", "公告" |
| segments | `fina_mainbz` carries the half-year and annual reports only | "the most recent half-year or annual report" |
| ETF volume | `fund_daily.vol` counts lots of 100 fund units | "units" / "份" (format unit `units`) |
| best month | `monthly.pct_chg` is the unadjusted close against the previous month's | a stock's best month says "unadjusted" / "未复权" |
"""

from __future__ import annotations

from dataclasses import dataclass

from livesearch_pipeline.construction.models import Candidate
from livesearch_pipeline.core.models import Program

CALENDAR_EN = {"XSHG": "Shanghai Stock Exchange", "XHKG": "Hong Kong Stock Exchange", "XNYS": "New York Stock Exchange"}
CALENDAR_ZH = {"XSHG": "上海证券交易所", "XHKG": "香港交易所", "XNYS": "纽约证券交易所"}
# An FX pair quotes every weekday: its windows count weekdays (construction/sampling.py `weekday_span`).
WEEKDAYS = "weekdays"
EQUITY_CLASSES = frozenset({"cn_equity", "hk_equity", "us_equity"})
SUSPENSION_EN = "Trading days are the exchange's; a day a stock was suspended counts but has no record for it."
SUSPENSION_ZH = "交易日按交易所日历计算，股票停牌的交易日计入区间但无该股行情记录。"
# Tools whose records come from the half-year and annual reports only (not the quarterly ones).
SEGMENT_TOOLS = frozenset({"fina_mainbz"})
SEGMENT_WHEN = ("for its most recent half-year or annual report (year to date)",
                "最近一期已披露的半年度或年度报告（年初至报告期末）")

# The words that name each market-wide series (any one suffices, EN or ZH): a text about a rate,
# a statistic or a market total names whose it is (issue 40: "an extrapolation factor" of what?).
# An FX pair is named by its pair (the lint's series forms). A new market-wide tool gets an
# entry here (test_conventions_text.py fails until it has one).
SERIES_NAMES: dict[str, tuple[str, ...]] = {
    "moneyflow_hsgt": ("Stock Connect", "northbound", "southbound", "沪深港通", "北向", "南向", "港股通", "沪股通",
                       "深股通"),
    "margin": ("margin", "securities lending", "shares on loan", "融资", "融券"),
    "cn_cpi": ("CPI", "消费价格"),
    "cn_ppi": ("PPI", "生产价格", "出厂价格", "购进价格"),
    "cn_m": ("money supply", "M0", "M1", "M2", "货币供应", "货币"),
    "sf_month": ("social financing", "社会融资"),
    # The NBS release's own names of its sub-indices (制造业生产指数, non-manufacturing business activity).
    "cn_pmi": ("PMI", "采购经理", "business activity", "制造业", "商务活动"),
    "cn_gdp": ("GDP", "gross domestic product", "value added", "国内生产总值", "增加值"),
    "shibor": ("SHIBOR",),
    "shibor_lpr": ("loan prime rate", "LPR", "贷款市场报价利率", "贷款基础利率"),
    "hibor": ("HIBOR",),
    "us_tycr": ("Treasury",),
    "us_trycr": ("Treasury",),
    "us_tbr": ("Treasury", "bill"),
    "us_tltr": ("Treasury",),
    "us_trltr": ("Treasury",),
    "fx_daily": (),
    "fx_obasic": (),
}


@dataclass(frozen=True)
class Days:
    """How a text counts days: the instrument's own exchange's sessions (implied, `calendar` None),
    a named exchange calendar's, or FX's weekdays."""

    one_en: str  # "trading day", "Shanghai Stock Exchange trading day", "weekday"
    many_en: str  # "trading days", ..., "weekdays"
    back_en: str  # what "k … before the most recent one" counts: "sessions", "weekdays"
    zh: str  # "交易日", "上海证券交易所交易日", "工作日"
    zh_bare: str  # "交易日", "工作日": the inclusive "（含最近一个交易日）"
    calendar: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The words a text must contain to name this calendar (empty when implied)."""
        if self.calendar is None:
            return ()
        if self.calendar == WEEKDAYS:
            return ("weekday", "工作日")
        return (CALENDAR_EN[self.calendar], CALENDAR_ZH[self.calendar])


IMPLIED = Days("trading day", "trading days", "sessions", "交易日", "交易日")


def days_of(calendar: str | None) -> Days:
    """The day phrases of a text that names `calendar` (a calendar code or WEEKDAYS); IMPLIED when None."""
    if calendar is None:
        return IMPLIED
    if calendar == WEEKDAYS:
        return Days("weekday", "weekdays", "weekdays", "工作日", "工作日", WEEKDAYS)
    en, zh = CALENDAR_EN[calendar], CALENDAR_ZH[calendar]
    return Days(f"{en} trading day", f"{en} trading days", "sessions", f"{zh}交易日", "交易日", calendar)


def program_calendar(program: Program) -> str | None:
    """The exchange calendar the extracted call's dates (or its selection's anchor) count sessions
    on; None when they count none (calendar days, periods)."""
    call = next(c for c in program.calls if c.id == program.extract.call)
    specs = [*call.dates.values(), *(a for a in (program.extract.select.anchor,) if a is not None)]
    calendars = sorted({s.calendar for s in specs if s.sessions_back is not None and s.calendar})
    return calendars[0] if calendars else None


def counts_stock_window(c: Candidate) -> bool:
    """Whether the text asks about a stock's records over a window of sessions, read as a whole (an
    aggregate, a change, a path): a suspended session falls in the window without a record. A
    call's window that only finds the latest record (a lookup) is not such a window."""
    if c.asset_class not in EQUITY_CLASSES:
        return False
    ex = c.program.extract
    reads = [ex, *(step.other for step in ex.combine.chain())] if ex.combine else [ex]
    calls = {call.id: call for call in c.program.calls}
    for ref in reads:
        call = calls[ref.call]
        start, end = call.dates.get("start_date"), call.dates.get("end_date")
        if (ref.select.mode == "all" and start is not None and end is not None and start.sessions_back is not None
                and end.sessions_back is not None and start.sessions_back > end.sessions_back):
            return True
    return False


def with_conventions(text: str, c: Candidate, lang: str) -> str:
    """The text followed by the convention sentence it needs (a stock's window: suspensions)."""
    if not counts_stock_window(c):
        return text
    return f"{text} {SUSPENSION_EN}" if lang == "en" else f"{text}{SUSPENSION_ZH}"


def minute_before(at: str) -> str:
    """The minute a one-minute bar stamped `at` (HH:MM, its end) starts at: 10:30 -> 10:29."""
    hour, minute = (int(p) for p in at.split(":"))
    total = hour * 60 + minute - 1
    return f"{total // 60:02d}:{total % 60:02d}"
