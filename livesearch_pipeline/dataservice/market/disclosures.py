"""Disclosures derived from an A-share company's statements: earnings preannouncements (业绩预告),
flash reports (业绩快报), main-business segments, disclosure schedules and audit opinions, each
consistent with the statements of market/fundamentals.py as first reported.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import numpy as np

from livesearch_pipeline.dataservice.market.reporting import announcement_day, quarter_end
from livesearch_pipeline.dataservice.market.rng import generator

# The statements model (market/fundamentals.py) builds these from itself; its types stay there,
# so that this module depends on nothing of it (no import cycle between the two).
Fundamentals = Any
Report = Any

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
            # Half-year and annual results are preannounced when the rules require it and often by
            # choice; first- and third-quarter results less often.
            chance = (0.9 if mandatory else 0.4) if report.quarter in (2, 4) else (0.35 if mandatory else 0.15)
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


def _split(total: int, shares: np.ndarray) -> list[int]:
    """Split a whole amount into parts by `shares`; the last part absorbs rounding, so the parts
    sum to `total` exactly."""
    parts = [int(round(total * float(s))) for s in shares[:-1]]
    parts.append(total - sum(parts))
    return parts
