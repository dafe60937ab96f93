"""Price engines: bar invariants on real calendars, limits, aggregation, index construction,
fund NAVs, determinism and random access."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from livesearch_pipeline.core.calendars import session_dates
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.market.prices import aggregate

SEED = 20260101


def _sample(market, asset_class, n=30):
    return market.universe.of_class(asset_class)[:n]


@pytest.mark.parametrize("asset_class", ["cn_equity", "hk_equity", "us_equity"])
def test_daily_bar_invariants(market, asset_class):
    for e in _sample(market, asset_class):
        bars = market.prices.daily(e.code)
        sessions = set(session_dates(e.calendar))
        assert bars.dates == sorted(bars.dates) and set(bars.dates) <= sessions
        assert bars.dates[0] >= max(e.list_date, dt.date(2015, 1, 1))
        assert (bars.high >= np.maximum(bars.open, bars.close)).all()
        assert (bars.low <= np.minimum(bars.open, bars.close)).all()
        assert (bars.low > 0).all() and (bars.vol > 0).all()
        ex_dates = {a.ex_date for a in market.corporate.actions(e.code)}
        chained = [k for k in range(1, len(bars.dates)) if bars.dates[k] not in ex_dates]
        assert np.array_equal(bars.pre_close[chained], bars.close[np.array(chained) - 1]), "pre_close is the previous close"
        vwap = bars.amount * (1000 / 100 if asset_class == "cn_equity" else 1.0) / bars.vol
        assert (vwap >= bars.low - 0.01).all() and (vwap <= bars.high + 0.01).all()


def test_a_share_limits(market):
    hits = 0
    for e in _sample(market, "cn_equity", 80):
        bars = market.prices.daily(e.code)
        assert (bars.close <= bars.up_limit + 1e-9).all() and (bars.close >= bars.down_limit - 1e-9).all()
        assert (bars.high <= bars.up_limit + 1e-9).all() and (bars.low >= bars.down_limit - 1e-9).all()
        width = np.round(bars.up_limit / bars.pre_close - 1, 2)
        wide = e.code.startswith("688") or (e.code.startswith("30") and True)
        if e.code.startswith("688"):
            assert (width == 0.2).all()
        elif not e.code.startswith("30"):
            assert (width == 0.1).all()
        elif wide:
            late = np.array([d >= dt.date(2020, 8, 24) for d in bars.dates])
            assert (width[late] == 0.2).all() and (width[~late] == 0.1).all()
        hits += int((bars.close == bars.up_limit).sum() + (bars.close == bars.down_limit).sum())
    assert hits > 20, "limit-up / limit-down days occur"


def test_realistic_magnitudes(market):
    closes = np.array([market.prices.daily(e.code).close[-1] for e in _sample(market, "cn_equity", 100)])
    assert 5 <= np.median(closes) <= 300
    returns = np.concatenate([np.diff(np.log(market.prices.daily(e.code).close)) for e in _sample(market, "cn_equity", 40)])
    assert 0.012 < returns.std() < 0.04


@pytest.mark.parametrize("period", ["W", "M"])
def test_weekly_and_monthly_aggregate_dailies(market, period):
    for e in _sample(market, "cn_equity", 10):
        daily = market.prices.daily(e.code)
        bars = market.prices.weekly(e.code) if period == "W" else market.prices.monthly(e.code)
        key = (lambda d: d.isocalendar()[:2]) if period == "W" else (lambda d: (d.year, d.month))
        for k in (1, len(bars.dates) // 2, len(bars.dates) - 2):
            members = [i for i, d in enumerate(daily.dates) if key(d) == key(bars.dates[k])]
            assert bars.dates[k] == daily.dates[members[-1]]
            assert bars.open[k] == daily.open[members[0]] and bars.close[k] == daily.close[members[-1]]
            assert bars.high[k] == daily.high[members].max() and bars.low[k] == daily.low[members].min()
            assert bars.vol[k] == daily.vol[members].sum()
            assert bars.amount[k] == pytest.approx(daily.amount[members].sum())


def test_aggregate_rejects_unknown_period(market):
    with pytest.raises(ValueError, match="'W' or 'M'"):
        aggregate(market.prices.daily(_sample(market, "cn_equity", 1)[0].code), "Q")


def test_index_level_follows_weighted_constituents(market):
    index = next(e for e in market.universe.of_class("index") if market.universe.index_specs[e.code].members)
    bars = market.prices.daily(index.code)
    table = market.prices.index_weights(index.code)
    for rebalance, weights in table[5:200:37]:
        assert sum(weights.values()) == pytest.approx(100, abs=0.01)
        assert max(weights.values()) <= 15.0001
        k = bars.last_on_or_before(rebalance) + 1
        day = bars.dates[k]
        num = den = 0.0
        for code, w in weights.items():
            member = market.prices.daily(code)
            i = member.at(day)
            if i is not None:
                num += w * (member.close[i] / member.pre_close[i] - 1)
                den += w
        assert bars.close[k] / bars.pre_close[k] - 1 == pytest.approx(num / den, abs=2e-6)


def test_global_indices_trade_on_their_calendar(market):
    for e in market.universe.of_class("index"):
        if e.exchange == "GLOBAL":
            bars = market.prices.daily(e.code)
            assert set(bars.dates) <= set(session_dates(e.calendar))
            assert (bars.high >= np.maximum(bars.open, bars.close)).all()


def test_etf_nav_tracks_its_index_and_price_tracks_nav(market):
    etfs = [e for e in market.universe.of_class("fund") if e.market == "E"][:5]
    for e in etfs:
        nav = market.prices.nav(e.code)
        index = market.prices.daily(market.universe.fund_specs[e.code].benchmark_index)
        idx = np.searchsorted(index.ordinals, nav.ordinals)
        index_ret = index.close[idx] / index.pre_close[idx] - 1
        nav_ret = np.diff(nav.unit_nav) / nav.unit_nav[:-1]
        assert np.corrcoef(nav_ret, index_ret[1:])[0, 1] > 0.95
        bars = market.prices.daily(e.code)
        assert np.abs(bars.close / nav.unit_nav - 1).max() < 0.02


def test_fund_distributions_keep_accumulated_nav_consistent(market):
    funds = [e for e in market.universe.of_class("fund") if market.prices.nav(e.code).distributions]
    assert funds
    for e in funds[:5]:
        nav = market.prices.nav(e.code)
        assert np.allclose(nav.accum_nav, nav.unit_nav + nav.accum_div, atol=1e-4)
        assert nav.accum_div[-1] == pytest.approx(sum(c for _, c in nav.distributions), abs=1e-4)
        moved = {nav.dates[k] for k in range(1, len(nav.dates)) if nav.adj_factor[k] != nav.adj_factor[k - 1]}
        assert moved == {d for d, _ in nav.distributions}


def test_otc_funds_have_no_exchange_bars(market):
    otc = next(e for e in market.universe.of_class("fund") if e.market == "O")
    with pytest.raises(LookupError, match="fund_nav"):
        market.prices.daily(otc.code)


def test_series_are_deterministic_across_instances(market):
    other = Market(SEED)
    for e in _sample(market, "cn_equity", 3) + _sample(market, "us_equity", 3):
        a, b = market.prices.daily(e.code), other.prices.daily(e.code)
        assert a.dates == b.dates and np.array_equal(a.close, b.close) and np.array_equal(a.vol, b.vol)
    reseeded = Market(SEED + 1)
    first, other_first = _sample(market, "hk_equity", 1)[0], _sample(reseeded, "hk_equity", 1)[0]
    assert (first.code, market.prices.daily(first.code).close[:10].tolist()) != (
        other_first.code, reseeded.prices.daily(other_first.code).close[:10].tolist())
