"""Macro, rates and FX series of the synthetic market (service "macro").

Monthly and quarterly Chinese statistics carry a publication date and are "known" only from it:
CPI and PPI on a day between the 9th and the 15th of the next month, money supply and social
financing between the 10th and the 15th, the official PMI on the last day of the month itself,
GDP 15 to 20 days after the quarter ends. Daily series are drawn on the fixed weekday grid of
`rng` (so a value never moves when a calendar's horizon grows) and then published on their
market's sessions: SHIBOR and LPR on XSHG, HIBOR on XHKG, US Treasury curves on XNYS, FX quotes
on weekdays except 25 December and 1 January.

Identities that hold exactly: CPI/PPI year-over-year rates are the 12-month compounding of the
published month-over-month rates (before rounding); money-supply growth rates follow from the
published levels; GDP equals the sum of its three sectors; the social-financing stock grows by
the monthly increments; T-bill bank-discount rates convert from the coupon-equivalent yields.
"""

from __future__ import annotations

import bisect
import calendar as pycalendar
import datetime as dt
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from livesearch_pipeline.core.calendars import session_dates
from livesearch_pipeline.dataservice.market.rng import SIMULATION_END, WEEKDAY_GRID_START, check_simulated, generator, weekday_index

FIRST_MONTH = (2013, 1)
LAST_MONTH = (2028, 12)
GRID_END = SIMULATION_END
DAILY_START = dt.date(2015, 1, 1)

SHIBOR_TENORS = ("on", "1w", "2w", "1m", "3m", "6m", "9m", "1y")
HIBOR_TENORS = ("on", "1w", "2w", "1m", "2m", "3m", "6m", "12m")
UST_TENORS = ("m1", "m2", "m3", "m4", "m6", "y1", "y2", "y3", "y5", "y7", "y10", "y20", "y30")
UST_YEARS = dict(m1=1 / 12, m2=2 / 12, m3=0.25, m4=4 / 12, m6=0.5, y1=1, y2=2, y3=3, y5=5, y7=7, y10=10, y20=20, y30=30)
REAL_TENORS = ("y5", "y7", "y10", "y20", "y30")
TBILL_WEEKS = (4, 8, 13, 26, 52)


@dataclass(frozen=True)
class FxPair:
    code: str  # Tushare style, e.g. USDCNH.FXCM
    name: str
    start: float
    daily_vol: float
    decimals: int
    spread_pips: float
    pip: float
    band: tuple[float, float] | None = None  # pegged currencies stay in their band
    # The range a professional knows the pair in (recent years): the mid quote moves inside it
    # (`_ranged_mid`). None for a cross (its two legs give it) or a pair left to drift.
    range: tuple[float, float] | None = None
    cross: tuple[str, str] | None = None  # a cross rate: the product of these two pairs' mids


# Levels near the real-world ranges of 2023-2026 (issue 20: AUD/USD near 1.13 was not one).
FX_PAIRS = (
    FxPair("USDCNH.FXCM", "美元兑离岸人民币", 7.20, 0.0030, 5, 30, 0.0001, range=(7.08, 7.32)),
    FxPair("EURUSD.FXCM", "欧元兑美元", 1.10, 0.0050, 5, 0.8, 0.0001, range=(1.04, 1.16)),
    FxPair("USDJPY.FXCM", "美元兑日元", 150.0, 0.0055, 3, 0.9, 0.01, range=(140.0, 161.0)),
    FxPair("GBPUSD.FXCM", "英镑兑美元", 1.28, 0.0055, 5, 1.2, 0.0001, range=(1.21, 1.35)),
    FxPair("AUDUSD.FXCM", "澳元兑美元", 0.65, 0.0065, 5, 1.0, 0.0001, range=(0.60, 0.70)),
    FxPair("USDCHF.FXCM", "美元兑瑞士法郎", 0.86, 0.0055, 5, 1.5, 0.0001, range=(0.78, 0.93)),
    FxPair("USDHKD.FXCM", "美元兑港币", 7.8000, 0.0004, 5, 15, 0.0001, band=(7.7500, 7.8500),
           range=(7.7550, 7.8450)),  # the Convertibility Undertaking band, kept off its edges
    FxPair("EURCNH.FXCM", "欧元兑离岸人民币", 7.90, 0.0050, 5, 60, 0.0001,
           cross=("EURUSD.FXCM", "USDCNH.FXCM")),
)
# Mean reversion of a ranged pair's latent state (per weekday), and how far its logistic map
# spreads the state over the range (1.5: about 95 % of days in the middle 80 % of the range).
FX_PHI = 0.995
FX_SPREAD = 1.5


def _ranged_mid(rng: np.random.Generator, n: int, pair: FxPair) -> np.ndarray:
    """A mid quote inside `pair.range`: a stationary AR(1) state, standardised, through a logistic
    map onto the range. Its daily moves are about `daily_vol` of the level near the middle and
    shrink towards the edges, which it approaches but never crosses."""
    assert pair.range is not None
    low, high = pair.range
    sigma = np.sqrt(1 - FX_PHI ** 2)  # unit stationary variance
    z = _ar1(rng, n, 0.0, FX_PHI, sigma, 0.0)
    return low + (high - low) / (1 + np.exp(-FX_SPREAD * z))


@dataclass(frozen=True)
class Release:
    """One published observation of a monthly or quarterly statistic."""

    period: str  # YYYYMM or YYYYQn
    release_date: dt.date
    values: dict[str, float]


def _months() -> list[tuple[int, int]]:
    out, (y, m) = [], FIRST_MONTH
    while (y, m) <= LAST_MONTH:
        out.append((y, m))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _next_month(y: int, m: int) -> tuple[int, int]:
    return (y + 1, 1) if m == 12 else (y, m + 1)


def _weekday_on_or_after(day: dt.date) -> dt.date:
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return day


def _weekday_grid() -> list[dt.date]:
    days, day = [], WEEKDAY_GRID_START
    while day <= GRID_END:
        if day.weekday() < 5:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def _ar1(rng: np.random.Generator, n: int, mean: float, phi: float, sigma: float, start: float) -> np.ndarray:
    out = np.empty(n)
    x = start
    shocks = rng.normal(0.0, sigma, n)
    for i in range(n):
        x = mean + phi * (x - mean) + shocks[i]
        out[i] = x
    return out


class DailySeries:
    """Values of one daily series on a calendar's sessions (ascending) from 2015 on."""

    def __init__(self, dates: list[dt.date], columns: dict[str, np.ndarray]) -> None:
        self.dates = dates
        self.columns = columns
        self.ordinals = np.array([d.toordinal() for d in dates], dtype=np.int64)
        self.keys = [d.strftime("%Y%m%d") for d in dates]
        # Plain Python floats, converted once: records are built from these on every call.
        self._lists = {name: [float(x) for x in col.tolist()] for name, col in columns.items()}

    def span(self, start: dt.date | None, end: dt.date) -> tuple[int, int]:
        i = 0 if start is None else int(np.searchsorted(self.ordinals, start.toordinal(), "left"))
        j = int(np.searchsorted(self.ordinals, end.toordinal(), "right"))
        return i, max(i, j)

    def row(self, i: int) -> dict[str, float]:
        return {name: values[i] for name, values in self._lists.items()}


class MacroModel:
    def __init__(self, market: Any) -> None:
        self.market = market
        self.seed = market.seed
        self._fx_series: dict[str, DailySeries] = {}

    # ------------------------------------------------------------------ helpers

    def _rng(self, purpose: str) -> np.random.Generator:
        return generator(self.seed, "macro", purpose)

    def _release_day(self, purpose: str, year: int, month: int, first: int, last: int) -> dt.date:
        """A weekday between `first` and `last` of the month after (year, month)."""
        ny, nm = _next_month(year, month)
        rng = generator(self.seed, "macro-release", purpose, year, month)
        return _weekday_on_or_after(dt.date(ny, nm, int(rng.integers(first, last + 1))))

    @cached_property
    def _grid(self) -> list[dt.date]:
        return _weekday_grid()

    def _on_sessions(self, calendar: str, grid_columns: dict[str, np.ndarray]) -> DailySeries:
        all_sessions = session_dates(calendar)
        check_simulated(calendar, all_sessions[-1])
        sessions = [d for d in all_sessions if d >= DAILY_START]
        idx = np.array([weekday_index(d) for d in sessions], dtype=np.int64)
        return DailySeries(sessions, {k: v[idx] for k, v in grid_columns.items()})

    # ------------------------------------------------------------------ monthly statistics

    def _price_index(self, purpose: str, mean_mom: float, sigma: float, season: dict[int, float], phi: float) -> tuple[list[tuple[int, int]], np.ndarray]:
        """Month-over-month % changes, persistent (AR(1)) around a seasonal mean."""
        months = _months()
        rng = self._rng(purpose)
        n = len(months)
        persistent = _ar1(rng, n, 0.0, phi, sigma, 0.0)
        mom = np.array([mean_mom + season.get(m, 0.0) for _, m in months]) + persistent + rng.normal(0, sigma / 2, n)
        return months, mom

    @staticmethod
    def _yoy_from_mom(mom: np.ndarray) -> np.ndarray:
        growth = np.log1p(mom / 100)
        csum = np.concatenate([[0.0], np.cumsum(growth)])
        yoy = np.full(len(mom), np.nan)
        yoy[11:] = (np.exp(csum[12:] - csum[:-12]) - 1) * 100
        return yoy

    @cached_property
    def cpi(self) -> list[Release]:
        months, mom = self._price_index("cpi", 0.11, 0.09, {1: 0.45, 2: 0.55, 3: -0.55, 4: -0.1, 5: -0.1, 6: -0.15}, 0.5)
        yoy = self._yoy_from_mom(mom)
        rng = self._rng("cpi-split")
        town_gap, cnt_gap = rng.normal(0.05, 0.1, len(months)), rng.normal(-0.15, 0.15, len(months))
        out = []
        for i, (y, m) in enumerate(months):
            if np.isnan(yoy[i]) or i < 23:
                continue
            ytd = [j for j in range(i - m + 1, i + 1)]
            row: dict[str, float] = {}
            for prefix, gap in (("nt", 0.0), ("town", town_gap[i]), ("cnt", cnt_gap[i])):
                year_rate = yoy[i] + gap
                row[f"{prefix}_val"] = round(100 + year_rate, 1)
                row[f"{prefix}_yoy"] = round(year_rate, 1)
                row[f"{prefix}_mom"] = round(mom[i] + gap / 12, 1)
                row[f"{prefix}_accu"] = round(100 + float(np.mean([yoy[j] for j in ytd])) + gap, 1)
            out.append(Release(f"{y}{m:02d}", self._release_day("cpi", y, m, 9, 15), row))
        return out

    @cached_property
    def ppi(self) -> list[Release]:
        months, mom = self._price_index("ppi", 0.02, 0.25, {}, 0.8)
        yoy = self._yoy_from_mom(mom)
        rng = self._rng("ppi-split")
        mp_beta, cg_beta = 1.3, 0.35
        out = []
        for i, (y, m) in enumerate(months):
            if i < 23:
                continue
            ytd = range(i - m + 1, i + 1)
            noise = rng.normal(0, 0.2, 2)
            row = {
                "ppi_yoy": round(yoy[i], 1), "ppi_mom": round(mom[i], 1),
                "ppi_mp_yoy": round(yoy[i] * mp_beta + noise[0], 1), "ppi_mp_mom": round(mom[i] * mp_beta, 1),
                "ppi_cg_yoy": round(yoy[i] * cg_beta + 0.6 + noise[1], 1), "ppi_cg_mom": round(mom[i] * cg_beta, 1),
                "ppi_accu": round(float(np.mean([yoy[j] for j in ytd])), 1),
            }
            out.append(Release(f"{y}{m:02d}", self._release_day("ppi", y, m, 9, 15), row))
        return out

    @cached_property
    def money_supply(self) -> list[Release]:
        months = _months()
        rng = self._rng("money")
        n = len(months)
        m2_growth = _ar1(rng, n, np.log(1.095) / 12, 0.8, 0.0012, np.log(1.12) / 12)
        m1_growth = _ar1(rng, n, np.log(1.06) / 12, 0.7, 0.004, np.log(1.09) / 12)
        m0_growth = np.full(n, np.log(1.05) / 12) + rng.normal(0, 0.01, n)
        # Cash demand peaks before the Spring Festival and unwinds after it.
        m0_season = np.array([{1: 0.10, 2: 0.03}.get(m, 0.0) for _, m in months])
        m2 = 974_000 * np.exp(np.cumsum(m2_growth))
        m1 = 312_000 * np.exp(np.cumsum(m1_growth))
        m0 = 54_000 * np.exp(np.cumsum(m0_growth) + m0_season)
        levels = {"m0": np.round(m0, 2), "m1": np.round(m1, 2), "m2": np.round(m2, 2)}
        out = []
        for i, (y, m) in enumerate(months):
            if i < 12:
                continue
            row: dict[str, float] = {}
            for name, level in levels.items():
                row[name] = float(level[i])
                row[f"{name}_yoy"] = round((level[i] / level[i - 12] - 1) * 100, 1)
                row[f"{name}_mom"] = round((level[i] / level[i - 1] - 1) * 100, 1)
            out.append(Release(f"{y}{m:02d}", self._release_day("money", y, m, 10, 15), row))
        return out

    @cached_property
    def social_financing(self) -> list[Release]:
        months = _months()
        rng = self._rng("sf")
        stock = 1_060_000.0  # 亿元 at the end of 2012
        out = []
        cumulative = 0.0
        for i, (y, m) in enumerate(months):
            trend = 13_000 * (1.08 ** (y - 2013))
            increment = round(trend * ({1: 3.0, 3: 1.6, 6: 1.5}.get(m, 0.9)) * float(rng.lognormal(0, 0.2)), 0)
            cumulative = increment if m == 1 else cumulative + increment
            stock += increment
            out.append(Release(
                f"{y}{m:02d}", self._release_day("sf", y, m, 10, 15),
                {"inc_month": increment, "inc_cumval": cumulative, "stk_endval": round(stock / 10_000, 2)},
            ))
        return out

    @cached_property
    def pmi(self) -> list[Release]:
        months = _months()
        rng = self._rng("pmi")
        n = len(months)
        manufacturing = 50.0 + _ar1(rng, n, 0.0, 0.75, 0.55, 0.2)
        services = 53.0 + _ar1(rng, n, 0.0, 0.7, 0.6, 0.3)
        out = []
        for i, (y, m) in enumerate(months):
            base = manufacturing[i]
            noise = rng.normal(0, 0.4, 9)
            row = {
                "pmi010000": round(base, 1),
                "pmi010100": round(base + 1.0 + noise[0], 1),
                "pmi010200": round(base - 0.3 + noise[1], 1),
                "pmi010300": round(base - 1.5 + noise[2], 1),
                "pmi010400": round(base + 1.5 + noise[3], 1),
                "pmi010500": round(base + 0.2 + noise[4], 1),
                "pmi010600": round(50.2 + noise[5], 1),
                "pmi010700": round(base - 2.0 + noise[6], 1),
                "pmi010800": round(base - 1.8 + noise[7], 1),
                "pmi020100": round(services[i], 1),
                "pmi030000": round(0.6 * base + 0.4 * services[i] + noise[8] / 2, 1),
            }
            release = dt.date(y, m, pycalendar.monthrange(y, m)[1])
            out.append(Release(f"{y}{m:02d}", release, row))
        return out

    @cached_property
    def gdp(self) -> list[Release]:
        rng = self._rng("gdp")
        out = []
        shares = (0.22, 0.24, 0.255, 0.285)
        sector_weights = {1: (0.05, 0.37), 2: (0.07, 0.39), 3: (0.09, 0.40), 4: (0.11, 0.38)}
        annual = 640_000.0  # 亿元, nominal 2013
        real_growth = 7.8
        for year in range(FIRST_MONTH[0], LAST_MONTH[0] + 1):
            real_growth = float(np.clip(real_growth - 0.2 + rng.normal(0, 0.4), 4.5, 8.0))
            nominal = (1 + (real_growth + 1.5 + rng.normal(0, 0.8)) / 100)
            annual *= nominal
            cumulative = np.zeros(3)  # tenths of 亿元 by sector
            for q in (1, 2, 3, 4):
                value = annual * shares[q - 1] * float(rng.normal(1, 0.01))
                pi_share, si_share = sector_weights[q]
                tenths = int(round(value * 10))
                pi = int(round(tenths * pi_share))
                si = int(round(tenths * si_share))
                cumulative += np.array([pi, si, tenths - pi - si])
                q_growth = real_growth + rng.normal(0, 0.3)
                end = dt.date(year, 3 * q, pycalendar.monthrange(year, 3 * q)[1])
                release = _weekday_on_or_after(end + dt.timedelta(days=int(rng.integers(15, 21))))
                row = {
                    "gdp": float(cumulative.sum()) / 10, "gdp_yoy": round(q_growth, 1),
                    "pi": float(cumulative[0]) / 10, "pi_yoy": round(q_growth * 0.6 + rng.normal(0, 0.3), 1),
                    "si": float(cumulative[1]) / 10, "si_yoy": round(q_growth * 0.95 + rng.normal(0, 0.4), 1),
                    "ti": float(cumulative[2]) / 10, "ti_yoy": round(q_growth * 1.08 + rng.normal(0, 0.3), 1),
                }
                out.append(Release(f"{year}Q{q}", release, row))
        return out

    @staticmethod
    def published(releases: list[Release], as_of: dt.date) -> list[Release]:
        return [r for r in releases if r.release_date <= as_of]

    # ------------------------------------------------------------------ daily rates

    @cached_property
    def _cn_rate_level(self) -> np.ndarray:
        rng = self._rng("cn-rates")
        return np.clip(_ar1(rng, len(self._grid), 2.3, 0.998, 0.035, 3.2), 1.2, 3.6)

    @cached_property
    def _us_short_rate(self) -> np.ndarray:
        rng = self._rng("us-short")
        return np.clip(_ar1(rng, len(self._grid), 4.0, 0.998, 0.03, 3.4), 2.6, 5.5)

    @cached_property
    def _us_slope(self) -> np.ndarray:
        rng = self._rng("us-slope")
        return np.clip(_ar1(rng, len(self._grid), 0.3, 0.995, 0.03, 0.6), -0.8, 1.0)

    @cached_property
    def shibor(self) -> DailySeries:
        level = self._cn_rate_level
        rng = self._rng("shibor")
        n = len(level)
        offsets = dict(on=-0.65, **{"1w": -0.45, "2w": -0.35, "1m": -0.15, "3m": 0.0, "6m": 0.06, "9m": 0.1, "1y": 0.14})
        noise = {"on": 0.18, "1w": 0.1, "2w": 0.07, "1m": 0.03, "3m": 0.01, "6m": 0.008, "9m": 0.006, "1y": 0.005}
        cols = {t: np.round(np.maximum(0.3, level + offsets[t] + rng.normal(0, noise[t], n)), 4) for t in SHIBOR_TENORS}
        return self._on_sessions("XSHG", cols)

    @cached_property
    def hibor(self) -> DailySeries:
        base = self._us_short_rate - 0.6
        rng = self._rng("hibor")
        n = len(base)
        offsets = {"on": -0.8, "1w": -0.55, "2w": -0.4, "1m": -0.2, "2m": -0.1, "3m": 0.0, "6m": 0.12, "12m": 0.25}
        cols = {t: np.round(np.maximum(0.05, base + offsets[t] + rng.normal(0, 0.04 if t != "on" else 0.2, n)), 5) for t in HIBOR_TENORS}
        return self._on_sessions("XHKG", cols)

    @cached_property
    def us_tycr(self) -> DailySeries:
        short, slope = self._us_short_rate, self._us_slope
        rng = self._rng("ust")
        n = len(short)
        cols = {}
        for tenor in UST_TENORS:
            years = UST_YEARS[tenor]
            shape = 1 - np.exp(-years / 3)  # 0 at the short end, 1 at the long end
            hump = -0.15 * np.exp(-((years - 2) ** 2) / 4)
            cols[tenor] = np.round(short + slope * shape + hump + rng.normal(0, 0.01, n), 2)
        return self._on_sessions("XNYS", cols)

    @cached_property
    def us_trycr(self) -> DailySeries:
        nominal = self.us_tycr
        rng = self._rng("ust-real")
        # Drawn on the weekday grid (not over the sessions): its values never depend on how
        # many sessions the calendar has.
        idx = np.array([weekday_index(d) for d in nominal.dates], dtype=np.int64)
        breakeven = np.clip(_ar1(rng, len(self._grid), 2.25, 0.99, 0.03, 2.3), 1.5, 3.0)[idx]
        return DailySeries(nominal.dates, {t: np.round(nominal.columns[t] - breakeven, 2) for t in REAL_TENORS})

    @cached_property
    def us_tbr(self) -> DailySeries:
        """Bill rates: coupon-equivalent yields interpolated on the nominal curve, and the bank
        discount rates they imply (d = 360 y / (365 + y t), t the days to maturity)."""
        curve = self.us_tycr
        anchors = np.array([1 / 12, 2 / 12, 0.25, 4 / 12, 0.5, 1.0])
        values = np.vstack([curve.columns[t] for t in ("m1", "m2", "m3", "m4", "m6", "y1")])
        cols = {}
        for weeks in TBILL_WEEKS:
            days = weeks * 7
            years = days / 365
            ce = np.array([np.interp(years, anchors, values[:, i]) for i in range(values.shape[1])])
            ce = np.round(ce, 2)
            bd = 360 * (ce / 100) / (365 + (ce / 100) * days) * 100
            cols[f"w{weeks}_bd"] = np.round(bd, 2)
            cols[f"w{weeks}_ce"] = ce
        return DailySeries(curve.dates, cols)

    @cached_property
    def us_tltr(self) -> DailySeries:
        curve = self.us_tycr
        ltc = np.round((curve.columns["y20"] + curve.columns["y30"]) / 2 + 0.05, 2)
        return DailySeries(curve.dates, {"ltc": ltc, "cmt": curve.columns["y20"], "e_factor": np.round(ltc - curve.columns["y20"], 2)})

    @cached_property
    def us_trltr(self) -> DailySeries:
        real = self.us_trycr
        return DailySeries(real.dates, {"ltr_avg": np.round((real.columns["y20"] + real.columns["y30"]) / 2, 2)})

    @cached_property
    def lpr(self) -> list[tuple[dt.date, float, float]]:
        """Loan prime rates fixed monthly on the 20th (the next session when it is a holiday)."""
        rng = self._rng("lpr")
        sessions = session_dates("XSHG")
        one_year, spread = 4.35, 0.55
        out = []
        for y, m in _months():
            fixing = dt.date(y, m, 20)
            i = bisect.bisect_left(sessions, fixing)
            if fixing < DAILY_START or i >= len(sessions):
                # Months are in order: once a fixing's session is beyond the calendar, so are
                # all later ones, and no draw of an earlier month depends on them.
                continue
            day = sessions[i]
            if rng.uniform() < 0.06:
                one_year = round(max(3.0, one_year - float(rng.choice([0.05, 0.1, 0.15, 0.25]))), 2)
            if rng.uniform() < 0.05:
                spread = round(max(0.3, spread - 0.05), 2)
            out.append((day, one_year, round(one_year + spread, 2)))
        return out

    # ------------------------------------------------------------------ FX

    def fx_pair(self, code: str) -> FxPair:
        for pair in FX_PAIRS:
            if pair.code == code:
                return pair
        raise LookupError(
            f"unknown FX code {code!r}; available: {', '.join(p.code for p in FX_PAIRS)}"
        )

    @cached_property
    def fx_days(self) -> list[dt.date]:
        return [d for d in self._grid if d >= DAILY_START and (d.month, d.day) not in ((12, 25), (1, 1))]

    def fx(self, code: str) -> DailySeries:
        return self._fx_cache(code)

    def _fx_cache(self, code: str) -> DailySeries:
        cached = self._fx_series.get(code)
        if cached is None:
            cached = self._build_fx(self.fx_pair(code))
            self._fx_series[code] = cached
        return cached

    def _mid_close(self, pair: FxPair, rng: np.random.Generator, n: int) -> np.ndarray:
        """The pair's mid close on every weekday of the grid: inside its known range, pegged in
        its band, or the product of its two legs' mids (a cross stays consistent with them)."""
        if pair.cross is not None:
            a, b = (self._mid_close(self.fx_pair(code), generator(self.seed, "macro", "fx", code), n)
                    for code in pair.cross)
            return a * b
        if pair.range is not None:
            return _ranged_mid(rng, n, pair)
        # A pegged pair: a mean-reverting log deviation, clipped into the band.
        mid = pair.start * np.exp(_ar1(rng, n, 0.0, 0.999, pair.daily_vol, 0.0))
        return np.clip(mid, *pair.band) if pair.band else mid

    def _build_fx(self, pair: FxPair) -> DailySeries:
        rng = generator(self.seed, "macro", "fx", pair.code)
        grid = self._grid
        n = len(grid)
        mid_close = self._mid_close(pair, rng, n)
        if pair.cross is not None:
            rng = generator(self.seed, "macro", "fx", pair.code)  # its own draws for opens and ranges
        mid_open = np.concatenate([[mid_close[0]], mid_close[:-1]]) * np.exp(rng.normal(0, pair.daily_vol / 10, n))
        if pair.band:
            mid_open = np.clip(mid_open, *pair.band)
        rng_range = np.abs(rng.normal(0, pair.daily_vol * 0.6, (2, n)))
        mid_high = np.maximum(mid_open, mid_close) * (1 + rng_range[0])
        mid_low = np.minimum(mid_open, mid_close) * (1 - rng_range[1])
        half = pair.spread_pips * pair.pip / 2
        d = pair.decimals
        cols = {
            "bid_open": np.round(mid_open - half, d), "bid_close": np.round(mid_close - half, d),
            "bid_high": np.round(mid_high - half, d), "bid_low": np.round(mid_low - half, d),
            "ask_open": np.round(mid_open + half, d), "ask_close": np.round(mid_close + half, d),
            "ask_high": np.round(mid_high + half, d), "ask_low": np.round(mid_low + half, d),
            "tick_qty": rng.integers(20_000, 400_000, n).astype(float),
        }
        idx = np.array([weekday_index(day) for day in self.fx_days], dtype=np.int64)
        return DailySeries(self.fx_days, {k: v[idx] for k, v in cols.items()})
