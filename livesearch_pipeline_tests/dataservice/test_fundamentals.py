"""Statements of the synthetic market: identities, announcement lags, point-in-time views,
derived indicators and disclosures, through the model and through the statement tools."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.core.calendars import is_session
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.market.disclosures import forecast_type
from livesearch_pipeline.dataservice.market.reporting import quarter_end, quarter_ends_back
from livesearch_pipeline.dataservice.spec import ToolContext, ToolInputError
from livesearch_pipeline.dataservice.tools.statements import TOOLS

CLOCK = dt.date(2026, 11, 27)
TOOL = {t.name: t for t in TOOLS}


@pytest.fixture(scope="module")
def cn_codes(market: Market) -> list[str]:
    entities = market.universe.of_class("cn_equity")
    # A spread of boards and listing dates, including a listing after 2015.
    late = [e.code for e in entities if e.list_date >= dt.date(2016, 1, 1)][:2]
    return [e.code for e in entities[:6]] + late


@pytest.fixture(scope="module")
def foreign_codes(market: Market) -> list[str]:
    return [e.code for e in market.universe.of_class("hk_equity")[:2]] + [e.code for e in market.universe.of_class("us_equity")[:2]]


def call(market: Market, name: str, clock: dt.date = CLOCK, **args):
    return TOOL[name].handler(ToolContext(market=market, clock=clock, seed=market.seed), args)


def test_balance_sheets_balance_exactly_and_subtotals_add_up(market, cn_codes, foreign_codes):
    checked = 0
    for code in cn_codes + foreign_codes:
        for report in market.fundamentals.reports(code):
            v = report.values
            assert v["total_assets"] == v["total_liab"] + v["total_hldr_eqy_inc_min_int"]
            assert v["total_liab_hldr_eqy"] == v["total_assets"]
            assert v["total_hldr_eqy_inc_min_int"] == v["total_hldr_eqy_exc_min_int"] + v["minority_int"]
            assert v["total_assets"] == v["total_cur_assets"] + v["total_nca"]
            assert v["total_liab"] == v["total_cur_liab"] + v["total_ncl"]
            current = ("money_cap", "trad_asset", "notes_receiv", "accounts_receiv", "prepayment", "inventories", "oth_cur_assets")
            assert sum(v[k] for k in current) == v["total_cur_assets"]
            checked += 1
    assert checked > 200


def test_income_and_cash_flow_identities(market, cn_codes):
    by_code = {code: {r.end_date: r for r in market.fundamentals.reports(code)} for code in cn_codes}
    for code, reports in by_code.items():
        for end, report in reports.items():
            v = report.values
            expected_op = (v["revenue"] - v["oper_cost"] - v["biz_tax_surchg"] - v["sell_exp"] - v["admin_exp"]
                           - v["rd_exp"] - v["fin_exp"] + v["invest_income"])
            assert v["operate_profit"] == expected_op
            assert v["total_profit"] == v["operate_profit"] + v["non_oper_income"] - v["non_oper_exp"]
            assert v["n_income"] == v["total_profit"] - v["income_tax"]
            assert v["n_income_attr_p"] + v["minority_gain"] == v["n_income"]
            assert v["c_cash_equ_end_period"] == v["money_cap"]
            assert v["n_incr_cash_cash_equ"] == v["n_cashflow_act"] + v["n_cashflow_inv_act"] + v["n_cash_flows_fnc_act"]
            assert v["c_cash_equ_end_period"] - v["c_cash_equ_beg_period"] == v["n_incr_cash_cash_equ"]
            opening = reports.get(quarter_end(end.year - 1, 4))
            if opening is not None:
                assert v["c_cash_equ_beg_period"] == opening.values["money_cap"]


def test_flows_are_cumulative_year_to_date(market, cn_codes):
    """Q4 YTD exceeds Q3 YTD by exactly the fourth quarter; revenue never shrinks within a year."""
    for code in cn_codes:
        reports = {r.end_date: r for r in market.fundamentals.reports(code)}
        for end, report in reports.items():
            if end.month == 3:
                continue
            earlier = reports.get(quarter_end(end.year, (end.month // 3) - 1))
            if earlier is not None:
                assert report.values["revenue"] > earlier.values["revenue"]
                assert report.values["oper_cost"] > earlier.values["oper_cost"]


def test_announcement_dates_follow_regulatory_lags(market, cn_codes, foreign_codes):
    for code in cn_codes:
        entity = market.universe.get(code)
        for r in market.fundamentals.reports(code):
            assert r.ann_date > r.end_date
            if r.ann_date < entity.list_date - dt.timedelta(days=10):
                continue
            if r.ann_date >= dt.date(2014, 1, 1) and r.ann_date < entity.list_date:
                continue  # prospectus disclosures
            if r.ann_date >= dt.date(2014, 1, 1):
                assert is_session("XSHG", r.ann_date)
            if entity.list_date < r.end_date:
                deadline = {3: dt.date(r.end_date.year, 4, 30), 6: dt.date(r.end_date.year, 8, 31),
                            9: dt.date(r.end_date.year, 10, 31), 12: dt.date(r.end_date.year + 1, 4, 30)}[r.end_date.month]
                assert r.ann_date <= deadline
    hk, us = foreign_codes[0], foreign_codes[2]
    # Half-yearly in Hong Kong: the interim and the annual report of the company's own fiscal year.
    hk_fiscal = market.fundamentals.fiscal(hk)
    assert {hk_fiscal.quarter(r.end_date) for r in market.fundamentals.reports(hk)} == {2, 4}
    us_fiscal = market.fundamentals.fiscal(us)
    for r in market.fundamentals.reports(us):
        if market.universe.get(us).list_date < r.end_date:
            limit = 60 if us_fiscal.quarter(r.end_date) == 4 else 40
            assert (r.ann_date - r.end_date).days <= limit


def test_an_annual_report_never_comes_after_the_next_first_quarter_report(market):
    # A-share practice: both by April 30, the annual report first or on the same day. Forty
    # companies, as the realism check sampled them (three of forty had Q1 first before).
    together = 0
    for entity in market.universe.of_class("cn_equity")[:40]:
        by_end = {r.end_date: r for r in market.fundamentals.reports(entity.code)}
        for end, report in by_end.items():
            q1 = by_end.get(dt.date(end.year + 1, 3, 31)) if end.month == 12 else None
            if q1 is not None:
                assert report.ann_date <= q1.ann_date, (entity.code, end, report.ann_date, q1.ann_date)
                together += report.ann_date == q1.ann_date
    assert together > 0, "some companies publish both on one day"


def test_ttm_and_book_equity_are_point_in_time(market, cn_codes):
    fundamentals = market.fundamentals
    code = cn_codes[0]
    reports = {r.end_date: r for r in fundamentals.reports(code)}
    half = reports[dt.date(2025, 6, 30)]
    before, on = half.ann_date - dt.timedelta(days=1), half.ann_date
    assert fundamentals.book_equity(code, on) == half.values["total_hldr_eqy_exc_min_int"]
    assert fundamentals.book_equity(code, before) != half.values["total_hldr_eqy_exc_min_int"]
    expected = (half.values["n_income_attr_p"] + reports[dt.date(2024, 12, 31)].values["n_income_attr_p"]
                - reports[dt.date(2024, 6, 30)].values["n_income_attr_p"])
    assert fundamentals.ttm_net_profit(code, on) == expected
    assert fundamentals.ttm_net_profit(code, before) != expected
    expected_revenue = (half.values["revenue"] + reports[dt.date(2024, 12, 31)].values["revenue"]
                        - reports[dt.date(2024, 6, 30)].values["revenue"])
    assert fundamentals.ttm_revenue(code, on) == expected_revenue
    annual = reports[dt.date(2024, 12, 31)]
    assert fundamentals.ttm_net_profit(code, annual.ann_date) in (
        annual.values["n_income_attr_p"],
        # When Q1 is announced together with the annual report, it is already the latest.
        reports[dt.date(2025, 3, 31)].values["n_income_attr_p"] + annual.values["n_income_attr_p"]
        - reports[dt.date(2024, 3, 31)].values["n_income_attr_p"],
    )
    assert fundamentals.ttm_net_profit(code, dt.date(2010, 1, 4)) is None


def test_statement_tools_show_only_announced_reports(market, cn_codes):
    code = cn_codes[1]
    reports = market.fundamentals.reports(code)
    target = next(r for r in reports if r.end_date == dt.date(2025, 9, 30))
    before = call(market, "income", clock=target.ann_date - dt.timedelta(days=1), ts_code=code)
    on = call(market, "income", clock=target.ann_date, ts_code=code)
    assert "20250930" not in {r["end_date"] for r in before}
    assert on[0]["end_date"] == "20250930" and on[0]["ann_date"] == target.ann_date.strftime("%Y%m%d")
    # An announcement window in the past shows what was known then, even with a later clock.
    window = call(market, "balancesheet", ts_code=code, end_date=target.ann_date - dt.timedelta(days=1))
    assert all(r["ann_date"] < target.ann_date.strftime("%Y%m%d") for r in window)
    assert [r["end_date"] for r in on] == sorted((r["end_date"] for r in on), reverse=True)
    only = call(market, "cashflow", ts_code=code, period="20241231")
    # One period: as first reported, and as restated where a later report restated it (newest first).
    assert {r["end_date"] for r in only} == {"20241231"} and [r["update_flag"] for r in only] in (["0"], ["1", "0"])


def test_fina_indicator_derives_from_statements(market, cn_codes):
    code = cn_codes[2]
    income = {(r["end_date"], r["update_flag"]): r for r in call(market, "income", ts_code=code)}
    balance = {(r["end_date"], r["update_flag"]): r for r in call(market, "balancesheet", ts_code=code)}
    indicators = call(market, "fina_indicator", ts_code=code)
    assert len(indicators) == len(income)

    def compared(end: str, announced: str) -> dict:
        """The version of a period the company compared against: the latest announced by then."""
        return max((r for (e, _), r in income.items() if e == end and r["ann_date"] <= announced),
                   key=lambda r: (r["ann_date"], r["update_flag"]))

    for ind in indicators[:12]:
        end = ind["end_date"]
        inc, bal = income[(end, ind["update_flag"])], balance[(end, ind["update_flag"])]
        end_day = dt.datetime.strptime(end, "%Y%m%d").date()
        shares = market.corporate.total_shares(code, end_day)
        assert ind["eps"] == round(inc["n_income_attr_p"] / shares, 4) == inc["basic_eps"]
        assert ind["grossprofit_margin"] == round((inc["revenue"] - inc["oper_cost"]) / inc["revenue"] * 100, 4)
        assert ind["debt_to_assets"] == round(bal["total_liab"] / bal["total_assets"] * 100, 4)
        assert ind["current_ratio"] == round(bal["total_cur_assets"] / bal["total_cur_liab"], 4)
        assert ind["bps"] == round(bal["total_hldr_eqy_exc_min_int"] / shares, 4)
        opening = max((r for (e, _), r in balance.items() if e == f"{end_day.year - 1}1231" and r["ann_date"] <= ind["ann_date"]),
                      key=lambda r: (r["ann_date"], r["update_flag"]))
        avg_equity = (opening["total_hldr_eqy_exc_min_int"] + bal["total_hldr_eqy_exc_min_int"]) / 2
        assert ind["roe"] == round(inc["n_income_attr_p"] / avg_equity * 100, 4)
        prior = compared(f"{end_day.year - 1}{end[4:]}", ind["ann_date"])
        assert ind["netprofit_yoy"] == round((inc["n_income_attr_p"] - prior["n_income_attr_p"]) / abs(prior["n_income_attr_p"]) * 100, 4)
        assert ind["or_yoy"] == round((inc["revenue"] - prior["revenue"]) / prior["revenue"] * 100, 4)


def test_forecasts_precede_and_bracket_the_actual_results(market):
    codes = [e.code for e in market.universe.of_class("cn_equity")[:40]]
    seen = 0
    for code in codes:
        reports = {r.end_date: r for r in market.fundamentals.reports(code)}
        for f in market.fundamentals.disclosures.forecasts(code):
            actual = reports[f.end_date]
            prior = reports[quarter_end(f.end_date.year - 1, actual.quarter)]
            assert f.ann_date < actual.ann_date
            cur, last = actual.values["n_income_attr_p"], prior.values["n_income_attr_p"]
            assert f.net_profit_min <= cur / 1e4 <= f.net_profit_max
            assert f.type == forecast_type(cur, last)
            if f.p_change_min is not None:
                change = (cur - last) / abs(last) * 100
                assert f.p_change_min <= change <= f.p_change_max
            seen += 1
    assert seen >= 20


def test_forecast_tool_is_point_in_time(market):
    code = next(e.code for e in market.universe.of_class("cn_equity") if market.fundamentals.disclosures.forecasts(e.code))
    f = market.fundamentals.disclosures.forecasts(code)[-1]
    before = call(market, "forecast", clock=f.ann_date - dt.timedelta(days=1), ts_code=code)
    on = call(market, "forecast", clock=f.ann_date, ts_code=code)
    assert len(on) == len(before) + 1
    assert on[0]["ann_date"] == f.ann_date.strftime("%Y%m%d")


def test_express_matches_the_audited_statement(market):
    codes = [e.code for e in market.universe.of_class("cn_equity")[:40]]
    exact = revised = 0
    for code in codes:
        reports = {r.end_date: r for r in market.fundamentals.reports(code)}
        for e in market.fundamentals.disclosures.express_reports(code):
            statement = reports[e.end_date]
            assert e.ann_date < statement.ann_date
            for line in ("revenue", "total_profit", "n_income_attr_p", "total_assets"):
                if e.revised:
                    assert abs(e.values[line] - statement.values[line]) <= abs(statement.values[line]) * 0.005 + 1
                else:
                    assert e.values[line] == statement.values[line]
            exact += not e.revised
            revised += e.revised
    assert exact > 0 and revised > 0


def test_main_business_segments_sum_to_revenue(market, cn_codes):
    code = cn_codes[0]
    income = {r["end_date"]: r for r in call(market, "income", ts_code=code)}
    for kind in ("P", "D"):
        rows = call(market, "fina_mainbz", ts_code=code, type=kind)
        by_period: dict[str, list[dict]] = {}
        for row in rows:
            by_period.setdefault(row["end_date"], []).append(row)
        assert by_period and all(p[4:] in ("0630", "1231") for p in by_period)
        for period, segments in by_period.items():
            assert sum(s["bz_sales"] for s in segments) == income[period]["revenue"]
            assert sum(s["bz_cost"] for s in segments) == income[period]["oper_cost"]
            assert all(s["bz_profit"] == s["bz_sales"] - s["bz_cost"] for s in segments)


def test_disclosure_dates_reveal_the_actual_date_only_once_it_passed(market, cn_codes):
    code = cn_codes[3]
    report = next(r for r in market.fundamentals.reports(code) if r.end_date == dt.date(2025, 12, 31))
    before = call(market, "disclosure_date", clock=report.ann_date - dt.timedelta(days=1), ts_code=code, end_date="20251231")
    after = call(market, "disclosure_date", clock=report.ann_date, ts_code=code, end_date="20251231")
    assert after[0]["actual_date"] == report.ann_date.strftime("%Y%m%d")
    assert not before or before[0]["actual_date"] is None


def test_audit_covers_annual_reports_only(market, cn_codes):
    rows = call(market, "fina_audit", ts_code=cn_codes[0])
    assert rows and all(r["end_date"].endswith("1231") for r in rows)
    assert all(r["audit_fees"] > 0 and r["audit_agency"].endswith("会计师事务所") for r in rows)


def test_foreign_statement_tools(market, foreign_codes):
    hk, us = foreign_codes[0], foreign_codes[2]
    hk_rows = call(market, "hk_income", ts_code=hk)
    hk_entity = market.universe.get(hk)
    fiscal = market.fundamentals.fiscal(hk)
    interim = quarter_ends_back(fiscal.year_end(2026), 2).strftime("%m%d")
    assert hk_rows and {r["end_date"][4:] for r in hk_rows} == {interim, fiscal.mmdd}
    assert {r["currency"] for r in hk_rows} == {hk_entity.reporting_currency}
    us_bs = call(market, "us_balancesheet", ts_code=us)
    assert us_bs[0]["currency"] == "USD"
    assert all(r["total_assets"] == r["total_liab"] + r["total_hldr_eqy_inc_min_int"] for r in us_bs)
    us_income = call(market, "us_income", ts_code=us)[0]
    us_indicator = call(market, "us_fina_indicator", ts_code=us)[0]
    assert us_indicator["end_date"] == us_income["end_date"]
    assert us_indicator["eps"] == us_income["basic_eps"]
    assert set(us_indicator) == {"ts_code", "ann_date", "end_date", "currency", "end_type", "update_flag", "eps", "bps",
                                 "roe", "roa", "grossprofit_margin", "netprofit_margin", "debt_to_assets", "current_ratio",
                                 "or_yoy", "netprofit_yoy"}


def test_bad_arguments_are_actionable(market, cn_codes, foreign_codes):
    with pytest.raises(ToolInputError, match="unknown ts_code"):
        call(market, "income", ts_code="999999.SH")
    with pytest.raises(ToolInputError, match="cn_equity"):
        call(market, "income", ts_code=foreign_codes[0])
    with pytest.raises(ToolInputError, match="quarter end"):
        call(market, "income", ts_code=cn_codes[0], period="20250515")
    with pytest.raises(ToolInputError, match="YYYYMMDD"):
        call(market, "balancesheet", ts_code=cn_codes[0], period="2025-06-30")
    with pytest.raises(ToolInputError, match="after end_date"):
        call(market, "income", ts_code=cn_codes[0], start_date=dt.date(2025, 5, 1), end_date=dt.date(2025, 1, 1))


def test_same_seed_same_statements_other_seed_differs(market, cn_codes):
    code = cn_codes[0]
    again = Market(seed=market.seed)
    assert call(again, "income", ts_code=code) == call(market, "income", ts_code=code)
    other = Market(seed=market.seed + 1)
    if other.universe.has(code) and other.universe.get(code).asset_class == "cn_equity":
        assert call(other, "income", ts_code=code) != call(market, "income", ts_code=code)


def test_a_period_must_be_a_quarter_end(market, cn_codes):
    # A period after the clock never reaches the handler (the server answers it with no rows,
    # test_server.py); one that is no quarter end is a caller's mistake, named as such.
    with pytest.raises(ToolInputError, match="must be a quarter end .* got 20261127"):
        call(market, "income", ts_code=cn_codes[0], period=CLOCK)
    assert [r["end_date"] for r in call(market, "income", ts_code=cn_codes[0], period=dt.date(2025, 12, 31))] == ["20251231"]

