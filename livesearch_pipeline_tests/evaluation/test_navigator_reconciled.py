"""The navigator reads issue 39's reconciled investigations (evaluation/agents/reconciled.py) from
D's web as an analyst does, and its answers agree with the gold programs
(construction/families/reconciled.py) on the market of 2026-12-04: compound growth over four or
five annual reports with a base year a later report restated, a March fiscal year, the A/H
premium on the latest and on an earlier Shanghai session, and a Hong Kong company's market value
in its reporting currency (CNY or USD) over its latest annual figure, and the member of a peer set
(an industry index's members) with the highest annual figure."""

from __future__ import annotations

import asyncio
import datetime as dt

import anyio
import httpx
import pytest

from livesearch_pipeline.construction.families import question_en
from livesearch_pipeline.construction.families.peers import peer_drafts
from livesearch_pipeline.construction.families.reconciled import (
    _ah_drafts, _cagr_drafts, _cross_drafts, _fiscal_drafts, _growth_first_drafts,
)
from livesearch_pipeline.construction.families.reports import _statement_drafts
from livesearch_pipeline.construction.sampling import window_dates
from livesearch_pipeline.construction.models import EntityInfo
from livesearch_pipeline.evaluation.agents.investigations import investigate, read_investigation
from livesearch_pipeline.evaluation.agents.navigator import NavigatorAgent, _Question
from livesearch_pipeline.evaluation.agents.reading import Reading, parse_page
from livesearch_pipeline.evaluation.agents.reconciled import fiscal_year_end, period_figures
from livesearch_pipeline.web.corpus import CorpusConfig
from livesearch_pipeline.web.pages import CorpusGenerator
from livesearch_pipeline_tests.construction.test_families_reconciled import _entity, _run
from livesearch_pipeline_tests.evaluation.agents_fakes import served_question
from livesearch_pipeline_tests.evaluation.test_navigator_values import _NoResults, _table

CLOCK = dt.date(2026, 12, 4)
# 000007.SZ's FY2022 revenue was restated in its FY2023 annual report; 01949.HK closes its year on
# 31 March; 001327.SZ / 02538.HK are an A/H pair; 00905.HK reports in CNY, 03703.HK in USD.
# 801010.SI's five banks are a peer set.
BANKS = ("601523.SH", "603209.SH", "603369.SH", "603488.SH", "603729.SH")
# 001642.SZ's long FY2023 report prints FY2022's restated statements on a page after its own.
# 603779.SH's Q3 2026 report restated Q3 2025.
CODES = ("FNWN", "603779.SH", "000007.SZ", "001642.SZ", "600580.SH", "01949.HK", "001327.SZ", "02538.HK", "00905.HK", "03703.HK", *BANKS)


def test_a_report_pages_figures_by_period_and_the_company_pages_fiscal_year_end() -> None:
    items = ["项目", "数值", "单位"]
    page = parse_page(_table(items, [["报告期", "20231231", ""], ["营业额", "200.0", "CNY"]])
                      + _table(items, [["报告期", "20221231", ""], ["营业额", "110.0", "CNY"]]))
    # The report's own year and the comparative year it restated.
    assert period_figures(page, "income", "revenue") == {"20231231": 200.0, "20221231": 110.0}
    hub = parse_page(_table(["Fiscal year end", "Reporting currency", "Trading currency"], [["0331", "CNY", "HKD"]]))
    assert fiscal_year_end(hub) == "0331"
    assert fiscal_year_end(parse_page(_table(["Ex-date", "Action"], [["2026-11-17", "Split"]]))) == "1231"


@pytest.fixture(scope="module")
def web() -> dict[str, str]:
    """The pages of D's web about these companies, and the FX releases."""
    generator = CorpusGenerator(CorpusConfig(clock=CLOCK, entities=CODES, market_tools=("fx_daily",)))
    pages, _, _ = generator.entity_batch(list(CODES))
    pages += generator.market_batch()
    return {p.path: p.html for p in pages}


@pytest.fixture(scope="module")
def gold():
    """Each family's candidates of these companies, executed at D (as construction drafts them)."""
    def drafts(catalog, service):
        out = []
        for code, cls, cal in (("000007.SZ", "cn_equity", "XSHG"), ("001642.SZ", "cn_equity", "XSHG"),
                               ("600580.SH", "cn_equity", "XSHG"),
                               ("01949.HK", "hk_equity", "XHKG")):
            tool = "income" if cls == "cn_equity" else "hk_income"
            out += _cagr_drafts(catalog, _entity(code, cls, calendar=cal), service.call(tool, {"ts_code": code})["items"])
        out += _ah_drafts(catalog, _entity("001327.SZ", "cn_equity", "珩渺电力"),
                          _entity("02538.HK", "hk_equity", "珩渺电力", "XHKG"))
        out += _cross_drafts(catalog, _entity("00905.HK", "hk_equity", "旻砚置业控股", "XHKG"), "CNY")
        out += _cross_drafts(catalog, _entity("03703.HK", "hk_equity", "Y", "XHKG"), "USD")
        records = service.call("income", {"ts_code": "603779.SH"})["items"]
        lookback = window_dates(catalog.get("income"), "XSHG", sessions=10)
        growth = _entity("603779.SH", "cn_equity")
        out += [d for d in _statement_drafts(catalog, growth, records, lookback) if d.family == "growth_period"]
        out += _growth_first_drafts(catalog, growth, records, lookback)
        # A March year (01949.HK, 00530.HK: restated its year to March 2022) and a June year (FNWN).
        out += _fiscal_drafts(catalog, _entity("01949.HK", "hk_equity", calendar="XHKG"))
        out += _fiscal_drafts(catalog, _entity("FNWN", "us_equity", calendar="XNYS"))
        index = EntityInfo(code="801010.SI", name="银行行业指数", asset_class="index", visibility=5, calendar="XSHG")
        out += peer_drafts(catalog, index, list(BANKS))
        return out

    _, out = anyio.run(_run, drafts)
    return [(answer, c) for _, answer, c, _ in out if c is not None]


def _navigate(web: dict[str, str], question) -> tuple[str | None, int]:
    def handler(request: httpx.Request) -> httpx.Response:
        html = web.get(request.url.path)
        return httpx.Response(200, text=html) if html is not None else httpx.Response(404, text="")

    found = read_investigation(question)
    assert found is not None, question.question
    agent = NavigatorAgent(tools=_NoResults(), http=httpx.AsyncClient(transport=httpx.MockTransport(handler)),  # type: ignore[arg-type]
                           as_of=CLOCK, base_url="http://web")
    state = _Question(question, Reading(kind="investigation", name="", quantity_en=found[0], quantity_zh=None), None)
    return asyncio.run(investigate(agent, state, *found)), state.reads


def test_the_navigator_answers_every_reconciled_question_as_the_gold(web, gold) -> None:
    assert len(gold) >= 15
    families = set()
    for answer, c in gold:
        asked = served_question(question_en(c), entity=c.entity, asset_class=c.asset_class, question_zh=None)
        got, reads = _navigate(web, asked)
        assert got == answer.answer, (question_en(c), got, answer.answer)
        families.add(c.facts.anchor.split(":")[1])
        if c.facts.anchor.startswith("family:cagr"):
            assert reads >= 3  # the company page and two annual reports at least
    # growth_period: its comparative as the latest report restated it (the navigator used to read the
    # earlier report's own figure).
    assert families == {"cagr", "ah_premium", "cross_currency", "peer_best", "growth_first", "growth_period",
                        "fiscal_growth"}


def test_compound_growth_reads_the_base_year_as_restated(web, gold) -> None:
    # 000007.SZ: the FY2022 revenue its FY2023 annual report restated; the answer from the figure
    # as first reported (the FY2022 report's own) differs.
    answer, c = next((a, c) for a, c in gold if c.entity == "000007.SZ" and c.facts.anchor == "family:cagr:3"
                     and c.facts.field == "revenue")
    def figures(period: str) -> dict[str, float]:
        """Every revenue figure a report prints, by period, over its cover and its pages."""
        paths = [p for p in web if p == f"/exchange/reports/000007.SZ/{period}.html"
                 or p.startswith(f"/exchange/reports/000007.SZ/{period}/")]
        return {k: v for p in sorted(paths) for k, v in period_figures(parse_page(web[p]), "income", "revenue").items()}

    restated, first = figures("20231231")["20221231"], figures("20221231")["20221231"]
    latest = figures("20251231")["20251231"]
    assert restated != first
    assert answer.answer == f"{((latest / restated) ** (1 / 3) - 1) * 100:.2f}%"
    assert answer.answer != f"{((latest / first) ** (1 / 3) - 1) * 100:.2f}%"
    got, _ = _navigate(web, served_question(question_en(c), entity=c.entity, asset_class=c.asset_class,
                                            question_zh=None))
    assert got == answer.answer
