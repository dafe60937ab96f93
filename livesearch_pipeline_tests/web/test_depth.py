"""Visibility as the depth of the work (issue 29): an obscure entity's history only in its
exchange's daily bulletins (paginated, linked from a dated archive), a visible one's window
digested by portals; effort in the evidence map (hand-checked); the navigator under a read
budget; the web still clean and point in time."""

from __future__ import annotations

import asyncio
import statistics
from pathlib import Path

import pytest

from livesearch_pipeline.core.calendars import session_on_or_before, sessions_back
from livesearch_pipeline.core.models import (
    Call, Combine, DateSpec, Extractor, Program, Selection, ValueRef,
)
from livesearch_pipeline.evaluation.agents.navigator import open_navigator
from livesearch_pipeline.evaluation.registry import BASELINES, NAVIGATOR_BASELINE, AgentSpec, load_agents
from livesearch_pipeline.web.audit import pages_giving_the_game_away
from livesearch_pipeline.web.build import build_web
from livesearch_pipeline.web.bulletins import BULLETIN_ROWS, BULLETIN_SESSIONS, archive_path
from livesearch_pipeline.web.corpus import CorpusConfig, record_key
from livesearch_pipeline.web.digest import digest_key
from livesearch_pipeline.web.evidence import build_evidence_map, effort_cover
from livesearch_pipeline.web.index import WebIndex
from livesearch_pipeline_tests.evaluation.agents_fakes import served_question
from livesearch_pipeline_tests.web.test_evidence import NUMBER, _latest, _question
from livesearch_pipeline_tests.web.web_fixtures import gold_of
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, pick, service

WINDOW = "What was the average closing price of {name} ({code}) over the last 20 trading days, in CNY to 2 decimals?"
WINDOW_ZH = "{name}（{code}）最近20个交易日（含最近一个交易日）收盘价的平均值是多少元？保留2位小数。"


def _sessions(n: int) -> dict[str, DateSpec]:
    return {"start_date": DateSpec(sessions_back=n - 1, calendar="XSHG", fmt="%Y%m%d"),
            "end_date": DateSpec(sessions_back=0, calendar="XSHG", fmt="%Y%m%d")}


class Depth:
    def __init__(self) -> None:
        self.obscure, self.middle, self.famous = pick("cn_equity", 0), pick("cn_equity", 5), pick("cn_equity", 10)
        self.config = CorpusConfig(clock=CLOCK, history_sessions=5, tools=("daily",), market_tools=(),
                                   entities=(self.obscure.code, self.middle.code, self.famous.code))
        closes = service().call("daily", {"ts_code": self.obscure.code, "start_date": "20260601",
                                           "end_date": CLOCK.strftime("%Y%m%d")})["items"]
        self.closes = sorted(closes, key=lambda r: r["trade_date"], reverse=True)  # newest first


@pytest.fixture(scope="module")
def depth() -> Depth:
    return Depth()


@pytest.fixture(scope="module")
def web_dir(depth: Depth, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_web(depth.config, tmp_path_factory.mktemp("web"), workers=1).directory


def test_an_obscure_entitys_history_is_only_in_the_bulletins(depth: Depth, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    code = depth.obscure.code
    latest, earlier = depth.closes[0], depth.closes[10]
    # Its quote page shows the latest session only, and links its exchange's bulletin archive.
    quote = index.page(f"/exchange/daily/{code}.html")
    assert quote is not None and archive_path(depth.obscure.exchange, "daily") in quote.html
    found = index.pages_with_records([record_key("daily", code, latest["trade_date"]),
                                      record_key("daily", code, earlier["trade_date"])])
    assert f"/exchange/daily/{code}.html" in found[record_key("daily", code, latest["trade_date"])]
    # An earlier session is on its bulletin only (no history table, monthly page or portal).
    assert found[record_key("daily", code, earlier["trade_date"])] == [
        f"/exchange/bulletin/{depth.obscure.exchange}/daily/{earlier['trade_date']}-1.html"]
    bulletin = index.page(f"/exchange/bulletin/{depth.obscure.exchange}/daily/{earlier['trade_date']}-1.html")
    assert bulletin is not None and code in bulletin.html and str(earlier["close"]) in bulletin.html
    # The middle entity's exchange page shows its last week; an earlier session is on the month's
    # page of its quote history (and the bulletin), not on its quote page.
    middle = next(iter(index.pages_with_records(
        [record_key("daily", depth.middle.code, earlier["trade_date"])]).values()))
    month = f"{earlier['trade_date'][:4]}-{earlier['trade_date'][4:6]}"
    assert f"/exchange/daily/{depth.middle.code}/history/{month}.html" in middle
    assert f"/exchange/daily/{depth.middle.code}.html" not in middle


def test_the_archive_lists_each_session_with_its_pages_code_ranges(depth: Depth, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    exchange = depth.obscure.exchange
    archive = index.page(archive_path(exchange, "daily"))
    assert archive is not None
    last = session_on_or_before("XSHG", CLOCK)
    first = sessions_back("XSHG", last, BULLETIN_SESSIONS - 1)
    assert archive.html.index(last.isoformat()) < archive.html.index(first.isoformat()), "newest first"
    assert f"{last.isoformat()} 第1页 " in archive.html and depth.obscure.code in archive.html
    assert index.page(f"/exchange/bulletin/{exchange}/daily/{first.strftime('%Y%m%d')}-1.html") is not None
    assert index.page(f"/exchange/bulletin/{exchange}/daily/{sessions_back('XSHG', first, 1):%Y%m%d}-1.html") is None
    hub = index.page(f"/exchange/company/{depth.obscure.code}.html")
    assert hub is not None and archive_path(exchange, "daily") in hub.html
    assert BULLETIN_ROWS >= 40, "a page lists dozens of instruments"


def test_pagination_splits_a_session_by_code_ranges() -> None:
    from livesearch_pipeline.dataservice.market import shared_market
    from livesearch_pipeline.web.generate import generate_pages

    stocks = sorted(e.code for e in shared_market(service().config.seed).universe.entities
                    if e.exchange == "SSE" and e.asset_class == "cn_equity")[: BULLETIN_ROWS + 3]
    pages = [p for p in generate_pages(CorpusConfig(clock=CLOCK, history_sessions=1, tools=("daily",),
                                                    market_tools=(), entities=tuple(stocks)))
             if p.kind == "bulletin" and p.path.endswith(f"{CLOCK:%Y%m%d}-1.html") or
             p.kind == "bulletin" and p.path.endswith(f"{CLOCK:%Y%m%d}-2.html")]
    first, second = sorted(pages, key=lambda p: p.path)
    assert len(first.records) == BULLETIN_ROWS and 1 <= len(second.records) <= 3  # all that traded that day
    assert not first.indexed, "the search engine leaves the bulletins' tables out"
    assert first.records[-1] < second.records[0]


def test_a_famous_entitys_window_is_digested_by_portals(depth: Depth, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    digests = [path for path in (f"/{site}/stats/{depth.famous.code}.html"
                                 for site in ("finquote", "caijing", "marketpulse", "gushi", "quotehub", "hangqing"))
               if index.page(path) is not None]
    assert digests, "a visibility-10 entity has a portal's key statistics"
    page = index.page(digests[0])
    assert page is not None and ("Average close" in page.html or "平均收盘价" in page.html)


def test_the_web_names_no_generator_and_nothing_is_after_the_clock(depth: Depth, web_dir: Path) -> None:
    index = WebIndex(web_dir)
    assert list(pages_giving_the_game_away(index)) == []
    from livesearch_pipeline.web.generate import generate_pages

    assert all(page.published <= CLOCK for page in generate_pages(depth.config))


def _depth_questions(depth: Depth) -> list:
    """A lookup and a 20-session window of the obscure stock, the windows of the middle and the famous
    one, and the difference of two latest closes."""
    obscure, middle, famous = depth.obscure, depth.middle, depth.famous

    def window(code: str) -> Program:
        return Program(calls=[Call(id="c1", tool="daily", args={"ts_code": code}, dates=_sessions(20))],
                       extract=Extractor(call="c1", select=Selection(mode="all", key="trade_date"), field="close",
                                         aggregate="mean", format=NUMBER))

    lookup = Program(calls=[Call(id="c1", tool="daily", args={"ts_code": obscure.code}, dates=_sessions(5))],
                     extract=Extractor(call="c1", select=_latest(), field="close", format=NUMBER))
    versus = Program(calls=[Call(id="c1", tool="daily", args={"ts_code": obscure.code}, dates=_sessions(5)),
                            Call(id="c2", tool="daily", args={"ts_code": middle.code}, dates=_sessions(5))],
                     extract=Extractor(call="c1", select=_latest(), field="close", format=NUMBER,
                                       combine=Combine(op="difference", other=ValueRef(call="c2", select=_latest(),
                                                                                       field="close"))))
    return [_question(1, lookup, obscure.code, 0), _question(2, window(obscure.code), obscure.code, 0),
            _question(3, window(middle.code), middle.code, 5), _question(4, window(famous.code), famous.code, 10),
            _question(5, versus, obscure.code, 0)]


def test_effort_is_the_fewest_reads_showing_every_deciding_record(depth: Depth, web_dir: Path) -> None:
    obscure = depth.obscure
    questions = _depth_questions(depth)
    mapped = build_evidence_map(web_dir, questions, gold_of(questions), seed=service().config.seed, gold_sha256="t")
    entries = mapped["questions"]
    efforts = [entries[q.qid]["effort"] for q in questions]
    # A lookup: its quote page. An obscure 20-session window: its quote page (the latest session,
    # and the one before as its previous close), then the archive it links and one bulletin for
    # every second earlier session (each prints its session's close and, as the previous close, the
    # session before's; the three stocks of a session share its page): the walk through the
    # unindexed archive counts. The middle one's: its history table. The famous one's: a history
    # table or a digest. Two latest closes: the two quote pages (a bulletin of the latest session
    # shows both, but is two reads away).
    assert efforts == [1, 11, 1, 1, 2]
    cover = entries[questions[1].qid]["cover"]
    bulletins = [p for p in cover if p.startswith(f"/exchange/bulletin/{obscure.exchange}/daily/2")]
    assert cover[:2] == [f"/exchange/daily/{obscure.code}.html", archive_path(obscure.exchange, "daily")]
    order = [r["trade_date"] for r in depth.closes]  # newest first
    read = {p.rsplit("/", 1)[1][:8] for p in bulletins}
    shown = read | {order[order.index(day) + 1] for day in read}
    assert len(bulletins) == 9 and shown >= set(order[2:20])
    summary = mapped["summary"]["effort"]
    assert summary["by_band"]["low"]["max"] == 11 and summary["by_band"]["high"] == {"n": 1, "median": 1, "mean": 1, "p90": 1, "max": 1}
    assert summary["by_band_family"]["low/window"]["median"] == 11


def test_greedy_cover_counts_a_digest_as_the_whole_window() -> None:
    from livesearch_pipeline.web.evidence import Link

    keys = tuple(record_key("daily", "X", f"2026110{d}") for d in range(1, 6))
    digest = digest_key("daily", "X", "close", "mean", 5, "20261105")
    link = Link("extract", "c1", "daily", "X", "close", keys, (), (), (), digest, ("/p/stats/X.html",))
    pages_of = {k: [f"/b/{k[-8:]}.html"] for k in keys}
    assert effort_cover([link], pages_of) == ["/p/stats/X.html"]
    bare = Link("extract", "c1", "daily", "X", "close", keys, (), (), ())
    assert len(effort_cover([bare], pages_of) or []) == 5
    assert effort_cover([bare], {**pages_of, keys[0]: []}) is None


def test_the_navigator_reads_bulletins_within_its_budget(depth: Depth, web_dir: Path) -> None:
    obscure = depth.obscure
    asked = served_question(WINDOW.format(name=obscure.name, code=obscure.code), entity=obscure.code,
                            question_zh=WINDOW_ZH.format(name=obscure.name_zh or obscure.name, code=obscure.code))
    gold = f"{statistics.fmean(r['close'] for r in depth.closes[:20]):.2f}"

    async def run(budget: int | None):
        async with open_navigator(web_dir=web_dir, day=CLOCK, name="navigator", read_budget=budget,
                                  allow_partial_web=True) as agent:
            return await agent.answer(asked)

    spent = asyncio.run(run(1))
    assert spent.answer is None and "budget of 1" in spent.trace[-1]["reason"]
    reads = [t for t in spent.trace if t.get("tool") == "fetch_page"]
    assert [bool(t.get("refused")) for t in reads] == [False, True]  # the second read refused, and recorded
    assert spent.usage.page_reads == 1 and spent.usage.budget_refusals == 1
    full = asyncio.run(run(None))
    assert full.answer == gold, full.trace[-3:]
    reads = full.trace[-1]["reads"]
    assert reads >= 21, "an archive and twenty bulletins at least"
    assert sum(1 for t in full.trace if "/exchange/bulletin/" in t.get("url", "") and "-1.html" in t["url"]) == 20
    assert asyncio.run(run(reads)).answer == gold
    assert asyncio.run(run(reads - 1)).answer is None


def test_the_navigator_is_a_builtin_baseline_at_six_reads(tmp_path: Path) -> None:
    assert NAVIGATOR_BASELINE in BASELINES and NAVIGATOR_BASELINE == "navigator-6"
    spec = next(s for s in load_agents(tmp_path / "agents.json") if s.name == NAVIGATOR_BASELINE)
    assert (spec.kind, spec.read_budget) == ("navigator", 6)
    assert AgentSpec(name="nav-20", kind="navigator", read_budget=20).read_budget == 20


def test_the_navigator_reads_the_investigations_texts() -> None:
    from livesearch_pipeline.evaluation.agents.investigations import _drawdown, read_investigation

    def read(text: str):
        return read_investigation(served_question(text, entity="000300.SH"))

    # A stock's best month by its unadjusted change (DESIGN §4.8), an index's by its change.
    for change in ("unadjusted monthly percentage change", "monthly percentage change"):
        assert read(f"Among the last 12 completed calendar months, take the month in which X (600001.SH) had its highest "
                    f"{change}. What was its monthly closing price in that month, in CNY to 2 decimals?") == (
            "best_month", {"n": "12", "subj": "X (600001.SH)", "noun": "monthly closing price"})
    assert read("What was the maximum drawdown of 沪深300 (000300.SH) over the last 120 trading days, that is the "
                "largest decline of its closing levels from a preceding peak, stated as a positive percentage of that "
                "peak, in percent to 2 decimals?") == ("drawdown", {"subj": "沪深300 (000300.SH)", "n": "120"})
    assert read("On which trading day did X (000300.SH) reach the trough of its maximum drawdown over the last 60 "
                "trading days, measured on its closing levels? Answer with the date as YYYY-MM-DD.")[1]["which"] == "trough"
    assert read("Of the indices 000300.SH, 399001.SZ and 000905.SH, which had the lowest percentage change from the "
                "close 20 trading days before the most recent one to the most recent close? Answer with its index "
                "code.")[1] == {
        "a": "000300.SH", "b": "399001.SZ", "c": "000905.SH", "move": "lowest", "n": "20"}
    screen = read("On the most recent trading day, which of the constituents of X (000300.SH) at its most recent "
                  "rebalance had the highest turnover value? Answer with its stock code.")
    assert screen is not None and screen[0] == "screen" and screen[1]["ask"] == "had the highest turnover value"
    assert read("What was the closing price of X (000300.SH) on the most recent trading day, in CNY to 2 decimals?") is None
    # 10 -> 12 (peak) -> 9 (trough, 25% below) -> 11: the largest fall is 25%, peak 1, trough 2.
    assert _drawdown([10.0, 12.0, 9.0, 11.0]) == (25.0, 1, 2)


def test_the_navigator_follows_a_chains_first_hop_to_the_stock_it_names() -> None:
    from livesearch_pipeline.evaluation.agents.navigator import read_chain, top_of_first_hop
    from livesearch_pipeline.evaluation.agents.reading import parse_page

    holding = served_question("For the largest stock holding of X混合 (003642.OF) by market value in its most recently "
                              "published portfolio, what was that stock's turnover rate on the most recent trading day, "
                              "in percent to 2 decimals?", entity="003642.OF", asset_class="fund")
    assert read_chain(holding) == ("fund_portfolio", "003642.OF", "turnover rate", ", in percent to 2 decimals?")
    heaviest = served_question("For the constituent of Y指数 (399464.SZ) with the highest weight at its most recent "
                               "rebalance, what was that stock's closing price on the most recent trading day, in CNY "
                               "to 2 decimals?", entity="399464.SZ", asset_class="index")
    assert read_chain(heaviest)[:3] == ("index_weight", "399464.SZ", "closing price")
    assert read_chain(served_question("What was the closing price of X (600001.SH) on the most recent trading day, in "
                                      "CNY to 2 decimals?")) is None
    header = "<tr><th>公告日期</th><th>截止日期</th><th>股票代码</th><th>持有股票市值 (CNY)</th></tr>"

    def table(rows: list[tuple[str, str, str, str]]) -> str:
        return "<table>" + header + "".join(f"<tr>{''.join(f'<td>{c}</td>' for c in r)}</tr>" for r in rows) + "</table>"

    # The latest report's largest holding, not the largest of an older report, nor the first row.
    portfolio = parse_page(table([("20261020", "20260930", "600002.SH", "100.0"), ("20261020", "20260930",
                                                                                   "600003.SH", "250.0")])
                           + table([("20260720", "20260630", "600004.SH", "999.0")]))
    assert top_of_first_hop(portfolio, "fund_portfolio") == "600003.SH"
    weights = parse_page("<table><tr><th>成分股代码</th><th>交易日期</th><th>权重 (%)</th></tr>"
                         "<tr><td>000001.SZ</td><td>20261130</td><td>9.5</td></tr>"
                         "<tr><td>000002.SZ</td><td>20261130</td><td>15.0</td></tr>"
                         "<tr><td>000003.SZ</td><td>20261030</td><td>20.0</td></tr></table>")
    assert top_of_first_hop(weights, "index_weight") == "000002.SZ"
    assert top_of_first_hop(parse_page("<table><tr><th>日期</th></tr></table>"), "index_weight") is None


def test_the_navigator_reads_statement_growth_and_margins_from_the_report_pages() -> None:
    from livesearch_pipeline.evaluation.agents.investigations import read_investigation
    from livesearch_pipeline.evaluation.agents.navigator import _statement_field, report_figure
    from livesearch_pipeline.evaluation.agents.reading import parse_page

    def read(text: str):
        return read_investigation(served_question(text, entity="000065.SZ"))

    margin = read("For X (000065.SZ), what was the operating profit margin in its most recently reported period (year "
                  "to date), that is its operating profit divided by its operating revenue, in percent to 2 decimals?")
    assert margin is not None and margin[0] == "margin"
    assert [_statement_field("income", margin[1][k]) for k in ("num", "den")] == ["operate_profit", "revenue"]
    growth = read("For X (000065.SZ), what was the year-on-year growth of the year-to-date net profit attributable "
                  "to shareholders of its most recently reported period over the same period a year earlier, in "
                  "percent to 2 decimals?")
    assert growth is not None and growth[0] == "growth_period"
    assert _statement_field("income", growth[1]["noun"]) == "n_income_attr_p"
    annual = read("For X (000065.SZ), what was the growth of the operating profit in its most recent annual report "
                  "over the fiscal year before, in percent to 2 decimals?")
    assert annual == ("growth_year", {"subj": "X (000065.SZ)", "noun": "operating profit"})
    page = parse_page("<table><tr><th>项目</th><th>数值</th><th>单位</th></tr>"
                      "<tr><td>营业总收入</td><td>260847708.0</td><td>CNY</td></tr>"
                      "<tr><td>营业利润</td><td>41604256.0</td><td>CNY</td></tr></table>")
    assert report_figure(page, "income", "operate_profit") == 41604256.0
    assert report_figure(page, "income", "rd_exp") is None


def test_a_snapshot_is_read_at_its_calendar_session_and_a_rounded_statistic_is_not_taken() -> None:
    from livesearch_pipeline.evaluation.agents.navigator import _precise_enough
    from livesearch_pipeline.evaluation.agents.reading import candidates_from_page, parse_page, read_question

    asked = served_question("What was the margin financing balance of X (603108.SH) 5 trading days before the most "
                            "recent one, in billions of CNY to 2 decimals?", entity="603108.SH")
    reading = read_question(asked)
    # 20261130 is a session the data set skips: five sessions back from 20261201 is 20261124, the
    # table's fifth row below the newest (the sixth, 20261123, is six sessions back).
    days = ["20261201", "20261127", "20261126", "20261125", "20261124", "20261123"]
    page = parse_page("<table><tr><th>Date</th><th>Margin financing balance (CNY)</th></tr>"
                      + "".join(f"<tr><td>{d}</td><td>{7_000_000_000 + i * 10_000_000}</td></tr>"
                                for i, d in enumerate(days)) + "</table>")
    by_date = candidates_from_page(page, "u", 0, reading, asked, snapshot_day="20261124")
    assert [c.value for c in by_date] == [7_040_000_000]
    assert [c.value for c in candidates_from_page(page, "u", 0, reading, asked)] == [7_050_000_000]
    assert candidates_from_page(page, "u", 0, reading, asked, snapshot_day="20261120") == []
    mean = read_question(served_question(WINDOW.format(name="X", code="600001.SH")))
    assert not _precise_enough("16.2", "CNY", mean) and _precise_enough("16.24", "CNY", mean)
    assert _precise_enough("16.2", "thousand CNY", mean.__class__(**{**mean.__dict__, "unit": "million CNY"}))


def test_the_navigator_reads_the_days_closing_bid_rates_for_a_conversion() -> None:
    from livesearch_pipeline.evaluation.agents.chains import _FX_CONVERT
    from livesearch_pipeline.evaluation.agents.navigator import fx_bid_closes
    from livesearch_pipeline.evaluation.agents.reading import parse_page

    asked = _FX_CONVERT.match("What was the closing price of X控股 (00829.HK) on the most recent Hong Kong trading day, "
                              "converted into CNY at that day's closing USD/CNH and USD/HKD bid rates, in CNY to 2 "
                              "decimals?")
    assert asked is not None and (asked.group("noun"), asked.group("subj"), asked.group("market")) == (
        "closing price", "X控股 (00829.HK)", "Hong Kong")
    page = parse_page("<table><tr><th>外汇代码</th><th>交易日期</th><th>买入开盘价 (quote currency)</th>"
                      "<th>买入收盘价 (quote currency)</th><th>卖出收盘价 (quote currency)</th></tr>"
                      "<tr><td>USDHKD.FXCM</td><td>20261201</td><td>7.75741</td><td>7.75746</td><td>7.75896</td></tr>"
                      "<tr><td>USDCNH.FXCM</td><td>20261201</td><td>7.28795</td><td>7.28921</td><td>7.29221</td></tr>"
                      "<tr><td>USDJPY.FXCM</td><td>20261130</td><td>146.1</td><td>146.3</td><td>146.4</td></tr></table>")
    assert fx_bid_closes(page, "20261201") == {"USDHKD": 7.75746, "USDCNH": 7.28921}
    assert fx_bid_closes(page, "20261127") == {}


def test_a_window_is_read_over_its_calendar_sessions() -> None:
    from livesearch_pipeline.evaluation.agents.reading import candidates_from_page, parse_page, read_question

    asked = served_question("By how much did the margin financing balance of X (603108.SH) change from the trading "
                            "day 5 sessions before the most recent one to the most recent trading day, in CNY to 2 "
                            "decimals?", entity="603108.SH")
    reading = read_question(asked)
    days = ["20261201", "20261127", "20261126", "20261125", "20261124", "20261123"]  # 20261130 skipped
    page = parse_page("<table><tr><th>Date</th><th>Margin financing balance (CNY)</th></tr>"
                      + "".join(f"<tr><td>{d}</td><td>{100 - i}</td></tr>" for i, d in enumerate(days)) + "</table>")
    # From 20261124 (five sessions back on the calendar) to 20261201: 100 - 96.
    assert [c.value for c in candidates_from_page(page, "u", 0, reading, asked, snapshot_day="20261124")] == [4.0]
    assert [c.value for c in candidates_from_page(page, "u", 0, reading, asked)] == [5.0]  # counted by rows
    assert candidates_from_page(page, "u", 0, reading, asked, snapshot_day="20261101") == []  # table too short


def test_the_navigator_finds_the_latest_implemented_ex_dividend_date() -> None:
    from livesearch_pipeline.evaluation.agents.navigator import _EXDATE_CLOSE, latest_ex_date
    from livesearch_pipeline.evaluation.agents.reading import parse_page

    asked = _EXDATE_CLOSE.match("What was the closing price of X (000633.SZ) on the ex-dividend date of its most "
                                "recently implemented dividend, in CNY to 2 decimals?")
    assert asked is not None and asked.group("subj") == "X (000633.SZ)" and asked.group("tail").startswith(", in CNY")

    def record(progress: str, ex_date: str) -> str:
        return ("<table><tr><th>项目</th><th>数值</th><th>单位</th></tr>"
                f"<tr><td>实施进度</td><td>{progress}</td><td></td></tr>"
                f"<tr><td>除权除息日</td><td>{ex_date}</td><td></td></tr></table>")

    page = parse_page(record("股东大会通过", "20261020") + record("实施", "20260727") + record("实施", "20250715")
                      + record("实施", "20261215"))
    # A plan not yet implemented and an ex-date after the latest session do not count.
    assert latest_ex_date(page, "20261201") == "20260727"
    assert latest_ex_date(page, "20250801") == "20250715"
    assert latest_ex_date(parse_page(record("股东大会通过", "20261020")), "20261201") is None


def test_no_correct_navigator_answer_reads_fewer_pages_than_its_effort(depth: Depth, web_dir: Path) -> None:
    """Effort is a lower bound: the navigator's recorded reads on every question it answers right are
    at least the evidence map's effort (its trajectory lists each read)."""
    from livesearch_pipeline.evaluation.scoring import score_deterministic

    questions = _depth_questions(depth)
    answers = gold_of(questions)
    entries = build_evidence_map(web_dir, questions, answers, seed=service().config.seed, gold_sha256="t")["questions"]
    texts = {1: f"What was the closing price of {depth.obscure.name} ({depth.obscure.code}) on the most recent trading "
                "day, in CNY to 2 decimals?",
             2: WINDOW.format(name=depth.obscure.name, code=depth.obscure.code),
             3: WINDOW.format(name=depth.middle.name, code=depth.middle.code),
             4: WINDOW.format(name=depth.famous.name, code=depth.famous.code)}
    texts_zh = {n: WINDOW_ZH.format(name=entity.name_zh or entity.name, code=entity.code)
                for n, entity in ((2, depth.obscure), (3, depth.middle), (4, depth.famous))}

    async def run():
        async with open_navigator(web_dir=web_dir, day=CLOCK, name="navigator", read_budget=None,
                                  allow_partial_web=True) as agent:
            return [await agent.answer(served_question(texts[n], entity=questions[n - 1].entity, question_zh=texts_zh.get(n)))
                    for n in texts]

    for n, prediction in zip(texts, asyncio.run(run())):
        verdict, _ = score_deterministic(answers[n - 1], prediction.model_copy(update={"qid": answers[n - 1].qid}))
        # Without a budget it answers each of them (the middle one through its monthly pages).
        assert verdict.correct, (n, prediction.answer, verdict.reason, prediction.trace[-1])
        reads = [t for t in prediction.trace if t.get("tool") == "fetch_page" and not t.get("refused")]
        assert prediction.usage.page_reads == len(reads)
        assert len(reads) >= entries[questions[n - 1].qid]["effort"], (n, [t["url"] for t in reads])
