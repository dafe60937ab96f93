"""Exchange rates between the market's currencies (CNY, HKD, USD), as the service's FX release
publishes them (issue 39).

A rate is read off `fx_daily`'s closing bids of USD/CNH and USD/HKD on the last FX day on or before
the date (the release has no 25 December or 1 January): one USD is USDCNH renminbi or USDHKD Hong
Kong dollars, so one HKD is USDCNH / USDHKD renminbi. It is the convention every consumer shares:
the valuation of a Hong Kong company that reports in renminbi (its market value converted into
CNY for its P/E and P/B), the statements sized from that market value, the H-share price of an
A+H company, and the families that convert a figure ("the day's closing bid rates").
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

CURRENCY_PAIRS = {"CNY": "USDCNH.FXCM", "HKD": "USDHKD.FXCM"}  # units of the currency per USD
FX_FIELD = "bid_close"


class Currencies:
    def __init__(self, market: Any) -> None:
        self.market = market
        self._per_usd: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _series(self, currency: str) -> tuple[np.ndarray, np.ndarray]:
        """(date ordinals, units of `currency` per USD) of the FX release, ascending."""
        cached = self._per_usd.get(currency)
        if cached is None:
            pair = CURRENCY_PAIRS.get(currency)
            if pair is None:
                raise LookupError(f"no FX rate for {currency!r}; the market converts between USD, "
                                  f"{', '.join(CURRENCY_PAIRS)}")
            series = self.market.macro.fx(pair)
            cached = self._per_usd[currency] = (series.ordinals, np.asarray(series.columns[FX_FIELD], dtype=float))
        return cached

    def _per_usd_on(self, currency: str, ordinals: np.ndarray) -> np.ndarray:
        if currency == "USD":
            return np.ones(len(ordinals))
        days, values = self._series(currency)
        idx = np.searchsorted(days, ordinals, "right") - 1
        return values[np.clip(idx, 0, len(values) - 1)]

    def rates(self, source: str, target: str, ordinals: np.ndarray) -> np.ndarray:
        """Units of `target` per unit of `source` on each date (ordinals)."""
        ordinals = np.asarray(ordinals, dtype=np.int64)
        if source == target:
            return np.ones(len(ordinals))
        return self._per_usd_on(target, ordinals) / self._per_usd_on(source, ordinals)

    def rate(self, source: str, target: str, day: dt.date) -> float:
        """Units of `target` per unit of `source` on `day`."""
        return float(self.rates(source, target, np.array([day.toordinal()]))[0])
