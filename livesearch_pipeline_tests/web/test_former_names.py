"""A company's former names on the offline web (issue 39): a question may name a company by a
former name `namechange` records, so the exchange prints its whole name history and its company
page lists the former names, and a search for a former name finds that page."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.web.build import build_web
from livesearch_pipeline.web.corpus import CorpusConfig
from livesearch_pipeline.web.index import WebIndex
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, service


def _renamed() -> tuple[str, str, str]:
    """(code, current name, former name) of the first A-share renamed long before the clock."""
    svc = service()
    for e in sorted(shared_market(DEFAULT_SEED).universe.of_class("cn_equity"), key=lambda e: e.code):
        rows = svc.call("namechange", {"ts_code": e.code})["items"]
        ended = [r for r in rows if r.get("end_date") and r["end_date"] < "20260101"]
        if ended and e.visibility <= 3:
            return e.code, rows[0]["name"], ended[0]["name"]
    raise AssertionError("no renamed A-share in the embedded market")


@pytest.fixture(scope="module")
def renamed_web(tmp_path_factory) -> tuple[Path, tuple[str, str, str]]:
    code, current, former = _renamed()
    config = CorpusConfig(clock=CLOCK, history_sessions=5, entities=(code,), tools=("daily", "namechange"),
                          market_tools=())
    return build_web(config, tmp_path_factory.mktemp("web"), workers=1).directory, (code, current, former)


def test_the_exchange_prints_the_whole_name_history_and_the_company_page_the_former_names(renamed_web):
    directory, (code, current, former) = renamed_web
    index = WebIndex(directory)
    history = index.page(f"/exchange/namechange/{code}.html")
    assert history is not None and former in history.html and current in history.html
    hub = index.page(f"/exchange/company/{code}.html")
    assert hub is not None and f"曾用名：{former}" in hub.html
    # A search for the former name finds the company page, whose title gives the code.
    hits = index.search(former)
    assert hits and hits[0].path == f"/exchange/company/{code}.html" and code in hits[0].title
    assert former in hits[0].snippet
    assert dt.date.fromisoformat(str(history.published)) <= CLOCK
