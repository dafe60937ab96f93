"""The navigator's chains through a date or an entity a first hop names (evaluation/agents/chains.py):
the shapes read from the served English text, the pages each hop reads, and end to end on a small
built web against the gold the executor computes: a fund's largest holding → its industry index →
the index's return; the change and the highest close since the latest report; the change since
the ex-dividend date; the payout ratio; the figure on the session of the highest close; a chain
fails at too small a read budget and succeeds with enough."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from livesearch_pipeline.core.matching import match_answer
from livesearch_pipeline.core.models import (
    Call, Combine, DateSpec, Extractor, Format, MatchRule, Program, Provenance, Question, Selection, ServedQuestion,
    ValueRef,
)
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.evaluation.agents.chains import (
    fina_eps, latest_implemented, latest_nav, lists_member, read_chain_shape, record_value, report_announcement, stock_industry,
)
from livesearch_pipeline.evaluation.agents.navigator import open_navigator
from livesearch_pipeline.evaluation.agents.reading import parse_page
from livesearch_pipeline.web.build import build_web
from livesearch_pipeline.web.corpus import CorpusConfig
from livesearch_pipeline.web.needs import history_from
from livesearch_pipeline_tests.evaluation.agents_fakes import served_question
from livesearch_pipeline_tests.web.test_history import _old_dividend_payer
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, gold_of, pick, service

TOOLS = ("daily", "daily_basic", "dividend", "income", "fina_indicator", "hk_daily", "hk_daily_adj", "hk_income", "fund_portfolio", "stock_basic",
         "index_member", "index_daily", "fund_nav", "fund_daily")
PERCENT = Format(kind="percent", decimals=2)
PRICE = Format(kind="number", decimals=2, unit="CNY")
IMPLEMENTED = Selection(mode="all", key="ann_date", where={"div_proc": "实施"})
ALL = Selection(mode="all", key="trade_date")

TEXTS = {
    "fund_industry": "Take the largest stock holding of {name} ({code}) by market value in its most recently "
                     "published portfolio. By what percentage did the industry index that stock belongs to change "
                     "from the close 5 trading days before the most recent one to the most recent close, in percent "
                     "to 2 decimals?",
    "report_change": "By what percentage has the closing price of {name} ({code}) changed from the close on the day "
                     "its most recent financial report was announced, or the first trading day after it, to the most "
                     "recent trading day, in percent to 2 decimals?",
    "report_high": "What was the highest closing price of {name} since the day its most recent financial report was "
                   "announced, counting that day, in CNY to 2 decimals?",
    "ex_date_change": "For {name} ({code}), by what percentage did the closing price change from the ex-dividend "
                      "date of its most recently implemented dividend to the most recent trading day, in percent to 2 "
                      "decimals?",
    "payout_ratio": "For {name} ({code}), what was the payout ratio of its most recently implemented cash dividend, "
                    "that is the pre-tax cash dividend per share divided by the basic EPS of the period it pays for, "
                    "in percent to 2 decimals?",
    "top_close_day": "On the trading day within the last 20 sessions when {name} ({code}) closed highest, what was "
                     "its highest price, in CNY to 2 decimals?",
    "fx_convert": "What was the turnover value of {name} ({code}) on the most recent Hong Kong trading day, converted "
                  "into CNY at that day's closing USD/CNH and USD/HKD bid rates, in millions of CNY to 2 decimals?",
    "nav_premium": "What was the premium of the closing price of {name} ({code}) over its NAV per unit on the most "
                   "recent trading day whose NAV has been published, a discount being negative, in percent to 2 "
                   "decimals?",
    # The figure on another data set's page: read as a snapshot that many sessions back.
    "top_close_day_other": "On the trading day within the last 20 sessions when {name} ({code}) closed highest, what "
                           "was its turnover rate, in percent to 2 decimals?",
}


# --------------------------------------------------------------------------- shapes and pages

def test_each_chain_shape_is_read_from_the_served_text() -> None:
    def shape(text: str, **kw):
        return read_chain_shape(served_question(text, **kw))

    assert shape(TEXTS["fund_industry"].format(name="霁渺价值精选混合", code="010733.OF"), entity="010733.OF") == (
        "fund_industry", {"subj": "霁渺价值精选混合 (010733.OF)", "n": "5"})
    assert shape(TEXTS["report_change"].format(name="Halora Media", code="HLR"))[0] == "report_change"
    assert shape(TEXTS["report_high"].format(name="珩翊保险"))[0] == "report_high"  # the short name alone
    assert shape(TEXTS["ex_date_change"].format(name="翊垚酒业", code="000689.SZ"))[0] == "ex_date_change"
    assert shape(TEXTS["nav_premium"].format(name="珂瑭红利ETF", code="159427.SZ"))[0] == "nav_premium"
    assert shape("What was the closing price of X控股 (00829.HK) on the most recent Hong Kong trading day, converted "
                 "into CNY at that day's closing USD/CNH and USD/HKD bid rates, in CNY to 2 decimals?")[0] == "fx_convert"
    assert shape(TEXTS["payout_ratio"].format(name="曦璟电器", code="001092.SZ"))[0] == "payout_ratio"
    top = shape("On the trading day within the last 20 sessions when 芷筠食品 (301494.SZ) closed highest, what was its "
                "active buying volume of small orders, as a whole number of 100-share lots?")
    assert top == ("top_close_day", {"n": "20", "subj": "芷筠食品 (301494.SZ)",
                                     "noun": "active buying volume of small orders",
                                     "tail": ", as a whole number of 100-share lots?"})
    # Other shapes are not chains of this module (the close on the ex-date is the navigator's own).
    for other in ("What was the closing price of X (000633.SZ) on the ex-dividend date of its most recently "
                  "implemented dividend, in CNY to 2 decimals?",
                  "What was the closing price of X (600001.SH) on the most recent trading day, in CNY to 2 decimals?"):
        assert shape(other) is None


def _items(*records: dict[str, str], english: bool = False) -> str:
    head = ("Item", "Value", "Unit") if english else ("项目", "数值", "单位")
    out = []
    for record in records:
        rows = "".join(f"<tr><td>{k}</td><td>{v}</td><td></td></tr>" for k, v in record.items())
        out.append(f"<table><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr>{rows}</table>")
    return "".join(out)


def test_the_hops_read_the_exchanges_labels() -> None:
    # A report: the announcement date, in either language; the EPS of the indicators' table (the
    # one printing the book value per share), not the income statement's line.
    report = parse_page(_items({"公告日期": "20261023", "报告期": "20260930", "基本每股收益": "0.5"},
                               {"公告日期": "20261023", "基本每股收益": "0.25", "每股净资产": "3.1"}))
    assert report_announcement(report, "income") == "20261023"
    assert fina_eps(report) == 0.25
    english = parse_page(_items({"announcement date": "20260814", "report period end": "20260630"}, english=True))
    assert report_announcement(english, "hk_income") == "20260814"
    assert report_announcement(parse_page(_items({"报告期": "20260930"})), "income") is None
    # The dividend implemented last by its announcement, not a plan nor an older payment.
    dividend = parse_page(_items(
        {"分红年度": "20251231", "预案公告日": "20260701", "实施进度": "股东大会通过", "每股税前现金分红": "0.9"},
        {"分红年度": "20251231", "预案公告日": "20260609", "实施进度": "实施", "每股税前现金分红": "0.047",
         "除权除息日": "20260615"},
        {"分红年度": "20241231", "预案公告日": "20250724", "实施进度": "实施", "每股税前现金分红": "0.054",
         "除权除息日": "20250730"}))
    record = latest_implemented(dividend)
    assert record is not None
    assert [record_value(record, "dividend", f) for f in ("cash_div_tax", "ex_date", "end_date")] == [
        "0.047", "20260615", "20251231"]
    assert latest_implemented(parse_page(_items({"预案公告日": "20260701", "实施进度": "预案"}))) is None
    # A fund's latest NAV is dated by its NAV date, not by its publication date.
    nav = parse_page(_items({"公告日期": "20261201", "净值日期": "20261130", "单位净值": "4.7339"})
                     + "<table><tr><th>日期</th><th>单位净值 (CNY)</th></tr><tr><td>20261130</td><td>4.7339</td></tr>"
                       "<tr><td>20261127</td><td>4.7513</td></tr></table>")
    assert latest_nav(nav) == ("20261130", 4.7339)
    # The industry a profile names; an index's members, a removed one no longer.
    assert stock_industry(parse_page(_items({"地域": "北京", "所属行业": "专用机械"}))) == "专用机械"
    members = parse_page(_items({"成分股代码": "300660.SZ", "纳入日期": "20130826", "剔除日期": "--"},
                                {"成分股代码": "300187.SZ", "纳入日期": "20120104", "剔除日期": "20220104"})
                         + "<table><tr><th>成分股代码</th><th>成分股名称</th><th>纳入日期</th><th>剔除日期</th></tr>"
                           "<tr><td>603667.SH</td><td>琰筠机械</td><td>20061227</td><td>--</td></tr>"
                           "<tr><td>600909.SH</td><td>翊翎机械</td><td>20061227</td><td>20101227</td></tr></table>")
    assert [lists_member(members, c) for c in ("300660.SZ", "300187.SZ", "603667.SH", "600909.SH", "000001.SZ")] == [
        True, False, True, False, False]


# --------------------------------------------------------------------------- end to end

def _question(n: int, program: Program, entity: str, asset_class: str, unit: str) -> Question:
    return Question(qid=f"ls-{n:016x}", question="hand-made", program=program,
                    match=MatchRule(rule="approx", unit=unit, decimals=2), refresh_class="daily", tier="T3",
                    asset_class=asset_class, entity=entity, entity_name="x", visibility=0,
                    signature=f"sig-{n}", provenance=Provenance(verbalizer="template"))


class Case:
    """An obscure dividend payer, an obscure Hong Kong stock, and a fund with its largest holding
    and that stock's industry index; one question of each chain over them, with its gold."""

    def __init__(self) -> None:
        self.stock, self.ex_date = _old_dividend_payer()
        self.hk = pick("hk_equity", 0).code
        self.fund = pick("fund", 0).code
        self.etf = next(e.code for e in sorted(shared_market(DEFAULT_SEED).universe.entities, key=lambda e: e.code)
                        if e.asset_class == "fund" and not e.code.endswith(".OF"))  # a listed fund: it has a close
        svc = service()
        holdings = svc.call("fund_portfolio", {"ts_code": self.fund, "start_date": "20250101",
                                               "end_date": CLOCK.strftime("%Y%m%d")})["items"]
        newest = max(r["ann_date"] for r in holdings)
        self.holding = max((r for r in holdings if r["ann_date"] == newest), key=lambda r: r["mkv"])["symbol"]
        self.index = max(svc.call("index_member", {"ts_code": self.holding})["items"],
                         key=lambda r: r["in_date"])["index_code"]
        ex_date = ValueRef(call="c1", select=IMPLEMENTED, field="ex_date", aggregate="last")
        period = ValueRef(call="c1", select=IMPLEMENTED, field="end_date", aggregate="last")
        announced = ValueRef(call="c1", select=Selection(mode="latest", key="end_date"), field="ann_date")
        lookback = {"start_date": DateSpec(days_back=800), "end_date": DateSpec(days_back=0)}

        def until_now(calendar: str = "XSHG") -> dict[str, DateSpec]:
            return {"end_date": DateSpec(sessions_back=0, calendar=calendar)}

        def since(statement: str, bars: str, code: str, calendar: str, aggregate: str, fmt: Format) -> Program:
            return Program(calls=[Call(id="c1", tool=statement, args={"ts_code": code}, dates=lookback),
                                  Call(id="c2", tool=bars, args={"ts_code": code}, dates=until_now(calendar),
                                       refs={"start_date": announced})],
                           extract=Extractor(call="c2", select=ALL, field="close", aggregate=aggregate, format=fmt))

        top = ValueRef(call="c1", select=Selection(mode="latest", key="ann_date"), field="mkv", aggregate="argmax",
                       arg_field="symbol")
        industry = ValueRef(call="c2", select=Selection(mode="latest", key="in_date"), field="index_code")
        window = {"start_date": DateSpec(sessions_back=5, calendar="XSHG"),
                  "end_date": DateSpec(sessions_back=0, calendar="XSHG")}
        last20 = {"start_date": DateSpec(sessions_back=19, calendar="XSHG"),
                  "end_date": DateSpec(sessions_back=0, calendar="XSHG")}
        highest = ValueRef(call="c1", select=ALL, field="close", aggregate="argmax")
        last10 = {"start_date": DateSpec(sessions_back=9, calendar="XSHG"),
                  "end_date": DateSpec(sessions_back=0, calendar="XSHG")}

        def fx(pair: str) -> ValueRef:
            return ValueRef(call="c2", select=Selection(mode="latest", key="trade_date", where={"ts_code": f"{pair}.FXCM"}),
                            field="bid_close")
        s = self.stock
        self.cases: dict[str, tuple[Question, str, str]] = {
            "fund_industry": (_question(1, Program(
                calls=[Call(id="c1", tool="fund_portfolio", args={"ts_code": self.fund}, dates=lookback),
                       Call(id="c2", tool="index_member", refs={"ts_code": top}),
                       Call(id="c3", tool="index_daily", refs={"ts_code": industry}, dates=window)],
                extract=Extractor(call="c3", select=ALL, field="close", aggregate="pct_change", format=PERCENT)),
                self.fund, "fund", "%"), self.fund, "fund"),
            "report_change": (_question(2, since("hk_income", "hk_daily", self.hk, "XHKG", "pct_change", PERCENT),
                                        self.hk, "hk_equity", "%"), self.hk, "hk_equity"),
            "report_high": (_question(3, since("income", "daily", s, "XSHG", "max", PRICE), s, "cn_equity", "CNY"),
                            s, "cn_equity"),
            "ex_date_change": (_question(4, Program(
                calls=[Call(id="c1", tool="dividend", args={"ts_code": s}),
                       Call(id="c2", tool="daily", args={"ts_code": s}, dates=until_now(),
                            refs={"start_date": ex_date})],
                extract=Extractor(call="c2", select=ALL, field="close", aggregate="pct_change", format=PERCENT)),
                s, "cn_equity", "%"), s, "cn_equity"),
            "payout_ratio": (_question(5, Program(
                calls=[Call(id="c1", tool="dividend", args={"ts_code": s}),
                       Call(id="c2", tool="fina_indicator", args={"ts_code": s}, refs={"period": period})],
                extract=Extractor(call="c1", select=IMPLEMENTED, field="cash_div_tax", aggregate="last",
                                  format=Format(kind="percent", decimals=2, scale=100.0),
                                  combine=Combine(op="ratio", other=ValueRef(
                                      call="c2", select=Selection(mode="latest", key="end_date"), field="eps")))),
                s, "cn_equity", "%"), s, "cn_equity"),
            "top_close_day": (_question(6, Program(
                calls=[Call(id="c1", tool="daily", args={"ts_code": s}, dates=last20),
                       Call(id="c2", tool="daily", args={"ts_code": s}, refs={"trade_date": highest})],
                extract=Extractor(call="c2", select=Selection(mode="latest", key="trade_date"), field="high",
                                  format=PRICE)), s, "cn_equity", "CNY"), s, "cn_equity"),
            "fx_convert": (_question(8, Program(
                calls=[Call(id="c1", tool="hk_daily_adj", args={"ts_code": self.hk},
                            dates={"start_date": DateSpec(sessions_back=9, calendar="XHKG"),
                                   "end_date": DateSpec(sessions_back=0, calendar="XHKG")}),
                       Call(id="c2", tool="fx_daily", refs={"trade_date": ValueRef(
                           call="c1", select=Selection(mode="latest", key="trade_date"), field="trade_date")})],
                extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="amount",
                                  format=Format(kind="number", decimals=2, unit="million CNY", scale=1e-6),
                                  combine=Combine(op="product", other=fx("USDCNH"), then=Combine(
                                      op="ratio", other=fx("USDHKD"))))),
                self.hk, "hk_equity", "million CNY"), self.hk, "hk_equity"),
            "nav_premium": (_question(9, Program(
                calls=[Call(id="c1", tool="fund_nav", args={"ts_code": self.etf}, dates=last10),
                       Call(id="c2", tool="fund_daily", args={"ts_code": self.etf}, refs={"trade_date": ValueRef(
                           call="c1", select=Selection(mode="latest", key="nav_date"), field="nav_date")})],
                extract=Extractor(call="c2", select=Selection(mode="latest", key="trade_date"), field="close",
                                  format=PERCENT, combine=Combine(op="pct_difference", other=ValueRef(
                                      call="c1", select=Selection(mode="latest", key="nav_date"),
                                      field="unit_nav")))),
                self.etf, "fund", "%"), self.etf, "fund"),
            "top_close_day_other": (_question(7, Program(
                calls=[Call(id="c1", tool="daily", args={"ts_code": s}, dates=last20),
                       Call(id="c2", tool="daily_basic", args={"ts_code": s}, refs={"trade_date": highest})],
                extract=Extractor(call="c2", select=Selection(mode="latest", key="trade_date"),
                                  field="turnover_rate", format=PERCENT)), s, "cn_equity", "%"), s, "cn_equity"),
        }

    def served(self, shape: str) -> ServedQuestion:
        question, code, asset_class = self.cases[shape]
        # The entity's own name (a text that names it alone is resolved by searching it, issue 39); the
        # served record's entity is not its code: the navigator reads the code off the text or the web.
        name = shared_market(DEFAULT_SEED).universe.get(code).name
        return ServedQuestion(qid=question.qid, question=TEXTS[shape].format(name=name, code=code), tier="T3",
                              asset_class=asset_class, refresh_class="daily", visibility=0, entity="000000.XX")



@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory):
    built = Case()
    questions = [q for q, _, _ in built.cases.values()]
    answers = gold_of(questions)
    assert [a.status for a in answers] == ["ok"] * len(questions), [a.error for a in answers]
    entities = tuple(sorted({built.stock, built.hk, built.fund, built.holding, built.index, built.etf}))
    config = CorpusConfig(clock=CLOCK, history_sessions=5, entities=entities, tools=TOOLS, market_tools=("fx_daily",),
                          history_from=history_from(questions, answers))
    directory = build_web(config, tmp_path_factory.mktemp("web"), workers=1).directory
    return built, {a.qid: a for a in answers}, directory


def _answer(directory: Path, served: ServedQuestion, budget: int | None):
    async def run():
        async with open_navigator(web_dir=directory, day=CLOCK, name="navigator", read_budget=budget,
                                  allow_partial_web=True) as agent:
            return await agent.answer(served)
    return asyncio.run(run())


@pytest.mark.parametrize("shape", list(TEXTS))
def test_each_chain_is_answered_from_the_pages_without_a_budget(case, shape: str) -> None:
    built, gold, directory = case
    question = built.cases[shape][0]
    served = built.served(shape)
    prediction = _answer(directory, served, None)
    answer = gold[question.qid]
    outcome = match_answer(question.match, answer.value, prediction.answer, gold_unit=answer.unit)
    assert outcome.correct, (shape, prediction.answer, answer.answer, prediction.trace[-4:])
    fetched = [t["url"] for t in prediction.trace if t.get("tool") == "fetch_page"]
    assert prediction.trace[-1]["reads"] == len(fetched) >= 2, "every hop reads its page"
    # Visibility 0: the exchange's pages (and the day's official FX release).
    assert all("/exchange/" in url or "/stats/fx_daily/" in url for url in fetched), fetched


def test_a_chain_fails_at_too_small_a_budget_and_succeeds_with_enough(case) -> None:
    built, gold, directory = case
    for shape in ("fund_industry", "report_high"):
        served = built.served(shape)
        full = _answer(directory, served, None)
        reads = full.trace[-1]["reads"]
        assert full.answer is not None and reads >= 3
        assert _answer(directory, served, reads).answer == full.answer
        short = _answer(directory, served, reads - 1)
        assert short.answer is None and f"budget of {reads - 1}" in short.trace[-1]["reason"]
        reads_made = [t for t in short.trace if t.get("tool") == "fetch_page"]
        assert sum(1 for t in reads_made if not t.get("refused")) == reads - 1
        assert [t for t in reads_made if t.get("refused")], "the read beyond the budget is refused and recorded"
    # The industry chain reads the portfolio (an obscure fund's: no holdings page, which its company
    # page does not link and no search finds, so its newest report from the company page, walked to
    # the holdings), then the holding's profile, the index's members and quotes.
    trace = _answer(directory, built.served("fund_industry"), None).trace
    fetched = [t["url"] for t in trace if t.get("tool") == "fetch_page"]
    kinds = [u.split("/exchange/")[1].split("/")[0] for u in fetched]
    assert kinds[:2] == ["company", "reports"] and len(fetched) == len(set(fetched))
    profile = kinds.index("stock_basic")
    # The holding's profile page, when no search finds it, through the holding's company page.
    walk = kinds[1:profile - 1] if kinds[profile - 1] == "company" else kinds[1:profile]
    assert set(walk) == {"reports"}, fetched
    assert fetched[profile - 1].endswith(f"/company/{built.holding}.html") or kinds[profile - 1] == "reports"
    # Then the industry index's members and its quotes (each, when no search finds it, through the
    # index's company page, read once).
    rest = [k for k in kinds[profile:] if k != "company"]
    assert rest[:3] == ["stock_basic", "index_member", "index_daily"], fetched
    assert any(f"/exchange/index_member/{built.index}.html" in url for url in fetched)
    assert len(fetched) == len(set(fetched)), "no page is read twice for one question"
