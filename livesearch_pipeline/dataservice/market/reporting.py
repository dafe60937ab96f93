"""How and when the synthetic listed companies report (issue 39): the month a company's fiscal year
ends in, the currency its statements are in, what its periodic reports are called and when they
are due.

A-shares close their books on 31 December (the law says so). About a third of Hong Kong companies
end their year on 31 March (retailers, property, technology and logistics groups most often), and
about a third of US companies on 30 June or 30 September (software and consumer-goods makers in
June; chip, media, industrial and retail groups in September); banks, insurers, utilities and
energy companies keep December. Fiscal quarters stay calendar quarter ends: a March year's first
quarter ends on 30 June, its interim (half-year) period on 30 September.

"Fiscal 2026" means what the company means by it: a US company's fiscal year is named by the
calendar year in which it ends (the year to 30 June 2026 is fiscal 2026); a Hong Kong March year is
named by its end, "the year ended 31 March 2026" (its label here is 2026 too).

Announcement lags follow the fiscal period, not the calendar: Hong Kong interim results within two
months of the half-year end and annual results within three of the year end (listing rules 13.49
and 13.46), US 10-Q within 40 days and 10-K within 60 of the period end, A-shares as their
exchanges' calendar requires (quarterly by the month's end after the quarter, annual by 30 April).

Reporting currency: A-shares report in CNY and US companies in USD. About a third of the Hong Kong
companies report in renminbi while trading in Hong Kong dollars (mainland groups: energy,
telecoms, utilities and industrials most often; every H-share of an A+H company), a few in US
dollars (technology, logistics and financial groups); the rest in HKD.
"""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass

from livesearch_pipeline.core.calendars import CALENDAR_START, session_dates, session_on_or_before
from livesearch_pipeline.dataservice.market.rng import unit_uniform

QUARTER_ENDS = ((3, 31), (6, 30), (9, 30), (12, 31))
FISCAL_YEAR_END_MONTHS = (3, 6, 9, 12)

# (industry, share of the companies of that industry) whose year does not end in December.
_HK_MARCH = {"消费": 0.65, "地产": 0.55, "资讯科技": 0.55, "物流": 0.5, "工业": 0.45, "医疗保健": 0.35,
             "电讯": 0.15, "公用事业": 0.1, "能源": 0.1, "金融": 0.05}
_US_JUNE = {"Software": 0.55, "Consumer Goods": 0.55, "Healthcare": 0.25, "Biotechnology": 0.2,
            "Industrials": 0.1, "Retail": 0.1}
_US_SEPTEMBER = {"Semiconductors": 0.55, "Media": 0.5, "Industrials": 0.35, "Aerospace": 0.45, "Retail": 0.45,
                 "Software": 0.1, "Healthcare": 0.15}
# (industry, share reporting in CNY, share reporting in USD) of the Hong Kong companies.
_HK_CURRENCY = {"能源": (0.5, 0.0), "电讯": (0.45, 0.0), "公用事业": (0.4, 0.0), "工业": (0.4, 0.0),
                "资讯科技": (0.3, 0.15), "医疗保健": (0.3, 0.05), "地产": (0.3, 0.0), "消费": (0.25, 0.05),
                "物流": (0.25, 0.1), "金融": (0.15, 0.1)}


def quarter_end(year: int, quarter: int) -> dt.date:
    month, day = QUARTER_ENDS[quarter - 1]
    return dt.date(year, month, day)


def is_quarter_end(day: dt.date) -> bool:
    return (day.month, day.day) in QUARTER_ENDS


def quarter_ends_back(end: dt.date, quarters: int) -> dt.date:
    """The quarter end `quarters` quarters before the quarter end `end`."""
    index = end.year * 4 + (end.month - 1) // 3 - quarters
    return quarter_end(index // 4, index % 4 + 1)


@dataclass(frozen=True)
class FiscalCalendar:
    """A company's fiscal year, ending on the last day of `end_month` (3, 6, 9 or 12)."""

    end_month: int

    def __post_init__(self) -> None:
        if self.end_month not in FISCAL_YEAR_END_MONTHS:
            raise ValueError(f"a fiscal year ends at a calendar quarter end (month 3, 6, 9 or 12); got {self.end_month}")

    @property
    def mmdd(self) -> str:
        """The year-end as Tushare-style MMDD ("0331", "1231")."""
        month, day = QUARTER_ENDS[self.end_month // 3 - 1]
        return f"{month:02d}{day:02d}"

    def quarter(self, end: dt.date) -> int:
        """The fiscal quarter (1..4) a calendar quarter end closes: 4 is the fiscal year end."""
        return ((end.month - self.end_month - 1) % 12) // 3 + 1

    def year(self, end: dt.date) -> int:
        """The fiscal year a period end belongs to, named by the calendar year in which it ends."""
        return end.year if end.month <= self.end_month else end.year + 1

    def year_end(self, fiscal_year: int) -> dt.date:
        return quarter_end(fiscal_year, self.end_month // 3)

    def year_end_before(self, end: dt.date) -> dt.date:
        """The end of the fiscal year before the one `end` belongs to: the opening balances."""
        return quarter_ends_back(end, self.quarter(end))

    def is_year_end(self, end: dt.date) -> bool:
        return self.quarter(end) == 4


CALENDAR_YEAR = FiscalCalendar(12)


def fiscal_year_end_month(seed: int, code: str, asset_class: str, industry: str) -> int:
    """The month a company's fiscal year ends in: December for A-shares; for Hong Kong and US
    companies drawn once per company by its industry (module doc)."""
    u = unit_uniform(seed, code, "fiscal-year-end")
    if asset_class == "hk_equity":
        return 3 if u < _HK_MARCH.get(industry, 0.0) else 12
    if asset_class == "us_equity":
        june = _US_JUNE.get(industry, 0.0)
        if u < june:
            return 6
        if u < june + _US_SEPTEMBER.get(industry, 0.0):
            return 9
    return 12


def reporting_currency(seed: int, code: str, asset_class: str, industry: str, trading_currency: str) -> str:
    """The currency a company's statements are in (module doc); an H-share's is set by its A-share."""
    if asset_class != "hk_equity":
        return trading_currency
    cny, usd = _HK_CURRENCY.get(industry, (0.0, 0.0))
    u = unit_uniform(seed, code, "reporting-currency")
    return "CNY" if u < cny else "USD" if u < cny + usd else trading_currency


def announcement_day(calendar: str, day: dt.date) -> dt.date:
    """The last session on or before `day`; before the calendars start (2014) sessions are not
    known, so announcements of that time land on the last weekday instead."""
    if day < CALENDAR_START:
        return day - dt.timedelta(days=max(0, day.weekday() - 4))
    sessions = session_dates(calendar)
    if day > sessions[-1]:
        return session_on_or_before(calendar, day)  # raises the calendar's range error
    return sessions[bisect.bisect_right(sessions, day) - 1]


def earliest_session_on_or_after(calendar: str, day: dt.date) -> dt.date:
    if day < CALENDAR_START:
        return day + dt.timedelta(days=max(0, 7 - day.weekday()) if day.weekday() > 4 else 0)
    sessions = session_dates(calendar)
    i = bisect.bisect_left(sessions, day)
    if i >= len(sessions):
        raise ValueError(f"no {calendar} session on or after {day.isoformat()}")
    return sessions[i]


def announcement_window(asset_class: str, fiscal: FiscalCalendar, end: dt.date) -> tuple[dt.date, dt.date]:
    """Earliest and latest day a period ending on `end` may be announced (module doc)."""
    q = fiscal.quarter(end)
    y = end.year
    if asset_class == "cn_equity":
        windows = {
            1: (dt.date(y, 4, 12), dt.date(y, 4, 30)),
            2: (dt.date(y, 7, 20), dt.date(y, 8, 31)),
            3: (dt.date(y, 10, 12), dt.date(y, 10, 31)),
            4: (dt.date(y + 1, 1, 20), dt.date(y + 1, 4, 30)),
        }
        return windows[(end.month - 1) // 3 + 1]
    if asset_class == "hk_equity":
        if q == 4:
            return end + dt.timedelta(days=51), end + dt.timedelta(days=90)
        return end + dt.timedelta(days=25), end + dt.timedelta(days=62)
    if q == 4:
        return end + dt.timedelta(days=25), end + dt.timedelta(days=59)
    return end + dt.timedelta(days=20), end + dt.timedelta(days=40)


def reporting_quarters(asset_class: str, dual_listed: bool = False) -> tuple[int, ...]:
    """The fiscal quarters a company publishes: Hong Kong companies interim and annual results
    (an A+H company all four, as its A-share listing requires), everyone else every quarter."""
    return (2, 4) if asset_class == "hk_equity" and not dual_listed else (1, 2, 3, 4)


def period_name(fiscal: FiscalCalendar, end: dt.date, lang: str = "en") -> str:
    """What the report of the period ending `end` is called: "annual report for the year ended 31
    March 2026", "interim report for the six months ended 30 September 2025", "年度报告（截至2026年3月31日止年度）"."""
    q = fiscal.quarter(end)
    months = 3 * q
    if lang == "zh":
        stamp = f"{end.year}年{end.month}月{end.day}日"
        kind = {4: "年度报告", 2: "中期报告"}.get(q, "季度报告")
        span = "年度" if q == 4 else f"{months}个月"
        return f"{kind}（截至{stamp}止{span}）"
    stamp = f"{end.day} {end.strftime('%B')} {end.year}"
    if q == 4:
        return f"annual report for the year ended {stamp}"
    kind = "interim report" if q == 2 else "quarterly report"
    return f"{kind} for the {('three', 'six', 'nine')[q - 1]} months ended {stamp}"
