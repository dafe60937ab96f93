"""Holders and corporate events: consistency with share counts, unlocks, point-in-time."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.core.calendars import session_dates
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.spec import ToolContext, ToolInputError
from livesearch_pipeline.dataservice.tools.events import TOOLS

CLOCK = dt.date(2026, 11, 27)
TOOL = {t.name: t for t in TOOLS}


@pytest.fixture(scope="module")
def codes(market: Market) -> list[str]:
    return [e.code for e in market.universe.of_class("cn_equity")[:5]]


@pytest.fixture(scope="module")
def unlocking_code(market: Market) -> str:
    return next(e.code for e in market.universe.of_class("cn_equity") if market.corporate.float_unlocks(e.code))


def call(market: Market, name: str, clock: dt.date = CLOCK, **args):
    return TOOL[name].handler(ToolContext(market=market, clock=clock, seed=market.seed), args)


def _day(text: str) -> dt.date:
    return dt.datetime.strptime(text, "%Y%m%d").date()


def test_top10_holdings_match_share_counts(market, codes):
    for code in codes:
        rows = call(market, "top10_holders", ts_code=code)
        by_period: dict[str, list[dict]] = {}
        for r in rows:
            by_period.setdefault(r["end_date"], []).append(r)
        assert by_period
        for period, holders in by_period.items():
            end = _day(period)
            total = market.corporate.total_shares(code, end)
            assert len(holders) == 10
            amounts = [h["hold_amount"] for h in holders]
            assert amounts == sorted(amounts, reverse=True)
            assert sum(h["hold_ratio"] for h in holders) < 100
            for h in holders:
                assert h["hold_ratio"] == round(h["hold_amount"] / total * 100, 4)


def test_float_holders_are_bounded_by_float_shares(market, codes):
    code = codes[0]
    for r in call(market, "top10_floatholders", ts_code=code, period="20251231"):
        floating = market.corporate.float_shares(code, dt.date(2025, 12, 31))
        assert r["hold_amount"] <= floating
        assert abs(r["hold_float_ratio"] - r["hold_amount"] / floating * 100) < 1e-3


def test_hold_change_is_the_change_since_the_previous_period(market, codes):
    code = codes[1]
    q3 = {r["holder_name"]: r for r in call(market, "top10_holders", ts_code=code, period="20250930")}
    h1 = {r["holder_name"]: r for r in call(market, "top10_holders", ts_code=code, period="20250630")}
    common = set(q3) & set(h1)
    assert common
    for name in common:
        assert q3[name]["hold_change"] == q3[name]["hold_amount"] - h1[name]["hold_amount"]


def test_holders_appear_with_the_periodic_report(market, codes):
    code = codes[2]
    report = next(r for r in market.fundamentals.reports(code) if r.end_date == dt.date(2026, 6, 30))
    before = call(market, "top10_holders", clock=report.ann_date - dt.timedelta(days=1), ts_code=code)
    on = call(market, "top10_holders", clock=report.ann_date, ts_code=code)
    assert "20260630" not in {r["end_date"] for r in before}
    assert on[0]["end_date"] == "20260630" and on[0]["ann_date"] == report.ann_date.strftime("%Y%m%d")
    numbers = call(market, "stk_holdernumber", clock=report.ann_date, ts_code=code)
    assert numbers[0]["end_date"] == "20260630" and numbers[0]["holder_num"] > 0


def test_unlocks_release_exactly_the_float_step(market, unlocking_code):
    code = unlocking_code
    rows = call(market, "share_float", ts_code=code)
    assert rows
    by_date: dict[str, float] = {}
    for r in rows:
        assert _day(r["ann_date"]) < _day(r["float_date"])
        by_date[r["float_date"]] = by_date.get(r["float_date"], 0.0) + r["float_share"]
    for float_date, released in by_date.items():
        day = _day(float_date)
        step = market.corporate.float_shares(code, day) - market.corporate.float_shares(code, day - dt.timedelta(days=1))
        assert abs(step - released) <= 2  # both sides round whole shares


def test_unlock_notices_are_visible_before_the_unlock(market, unlocking_code):
    code = unlocking_code
    row = call(market, "share_float", ts_code=code)[-1]
    ann, unlock = _day(row["ann_date"]), _day(row["float_date"])
    assert call(market, "share_float", clock=ann - dt.timedelta(days=1), ts_code=code, float_date=unlock) == []
    visible = call(market, "share_float", clock=ann, ts_code=code, float_date=unlock)
    assert visible and all(r["float_date"] == row["float_date"] for r in visible)


def test_holder_trades_are_consistent(market):
    rows = []
    for e in market.universe.of_class("cn_equity")[:10]:
        rows += call(market, "stk_holdertrade", ts_code=e.code)
    assert len(rows) >= 5
    for r in rows:
        assert _day(r["begin_date"]) <= _day(r["close_date"]) < _day(r["ann_date"]) <= CLOCK
        assert r["change_vol"] > 0 and r["change_vol"] % 100 == 0
        assert r["change_ratio"] == round(r["change_vol"] / r["total_share"] * 100, 4)
        assert r["after_ratio"] == round(r["after_share"] / r["total_share"] * 100, 4)
        close = market.prices.close_on(r["ts_code"], _day(r["close_date"]))
        assert abs(r["avg_price"] - close) <= close * 0.03 + 0.01


def test_repurchase_stages_accumulate(market):
    seen = 0
    for e in market.universe.of_class("cn_equity")[:10]:
        stages = list(reversed(call(market, "repurchase", ts_code=e.code)))
        last_vol: dict[str, float] = {}
        for s in stages:
            assert s["proc"] in ("预案", "股东大会通过", "实施", "完成")
            if s["vol"] is not None:
                key = s["exp_date"]
                assert s["vol"] >= last_vol.get(key, 0.0)
                last_vol[key] = s["vol"]
                assert s["amount"] <= s["vol"] * s["high_limit"] + 0.01
            seen += 1
    assert seen > 0


def test_pledge_statistics(market, codes):
    seen_pledged = False
    for code in codes:
        rows = call(market, "pledge_stat", ts_code=code)
        dates = [_day(r["end_date"]) for r in rows]
        assert dates == sorted(dates, reverse=True) and dates[0] <= CLOCK
        sessions = set(session_dates("XSHG"))
        for r, day in zip(rows[:60], dates[:60]):
            assert day in sessions
            following = [d for d in sessions if day < d <= day + dt.timedelta(days=7)]
            assert all(d.isocalendar()[:2] != day.isocalendar()[:2] for d in following)
            assert r["pledge_ratio"] == round((r["unrest_pledge"] + r["rest_pledge"]) / r["total_share"] * 100, 2)
            seen_pledged |= r["pledge_ratio"] > 0
    assert seen_pledged


def test_rewards_follow_annual_reports(market, codes):
    rows = call(market, "stk_rewards", ts_code=codes[0], end_date="20251231")
    titles = {r["title"] for r in rows}
    assert {"董事长", "总经理"} <= titles
    assert all(r["reward"] > 0 and r["ann_date"] > "20251231" for r in rows)


def test_bad_arguments(market):
    hk = market.universe.of_class("hk_equity")[0].code
    with pytest.raises(ToolInputError, match="cn_equity"):
        call(market, "top10_holders", ts_code=hk)
    with pytest.raises(ToolInputError, match="needs ts_code"):
        call(market, "pledge_stat")
    with pytest.raises(ToolInputError, match="quarter end"):
        call(market, "top10_holders", ts_code=market.universe.of_class("cn_equity")[0].code, period="20250101")
