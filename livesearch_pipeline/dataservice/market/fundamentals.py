"""Financial statements of the synthetic listed companies (A-shares, HK and US, simplified).

One quarterly history per company, built once and cached: single-quarter flows are simulated
and then presented as Tushare does, cumulative from the start of the company's fiscal year for
income and cash flow, period-end balances for the balance sheet. Every amount is a whole currency
unit held in a float, so sums of amounts are exact in binary floating point and the balance sheet
balances with `==`: total_assets == total_liab + total_hldr_eqy_inc_min_int.

What the market pays for (issue 40): each company draws a target trailing P/E, P/B and net margin
from its sector's band (market/sectors.py); a quarter's profit is the quarter's average market
value (in the reporting currency) over the target P/E, its revenue that profit over the margin, and
its equity drifts towards the market value over the target P/B. So the multiples the quote tools
publish stay where the sector trades as prices move: banks at 4-9 times earnings and below book.
Some years dip (profit at 60-85% of what the market pays for) and, outside banks and insurers, some
end in a loss: a fourth-quarter write-down of one and a half to three years' profit (an impairment),
so that the trailing figures through it are clearly losses and none sits just above zero.

Fiscal years (issue 39, market/reporting.py): a Hong Kong company may close its year on 31 March,
a US one on 30 June or 30 September. Year-to-date sums, the annual report, the opening balances of
the cash-flow statement, announcement lags and trailing-twelve-month figures follow the fiscal
year. Amounts are in the company's reporting currency (`reporting_currency`): CNY for A-shares and
for a Hong Kong company that reports in renminbi (an A+H company among them: its H-share's
statements are its A-share's), USD for US companies and Hong Kong ones that report in dollars,
HKD for the rest.

Restatements (issue 39): in about one fiscal year in eight a company restates its comparatives from
some fiscal quarter on (a business combination under common control, a change of accounting
policy): each report of that year from that quarter restates the same period a year earlier, every
line scaled by the same few percent and the totals recomputed. The restated figures are a second
version of the earlier period (`update_flag` "1"), published with the later report and known only
from its announcement date; the first-reported version ("0") stays as it was published.

Point-in-time: each version carries its announcement date (`ann_date`, a session of the company's
calendar after the period end with the regulatory lag); nothing is "known" before it. Reports whose
announcement would fall beyond the calendar's horizon are not generated, since no valid clock can
reach them. Shares come from the corporate-actions model (`total_shares` at the period end, every
class of an A+H company); per-share indicators divide by that period-end count.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from livesearch_pipeline.core.calendars import get_calendar
from livesearch_pipeline.dataservice.market.reporting import (
    FiscalCalendar,
    announcement_day,
    announcement_window,
    earliest_session_on_or_after,
    quarter_end,
    quarter_ends_back,
    reporting_quarters,
)
from livesearch_pipeline.dataservice.market.rng import SIMULATION_END, generator, unit_uniform
from livesearch_pipeline.dataservice.market.sectors import profile_of

STATEMENT_CLASSES = ("cn_equity", "hk_equity", "us_equity")
FIRST_PERIOD_YEAR = 2012  # one warm-up year so that 2013 reports have a prior year to compare
# Fixed, not the calendar's horizon: the per-quarter draws are made for every period of this
# range, so a period's values never depend on how many later periods the calendar reaches.
LAST_PERIOD_YEAR = SIMULATION_END.year
# Banks, insurers and brokers (A-share, HK and US industries of the universe) hold no inventories
# and report no cost of sales: their operating costs are business and administrative expenses.
FINANCIAL_INDUSTRIES = frozenset({"银行", "证券", "保险", "金融", "Banks", "Insurance"})
# Lines (and the indicators derived from them) a financial company's statements leave empty.
NOT_REPORTED_BY_FINANCIALS = ("oper_cost", "inventories", "gross_margin", "grossprofit_margin", "bz_cost",
                              "bz_profit")
FIRST_REPORTED, RESTATED = "0", "1"  # Tushare's update_flag
RESTATEMENT_RATE = 0.12  # fiscal years in which a company restates its comparatives
EQUITY_PULL = 0.15  # per quarter: how far equity moves towards what the market values it at
_INCOME_BASE = ("revenue", "oper_cost", "biz_tax_surchg", "sell_exp", "admin_exp", "rd_exp", "fin_exp",
                "invest_income", "non_oper_income", "non_oper_exp")
_TAX_RATE = {"hk_equity": 0.165, "us_equity": 0.21}


def is_financial(industry: str | None) -> bool:
    return industry in FINANCIAL_INDUSTRIES


class StatementLookupError(LookupError):
    """A company without statements (wrong asset class or unknown code)."""


@dataclass(frozen=True)
class Report:
    """One published version of a periodic report: every statement line of one period, flows
    from the start of the fiscal year. `quarter` is the fiscal quarter (4: the annual report)."""

    end_date: dt.date
    ann_date: dt.date
    values: dict[str, float]
    quarter: int
    fiscal_year: int
    update_flag: str = FIRST_REPORTED

    @property
    def restated(self) -> bool:
        return self.update_flag == RESTATED


def _drifting_mix(rng: np.random.Generator, alpha: list[float], periods: int) -> np.ndarray:
    """Shares of balance-sheet sub-items: a company-specific mix that drifts slowly from one
    quarter to the next (redrawing it every quarter would make cash swing implausibly)."""
    base = rng.dirichlet(np.asarray(alpha) * 3)
    walk = np.exp(np.cumsum(rng.normal(0, 0.05, (periods, len(alpha))), axis=0))
    mix = base * walk
    return mix / mix.sum(axis=1, keepdims=True)


def _split(total: int, shares: np.ndarray) -> list[int]:
    """Split a whole amount into parts by `shares`; the last part absorbs rounding, so the parts
    sum to `total` exactly."""
    parts = [int(round(total * float(s))) for s in shares[:-1]]
    parts.append(total - sum(parts))
    return parts


def _ar1(rng: np.random.Generator, n: int, phi: float, sd: float) -> np.ndarray:
    shocks = rng.normal(0.0, sd, n)
    out = np.empty(n)
    level = 0.0
    for i in range(n):
        level = phi * level + shocks[i]
        out[i] = level
    return out


def income_lines(base: dict[str, int], tax_rate: float, minority_share: float) -> dict[str, int]:
    """A quarter's income statement from its base lines (revenue, costs, expenses, investment and
    non-operating items): every subtotal recomputed, so the statement adds up exactly."""
    operate_profit = (base["revenue"] - base["oper_cost"] - base["biz_tax_surchg"] - base["sell_exp"]
                      - base["admin_exp"] - base["rd_exp"] - base["fin_exp"] + base["invest_income"])
    total_profit = operate_profit + base["non_oper_income"] - base["non_oper_exp"]
    income_tax = int(round(max(0, total_profit) * tax_rate))
    n_income = total_profit - income_tax
    minority_gain = int(round(n_income * minority_share))
    n_income_attr_p = n_income - minority_gain
    non_recurring = base["invest_income"] + base["non_oper_income"] - base["non_oper_exp"]
    return dict(base, operate_profit=operate_profit, total_profit=total_profit, income_tax=income_tax,
                n_income=n_income, minority_gain=minority_gain, n_income_attr_p=n_income_attr_p,
                profit_dedt=n_income_attr_p - int(round(non_recurring * 0.8)))


@dataclass
class _History:
    """A company's simulated quarters (every quarter of the fixed grid), from which each report
    version is read: single-quarter income lines, the inputs of each period-end balance sheet and
    its lines, single-quarter cash flows."""

    ends: list[dt.date]
    singles: list[dict[str, int]]
    balance_inputs: list[tuple]
    balances: list[dict[str, int]]
    quarter_cash: list[dict[str, int]]
    tax_rate: float
    minority_share: float


class Fundamentals:
    def __init__(self, market: Any) -> None:
        self.market = market
        self._versions: dict[str, tuple[Report, ...]] = {}
        # What is known on a date changes only on announcement dates: point-in-time lookups are
        # memoised per (code, epoch), the number of distinct announcement dates passed, so that
        # valuation tools asking about every session of a decade stay fast.
        self._ann_dates: dict[str, list[dt.date]] = {}
        self._known: dict[tuple[str, int], tuple[Report, ...]] = {}
        self._ttm_known: dict[tuple[str, str, int], float | None] = {}

    # ------------------------------------------------------------------ public API

    def company(self, code: str) -> str:
        """The code whose statements `code` publishes: an H-share's A-share, else itself."""
        return self.market.universe.a_share_of(code) or code

    def fiscal(self, code: str) -> FiscalCalendar:
        return FiscalCalendar(self._entity(self.company(code)).fy_end_month)

    def reporting_currency(self, code: str) -> str:
        return self._entity(code).reporting_currency

    def versions(self, code: str) -> tuple[Report, ...]:
        """Every published version of every report the calendar horizon allows (first-reported
        and restated), by period end, then announcement date; including versions not announced
        yet on any particular date (callers filter by ann_date)."""
        company = self.company(code)
        cached = self._versions.get(company)
        if cached is None:
            cached = self._build(company)
            self._versions[company] = cached
        return cached

    def reports(self, code: str) -> tuple[Report, ...]:
        """The reports as first published, oldest first."""
        return tuple(r for r in self.versions(code) if not r.restated)

    def restatements(self, code: str) -> tuple[Report, ...]:
        """The restated versions of earlier periods, oldest period first."""
        return tuple(r for r in self.versions(code) if r.restated)

    def announced(self, code: str, as_of: dt.date) -> list[Report]:
        """The latest version of each period announced on or before `as_of`, oldest first."""
        return list(self._announced_in_epoch(code, self._epoch(code, as_of)))

    def _epoch(self, code: str, as_of: dt.date) -> int:
        company = self.company(code)
        dates = self._ann_dates.get(company)
        if dates is None:
            dates = sorted({r.ann_date for r in self.versions(company)})
            self._ann_dates[company] = dates
        return bisect.bisect_right(dates, as_of)

    def _announced_in_epoch(self, code: str, epoch: int) -> tuple[Report, ...]:
        company = self.company(code)
        known = self._known.get((company, epoch))
        if known is None:
            last_date = self._ann_dates[company][epoch - 1] if epoch else dt.date.min
            latest: dict[dt.date, Report] = {}
            for r in self.versions(company):  # by period, then announcement: the last one wins
                if r.ann_date <= last_date:
                    latest[r.end_date] = r
            known = tuple(latest[end] for end in sorted(latest))
            self._known[(company, epoch)] = known
        return known

    def ttm_net_profit(self, code: str, date: dt.date) -> float | None:
        """Trailing-twelve-month net profit attributable to the parent (reporting currency) from
        the latest versions announced on or before `date`; None when history is short."""
        return self._ttm(code, date, "n_income_attr_p")

    def ttm_revenue(self, code: str, date: dt.date) -> float | None:
        """Trailing-twelve-month operating revenue as known on `date`; None when history is short."""
        return self._ttm(code, date, "revenue")

    def book_equity(self, code: str, date: dt.date) -> float | None:
        """Equity attributable to the parent from the latest balance sheet announced by `date`."""
        known = self._announced_in_epoch(code, self._epoch(code, date))
        return known[-1].values["total_hldr_eqy_exc_min_int"] if known else None

    @cached_property
    def disclosures(self):
        from livesearch_pipeline.dataservice.market.disclosures import Disclosures

        return Disclosures(self)

    def has_statements(self, code: str) -> bool:
        return self._entity(code).asset_class in STATEMENT_CLASSES

    # ------------------------------------------------------------------ TTM

    def _ttm(self, code: str, date: dt.date, line: str) -> float | None:
        company = self.company(code)
        epoch = self._epoch(company, date)
        key = (company, line, epoch)
        if key not in self._ttm_known:
            self._ttm_known[key] = ttm_of(self._announced_in_epoch(company, epoch), line, self.fiscal(company))
        return self._ttm_known[key]

    # ------------------------------------------------------------------ generation

    def _entity(self, code: str):
        return self.market.universe.get(code)

    @cached_property
    def _horizons(self) -> dict[str, dt.date]:
        return {name: get_calendar(name).last_session.date() for name in ("XSHG", "XHKG", "XNYS")}

    def _build(self, code: str) -> tuple[Report, ...]:
        entity = self._entity(code)
        if entity.asset_class not in STATEMENT_CLASSES:
            raise StatementLookupError(
                f"{code} is a {entity.asset_class} entity; financial statements exist only for "
                f"listed companies ({', '.join(STATEMENT_CLASSES)})"
            )
        fiscal = FiscalCalendar(entity.fy_end_month)
        history = self._simulate(entity, fiscal)
        originals = self._originals(entity, fiscal, history)
        versions = originals + self._restated(entity, fiscal, history, originals)
        versions.sort(key=lambda r: (r.end_date, r.ann_date, r.update_flag))
        return tuple(versions)

    def _simulate(self, entity, fiscal: FiscalCalendar) -> _History:
        code = entity.code
        seed = self.market.seed
        rng = generator(seed, code, "fundamentals")
        profile = profile_of(entity.industry)
        financial = is_financial(entity.industry)
        quarters = [(y, q) for y in range(FIRST_PERIOD_YEAR, LAST_PERIOD_YEAR + 1) for q in (1, 2, 3, 4)]
        ends = [quarter_end(y, q) for y, q in quarters]
        n = len(quarters)

        def band(low_high: tuple[float, float]) -> float:
            low, high = low_high
            return float(np.exp(rng.uniform(np.log(low), np.log(high))))

        target_pe, target_pb, margin = band(profile.pe), band(profile.pb), band(profile.net_margin)
        leverage_base = float(rng.uniform(*profile.leverage))
        tax_rate = _TAX_RATE.get(entity.asset_class) or float(rng.choice([0.15, 0.25]))
        minority_share = float(rng.uniform(0.0, 0.12))
        minority_book = float(rng.uniform(0.0, 0.10))
        payout = float(rng.uniform(0.25, 0.35) if financial else rng.uniform(0.3, 0.8))
        season = np.array([0.22, 0.25, 0.25, 0.28]) + rng.normal(0, 0.015, 4)
        season = season / season.sum() * 4
        profit_noise = _ar1(rng, n, 0.5, 0.07)
        revenue_noise = rng.normal(0, 0.03, n)
        book_noise = rng.normal(0, 0.02, n)
        leverage = np.clip(leverage_base * np.exp(_ar1(rng, n, 0.9, 0.02)), profile.leverage[0] * 0.9,
                           profile.leverage[1] * 1.1)
        biz_tax, sell, rd = rng.uniform(0.004, 0.012), rng.uniform(0.02, 0.12), rng.uniform(0.01, 0.06)
        fin, admin = rng.uniform(-0.005, 0.02), rng.uniform(0.03, 0.08)
        pretax_margin = margin / (1 - minority_share) / (1 - tax_rate)
        gross = np.clip(pretax_margin + biz_tax + sell + rd + fin + admin + _ar1(rng, n, 0.9, 0.004), 0.05, 0.95)
        line_noise = rng.uniform(0.9, 1.1, (n, 3))
        other_noise = np.column_stack([rng.normal(0.005, 0.01, n), rng.uniform(0, 0.004, n), rng.uniform(0, 0.003, n)])
        cur_asset_share = rng.uniform(0.35, 0.7)
        cur_liab_share = rng.uniform(0.55, 0.85)
        asset_mix_cur = _drifting_mix(rng, [3, 1, 1, 3, 1, 3, 1], n)
        asset_mix_nca = _drifting_mix(rng, [1, 4, 1, 2, 1, 0.5, 1], n)
        liab_mix_cur = _drifting_mix(rng, [3, 1, 4, 2, 1, 1, 1], n)
        liab_mix_ncl = _drifting_mix(rng, [4, 1, 1], n)
        equity_mix = rng.uniform(0.2, 0.6)
        if financial:  # no inventories: their share of current assets goes to the other items
            asset_mix_cur[:, 5] = 0.0
            asset_mix_cur = asset_mix_cur / asset_mix_cur.sum(axis=1, keepdims=True)
        # A year's fortune, drawn per fiscal year of a fixed range: a dip, or a fourth-quarter
        # write-down of 6-12 quarters' profit (no trailing figure through it near zero).
        years = {}
        for fy in range(FIRST_PERIOD_YEAR, LAST_PERIOD_YEAR + 2):
            loss = unit_uniform(seed, code, "loss-year", fy) < profile.loss_rate
            dip = unit_uniform(seed, code, "dip-year", fy) < profile.dip_rate
            years[fy] = (6.0 + 6.0 * unit_uniform(seed, code, "write-down", fy) if loss else 0.0,
                         0.6 + 0.25 * unit_uniform(seed, code, "dip", fy) if dip else 1.0)

        market_value = self._quarter_market_values(entity, ends)
        singles: list[dict[str, int]] = []
        balance_inputs: list[tuple] = []
        balances: list[dict[str, int]] = []
        parent_equity = 0.0
        prev_annual_parent_ni = 0.0
        for i, end in enumerate(ends):
            fy, fq = fiscal.year(end), fiscal.quarter(end)
            write_down, dip = years[fy]
            base_profit = market_value[i] / target_pe / 4 * season[(end.month - 1) // 3] * math.exp(profit_noise[i])
            profit = -write_down * base_profit if (write_down and fq == 4) else base_profit * dip
            rev = int(round(base_profit / margin * math.exp(revenue_noise[i])))
            n_income = profit / (1 - minority_share)
            total_profit = n_income / (1 - tax_rate) if n_income > 0 else n_income
            base = dict(
                revenue=rev, oper_cost=0 if financial else int(round(rev * (1 - gross[i]))),
                biz_tax_surchg=int(round(rev * biz_tax)), sell_exp=int(round(rev * sell * line_noise[i, 0])),
                rd_exp=int(round(rev * rd * line_noise[i, 1])), fin_exp=int(round(rev * fin)),
                invest_income=int(round(rev * other_noise[i, 0])), non_oper_income=int(round(rev * other_noise[i, 1])),
                non_oper_exp=int(round(rev * other_noise[i, 2])),
            )
            operate_profit = int(round(total_profit)) - base["non_oper_income"] + base["non_oper_exp"]
            # Administrative expenses (with impairments) are what is left between the gross profit
            # and the operating profit the quarter earns; never below half a percent of revenue.
            plug = (rev - base["oper_cost"] - base["biz_tax_surchg"] - base["sell_exp"] - base["rd_exp"]
                    - base["fin_exp"] + base["invest_income"] - operate_profit)
            base["admin_exp"] = max(plug, int(round(rev * 0.005)))
            single = income_lines(base, tax_rate, minority_share)
            dividend_paid = int(round(prev_annual_parent_ni * payout)) if (fq == 3 and prev_annual_parent_ni > 0) else 0
            anchor = market_value[i] / target_pb * math.exp(book_noise[i])
            if i == 0:
                parent_equity = anchor
            else:
                rolled = parent_equity + single["n_income_attr_p"] - dividend_paid
                parent_equity = rolled + EQUITY_PULL * (anchor - rolled)
            if fq == 4:
                prev_annual_parent_ni = sum(s["n_income_attr_p"] for s in singles[-3:]) + single["n_income_attr_p"]
            equity_parent_i = int(round(parent_equity))
            equity_min_i = int(round(max(parent_equity, 0) * minority_book))
            equity_total = equity_parent_i + equity_min_i
            total_assets = int(round(equity_total * leverage[i])) if equity_total > 0 else int(round(rev * 2))
            inputs = (total_assets, total_assets - equity_total, equity_parent_i, equity_min_i, cur_asset_share,
                      cur_liab_share, asset_mix_cur[i], asset_mix_nca[i], liab_mix_cur[i], liab_mix_ncl[i], equity_mix,
                      self._shares(code, end) if entity.asset_class == "cn_equity" else None, dividend_paid)
            singles.append(single)
            balance_inputs.append(inputs)
            balances.append(_balance_lines(*inputs))

        # Cash flows: operating and investing simulated, financing is the plug that makes the
        # change in cash equal the change in the balance sheet's cash.
        cash_rng = generator(seed, code, "cashflow")
        quarter_cash = [_quarter_cash(cash_rng, singles[j], balances[j]) for j in range(n)]
        return _History(ends, singles, balance_inputs, balances, quarter_cash, tax_rate, minority_share)

    def _originals(self, entity, fiscal: FiscalCalendar, history: _History) -> list[Report]:
        code = entity.code
        dual = self.market.universe.h_share_of(code) is not None
        horizon = self._horizons[entity.calendar]
        reports = []
        for i, end in enumerate(history.ends):
            fq = fiscal.quarter(end)
            if end.year == FIRST_PERIOD_YEAR or i - fq < 0 or fq not in reporting_quarters(entity.asset_class, dual):
                continue
            ann = self._ann_date(entity, fiscal, end, horizon)
            if ann is None:
                continue
            values = _period_values(history, i, fq, float(self._shares(code, end)))
            reports.append(Report(end, ann, values, fq, fiscal.year(end)))
        return reports

    def _restated(self, entity, fiscal: FiscalCalendar, history: _History, originals: list[Report]) -> list[Report]:
        """The comparatives restated by the reports of a year with a restatement (module doc)."""
        by_end = {r.end_date: r for r in originals}
        index = {end: i for i, end in enumerate(history.ends)}
        out = []
        seed = self.market.seed
        for report in originals:
            # A fiscal year restates or not, from which fiscal quarter and by how much: one draw per year.
            year = report.fiscal_year
            if unit_uniform(seed, entity.code, "restates", year) >= RESTATEMENT_RATE:
                continue
            first_quarter = 1 + int(4 * unit_uniform(seed, entity.code, "restates-from", year))
            size = (0.02 + 0.08 * unit_uniform(seed, entity.code, "restated-by", year)) * (
                1 if unit_uniform(seed, entity.code, "restated-up", year) < 0.75 else -1)
            if report.quarter < first_quarter:
                continue
            comparative = by_end.get(quarter_ends_back(report.end_date, 4))
            if comparative is None:
                continue
            i = index[comparative.end_date]
            fq = comparative.quarter
            values = _period_values(_scaled(history, range(i - fq, i + 1), 1 + size), i, fq,
                                    comparative.values["total_share"])
            out.append(Report(comparative.end_date, report.ann_date, values, fq, comparative.fiscal_year, RESTATED))
        return out

    def _quarter_market_values(self, entity, ends: list[dt.date]) -> np.ndarray:
        """The average market value of each quarter (every share class at the listed price, in
        the reporting currency); the first bar's before the first bar, the last known one after
        the last (those quarters are never announced within the calendar)."""
        bars = self.market.prices.daily(entity.code)
        if not bars.dates:
            raise StatementLookupError(f"{entity.code} has no price history to size its statements from")
        values = bars.close * bars.total_share
        if entity.reporting_currency != entity.currency:
            values = values * self.market.currencies.rates(entity.currency, entity.reporting_currency, bars.ordinals)
        cumulative = np.concatenate([[0.0], np.cumsum(values)])
        end_ordinals = np.array([e.toordinal() for e in ends], dtype=np.int64)
        stops = np.searchsorted(bars.ordinals, end_ordinals, "right")
        starts = np.concatenate([[0], stops[:-1]])
        out = np.empty(len(ends))
        for k, (a, b) in enumerate(zip(starts.tolist(), stops.tolist())):
            if b == 0:
                out[k] = values[0]
            elif b > a:
                out[k] = (cumulative[b] - cumulative[a]) / (b - a)
            else:
                out[k] = out[k - 1]
        return out

    def _shares(self, code: str, day: dt.date) -> int:
        return int(round(self.market.corporate.total_shares(code, day)))

    def _ann_date(self, entity, fiscal: FiscalCalendar, end: dt.date, horizon: dt.date) -> dt.date | None:
        earliest, latest = announcement_window(entity.asset_class, fiscal, end)
        if latest > horizon:
            return None
        ann = self._raw_ann_date(entity, fiscal, end, earliest, latest)
        if entity.asset_class == "cn_equity" and fiscal.quarter(end) == 4:
            # A-share practice: the annual report comes out no later than the next first-quarter
            # report (both by April 30; the same day when the company publishes them together).
            q1_end = quarter_end(end.year + 1, 1)
            q1_earliest, q1_latest = announcement_window(entity.asset_class, fiscal, q1_end)
            ann = min(ann, self._raw_ann_date(entity, fiscal, q1_end, q1_earliest, q1_latest))
        return ann

    def _raw_ann_date(self, entity, fiscal: FiscalCalendar, end: dt.date, earliest: dt.date, latest: dt.date) -> dt.date:
        span = (latest - earliest).days
        # Annual reports cluster late in the window, as they do in practice.
        u = unit_uniform(self.market.seed, entity.code, "ann_date", end.isoformat())
        if fiscal.quarter(end) == 4:
            u = u ** 0.5
        day = earliest + dt.timedelta(days=int(round(u * span)))
        calendar = entity.calendar
        ann = announcement_day(calendar, day)
        if ann < earliest:
            ann = earliest_session_on_or_after(calendar, earliest)
        if ann <= entity.list_date:
            # Pre-listing periods are published in the listing prospectus.
            ann = announcement_day(calendar, entity.list_date - dt.timedelta(days=1))
        return ann


def _balance_lines(
    total_assets: int, total_liab: int, equity_parent: int, equity_minority: int,
    cur_asset_share: float, cur_liab_share: float, mix_cur: np.ndarray, mix_nca: np.ndarray,
    mix_cur_liab: np.ndarray, mix_ncl: np.ndarray, equity_mix: float, share_capital: int | None,
    dividend_paid: int,
) -> dict[str, int]:
    total_cur_assets = int(round(total_assets * cur_asset_share))
    total_nca = total_assets - total_cur_assets
    cur = _split(total_cur_assets, mix_cur)
    nca = _split(total_nca, mix_nca)
    total_cur_liab = int(round(total_liab * cur_liab_share))
    total_ncl = total_liab - total_cur_liab
    cl = _split(total_cur_liab, mix_cur_liab)
    ncl = _split(total_ncl, mix_ncl)
    capital = share_capital if share_capital is not None else int(round(max(equity_parent, 0) * 0.1))
    cap_rese = int(round(max(equity_parent, 0) * equity_mix))
    surplus_rese = int(round(max(equity_parent, 0) * 0.05))
    undistr = equity_parent - capital - cap_rese - surplus_rese
    return dict(
        money_cap=cur[0], trad_asset=cur[1], notes_receiv=cur[2], accounts_receiv=cur[3],
        prepayment=cur[4], inventories=cur[5], oth_cur_assets=cur[6], total_cur_assets=total_cur_assets,
        lt_eqt_invest=nca[0], fix_assets=nca[1], cip=nca[2], intan_assets=nca[3],
        defer_tax_assets=nca[4], goodwill=nca[5], oth_nca=nca[6], total_nca=total_nca,
        total_assets=total_assets,
        st_borr=cl[0], notes_payable=cl[1], acct_payable=cl[2], contract_liab=cl[3],
        payroll_payable=cl[4], taxes_payable=cl[5], oth_cur_liab=cl[6], total_cur_liab=total_cur_liab,
        lt_borr=ncl[0], bond_payable=ncl[1], oth_ncl=ncl[2], total_ncl=total_ncl, total_liab=total_liab,
        total_share_capital=capital, cap_rese=cap_rese, surplus_rese=surplus_rese, undistr_porfit=undistr,
        total_hldr_eqy_exc_min_int=equity_parent, minority_int=equity_minority,
        total_hldr_eqy_inc_min_int=equity_parent + equity_minority,
        total_liab_hldr_eqy=total_liab + equity_parent + equity_minority,
        dividend_paid=dividend_paid,
    )


def _quarter_cash(rng: np.random.Generator, single: dict[str, int], balance: dict[str, int]) -> dict[str, int]:
    """Single-quarter cash flows (reports add them up year to date)."""
    depreciation = int(round(balance["fix_assets"] * 0.02))
    working_capital = int(round(single["revenue"] * rng.normal(0, 0.05)))
    capex = int(round(single["revenue"] * rng.uniform(0.02, 0.09)))
    return {
        "n_cashflow_act": single["n_income"] + depreciation + working_capital,
        "c_pay_acq_const_fiolta": capex,
        "n_cashflow_inv_act": -capex + int(round(single["invest_income"] * 0.5)),
        "c_fr_sale_sg": int(round(single["revenue"] * 1.13 * rng.uniform(0.95, 1.03))),
        "c_paid_goods_s": int(round(single["oper_cost"] * 1.05 * rng.uniform(0.95, 1.05))),
        "c_paid_to_for_empl": int(round((single["admin_exp"] + single["sell_exp"]) * 0.6)),
        "c_paid_for_taxes": single["income_tax"] + single["biz_tax_surchg"],
        "c_pay_dist_dpcp_int_exp": balance["dividend_paid"],
    }


def _period_values(history: _History, i: int, fq: int, total_share: float) -> dict[str, float]:
    """Every line of the report of quarter `i` (fiscal quarter `fq`): flows summed from the
    fiscal year's start, balances at the period end, cash flows against the year's opening cash."""
    ytd = range(i - fq + 1, i + 1)
    values: dict[str, float] = {line: float(sum(history.singles[j][line] for j in ytd)) for line in history.singles[i]}
    values.update({k: float(v) for k, v in history.balances[i].items() if k != "dividend_paid"})
    cash = {line: sum(history.quarter_cash[j][line] for j in ytd) for line in history.quarter_cash[i]}
    cash_begin = history.balances[i - fq]["money_cap"]
    cash_end = history.balances[i]["money_cap"]
    increase = cash_end - cash_begin
    values.update({line: float(v) for line, v in cash.items()})
    values.update(
        n_cash_flows_fnc_act=float(increase - cash["n_cashflow_act"] - cash["n_cashflow_inv_act"]),
        n_incr_cash_cash_equ=float(increase), c_cash_equ_beg_period=float(cash_begin),
        c_cash_equ_end_period=float(cash_end),
        free_cashflow=float(cash["n_cashflow_act"] - cash["c_pay_acq_const_fiolta"]),
    )
    values["total_share"] = total_share
    return values


def _scaled(history: _History, quarters: range, factor: float) -> _History:
    """The history with every line of `quarters` scaled by `factor` and its totals recomputed:
    the figures of a restated period (a combined business, a changed policy)."""
    singles, balances, cash = list(history.singles), list(history.balances), list(history.quarter_cash)
    for j in quarters:
        base = {k: int(round(history.singles[j][k] * factor)) for k in _INCOME_BASE}
        singles[j] = income_lines(base, history.tax_rate, history.minority_share)
        (assets, liab, parent, minority, *rest, capital, dividend) = history.balance_inputs[j]
        scaled = [int(round(x * factor)) for x in (assets, parent, minority)]
        balances[j] = _balance_lines(scaled[0], scaled[0] - scaled[1] - scaled[2], scaled[1], scaled[2], *rest,
                                     capital, int(round(dividend * factor)))
        cash[j] = {k: int(round(v * factor)) for k, v in history.quarter_cash[j].items()}
    return _History(history.ends, singles, history.balance_inputs, balances, cash, history.tax_rate,
                    history.minority_share)


def ttm_of(known: tuple[Report, ...], line: str, fiscal: FiscalCalendar) -> float | None:
    """A line over the twelve months to the latest period of `known` (one version per period):
    the annual figure, or the year to date plus the last fiscal year less the same period of it."""
    if not known:
        return None
    latest = known[-1]
    if latest.quarter == 4:
        return latest.values[line]
    by_end = {r.end_date: r for r in known}
    prev_annual = by_end.get(fiscal.year_end_before(latest.end_date))
    prev_same = by_end.get(quarter_ends_back(latest.end_date, 4))
    if prev_annual is None or prev_same is None:
        return None
    return latest.values[line] + prev_annual.values[line] - prev_same.values[line]


def _ratio(numerator: float, denominator: float, scale: float = 1.0, decimals: int = 4) -> float | None:
    if denominator == 0:
        return None
    return round(numerator / denominator * scale, decimals)


def _growth(current: float, prior: float | None) -> float | None:
    """Year-over-year change in percent against the absolute prior value (Tushare convention)."""
    if prior is None or prior == 0:
        return None
    return round((current - prior) / abs(prior) * 100, 4)


def derive_indicators(current: Report, year_begin: Report | None, prior_same: Report | None) -> dict[str, float | None]:
    """Financial indicators of one period, derived only from the statements.

    `year_begin` is the previous fiscal year-end report (opening balances for averages),
    `prior_same` the same period one year earlier (for growth rates: the version the company
    compared against, restated where the report restated it). Flows are year-to-date, so
    ROE/ROA are for the period to date and not annualised. Per-share values divide by the
    period-end share count.
    """
    v = current.values
    shares = v["total_share"]
    equity_end = v["total_hldr_eqy_exc_min_int"]
    equity_avg = (year_begin.values["total_hldr_eqy_exc_min_int"] + equity_end) / 2 if year_begin else equity_end
    assets_avg = (year_begin.values["total_assets"] + v["total_assets"]) / 2 if year_begin else v["total_assets"]
    prior = prior_same.values if prior_same else None
    eps = _ratio(v["n_income_attr_p"], shares)
    prior_eps = _ratio(prior["n_income_attr_p"], prior["total_share"]) if prior else None
    return {
        "eps": eps,
        "dt_eps": eps,
        "total_revenue_ps": _ratio(v["revenue"], shares),
        "revenue_ps": _ratio(v["revenue"], shares),
        "bps": _ratio(equity_end, shares),
        "ocfps": _ratio(v["n_cashflow_act"], shares),
        "profit_dedt": v["profit_dedt"],
        "gross_margin": v["revenue"] - v["oper_cost"],
        "grossprofit_margin": _ratio(v["revenue"] - v["oper_cost"], v["revenue"], 100),
        "netprofit_margin": _ratio(v["n_income"], v["revenue"], 100),
        "roe": _ratio(v["n_income_attr_p"], equity_avg, 100),
        "roe_dt": _ratio(v["profit_dedt"], equity_avg, 100),
        "roa": _ratio(v["n_income"], assets_avg, 100),
        "debt_to_assets": _ratio(v["total_liab"], v["total_assets"], 100),
        "current_ratio": _ratio(v["total_cur_assets"], v["total_cur_liab"]),
        "quick_ratio": _ratio(v["total_cur_assets"] - v["inventories"], v["total_cur_liab"]),
        "assets_turn": _ratio(v["revenue"], assets_avg),
        "ebit": v["total_profit"] + v["fin_exp"],
        "fcff": v["free_cashflow"],
        "basic_eps_yoy": _growth(eps, prior_eps) if eps is not None else None,
        "netprofit_yoy": _growth(v["n_income_attr_p"], prior["n_income_attr_p"] if prior else None),
        "or_yoy": _growth(v["revenue"], prior["revenue"] if prior else None),
        "op_yoy": _growth(v["operate_profit"], prior["operate_profit"] if prior else None),
        "equity_yoy": _growth(equity_end, prior["total_hldr_eqy_exc_min_int"] if prior else None),
    }


def indicator_inputs(versions: Sequence[Report], current: Report, fiscal: FiscalCalendar) -> tuple[Report | None, Report | None]:
    """(previous fiscal year-end report, same period a year earlier) as known when `current` was
    published: the latest version of each announced on or before `current`'s announcement."""
    wanted = (fiscal.year_end_before(current.end_date), quarter_ends_back(current.end_date, 4))
    latest: dict[dt.date, Report] = {}
    for r in versions:  # by period, then announcement: the last one known wins
        if r.end_date in wanted and r.ann_date <= current.ann_date and r is not current:
            latest[r.end_date] = r
    return latest.get(wanted[0]), latest.get(wanted[1])
