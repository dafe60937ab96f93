"""Macro, rates and FX: publication lags, identities, calendars and magnitudes."""

from __future__ import annotations

import calendar as pycalendar
import datetime as dt

import pytest

from livesearch_pipeline.core.calendars import is_session, session_dates
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.spec import ToolContext, ToolInputError
from livesearch_pipeline.dataservice.tools.macro import TOOLS

CLOCK = dt.date(2026, 11, 27)
TOOL = {t.name: t for t in TOOLS}


def call(market: Market, name: str, clock: dt.date = CLOCK, **args):
    return TOOL[name].handler(ToolContext(market=market, clock=clock, seed=market.seed), args)


def _release(market: Market, attribute: str, period: str):
    return next(r for r in getattr(market.macro, attribute) if r.period == period)


@pytest.mark.parametrize(
    ("tool", "attribute", "first_day", "last_day"),
    [("cn_cpi", "cpi", 9, 17), ("cn_ppi", "ppi", 9, 17), ("cn_m", "money_supply", 10, 17), ("sf_month", "social_financing", 10, 17)],
)
def test_monthly_statistics_appear_only_after_publication(market, tool, attribute, first_day, last_day):
    release = _release(market, attribute, "202609")
    assert release.release_date.year == 2026 and release.release_date.month == 10
    assert first_day <= release.release_date.day <= last_day and release.release_date.weekday() < 5
    before = call(market, tool, clock=release.release_date - dt.timedelta(days=1))
    on = call(market, tool, clock=release.release_date)
    assert before[0]["month"] == "202608"
    assert on[0]["month"] == "202609"
    assert [r["month"] for r in on] == sorted((r["month"] for r in on), reverse=True)


def test_pmi_is_published_on_the_last_day_of_its_month(market):
    for release in market.macro.pmi:
        year, month = int(release.period[:4]), int(release.period[4:])
        assert release.release_date == dt.date(year, month, pycalendar.monthrange(year, month)[1])
    assert call(market, "cn_pmi", clock=dt.date(2026, 10, 30))[0]["month"] == "202609"
    assert call(market, "cn_pmi", clock=dt.date(2026, 10, 31))[0]["month"] == "202610"


def test_gdp_sectors_sum_and_lag(market):
    rows = call(market, "cn_gdp")
    assert rows[0]["quarter"] == "2026Q3"
    for row in rows:
        assert round(row["pi"] + row["si"] + row["ti"], 1) == row["gdp"]
    for release in market.macro.gdp:
        year, q = int(release.period[:4]), int(release.period[-1])
        end = dt.date(year, 3 * q, pycalendar.monthrange(year, 3 * q)[1])
        assert 15 <= (release.release_date - end).days <= 22
    q3 = _release(market, "gdp", "2026Q3")
    assert call(market, "cn_gdp", clock=q3.release_date - dt.timedelta(days=1))[0]["quarter"] == "2026Q2"
    assert call(market, "cn_gdp", q="2025Q4")[0]["quarter"] == "2025Q4"
    assert call(market, "cn_gdp", q=dt.date(2025, 11, 5))[0]["quarter"] == "2025Q4"
    assert call(market, "cn_gdp", start_q="2025Q1", end_q="2025Q4")[-1]["quarter"] == "2025Q1"


def test_cpi_magnitudes_and_identities(market):
    rows = call(market, "cn_cpi", start_m="201501")
    assert len(rows) > 100
    for row in rows:
        assert -1.5 <= row["nt_yoy"] <= 3.5
        assert row["nt_val"] == round(100 + row["nt_yoy"], 1)


def test_money_supply_growth_follows_levels(market):
    rows = call(market, "cn_m")
    by_month = {r["month"]: r for r in rows}
    for row in rows[:24]:
        year, month = int(row["month"][:4]), int(row["month"][4:])
        prior = by_month[f"{year - 1}{month:02d}"]
        assert row["m2_yoy"] == round((row["m2"] / prior["m2"] - 1) * 100, 1)
        assert 5 <= row["m2_yoy"] <= 16


def test_social_financing_stock_grows_by_increments(market):
    rows = call(market, "sf_month")
    for newer, older in zip(rows[:-1], rows[1:]):
        assert abs((newer["stk_endval"] - older["stk_endval"]) * 1e4 - newer["inc_month"]) <= 100.5
        if newer["month"].endswith("01"):
            assert newer["inc_cumval"] == newer["inc_month"]
        else:
            assert newer["inc_cumval"] == older["inc_cumval"] + newer["inc_month"]


@pytest.mark.parametrize(("tool", "calendar", "low", "high"),
                         [("shibor", "XSHG", 0.3, 4.0), ("hibor", "XHKG", 0.05, 6.0), ("us_tycr", "XNYS", 2.5, 6.5)])
def test_daily_rates_on_their_calendar(market, tool, calendar, low, high):
    rows = call(market, tool, start_date=dt.date(2026, 9, 1))
    dates = [dt.datetime.strptime(r["date"], "%Y%m%d").date() for r in rows]
    expected = [d for d in session_dates(calendar) if dt.date(2026, 9, 1) <= d <= CLOCK]
    assert dates == sorted(expected, reverse=True)
    for row in rows:
        values = [v for k, v in row.items() if k != "date"]
        assert all(low <= v <= high for v in values)


def test_shibor_window_and_single_date(market):
    day = dt.date(2026, 10, 9)
    assert is_session("XSHG", day)
    single = call(market, "shibor", date=day)
    assert [r["date"] for r in single] == ["20261009"]
    assert call(market, "shibor", date=dt.date(2026, 10, 3)) == []  # National Day holiday
    with pytest.raises(ToolInputError, match="after end_date"):
        call(market, "shibor", start_date=dt.date(2026, 10, 9), end_date=dt.date(2026, 10, 1))


def test_treasury_bill_discount_converts_from_coupon_equivalent(market):
    for row in call(market, "us_tbr", start_date=dt.date(2026, 11, 1)):
        for weeks in (4, 13, 26):
            ce, days = row[f"w{weeks}_ce"] / 100, weeks * 7
            assert row[f"w{weeks}_bd"] == round(360 * ce / (365 + ce * days) * 100, 2)


def test_real_yields_below_nominal(market):
    nominal = {r["date"]: r for r in call(market, "us_tycr", start_date=dt.date(2026, 6, 1))}
    for real in call(market, "us_trycr", start_date=dt.date(2026, 6, 1)):
        assert real["y10"] < nominal[real["date"]]["y10"]


def test_lpr_fixes_on_the_twentieth(market):
    rows = call(market, "shibor_lpr", start_date=dt.date(2024, 1, 1))
    months = [r["date"][:6] for r in rows]
    assert len(months) == len(set(months))
    for row in rows:
        day = dt.datetime.strptime(row["date"], "%Y%m%d").date()
        assert day.day >= 20 and is_session("XSHG", day)
        assert 2.5 <= row["1y"] < row["5y"] <= 5.5


def test_fx_bars(market):
    rows = call(market, "fx_daily", ts_code="USDCNH.FXCM", start_date=dt.date(2026, 1, 1))
    dates = [dt.datetime.strptime(r["trade_date"], "%Y%m%d").date() for r in rows]
    assert all(d.weekday() < 5 for d in dates) and dt.date(2026, 1, 1) not in dates and dates[0] == CLOCK
    for r in rows:
        assert r["bid_close"] < r["ask_close"]
        assert r["bid_high"] >= max(r["bid_open"], r["bid_close"]) and r["bid_low"] <= min(r["bid_open"], r["bid_close"])
        assert 5.5 < r["bid_close"] < 8.5
    hkd = call(market, "fx_daily", ts_code="USDHKD.FXCM")
    assert all(7.74 <= r["bid_close"] <= 7.86 for r in hkd)
    day = call(market, "fx_daily", trade_date=dt.date(2026, 11, 27))
    assert len(day) == len(call(market, "fx_obasic"))
    window = call(market, "fx_daily", start_date=dt.date(2026, 11, 23), end_date=dt.date(2026, 11, 27))
    assert len(window) == 5 * len(day) and window[0]["trade_date"] == "20261127"
    with pytest.raises(ToolInputError, match="unknown FX code"):
        call(market, "fx_daily", ts_code="USDXYZ.FXCM")


def test_month_arguments_are_validated(market):
    with pytest.raises(ToolInputError, match="YYYYMM"):
        call(market, "cn_cpi", m="2026-09")
    with pytest.raises(ToolInputError, match="either"):
        call(market, "cn_cpi", m="202609", start_m="202601")
    assert call(market, "cn_cpi", m=dt.date(2026, 9, 1))[0]["month"] == "202609"
    with pytest.raises(ToolInputError, match="YYYYQn"):
        call(market, "cn_gdp", q="2026-3")


def test_deterministic_across_instances(market):
    again = Market(seed=market.seed)
    for name in ("cn_cpi", "shibor", "us_tycr"):
        assert call(again, name) == call(market, name)
    assert call(Market(seed=market.seed + 7), "shibor")[:5] != call(market, "shibor")[:5]
