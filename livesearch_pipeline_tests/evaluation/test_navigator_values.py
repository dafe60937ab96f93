"""The navigator reads the quantities it used to miss or misread (issue 29): a table of many
instruments at the question's row (an FX pair, an exchange's margin totals, a fund's or an index's
constituent), the label that is the quantity and not a sibling column or a date, a data set
published a session late, and the windows of a stock suspended on some sessions (the change on
its highest-volume session, a screen of constituents)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from types import SimpleNamespace

import httpx

from livesearch_pipeline.evaluation.agents.investigations import investigate
from livesearch_pipeline.evaluation.agents.navigator import NavigatorAgent, _Question, _stale, in_english
from livesearch_pipeline.evaluation.agents.reading import (
    Reading, best_label, candidates_from_page, choose, keyed_table, parse_page, read_question, row_key,
)
from livesearch_pipeline_tests.evaluation.agents_fakes import served_question

CLOCK = dt.date(2026, 12, 1)


def _table(header: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{cells}</tr>{body}</table>"


def _items(rows: list[tuple[str, str, str]]) -> str:
    return _table(["项目", "数值", "单位"], [list(r) for r in rows])


FX_HEADER = ["外汇代码", "交易日期", "买入收盘价 (quote currency)", "卖出开盘价 (quote currency)",
             "卖出收盘价 (quote currency)", "卖出最低价 (quote currency)", "报价笔数 (ticks)"]


def _fx(text: str):
    return served_question(text, entity="fx_daily", asset_class="rates_fx", question_zh=None)


def test_the_row_key_of_a_pair_an_exchange_or_a_constituent() -> None:
    assert row_key("What was the closing ask rate of EUR/USD on the most recent trading day", False) == "EURUSD"
    assert row_key("By how much did the margin financing balance on the Shenzhen Stock Exchange change", False) == "SZSE"
    assert row_key("What was the market value of the holding of X (005793.OF) for the constituent 301494.SZ in the "
                   "most recent announcement", True) == "301494.SZ"
    # An entity's own question has no row key; nor a market-wide one of no pair or exchange.
    assert row_key("What was the closing price of X (600001.SH) on the most recent trading day", True) is None
    assert row_key("What was the 1-year loan prime rate in the most recent release", False) is None


def test_an_fx_quote_is_read_in_its_pairs_row_and_column_from_chinese_labels() -> None:
    asked = _fx("What was the closing ask rate of EUR/USD on the most recent trading day, to 4 decimals?")
    reading = read_question(asked)
    assert (reading.key, reading.quantity_en) == ("EURUSD", "closing ask rate")
    latest = parse_page(_table(FX_HEADER, [
        ["USDJPY.FXCM", "20261201", "146.324", "146.133", "146.333", "145.279", "295465"],
        ["EURUSD.FXCM", "20261201", "1.05802", "1.05701", "1.05812", "1.05011", "91112"],
        ["USDCHF.FXCM", "20261201", "0.8665", "0.86527", "0.86665", "0.86415", "25454"]]))
    # Read as printed, the Chinese columns name nothing an English-only question asks (search-read)...
    assert candidates_from_page(latest, "u", 0, reading, asked) == []
    found = candidates_from_page(in_english(latest, asked), "u", 0, reading, asked)
    # ... the navigator reads them as the lexicon's English nouns: the ask close, not the bid
    # close nor the ask open, of EUR/USD, not of the first row.
    assert [c.value for c in found] == [1.05812]
    assert choose(found, reading)[0] == "1.0581"
    # A table with no row of the pair gives nothing (not another pair's figure).
    other = parse_page(_table(FX_HEADER, [["USDJPY.FXCM", "20261201", "1", "2", "3", "4", "5"]]))
    assert candidates_from_page(in_english(other, asked), "u", 0, reading, asked) == []


def test_an_fx_window_is_read_over_the_pairs_history() -> None:
    asked = _fx("What was the lowest low ask rate of USD/CHF over the last 3 trading days, to 4 decimals?")
    reading = read_question(asked)
    header = ["日期"] + FX_HEADER
    history = parse_page(_table(header, [
        ["20261201", "USDCHF.FXCM", "20261201", "0.8665", "0.86527", "0.86665", "0.86415", "25454"],
        ["20261130", "USDCHF.FXCM", "20261130", "0.8601", "0.85527", "0.85665", "0.85194", "25454"],
        ["20261127", "USDCHF.FXCM", "20261127", "0.8601", "0.85527", "0.85665", "0.85300", "25454"],
        ["20261126", "USDCHF.FXCM", "20261126", "0.8601", "0.85527", "0.85665", "0.80000", "25454"]]))
    found = candidates_from_page(in_english(history, asked), "u", 0, reading, asked)
    assert [round(c.value, 5) for c in found] == [0.85194]  # the last 3 rows, not the fourth


def test_a_market_wide_margin_series_is_read_at_its_exchange_and_a_change_carries_no_unit() -> None:
    asked = served_question("By what percentage did the margin financing purchases on the Shanghai Stock Exchange "
                            "change from the trading day 2 sessions before the most recent one to the most recent "
                            "trading day, in percent to 2 decimals?", entity="margin", asset_class="market",
                            question_zh="上交所自最近一个交易日之前第2个交易日至最近一个交易日，融资买入额的涨跌幅是多少？"
                                        "以百分比表示，保留2位小数。")
    reading = read_question(asked)
    assert (reading.key, reading.aggregate, reading.sessions) == ("SSE", "pct_change", 2)
    page = parse_page(_table(["trading day", "exchange", "融资余额 (CNY)", "融资买入额 (CNY)"], [
        ["20261201", "SSE", "500", "110"], ["20261201", "SZSE", "900", "999"],
        ["20261130", "SSE", "490", "105"], ["20261130", "SZSE", "800", "1"],
        ["20261127", "SSE", "480", "100"], ["20261127", "SZSE", "700", "1"]]))
    table = keyed_table(page.tables[0], "SSE")
    assert table is not None and table[0] == ["date", "融资余额 (CNY)", "融资买入额 (CNY)"] and len(table) == 4
    found = candidates_from_page(page, "u", 0, reading, asked)
    assert [(round(c.value, 6), c.unit) for c in found] == [(10.0, None)]
    assert choose(found, reading)[0] == "10.00%"


def test_a_funds_holding_is_read_in_the_latest_announcement_listing_the_constituent() -> None:
    asked = served_question("What was the shares held as a percentage of the stock's float shares of X混合 (005793.OF) "
                            "for the constituent 301494.SZ in the most recent announcement, in percent to 2 decimals?",
                            entity="005793.OF", asset_class="fund",
                            question_zh="X混合（005793.OF）成分股301494.SZ最近一次公告中的占流通股本比例是多少？以百分比表示，保留2位小数。")
    reading = read_question(asked)
    header = ["公告日期", "截止日期", "股票代码", "持有股票市值 (CNY)", "占基金资产净值占比 (%)", "占流通股本占比 (%)"]
    page = parse_page(_table(header, [["20261020", "20260930", "603764.SH", "15921360.0", "9.01", "0.1548"]])
                      + _table(header, [["20260720", "20260630", "603764.SH", "1.0", "7.0", "0.2"],
                                        ["20260720", "20260630", "301494.SZ", "2.0", "8.33", "0.0702"]])
                      + _table(header, [["20260420", "20260331", "301494.SZ", "3.0", "6.0", "0.0500"]]))
    found = candidates_from_page(page, "u", 0, reading, asked)
    # The newest announcement that lists the stock (the latest one does not), its float-share column.
    assert choose(found, reading)[0] == "0.07%"


def test_the_label_asked_not_a_definitions_column_a_sibling_or_a_date() -> None:
    header = ["日期", "收市价 (CNY)", "后复权收盘价 (CNY)", "MACD DIF值", "MACD DEA值", "RSI 6日", "RSI 12日"]
    dif = served_question("What was the average MACD DIF line of X (688214.SH) over the last 2 trading days, to 2 "
                          "decimals? DIF is the 12-day EMA minus the 26-day EMA of the back-adjusted close.",
                          question_zh="X（688214.SH）最近2个交易日（含最近一个交易日）MACD DIF值的平均值是多少？保留2位小数。"
                                      "DIF为后复权收盘价的12日EMA减26日EMA。")
    assert best_label(header[1:], read_question(dif), dif) == 2  # MACD DIF值, not the back-adjusted close
    rsi = served_question("By how much did the 12-day RSI of X (688592.SH) change from the trading day 5 sessions "
                          "before the most recent one to the most recent trading day, to 2 decimals? RSI is "
                          "Wilder's, on back-adjusted closes.",
                          question_zh="X（688592.SH）自最近一个交易日之前第5个交易日至最近一个交易日，RSI 12日的变化是多少？"
                                      "保留2位小数。RSI按Wilder平滑法、以后复权收盘价计算。")
    assert best_label(header[1:], read_question(rsi), rsi) == 5  # RSI 12日, not RSI 6日
    turnover = served_question("What was the turnover value of X (00530.HK) on the most recent trading day, in HKD to "
                               "6 decimals?", entity="00530.HK", asset_class="hk_equity")
    labels = ["trading day", "Close", "Turnover rate", "Turnover"]
    assert best_label(labels, read_question(turnover), turnover) == 3  # not "trading day", named by the question


def test_the_latest_of_several_item_tables_is_the_newest_record() -> None:
    asked = served_question("What was the monthly high of X (002031.SZ) for the most recent completed month, in CNY to "
                            "2 decimals?", entity="002031.SZ",
                            question_zh="X（002031.SZ）最近一个已完成月份的月最高价是多少元？保留2位小数。")
    reading = read_question(asked)
    page = parse_page(_items([("交易日期", "20261130", ""), ("月最高价", "9.88", "CNY")])
                      + _items([("交易日期", "20260924", ""), ("月最高价", "9.38", "CNY")])
                      + _items([("交易日期", "20260831", ""), ("月最高价", "9.38", "CNY")]))
    # Two older months agree on 9.38: the newest month's record wins all the same.
    assert choose(candidates_from_page(page, "u", 0, reading, asked), reading)[0] == "9.88"


def test_a_record_over_a_year_old_is_stale() -> None:
    assert _stale("20250124", CLOCK) and not _stale("20261020", CLOCK) and not _stale("2025Q4", CLOCK)


# --------------------------------------------------------------------------- browsing a small fake web

class _NoResults:
    """A search engine that finds nothing (the pages here are reached by their links alone)."""

    async def web_search(self, arguments: dict) -> SimpleNamespace:
        return SimpleNamespace(content=json.dumps({"results": []}), trace={"query": arguments["query"]})


def _with_hubs(pages: dict[str, str]) -> dict[str, str]:
    """`pages` with the hubs the web links them from, as the web has them: each entity's company
    page linking its exchange pages, each exchange's list linking its bulletin archives (the
    navigator opens no page it has not seen in a result or a link)."""
    out = dict(pages)
    hubs: dict[str, list[str]] = {}
    for path in pages:
        parts = path.split("/")
        if path.startswith("/exchange/bulletin/") and path.endswith("/index.html") and len(parts) == 6:
            hubs.setdefault(f"/exchange/bulletin/{parts[3]}/index.html", []).append(path)
        elif path.startswith("/exchange/") and len(parts) >= 4 and parts[2] not in ("bulletin", "company"):
            hubs.setdefault(f"/exchange/company/{parts[3].removesuffix('.html')}.html", []).append(path)
    for hub, linked in hubs.items():
        out.setdefault(hub, "".join(f'<a href="{p}">{p}</a>' for p in linked))
    return out


def _agent(pages: dict[str, str], budget: int | None = None, hubs: bool = True) -> tuple[NavigatorAgent, list[str]]:
    opened: list[str] = []
    pages = _with_hubs(pages) if hubs else pages

    def handler(request: httpx.Request) -> httpx.Response:
        opened.append(request.url.path)
        html = pages.get(request.url.path)
        return httpx.Response(200, text=html) if html is not None else httpx.Response(404, text="")

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return NavigatorAgent(tools=_NoResults(), http=http, as_of=CLOCK, base_url="http://web",  # type: ignore[arg-type]
                          read_budget=budget), opened


def _investigate(pages: dict[str, str], question, name: str, parts: dict[str, str]) -> str | None:
    agent, _ = _agent(pages)
    state = _Question(question, Reading(kind="investigation", name="", quantity_en=name, quantity_zh=None), None)
    return asyncio.run(investigate(agent, state, name, parts))


BULLETIN_HEADER = ["代码", "名称", "收市价 (CNY)", "幅度 (%)", "总手 (lots)", "换手率 (%)"]
# The last sessions on the XSHG calendar up to the clock, newest first.
SESSIONS = ["2026-12-01", "2026-11-30", "2026-11-27", "2026-11-26", "2026-11-25"]


def _archive(exchange: str, tool: str, first: str = "000001.SZ", last: str = "300999.SZ") -> str:
    return "".join(f'<a href="/exchange/bulletin/{exchange}/{tool}/{d.replace("-", "")}-1.html">{d} 第1页 {first}–{last}</a>'
                   for d in SESSIONS)


def test_the_highest_volume_session_of_a_stock_suspended_on_some_sessions() -> None:
    code = "000693.SZ"
    pages = {f"/exchange/daily/{code}.html":
             _items([("交易日期", "20261126", ""), ("收市价", "5.25", "CNY")])
             + '<a href="/exchange/bulletin/SZSE/daily/index.html">每日行情公告</a>'
             + f'<a href="/exchange/daily/{code}/history/2026-08.html">2026年08月</a>',
             "/exchange/bulletin/SZSE/daily/index.html": _archive("SZSE", "daily"),
             # August's rows would fill the window with sessions before it.
             f"/exchange/daily/{code}/history/2026-08.html": _table(
                 ["日期", "收市价 (CNY)", "幅度 (%)", "总手 (lots)"], [["20260831", "5.0", "10.0", "999999"]])}
    listed = {"2026-11-26": ("-0.56", "5000"), "2026-11-25": ("1.20", "3000")}  # suspended from 2026-11-27
    for day in SESSIONS:
        rows = [["000005.SZ", "A", "41.27", "-1.7", "239172", "1.0"]]
        if day in listed:
            rows.append([code, "X", "5.25", listed[day][0], listed[day][1], "0.5"])
        pages[f"/exchange/bulletin/SZSE/daily/{day.replace('-', '')}-1.html"] = _table(BULLETIN_HEADER, rows)
    asked = served_question(f"What was the percentage change of X ({code}) on the session with the highest trading "
                            "volume among the last 5 trading days, in percent to 2 decimals?", entity=code)
    assert _investigate(pages, asked, "volume_day", {"subj": f"X ({code})", "n": "5"}) == "-0.56%"


def test_a_screen_takes_a_constituent_its_sessions_page_does_not_list_as_not_traded() -> None:
    members = ["000005.SZ", "000007.SZ", "000693.SZ"]
    pages = {"/exchange/index_weight/000056.SH.html":
             _table(["成分股代码", "交易日期", "权重 (%)"], [[c, "20261130", "10"] for c in members])
             + _table(["成分股代码", "交易日期", "权重 (%)"], [["300001.SZ", "20261030", "10"]]),
             "/exchange/bulletin/SZSE/daily/index.html": _archive("SZSE", "daily"),
             "/exchange/bulletin/SZSE/daily/20261201-1.html": _table(BULLETIN_HEADER, [
                 ["000005.SZ", "A", "41.27", "-1.7147", "239172", "1.0"],
                 ["000007.SZ", "B", "22.12", "0.8961", "92717", "2.0"],
                 ["300001.SZ", "C", "9.9", "-9.9", "1", "1.0"]])}  # 000693.SZ suspended; 300001.SZ left the index
    fell = served_question("On the most recent trading day, which of the constituents of Y指数 (000056.SH) at its most "
                           "recent rebalance had the lowest percentage change? Answer with its stock code.",
                           entity="000056.SH", asset_class="index")
    parts = {"subj": "Y指数 (000056.SH)", "ask": "had the lowest percentage change"}
    assert _investigate(pages, fell, "screen", parts) == "000005.SZ"
    higher = {"subj": "Y指数 (000056.SH)", "ask": "closed higher than their previous close"}
    assert _investigate(pages, fell, "screen", higher) == "1"
    # A member no session page covers (its code range not in the archive) is not taken as suspended.
    pages["/exchange/bulletin/SZSE/daily/index.html"] = _archive("SZSE", "daily", last="000099.SZ")
    assert _investigate(pages, fell, "screen", parts) is None


def test_a_lagged_data_sets_window_ends_at_its_latest_published_session() -> None:
    code = "003550.OF"
    days = ["20261130", "20261127", "20261126", "20261125", "20261124"]  # the NAV of 20261201 is not out yet
    navs = ["1.19", "1.18", "1.17", "1.16", "1.10"]
    pages = {f"/exchange/fund_nav/{code}.html": _table(["日期", "单位净值 (CNY)", "累计净值 (CNY)"],
                                                        [[d, v, "9.99"] for d, v in zip(days, navs)])}
    asked = served_question(f"By what percentage did the NAV per unit of X ({code}) change from the trading day 3 "
                            "sessions before the most recent one to the most recent trading day, in percent to 2 "
                            "decimals?", entity=code, asset_class="fund",
                            question_zh=f"X（{code}）自最近一个交易日之前第3个交易日至最近一个交易日，单位净值的涨跌幅是多少？"
                                        "以百分比表示，保留2位小数。")
    agent, opened = _agent(pages)
    reading = read_question(asked)
    window_day = agent._snapshot_day(reading, asked, "fund_nav")
    assert window_day == "20261125"  # three sessions before 20261130, the latest NAV published by 20261201
    found = candidates_from_page(parse_page(pages[f"/exchange/fund_nav/{code}.html"]), "u", 0, reading, asked,
                                 window_day)
    assert choose(found, reading)[0] == f"{(1.19 / 1.16 - 1) * 100:.2f}%"
    # A snapshot's session is counted from the market's latest session all the same.
    snapshot = read_question(served_question(f"What was the NAV per unit of X ({code}) 3 trading days before the most "
                                             "recent one, in CNY to 4 decimals?", entity=code, asset_class="fund"))
    assert agent._snapshot_day(snapshot, asked, "fund_nav") == "20261126"


def test_a_longer_label_that_makes_the_noun_more_specific_is_kept() -> None:
    # A market-wide question's noun is read up to " of ": "manufacturing PMI" for the PMI of large
    # enterprises; the label naming the large enterprises' PMI is the one asked.
    asked = served_question("What was the manufacturing PMI of large enterprises for the most recent month published, "
                            "to 1 decimal?", entity="cn_pmi", asset_class="macro", question_zh=None)
    reading = read_question(asked)
    assert reading.quantity_en == "manufacturing PMI"
    assert best_label(["Month", "Manufacturing PMI", "Manufacturing PMI of large enterprises"], reading, asked) == 2


def test_the_adjusted_return_and_the_etf_premium_are_read_as_investigations() -> None:
    from livesearch_pipeline.evaluation.agents.investigations import read_investigation

    adjusted = served_question("What was the return of X (000689.SZ) from the close 60 trading days before the most "
                               "recent one to the most recent close, adjusted for splits and dividends with the "
                               "cumulative adjustment factor, in percent to 2 decimals?", entity="000689.SZ")
    assert read_investigation(adjusted) == ("adj_return", {"subj": "X (000689.SZ)", "n": "60"})
    premium = served_question("What was the premium of the closing price of Y红利ETF (159427.SZ) over its NAV per unit "
                              "on the most recent trading day whose NAV has been published, a discount being "
                              "negative, in percent to 2 decimals?", entity="159427.SZ", asset_class="fund")
    assert read_investigation(premium) == ("premium", {"subj": "Y红利ETF (159427.SZ)"})
    code = "159427.SZ"
    pages = {f"/exchange/fund_nav/{code}.html": _table(["日期", "单位净值 (CNY)"], [["20261130", "1.2000"],
                                                                                  ["20261127", "1.1000"]]),
             f"/exchange/fund_daily/{code}.html": _table(["日期", "收市价 (CNY)"], [["20261201", "9.999"],
                                                                                ["20261130", "1.1988"]])}
    # The close of 20261130 (the latest NAV's day), not of 20261201: 1.1988 / 1.2 - 1.
    assert _investigate(pages, premium, "premium", {"subj": f"Y红利ETF ({code})"}) == "-0.10%"


def test_a_round_figure_is_not_taken_for_a_date() -> None:
    from livesearch_pipeline.evaluation.agents.navigator import _date_like
    from livesearch_pipeline.evaluation.agents.reading import Candidate

    reading = Reading(kind="latest", name="X", quantity_en="audit fees", quantity_zh=None, unit="million CNY")
    assert _date_like(Candidate(20261130.0, None, "", "", 0, "trading day"), reading)
    assert not _date_like(Candidate(20000000.0, "CNY", "", "", 0, "audit fees"), reading)


def test_of_a_pages_statements_the_one_whose_label_is_the_quantity() -> None:
    asked = served_question("What was the net increase in cash and cash equivalents of X (03773.HK) for the most "
                            "recently reported period (year to date), in billions of HKD to 2 decimals?",
                            entity="03773.HK", asset_class="hk_equity")
    reading = read_question(asked)
    header = ["Item", "Value", "Unit"]
    page = parse_page(_table(header, [["Cash & cash equivalents", "445814726827.0", "HKD"]])
                      + _table(header, [["Net increase in cash & cash equivalents", "2388161727.0", "HKD"]]))
    found = candidates_from_page(page, "u", 0, reading, asked)
    # The balance sheet's cash is named by the question too; the cash flow's net increase is the quantity.
    assert [c.value for c in found] == [2388161727.0] and choose(found, reading)[0] == "2.39"


def test_a_shareholders_row_is_read_in_the_latest_report_listing_it() -> None:
    asked = served_question("What was the float-share holding of X (001525.SZ) for the shareholder “国合资产管理有限公司” at "
                            "the end of the most recently reported period, in millions of shares to 2 decimals?",
                            entity="001525.SZ",
                            question_zh="X（001525.SZ）股东“国合资产管理有限公司”最近一期报告期末的持有流通股数量是多少万股？保留2位小数。")
    reading = read_question(asked)
    header = ["公告日期", "报告期", "股东名称", "持有流通股数量 (shares)"]
    tables = [_table(header, [[ann, end, "国合资产管理有限公司", value]]) for ann, end, value in (
        ("20261016", "20260930", "16265796.0"), ("20251029", "20250930", "12338820.0"),
        ("20250820", "20250630", "12343590.0"))]
    found = candidates_from_page(parse_page("".join(tables)), "u", 0, reading, asked)
    # Two older reports agree on 12.34 million: the latest report's row wins all the same.
    assert choose(found, reading)[0] == "16.27"


def _across_pages(pages: list[tuple[int, str]], reading: Reading, asked) -> list:
    """The candidates of several pages (numbered, as a long report's), each page read on its own."""
    return [c for n, html in pages for c in candidates_from_page(parse_page(html), f"p{n}", n, reading, asked)]


def test_across_a_long_reports_pages_the_label_naming_the_whole_quantity() -> None:
    # An obscure entity's long report prints each statement on a page of its own: the balance
    # sheet's "Cash & cash equivalents" (page 7) and the cash flow's net increase (page 8) are both
    # named by the question's words, each alone on its page; the more specific one is the answer.
    asked = served_question("What was the net increase in cash and cash equivalents of X (03281.HK) for the most "
                            "recently reported period (year to date), in HKD to 2 decimals?",
                            entity="03281.HK", asset_class="hk_equity")
    reading = read_question(asked)
    header = ["Item", "Value", "Unit"]
    found = _across_pages([(7, _table(header, [["Cash & cash equivalents", "6986499.0", "HKD"]])),
                           (8, _table(header, [["Net increase in cash & cash equivalents", "373481.0", "HKD"]]))],
                          reading, asked)
    assert len(found) == 2
    assert choose(found, reading)[0] == "373481.00"
    # In Chinese: 固定资产 (the balance sheet's fixed assets) is a word of the capital expenditure's
    # name, 购建固定资产、无形资产和其他长期资产支付的现金.
    capex = served_question("What was the capital expenditure of X (000693.SZ) for the most recently reported period "
                            "(year to date), in millions of CNY to 2 decimals?", entity="000693.SZ",
                            question_zh="X（000693.SZ）最近一期已披露财报（年初至报告期末）的购建固定资产、无形资产和其他长期"
                                        "资产支付的现金是多少百万元？保留2位小数。")
    reading = read_question(capex)
    found = _across_pages([(8, _items([("固定资产", "311782332.0", "元")])),
                           (9, _items([("购建固定资产、无形资产和其他长期资产支付的现金", "27299539.0", "元")]))],
                          reading, capex)
    assert len(found) == 2
    assert choose(found, reading)[0] == "27.30"


def test_an_announcements_figure_is_looked_for_in_the_announcement_not_the_statements() -> None:
    from livesearch_pipeline.evaluation.agents.navigator import data_sets_for

    flash = served_question("What was the operating revenue of X (688855.SH) in the most recent announcement, in "
                            "billions of CNY to 2 decimals?", entity="688855.SH")
    sets = data_sets_for(read_question(flash), flash)
    assert "express" in sets and "income" in sets
    assert sets.index("express") < sets.index("income")
    statement = served_question("What was the operating revenue of X (688855.SH) for the most recently reported "
                                "period (year to date), in billions of CNY to 2 decimals?", entity="688855.SH")
    sets = data_sets_for(read_question(statement), statement)
    assert sets.index("income") < sets.index("express")


class _Finds:
    """A search engine whose every result list is the given URLs."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls

    async def web_search(self, arguments: dict) -> SimpleNamespace:
        results = [{"url": u, "title": u, "content": ""} for u in self.urls]
        return SimpleNamespace(content=json.dumps({"results": results}), trace={"query": arguments["query"]})


def test_the_navigator_opens_no_exchange_page_it_has_not_seen() -> None:
    import pytest

    from livesearch_pipeline.evaluation.agents.loop import ToolFailure

    code = "000693.SZ"
    data = f"/exchange/daily/{code}.html"
    pages = {data: _items([("交易日期", "20261201", ""), ("收市价", "5.25", "CNY")])}
    asked = served_question(f"What was the closing price of X ({code}) on the most recent trading day, in CNY to 2 "
                            "decimals?", entity=code)

    def state() -> _Question:
        return _Question(asked, read_question(asked), None)

    # Linked from nowhere and in no search result: never opened (its URL is not guessed).
    agent, opened = _agent(pages, hubs=False)
    with pytest.raises(ToolFailure):
        asyncio.run(agent._read(state(), f"http://web{data}"))
    assert data not in opened and opened == [f"/exchange/company/{code}.html"]
    # Reached from the company page: two reads, the walk the evidence map's effort counts.
    agent, opened = _agent(pages)
    walked = state()
    asyncio.run(agent._read(walked, f"http://web{data}"))
    assert opened == [f"/exchange/company/{code}.html", data] and walked.reads == 2
    # Found by a search: one read.
    agent, opened = _agent(pages)
    agent.tools = _Finds([f"http://web{data}"])  # type: ignore[assignment]
    searched = state()
    asyncio.run(agent._read(searched, f"http://web{data}"))
    assert opened == [data] and searched.reads == 1


def test_a_snapshot_is_read_as_one_sessions_record_k_sessions_back() -> None:
    # The verbalizer asks one session's record "on the trading day k sessions before the most recent
    # one" (construction/verbalize.py); the noun stops before it, for an entity and for a series.
    price = served_question("What was the price change of X (03602.HK) on the trading day 5 sessions before the most "
                            "recent one, in HKD to 2 decimals?", entity="03602.HK", asset_class="hk_equity")
    rate = served_question("What was the 3-month HIBOR rate on the trading day 5 sessions before the most recent one, "
                           "in percent to 2 decimals?", entity="hibor", asset_class="rates_fx", question_zh=None)
    for asked, noun in ((price, "price change"), (rate, "3-month HIBOR rate")):
        reading = read_question(asked)
        assert (reading.kind, reading.sessions, reading.quantity_en) == ("snapshot", 5, noun)
