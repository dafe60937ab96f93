"""Corporate actions: dividend stages, ex-dates, adjustment factors, share counts, suspensions."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from livesearch_pipeline.dataservice.market.corporate import round_half_up

SEED = 20260101


def _sample(market, asset_class, n=40):
    return market.universe.of_class(asset_class)[:n]


def _cn_payers(market, n=40):
    return [e for e in _sample(market, "cn_equity", n) if market.corporate.actions(e.code)]


def test_dividend_stages_are_ordered_and_complete(market):
    payers = _cn_payers(market)
    assert len(payers) >= 10
    for e in payers:
        records = market.corporate.dividends(e.code)
        assert [r["ann_date"] for r in records] == sorted((r["ann_date"] for r in records), reverse=True)
        done = [r for r in records if r["div_proc"] == "实施"]
        assert len(done) == len([a for a in market.corporate.actions(e.code) if a.kind == "dividend"])
        for r in done:
            assert r["ann_date"] < r["record_date"] < r["ex_date"] <= r["pay_date"]
            assert r["cash_div"] == r["cash_div_tax"] and r["cash_div"] > 0
        for action in market.corporate.actions(e.code):
            assert action.plan_ann_date < action.agm_date < action.impl_ann_date < action.ex_date


def test_adj_factor_moves_exactly_on_ex_dates(market):
    checked = 0
    for asset_class in ("cn_equity", "hk_equity", "us_equity"):
        for e in _sample(market, asset_class):
            bars = market.prices.daily(e.code)
            moved = {bars.dates[k] for k in range(1, len(bars.dates)) if bars.adj_factor[k] != bars.adj_factor[k - 1]}
            ex_dates = {a.ex_date for a in market.corporate.actions(e.code) if a.ex_date > bars.dates[0]}
            assert moved == ex_dates, e.code
            checked += len(ex_dates)
    assert checked > 50


def test_pre_close_on_ex_dates_is_the_ex_rights_price(market):
    for e in _cn_payers(market, 60)[:15]:
        bars = market.prices.daily(e.code)
        cash = market.prices.dividend_cash(e.code)
        for a in market.corporate.actions(e.code):
            k = bars.at(a.ex_date)
            if k is None or k == 0:
                continue
            expected = round_half_up((bars.close[k - 1] - cash[a.action_id]) / a.share_multiplier, 2)
            assert bars.pre_close[k] == pytest.approx(expected, abs=1e-9)
            ratio = bars.adj_factor[k] / bars.adj_factor[k - 1]
            assert ratio == pytest.approx(bars.close[k - 1] / bars.pre_close[k], rel=1e-5)


def test_dividend_cash_is_a_sane_share_of_the_price(market):
    for e in _cn_payers(market)[:15]:
        for a in market.corporate.actions(e.code):
            cash = market.prices.dividend_cash(e.code)[a.action_id]
            price = market.prices.close_on(e.code, a.plan_ann_date)
            assert 0 < cash < 0.1 * price


def test_share_counts_change_only_by_action_multipliers(market):
    for asset_class in ("cn_equity", "hk_equity", "us_equity"):
        for e in _sample(market, asset_class, 60):
            actions = market.corporate.actions(e.code)
            start = dt.date(2015, 1, 1)
            base = market.corporate.total_shares(e.code, start)
            for a in actions:
                before = market.corporate.total_shares(e.code, a.ex_date - dt.timedelta(days=1))
                after = market.corporate.total_shares(e.code, a.ex_date)
                assert after == pytest.approx(before * a.share_multiplier, rel=1e-6)
            assert market.corporate.total_shares(e.code, dt.date(2026, 11, 27)) == pytest.approx(
                base * np.prod([a.share_multiplier for a in actions if start < a.ex_date <= dt.date(2026, 11, 27)]), rel=1e-6)


def test_float_shares_step_up_on_unlocks_and_never_exceed_total(market):
    unlocking = [e for e in market.universe.of_class("cn_equity") if market.corporate.float_unlocks(e.code)][:20]
    assert unlocking
    for e in unlocking:
        for unlock in market.corporate.float_unlocks(e.code):
            before = market.corporate.float_ratio(e.code, unlock.float_date - dt.timedelta(days=1))
            assert market.corporate.float_ratio(e.code, unlock.float_date) == unlock.float_ratio > before
        for day in (dt.date(2015, 6, 1), dt.date(2020, 6, 1), dt.date(2026, 11, 27)):
            assert 0 < market.corporate.float_shares(e.code, day) <= market.corporate.total_shares(e.code, day)


def test_splits_only_outside_the_a_share_market(market):
    assert not any(a.kind == "split" for e in _sample(market, "cn_equity") for a in market.corporate.actions(e.code))
    splits = [a for c in ("hk_equity", "us_equity") for e in market.universe.of_class(c) for a in market.corporate.splits(e.code)]
    assert splits and all(a.split_ratio > 1 for a in splits)


def test_suspended_sessions_have_no_bar(market):
    suspended_any = 0
    for e in market.universe.of_class("cn_equity")[:80]:
        days = market.corporate.suspensions(e.code)
        bars = market.prices.daily(e.code)
        assert not set(days) & set(bars.dates)
        suspended_any += bool(days)
    assert suspended_any >= 10


def test_non_equities_have_no_corporate_actions(market):
    index = market.universe.of_class("index")[0]
    with pytest.raises(LookupError, match="not an equity"):
        market.corporate.total_shares(index.code, dt.date(2020, 1, 2))
