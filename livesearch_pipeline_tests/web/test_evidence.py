"""The evidence map: derived from programs and gold (never from a family's name), present for every
link of hand-made multi-step programs over obscure entities, and absent when a record is not on
the web. Also: no page names the generator or a tool, hubs and news link to quotes, no page is
published after the clock."""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from pathlib import Path

import pytest

from livesearch_pipeline.core.models import (
    Call, Combine, DateSpec, Extractor, Format, MatchRule, Program, Provenance, Question, Selection, ValueRef,
)
from livesearch_pipeline.web.audit import giveaways, pages_giving_the_game_away
from livesearch_pipeline.web.build import build_web
from livesearch_pipeline.web.corpus import CorpusConfig
from livesearch_pipeline.web.evidence import build_evidence_map, family_of
from livesearch_pipeline.web.generate import generate_pages
from livesearch_pipeline.web.index import INDEX_FILE, WebIndex
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, gold_of, pick, service

NUMBER = Format(kind="number", decimals=2)
TOOLS = ("daily", "adj_factor", "income", "fund_portfolio", "fund_nav", "index_weight", "index_daily", "hk_daily")


def _latest(key: str = "trade_date", **where) -> Selection:
    return Selection(mode="latest", key=key, where=where)


def _window(days: int) -> dict[str, DateSpec]:
    return {"start_date": DateSpec(days_back=days), "end_date": DateSpec(days_back=0)}


def _question(n: int, program: Program, entity: str, visibility: int) -> Question:
    return Question(qid=f"ls-{n:016x}", question="hand-made", program=program,
                    match=MatchRule(rule="approx", abs_tol=0.01), refresh_class="daily", tier="T3",
                    asset_class="cn_equity", entity=entity, entity_name="x", visibility=visibility,
                    signature=f"sig-{n}", provenance=Provenance(verbalizer="template"))


class Chains:
    """Obscure entities (visibility 0) and the multi-step programs over them."""

    def __init__(self) -> None:
        self.fund, self.index, self.hk = pick("fund", 0), pick("index", 0), pick("hk_equity", 0)
        self.stock, self.other, self.famous = pick("cn_equity", 0), pick("cn_equity", 3), pick("cn_equity", 10)
        svc = service()
        holdings = svc.call("fund_portfolio", {"ts_code": self.fund.code, "start_date": "20260101",
                                               "end_date": CLOCK.strftime("%Y%m%d")})["items"]
        newest = max(r["ann_date"] for r in holdings)
        self.holding = max((r for r in holdings if r["ann_date"] == newest), key=lambda r: r["mkv"])["symbol"]
        weights = svc.call("index_weight", {"index_code": self.index.code, "start_date": "20261001",
                                            "end_date": CLOCK.strftime("%Y%m%d")})["items"]
        newest = max(r["trade_date"] for r in weights)
        self.constituent = max((r for r in weights if r["trade_date"] == newest), key=lambda r: r["weight"])["con_code"]
        periods = sorted({r["end_date"] for r in svc.call("income", {"ts_code": self.stock.code, "start_date": "20240101",
                                                                      "end_date": CLOCK.strftime("%Y%m%d")})["items"]})
        self.periods = periods[-1], periods[-5]

    def entities(self) -> tuple[str, ...]:
        return tuple(sorted({self.fund.code, self.index.code, self.hk.code, self.stock.code, self.other.code,
                             self.holding, self.constituent, self.famous.code}))

    def questions(self) -> list[Question]:
        fund_top = ValueRef(call="c1", select=_latest("ann_date"), field="mkv", aggregate="argmax", arg_field="symbol")
        index_top = ValueRef(call="c1", select=_latest(), field="weight", aggregate="argmax", arg_field="con_code")
        programs = {
            # A fund's largest holding, then that stock's close.
            (1, self.fund.code): Program(
                calls=[Call(id="c1", tool="fund_portfolio", args={"ts_code": self.fund.code}, dates=_window(200)),
                       Call(id="c2", tool="daily", refs={"ts_code": fund_top}, dates=_window(10))],
                extract=Extractor(call="c2", select=_latest(), field="close", format=NUMBER)),
            # An index's heaviest constituent, then its turnover.
            (2, self.index.code): Program(
                calls=[Call(id="c1", tool="index_weight", args={"index_code": self.index.code}, dates=_window(60)),
                       Call(id="c2", tool="daily", refs={"ts_code": index_top}, dates=_window(10))],
                extract=Extractor(call="c2", select=_latest(), field="amount", format=NUMBER)),
            # Growth of revenue between two reported periods.
            (3, self.stock.code): Program(
                calls=[Call(id="c1", tool="income", args={"ts_code": self.stock.code}, dates=_window(900))],
                extract=Extractor(call="c1", select=Selection(mode="match", key="end_date", value=self.periods[0]),
                                  field="revenue", format=NUMBER,
                                  combine=Combine(op="pct_difference", other=ValueRef(
                                      call="c1", select=Selection(mode="match", key="end_date", value=self.periods[1]),
                                      field="revenue")))),
            # The adjustment factor over a 20-session window.
            (4, self.stock.code): Program(
                calls=[Call(id="c1", tool="adj_factor", args={"ts_code": self.stock.code}, dates=_window(40))],
                extract=Extractor(call="c1", select=Selection(mode="all", key="trade_date"), field="adj_factor",
                                  aggregate="mean", format=NUMBER)),
            # A Hong Kong close in US dollars (HKD close over the USD/HKD rate).
            (5, self.hk.code): Program(
                calls=[Call(id="c1", tool="hk_daily", args={"ts_code": self.hk.code}, dates=_window(10)),
                       Call(id="c2", tool="fx_daily", args={"ts_code": "USDHKD.FXCM"}, dates=_window(10))],
                extract=Extractor(call="c1", select=_latest(), field="close", format=NUMBER,
                                  combine=Combine(op="ratio", other=ValueRef(call="c2", select=_latest(),
                                                                             field="bid_close")))),
            # Two entities compared.
            (6, self.stock.code): Program(
                calls=[Call(id="c1", tool="daily", args={"ts_code": self.stock.code}, dates=_window(10)),
                       Call(id="c2", tool="daily", args={"ts_code": self.other.code}, dates=_window(10))],
                extract=Extractor(call="c1", select=_latest(), field="close", format=NUMBER,
                                  combine=Combine(op="difference", other=ValueRef(call="c2", select=_latest(),
                                                                                  field="close")))),
            # A fund's NAV 60 sessions ago, and a 60-session mean close of an index.
            (7, self.fund.code): Program(
                calls=[Call(id="c1", tool="fund_nav", args={"ts_code": self.fund.code}, dates=_window(110))],
                extract=Extractor(call="c1", select=Selection(mode="snapshot", key="nav_date", anchor=DateSpec(
                    days_back=84)), field="unit_nav", format=NUMBER)),
            (8, self.index.code): Program(
                calls=[Call(id="c1", tool="index_daily", args={"ts_code": self.index.code}, dates=_window(95))],
                extract=Extractor(call="c1", select=Selection(mode="all", key="trade_date"), field="close",
                                  aggregate="mean", format=NUMBER)),
        }
        questions = [_question(n, program, entity, 0) for (n, entity), program in programs.items()]
        # The same lookup about a famous entity (visibility 10, the high band).
        famous = Program(calls=[Call(id="c1", tool="daily", args={"ts_code": self.famous.code}, dates=_window(10))],
                         extract=Extractor(call="c1", select=_latest(), field="close", format=NUMBER))
        return questions + [_question(9, famous, self.famous.code, 10)]


@pytest.fixture(scope="module")
def chains() -> Chains:
    return Chains()


def _chains_web(chains: Chains) -> CorpusConfig:
    return CorpusConfig(clock=CLOCK, history_sessions=5, entities=chains.entities(), tools=TOOLS,
                        market_tools=("fx_daily",))


@pytest.fixture(scope="module")
def web_dir(chains: Chains, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_web(_chains_web(chains), tmp_path_factory.mktemp("web"), workers=1).directory


def _stored(directory: Path) -> dict[str, list[tuple]]:
    """Every row of every table of a web's index (the full-text index's own tables included)."""
    with sqlite3.connect(directory / INDEX_FILE) as connection:
        names = [name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")]
        return {name: connection.execute(f'SELECT * FROM "{name}"').fetchall() for name in names}


def test_two_worker_processes_build_the_same_web_and_evidence_as_one(chains: Chains, web_dir: Path,
                                                                    tmp_path: Path) -> None:
    """Entity batches, index rows and bulletin archives made by forked workers (web/generate.py)
    give the same pages, in the same order and with the same ids, as one process."""
    parallel = build_web(_chains_web(chains), tmp_path, workers=2).directory
    one, two = _stored(web_dir), _stored(parallel)
    kinds = {row[3] for row in one["pages"]}
    assert {"bulletin", "archive", "report", "history", "quote"} <= kinds, kinds
    assert len({row[1].rsplit("/", 1)[0] for row in one["pages"] if row[3] == "bulletin"}) > 1, "several archives"
    assert one.keys() == two.keys() and {"pages", "records", "links", "hidden", "terms", "fts_data"} <= one.keys()
    for name in one:
        assert one[name] == two[name], name
    questions = chains.questions()
    answers = gold_of(questions)
    maps = [build_evidence_map(directory, questions, answers, seed=service().config.seed, gold_sha256="test")
            for directory in (web_dir, parallel)]
    for mapped in maps:
        mapped.pop("index_fingerprint")  # the file's size and time: which build, not what it holds
    assert maps[0] == maps[1] and maps[0]["summary"]["evidence"]["present"] == len(questions)



def test_every_link_of_multi_step_programs_has_evidence_at_visibility_zero(chains: Chains, web_dir: Path) -> None:
    questions = chains.questions()
    answers = gold_of(questions)
    assert [a.status for a in answers] == ["ok"] * len(questions), [a.error for a in answers]
    mapped = build_evidence_map(web_dir, questions, answers, seed=service().config.seed, gold_sha256="test")
    entries = mapped["questions"]
    assert set(entries) == {q.qid for q in questions}
    for question in questions:
        entry = entries[question.qid]
        assert entry["present"], (family_of(question), entry["links"])
        assert all(link["pages"] for link in entry["links"])
    by_family = {family_of(q): entries[q.qid] for q in questions}
    # The chain's second link is the holding's own quote page, found from the gold's arguments.
    chain = entries[questions[0].qid]
    assert [link["tool"] for link in chain["links"]] == ["daily", "fund_portfolio"]
    assert f"/exchange/daily/{chains.holding}.html" in chain["links"][0]["pages"]
    # An obscure fund's holdings: on their page of its periodic report (web/reports.py).
    assert any(p.startswith(f"/exchange/reports/{chains.fund.code}/") for p in chain["links"][1]["pages"])
    assert f"/exchange/daily/{chains.constituent}.html" in entries[questions[1].qid]["links"][0]["pages"]
    # Both periods of a growth question, the window of an aggregate (one page holds it all).
    growth = entries[questions[2].qid]
    # (An obscure stock's reports are long documents: the income statement's page of each.)
    growth_pages = {p for link in growth["links"] for p in link["pages"]}
    assert all(any(p.startswith(f"/exchange/reports/{chains.stock.code}/{period}/") for p in growth_pages)
               for period in chains.periods[:2])
    window = entries[questions[3].qid]["links"][0]
    assert window["records"] >= 10 and f"/exchange/adj_factor/{chains.stock.code}.html" in window["pages"]
    assert any(p.startswith("/stats/fx_daily/") for p in entries[questions[4].qid]["links"][1]["pages"])
    assert entries[questions[7].qid]["links"][0]["records"] >= 60, "a 60-session window of an index"
    assert set(by_family) >= {"chain", "comparison", "window", "lookup"}
    assert mapped["summary"]["evidence"]["share"] == 1.0
    assert mapped["summary"]["by_band"]["low"]["n"] == len(questions) - 1
    assert mapped["summary"]["by_band"]["high"] == {"n": 1, "present": 1, "share": 1.0}
    assert mapped["summary"]["lookup_value_printed"]["share"] == 1.0
    # A famous entity's evidence is on its exchange and on portals and news too.
    famous = entries[questions[-1].qid]["pages"]
    assert f"/exchange/daily/{chains.famous.code}.html" in famous
    assert any(not p.startswith("/exchange/") for p in famous)


def test_a_record_missing_from_the_web_is_missing_from_the_map(chains: Chains, tmp_path: Path) -> None:
    # The same chain on a web without the holding stock: its link has no page.
    others = tuple(c for c in chains.entities() if c != chains.holding)
    config = CorpusConfig(clock=CLOCK, history_sessions=5, entities=others, tools=TOOLS, market_tools=())
    directory = build_web(config, tmp_path, workers=1).directory
    question = chains.questions()[0]
    mapped = build_evidence_map(directory, [question], gold_of([question]), seed=service().config.seed,
                                gold_sha256="test")
    entry = mapped["questions"][question.qid]
    assert not entry["present"] and entry["links"][0]["missing"] and entry["links"][1]["present"]
    assert mapped["summary"]["evidence"]["share"] == 0.0


def test_no_page_names_the_generator_or_a_tool_and_links_lead_to_quotes(chains: Chains, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    assert list(pages_giving_the_game_away(index)) == []
    assert giveaways("FinQuote · hk_hold, a synthetic page") == ["synthetic", "hk_hold"]
    hub = index.page(f"/exchange/company/{chains.stock.code}.html")
    assert hub is not None
    for target in (f"/exchange/daily/{chains.stock.code}.html", f"/exchange/filings/{chains.stock.code}.html",
                   f"/exchange/reports/{chains.stock.code}/{chains.periods[0]}.html"):
        assert f'href="{target}"' in hub.html and index.page(target) is not None
    assert '<meta name="corpus" content="' in hub.html


def test_news_link_to_quotes_and_no_page_is_published_after_the_clock() -> None:
    famous = pick("cn_equity", 10)
    earlier = CLOCK - dt.timedelta(days=7)
    pages = list(generate_pages(CorpusConfig(clock=earlier, history_sessions=5, entities=(famous.code,),
                                             tools=("daily", "income"), market_tools=("cn_gdp", "cn_cpi"))))
    assert pages and all(p.published <= earlier for p in pages)
    news = [p for p in pages if p.kind == "news"]
    assert news and all(f'href="/exchange/daily/{famous.code}.html"' in p.html for p in news)
    releases = [p for p in pages if p.kind == "release" and "/cn_gdp/" in p.path]
    for page in releases:
        quarter = re.search(r"/cn_gdp/(\d{4})Q(\d)\.html", page.path)
        end = dt.date(int(quarter.group(1)), 3 * int(quarter.group(2)), 1)
        assert page.published > end or page.published == earlier, "GDP is released weeks after its quarter"
