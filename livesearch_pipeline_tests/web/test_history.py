"""Monthly quote histories: chains over a dividend's ex-date months back and a window since a
report announced ~75 sessions back have their evidence on the web of an obscure entity (its
exchange's pages only); `last`/`first` need only their deciding record; the pages are published
on their month's last session, never after the clock, and name neither the generator nor a tool."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from livesearch_pipeline.core.calendars import session_on_or_before, sessions_back
from livesearch_pipeline.core.models import (
    Call, Combine, DateSpec, Extractor, Format, MatchRule, Program, Provenance, Question, Selection, ValueRef,
)
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.web.audit import pages_giving_the_game_away
from livesearch_pipeline.web.build import build_web
from livesearch_pipeline.web.bulletins import BULLETIN_SESSIONS
from livesearch_pipeline.web.corpus import CorpusConfig
from livesearch_pipeline.web.evidence import build_evidence_map, deciding_records
from livesearch_pipeline.web.index import WebIndex
from livesearch_pipeline.web.needs import history_from
from livesearch_pipeline.web.pages import RECENT_HISTORY_MONTHS
from livesearch_pipeline.web.reader import month_start
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, gold_of, pick, service

TOOLS = ("daily", "dividend", "income", "fina_indicator", "hk_daily", "hk_income")
PERCENT = Format(kind="percent", decimals=2)
IMPLEMENTED = Selection(mode="all", key="ann_date", where={"div_proc": "实施"})
RECENT_START = month_start(CLOCK, RECENT_HISTORY_MONTHS - 1)


def _old_dividend_payer() -> tuple[str, str]:
    """A visibility-0 A-share whose latest implemented dividend went ex before the recent months."""
    svc = service()
    for entity in sorted(shared_market(DEFAULT_SEED).universe.entities, key=lambda e: e.code):
        if entity.asset_class != "cn_equity" or entity.visibility != 0:
            continue
        done = [r for r in svc.call("dividend", {"ts_code": entity.code})["items"] if r["div_proc"] == "实施"]
        if done:
            ex_date = max(done, key=lambda r: r["ann_date"])["ex_date"]
            if (CLOCK - dt.timedelta(days=500)).strftime("%Y%m%d") < ex_date < RECENT_START.strftime("%Y%m%d"):
                return entity.code, ex_date
    raise AssertionError("no visibility-0 A-share paid its last dividend before the recent months")


def _question(n: int, program: Program, entity: str) -> Question:
    return Question(qid=f"ls-{n:016x}", question="hand-made", program=program,
                    match=MatchRule(rule="approx", abs_tol=0.01), refresh_class="daily", tier="T3",
                    asset_class="cn_equity", entity=entity, entity_name="x", visibility=0,
                    signature=f"sig-{n}", provenance=Provenance(verbalizer="template"))


def _questions(stock: str, hk: str) -> list[Question]:
    ex_date = ValueRef(call="c1", select=IMPLEMENTED, field="ex_date", aggregate="last")
    period = ValueRef(call="c1", select=IMPLEMENTED, field="end_date", aggregate="last")
    announced = ValueRef(call="c1", select=Selection(mode="latest", key="end_date"), field="ann_date")
    until_now = {"end_date": DateSpec(sessions_back=0, calendar="XSHG")}
    return [
        # The close on the ex-date of the latest implemented dividend.
        _question(1, Program(calls=[Call(id="c1", tool="dividend", args={"ts_code": stock}),
                                    Call(id="c2", tool="daily", args={"ts_code": stock}, refs={"trade_date": ex_date})],
                             extract=Extractor(call="c2", select=Selection(mode="latest", key="trade_date"),
                                               field="close", format=Format(kind="number", decimals=2))), stock),
        # The return since that ex-date (a window of months).
        _question(2, Program(calls=[Call(id="c1", tool="dividend", args={"ts_code": stock}),
                                    Call(id="c2", tool="daily", args={"ts_code": stock}, dates=until_now,
                                         refs={"start_date": ex_date})],
                             extract=Extractor(call="c2", select=Selection(mode="all", key="trade_date"),
                                               field="close", aggregate="pct_change", format=PERCENT)), stock),
        # The payout ratio: the latest implemented cash dividend over the EPS of its period.
        _question(3, Program(calls=[Call(id="c1", tool="dividend", args={"ts_code": stock}),
                                    Call(id="c2", tool="fina_indicator", args={"ts_code": stock},
                                         refs={"period": period})],
                             extract=Extractor(call="c1", select=IMPLEMENTED, field="cash_div_tax", aggregate="last",
                                               format=PERCENT, combine=Combine(op="ratio", other=ValueRef(
                                                   call="c2", select=Selection(mode="latest", key="end_date"),
                                                   field="eps")))), stock),
        # A Hong Kong return since the latest report's announcement (~75 sessions back).
        _question(4, Program(calls=[Call(id="c1", tool="hk_income", args={"ts_code": hk},
                                         dates={"start_date": DateSpec(days_back=800),
                                                "end_date": DateSpec(days_back=0)}),
                                    Call(id="c2", tool="hk_daily", args={"ts_code": hk},
                                         dates={"end_date": DateSpec(sessions_back=0, calendar="XHKG")},
                                         refs={"start_date": announced})],
                             extract=Extractor(call="c2", select=Selection(mode="all", key="trade_date"),
                                               field="close", aggregate="pct_change", format=PERCENT)), hk),
    ]



@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory):
    stock, ex_date = _old_dividend_payer()
    hk = pick("hk_equity", 0).code
    questions = _questions(stock, hk)
    answers = gold_of(questions)
    assert [a.status for a in answers] == ["ok"] * len(questions), [a.error for a in answers]
    config = CorpusConfig(clock=CLOCK, history_sessions=5, entities=(stock, hk), tools=TOOLS, market_tools=(),
                          history_from=history_from(questions, answers))
    directory = build_web(config, tmp_path_factory.mktemp("web"), workers=1).directory
    return stock, ex_date, hk, questions, answers, directory


def test_chains_months_back_have_their_evidence_at_visibility_zero(case) -> None:
    stock, ex_date, hk, questions, answers, directory = case
    assert dict(history_from(questions, answers))[stock] == f"{ex_date[:4]}-{ex_date[4:6]}"
    mapped = build_evidence_map(directory, questions, answers, seed=DEFAULT_SEED, gold_sha256="test")
    entries = [mapped["questions"][q.qid] for q in questions]
    for entry in entries:
        assert entry["present"], entry["links"]
        assert all(page.startswith("/exchange/") for page in entry["pages"]), "visibility 0: exchange pages only"
    month = f"{ex_date[:4]}-{ex_date[4:6]}"
    close_on_ex_date = entries[0]["links"][0]
    assert close_on_ex_date["records"] == 1
    assert f"/exchange/daily/{stock}/history/{month}.html" in close_on_ex_date["pages"]
    # The dividend link is the deciding record only (the latest implemented one), not every
    # dividend since the listing.
    assert [link["records"] for link in entries[0]["links"] if link["tool"] == "dividend"] == [1]
    assert all(link["records"] == 1 for link in entries[2]["links"])
    # The change since an ex-date months back: its two ends decide it (the close on the ex-date
    # and the latest), not every session between.
    assert entries[1]["links"][0]["records"] == 2, "the change since an ex-date months back: its two ends"
    window = entries[3]["links"][0]
    assert window["records"] == 2 and window["present"]  # a return over a long window: its two ends
    # Visibility 0: the window's latest close is on the exchange's quote page (or its bulletins),
    # its first, months back, on a monthly page before the bulletins' reach.
    cover = mapped["questions"][questions[3].qid]["cover"]
    assert any(f"/exchange/hk_daily/{hk}/history/" in p for p in cover), cover
    assert all(p.startswith("/exchange/") for p in cover)


def test_without_the_needed_months_the_old_records_are_missing(case, tmp_path: Path) -> None:
    stock, _, _, questions, answers, _ = case
    config = CorpusConfig(clock=CLOCK, history_sessions=5, entities=(stock,), tools=TOOLS, market_tools=())
    directory = build_web(config, tmp_path, workers=1).directory
    mapped = build_evidence_map(directory, questions[:2], answers[:2], seed=DEFAULT_SEED, gold_sha256="test")
    assert [e["present"] for e in mapped["questions"].values()] == [False, False]


def test_monthly_pages_are_published_on_their_last_session_and_browsable(case) -> None:
    stock, ex_date, _, _, _, directory = case
    index = WebIndex(directory)
    rows = index._connection().execute(
        "SELECT path, published FROM pages WHERE path LIKE ? ORDER BY path", (f"/exchange/daily/{stock}/history/%",)
    ).fetchall()
    months = [re.search(r"(\d{4}-\d{2})\.html$", path).group(1) for path, _ in rows]
    # Visibility 0: the monthly pages stop where the bulletins (the last BULLETIN_SESSIONS sessions) begin.
    since = sessions_back("XSHG", session_on_or_before("XSHG", CLOCK), BULLETIN_SESSIONS - 1)
    assert months[0] < f"{ex_date[:4]}-{ex_date[4:6]}" and months[-1] == f"{since.year}-{since.month:02d}"
    daily = {r["trade_date"] for r in service().call("daily", {"ts_code": stock, "start_date": "20240101",
                                                              "end_date": CLOCK.strftime("%Y%m%d")})["items"]}
    for (path, published), month in zip(rows, months):
        last = max(d for d in daily if d[:6] == month.replace("-", "") and d < since.strftime("%Y%m%d"))
        assert published == f"{last[:4]}-{last[4:6]}-{last[6:]}" and published <= CLOCK.isoformat()
    middle = index.page(rows[1][0])
    assert f'href="{rows[0][0]}"' in middle.html and f'href="{rows[2][0]}"' in middle.html
    for linking in (f"/exchange/daily/{stock}.html", f"/exchange/company/{stock}.html"):
        assert f'href="{rows[0][0]}"' in index.page(linking).html
    assert list(pages_giving_the_game_away(index)) == []
    assert all(p <= CLOCK.isoformat() for (p,) in index._connection().execute("SELECT published FROM pages"))


def test_last_and_first_need_only_their_deciding_record() -> None:
    records = [{"d": "1", "v": 1.0}, {"d": "2", "v": 2.0}, {"d": "3", "v": None}]
    ref = ValueRef(call="c1", select=Selection(mode="all", key="d", key_fmt="%d"), field="v", aggregate="last")
    assert deciding_records(ref, records) == [records[1]]
    assert deciding_records(ref.model_copy(update={"aggregate": "first"}), records) == [records[0]]
    assert deciding_records(ref.model_copy(update={"aggregate": "argmax"}), records) == records
    assert deciding_records(ref.model_copy(update={"aggregate": "mean"}), records) == records


def test_the_months_from_executing_the_pool_are_the_gold_s(case) -> None:
    # Built before D's gold is frozen, the web executes the pool at D: the same arguments.
    # Only the questions that may read before the recent months are executed.
    from livesearch_pipeline.web.needs import _execute, may_reach_back

    stock, _, _, questions, answers, _ = case
    reaching = [q for q in questions if may_reach_back(q)]
    executed = history_from(reaching, _execute(reaching, CLOCK, DEFAULT_SEED), CLOCK)
    assert executed == history_from(questions, answers, CLOCK) and stock in dict(executed)
    near = Program(calls=[Call(id="c1", tool="daily", args={"ts_code": stock},
                               dates={"start_date": DateSpec(sessions_back=9, calendar="XSHG"),
                                      "end_date": DateSpec(sessions_back=0, calendar="XSHG")})],
                   extract=Extractor(call="c1", select=Selection(mode="all", key="trade_date"), field="close",
                                     aggregate="mean", format=PERCENT))
    assert not may_reach_back(_question(9, near, stock))
    assert [may_reach_back(q) for q in questions] == [True, True, False, True], "the payout ratio reads no quote"
