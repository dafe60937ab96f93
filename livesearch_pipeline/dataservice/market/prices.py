"""Price engines of the synthetic market: equity bars, index levels, fund NAVs.

Each instrument's full series (from max(listing, 2015-01-01) to the end of its calendar) is
simulated once, vectorised where possible, and cached; any date is then served by a bisect.

Prefix stability: a session's value depends only on the seed and the history up to it, never on
how far the calendar extends, the service clock or call order. Every random array is drawn at the
fixed length of the weekday grid (rng.py) and read at the grid positions of the sessions, never
sized by a session count; yearly draws use one generator per year; nothing is scaled by events
after the date (a split or dividend moves the price on its ex-date, and the mean-reverting log
price then drifts back towards the class's band, as a price once split tends to).

Conventions (as the exchanges and Tushare publish them):
- `pre_close` is the previous trading session's close, ex-rights adjusted on an ex-date:
  (previous close - cash dividend) / (1 + bonus ratio) / split ratio, rounded to the tick.
  After a suspension it is the last close before it.
- A-share daily price limits: ±10% of `pre_close` (±20% for the STAR board and, from
  2020-08-24, ChiNext), rounded half-up to the fen; the close never leaves them.
- `adj_factor` starts at a per-stock base and is multiplied by previous close / pre_close on
  each ex-date, so it moves on the ex-dates of the corporate-action table and nowhere else.
- Index levels follow the float-cap weighted returns of their constituents, weights fixed at
  each month's last session (the `index_weight` table).
- A stock's volatility is its sector's (market/sectors.py: a bank moves about half as much as a
  chip maker); an A-share's daily turnover is lower the larger and better known the company (about
  0.2-1% of its free float on a quiet day for the best known, 0.7-4% for the most obscure), so an
  index of large caps trades what its constituents' free float allows.
- An H-share of an A+H company (issue 39) trades at its A-share's price converted into HKD at the
  day's rate (market/currency.py) less an A/H premium that wanders around the company's own level
  (A-shares usually dearer, by 5-60%): its close is the A close / (HKD→CNY) / (1 + premium), on the
  HKEX ticks; it has no corporate actions of its own.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from livesearch_pipeline.core.calendars import session_dates
from livesearch_pipeline.dataservice.market.corporate import SIM_START
from livesearch_pipeline.dataservice.market.rng import (
    GRID_END,
    GRID_LENGTH,
    WEEKDAY_GRID_START,
    check_simulated,
    generator,
    unit_uniform,
)
from livesearch_pipeline.dataservice.market.sectors import profile_of

CHINEXT_20PCT_FROM = dt.date(2020, 8, 24)
MEAN_REVERSION = 0.998  # per weekday: a log-price half-life of about 350 weekdays


@dataclass(frozen=True)
class EquityParams:
    market_vol: float
    idio_vol: float
    price_low: float
    price_high: float
    decimals: int
    turnover_low: float
    turnover_high: float


PARAMS = {
    "cn_equity": EquityParams(0.012, 0.016, 5.0, 120.0, 2, 0.0015, 0.008),
    "hk_equity": EquityParams(0.011, 0.017, 0.3, 300.0, 3, 0.001, 0.006),
    "us_equity": EquityParams(0.010, 0.016, 5.0, 400.0, 2, 0.003, 0.012),
    "index": EquityParams(0.009, 0.004, 1.0, 5.0, 2, 0.002, 0.004),
}


@dataclass(eq=False)
class Bars:
    """Daily bars of one instrument, ascending by date. Prices in the instrument's currency;
    `vol`/`amount` in the units of its class (A-share lots and thousand CNY, HK/US shares and
    currency units, funds lots and thousand CNY)."""

    code: str
    dates: list[dt.date]
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    pre_close: np.ndarray
    vol: np.ndarray
    amount: np.ndarray
    adj_factor: np.ndarray
    decimals: int
    up_limit: np.ndarray | None = None
    down_limit: np.ndarray | None = None
    total_share: np.ndarray | None = None  # shares
    float_share: np.ndarray | None = None  # shares
    ordinals: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.ordinals is None:
            self.ordinals = _ordinals(self.dates)

    def span(self, start: dt.date | None, end: dt.date | None) -> tuple[int, int]:
        """Index range [i, j) of bars with start <= date <= end (None: unbounded)."""
        i = 0 if start is None else int(np.searchsorted(self.ordinals, start.toordinal(), "left"))
        j = len(self.dates) if end is None else int(np.searchsorted(self.ordinals, end.toordinal(), "right"))
        return i, max(i, j)

    def at(self, day: dt.date) -> int | None:
        """Index of the bar dated exactly `day`, if any."""
        i = int(np.searchsorted(self.ordinals, day.toordinal(), "left"))
        return i if i < len(self.dates) and self.dates[i] == day else None

    def last_on_or_before(self, day: dt.date) -> int | None:
        i = int(np.searchsorted(self.ordinals, day.toordinal(), "right")) - 1
        return i if i >= 0 else None


@dataclass(eq=False)
class FundNav:
    code: str
    dates: list[dt.date]
    unit_nav: np.ndarray
    accum_nav: np.ndarray
    accum_div: np.ndarray
    adj_factor: np.ndarray
    fund_share: np.ndarray  # 万份
    distributions: list[tuple[dt.date, float]]  # (ex-date, cash per unit)
    ordinals: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.ordinals = np.array([d.toordinal() for d in self.dates], dtype=np.int64)

    def span(self, start: dt.date | None, end: dt.date | None) -> tuple[int, int]:
        i = 0 if start is None else int(np.searchsorted(self.ordinals, start.toordinal(), "left"))
        j = len(self.dates) if end is None else int(np.searchsorted(self.ordinals, end.toordinal(), "right"))
        return i, max(i, j)


def aggregate(bars: Bars, period: str) -> Bars:
    """Weekly ("W") or monthly ("M") bars from daily ones: open of the first session, close of
    the last, high max, low min, vol/amount sums, pre_close of the first session; dated on the
    period's last session."""
    if period == "W":
        keys = [d.isocalendar()[:2] for d in bars.dates]
    elif period == "M":
        keys = [(d.year, d.month) for d in bars.dates]
    else:
        raise ValueError(f"unknown aggregation period {period!r}; expected 'W' or 'M'")
    starts = [0] + [i for i in range(1, len(keys)) if keys[i] != keys[i - 1]]
    if not bars.dates:
        return bars
    start_idx = np.array(starts, dtype=np.int64)
    end_idx = np.append(start_idx[1:], len(keys)) - 1
    return Bars(
        code=bars.code,
        dates=[bars.dates[i] for i in end_idx],
        open=bars.open[start_idx],
        high=np.maximum.reduceat(bars.high, start_idx),
        low=np.minimum.reduceat(bars.low, start_idx),
        close=bars.close[end_idx],
        pre_close=bars.pre_close[start_idx],
        vol=np.add.reduceat(bars.vol, start_idx),
        amount=np.add.reduceat(bars.amount, start_idx),
        adj_factor=bars.adj_factor[end_idx],
        decimals=bars.decimals,
    )


class PriceModel:
    def __init__(self, market) -> None:
        self.market = market
        self.seed = market.seed
        self._daily = lru_cache(maxsize=None)(self._build_daily)
        self._weekly = lru_cache(maxsize=None)(lambda code: aggregate(self.daily(code), "W"))
        self._monthly = lru_cache(maxsize=None)(lambda code: aggregate(self.daily(code), "M"))
        self._market_shocks = lru_cache(maxsize=None)(self._build_market_shocks)
        self._equity_runs: dict[str, tuple[Bars, dict[str, float]]] = {}
        self._nav = lru_cache(maxsize=None)(self._build_nav)
        self._index_weights = lru_cache(maxsize=None)(self._build_index_weights)

    # ------------------------------------------------------------------ public API

    def daily(self, code: str) -> Bars:
        """Daily bars of an equity, index or exchange-traded fund."""
        return self._daily(code)

    def weekly(self, code: str) -> Bars:
        return self._weekly(code)

    def monthly(self, code: str) -> Bars:
        return self._monthly(code)

    def nav(self, code: str) -> FundNav:
        entity = self.market.universe.get(code)
        if entity.asset_class != "fund":
            raise LookupError(f"{code} is a {entity.asset_class}, not a fund: it has no NAV")
        return self._nav(code)

    def dividend_cash(self, code: str) -> dict[str, float]:
        """Cash dividend per share (CNY) of each action id, as sized at its plan announcement."""
        self.daily(code)
        return self._equity_runs[code][1]

    def close_on(self, code: str, day: dt.date) -> float | None:
        """Close of the last bar on or before `day` (None before the first bar)."""
        bars = self.daily(code)
        i = bars.last_on_or_before(day)
        return None if i is None else float(bars.close[i])

    def adj_factor_on(self, code: str, day: dt.date) -> float | None:
        bars = self.daily(code)
        i = bars.last_on_or_before(day)
        return None if i is None else float(bars.adj_factor[i])

    def index_weights(self, code: str) -> list[tuple[dt.date, dict[str, float]]]:
        """Monthly constituent weights of a constituent-based index: (rebalance session,
        {con_code: weight in percent, summing to 100}), ascending."""
        spec = self.market.universe.index_specs.get(code)
        if spec is None or not spec.members:
            raise LookupError(f"{code} is not a constituent-based index; index_weight covers the CN indices only")
        return self._index_weights(code)

    # ------------------------------------------------------------------ builders

    def _build_market_shocks(self, calendar: str) -> np.ndarray:
        return generator(self.seed, "market-factor", calendar).standard_normal(GRID_LENGTH)

    def _build_daily(self, code: str) -> Bars:
        entity = self.market.universe.get(code)
        if entity.asset_class in ("cn_equity", "hk_equity", "us_equity"):
            company = self.market.universe.a_share_of(code)
            bars, cash = (self._h_share(entity, company), {}) if company else self._simulate_equity(entity)
            self._equity_runs[code] = (bars, cash)
            return bars
        if entity.asset_class == "index":
            spec = self.market.universe.index_specs[code]
            return self._constituent_index(entity, spec) if spec.members else self._global_index(entity, spec)
        if entity.asset_class == "fund":
            if entity.market != "E":
                raise LookupError(f"{code} is an open-end (OTC) fund: it has no exchange bars; use its NAV (fund_nav)")
            return self._etf_bars(entity)
        raise LookupError(f"{code} ({entity.asset_class}) has no daily bars")

    def _sessions_from(self, calendar: str, start: dt.date) -> list[dt.date]:
        sessions = session_dates(calendar)
        check_simulated(calendar, sessions[-1])
        return list(sessions[bisect.bisect_left(sessions, max(start, SIM_START)):])

    def _trading_dates(self, entity) -> tuple[list[dt.date], np.ndarray]:
        """Sessions from listing (or the simulation start) without the suspended ones."""
        sessions = session_dates(entity.calendar)
        check_simulated(entity.calendar, sessions[-1])
        first = bisect.bisect_left(sessions, max(entity.list_date, SIM_START))
        ordinals = _calendar_ordinals(entity.calendar)[first:]
        suspended = self.market.corporate.suspensions(entity.code)
        if not suspended:
            return list(sessions[first:]), ordinals
        keep = ~np.isin(ordinals, _ordinals(suspended))
        return [d for d, k in zip(sessions[first:], keep.tolist()) if k], ordinals[keep]

    def _session_log_returns(
        self, code: str, calendar: str, ordinals: np.ndarray, market_vol: float, idio_vol: float,
        ex_jumps: np.ndarray | None = None,
    ) -> tuple[np.ndarray, float]:
        """Log returns between consecutive dates of a mean-reverting (Ornstein-Uhlenbeck) log
        price driven by per-weekday shocks, so that a return after a holiday or suspension
        carries all the days it spans and prices stay within realistic bands for years.

        `ex_jumps` (log price change on each date's ex-date, 0 elsewhere) enter the process as
        shocks on their own weekday: the price steps down on the ex-date and then reverts towards
        its band, so no earlier value depends on a later corporate action. The returns returned
        exclude the jumps themselves (the caller applies them to the ex-adjusted previous close)."""
        rng = generator(self.seed, code, "shocks")
        beta = float(rng.uniform(0.6, 1.4))
        idio = rng.standard_normal(GRID_LENGTH)
        jump_draw = rng.random(GRID_LENGTH)
        jump_size = rng.normal(0.0, 0.07, GRID_LENGTH)
        shocks = beta * market_vol * self._market_shocks(calendar) + idio_vol * idio
        shocks = shocks + np.where(jump_draw < 0.012, jump_size, 0.0)
        grid = weekday_grid(ordinals)
        if ex_jumps is not None and len(ordinals):
            shocks = shocks.copy()
            shocks[grid] += ex_jumps
        log_price = ornstein_uhlenbeck(shocks, MEAN_REVERSION)
        returns = np.empty(len(ordinals))
        if len(ordinals):
            returns[0] = shocks[grid[0]]
            returns[1:] = log_price[grid[1:]] - log_price[grid[:-1]]
            if ex_jumps is not None:
                returns = returns - ex_jumps
        return returns, math.hypot(beta * market_vol, idio_vol)

    def _simulate_equity(self, entity) -> tuple[Bars, dict[str, float]]:
        corporate = self.market.corporate
        params = PARAMS[entity.asset_class]
        dates, ordinals = self._trading_dates(entity)
        n = len(dates)
        grid = weekday_grid(ordinals)
        decimals = params.decimals
        tick = 10.0**-decimals
        is_cn = entity.asset_class == "cn_equity"
        # Hong Kong prices trade at the HKEX spread table's ticks; elsewhere at 10**-decimals.
        is_hk = entity.asset_class == "hk_equity"

        def on_ticks(values: np.ndarray) -> np.ndarray:
            return to_hk_ticks(values) if is_hk else _round_half_up(values, decimals)

        actions = [a for a in corporate.actions(entity.code) if a.ex_date >= dates[0]] if n else []
        ex_index = np.searchsorted(ordinals, [a.ex_date.toordinal() for a in actions]).astype(np.int64)
        if len(actions) and not np.array_equal(ordinals[ex_index], [a.ex_date.toordinal() for a in actions]):
            raise RuntimeError(f"{entity.code}: an ex-date of the corporate-action table is not a trading session")
        fix_index = np.searchsorted(ordinals, [a.plan_ann_date.toordinal() for a in actions], "right") - 1
        multipliers = np.array([a.share_multiplier for a in actions])
        yields = np.array([a.dividend_yield for a in actions])
        ex_log = np.zeros(n)
        ex_log[ex_index] += np.log((1.0 - yields) / multipliers)

        scale = profile_of(entity.industry).vol_scale
        returns, sigma = self._session_log_returns(
            entity.code, entity.calendar, ordinals, params.market_vol * scale, params.idio_vol * scale, ex_jumps=ex_log
        )
        rng = generator(self.seed, entity.code, "bars")
        gap_noise = rng.normal(0.0, 0.3 * sigma, GRID_LENGTH)[grid]
        high_noise = np.abs(rng.normal(0.0, 0.45 * sigma, GRID_LENGTH))[grid]
        low_noise = np.abs(rng.normal(0.0, 0.45 * sigma, GRID_LENGTH))[grid]
        turnover_noise = np.exp(rng.normal(0.0, 0.35, GRID_LENGTH))[grid]
        base_turnover = float(rng.uniform(params.turnover_low, params.turnover_high))
        if is_cn:
            base_turnover *= math.exp(-0.15 * (entity.visibility - 5))  # large caps turn over less
        start_price = math.exp(rng.uniform(math.log(params.price_low), math.log(params.price_high)))

        if is_cn:
            wide = entity.code.startswith("688") or entity.code.startswith("30")
            limit = np.where(wide & (ordinals >= (SIM_START if entity.code.startswith("688") else CHINEXT_20PCT_FROM).toordinal()), 0.2, 0.1)
            returns = np.clip(returns, np.log1p(-limit), np.log1p(limit))
        close_raw = np.maximum(on_ticks(start_price * np.exp(np.cumsum(returns + ex_log))), tick)
        first_pre = float(on_ticks(np.array([start_price]))[0])

        close = close_raw
        for _ in range(200):
            cash = np.where(yields > 0, np.round(_round_half_up(yields * close[np.maximum(fix_index, 0)] * 10, 2) / 10, 4), 0.0)
            previous = np.concatenate(([first_pre], close[:-1]))
            pre = previous.copy()
            pre[ex_index] = on_ticks((previous[ex_index] - cash) / multipliers)
            if is_cn:
                up, down = _round_half_up(pre * (1 + limit), 2), _round_half_up(pre * (1 - limit), 2)
                settled = np.maximum(np.minimum(close_raw, up), np.maximum(down, tick))
            else:
                settled = close_raw
            if np.array_equal(settled, close):
                break
            close = settled
        else:
            raise RuntimeError(f"price limits of {entity.code} did not settle")
        open_ = on_ticks(pre * np.exp(0.3 * returns + gap_noise))
        high = on_ticks(np.maximum(open_, close) * np.exp(high_noise))
        low = on_ticks(np.minimum(open_, close) * np.exp(-low_noise))
        if is_cn:
            open_ = np.minimum(np.maximum(open_, down), up)
            high = np.minimum(high, up)
            low = np.maximum(low, down)
        low = np.maximum(low, tick)
        high = np.maximum(high, np.maximum(open_, close))
        low = np.minimum(low, np.minimum(open_, close))

        factor_steps = np.zeros(n)
        factor_steps[ex_index] = np.log(previous[ex_index] / pre[ex_index])
        adj = corporate.adj_factor_base(entity.code) * np.exp(np.cumsum(factor_steps))
        cash_by_action = {a.action_id: float(c) for a, c in zip(actions, cash) if a.kind == "dividend"}

        total_share, float_share = corporate.share_arrays(entity.code, ordinals)
        move = np.abs(np.log(close / pre)) / sigma
        traded_shares = base_turnover * float_share * turnover_noise * (1.0 + 1.5 * move)
        vwap = (open_ + high + low + close) / 4.0
        if is_cn:
            vol = np.round(traded_shares / 100.0)
            amount = np.round(vol * 100.0 * vwap / 1000.0, 3)
        else:
            vol = np.round(traded_shares / 100.0) * 100.0
            amount = np.round(vol * vwap, 2)
        bars = Bars(
            code=entity.code, dates=dates, open=open_, high=high, low=low, close=close, pre_close=pre,
            vol=vol, amount=amount, adj_factor=np.round(adj, 6), decimals=decimals,
            up_limit=up if is_cn else None, down_limit=down if is_cn else None,
            total_share=total_share, float_share=float_share, ordinals=ordinals,
        )
        return bars, cash_by_action

    def _h_share(self, entity, company: str) -> Bars:
        """An A+H company's H-share (module doc): the A close converted into HKD less the A/H
        premium, a mean-reverting log premium drawn on the weekday grid around the company's own
        level; the session's range and turnover its own."""
        a_bars = self.daily(company)
        dates, ordinals = self._trading_dates(entity)
        first = int(np.searchsorted(ordinals, a_bars.ordinals[0], "left")) if len(a_bars.dates) else len(dates)
        dates, ordinals = dates[first:], ordinals[first:]
        n = len(dates)
        grid = weekday_grid(ordinals)
        rng = generator(self.seed, entity.code, "h-share")
        level = float(rng.uniform(math.log(1.05), math.log(1.6)))
        premium = level + ornstein_uhlenbeck(rng.normal(0.0, 0.012, GRID_LENGTH), 0.985)[grid]
        range_noise = rng.normal(0.0, 0.006, (3, GRID_LENGTH))[:, grid]
        turnover = float(rng.uniform(0.001, 0.006)) * np.exp(rng.normal(0.0, 0.35, GRID_LENGTH))[grid]
        a_index = np.searchsorted(a_bars.ordinals, ordinals, "right") - 1
        hkd_per_cny = self.market.currencies.rates("CNY", "HKD", ordinals)
        close = to_hk_ticks(a_bars.close[a_index] * hkd_per_cny / np.exp(premium))
        first_pre = to_hk_ticks(np.array([close[0] if n else 1.0]))
        pre = np.concatenate((first_pre, close[:-1]))[:n]
        gap = a_bars.open[a_index] / a_bars.pre_close[a_index]
        open_ = to_hk_ticks(pre * gap * np.exp(range_noise[0]))
        high = np.maximum(to_hk_ticks(np.maximum(open_, close) * np.exp(np.abs(range_noise[1]))), np.maximum(open_, close))
        low = np.minimum(to_hk_ticks(np.minimum(open_, close) * np.exp(-np.abs(range_noise[2]))), np.minimum(open_, close))
        low = np.maximum(low, 0.001)
        total_share, float_share = self.market.corporate.share_arrays(entity.code, ordinals)
        vol = np.round(float_share * turnover / 100.0) * 100.0
        amount = np.round(vol * (open_ + high + low + close) / 4.0, 2)
        adj = np.full(n, self.market.corporate.adj_factor_base(entity.code))
        return Bars(code=entity.code, dates=dates, open=open_, high=high, low=low, close=close, pre_close=pre,
                    vol=vol, amount=amount, adj_factor=np.round(adj, 6), decimals=PARAMS["hk_equity"].decimals,
                    total_share=total_share, float_share=float_share, ordinals=ordinals)

    def _global_index(self, entity, spec) -> Bars:
        params = PARAMS["index"]
        dates = self._sessions_from(entity.calendar, entity.list_date)
        returns, sigma = self._session_log_returns(entity.code, entity.calendar, _ordinals(dates), params.market_vol, params.idio_vol)
        start = spec.base_point * (1.0 + 3.0 * unit_uniform(self.seed, entity.code, "level0"))
        levels = start * np.exp(np.cumsum(returns))
        rng = generator(self.seed, entity.code, "bars")
        n = len(dates)
        grid = weekday_grid(_ordinals(dates))
        close = np.round(levels, 4)
        pre_close = np.round(np.concatenate(([start], levels[:-1])), 4)
        opn = np.round(pre_close * np.exp(0.3 * returns + rng.normal(0, 0.2 * sigma, GRID_LENGTH)[grid]), 4)
        high = np.round(np.maximum(opn, close) * np.exp(np.abs(rng.normal(0, 0.4 * sigma, GRID_LENGTH)[grid])), 4)
        low = np.round(np.minimum(opn, close) * np.exp(-np.abs(rng.normal(0, 0.4 * sigma, GRID_LENGTH)[grid])), 4)
        vol = np.round(np.exp(rng.normal(math.log(2e8), 0.3, GRID_LENGTH)[grid]))
        return Bars(entity.code, dates, opn, np.maximum(high, np.maximum(opn, close)), np.minimum(low, np.minimum(opn, close)),
                    close, pre_close, vol, np.zeros(n), np.ones(n), 4)

    def _member_matrix(self, code: str, dates: list[dt.date]):
        """Per constituent and session: returns of open/high/low/close versus pre_close, vol,
        amount and float market cap (float shares x close, CNY), NaN where it has no bar."""
        spec = self.market.universe.index_specs[code]
        ordinals = np.array([d.toordinal() for d in dates], dtype=np.int64)
        m, s = len(spec.members), len(dates)
        r_open, r_high, r_low, r_close, vol, amount, mv = (np.full((m, s), np.nan) for _ in range(7))
        for i, member in enumerate(spec.members):
            bars = self.daily(member)
            pos = np.searchsorted(ordinals, bars.ordinals)
            inside = (pos < s)
            pos, sel = pos[inside], np.nonzero(inside)[0]
            pos_ok = ordinals[pos] == bars.ordinals[sel]
            pos, sel = pos[pos_ok], sel[pos_ok]
            pre = bars.pre_close[sel]
            r_open[i, pos] = bars.open[sel] / pre - 1
            r_high[i, pos] = bars.high[sel] / pre - 1
            r_low[i, pos] = bars.low[sel] / pre - 1
            r_close[i, pos] = bars.close[sel] / pre - 1
            vol[i, pos] = bars.vol[sel]
            amount[i, pos] = bars.amount[sel]
            mv[i, pos] = bars.close[sel] * bars.float_share[sel]
        return r_open, r_high, r_low, r_close, vol, amount, mv

    def _rebalance_rows(self, dates: list[dt.date]) -> tuple[list[int], np.ndarray]:
        """Session indices of month-end rebalances, and for each session the row (index into
        that list) of the rebalance whose weights apply to it (-1 before the first)."""
        month_end = [k for k in range(len(dates)) if k + 1 == len(dates) or dates[k + 1].month != dates[k].month]
        applies = np.searchsorted(np.array(month_end), np.arange(len(dates)), "left") - 1
        return month_end, applies

    def _build_index_weights(self, code: str) -> list[tuple[dt.date, dict[str, float]]]:
        entity = self.market.universe.get(code)
        spec = self.market.universe.index_specs[code]
        dates = self._sessions_from(entity.calendar, entity.list_date)
        *_, mv = self._member_matrix(code, dates)
        filled = _forward_fill(mv)
        month_end, _ = self._rebalance_rows(dates)
        table = []
        for k in month_end:
            shares = capped_weights(np.where(np.isnan(filled[:, k]), 0.0, filled[:, k]))
            if not shares.sum() > 0:
                continue
            weights = {spec.members[i]: round(float(shares[i] * 100), 4) for i in range(len(shares)) if shares[i] > 0}
            table.append((dates[k], weights))
        return table

    def _constituent_index(self, entity, spec) -> Bars:
        dates = self._sessions_from(entity.calendar, entity.list_date)
        r_open, r_high, r_low, r_close, vol, amount, mv = self._member_matrix(entity.code, dates)
        filled = _forward_fill(mv)
        month_end, applies = self._rebalance_rows(dates)
        weight_rows = np.column_stack([capped_weights(np.where(np.isnan(filled[:, k]), 0.0, filled[:, k])) for k in month_end]) if month_end else np.zeros((len(spec.members), 0))
        first_caps = capped_weights(np.where(np.isnan(filled[:, 0]), 0.0, filled[:, 0])) if dates else np.zeros(0)
        weights = np.where(applies >= 0, weight_rows[:, np.maximum(applies, 0)], first_caps[:, None])
        traded = ~np.isnan(r_close)
        w = np.where(traded, weights, 0.0)
        w_sum = w.sum(axis=0)
        w_sum[w_sum == 0] = 1.0

        def weighted(r: np.ndarray) -> np.ndarray:
            return np.where(traded, r, 0.0).__mul__(w).sum(axis=0) / w_sum

        ret_close = weighted(r_close)
        start = spec.base_point * (0.8 + 2.2 * unit_uniform(self.seed, entity.code, "level0"))
        close = start * np.cumprod(1.0 + ret_close)
        pre_close = np.concatenate(([start], close[:-1]))
        opn = pre_close * (1 + weighted(r_open))
        high = np.maximum(pre_close * (1 + weighted(r_high)), np.maximum(opn, close))
        low = np.minimum(pre_close * (1 + weighted(r_low)), np.minimum(opn, close))
        close_r, pre_r = np.round(close, 4), np.round(pre_close, 4)
        open_r = np.round(opn, 4)
        return Bars(
            code=entity.code, dates=dates, open=open_r,
            high=np.maximum(np.round(high, 4), np.maximum(open_r, close_r)),
            low=np.minimum(np.round(low, 4), np.minimum(open_r, close_r)),
            close=close_r, pre_close=pre_r, vol=np.nansum(vol, axis=0), amount=np.round(np.nansum(amount, axis=0), 3),
            adj_factor=np.ones(len(dates)), decimals=4,
        )

    def _build_nav(self, code: str) -> FundNav:
        entity = self.market.universe.get(code)
        spec = self.market.universe.fund_specs[code]
        dates = self._sessions_from("XSHG", entity.list_date)
        n = len(dates)
        grid = weekday_grid(_ordinals(dates))
        # One generator per purpose (and per year for distributions): a stream whose number of
        # draws depends on the calendar's span would shift every draw after it.
        rng = generator(self.seed, code, "nav")
        noise = rng.standard_normal(GRID_LENGTH)[grid]
        share_noise = rng.standard_normal(GRID_LENGTH)[grid]
        start_draw = float(rng.uniform(0.8, 2.6))
        distributes = rng.random() < 0.5
        share_level = float(rng.uniform(4.0, 6.5))
        daily_fee = (spec.m_fee + spec.c_fee) / 100 / 244
        if spec.benchmark_index is not None:
            index_bars = self.daily(spec.benchmark_index)
            idx = np.searchsorted(index_bars.ordinals, [d.toordinal() for d in dates])
            idx = np.clip(idx, 0, len(index_bars.dates) - 1)
            index_ret = index_bars.close[idx] / index_bars.pre_close[idx] - 1
            returns = index_ret - daily_fee + 0.0004 * noise
        elif spec.fund_type == "货币市场型":
            returns = np.full(n, 0.02 / 365 * 1.4) + 0.000005 * noise
        elif spec.fund_type == "债券型":
            returns = 0.035 / 244 - daily_fee + 0.0012 * noise
        else:
            market_ret, _ = self._session_log_returns(code, "XSHG", _ordinals(dates), PARAMS["cn_equity"].market_vol, 0.006)
            returns = np.expm1(market_ret) - daily_fee + 0.0002
        start = 1.0 if entity.list_date >= SIM_START or spec.fund_type == "货币市场型" else start_draw
        total_return = start * np.cumprod(1.0 + returns)
        distributions: list[tuple[dt.date, float]] = []
        unit = total_return.copy()
        accum_div = np.zeros(n)
        if spec.fund_type == "货币市场型":
            unit = np.ones(n)
            accum_div = total_return - 1.0
        elif spec.benchmark_index is None and distributes:
            for year in range(2015, GRID_END.year + 1):
                year_rng = generator(self.seed, code, "nav-distribution", year)
                ex_target = dt.date(year, 12, 10) + dt.timedelta(days=int(year_rng.integers(0, 15)))
                skip, size = year_rng.random() < 0.3, float(year_rng.uniform(0.02, 0.08))
                k = bisect.bisect_left(dates, ex_target)
                if k <= 0 or k >= n or skip:
                    continue
                cash = round(float(unit[k - 1]) * size, 3)
                unit[k:] *= (unit[k - 1] - cash) / unit[k - 1]
                accum_div[k:] += cash
                distributions.append((dates[k], cash))
        unit_nav = np.round(unit, 4)
        accum_div = np.round(accum_div, 4)
        adj_factor = np.round(total_return / np.where(unit == 0, 1, unit), 6)
        share_walk = np.cumsum(0.01 * share_noise)
        shares = np.round(10**share_level * np.exp(share_walk - share_walk[0] if n else share_walk), 2)
        return FundNav(code, dates, unit_nav, np.round(unit_nav + accum_div, 4), accum_div, adj_factor, shares, distributions)

    def _etf_bars(self, entity) -> Bars:
        nav = self.nav(entity.code)
        n = len(nav.dates)
        rng = generator(self.seed, entity.code, "etf-bars")
        grid = weekday_grid(nav.ordinals)

        def draws(scale: float) -> np.ndarray:
            return rng.normal(0.0, scale, GRID_LENGTH)[grid]

        close = np.round(nav.unit_nav * (1.0 + draws(0.0015)), 3)
        pre_close = np.concatenate(([np.round(nav.unit_nav[0], 3)] if n else [], close[:-1]))
        opn = np.round(pre_close * (1.0 + draws(0.003)), 3)
        high = np.maximum(np.round(np.maximum(opn, close) * (1 + np.abs(draws(0.004))), 3), np.maximum(opn, close))
        low = np.minimum(np.round(np.minimum(opn, close) * (1 - np.abs(draws(0.004))), 3), np.minimum(opn, close))
        vol_noise = draws(0.4)
        vol = np.round(nav.fund_share * 1e4 * float(rng.uniform(0.005, 0.05)) * np.exp(vol_noise) / 100)
        amount = np.round(vol * 100 * (opn + high + low + close) / 4 / 1000, 3)
        return Bars(entity.code, list(nav.dates), opn, high, low, close, pre_close, vol, amount, nav.adj_factor, 3)


WEIGHT_CAP = 0.15


def capped_weights(caps: np.ndarray, cap: float = WEIGHT_CAP) -> np.ndarray:
    """Cap-proportional weights (summing to 1) with no member above `cap` (raised to 1.5/n for
    small indices, where `cap` is infeasible); the excess is spread over the uncapped members
    in proportion to their caps, as index providers do."""
    total = caps.sum()
    if not total > 0:
        return np.zeros_like(caps)
    live = int((caps > 0).sum())
    cap = max(cap, 1.5 / live)
    weights = caps / total
    for _ in range(len(caps)):
        over = weights > cap + 1e-12
        if not over.any():
            break
        excess = (weights[over] - cap).sum()
        weights[over] = cap
        free = (~over) & (weights > 0) & (weights < cap)
        weights[free] += excess * weights[free] / weights[free].sum()
    return weights


# HKEX spread table (Part A): the tick size of a price up to and including each bound, HKD.
HK_SPREAD_TABLE = ((0.25, 0.001), (0.50, 0.005), (10.0, 0.01), (20.0, 0.02), (100.0, 0.05), (200.0, 0.1),
                   (500.0, 0.2), (1000.0, 0.5), (2000.0, 1.0), (5000.0, 2.0))
HK_TOP_TICK = 5.0  # over 5,000 HKD


def hk_tick(values: np.ndarray) -> np.ndarray:
    """The HKEX tick size of each price."""
    values = np.asarray(values, dtype=float)
    return np.select([values <= bound for bound, _ in HK_SPREAD_TABLE], [t for _, t in HK_SPREAD_TABLE], HK_TOP_TICK)


def to_hk_ticks(values: np.ndarray) -> np.ndarray:
    """Prices rounded half up to their HKEX tick (0.01 up to 10 HKD, 0.02 to 20, 0.05 to 100, ...).

    A price exactly on a band's bound is on the ticks of both bands, so rounding inside [low,
    high] of a bar never leaves it."""
    values = np.asarray(values, dtype=float)
    tick = hk_tick(values)
    return np.round(np.floor(values / tick + 0.5 + 1e-9) * tick, 3)


def _round_half_up(values: np.ndarray, decimals: int) -> np.ndarray:
    scale = 10.0**decimals
    return np.round(np.floor(values * scale + 0.5 + 1e-9) / scale, decimals)


def _ordinals(dates) -> np.ndarray:
    return np.fromiter((d.toordinal() for d in dates), dtype=np.int64, count=len(dates))


@lru_cache(maxsize=None)
def _calendar_ordinals(calendar: str) -> np.ndarray:
    return _ordinals(session_dates(calendar))


def weekday_grid(ordinals: np.ndarray) -> np.ndarray:
    """Vectorised rng.weekday_index over date ordinals."""
    days = ordinals - WEEKDAY_GRID_START.toordinal()
    weeks, rest = np.divmod(days, 7)
    return weeks * 5 + np.minimum(rest, 4)


def ornstein_uhlenbeck(shocks: np.ndarray, phi: float) -> np.ndarray:
    """x_t = phi * x_{t-1} + shock_t, in closed form: x_t = phi^t * sum_j phi^-j shock_j
    (phi^-n stays far from overflow for the grid's length and phi close to 1)."""
    t = np.arange(len(shocks))
    return phi**t * np.cumsum(shocks * phi ** (-t.astype(float)))


def _forward_fill(matrix: np.ndarray) -> np.ndarray:
    """Carry each row's last non-NaN value forward (a suspended stock keeps its last cap)."""
    if matrix.size == 0:
        return matrix
    idx = np.where(~np.isnan(matrix), np.arange(matrix.shape[1]), 0)
    np.maximum.accumulate(idx, axis=1, out=idx)
    filled = matrix[np.arange(matrix.shape[0])[:, None], idx]
    return filled
