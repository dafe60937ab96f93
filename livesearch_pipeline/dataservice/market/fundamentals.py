"""Financial statements of the synthetic listed companies (A-shares, HK and US, simplified).

One quarterly history per company, built once and cached: single-quarter flows are simulated
and then presented as Tushare does, cumulative year-to-date for income and cash flow, period-end
balances for the balance sheet. Every amount is a whole currency unit (元, HKD or USD) held in a
float, so sums of amounts are exact in binary floating point and the balance sheet balances with
`==`: total_assets == total_liab + total_hldr_eqy_inc_min_int.

Point-in-time: each report carries its announcement date (`ann_date`, a session of the
company's calendar after the period end with the regulatory lag); nothing here is "known" on a
date before that announcement. Reports whose announcement would fall beyond the calendar's
horizon are not generated, since no valid clock can reach them.

Reporting calendars: A-shares report every quarter (Q1 by Apr 30, H1 by Aug 31, Q3 by Oct 31,
annual by Apr 30 of the next year, and never after the next Q1 report: the same day at the latest); HK companies report half-yearly (interim by Aug 31, annual by
Mar 31); US companies quarterly (10-Q within 40 days, 10-K within 60 days). Amounts are in the
company's reporting currency: CNY for A-shares, HKD for HK, USD for US listings.

Shares come from the corporate-actions model (`total_shares` at the period end); per-share
indicators divide by that period-end share count, which is documented in their field metadata.
Dividends paid out of retained earnings use this model's own payout ratio; they are not read
back from the dividend table.
"""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from livesearch_pipeline.core.calendars import CALENDAR_START, get_calendar, session_dates, session_on_or_before
from livesearch_pipeline.dataservice.market.rng import SIMULATION_END, generator, unit_uniform

STATEMENT_CLASSES = ("cn_equity", "hk_equity", "us_equity")
FIRST_PERIOD_YEAR = 2012  # one warm-up year so that 2013 reports have a prior year to compare
# Fixed, not the calendar's horizon: the per-quarter draws are made for every period of this
# range, so a period's values never depend on how many later periods the calendar reaches.
LAST_PERIOD_YEAR = SIMULATION_END.year
QUARTER_ENDS = ((3, 31), (6, 30), (9, 30), (12, 31))
# Banks, insurers and brokers (A-share, HK and US industries of the universe) hold no inventories
# and report no cost of sales: their operating costs are business and administrative expenses.
FINANCIAL_INDUSTRIES = frozenset({"银行", "证券", "保险", "金融", "Banks", "Insurance"})
# Lines (and the indicators derived from them) a financial company's statements leave empty.
NOT_REPORTED_BY_FINANCIALS = ("oper_cost", "inventories", "gross_margin", "grossprofit_margin", "bz_cost",
                              "bz_profit")


def is_financial(industry: str | None) -> bool:
    return industry in FINANCIAL_INDUSTRIES



class StatementLookupError(LookupError):
    """A company without statements (wrong asset class or unknown code)."""


@dataclass(frozen=True)
class Report:
    """One announced periodic report: all statement lines of one period, YTD for flows."""

    end_date: dt.date
    ann_date: dt.date
    values: dict[str, float]

    @property
    def quarter(self) -> int:
        return (self.end_date.month - 1) // 3 + 1


def quarter_end(year: int, quarter: int) -> dt.date:
    month, day = QUARTER_ENDS[quarter - 1]
    return dt.date(year, month, day)


def is_quarter_end(day: dt.date) -> bool:
    return (day.month, day.day) in QUARTER_ENDS


def _announcement_window(asset_class: str, end: dt.date) -> tuple[dt.date, dt.date]:
    """Earliest and latest announcement day allowed for a period ending on `end`."""
    q = (end.month - 1) // 3 + 1
    y = end.year
    if asset_class == "cn_equity":
        windows = {
            1: (dt.date(y, 4, 12), dt.date(y, 4, 30)),
            2: (dt.date(y, 7, 20), dt.date(y, 8, 31)),
            3: (dt.date(y, 10, 12), dt.date(y, 10, 31)),
            4: (dt.date(y + 1, 1, 20), dt.date(y + 1, 4, 30)),
        }
    elif asset_class == "hk_equity":
        windows = {2: (dt.date(y, 7, 25), dt.date(y, 8, 31)), 4: (dt.date(y + 1, 2, 20), dt.date(y + 1, 3, 31))}
    else:
        windows = {q: (end + dt.timedelta(days=20), end + dt.timedelta(days=40)) for q in (1, 2, 3)}
        windows[4] = (dt.date(y + 1, 1, 25), dt.date(y + 1, 2, 28))
    return windows[q]


def reporting_quarters(asset_class: str) -> tuple[int, ...]:
    return (2, 4) if asset_class == "hk_equity" else (1, 2, 3, 4)


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


class Fundamentals:
    def __init__(self, market: Any) -> None:
        self.market = market
        self._cache: dict[str, tuple[Report, ...]] = {}
        # What is known on a date changes only on announcement dates: point-in-time lookups are
        # memoised per (code, epoch), the number of distinct announcement dates passed, so that
        # valuation tools asking about every session of a decade stay fast.
        self._ann_dates: dict[str, list[dt.date]] = {}
        self._known: dict[tuple[str, int], tuple[Report, ...]] = {}
        self._ttm_known: dict[tuple[str, str, int], float | None] = {}

    # ------------------------------------------------------------------ public API

    def reports(self, code: str) -> tuple[Report, ...]:
        """Every report of the company that the calendar horizon allows, oldest first,
        including reports not yet announced on any particular date (callers filter by ann_date)."""
        cached = self._cache.get(code)
        if cached is None:
            cached = self._build(code)
            self._cache[code] = cached
        return cached

    def announced(self, code: str, as_of: dt.date) -> list[Report]:
        """Reports announced on or before `as_of`, oldest first (by period end)."""
        return list(self._announced_in_epoch(code, self._epoch(code, as_of)))

    def _epoch(self, code: str, as_of: dt.date) -> int:
        dates = self._ann_dates.get(code)
        if dates is None:
            dates = sorted({r.ann_date for r in self.reports(code)})
            self._ann_dates[code] = dates
        return bisect.bisect_right(dates, as_of)

    def _announced_in_epoch(self, code: str, epoch: int) -> tuple[Report, ...]:
        known = self._known.get((code, epoch))
        if known is None:
            last_date = self._ann_dates[code][epoch - 1] if epoch else dt.date.min
            known = tuple(r for r in self.reports(code) if r.ann_date <= last_date)
            self._known[(code, epoch)] = known
        return known

    def report(self, code: str, end_date: dt.date) -> Report | None:
        return next((r for r in self.reports(code) if r.end_date == end_date), None)

    def ttm_net_profit(self, code: str, date: dt.date) -> float | None:
        """Trailing-twelve-month net profit attributable to the parent (reporting currency; CNY
        for A-shares) from the reports announced on or before `date`; None when history is short."""
        return self._ttm(code, date, "n_income_attr_p")

    def ttm_revenue(self, code: str, date: dt.date) -> float | None:
        """Trailing-twelve-month operating revenue as known on `date`; None when history is short."""
        return self._ttm(code, date, "revenue")

    def book_equity(self, code: str, date: dt.date) -> float | None:
        """Equity attributable to the parent from the latest balance sheet announced by `date`."""
        known = self._announced_in_epoch(code, self._epoch(code, date))
        return known[-1].values["total_hldr_eqy_exc_min_int"] if known else None

    @cached_property
    def disclosures(self) -> "Disclosures":
        return Disclosures(self)

    def has_statements(self, code: str) -> bool:
        entity = self._entity(code)
        return entity.asset_class in STATEMENT_CLASSES

    # ------------------------------------------------------------------ TTM

    def _ttm(self, code: str, date: dt.date, line: str) -> float | None:
        epoch = self._epoch(code, date)
        key = (code, line, epoch)
        if key not in self._ttm_known:
            self._ttm_known[key] = self._ttm_of(self._announced_in_epoch(code, epoch), line)
        return self._ttm_known[key]

    @staticmethod
    def _ttm_of(known: tuple[Report, ...], line: str) -> float | None:
        if not known:
            return None
        latest = known[-1]
        if latest.quarter == 4:
            return latest.values[line]
        by_end = {r.end_date: r for r in known}
        prev_annual = by_end.get(quarter_end(latest.end_date.year - 1, 4))
        prev_same = by_end.get(quarter_end(latest.end_date.year - 1, latest.quarter))
        if prev_annual is None or prev_same is None:
            return None
        return latest.values[line] + prev_annual.values[line] - prev_same.values[line]

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
        seed = self.market.seed
        rng = generator(seed, code, "fundamentals")
        quarters = [(y, q) for y in range(FIRST_PERIOD_YEAR, LAST_PERIOD_YEAR + 1) for q in (1, 2, 3, 4)]
        n = len(quarters)

        # Size the company from its market value at its first simulated bar, so that the
        # valuation multiples the quote tools derive (PE, PB, PS) land in realistic ranges.
        market_value = self._first_market_value(code)
        price_to_sales = float(np.exp(rng.uniform(np.log(1.0), np.log(6.0))))
        price_to_book = rng.uniform(1.5, 5.0)
        warm_up = 0.8  # the history starts about two years before the first bar
        annual_revenue = market_value / price_to_sales * warm_up

        growth = np.cumsum(rng.normal(0.005, 0.03, n))  # log-growth per quarter
        season = np.array([0.22, 0.25, 0.25, 0.28]) + rng.normal(0, 0.015, 4)
        season = season / season.sum() * 4
        revenue_q = annual_revenue / 4 * np.exp(growth) * np.array([season[q - 1] for _, q in quarters])
        revenue_q *= np.exp(rng.normal(0, 0.04, n))

        gross_margin = np.clip(rng.uniform(0.18, 0.45) + np.cumsum(rng.normal(0, 0.006, n)), 0.08, 0.8)
        sell_ratio, admin_ratio, rd_ratio = rng.uniform(0.02, 0.12), rng.uniform(0.03, 0.08), rng.uniform(0.01, 0.06)
        fin_ratio, tax_ratio = rng.uniform(-0.005, 0.02), rng.uniform(0.004, 0.012)
        # Bad years hit margins for a whole year: they produce losses and turnarounds.
        year_shock = {y: (rng.uniform(0.05, 0.16) if rng.uniform() < 0.1 else 0.0)
                      for y in range(FIRST_PERIOD_YEAR, LAST_PERIOD_YEAR + 1)}
        income_tax_rate = float(rng.choice([0.15, 0.25]))
        minority_share = rng.uniform(0.0, 0.12)
        payout = rng.uniform(0.3, 0.8)
        leverage = np.clip(rng.uniform(1.3, 3.2) + np.cumsum(rng.normal(0, 0.03, n)), 1.1, 6.0)
        cur_asset_share = rng.uniform(0.35, 0.7)
        cur_liab_share = rng.uniform(0.55, 0.85)
        asset_mix_cur = _drifting_mix(rng, [3, 1, 1, 3, 1, 3, 1], n)
        asset_mix_nca = _drifting_mix(rng, [1, 4, 1, 2, 1, 0.5, 1], n)
        liab_mix_cur = _drifting_mix(rng, [3, 1, 4, 2, 1, 1, 1], n)
        liab_mix_ncl = _drifting_mix(rng, [4, 1, 1], n)
        equity_mix = rng.uniform(0.2, 0.6)
        financial = is_financial(entity.industry)
        if financial:  # no inventories: their share of current assets goes to the other items
            asset_mix_cur[:, 5] = 0.0
            asset_mix_cur = asset_mix_cur / asset_mix_cur.sum(axis=1, keepdims=True)

        parent_equity = market_value / price_to_book * warm_up
        minority_equity = parent_equity * minority_share
        prev_annual_parent_ni = 0.0
        reports: list[Report] = []
        singles: list[dict[str, int]] = []
        balances: list[dict[str, int]] = []
        calendar = entity.calendar
        horizon = self._horizons[calendar]
        for i, (year, q) in enumerate(quarters):
            rev = int(round(revenue_q[i]))
            margin = gross_margin[i] - year_shock[year]
            cost = int(round(rev * (1 - margin)))
            biz_tax = int(round(rev * tax_ratio))
            sell = int(round(rev * sell_ratio * rng.uniform(0.9, 1.1)))
            admin = int(round(rev * admin_ratio * rng.uniform(0.9, 1.1)))
            rd = int(round(rev * rd_ratio * rng.uniform(0.9, 1.1)))
            if financial:  # no cost of sales: operating costs are business and admin expenses
                admin, cost = admin + cost, 0
            fin = int(round(rev * fin_ratio))
            invest = int(round(rev * rng.normal(0.005, 0.01)))
            operate_profit = rev - cost - biz_tax - sell - admin - rd - fin + invest
            non_oper_income = int(round(rev * rng.uniform(0, 0.004)))
            non_oper_exp = int(round(rev * rng.uniform(0, 0.003)))
            total_profit = operate_profit + non_oper_income - non_oper_exp
            income_tax = int(round(max(0, total_profit) * income_tax_rate))
            n_income = total_profit - income_tax
            minority_gain = int(round(n_income * minority_share))
            n_income_attr_p = n_income - minority_gain
            non_recurring = invest + non_oper_income - non_oper_exp
            single = dict(
                revenue=rev, oper_cost=cost, biz_tax_surchg=biz_tax, sell_exp=sell, admin_exp=admin,
                rd_exp=rd, fin_exp=fin, invest_income=invest, operate_profit=operate_profit,
                non_oper_income=non_oper_income, non_oper_exp=non_oper_exp, total_profit=total_profit,
                income_tax=income_tax, n_income=n_income, minority_gain=minority_gain,
                n_income_attr_p=n_income_attr_p, profit_dedt=n_income_attr_p - int(round(non_recurring * 0.8)),
            )
            dividend_paid = int(round(prev_annual_parent_ni * payout)) if (q == 3 and prev_annual_parent_ni > 0) else 0
            parent_equity += n_income_attr_p - dividend_paid
            minority_equity += minority_gain
            if q == 4:
                prev_annual_parent_ni = sum(s["n_income_attr_p"] for s in singles[-3:]) + n_income_attr_p
            equity_parent_i = int(round(parent_equity))
            equity_min_i = int(round(minority_equity))
            equity_total = equity_parent_i + equity_min_i
            total_assets = int(round(max(equity_total, rev) * leverage[i])) if equity_total > 0 else int(round(rev * 2))
            total_liab = total_assets - equity_total
            balance = self._balance_lines(
                total_assets, total_liab, equity_parent_i, equity_min_i, cur_asset_share, cur_liab_share,
                asset_mix_cur[i], asset_mix_nca[i], liab_mix_cur[i], liab_mix_ncl[i], equity_mix,
                self._shares(code, quarter_end(year, q)) if entity.asset_class == "cn_equity" else None,
            )
            balance["dividend_paid"] = dividend_paid
            singles.append(single)
            balances.append(balance)

        # Cash flows: operating and investing simulated, financing is the plug that makes the
        # change in cash equal the change in the balance sheet's cash.
        cash_rng = generator(seed, code, "cashflow")
        quarter_cash = [self._quarter_cash(cash_rng, singles[j], balances[j]) for j in range(n)]
        for i, (year, q) in enumerate(quarters):
            end = quarter_end(year, q)
            if year == FIRST_PERIOD_YEAR or q not in reporting_quarters(entity.asset_class):
                continue
            ann = self._ann_date(code, entity.asset_class, calendar, end, entity.list_date, horizon)
            if ann is None:
                continue
            ytd_idx = [j for j in range(i - q + 1, i + 1)]
            values: dict[str, float] = {}
            for line in singles[i]:
                values[line] = float(sum(singles[j][line] for j in ytd_idx))
            values.update({k: float(v) for k, v in balances[i].items() if k != "dividend_paid"})
            values.update(self._cashflow(quarter_cash, balances, ytd_idx, i - q))
            values["total_share"] = float(self._shares(code, end))
            reports.append(Report(end_date=end, ann_date=ann, values=values))
        return tuple(reports)

    def _first_market_value(self, code: str) -> float:
        bars = self.market.prices.daily(code)
        if not bars.dates:
            raise StatementLookupError(f"{code} has no price history to size its statements from")
        return float(bars.close[0]) * self.market.corporate.total_shares(code, bars.dates[0])

    def _shares(self, code: str, day: dt.date) -> int:
        return int(round(self.market.corporate.total_shares(code, day)))

    @staticmethod
    def _balance_lines(
        total_assets: int, total_liab: int, equity_parent: int, equity_minority: int,
        cur_asset_share: float, cur_liab_share: float, mix_cur: np.ndarray, mix_nca: np.ndarray,
        mix_cur_liab: np.ndarray, mix_ncl: np.ndarray, equity_mix: float, share_capital: int | None,
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
        )

    @staticmethod
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

    @staticmethod
    def _cashflow(
        quarter_cash: list[dict[str, int]], balances: list[dict[str, int]], ytd_idx: list[int], prior_year_end_idx: int,
    ) -> dict[str, float]:
        ytd = {line: sum(quarter_cash[j][line] for j in ytd_idx) for line in quarter_cash[ytd_idx[0]]}
        cash_begin = balances[prior_year_end_idx]["money_cap"]
        cash_end = balances[ytd_idx[-1]]["money_cap"]
        increase = cash_end - cash_begin
        out = {line: float(v) for line, v in ytd.items()}
        out.update(
            n_cash_flows_fnc_act=float(increase - ytd["n_cashflow_act"] - ytd["n_cashflow_inv_act"]),
            n_incr_cash_cash_equ=float(increase), c_cash_equ_beg_period=float(cash_begin),
            c_cash_equ_end_period=float(cash_end),
            free_cashflow=float(ytd["n_cashflow_act"] - ytd["c_pay_acq_const_fiolta"]),
        )
        return out

    def _ann_date(
        self, code: str, asset_class: str, calendar: str, end: dt.date, list_date: dt.date, horizon: dt.date
    ) -> dt.date | None:
        earliest, latest = _announcement_window(asset_class, end)
        if latest > horizon:
            return None
        ann = self._raw_ann_date(code, asset_class, calendar, end, list_date, earliest, latest)
        if asset_class == "cn_equity" and end.month == 12:
            # A-share practice: the annual report comes out no later than the next first-quarter
            # report (both by April 30; the same day when the company publishes them together).
            q1_end = quarter_end(end.year + 1, 1)
            q1_earliest, q1_latest = _announcement_window(asset_class, q1_end)
            ann = min(ann, self._raw_ann_date(code, asset_class, calendar, q1_end, list_date, q1_earliest, q1_latest))
        return ann

    def _raw_ann_date(self, code: str, asset_class: str, calendar: str, end: dt.date, list_date: dt.date,
                      earliest: dt.date, latest: dt.date) -> dt.date:
        span = (latest - earliest).days
        # Annual reports cluster late in the window, as they do in practice.
        u = unit_uniform(self.market.seed, code, "ann_date", end.isoformat())
        if end.month == 12:
            u = u ** 0.5
        day = earliest + dt.timedelta(days=int(round(u * span)))
        ann = announcement_day(calendar, day)
        if ann < earliest:
            ann = earliest_session_on_or_after(calendar, earliest)
        if ann <= list_date:
            # Pre-listing periods are published in the listing prospectus.
            ann = announcement_day(calendar, list_date - dt.timedelta(days=1))
        return ann


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
    `prior_same` the same period one year earlier (for growth rates). Flows are year-to-date, so
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


def indicator_inputs(reports: list[Report], current: Report) -> tuple[Report | None, Report | None]:
    """(previous year-end report, same period a year earlier) among `reports`."""
    by_end = {r.end_date: r for r in reports}
    year = current.end_date.year
    return (
        by_end.get(quarter_end(year - 1, 4)),
        by_end.get(quarter_end(year - 1, current.quarter)),
    )


# ---------------------------------------------------------------------------- derived disclosures

FORECAST_DEADLINES = {1: (4, 15), 2: (7, 15), 3: (10, 15), 4: (1, 31)}
EXPRESS_REVISED_SHARE = 0.25
EXPRESS_MAX_REVISION = 0.005
_SEGMENTS_PRODUCT = ("核心产品", "配套产品", "技术服务", "运维服务", "其他业务")
_SEGMENTS_REGION = ("境内", "境外")
AUDIT_AGENCIES = ("琨衡会计师事务所", "澄岳会计师事务所", "霁川会计师事务所", "沅泽会计师事务所", "珩宇会计师事务所")
_AUDITOR_NAMES = ("岑立言", "邝书远", "蔺舒桐", "缪嘉禾", "阙文博", "庹雨晴", "郦子航", "扈静姝")


@dataclass(frozen=True)
class Forecast:
    end_date: dt.date
    ann_date: dt.date
    type: str
    p_change_min: float | None
    p_change_max: float | None
    net_profit_min: float  # 万元
    net_profit_max: float  # 万元
    last_parent_net: float  # 万元


@dataclass(frozen=True)
class Express:
    end_date: dt.date
    ann_date: dt.date
    values: dict[str, float]
    revised: bool  # True: the later audited statement differs slightly (at most 0.5%)


@dataclass(frozen=True)
class DisclosurePlan:
    end_date: dt.date
    ann_date: dt.date  # publication of the schedule
    first_pre_date: dt.date
    modify_date: dt.date | None  # when the schedule was moved to the actual date
    actual_date: dt.date


def forecast_type(current: float, prior: float) -> str:
    """Tushare 业绩预告 type from this period's and last year's parent net profit."""
    if prior < 0 and current > 0:
        return "扭亏"
    if prior > 0 and current < 0:
        return "首亏"
    if prior <= 0 and current <= 0:
        return "续亏"
    change = (current - prior) / abs(prior) * 100
    if change >= 50:
        return "预增"
    if change <= -50:
        return "预减"
    if abs(change) < 10:
        return "续盈"
    return "略增" if change > 0 else "略减"


class Disclosures:
    """Preannouncements, flash reports, segments, schedules and audits of A-share companies,
    all derived from (and consistent with) the statements of `Fundamentals`."""

    def __init__(self, fundamentals: Fundamentals) -> None:
        self.fundamentals = fundamentals
        self._forecasts: dict[str, tuple[Forecast, ...]] = {}
        self._express: dict[str, tuple[Express, ...]] = {}
        self._plans: dict[str, tuple[DisclosurePlan, ...]] = {}

    @property
    def seed(self) -> int:
        return self.fundamentals.market.seed

    def _calendar(self, code: str) -> str:
        return self.fundamentals.market.universe.get(code).calendar

    def forecasts(self, code: str) -> tuple[Forecast, ...]:
        if code not in self._forecasts:
            self._forecasts[code] = tuple(self._build_forecasts(code))
        return self._forecasts[code]

    def _build_forecasts(self, code: str) -> list[Forecast]:
        reports = self.fundamentals.reports(code)
        by_end = {r.end_date: r for r in reports}
        calendar = self._calendar(code)
        out = []
        for report in reports:
            prior = by_end.get(quarter_end(report.end_date.year - 1, report.quarter))
            if prior is None:
                continue
            cur, last = report.values["n_income_attr_p"], prior.values["n_income_attr_p"]
            kind = forecast_type(cur, last)
            mandatory = kind in ("预增", "预减", "扭亏", "首亏", "续亏")
            rng = generator(self.seed, code, "forecast", report.end_date.isoformat())
            chance = (0.9 if mandatory else 0.25) if report.quarter in (2, 4) else (0.35 if mandatory else 0.05)
            if rng.uniform() >= chance:
                continue
            month, day = FORECAST_DEADLINES[report.quarter]
            year = report.end_date.year + (1 if report.quarter == 4 else 0)
            earliest = report.end_date + dt.timedelta(days=5)
            latest = min(dt.date(year, month, day), report.ann_date - dt.timedelta(days=1))
            if latest < earliest:
                continue
            target = earliest + dt.timedelta(days=int(rng.uniform(0.3, 1.0) * (latest - earliest).days))
            ann = announcement_day(calendar, target)
            if ann < earliest or ann >= report.ann_date:
                continue
            low, high = rng.uniform(0.02, 0.15), rng.uniform(0.02, 0.15)
            cur_wan, last_wan = cur / 1e4, last / 1e4
            np_min = round(cur_wan - abs(cur_wan) * low, 2)
            np_max = round(cur_wan + abs(cur_wan) * high, 2)
            p_min = p_max = None
            if last > 0:
                # Rounded outward so that the bracket still contains the actual change.
                p_min = float(np.floor((np_min - last_wan) / abs(last_wan) * 100 * 100) / 100)
                p_max = float(np.ceil((np_max - last_wan) / abs(last_wan) * 100 * 100) / 100)
            out.append(Forecast(report.end_date, ann, kind, p_min, p_max, np_min, np_max, round(last_wan, 2)))
        return out

    def express_reports(self, code: str) -> tuple[Express, ...]:
        if code not in self._express:
            self._express[code] = tuple(self._build_express(code))
        return self._express[code]

    def _build_express(self, code: str) -> list[Express]:
        reports = self.fundamentals.reports(code)
        by_end = {r.end_date: r for r in reports}
        calendar = self._calendar(code)
        out = []
        for report in reports:
            if report.quarter != 4:
                continue
            rng = generator(self.seed, code, "express", report.end_date.isoformat())
            if rng.uniform() >= 0.35:
                continue
            earliest = dt.date(report.end_date.year + 1, 1, 10)
            latest = min(dt.date(report.end_date.year + 1, 2, 28), report.ann_date - dt.timedelta(days=7))
            if latest < earliest:
                continue
            ann = announcement_day(calendar, earliest + dt.timedelta(days=int(rng.uniform() * (latest - earliest).days)))
            if ann < earliest:
                continue
            revised = bool(rng.uniform() < EXPRESS_REVISED_SHARE)
            v = report.values
            prior = by_end.get(quarter_end(report.end_date.year - 1, 4))

            def flash(line: str) -> float:
                if not revised:
                    return v[line]
                return float(round(v[line] * (1 + rng.uniform(-EXPRESS_MAX_REVISION, EXPRESS_MAX_REVISION))))

            values = {
                line: flash(line)
                for line in ("revenue", "operate_profit", "total_profit", "n_income_attr_p",
                             "total_assets", "total_hldr_eqy_exc_min_int")
            }
            values["total_share"] = v["total_share"]
            if prior:
                for line in ("revenue", "operate_profit", "total_profit", "n_income_attr_p", "total_hldr_eqy_exc_min_int"):
                    values["prior_" + line] = prior.values[line]
                values["prior_total_share"] = prior.values["total_share"]
            out.append(Express(report.end_date, ann, values, revised))
        return out

    def main_business(self, code: str, report: Report, kind: str) -> list[dict[str, float | str]]:
        """Segments of a half-year or annual report by product ('P') or region ('D'); their sales
        and costs sum exactly to the statement's revenue and operating cost."""
        names = _SEGMENTS_PRODUCT if kind == "P" else _SEGMENTS_REGION
        rng = generator(self.seed, code, "mainbz", kind)
        count = int(rng.integers(2, len(names) + 1)) if kind == "P" else 2
        base = rng.dirichlet(np.full(count, 2.0))
        period_rng = generator(self.seed, code, "mainbz", kind, report.end_date.isoformat())
        mix = base * np.exp(period_rng.normal(0, 0.05, count))
        mix = mix / mix.sum()
        cost_mix = mix * np.exp(period_rng.normal(0, 0.1, count))
        cost_mix = cost_mix / cost_mix.sum()
        sales = _split(int(report.values["revenue"]), mix)
        costs = _split(int(report.values["oper_cost"]), cost_mix)
        return [
            {"bz_item": names[i], "bz_sales": float(sales[i]), "bz_cost": float(costs[i]),
             "bz_profit": float(sales[i] - costs[i])}
            for i in range(count)
        ]

    def plans(self, code: str) -> tuple[DisclosurePlan, ...]:
        if code not in self._plans:
            calendar = self._calendar(code)
            plans = []
            for report in self.fundamentals.reports(code):
                rng = generator(self.seed, code, "disclosure", report.end_date.isoformat())
                moved = rng.uniform() < 0.2
                first = report.ann_date
                modify = None
                if moved:
                    shifted = announcement_day(calendar, report.ann_date + dt.timedelta(days=int(rng.integers(3, 15))))
                    if shifted > report.ann_date:
                        first = shifted
                        modify = announcement_day(calendar, report.ann_date - dt.timedelta(days=int(rng.integers(2, 10))))
                # Scheduled after the period ends (and before the report): a schedule announced
                # before the period end would exist only once the calendar knows the report's
                # announcement window, so extending the calendar would add past records.
                schedule = announcement_day(calendar, min(report.ann_date, report.end_date + dt.timedelta(days=int(rng.integers(1, 36)))))
                if modify is not None and modify <= schedule:
                    modify = None
                    first = report.ann_date
                plans.append(DisclosurePlan(report.end_date, schedule, first, modify, report.ann_date))
            self._plans[code] = tuple(plans)
        return self._plans[code]

    def audit(self, code: str, report: Report) -> dict[str, Any]:
        rng = generator(self.seed, code, "audit", report.end_date.year)
        agency_rng = generator(self.seed, code, "audit_agency", report.end_date.year // 5)
        agency = AUDIT_AGENCIES[int(agency_rng.integers(len(AUDIT_AGENCIES)))]
        signers = agency_rng.choice(len(_AUDITOR_NAMES), 2, replace=False)
        result = "标准无保留意见" if rng.uniform() < 0.95 else "带强调事项段的无保留意见"
        fee = float(round(max(3e5, min(2e7, report.values["revenue"] * rng.uniform(2e-4, 8e-4))), -4))
        return {
            "audit_result": result, "audit_fees": fee, "audit_agency": agency,
            "audit_sign": ",".join(_AUDITOR_NAMES[int(i)] for i in signers),
        }
