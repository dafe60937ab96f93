"""The complications on the offline web (issue 39): a restated comparative and the figure as first
reported, each dated; names as on each page's date and "formerly …"; a fiscal year's report; an
A/H company's pages; one name per company across pages and tools (issue 40)."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.web.corpus import CorpusConfig, Page, record_key
from livesearch_pipeline.web.formatting import display_name
from livesearch_pipeline.web.pages import CorpusGenerator
from livesearch_pipeline.web.sites import official_lang
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, service

REPORT_TOOLS = ("income", "balancesheet", "cashflow", "fina_indicator")


def pages_of(code: str, tools: tuple[str, ...], clock: dt.date = CLOCK) -> list[Page]:
    config = CorpusConfig(clock=clock, history_sessions=5, market_tools=(), tools=tools, entities=(code,))
    return CorpusGenerator(config).entity_batch([code])[0]


@pytest.fixture(scope="module")
def market():
    return shared_market(DEFAULT_SEED)


def test_a_restated_comparative_is_in_the_later_report_and_the_first_figure_stays_in_the_earlier(market):
    code, first, version = next(
        (e.code, next(r for r in market.fundamentals.reports(e.code) if r.end_date == v.end_date), v)
        for e in market.universe.of_class("cn_equity") if e.visibility >= 4
        for v in market.fundamentals.restatements(e.code) if dt.date(2025, 6, 1) <= v.ann_date <= CLOCK)
    period, later = version.end_date.strftime("%Y%m%d"), f"{version.end_date.year + 1}{version.end_date:%m%d}"
    pages = pages_of(code, REPORT_TOOLS)
    by_path = {p.path: p for p in pages}
    restating = by_path[f"/exchange/reports/{code}/{later}.html"]
    earlier = by_path[f"/exchange/reports/{code}/{period}.html"]
    restated_key, first_key = record_key("income", code, period, "1"), record_key("income", code, period)
    # The later report prints its own statements and the restated comparative, dated with it.
    assert restated_key in restating.records and record_key("income", code, later) in restating.records
    assert restating.published == version.ann_date
    assert f"{period}" in restating.text and ("追溯调整" in restating.text or "restated" in restating.text)
    # The earlier report is kept as it was published: the first-reported figures, on its own date.
    assert first_key in earlier.records and restated_key not in earlier.records
    assert earlier.published == first.ann_date
    assert f"{first.values['revenue']:.1f}" in earlier.text and f"{version.values['revenue']:.1f}" in restating.text
    # The data set lists both versions, each headed with its version and announcement date.
    dataset = by_path.get(f"/exchange/income/{code}.html")
    if dataset is not None and first_key in dataset.records:
        assert restated_key in dataset.records
        assert version.ann_date.isoformat() in dataset.text and first.ann_date.isoformat() in dataset.text


def test_a_page_names_the_company_as_on_its_date_and_the_company_page_says_formerly(market):
    code, spell = next((e.code, s) for e in market.universe.of_class("cn_equity")
                       for s in market.names.history(e.code)[1:] if dt.date(2025, 6, 1) <= s.start <= CLOCK)
    old = market.names.history(code)[0]
    pages = pages_of(code, ("daily", *REPORT_TOOLS))
    hub = next(p for p in pages if p.kind == "hub")
    assert hub.title.startswith(spell.name) and f"公司原名{old.name}" in hub.text and spell.start.isoformat() in hub.text
    reports = [p for p in pages if p.kind == "report" and p.path.count("/") == 4]
    assert reports
    for page in reports:
        expected = spell.name if page.published >= spell.start else old.name
        assert page.title.startswith(expected), (page.path, page.published, page.title)
    assert any(p.published < spell.start for p in reports)  # an old report keeps the old name


def test_pages_and_tools_give_one_name_per_company(market):
    svc = service()
    codes = [e.code for e in market.universe.of_class("cn_equity")
             if len(market.names.history(e.code)) > 1][:4]
    for code in codes:
        hub = next(p for p in pages_of(code, ("daily",)) if p.kind == "hub")
        tool_name = svc.call("stock_basic", {"ts_code": code})["items"][0]["name"]
        searched = next(r for r in svc.call("search", {"keyword": code})["items"] if r["ts_code"] == code)["name"]
        entity = market.names.on(code, CLOCK)
        assert hub.title.startswith(display_name(entity, official_lang(entity)))
        assert tool_name == searched == entity.name
        if tool_name != market.universe.get(code).name:  # the rename lies ahead: no "formerly" yet
            assert "原名" not in hub.text


def test_a_march_year_report_says_its_fiscal_period_and_currency(market):
    entity = next(e for e in market.universe.of_class("hk_equity") if e.fy_end_month == 3 and e.reporting_currency == "CNY"
                  and e.visibility >= 4)
    pages = pages_of(entity.code, ("hk_income", "hk_balancesheet", "hk_cashflow", "hk_fina_indicator", "hk_daily"))
    annual = next(p for p in pages if p.path == f"/exchange/reports/{entity.code}/20260331.html")
    assert "Annual report for the year ended 31 March 2026 (fiscal 2026). Amounts in CNY." in annual.text
    assert "CNY" in annual.text
    hub = next(p for p in pages if p.kind == "hub")
    assert "Fiscal year ends on 31 March; financial statements in CNY, shares traded in HKD." in hub.text


def test_an_h_share_page_names_its_a_share_and_the_share_changes_are_published(market):
    h_code, a_code = next(iter(market.universe.dual_listings.items()))
    hub = next(p for p in pages_of(h_code, ("hk_daily",)) if p.kind == "hub")
    assert f"A shares are listed as {a_code}" in hub.text
    action = next(a for e in market.universe.of_class("cn_equity") for a in market.corporate.actions(e.code)
                  if a.stk_bo_rate + a.stk_co_rate > 0 and dt.date(2026, 1, 1) <= a.ex_date <= CLOCK)
    hub = next(p for p in pages_of(action.code, ("daily",)) if p.kind == "hub")
    assert "股本变动" in hub.text and action.ex_date.isoformat() in hub.text
    assert f"{action.share_multiplier:g}" in hub.text
