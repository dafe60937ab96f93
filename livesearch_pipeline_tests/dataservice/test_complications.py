"""The complications professionals reconcile (issue 39), through the tools: a restated comparative,
a March fiscal year, a CNY reporter trading in HKD, an A/H pair and a bonus issue's adjustment."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.market.reporting import quarter_ends_back
from livesearch_pipeline.dataservice.server import DataService

CLOCK = dt.date(2026, 12, 4)
YMD = "%Y%m%d"


def at(market: Market, clock: dt.date = CLOCK) -> DataService:
    return DataService(config=ServiceConfig(clock=clock), market=market)


def items(market: Market, tool: str, clock: dt.date = CLOCK, **args) -> list[dict]:
    return at(market, clock).call(tool, {k: v.strftime(YMD) if isinstance(v, dt.date) else v
                                         for k, v in args.items()})["items"]


def fx_rate(market: Market, day: dt.date, source: str, target: str) -> float:
    """Units of `target` per `source` from fx_daily's closing bids of `day` (one HKD = USDCNH / USDHKD CNY)."""
    rows = {r["ts_code"]: r["bid_close"] for r in items(market, "fx_daily", trade_date=day)}
    per_usd = {"USD": 1.0, "CNY": rows["USDCNH.FXCM"], "HKD": rows["USDHKD.FXCM"]}
    return per_usd[target] / per_usd[source]


# --------------------------------------------------------------------------- restatements


@pytest.fixture(scope="module")
def restated(market: Market):
    """An A-share whose comparative a report restated in 2025 or 2026, and the two versions."""
    for entity in market.universe.of_class("cn_equity"):
        for version in market.fundamentals.restatements(entity.code):
            if dt.date(2025, 1, 1) <= version.ann_date <= CLOCK:
                first = next(r for r in market.fundamentals.reports(entity.code) if r.end_date == version.end_date)
                return entity.code, first, version
    raise AssertionError("no restatement in 2025-2026")


def test_a_restated_comparative_comes_back_in_both_versions_from_its_announcement(market, restated):
    code, first, version = restated
    period = version.end_date.strftime(YMD)
    before = items(market, "income", version.ann_date - dt.timedelta(days=1), ts_code=code, period=period)
    on = items(market, "income", version.ann_date, ts_code=code, period=period)
    # Point in time: the day before, only the figures as first reported exist.
    assert [(r["update_flag"], r["ann_date"]) for r in before] == [("0", first.ann_date.strftime(YMD))]
    # From the restating report's day on, both, the restated one first, each with its own dates.
    assert [(r["update_flag"], r["ann_date"], r["f_ann_date"]) for r in on] == [
        ("1", version.ann_date.strftime(YMD), version.ann_date.strftime(YMD)),
        ("0", first.ann_date.strftime(YMD), first.ann_date.strftime(YMD))]
    assert on[1]["revenue"] == first.values["revenue"] != on[0]["revenue"] == version.values["revenue"]
    # The balance sheet still balances as restated.
    sheet = items(market, "balancesheet", version.ann_date, ts_code=code, period=period)[0]
    assert sheet["update_flag"] == "1"
    assert sheet["total_assets"] == sheet["total_liab"] + sheet["total_hldr_eqy_inc_min_int"]


def test_the_restating_report_grows_against_its_restated_comparative(market, restated):
    code, first, version = restated
    later = quarter_ends_back(version.end_date, -4)
    current = next(r for r in market.fundamentals.reports(code) if r.end_date == later)
    assert current.ann_date == version.ann_date  # published together
    indicator = next(r for r in items(market, "fina_indicator", ts_code=code, period=later.strftime(YMD))
                     if r["update_flag"] == "0")
    expected = round((current.values["revenue"] - version.values["revenue"]) / version.values["revenue"] * 100, 4)
    assert indicator["or_yoy"] == expected
    naive = round((current.values["revenue"] - first.values["revenue"]) / first.values["revenue"] * 100, 4)
    assert indicator["or_yoy"] != naive


def test_a_share_of_the_periodic_reports_restates_a_comparative(market):
    published = restated = 0
    for asset_class in ("cn_equity", "hk_equity", "us_equity"):
        for entity in market.universe.of_class(asset_class)[::3]:
            versions = [v for v in market.fundamentals.versions(entity.code) if v.ann_date <= CLOCK]
            published += sum(not v.restated for v in versions)
            restated += sum(v.restated for v in versions)
    assert restated / published >= 0.05, (restated, published)


# --------------------------------------------------------------------------- fiscal years


def _hk(market: Market, fy_end_month: int, currency: str | None = None):
    return next(e for e in market.universe.of_class("hk_equity")
                if e.fy_end_month == fy_end_month and market.universe.a_share_of(e.code) is None
                and (currency is None or e.reporting_currency == currency)
                and e.list_date < dt.date(2015, 1, 1))


def test_a_march_fiscal_year_accumulates_from_april_and_reports_the_year_at_march(market):
    entity = _hk(market, 3)
    basic = items(market, "hk_basic", ts_code=entity.code)[0]
    assert basic["fy_end"] == "0331"
    rows = items(market, "hk_income", ts_code=entity.code, start_date=dt.date(2024, 1, 1))
    by_end = {r["end_date"]: r for r in rows if r["update_flag"] == "0"}
    assert {end[4:] for end in by_end} == {"0331", "0930"}
    assert all(r["end_type"] == ("4" if end.endswith("0331") else "2") for end, r in by_end.items())
    # The year to 31 March 2026 is the interim to 30 September 2025 plus the second half: its
    # revenue exceeds the interim's, and the next interim starts again from April.
    annual, interim, next_interim = by_end["20260331"], by_end["20250930"], by_end["20260930"]
    assert annual["revenue"] > interim["revenue"] and next_interim["revenue"] < annual["revenue"]
    history = market.fundamentals.reports(entity.code)
    year = next(r for r in history if r.end_date == dt.date(2026, 3, 31))
    assert (year.quarter, year.fiscal_year) == (4, 2026)
    # Announced within three months of the year end (the interim within two).
    assert dt.date(2026, 3, 31) < dt.datetime.strptime(annual["ann_date"], YMD).date() <= dt.date(2026, 6, 29)
    assert dt.date(2025, 9, 30) < dt.datetime.strptime(interim["ann_date"], YMD).date() <= dt.date(2025, 12, 1)
    # Trailing twelve months at the interim: the interim plus the last fiscal year less its first
    # half, each as the latest version known that day (a comparative restated with it, restated).
    announced = interim["ann_date"]

    def known(end: str) -> dict:
        return max((r for r in rows if r["end_date"] == end and r["ann_date"] <= announced),
                   key=lambda r: (r["ann_date"], r["update_flag"]))

    expected = interim["revenue"] + known("20250331")["revenue"] - known("20240930")["revenue"]
    assert market.fundamentals.ttm_revenue(entity.code, dt.datetime.strptime(announced, YMD).date()) == expected


def test_us_fiscal_years_end_in_june_or_september_for_a_quarter_of_the_companies(market):
    us = market.universe.of_class("us_equity")
    hk = market.universe.of_class("hk_equity")
    assert sum(e.fy_end_month in (6, 9) for e in us) / len(us) >= 0.25
    assert sum(e.fy_end_month == 3 for e in hk) / len(hk) >= 0.20
    june = next(e for e in us if e.fy_end_month == 6 and e.list_date < dt.date(2015, 1, 1))
    assert items(market, "us_basic", ts_code=june.code)[0]["fy_end"] == "0630"
    annual = [r for r in items(market, "us_income", ts_code=june.code, start_date=dt.date(2024, 1, 1)) if r["end_type"] == "4"]
    assert annual and all(r["end_date"].endswith("0630") for r in annual)


# --------------------------------------------------------------------------- currencies and A/H


def test_a_cny_reporter_trading_in_hkd_is_valued_in_cny(market):
    entity = _hk(market, 12, "CNY")
    basic = items(market, "hk_basic", ts_code=entity.code)[0]
    assert (basic["curr_type"], basic["report_curr"]) == ("HKD", "CNY")
    statement = items(market, "hk_income", ts_code=entity.code)[0]
    assert statement["currency"] == "CNY"
    day = dt.date(2026, 12, 4)
    quote = items(market, "hk_daily_adj", ts_code=entity.code, trade_date=day)[0]
    rate = fx_rate(market, day, "HKD", "CNY")
    value_cny = quote["close"] * rate * quote["total_share"]
    assert quote["pe_ttm"] == pytest.approx(value_cny / market.fundamentals.ttm_net_profit(entity.code, day), abs=1e-4)
    assert quote["pb"] == pytest.approx(value_cny / market.fundamentals.book_equity(entity.code, day), abs=1e-4)
    assert quote["total_mv"] == pytest.approx(quote["close"] * quote["total_share"], abs=0.01)  # in HKD
    # The tool says which currency an amount is in.
    meta = next(s.meta for s in at(market).specs if s.name == "hk_income")
    assert meta.field("revenue").unit_field == "currency"
    # A sector-consistent share: at least a fifth of Hong Kong companies report in CNY or USD.
    hk = market.universe.of_class("hk_equity")
    assert sum(e.reporting_currency != "HKD" for e in hk) / len(hk) >= 0.20


def test_an_a_h_pair_is_one_company_with_two_quotes(market):
    h_code, a_code = next(iter(market.universe.dual_listings.items()))
    assert items(market, "stock_basic", ts_code=a_code)[0]["h_code"] == h_code
    h_basic = items(market, "hk_basic", ts_code=h_code)[0]
    assert (h_basic["a_code"], h_basic["report_curr"], h_basic["curr_type"]) == (a_code, "CNY", "HKD")
    assert h_basic["name"] == items(market, "stock_basic", ts_code=a_code)[0]["name"]
    # One company's statements, in CNY, under both codes.
    a_income = items(market, "income", ts_code=a_code)[0]
    h_income = items(market, "hk_income", ts_code=h_code)[0]
    assert (h_income["end_date"], h_income["revenue"], h_income["currency"]) == (a_income["end_date"], a_income["revenue"], "CNY")
    # The A/H premium from the two closes and the day's FX release: A shares dearer, in a real range.
    day = dt.date(2026, 12, 4)
    a_close = items(market, "daily", ts_code=a_code, trade_date=day)[0]["close"]
    h_close = items(market, "hk_daily", ts_code=h_code, trade_date=day)[0]["close"]
    premium = a_close / (h_close * fx_rate(market, day, "HKD", "CNY")) - 1
    assert 0.0 < premium < 1.0
    # Every share of the company counts in its A-share's market value; the H code's count is the H class.
    a_basic = items(market, "daily_basic", ts_code=a_code, trade_date=day)[0]
    h_quote = items(market, "hk_daily_adj", ts_code=h_code, trade_date=day)[0]
    h_class = market.corporate.h_class_shares(a_code)
    assert h_quote["total_share"] == h_quote["free_share"] == h_class
    assert a_basic["total_share"] * 1e4 == pytest.approx(market.corporate.total_shares(a_code, day))
    assert a_basic["total_share"] * 1e4 - a_basic["float_share"] * 1e4 >= h_class
    # Valued as one company: the H P/E at the H price, the A P/E at the A price, the ratio the premium.
    assert a_basic["pe_ttm"] / h_quote["pe_ttm"] == pytest.approx(1 + premium, rel=1e-3)


# --------------------------------------------------------------------------- corporate actions


def test_a_bonus_issue_changes_shares_and_price_and_moves_the_factor_on_its_ex_date(market):
    action = next(a for e in market.universe.of_class("cn_equity") for a in market.corporate.actions(e.code)
                  if a.stk_bo_rate + a.stk_co_rate > 0 and dt.date(2026, 1, 1) <= a.ex_date <= CLOCK)
    code, ex = action.code, action.ex_date
    bars = items(market, "daily", ts_code=code, start_date=ex - dt.timedelta(days=10), end_date=ex)
    factors = {r["trade_date"]: r["adj_factor"]
               for r in items(market, "adj_factor", ts_code=code, start_date=ex - dt.timedelta(days=10), end_date=ex)}
    basics = {r["trade_date"]: r for r in items(market, "daily_basic", ts_code=code, start_date=ex - dt.timedelta(days=10),
                                                end_date=ex)}
    on, before = bars[0], bars[1]
    assert on["trade_date"] == ex.strftime(YMD)
    ratio = 1 + action.stk_bo_rate + action.stk_co_rate
    cash = next(r["cash_div_tax"] for r in items(market, "dividend", ts_code=code)
                if r["ex_date"] == ex.strftime(YMD) and r["div_proc"] == "实施")
    # The unadjusted price: the ex-rights previous close, as the exchange computes it.
    assert on["pre_close"] == pytest.approx(round((before["close"] - cash) / ratio, 2), abs=0.011)
    # The share count steps by the ratio, the factor by the previous close over the ex-rights price.
    assert basics[on["trade_date"]]["total_share"] == pytest.approx(basics[before["trade_date"]]["total_share"] * ratio, rel=1e-6)
    assert factors[on["trade_date"]] / factors[before["trade_date"]] == pytest.approx(before["close"] / on["pre_close"], rel=1e-5)
    # The dividend table lists it with its ex-date and ratio.
    implemented = [r for r in items(market, "dividend", ts_code=code) if r["ex_date"] == ex.strftime(YMD)]
    assert implemented and implemented[0]["stk_div"] == pytest.approx(ratio - 1)


def test_bonus_issues_and_splits_fall_in_recent_windows(market):
    since = CLOCK - dt.timedelta(days=90)
    bonus = [a for e in market.universe.of_class("cn_equity") for a in market.corporate.actions(e.code)
             if since < a.ex_date <= CLOCK and a.stk_bo_rate + a.stk_co_rate > 0]
    splits = [a for c in ("hk_equity", "us_equity") for e in market.universe.of_class(c)
              for a in market.corporate.splits(e.code) if since < a.ex_date <= CLOCK]
    assert len(bonus) >= 5 and len(splits) >= 2
    # An A+H company issues no bonus shares: both classes would have to receive them.
    for a_code in market.universe.dual_listings.values():
        assert all(a.stk_bo_rate + a.stk_co_rate == 0 for a in market.corporate.actions(a_code))
