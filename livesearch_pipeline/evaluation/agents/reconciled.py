"""The navigator's readings of the investigations that must be reconciled first (issue 39,
construction/families/reconciled.py), worked as an analyst works them on D's web:

- compound growth over the annual reports of the company's own fiscal years (`cagr`): the company
  page's fiscal year end (its facts table; an A-share closes on 31 December), the latest annual
  report's figure, and the figure of the annual report n years before it as most recently
  published: restated in the next annual report's comparative where that report restated it;
- year-on-year growth against the comparative as first reported (`growth_first`): the latest
  report's own figure, and the same period a year earlier as its own report published it (not the
  restated comparative a later report printed);
- the growth of the latest annual report of a company's own fiscal year over the fiscal year
  before (`fiscal_growth`): the company page's fiscal year end, the latest annual report, the prior
  year as that report restated it where it did, else as its own report published it;
- the A/H premium (`ah_premium`): the A share's close on the Shanghai session asked (or the last
  before it), the H share's close and the day's closing USD/CNH and USD/HKD bids on or before that
  day (the FX release of the day, else each pair's history);
- the member of an industry index with the highest figure of its annual report for the last
  completed fiscal year (`peer_best`): each member's annual report, its financial ratios;
- a Hong Kong company's market value in its reporting currency over a figure of its latest annual
  report (`cross_currency`): the exchange's quote page with market value, the FX release of its
  session, the company page's fiscal year end and the annual report.

`investigations.investigate` hands these here; every page is read through its `_Investigator`,
so every read counts against the question's budget.
"""

from __future__ import annotations

import re
from typing import Any

from livesearch_pipeline.core.calendars import session_on_or_before, sessions_back
from livesearch_pipeline.evaluation.agents.chains import latest_item
from livesearch_pipeline.evaluation.agents.loop import ToolFailure
from livesearch_pipeline.evaluation.agents.page_reading import fx_bid_closes, history_rows, report_periods
from livesearch_pipeline.evaluation.agents.reading import ParsedPage, cell_number, convert

# The investigations' page reader (agents/investigations.py `_Investigator`), handed in by
# `investigate`: typed loosely so that this module does not import the one that imports it.
_Investigator = Any

_CODE = re.compile(r"\(([0-9A-Z.]+)\)")
# The income statement of each class and the figures the families ask of it (as the navigator's
# own statement readings; not imported from navigator.py, which imports the investigations).
_INCOME = {"cn_equity": "income", "hk_equity": "hk_income", "us_equity": "us_income"}
_STATEMENT_FIELDS = ("revenue", "n_income_attr_p", "n_income", "operate_profit")
RECONCILED = (
    ("fiscal_growth", re.compile(r"^For (?P<subj>.+?), whose fiscal year is not the calendar year, what was the growth "
                                 r"of its (?P<noun>.+?) in the fiscal year of its most recent annual report over the "
                                 r"fiscal year before")),
    ("growth_first", re.compile(r"^For (?P<subj>.+?), what was the year-on-year growth of the year-to-date (?P<noun>.+?) "
                                r"of its most recently reported period over the same period a year earlier as first "
                                r"reported")),
    ("cagr", re.compile(r"^For (?P<subj>.+?), what was the compound annual growth rate of its (?P<noun>.+?) over the "
                        r"(?P<n>\d+) fiscal years to its most recent annual report")),
    ("ah_premium", re.compile(r"^What was the A/H premium of (?P<subj>.+?) over its H share (?P<other>.+?) on the "
                              r"(?:most recent Shanghai Stock Exchange trading day|Shanghai Stock Exchange trading day "
                              r"(?P<k>\d+) sessions before the most recent one),")),
    ("peer_best", re.compile(r"^Of the member stocks of (?P<subj>.+?), (?P<codes>(?:\d{6}\.S[HZ](?:, | and )?)+), which "
                             r"had the highest (?P<noun>.+?) in its annual report for the most recently completed "
                             r"fiscal year")),
    ("cross_currency", re.compile(r"^What was the (?P<label>price-to-sales|price-to-earnings) ratio of (?P<subj>.+?) on "
                                  r"the most recent Hong Kong Stock Exchange trading day, taken as its HKD total market "
                                  r"capitalisation converted into (?P<currency>CNY|USD) ")),
)
_FISCAL_HEADS = ("fiscal year end", "财政年度截止日")
_PERIOD_LABELS = ("period", "报告期")
_CROSS_FIELD = {"price-to-sales": "revenue", "price-to-earnings": "n_income_attr_p"}
_PAIRS = ("USDCNH", "USDHKD")


def _statement_field(tool: str, noun: str) -> str | None:
    """The income statement's field a question's noun names (the lexicon's English noun)."""
    from livesearch_pipeline.core.lexicon import load_lexicon
    from livesearch_pipeline.web.wording import canonical_label

    lexicon = load_lexicon()
    for name in _STATEMENT_FIELDS:
        entry = lexicon.entry(tool, name)
        if entry is not None and entry.en and canonical_label(entry.en, "en") == canonical_label(noun, "en"):
            return name
    return None


def fiscal_year_end(hub: ParsedPage) -> str:
    """The fiscal year end (MMDD) a company page's facts table states; 31 December where it states
    none (the A-shares, whose fiscal year is the calendar year)."""
    for rows in hub.tables:
        if len(rows) >= 2 and rows[0] and rows[0][0].lower() in _FISCAL_HEADS and re.fullmatch(r"\d{4}", rows[1][0]):
            return rows[1][0]
    return "1231"


def period_figures(page: ParsedPage, tool: str, field_name: str) -> dict[str, float]:
    """{report period: figure} of `field_name` in every statement item table of a report page: the
    report's own period, and the comparative period a later report restated where it prints one."""
    from livesearch_pipeline.evaluation.agents.page_reading import _column

    out: dict[str, float] = {}
    for rows in page.tables:
        if not rows or len(rows[0]) != 3:
            continue
        labels = [row[0] for row in rows[1:] if row]
        position = _column(labels, tool, field_name)
        period = next((r[1] for r in rows[1:] if len(r) > 1 and re.fullmatch(r"\d{8}", r[1])
                       and any(w in r[0].lower() for w in _PERIOD_LABELS)), None)
        if position is None or period is None or len(rows[1 + position]) != 3:
            continue
        value = cell_number(rows[1 + position][1])
        if value is not None:
            out.setdefault(period, value)
    return out


async def _annual_periods(work: _Investigator, code: str) -> list[str]:
    """The periods of the annual reports the company page links, newest first."""
    hub = await work.page(f"/exchange/company/{code}.html")
    end = fiscal_year_end(hub)
    return [p for p in report_periods(hub, code) if p[4:] == end]


async def _statement(work: _Investigator, code: str, period: str, tool: str, field_name: str,
                     of: str | None = None) -> float | None:
    """The figure of period `of` (default: the report's own, `period`) that the report of `period`
    prints, walked page by page (a long report prints a restated comparative on a page of its own)."""
    want = of or period

    def wanted(page: ParsedPage) -> float | None:
        return period_figures(page, tool, field_name).get(want)

    return await work.report(f"/exchange/reports/{code}/{period}.html", wanted)


async def fx_on_or_before(work: _Investigator, day: str) -> dict[str, float] | None:
    """The closing USD/CNH and USD/HKD bids of the last FX day on or before `day`: the FX release
    of that day, else each pair's history page."""
    try:
        rates = fx_bid_closes(await work.page(f"/stats/fx_daily/{day}.html"), day)
    except ToolFailure:
        rates = {}
    if all(rates.get(p) for p in _PAIRS):
        return rates
    out = {}
    for pair in _PAIRS:
        rows = history_rows(await work.page(f"/stats/fx_daily/{pair}FXCM/history.html"), "fx_daily", ["bid_close"])
        before = [r for r in rows if r["date"] <= day]
        if not before:
            return None
        out[pair] = max(before, key=lambda r: r["date"])["bid_close"]
    return out


async def reconcile(work: _Investigator, name: str, parts: dict[str, str], asset_class: str, entity: str,
                    places: int) -> str | None:
    """The answer of one reconciled investigation, computed from what the web shows (None when a
    page does not give what it needs)."""
    if name == "cagr":
        return await _cagr(work, parts, asset_class, entity, places)
    if name == "ah_premium":
        return await _ah_premium(work, parts, places)
    if name == "cross_currency":
        return await _cross_currency(work, parts, entity, places)
    if name == "peer_best":
        return await _peer_best(work, parts)
    if name == "fiscal_growth":
        return await _fiscal_growth(work, parts, asset_class, entity, places)
    if name == "growth_first":
        return await _growth_first(work, parts, asset_class, entity, places)
    return None


async def _cagr(work: _Investigator, parts: dict[str, str], asset_class: str, code: str, places: int) -> str | None:
    tool = _INCOME.get(asset_class)
    field_name = _statement_field(tool, parts["noun"]) if tool else None
    if tool is None or field_name is None:
        return None
    n = int(parts["n"])
    annual = await _annual_periods(work, code)
    if not annual:
        return None
    latest = annual[0]
    base, after = f"{int(latest[:4]) - n}{latest[4:]}", f"{int(latest[:4]) - n + 1}{latest[4:]}"
    if base not in annual:
        return None
    last = await _statement(work, code, latest, tool, field_name)
    # The base year as most recently published: the next annual report's restated comparative,
    # where it printed one (the whole report is read to know); else the base year's own report.
    first = await _statement(work, code, after, tool, field_name, of=base) if after in annual else None
    if first is None:
        first = await _statement(work, code, base, tool, field_name)
    if last is None or first is None or last <= 0 or first <= 0:
        return None
    return f"{((last / first) ** (1 / n) - 1) * 100:.{places}f}%"


async def _ah_premium(work: _Investigator, parts: dict[str, str], places: int) -> str | None:
    a_code, h_code = _CODE.findall(parts["subj"])[-1:], _CODE.findall(parts["other"])[-1:]
    if not a_code or not h_code:
        return None
    k = int(parts.get("k") or 0)
    asked = sessions_back("XSHG", session_on_or_before("XSHG", work.agent.as_of), k).strftime("%Y%m%d")
    a_rows = await work.series(a_code[0], "daily", ["close"], k + 1)
    a_before = [r for r in a_rows or [] if r["date"] <= asked]
    if not a_before:
        return None
    a_row = max(a_before, key=lambda r: r["date"])
    day = a_row["date"]  # the A share's close on the session asked, or its last before it
    h_rows = await work.series(h_code[0], "hk_daily", ["close"], k + 10)
    h_before = [r for r in h_rows or [] if r["date"] <= day]
    rates = await fx_on_or_before(work, day)
    if not h_before or not rates:
        return None
    h_close = max(h_before, key=lambda r: r["date"])["close"]
    h_cny = h_close * rates["USDCNH"] / rates["USDHKD"]
    if h_cny <= 0:
        return None
    return f"{(a_row['close'] / h_cny - 1) * 100:.{places}f}%"


async def _cross_currency(work: _Investigator, parts: dict[str, str], code: str, places: int) -> str | None:
    found = latest_item(await work.page(f"/exchange/hk_daily_adj/{code}.html"), "hk_daily_adj", "total_mv")
    if found is None:
        return None
    day, value, unit = found
    market_value = convert(value, unit or "HKD", "HKD")
    rates = await fx_on_or_before(work, day)
    if market_value is None or not rates:
        return None
    converted = (market_value * rates["USDCNH"] / rates["USDHKD"] if parts["currency"] == "CNY"
                 else market_value / rates["USDHKD"])
    annual = await _annual_periods(work, code)
    if not annual:
        return None
    field_name = _CROSS_FIELD[parts["label"]]
    figure = await _statement(work, code, annual[0], "hk_income", field_name)
    if not figure or figure <= 0:
        return None
    return f"{converted / figure:.{places}f}"


async def _peer_best(work: _Investigator, parts: dict[str, str]) -> str | None:
    """The member whose annual report for the last completed (calendar) fiscal year states the
    highest figure; None when a member's report is not out or two share the highest."""
    from livesearch_pipeline.evaluation.agents.chains import field_of_noun

    codes = re.findall(r"\d{6}\.S[HZ]", parts["codes"])
    field_name = next((f for tool, f, _ in field_of_noun(parts["noun"], "cn_equity") if tool == "fina_indicator"), None)
    if not codes or field_name is None:
        return None
    clock = work.agent.as_of
    year = clock.year if (clock.month, clock.day) == (12, 31) else clock.year - 1
    period = f"{year}1231"
    values = {}
    for code in codes:
        try:
            figure = await _statement(work, code, period, "fina_indicator", field_name)
        except ToolFailure:
            return None  # that member's annual report is not on the web (not out yet)
        if figure is None:
            return None
        values[code] = figure
    best = max(values.values())
    winners = [code for code, value in values.items() if value == best]
    return winners[0] if len(winners) == 1 else None


async def _growth_first(work: _Investigator, parts: dict[str, str], asset_class: str, code: str,
                        places: int) -> str | None:
    tool = _INCOME.get(asset_class)
    field_name = _statement_field(tool, parts["noun"]) if tool else None
    if tool is None or field_name is None:
        return None
    hub = await work.page(f"/exchange/company/{code}.html")
    periods = report_periods(hub, code)
    if not periods:
        return None
    latest = periods[0]
    before = f"{int(latest[:4]) - 1}{latest[4:]}"
    if before not in periods:
        return None
    now = await _statement(work, code, latest, tool, field_name)
    then = await _statement(work, code, before, tool, field_name)  # as that report first published it
    if now is None or then is None or then <= 0:
        return None
    return f"{(now - then) / then * 100:.{places}f}%"


async def _fiscal_growth(work: _Investigator, parts: dict[str, str], asset_class: str, code: str,
                         places: int) -> str | None:
    tool = _INCOME.get(asset_class)
    field_name = _statement_field(tool, parts["noun"]) if tool else None
    if tool is None or field_name is None:
        return None
    annual = await _annual_periods(work, code)
    if not annual:
        return None
    latest = annual[0]
    before = f"{int(latest[:4]) - 1}{latest[4:]}"
    if before not in annual:
        return None
    now = await _statement(work, code, latest, tool, field_name)
    then = await _statement(work, code, latest, tool, field_name, of=before)
    if then is None:
        then = await _statement(work, code, before, tool, field_name)
    if now is None or then is None or then <= 0:
        return None
    return f"{(now - then) / then * 100:.{places}f}%"
