"""An obscure entity's periodic report is a long document walked from its cover (issue 29): its
continuation pages are not indexed and link only the page before, the page after and the cover;
each statement page records exactly the record it prints; a visible entity keeps one page per
period; an obscure fund's holdings are only in its reports; effort counts the walk; the navigator
walks the document under its read budget."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from livesearch_pipeline.core.models import Call, Extractor, Program
from livesearch_pipeline.evaluation.agents.navigator import next_report_page, open_navigator
from livesearch_pipeline.evaluation.agents.reading import parse_page
from livesearch_pipeline.web.build import build_web
from livesearch_pipeline.web.corpus import CorpusConfig, record_key
from livesearch_pipeline.web.evidence import Link, Walks, build_evidence_map, effort_cover
from livesearch_pipeline.web.index import WebIndex
from livesearch_pipeline.web.reports import continuation_number, cover_path, page_path
from livesearch_pipeline_tests.evaluation.agents_fakes import served_question
from livesearch_pipeline_tests.web.test_evidence import NUMBER, _latest, _question
from livesearch_pipeline_tests.web.web_fixtures import gold_of
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, pick, service

REPORT_TOOLS = ("income", "balancesheet", "cashflow", "fina_indicator")
MARGIN = ("For {name} ({code}), what was the operating profit margin in its most recently reported period (year to "
          "date), that is its operating profit divided by its operating revenue, in percent to 2 decimals?")


class Reports:
    def __init__(self) -> None:
        # Visibility 1 and 2: bulletin depth; 8: digest depth.
        self.obscure, self.famous = pick("cn_equity", 1), pick("cn_equity", 8)
        self.fund, self.known_fund = pick("fund", 2), pick("fund", 8)
        self.config = CorpusConfig(clock=CLOCK, history_sessions=5, market_tools=(),
                                   tools=(*REPORT_TOOLS, "fund_portfolio", "daily"),
                                   entities=(self.obscure.code, self.famous.code, self.fund.code,
                                             self.known_fund.code))
        svc = service()
        end = CLOCK.strftime("%Y%m%d")
        self.income = svc.call("income", {"ts_code": self.obscure.code, "start_date": "20240101",
                                          "end_date": end})["items"]
        self.latest = max(r["end_date"] for r in self.income)


@pytest.fixture(scope="module")
def reports() -> Reports:
    return Reports()


@pytest.fixture(scope="module")
def web_dir(reports: Reports, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_web(reports.config, tmp_path_factory.mktemp("web"), workers=1).directory


def _document(index: WebIndex, code: str, period: str) -> list[str]:
    """The paths of a report's pages after its cover, in order."""
    paths = []
    while index.page(page_path(code, period, len(paths) + 1)) is not None:
        paths.append(page_path(code, period, len(paths) + 1))
    return paths


def _records(index: WebIndex, path: str) -> list[str]:
    return [row[0] for row in index._connection().execute(
        "SELECT r.key FROM records AS r JOIN pages AS p ON p.id = r.page WHERE p.path = ? ORDER BY r.key", (path,))]


def _links(index: WebIndex, path: str) -> list[str]:
    stored = index.page(path)
    assert stored is not None, path
    return [href for href, _ in parse_page(stored.html).links if href != "/"]  # the site's home aside


def test_an_obscure_entitys_report_is_a_long_document_walked_from_its_cover(reports: Reports, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    code, period = reports.obscure.code, reports.latest
    cover = cover_path(code, period)
    hidden = index.hidden_pages()
    pages = _document(index, code, period)
    assert len(pages) >= 8, "narrative sections, four statements and the notes"
    assert cover not in hidden and all(p in hidden for p in pages), "only the cover is indexed"
    # A term's page share (stop words) is a share of the pages the engine indexed.
    assert index.searchable_pages == index.pages - len(hidden)
    assert _records(index, cover) == [], "the cover prints no figures"
    # The cover links the first page only; each page its neighbours and the cover.
    assert [h for h in _links(index, cover) if continuation_number(h) is not None] == [pages[0]]
    for number, path in enumerate(pages, start=1):
        expected = {cover if number == 1 else pages[number - 2], cover, *pages[number: number + 1]}
        assert set(_links(index, path)) == expected, path
    # The company page and the filing index link the cover, never a continuation page.
    for linking in (f"/exchange/company/{code}.html", f"/exchange/filings/{code}.html"):
        links = _links(index, linking)
        assert cover in links and not any(continuation_number(h) is not None for h in links)
    # Each statement on a page of its own, in the one-page report's order, after the narrative and
    # before the notes.
    printed = [(p, _records(index, p)) for p in pages]
    statements = [(p, keys) for p, keys in printed if keys]
    assert [keys for _, keys in statements] == [[record_key(t, code, period)] for t in
                                                REPORT_TOOLS]
    first = pages.index(statements[0][0])
    assert first >= 3 and pages.index(statements[-1][0]) == first + 3 < len(pages) - 1
    # A statement page prints its record's figures; the narrative pages print none of the entity's.
    income = next(r for r in reports.income if r["end_date"] == period)
    assert str(income["revenue"]) in index.page_text(statements[0][0])
    ticker = code.split(".")[0]
    for path, keys in printed:
        if not keys:
            body = index.page_text(path).replace(ticker, "").replace(period, "")
            assert not re.search(r"\d", re.sub(r"\d{4}-\d{2}-\d{2}|© \d{4}|第\d+页", "", body)), path


def test_the_walk_to_a_statement_varies_by_entity_and_period(reports: Reports, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    code = reports.obscure.code
    positions = set()
    for period in sorted({r["end_date"] for r in reports.income}, reverse=True)[:8]:
        pages = _document(index, code, period)
        positions.add(next(n for n, p in enumerate(pages, 1) if _records(index, p) == [record_key("income", code, period)]))
    assert len(positions) >= 2, "the income statement is not on a fixed page"


def test_a_visible_entitys_report_is_one_page(reports: Reports, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    code = reports.famous.code
    covers = [row[0] for row in index._connection().execute(
        "SELECT path FROM pages WHERE path LIKE ?", (f"/exchange/reports/{code}/%",))]
    assert covers and all(continuation_number(p) is None for p in covers)
    period = re.search(r"(\d{8})\.html$", covers[0]).group(1)
    assert _records(index, covers[0]) == sorted(record_key(t, code, period) for t in REPORT_TOOLS)
    assert not any(p.startswith(f"/exchange/reports/{code}/") for p in index.hidden_pages())


def test_an_obscure_funds_holdings_are_only_in_its_reports(reports: Reports, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    fund, known = reports.fund.code, reports.known_fund.code
    assert index.page(f"/exchange/fund_portfolio/{fund}.html") is None
    assert index.page(f"/exchange/fund_portfolio/{known}.html") is not None
    holdings = service().call("fund_portfolio", {"ts_code": fund, "start_date": "20250101",
                                                 "end_date": CLOCK.strftime("%Y%m%d")})["items"]
    newest = max(holdings, key=lambda r: r["ann_date"])
    key = record_key("fund_portfolio", fund, newest["ann_date"])
    found = index.pages_with_records([key])[key]
    exchange = [p for p in found if p.startswith("/exchange/")]
    assert len(exchange) == 1 and continuation_number(exchange[0]) is not None
    assert exchange[0].startswith(f"/exchange/reports/{fund}/{newest['end_date']}/")
    assert cover_path(fund, newest["end_date"]) in _links(index, f"/exchange/company/{fund}.html")


def test_effort_counts_the_walk_from_the_cover(reports: Reports, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    code, period = reports.obscure.code, reports.latest
    pages = _document(index, code, period)
    cash = next(n for n, p in enumerate(pages, 1) if _records(index, p) == [record_key("cashflow", code, period)])

    def lookup(entity: str, tool: str, field: str) -> Program:
        return Program(calls=[Call(id="c1", tool=tool, args={"ts_code": entity, "start_date": "20240101"})],
                       extract=Extractor(call="c1", select=_latest("end_date"), field=field, format=NUMBER))

    questions = [_question(1, lookup(code, "cashflow", "n_cashflow_act"), code, 1),
                 _question(2, lookup(reports.famous.code, "cashflow", "n_cashflow_act"), reports.famous.code, 8)]
    answers = gold_of(questions)
    assert [a.status for a in answers] == ["ok", "ok"], [a.error for a in answers]
    entries = build_evidence_map(web_dir, questions, answers, seed=service().config.seed, gold_sha256="t")["questions"]
    obscure = entries[questions[0].qid]
    assert obscure["present"] and obscure["cover"] == [cover_path(code, period), *pages[:cash]]
    assert obscure["effort"] == cash + 1
    assert entries[questions[1].qid]["effort"] == 1
    walks = Walks(index.hidden_pages(), index.linking_to)
    assert walks(pages[cash - 1]) == (cover_path(code, period), *pages[:cash])
    assert walks(cover_path(code, period)) == (cover_path(code, period),)


def test_the_weighted_cover_counts_a_documents_shared_pages_once() -> None:
    keys = (record_key("income", "X", "20260930"), record_key("cashflow", "X", "20260930"))
    link = Link("extract", "c1", "income", "X", "revenue", keys, (), (), ())
    doc = ["/r/X.html", "/r/X/p1.html", "/r/X/p2.html", "/r/X/p3.html", "/r/X/p4.html"]
    pages_of = {keys[0]: [doc[2]], keys[1]: [doc[4]]}
    walks = Walks(set(doc[1:]), lambda path: [doc[doc.index(path) - 1]])
    # Both statements: one walk, the cover and the pages before them read once.
    assert effort_cover([link], pages_of, walks) == doc
    # An indexed portal page showing one record is cheaper than the walk to it.
    cheaper = effort_cover([link], {**pages_of, keys[1]: [doc[4], "/portal/X.html"]}, walks)
    assert cheaper == ["/portal/X.html", *doc[:3]]
    # A page no walk reaches: no cover.
    assert effort_cover([link], pages_of, Walks(set(doc), lambda path: [])) is None
    # Without walks every page is one read (an index built before the link tables).
    assert effort_cover([link], pages_of) == [doc[2], doc[4]]


def test_the_navigator_walks_a_report_within_its_budget(reports: Reports, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    entity, period = reports.obscure, reports.latest
    pages = _document(index, entity.code, period)
    income = next(n for n, p in enumerate(pages, 1) if _records(index, p) == [record_key("income", entity.code, period)])
    record = next(r for r in reports.income if r["end_date"] == period)
    gold = f"{record['operate_profit'] / record['revenue'] * 100:.2f}%"
    asked = served_question(MARGIN.format(name=entity.name, code=entity.code), entity=entity.code, visibility=1)

    async def run(budget: int | None):
        async with open_navigator(web_dir=web_dir, day=CLOCK, name="navigator", read_budget=budget,
                                  allow_partial_web=True) as agent:
            return await agent.answer(asked)

    full = asyncio.run(run(None))
    assert full.answer == gold, full.trace[-3:]
    read = [t["url"] for t in full.trace if t.get("tool") == "fetch_page"]
    # The company page, the cover, then every page up to the income statement.
    assert len(read) == income + 2 and read[-1].endswith(pages[income - 1])
    assert asyncio.run(run(income + 2)).answer == gold
    spent = asyncio.run(run(income + 1))
    assert spent.answer is None and "budget" in spent.trace[-1]["reason"]


def test_next_report_page_follows_only_a_reports_own_pages() -> None:
    cover = parse_page('<a href="/exchange/reports/X/20260930/p1.html">1</a><a href="/exchange/company/X.html">X</a>')
    assert next_report_page(cover, "/exchange/reports/X/20260930.html") == "/exchange/reports/X/20260930/p1.html"
    middle = parse_page('<a href="/exchange/reports/X/20260930/p2.html">prev</a>'
                        '<a href="/exchange/reports/X/20260930/p4.html">next</a>'
                        '<a href="/exchange/reports/X/20260930.html">cover</a>')
    assert next_report_page(middle, "/exchange/reports/X/20260930/p3.html") == "/exchange/reports/X/20260930/p4.html"
    assert next_report_page(middle, "/exchange/reports/X/20260930/p4.html") is None
    assert next_report_page(cover, "/exchange/daily/X.html") is None


def test_the_navigator_reads_a_statement_lookup_from_a_long_report(reports: Reports, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    entity, period = reports.obscure, reports.latest
    pages = _document(index, entity.code, period)
    cash = next(n for n, p in enumerate(pages, 1) if _records(index, p) == [record_key("cashflow", entity.code, period)])
    flows = service().call("cashflow", {"ts_code": entity.code, "start_date": "20240101",
                                        "end_date": CLOCK.strftime("%Y%m%d")})["items"]
    value = next(r["n_cashflow_act"] for r in flows if r["end_date"] == period)
    asked = served_question(
        f"What was the net cash flow from operating activities of {entity.name} ({entity.code}) for the most recently "
        "reported period (year to date), in millions of CNY to 2 decimals?", entity=entity.code, visibility=1,
        question_zh=f"{entity.name_zh or entity.name}（{entity.code}）最近一期已披露财报（年初至报告期末）的经营活动产生的现金流量净额"
                    "是多少百万元？保留2位小数。")

    async def run(budget: int | None):
        async with open_navigator(web_dir=web_dir, day=CLOCK, name="navigator", read_budget=budget,
                                  allow_partial_web=True) as agent:
            return await agent.answer(asked)

    full = asyncio.run(run(None))
    assert full.answer is not None and abs(float(full.answer.split()[0]) - value / 1e6) < 0.006, full.trace[-3:]
    read = [t["url"] for t in full.trace if t.get("tool") == "fetch_page"]
    assert any(u.endswith(pages[cash - 1]) for u in read), "the cash-flow statement's page, walked to"
    assert asyncio.run(run(cash)).answer is None, "the cover and the pages before the statement do not fit"
