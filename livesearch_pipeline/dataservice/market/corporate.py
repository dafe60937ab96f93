"""Corporate actions of the synthetic market: dividends and bonus shares (A-shares), splits
(Hong Kong and US), trading suspensions (A-shares), share counts and free-float unlocks.

The schedule of actions is price-free (dates, yields, ratios); the cash amount of a dividend is
fixed by the price engine at the plan's announcement session (`yield x close`), which is how a
board sizes a payout, and read back from there. Share counts change only on ex-dates of bonus
shares and splits; float shares also step up on unlock dates.

A/H companies (issue 39): an A-share company with H-shares in Hong Kong has two classes of
shares. Its total shares (`total_shares` of the A code: share capital, EPS, market value at the
A price) count both; its float (`float_shares`) only the tradable A shares. The H-share code's
own count is the H class, all of it tradable. Such a company pays cash but no bonus shares (a
bonus issue would have to reach both classes on the same day).

Bonus issues (送股/转增) come with annual, interim and some third-quarter plans (about one plan in
six carries one), so a window of the last few months usually holds some ex-dates; Hong Kong and
US companies split. Each changes the share count and the unadjusted price on its ex-date, where
the adjustment factor steps (market/prices.py).

Prefix stability: every schedule is drawn from generators keyed by year (or plan), with the same
number of draws whatever the calendar's span, and an event is placed on the calendar only when
the sessions it needs are known. Extending a calendar therefore adds later events and never moves,
adds or removes an earlier one.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from livesearch_pipeline.core.calendars import session_dates
from livesearch_pipeline.dataservice.market.rng import SIMULATION_END, generator, unit_uniform

SIM_START = dt.date(2015, 1, 1)
SUSPENSION_LENGTHS = (1, 1, 1, 2, 3, 5, 10, 20)  # sessions per suspension episode
EQUITY_CLASSES = ("cn_equity", "hk_equity", "us_equity")


@dataclass(frozen=True)
class CorporateAction:
    code: str
    action_id: str
    kind: str  # "dividend" (cash and/or bonus shares) | "split"
    end_date: dt.date | None  # fiscal period the dividend is paid for
    plan_ann_date: dt.date  # 预案 announcement; the cash amount is sized at this session's close
    agm_date: dt.date | None  # 股东大会通过
    impl_ann_date: dt.date  # 实施 announcement
    record_date: dt.date
    ex_date: dt.date
    pay_date: dt.date
    dividend_yield: float  # cash paid per share as a fraction of the close at plan announcement
    stk_bo_rate: float  # bonus shares per share (送股)
    stk_co_rate: float  # capitalised shares per share (转增)
    split_ratio: float  # new shares per old share; 1.0 when not a split

    @property
    def share_multiplier(self) -> float:
        return (1.0 + self.stk_bo_rate + self.stk_co_rate) * self.split_ratio


@dataclass(frozen=True)
class FloatUnlock:
    code: str
    float_date: dt.date
    float_ratio: float  # float shares / total shares from this date on
    share_type: str  # 首发原股东限售股份 / 定向增发机构配售股份 / 股权激励限售股份


def round_half_up(value: float, decimals: int) -> float:
    """Exchange rounding (half away from zero for the positive prices and amounts used here)."""
    scale = 10.0**decimals
    return math.floor(value * scale + 0.5 + 1e-9) / scale


class CorporateActions:
    def __init__(self, market) -> None:
        self.market = market
        self.seed = market.seed
        self._actions = lru_cache(maxsize=None)(self._build_actions)
        self._suspensions = lru_cache(maxsize=None)(self._build_suspensions)
        self._share_base = lru_cache(maxsize=None)(self._build_share_base)
        self._unlocks = lru_cache(maxsize=None)(self._build_unlocks)

    # ------------------------------------------------------------------ public API

    def actions(self, code: str) -> tuple[CorporateAction, ...]:
        """All dividend / bonus / split actions of an equity, by ex-date ascending."""
        return self._actions(self._equity(code).code)

    def splits(self, code: str) -> tuple[CorporateAction, ...]:
        return tuple(a for a in self.actions(code) if a.kind == "split")

    def ex_dates(self, code: str) -> tuple[dt.date, ...]:
        return tuple(a.ex_date for a in self.actions(code))

    def suspensions(self, code: str) -> tuple[dt.date, ...]:
        """A-share sessions without trading (no daily bar), ascending; empty for other classes."""
        entity = self.market.universe.get(code)
        if entity.asset_class != "cn_equity":
            return ()
        return self._suspensions(code)

    def dividends(self, code: str) -> list[dict]:
        """Tushare `dividend` records of an A-share (one per stage: 预案, 股东大会通过, 实施),
        newest announcement first. Cash amounts are per share, CNY, before tax."""
        entity = self._equity(code)
        if entity.asset_class != "cn_equity":
            return []
        cash = self.market.prices.dividend_cash(code)
        records = []
        for action in self.actions(code):
            if action.kind != "dividend" or action.action_id not in cash:
                continue
            cash_div = cash[action.action_id]
            stages = [("预案", action.plan_ann_date, False)]
            if action.agm_date is not None:
                stages.append(("股东大会通过", action.agm_date, False))
            stages.append(("实施", action.impl_ann_date, True))
            for div_proc, ann_date, implemented in stages:
                records.append(
                    {
                        "ts_code": code,
                        "end_date": _ymd(action.end_date),
                        "ann_date": _ymd(ann_date),
                        "div_proc": div_proc,
                        "stk_div": round(action.stk_bo_rate + action.stk_co_rate, 4),
                        "stk_bo_rate": round(action.stk_bo_rate, 4),
                        "stk_co_rate": round(action.stk_co_rate, 4),
                        "cash_div": cash_div if implemented else 0.0,
                        "cash_div_tax": cash_div,
                        "record_date": _ymd(action.record_date) if implemented else None,
                        "ex_date": _ymd(action.ex_date) if implemented else None,
                        "pay_date": _ymd(action.pay_date) if implemented else None,
                        "div_listdate": _ymd(action.ex_date) if implemented and action.stk_bo_rate + action.stk_co_rate > 0 else None,
                        "imp_ann_date": _ymd(action.impl_ann_date) if implemented else None,
                    }
                )
        records.sort(key=lambda r: (r["ann_date"], r["end_date"] or ""), reverse=True)
        return records

    def float_unlocks(self, code: str) -> tuple[FloatUnlock, ...]:
        """Dates on which restricted shares become tradable, ascending (A-shares only)."""
        entity = self._equity(code)
        if entity.asset_class != "cn_equity":
            return ()
        return self._unlocks(code)

    def total_shares(self, code: str, date: dt.date) -> float:
        """Total shares (股) outstanding after all ex-dates on or before `date`, every class of an
        A+H company on its A code. Before the first action this is the count at the start of the
        simulation (or at listing)."""
        return self._listed_class(code, date) + self.h_class_shares(code)

    def _listed_class(self, code: str, date: dt.date) -> float:
        entity = self._equity(code)
        base = self._share_base(entity.code)
        multiplier = 1.0
        for action in self.actions(code):
            if action.ex_date > date:
                break
            multiplier *= action.share_multiplier
        return float(round(base * multiplier))

    def h_class_shares(self, code: str) -> float:
        """The H shares of the A-share company `code` (0 when it has none): 15-45% of its A shares
        at the start of the simulation, unchanged since (no bonus issues, module doc)."""
        if self.market.universe.h_share_of(code) is None:
            return 0.0
        return float(round(self._share_base(code) * (0.15 + 0.3 * unit_uniform(self.seed, code, "h-class")), -4))

    def float_shares(self, code: str, date: dt.date) -> float:
        """Tradable shares (股) of the listed class on `date` (an A+H company's A shares)."""
        return float(round(self._listed_class(code, date) * self.float_ratio(code, date)))

    def float_ratio(self, code: str, date: dt.date) -> float:
        entity = self._equity(code)
        if self.market.universe.a_share_of(code) is not None:
            return 1.0  # an H-share: the whole H class trades
        if entity.asset_class != "cn_equity":
            return _non_cn_float_ratio(self.seed, code)
        ratio = _initial_float_ratio(self.seed, entity)
        for unlock in self._unlocks(code):
            if unlock.float_date > date:
                break
            ratio = unlock.float_ratio
        return ratio

    def share_arrays(self, code: str, ordinals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Total and float shares (股) on each date (given as ordinals, ascending), vectorised."""
        entity = self._equity(code)
        listed = np.full(len(ordinals), float(self._share_base(code)))
        for action in self.actions(code):
            listed[ordinals >= action.ex_date.toordinal()] *= action.share_multiplier
        listed = np.round(listed)
        if self.market.universe.a_share_of(code) is not None:
            ratio = np.ones(len(ordinals))
        elif entity.asset_class != "cn_equity":
            ratio = np.full(len(ordinals), _non_cn_float_ratio(self.seed, code))
        else:
            ratio = np.full(len(ordinals), _initial_float_ratio(self.seed, entity))
            for unlock in self._unlocks(code):
                ratio[ordinals >= unlock.float_date.toordinal()] = unlock.float_ratio
        return listed + self.h_class_shares(code), np.round(listed * ratio)

    def adj_factor_base(self, code: str) -> float:
        """The adjustment factor on the first simulated session: accumulated earlier history
        for stocks listed before the simulation, 1.0 for a new listing (Tushare starts at 1)."""
        entity = self._equity(code)
        if entity.list_date >= SIM_START:
            return 1.0
        years = (SIM_START - entity.list_date).days / 365.25
        return round(1.0 + years * 0.15 * unit_uniform(self.seed, code, "adj_base") * 2, 3)

    def adj_factor(self, code: str, date: dt.date) -> float | None:
        """Tushare-style cumulative adjustment factor on the last session on or before `date`
        (None before the first bar). It changes only on ex-dates."""
        return self.market.prices.adj_factor_on(code, date)

    # ------------------------------------------------------------------ construction

    def _equity(self, code: str):
        entity = self.market.universe.get(code)
        if entity.asset_class not in EQUITY_CLASSES:
            raise LookupError(f"{code} is a {entity.asset_class}, not an equity: it has no corporate actions or share count")
        return entity

    def _trading_sessions(self, code: str) -> list[dt.date]:
        entity = self.market.universe.get(code)
        start = max(entity.list_date, SIM_START)
        sessions = session_dates(entity.calendar)
        suspended = set(self.suspensions(code))
        return [d for d in sessions[bisect.bisect_left(sessions, start):] if d not in suspended]

    def _build_suspensions(self, code: str) -> tuple[dt.date, ...]:
        """About 0.6 episodes a year, each starting on a day of its year drawn from that year's
        own generator (so a year's episodes do not depend on how many sessions are known)."""
        entity = self.market.universe.get(code)
        sessions = session_dates(entity.calendar)
        first = bisect.bisect_left(sessions, max(entity.list_date, SIM_START)) + 1  # never the first bar
        suspended: set[dt.date] = set()
        if first >= len(sessions):
            return ()
        for year in range(sessions[first].year, sessions[-1].year + 1):
            rng = generator(self.seed, code, "suspensions", year)
            episodes = int(rng.poisson(0.6))
            days = rng.integers(0, 365, size=episodes)
            lengths = rng.choice(SUSPENSION_LENGTHS, size=episodes)
            year_end = bisect.bisect_left(sessions, dt.date(year + 1, 1, 1))
            for offset, length in zip(days.tolist(), lengths.tolist()):
                start = bisect.bisect_left(sessions, dt.date(year, 1, 1) + dt.timedelta(days=offset))
                if start < first or start >= year_end:
                    continue
                for i in range(start, min(start + length, len(sessions))):
                    suspended.add(sessions[i])
        return tuple(sorted(suspended))

    def _build_share_base(self, code: str) -> float:
        company = self.market.universe.a_share_of(code)
        if company is not None:
            return self.h_class_shares(company)  # an H-share's count is its company's H class
        entity = self.market.universe.get(code)
        rng = generator(self.seed, code, "shares")
        log_shares = 8.3 + 0.15 * entity.visibility + rng.normal(0.0, 0.4)
        if entity.asset_class == "us_equity":
            log_shares -= 0.6
        return float(round(10 ** float(np.clip(log_shares, 7.6, 10.9)), -4))

    def _build_unlocks(self, code: str) -> tuple[FloatUnlock, ...]:
        """IPO lock-ups end one and three years after listing; about half the companies also
        unlock a private placement. Every draw is made up front and the candidates are applied
        in date order, each depending only on earlier ones; a candidate whose session is beyond
        the calendar (and every later one) is not known yet."""
        entity = self.market.universe.get(code)
        rng = generator(self.seed, code, "unlocks")
        ipo_noise = rng.uniform(-0.05, 0.03, size=2)
        placement = bool(rng.random() < 0.5)
        placement_day = dt.date(int(rng.integers(2016, 2026)), int(rng.integers(1, 13)), 15)
        placement_share = float(rng.uniform(0.1, 1.0))
        candidates: list[tuple[dt.date, int, str, float]] = []  # (target day, order, kind, draw)
        if entity.list_date >= dt.date(2012, 1, 1):
            for k, (years, target) in enumerate(((1, 0.55), (3, 0.97))):
                candidates.append((entity.list_date + dt.timedelta(days=365 * years), k, f"ipo:{target}", float(ipo_noise[k])))
        if placement:
            candidates.append((placement_day, 2, "placement", placement_share))
        unlocks: list[FloatUnlock] = []
        ratio = _initial_float_ratio(self.seed, entity)
        for target_day, _, kind, draw in sorted(candidates):
            day = _session_on_or_after(entity.calendar, target_day)
            if day is None:
                break
            if kind.startswith("ipo:"):
                target = float(kind.split(":")[1])
                if day >= SIM_START and target > ratio and (not unlocks or day > unlocks[-1].float_date):
                    ratio = round(min(1.0, target + draw), 4)
                    unlocks.append(FloatUnlock(code, day, ratio, "首发原股东限售股份"))
            elif ratio < 0.999 and day >= SIM_START and (not unlocks or day > unlocks[-1].float_date):
                ratio = round(min(1.0, ratio + (1.0 - ratio) * draw), 4)
                unlocks.append(FloatUnlock(code, day, ratio, "定向增发机构配售股份"))
        return tuple(unlocks)

    def _build_actions(self, code: str) -> tuple[CorporateAction, ...]:
        entity = self.market.universe.get(code)
        if entity.asset_class == "cn_equity":
            return self._cn_dividends(code)
        return self._splits(code)

    def _cn_dividends(self, code: str) -> tuple[CorporateAction, ...]:
        """Annual (and some interim and third-quarter) plans for each fiscal year, each drawn from its own
        generator. A plan is kept only when its ex-date falls in the year of its announcement,
        which is decided by that year's sessions alone (never by whether later years are known)."""
        entity = self.market.universe.get(code)
        rng = generator(self.seed, code, "dividends")
        payer = rng.random() < 0.75
        sessions = self._trading_sessions(code)
        if not payer or not sessions:
            return ()
        base_yield = float(rng.uniform(0.004, 0.035))
        dual_listed = self.market.universe.h_share_of(code) is not None
        actions: list[CorporateAction] = []
        for year in range(2014, SIMULATION_END.year + 1):
            plans = [("annual", dt.date(year, 12, 31))]
            if generator(self.seed, code, "dividends", "interim?", year).random() < 0.25:
                plans.append(("interim", dt.date(year, 6, 30)))
            if generator(self.seed, code, "dividends", "q3?", year).random() < 0.08:
                plans.append(("q3", dt.date(year, 9, 30)))
            for kind, end_date in plans:
                rng = generator(self.seed, code, "dividends", kind, year)
                pay = rng.random() < 0.85
                bonus = rng.random() < {"annual": 0.15, "interim": 0.2, "q3": 0.4}[kind]
                jitter = [int(x) for x in rng.integers(0, 40, size=4)]
                bonus_rate = float(rng.choice([0.2, 0.3, 0.5, 1.0])) if bonus and not dual_listed else 0.0
                bo_share = float(rng.choice([0.0, 0.5, 1.0]))
                yield_draw = float(rng.uniform(0.6, 1.4))
                if not pay or end_date < entity.list_date:
                    continue
                if kind == "annual":
                    plan_ann = dt.date(year + 1, 3, 15) + dt.timedelta(days=jitter[0])
                    agm = dt.date(year + 1, 5, 10) + dt.timedelta(days=jitter[1])
                    ex_target = agm + dt.timedelta(days=20 + jitter[2])
                elif kind == "q3":
                    plan_ann = dt.date(year, 10, 25) + dt.timedelta(days=jitter[0] // 4)
                    agm = dt.date(year, 11, 12) + dt.timedelta(days=jitter[1] // 4)
                    ex_target = agm + dt.timedelta(days=10 + jitter[2] // 4)
                else:
                    plan_ann = dt.date(year, 8, 10) + dt.timedelta(days=jitter[0] // 2)
                    agm = dt.date(year, 9, 10) + dt.timedelta(days=jitter[1] // 2)
                    ex_target = agm + dt.timedelta(days=15 + jitter[2])
                ex_i = bisect.bisect_left(sessions, ex_target)
                if plan_ann <= sessions[0] or ex_i >= len(sessions) or sessions[ex_i].year != plan_ann.year:
                    continue
                ex_date = sessions[ex_i]
                calendar_sessions = session_dates(entity.calendar)
                record_date = calendar_sessions[bisect.bisect_left(calendar_sessions, ex_date) - 1]
                impl_ann = _weekday_before(record_date, 3)
                if impl_ann <= agm:
                    continue
                actions.append(
                    CorporateAction(
                        code=code, action_id=f"{code}:{kind}:{end_date:%Y%m%d}", kind="dividend",
                        end_date=end_date, plan_ann_date=plan_ann, agm_date=agm, impl_ann_date=impl_ann,
                        record_date=record_date, ex_date=ex_date, pay_date=ex_date,
                        dividend_yield=round(base_yield * yield_draw * (1.0 if kind == "annual" else 0.5), 5),
                        stk_bo_rate=round(bonus_rate * bo_share, 4), stk_co_rate=round(bonus_rate * (1 - bo_share), 4),
                        split_ratio=1.0,
                    )
                )
        actions.sort(key=lambda a: a.ex_date)
        deduped: list[CorporateAction] = []
        for action in actions:  # one action per ex-date: a second plan on the same day is dropped
            if not deduped or action.ex_date > deduped[-1].ex_date and action.plan_ann_date > deduped[-1].ex_date:
                deduped.append(action)
        return tuple(deduped)

    def _splits(self, code: str) -> tuple[CorporateAction, ...]:
        """About four in ten HK/US companies split once, on a day drawn between about a year
        after their first simulated session and the end of the simulation, whatever the
        calendar's span; the split exists once its ex-date's session is known."""
        if self.market.universe.a_share_of(code) is not None:
            return ()  # an H-share follows its company's A-share (market/prices.py)
        rng = generator(self.seed, code, "splits")
        splits, offset = rng.random() <= 0.4, float(rng.random())
        ratio = float(rng.choice([2.0, 3.0, 4.0, 5.0, 10.0]))
        sessions = self._trading_sessions(code)
        if not splits or not sessions:
            return ()
        earliest = sessions[0] + dt.timedelta(days=365)
        target = earliest + dt.timedelta(days=int(offset * max(0, (SIMULATION_END - earliest).days)))
        i = bisect.bisect_left(sessions, target)
        if i >= len(sessions):
            return ()
        ex_date = sessions[i]
        plan_ann = _weekday_before(ex_date, 30)
        return (
            CorporateAction(
                code=code, action_id=f"{code}:split:{ex_date:%Y%m%d}", kind="split", end_date=None,
                plan_ann_date=plan_ann, agm_date=None, impl_ann_date=_weekday_before(ex_date, 10),
                record_date=_weekday_before(ex_date, 1), ex_date=ex_date, pay_date=ex_date,
                dividend_yield=0.0, stk_bo_rate=0.0, stk_co_rate=0.0, split_ratio=ratio,
            ),
        )


def _initial_float_ratio(seed: int, entity) -> float:
    if entity.list_date >= dt.date(2012, 1, 1):
        return round(0.2 + 0.1 * unit_uniform(seed, entity.code, "float0"), 4)
    return round(0.6 + 0.4 * unit_uniform(seed, entity.code, "float0"), 4)


def _non_cn_float_ratio(seed: int, code: str) -> float:
    return round(0.7 + 0.3 * unit_uniform(seed, code, "float0"), 4)


def _weekday_before(day: dt.date, weekdays: int) -> dt.date:
    while weekdays > 0:
        day -= dt.timedelta(days=1)
        if day.weekday() < 5:
            weekdays -= 1
    return day


def _session_on_or_after(calendar: str, day: dt.date) -> dt.date | None:
    sessions = session_dates(calendar)
    i = bisect.bisect_left(sessions, day)
    return sessions[i] if i < len(sessions) else None


def _ymd(day: dt.date | None) -> str | None:
    return None if day is None else day.strftime("%Y%m%d")
