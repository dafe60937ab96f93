"""The web baselines find a code-free question's entity through a search (issue 39,
evaluation/agents/entity_search.py): the names a text gives, the code the results tie to a name,
a name that fits two entities left unresolved, a former name confirmed on its name-history page,
and end to end the navigator answering a question that names its stock alone — with a served
record whose `entity` is not the stock's code, so the code can only come from the web."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from livesearch_pipeline.core.matching import match_answer
from livesearch_pipeline.core.models import (
    Call, DateSpec, Extractor, Format, MatchRule, Program, Provenance, Question, Selection,
)
from livesearch_pipeline.evaluation.agents.entity_search import given_codes, name_mentions, with_codes
from livesearch_pipeline.evaluation.agents.navigator import open_navigator
from livesearch_pipeline.evaluation.agents.reading import parse_page
from livesearch_pipeline.evaluation.agents.search_read import open_search_read_agent
from livesearch_pipeline_tests.evaluation.agents_fakes import served_question
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, build_small_web, gold_of, small_web

NOT_A_CODE = "000000.XX"  # the served record's entity: never read by the baselines


def _result(title: str, path: str, content: str = "") -> dict:
    return {"title": title, "url": f"http://web{path}", "snippet": content or title}  # as WebTools gives them


RESULTS = {
    "恒宇电气": [_result("恒宇电气（600123.SH）公司主页", "/exchange/company/600123.SH.html"),
             _result("Hengyu Electric 恒宇电气 (600123.SH) Shareholder count", "/finquote/stk_holdernumber/600123.SH.html")],
    "Hengyu Electric": [_result("恒宇电气（600123.SH）公司主页", "/exchange/company/600123.SH.html",
                                "SSE 代码 600123.SH（600123），名称：Hengyu Electric / 恒宇电气 / 恒宇。"),
                        _result("Shanghai market wrap", "/investwire/wrap.html")],
    "兰亭": [_result("兰亭食品（002456.SZ）公司主页", "/exchange/company/002456.SZ.html"),
           _result("兰亭科技（300001.SZ）公司主页", "/exchange/company/300001.SZ.html")],
    "恒宇科技": [_result("恒宇电气（600123.SH）曾用名", "/exchange/namechange/600123.SH.html"),
             _result("恒宇地产（600999.SH）公司主页", "/exchange/company/600999.SH.html")],
}
HISTORY = ("<table><tr><th>证券简称</th><th>开始日期</th><th>结束日期</th></tr>"
           "<tr><td>恒宇电气</td><td>20240601</td><td></td></tr>"
           "<tr><td>恒宇科技</td><td>20150301</td><td>20240531</td></tr></table>")


def _run(question, reads: list[str] | None = None):
    async def search(query: str) -> list[dict]:
        return RESULTS.get(query, [])

    async def read(url: str):
        if reads is not None:
            reads.append(url)
        return parse_page(HISTORY)

    return asyncio.run(with_codes(question, search, read))


def test_a_named_entity_gets_the_code_the_web_ties_to_its_name_in_both_texts():
    q = served_question("What was the closing price of 恒宇电气 on the most recent trading day, in CNY to 2 decimals?",
                        question_zh="恒宇电气最近一个交易日的收盘价是多少元？保留2位小数。", entity=NOT_A_CODE)
    resolved = _run(q)
    assert resolved.question.entity == "600123.SH"
    assert resolved.question.question.startswith("What was the closing price of 恒宇电气 (600123.SH) on ")
    assert resolved.question.question_zh.startswith("恒宇电气（600123.SH）最近一个交易日")
    # What was found (the searches and reads themselves are recorded by the agent's ledger).
    assert resolved.trace == [{"type": "entity", "names": ["恒宇电气"], "codes": ["600123.SH"]}]
    # The English name of a Chinese company: its Chinese name in the Chinese text gets the code too.
    english = served_question("For Hengyu Electric, what was the net profit margin …, in percent to 2 decimals?",
                              question_zh="恒宇电气最近一期已披露财报的净利率是多少？", entity=NOT_A_CODE)
    resolved = _run(english)
    assert resolved.question.entity == "600123.SH" and "Hengyu Electric (600123.SH)," in resolved.question.question
    assert resolved.question.question_zh.startswith("恒宇电气（600123.SH）")


def test_a_name_that_fits_two_entities_is_not_resolved():
    q = served_question("What was the closing price of 兰亭 on the most recent trading day, in CNY to 2 decimals?",
                        entity=NOT_A_CODE)
    resolved = _run(q)
    assert resolved.question is None and "no single entity" in resolved.reason


def test_a_former_name_is_confirmed_on_the_name_history_page_a_search_returns():
    reads: list[str] = []
    q = served_question("What was the closing price of the company formerly named 恒宇科技 on the most recent trading "
                        "day, in CNY to 2 decimals?", question_zh="原名恒宇科技的公司最近一个交易日的收盘价是多少元？",
                        entity=NOT_A_CODE)
    resolved = _run(q, reads)
    assert resolved.question.entity == "600123.SH" and resolved.reads == 1
    assert reads == ["http://web/exchange/namechange/600123.SH.html"]
    assert "the company formerly named 恒宇科技 (600123.SH) on" in resolved.question.question
    assert resolved.question.question_zh.startswith("原名恒宇科技（600123.SH）的公司")


def test_a_text_with_codes_is_read_as_it_is_and_a_series_needs_no_entity():
    q = served_question("What was the return of 恒宇电气 (600123.SH) minus the return of 兰亭食品 (002456.SZ) from …",
                        entity=NOT_A_CODE)
    assert _run(q).question.entity == "600123.SH"
    indices = served_question("Of the indices 000300.SH, 399001.SZ and 000905.SH, which had the highest percentage "
                              "change from the close 5 trading days before the most recent one to the most recent "
                              "close? Answer with its index code.", entity=NOT_A_CODE, asset_class="index")
    assert _run(indices).question.entity == "000300.SH"
    shibor = served_question("What was the average 1-week SHIBOR rate over the last 20 Shanghai Stock Exchange trading "
                             "days, in percent to 2 decimals?", entity="shibor", asset_class="rates_fx")
    assert _run(shibor).question == shibor


def test_the_names_and_codes_a_text_gives():
    assert given_codes("What was the P/E (TTM) of Merux Media (MRX) on …") == ["MRX"]
    assert given_codes("… of 骁芷价值精选混合 for the constituent 301494.SZ …") == []
    assert name_mentions("What were the shares held of Peilan Securities ETF for the constituent 600446.SH in the "
                         "most recent announcement? Trading days are the exchange's.") == [
        ("Peilan Securities ETF", False)]
    assert name_mentions("For the shareholder “晏子航” of the company formerly named 筠昶科技, what …") == [
        ("筠昶科技", True)]
    assert name_mentions("What was the highest closing price of 600123 since the day …, in CNY to 2 decimals?") == [
        ("600123", True)]
    # A template word inside a name stays in it; at its ends (a calendar named, the question's verb) it is not a name.
    assert name_mentions("For the constituent of the Lanji Shenzhen Composite Index with the highest weight, what …") == [
        ("Lanji Shenzhen Composite Index", False)]
    assert name_mentions("What was the average 1-week SHIBOR rate over the last 20 Shanghai Stock Exchange trading "
                         "days, in percent to 2 decimals?") == []


# --------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def web(tmp_path_factory) -> Path:
    return build_small_web(tmp_path_factory.mktemp("web"))


def _close_question(code: str) -> Question:
    program = Program(calls=[Call(id="c1", tool="daily", args={"ts_code": code},
                                  dates={"start_date": DateSpec(sessions_back=9, calendar="XSHG"),
                                         "end_date": DateSpec(sessions_back=0, calendar="XSHG")})],
                      extract=Extractor(call="c1", select=Selection(mode="latest", key="trade_date"), field="close",
                                        format=Format(kind="number", decimals=2, unit="CNY")))
    return Question(qid="ls-00000000000000c1", question="hand-made", program=program,
                    match=MatchRule(rule="approx", unit="CNY", decimals=2), refresh_class="daily", tier="T1",
                    asset_class="cn_equity", entity=code, entity_name="x", visibility=10, signature="sig",
                    provenance=Provenance(verbalizer="template"))


@pytest.mark.parametrize("agent", ["navigator", "search-read"])
def test_a_code_free_question_is_answered_through_a_search_of_its_name(web: Path, agent: str) -> None:
    stock = small_web().famous
    question = _close_question(stock.code)
    (gold,) = gold_of([question])
    served = served_question(f"What was the closing price of {stock.name} on the most recent trading day, in CNY to 2 "
                             "decimals?", question_zh=f"{stock.name}最近一个交易日的收盘价是多少元？保留2位小数。",
                             qid=question.qid, entity=NOT_A_CODE, visibility=stock.visibility)

    async def run():
        opened = (open_navigator(web_dir=web, day=CLOCK, name="navigator", read_budget=None, allow_partial_web=True)
                  if agent == "navigator" else
                  open_search_read_agent(web_dir=web, day=CLOCK, name="search-read", allow_partial_web=True))
        async with opened as baseline:
            return await baseline.answer(served)

    prediction = asyncio.run(run())
    assert match_answer(question.match, gold.value, prediction.answer, gold_unit=gold.unit).correct, (
        prediction.answer, gold.answer, prediction.trace[:4])
    assert prediction.trace[0]["query"] == stock.name  # the name searched first
    assert {"type": "entity", "names": [stock.name], "codes": [stock.code]} in prediction.trace
    assert not any(NOT_A_CODE in str(step) for step in prediction.trace)
