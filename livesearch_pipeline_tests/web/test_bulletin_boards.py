"""Weekly and monthly bars in the exchanges' weekly/monthly bulletins, and a portal's constituents
board of a well-known index (issue 29): an obscure index's best month takes a bulletin read per
month and its screen a read of most of a session's daily bulletin pages; a well-known index's best
month is one page, its screen one or two. Records exact, nothing after the clock, the navigator
reads both."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from livesearch_pipeline.core.calendars import session_on_or_before
from livesearch_pipeline.core.models import Program
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.evaluation.agents.navigator import open_navigator
from livesearch_pipeline.web.build import build_web
from livesearch_pipeline.web.bulletins import BULLETIN_ROWS, archive_path
from livesearch_pipeline.web.constituents import constituents_path
from livesearch_pipeline.web.corpus import CorpusConfig, record_key
from livesearch_pipeline.web.evidence import build_evidence_map
from livesearch_pipeline.web.index import WebIndex
from livesearch_pipeline.web.pages import MONTHLY_BARS, CorpusGenerator
from livesearch_pipeline.web.sites import SITES, depth_of
from livesearch_pipeline_tests.evaluation.agents_fakes import served_question
from livesearch_pipeline_tests.web.test_evidence import _question
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, gold_of, service

TOOLS = ("daily", "daily_basic", "index_daily", "index_monthly", "index_weekly", "index_weight", "index_member")
DAY = session_on_or_before("XSHG", CLOCK).strftime("%Y%m%d")


def _members(code: str) -> list[str]:
    items = service().call("index_weight", {"index_code": code, "start_date": "20260101",
                                            "end_date": CLOCK.strftime("%Y%m%d")})["items"]
    latest = max(r["trade_date"] for r in items)
    return sorted(r["con_code"] for r in items if r["trade_date"] == latest)


def _screen(index: str, field: str, aggregate: str, tool: str = "daily") -> Program:
    within = {"call": "c1", "path": "items", "field": "con_code", "key": "ts_code",
              "select": {"mode": "latest", "key": "trade_date", "key_fmt": "%Y%m%d"}}
    return Program.model_validate({
        "calls": [{"id": "c1", "tool": "index_weight", "args": {"index_code": index},
                   "dates": {"start_date": {"days_back": 400, "fmt": "%Y%m%d"},
                             "end_date": {"days_back": 0, "fmt": "%Y%m%d"}}},
                  {"id": "c2", "tool": tool, "args": {},
                   "dates": {"trade_date": {"sessions_back": 0, "calendar": "XSHG", "fmt": "%Y%m%d"}}}],
        "extract": {"call": "c2", "path": "items", "field": field, "aggregate": aggregate, "arg_field": "ts_code",
                    "select": {"mode": "latest", "key": "trade_date", "key_fmt": "%Y%m%d", "within": within},
                    "format": {"kind": "text"}}})


def _best_month(index: str, months: int) -> Program:
    return Program.model_validate({
        "calls": [{"id": "c1", "tool": "index_monthly", "args": {"ts_code": index},
                   "dates": {"start_date": {"period": "month", "periods_back": months - 1, "edge": "start",
                                            "fmt": "%Y%m%d"},
                             "end_date": {"period": "month", "periods_back": 0, "edge": "end", "fmt": "%Y%m%d"}}}],
        "extract": {"call": "c1", "path": "items", "field": "pct_chg", "aggregate": "argmax", "arg_field": "amount",
                    "select": {"mode": "all", "key": "trade_date", "key_fmt": "%Y%m%d"},
                    "format": {"kind": "number", "decimals": 2, "unit": "billion CNY", "scale": 1e-06}}})


class Boards:
    """A well-known index with a constituents board, an obscure one, every A-share (so that the
    daily bulletins are paginated as on the full web)."""

    def __init__(self) -> None:
        universe = shared_market(DEFAULT_SEED).universe
        indices = sorted((e for e in universe.entities if e.asset_class == "index"), key=lambda e: e.code)
        probe = CorpusGenerator(CorpusConfig(clock=CLOCK, history_sessions=2, tools=TOOLS, market_tools=()))

        def boarded(entity: Entity) -> bool:
            return any(s.rounding is None and not s.disagree and not s.restates for s in probe._portals(entity))

        self.famous = next(e for e in indices if depth_of(e.visibility) == "digest" and _members(e.code)
                           and boarded(e))
        self.obscure = next(e for e in indices if depth_of(e.visibility) == "bulletin" and e.code.endswith(".SH")
                            and len(_members(e.code)) >= 20)
        self.stocks = sorted(e.code for e in universe.entities if e.asset_class == "cn_equity")
        self.config = CorpusConfig(clock=CLOCK, history_sessions=2, tools=TOOLS, market_tools=(),
                                   entities=(self.famous.code, self.obscure.code, *self.stocks))


@pytest.fixture(scope="module")
def boards() -> Boards:
    return Boards()


@pytest.fixture(scope="module")
def web_dir(boards: Boards, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_web(boards.config, tmp_path_factory.mktemp("web"), workers=2).directory


def _monthly(code: str) -> list[dict[str, Any]]:
    items = service().call("index_monthly", {"ts_code": code, "start_date": "20230101",
                                             "end_date": CLOCK.strftime("%Y%m%d")})["items"]
    return sorted(items, key=lambda r: r["trade_date"], reverse=True)


def test_an_obscure_indexs_monthly_bars_are_in_the_monthly_bulletins(boards: Boards, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    code, exchange = boards.obscure.code, boards.obscure.exchange
    bars = _monthly(code)
    page = index.page(f"/exchange/index_monthly/{code}.html")
    assert page is not None and archive_path(exchange, "index_monthly") in page.html
    # The latest bar only: the months before are on the bulletins, one page each.
    older = record_key("index_monthly", code, bars[5]["trade_date"])
    found = index.pages_with_records([record_key("index_monthly", code, bars[0]["trade_date"]), older])
    assert f"/exchange/index_monthly/{code}.html" in found[record_key("index_monthly", code, bars[0]["trade_date"])]
    holding = found[older]
    assert holding and all(p.startswith(f"/exchange/bulletin/{exchange}/index_monthly/") for p in holding)
    bulletin = index.page(holding[0])
    assert bulletin is not None and str(bars[5]["pct_chg"]) in bulletin.html
    assert "月行情统计公告" in bulletin.html or "monthly bulletin" in bulletin.html
    # The famous index's page still prints its monthly bars (the last MONTHLY_BARS).
    famous = index.page(f"/exchange/index_monthly/{boards.famous.code}.html")
    assert famous is not None
    assert str(_monthly(boards.famous.code)[20]["trade_date"]) in famous.html


def test_the_monthly_archive_lists_each_month_newest_first_and_nothing_after_the_clock(boards: Boards,
                                                                                        web_dir: Path) -> None:
    index = WebIndex(web_dir)
    archive = index.page(archive_path(boards.obscure.exchange, "index_monthly"))
    assert archive is not None
    days = re.findall(r"(\d{4}-\d{2}-\d{2}) 第1页", archive.html)
    assert days == sorted(days, reverse=True) and len(days) in (MONTHLY_BARS - 1, MONTHLY_BARS)
    assert len({d[:7] for d in days}) == len(days), "one bulletin a month, dated on its last session"
    assert all(dt.date.fromisoformat(d) <= CLOCK for d in days)
    bars = {r["trade_date"] for r in _monthly(boards.obscure.code)}
    assert {d.replace("-", "") for d in days} <= bars
    from livesearch_pipeline.web.generate import generate_pages

    assert all(p.published <= CLOCK for p in generate_pages(CorpusConfig(
        clock=CLOCK, history_sessions=2, tools=("index_monthly", "index_weekly"), market_tools=(),
        entities=(boards.obscure.code, boards.famous.code))))


def test_bulletin_pages_record_exactly_the_rows_they_print(boards: Boards, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    exchange = "SSE"
    listed = [c for c in boards.stocks if c.endswith(".SH")]
    records = service().call("daily", {"trade_date": DAY})["items"]
    traded = sorted(r["ts_code"] for r in records if r["ts_code"] in listed)
    pages = []
    number = 1
    while (page := index.page(f"/exchange/bulletin/{exchange}/daily/{DAY}-{number}.html")) is not None:
        pages.append(page)
        number += 1
    assert len(pages) == -(-len(traded) // BULLETIN_ROWS) >= 4
    held = index.pages_with_records([record_key("daily", c, DAY) for c in traded])
    for position, page in enumerate(pages):
        codes = traded[position * BULLETIN_ROWS:(position + 1) * BULLETIN_ROWS]
        assert re.findall(r"<td>(\d{6}\.SH)</td>", page.html) == codes
        assert _records(index, page.path) == {record_key("daily", c, DAY) for c in codes}
        # ... and no other bulletin page holds them (a quote page or a board may).
        assert all([p for p in held[record_key("daily", c, DAY)] if "/bulletin/" in p] == [page.path] for c in codes)


def _records(index: WebIndex, path: str) -> set[str]:
    return {row[0] for row in index._connection().execute(
        "SELECT r.key FROM records r JOIN pages p ON r.page = p.id WHERE p.path = ?", (path,))}


def test_the_constituents_board_prints_every_member_with_its_session(boards: Boards, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    code = boards.famous.code
    site = next(s for s in SITES.values() if index.page(constituents_path(s, code)) is not None)
    board = index.page(constituents_path(site, code))
    assert board is not None and board.published.strftime("%Y%m%d") == DAY
    members = _members(code)
    quotes = {r["ts_code"]: r for r in service().call("daily", {"trade_date": DAY})["items"]}
    basics = {r["ts_code"]: r for r in service().call("daily_basic", {"trade_date": DAY})["items"]}
    weights = service().call("index_weight", {"index_code": code, "start_date": "20260101",
                                              "end_date": CLOCK.strftime("%Y%m%d")})["items"]
    rebalance = max(r["trade_date"] for r in weights)
    listed = service().call("index_member", {"index_code": code})["items"]
    expected = {record_key("index_weight", code, rebalance)}
    expected |= {record_key("index_member", code, r["in_date"]) for r in listed}
    codes = set(members) | {r["con_code"] for r in listed}
    expected |= {record_key("daily", c, DAY) for c in codes if c in quotes}
    expected |= {record_key("daily_basic", c, DAY) for c in codes if c in basics}
    assert _records(index, board.path) == expected
    for member in members:
        if member in quotes:
            assert member in board.html and str(quotes[member]["pct_chg"]) in board.html
        if member in basics:
            assert str(basics[member]["turnover_rate"]) in board.html
    # An obscure index has no board.
    assert not any(index.page(constituents_path(s, boards.obscure.code)) for s in SITES.values())


def test_screen_and_best_month_effort_by_visibility(boards: Boards, web_dir: Path) -> None:
    famous, obscure = boards.famous, boards.obscure
    questions = [_question(1, _screen(famous.code, "pct_chg", "argmin"), famous.code, famous.visibility),
                 _question(2, _screen(obscure.code, "pct_chg", "argmin"), obscure.code, obscure.visibility),
                 _question(3, _screen(famous.code, "turnover_rate", "argmax", "daily_basic"), famous.code,
                           famous.visibility),
                 _question(4, _best_month(famous.code, 24), famous.code, famous.visibility),
                 _question(5, _best_month(obscure.code, 24), obscure.code, obscure.visibility)]
    answers = gold_of(questions)
    assert [a.status for a in answers] == ["ok"] * len(questions), [a.error for a in answers]
    entries = build_evidence_map(web_dir, questions, answers, seed=service().config.seed,
                                 gold_sha256="t")["questions"]
    effort = {q.qid[-1]: entries[q.qid]["effort"] for q in questions}
    assert all(entries[q.qid]["present"] for q in questions)
    assert effort["1"] <= 2 and effort["3"] <= 2, "the board and the rebalance's page"
    assert effort["2"] >= 5, "the rebalance's page and most of the session's bulletin pages"
    assert effort["4"] == 1 and effort["5"] >= 24, "one page of monthly bars, or one bulletin a month"
    assert any("/constituents/" in p for p in entries[questions[0].qid]["cover"])


def _ask(web_dir: Path, text: str, entity: str, budget: int | None = None):
    async def run():
        async with open_navigator(web_dir=web_dir, day=CLOCK, name="navigator", read_budget=budget,
                                  allow_partial_web=True) as agent:
            return await agent.answer(served_question(text, entity=entity, asset_class="index"))
    return asyncio.run(run())


def test_the_navigator_reads_the_board_and_the_monthly_bulletins(boards: Boards, web_dir: Path) -> None:
    famous, obscure = boards.famous, boards.obscure
    quotes = {r["ts_code"]: r["pct_chg"] for r in service().call("daily", {"trade_date": DAY})["items"]}

    def falls(code: str) -> str:
        members = [m for m in _members(code) if m in quotes]
        return min(members, key=lambda m: quotes[m])

    text = ("On the most recent trading day, which of the constituents of X ({code}) at its most recent rebalance "
            "had the lowest percentage change? Answer with its stock code.")
    high = _ask(web_dir, text.format(code=famous.code), famous.code, budget=3)
    assert high.answer == falls(famous.code), high.trace[-3:]
    assert any("/constituents/" in t.get("url", "") for t in high.trace) and high.trace[-1]["reads"] <= 3
    low = _ask(web_dir, text.format(code=obscure.code), obscure.code)
    assert low.answer == falls(obscure.code) and low.trace[-1]["reads"] >= 5, low.trace[-3:]
    assert _ask(web_dir, text.format(code=obscure.code), obscure.code, budget=3).answer is None
    # The best month of an obscure index: a bulletin read per month.
    bars = [b for b in _monthly(obscure.code) if b["trade_date"][:6] < CLOCK.strftime("%Y%m")][:24]
    best = max(bars, key=lambda b: b["pct_chg"])
    month = _ask(web_dir, f"Among the last 24 completed calendar months, take the month in which X ({obscure.code}) "
                          "had its highest monthly percentage change. What was its monthly turnover value in that "
                          "month, in billions of CNY to 2 decimals?", obscure.code)
    assert month.answer is not None and month.answer.startswith(f"{best['amount'] / 1e6:.2f}"), month.trace[-3:]
    assert month.trace[-1]["reads"] >= 25
