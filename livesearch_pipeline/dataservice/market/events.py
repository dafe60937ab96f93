"""Holders and corporate events of A-share companies (service "corporate").

Holdings are kept as ratios of total shares that drift slowly from one report period to the
next; the published amounts are those ratios applied to the share count of the period end (from
the corporate-actions model), so bonus issues scale holdings as they do in reality, and
`hold_ratio == hold_amount / total_shares * 100` to the rounding of the ratio. Float holdings
apply the float ratio of the period end. Holder lists are disclosed with the periodic reports
and share their announcement dates. Unlock schedules are read from the corporate-actions model's
float unlocks, so the float share count steps up exactly by the unlocked amount.

All holder, fund and person names are fictional.

Prefix stability: paths along report periods are drawn on the fixed quarter grid of the
fundamentals, pledge paths on a fixed weekly grid, and trade/repurchase events from one
generator per year, so extending the calendar adds later records and changes no earlier one.
"""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass
from typing import Any

import numpy as np

from livesearch_pipeline.core.calendars import calendar_end as _calendar_end, session_dates
from livesearch_pipeline.dataservice.market.fundamentals import FIRST_PERIOD_YEAR, LAST_PERIOD_YEAR
from livesearch_pipeline.dataservice.market.reporting import announcement_day
from livesearch_pipeline.dataservice.market.rng import GRID_END, WEEKDAY_GRID_START, SIMULATION_END, generator

QUARTER_GRID = (LAST_PERIOD_YEAR - FIRST_PERIOD_YEAR + 1) * 4
WEEK_GRID = (GRID_END - WEEKDAY_GRID_START).days // 7 + 1
EVENTS_FROM = dt.date(2015, 1, 5)

_ROSTER_SIZE = 14
_INSTITUTIONS = ("香江中央结算有限公司", "国合资产管理有限公司", "汇泽社会保障基金组合", "澄岳人寿保险股份有限公司-传统产品")
_SURNAMES = "岑邝蔺缪阙庹郦扈仉濮殳蒯宓逯晏暨"
_GIVEN = ("立言", "书远", "舒桐", "嘉禾", "文博", "雨晴", "子航", "静姝", "明哲", "思源", "若谷", "景行", "清扬", "致远")


@dataclass(frozen=True)
class Holder:
    name: str
    holder_type: str  # Tushare holder_type: 个人 / 一般企业 / 基金、理财产品 / 国有机构 / 境外机构 / 保险 / 社保


@dataclass(frozen=True)
class HolderPeriod:
    end_date: dt.date
    ann_date: dt.date
    total_shares: float
    float_shares: float
    amounts: dict[str, int]  # holder name -> shares held at the period end
    holder_num: int


@dataclass(frozen=True)
class HolderTrade:
    holder: Holder
    begin_date: dt.date
    close_date: dt.date
    ann_date: dt.date
    direction: str  # IN / DE
    change_vol: int
    after_share: int
    total_share: float
    avg_price: float | None


@dataclass(frozen=True)
class RepurchaseStage:
    plan_id: int
    ann_date: dt.date
    proc: str
    exp_date: dt.date
    vol: float | None
    amount: float | None
    high_limit: float
    low_limit: float | None


class HolderEvents:
    def __init__(self, market: Any) -> None:
        self.market = market
        self.seed = market.seed
        self._rosters: dict[str, tuple[Holder, ...]] = {}
        self._periods: dict[str, tuple[HolderPeriod, ...]] = {}
        self._trades: dict[str, tuple[HolderTrade, ...]] = {}
        self._repurchases: dict[str, tuple[RepurchaseStage, ...]] = {}
        self._pledges: dict[str, list[dict[str, Any]]] = {}

    def _entity(self, code: str):
        entity = self.market.universe.get(code)
        if entity.asset_class != "cn_equity":
            raise LookupError(f"{code} is a {entity.asset_class} instrument; holder data exists for A-shares only")
        return entity

    # ------------------------------------------------------------------ holders

    def roster(self, code: str) -> tuple[Holder, ...]:
        if code not in self._rosters:
            entity = self._entity(code)
            rng = generator(self.seed, code, "holders-roster")
            holders = [Holder(f"{entity.name[:2]}控股集团有限公司", "一般企业")]
            holders += [Holder(name, "境外机构" if "结算" in name else "国有机构" if "国合" in name else "社保" if "社会" in name else "保险")
                        for name in _INSTITUTIONS]
            managements = sorted({s.management for s in self.market.universe.fund_specs.values()})
            for i in range(4):
                company = managements[int(rng.integers(len(managements)))]
                holders.append(Holder(f"{company}{('成长', '价值', '优选', '稳健')[i]}混合型证券投资基金", "基金、理财产品"))
            used = {h.name for h in holders}
            while len(holders) < _ROSTER_SIZE:
                name = _SURNAMES[int(rng.integers(len(_SURNAMES)))] + _GIVEN[int(rng.integers(len(_GIVEN)))]
                if name not in used:
                    used.add(name)
                    holders.append(Holder(name, "个人"))
            self._rosters[code] = tuple(holders)
        return self._rosters[code]

    def periods(self, code: str) -> tuple[HolderPeriod, ...]:
        """Holder snapshots at each report period end (with the report's announcement date)."""
        if code not in self._periods:
            self._periods[code] = tuple(self._build_periods(code))
        return self._periods[code]

    def _build_periods(self, code: str) -> list[HolderPeriod]:
        roster = self.roster(code)
        entity = self._entity(code)
        reports = self.market.fundamentals.reports(code)
        if not reports:
            return []
        rng = generator(self.seed, code, "holders-path")
        # Walks over every quarter of the fixed period grid, read at the reported periods: the
        # number of reports the calendar reaches does not move any drawn value.
        rows = np.array([(r.end_date.year - FIRST_PERIOD_YEAR) * 4 + (r.end_date.month - 1) // 3 for r in reports])
        start = np.concatenate([[rng.uniform(25, 55)], rng.uniform(0.3, 3.0, len(roster) - 1)])
        walk = np.exp(np.cumsum(rng.normal(0, 0.06, (QUARTER_GRID, len(roster))), axis=0))
        walk[:, 0] = np.exp(np.cumsum(rng.normal(0, 0.01, QUARTER_GRID)))
        walk = walk[rows]
        ratios = np.clip(start * walk, 0.02, [60.0] + [4.0] * (len(roster) - 1))
        base_holders = 10 ** (3.8 + entity.visibility / 5 + rng.normal(0, 0.2))
        holder_walk = np.exp(np.cumsum(rng.normal(0, 0.08, QUARTER_GRID)))[rows]
        dates = [r.end_date for r in reports]
        corporate = self.market.corporate
        total = [corporate.total_shares(code, d) for d in dates]
        floating = [corporate.float_shares(code, d) for d in dates]
        out = []
        for i, report in enumerate(reports):
            amounts = {h.name: int(round(ratios[i, j] / 100 * total[i])) for j, h in enumerate(roster)}
            out.append(HolderPeriod(report.end_date, report.ann_date, float(total[i]), float(floating[i]), amounts,
                                    int(round(base_holders * holder_walk[i]))))
        return out

    # ------------------------------------------------------------------ holder trades

    def trades(self, code: str) -> tuple[HolderTrade, ...]:
        if code not in self._trades:
            self._trades[code] = tuple(self._build_trades(code))
        return self._trades[code]

    def _build_trades(self, code: str) -> list[HolderTrade]:
        """About 0.8 trades a year from a year after listing, each year drawn from its own
        generator; a trade exists once the session of its announcement is known."""
        entity = self._entity(code)
        roster = self.roster(code)
        first = max(entity.list_date + dt.timedelta(days=365), EVENTS_FROM)
        out = []
        for year in range(first.year, SIMULATION_END.year + 1):
            rng = generator(self.seed, code, "holder-trades", year)
            for _ in range(int(rng.poisson(0.8))):
                holder = roster[int(rng.integers(len(roster)))]
                begin_target = dt.date(year, 1, 1) + dt.timedelta(days=int(rng.integers(0, 365)))
                close_days, ann_days = int(rng.integers(0, 40)), int(rng.integers(1, 4))
                direction = "DE" if rng.uniform() < 0.6 else "IN"
                held, traded, price_draw = rng.uniform(0.005, 0.06), rng.uniform(0.05, 0.5), rng.uniform(0.97, 1.03)
                if begin_target < first:
                    continue
                begin = _session_on_or_after("XSHG", begin_target)
                close = _session_on_or_after("XSHG", begin + dt.timedelta(days=close_days)) if begin else None
                ann = _session_on_or_after("XSHG", close + dt.timedelta(days=ann_days)) if close else None
                if ann is None:
                    continue
                total = self.market.corporate.total_shares(code, close)
                before = int(round(total * held))
                change = int(round(before * traded / 100)) * 100
                after = before - change if direction == "DE" else before + change
                close_price = self.market.prices.close_on(code, close)
                price = round(close_price * price_draw, 2) if close_price is not None else None
                out.append(HolderTrade(holder, begin, close, ann, direction, change, after, total, price))
        out.sort(key=lambda t: (t.ann_date, t.close_date, t.holder.name))
        return out

    # ------------------------------------------------------------------ share unlocks

    def unlocks(self, code: str) -> list[dict[str, Any]]:
        """Unlock events with their announcement dates and the shares released, split among the
        restricted holders; shares released = total shares x (new float ratio - old float ratio)."""
        entity = self._entity(code)
        corporate = self.market.corporate
        roster = self.roster(code)
        rows = []
        previous = None
        for unlock in corporate.float_unlocks(code):
            day_before = unlock.float_date - dt.timedelta(days=1)
            old_ratio = corporate.float_ratio(code, day_before) if previous is None else previous
            previous = unlock.float_ratio
            total = corporate.total_shares(code, unlock.float_date)
            released = int(round(total * (unlock.float_ratio - old_ratio)))
            if released <= 0:
                continue
            rng = generator(self.seed, code, "unlock", unlock.float_date.isoformat())
            count = int(rng.integers(1, 4))
            holders = [roster[0]] + [roster[int(i)] for i in rng.choice(range(5, len(roster)), count - 1, replace=False)]
            shares = rng.dirichlet(np.full(count, 2.0))
            parts = [int(round(released * s)) for s in shares[:-1]]
            parts.append(released - sum(parts))
            ann = announcement_day(entity.calendar, unlock.float_date - dt.timedelta(days=int(rng.integers(3, 8))))
            for holder, part in zip(holders, parts):
                rows.append({"ann_date": ann, "float_date": unlock.float_date, "float_share": float(part),
                             "float_ratio": round(part / total * 100, 4), "holder_name": holder.name,
                             "share_type": unlock.share_type})
        return rows

    # ------------------------------------------------------------------ repurchases

    def repurchases(self, code: str) -> tuple[RepurchaseStage, ...]:
        if code not in self._repurchases:
            self._repurchases[code] = tuple(self._build_repurchases(code))
        return self._repurchases[code]

    def _build_repurchases(self, code: str) -> list[RepurchaseStage]:
        """About one plan every four years, each year drawn from its own generator (and each
        plan from its own); a stage exists once its session is known."""
        entity = self._entity(code)
        first = max(entity.list_date + dt.timedelta(days=365), EVENTS_FROM)
        stages = []
        plan_days = []
        for year in range(first.year, SIMULATION_END.year + 1):
            year_rng = generator(self.seed, code, "repurchase", year)
            for k in range(int(year_rng.poisson(0.25))):
                target = dt.date(year, 1, 1) + dt.timedelta(days=int(year_rng.integers(0, 365)))
                if target >= first:
                    plan_days.append((target, year, k))
        # Plans are numbered in date order (the number is part of the records).
        for plan_id, (plan_target, year, k) in enumerate(sorted(plan_days)):
            rng = generator(self.seed, code, "repurchase", year, k)
            plan = _session_on_or_after("XSHG", plan_target)
            if plan is None:
                break
            price = self.market.prices.close_on(code, plan)
            if price is None:
                continue
            high = round(price * rng.uniform(1.3, 1.6), 2)
            expiry = plan + dt.timedelta(days=365)
            total = self.market.corporate.total_shares(code, plan)
            target = total * rng.uniform(0.005, 0.03)
            stages.append(RepurchaseStage(plan_id, plan, "预案", expiry, None, None, high, None))
            agm = _session_on_or_after("XSHG", plan + dt.timedelta(days=int(rng.integers(15, 30))))
            if agm is None:
                continue
            stages.append(RepurchaseStage(plan_id, agm, "股东大会通过", expiry, None, None, high, None))
            done_vol = 0.0
            done_amount = 0.0
            day = agm
            for step in range(int(rng.integers(1, 4))):
                day = _session_on_or_after("XSHG", day + dt.timedelta(days=int(rng.integers(25, 60))))
                if day is None:
                    break
                close = self.market.prices.close_on(code, day) or price
                vol = float(round(target * rng.uniform(0.2, 0.4), -2))
                done_vol += vol
                done_amount += round(vol * min(close, high), 2)
                stages.append(RepurchaseStage(plan_id, day, "实施", expiry, done_vol, round(done_amount, 2), high, None))
            else:
                finish = _session_on_or_after("XSHG", day + dt.timedelta(days=int(rng.integers(10, 40))))
                if finish is not None and finish <= expiry and done_vol > 0:
                    stages.append(RepurchaseStage(plan_id, finish, "完成", expiry, done_vol, round(done_amount, 2), high, None))
        stages.sort(key=lambda s: (s.ann_date, s.plan_id))
        return stages

    # ------------------------------------------------------------------ pledges

    def pledge_weeks(self, code: str) -> list[dict[str, Any]]:
        """Weekly pledge statistics (week-ending sessions), oldest first."""
        if code not in self._pledges:
            self._pledges[code] = self._build_pledges(code)
        return self._pledges[code]

    def _build_pledges(self, code: str) -> list[dict[str, Any]]:
        entity = self._entity(code)
        rng = generator(self.seed, code, "pledge")
        sessions = session_dates("XSHG")
        start = max(entity.list_date, dt.date(2018, 1, 1))
        # The last session of each ISO week; the calendar's final week counts only when it is
        # complete (its Sunday is covered), since a later session could still join it.
        fridays = []
        for i, day in enumerate(sessions):
            if day < start:
                continue
            if i + 1 < len(sessions):
                if sessions[i + 1].isocalendar()[:2] != day.isocalendar()[:2]:
                    fridays.append(day)
            elif day + dt.timedelta(days=6 - day.weekday()) <= _calendar_end("XSHG"):
                fridays.append(day)
        if not fridays:
            return []
        n = len(fridays)
        # Paths on a fixed weekly grid, read at the weeks that have a session.
        weeks = np.array([(d - WEEKDAY_GRID_START).days // 7 for d in fridays])
        pledger = rng.uniform() < 0.6
        level, restricted_share = rng.uniform(2, 25), rng.uniform(0, 0.3)
        ratio_steps, count_noise = rng.normal(0, 0.4, WEEK_GRID), rng.normal(0, 0.5, WEEK_GRID)
        walk = np.cumsum(ratio_steps)
        ratio = np.clip(level + walk[weeks] - walk[weeks[0]], 0.0, 45.0) if pledger else np.zeros(n)
        count = np.maximum(0, np.round(ratio / 3 + count_noise[weeks])).astype(int) if pledger else np.zeros(n, dtype=int)
        total = [self.market.corporate.total_shares(code, d) for d in fridays]
        rows = []
        for i, day in enumerate(fridays):
            total_wan = round(total[i] / 1e4, 2)
            pledged = round(total_wan * ratio[i] / 100, 2)
            rest = round(pledged * restricted_share, 2)
            unrest = round(pledged - rest, 2)
            rows.append({"end_date": day, "pledge_count": int(count[i]) if pledged > 0 else 0, "unrest_pledge": unrest,
                         "rest_pledge": rest, "total_share": total_wan,
                         "pledge_ratio": round((unrest + rest) / total_wan * 100, 2) if total_wan else 0.0})
        return rows


def _session_on_or_after(calendar: str, day: dt.date) -> dt.date | None:
    """The first session on or after `day`; None when the calendar does not reach it yet."""
    sessions = session_dates(calendar)
    i = bisect.bisect_left(sessions, day)
    return sessions[i] if i < len(sessions) else None
