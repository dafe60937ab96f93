"""The generated web: point in time, visibility, noise, determinism."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter

import pytest

from livesearch_pipeline.web.corpus import CorpusConfig, Page, WebCorpusError
from livesearch_pipeline.web.generate import generate_pages
from livesearch_pipeline.web.reports import continuation_number
from livesearch_pipeline.web.sites import sources_for
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, latest_daily, small_web

EARLIER = dt.date(2026, 11, 20)
AS_OF = re.compile(r"(?:Data as of|数据截至)\s*(\d{6,8})")


@pytest.fixture(scope="module")
def web() -> list[Page]:
    return list(generate_pages(small_web().config()))


@pytest.fixture(scope="module")
def earlier_web() -> list[Page]:
    return list(generate_pages(small_web().config(clock=EARLIER)))


def _by_entity(pages: list[Page], code: str) -> list[Page]:
    return [p for p in pages if p.entity == code]


def test_no_page_is_published_or_shows_data_after_the_clock(earlier_web: list[Page]) -> None:
    assert earlier_web
    for page in earlier_web:
        assert page.published <= EARLIER, page.path
        for key in AS_OF.findall(page.text):
            assert key <= EARLIER.strftime("%Y%m%d")[: len(key)], (page.path, key)
        dated = re.search(r"/(\d{4}-\d{2}-\d{2})/", page.path)
        if dated:
            assert dt.date.fromisoformat(dated.group(1)) <= EARLIER, page.path


def test_the_web_of_a_later_clock_has_pages_the_earlier_one_lacks(web: list[Page], earlier_web: list[Page]) -> None:
    later = {p.path for p in web if p.published > EARLIER}
    assert later, "the web of the later clock publishes something after the earlier clock"
    assert not later & {p.path for p in earlier_web if p.published > EARLIER}
    # A page at the same URL on both days shows the data of its own day.
    then = {p.path: p for p in earlier_web}
    both = [p for p in web if p.kind == "quote" and p.path in then]
    assert both
    for page in both:
        assert AS_OF.search(then[page.path].text).group(1) <= EARLIER.strftime("%Y%m%d")
        assert AS_OF.search(page.text).group(1) <= CLOCK.strftime("%Y%m%d")


def test_a_fresh_quote_page_shows_the_service_figures_of_the_clock(web: list[Page]) -> None:
    famous = small_web().famous.code
    record = latest_daily(famous)
    fresh = [p for p in _by_entity(web, famous) if p.kind == "quote" and p.site in ("finquote", "caijing")
             and f"{record['trade_date']}" in p.text]
    assert fresh, "a level-10 entity has a fresh quote page on an exact portal"
    assert any(f"| {record['close']} |" in p.text for p in fresh)


def test_visibility_decides_how_hard_evidence_is_to_find_not_whether_it_exists(web: list[Page]) -> None:
    chosen = small_web()
    obscure = _by_entity(web, chosen.obscure.code)
    # A level-0 entity: its exchange's own pages only (latest quote, data, reports, filings, the
    # company page), no portal, news or forum; in Chinese, as Shanghai/Shenzhen publish.
    assert {p.site for p in obscure} == {"exchange"}
    kinds = Counter(p.kind for p in obscure)
    assert kinds["quote"] == 1 and kinds["filings"] == 1 and kinds["hub"] == 1 and kinds["report"] >= 1
    assert {p.lang for p in obscure} == {"zh"}
    quote = next(p for p in obscure if p.kind == "quote")
    record = latest_daily(chosen.obscure.code)
    assert f"| {record['close']} |" in quote.text and quote.records[0] == f"daily|{chosen.obscure.code}|{record['trade_date']}"
    # Its quote page shows the latest session only: its history is in its exchange's daily
    # bulletins (web/bulletins.py), linked from the quote page.
    assert not [line for line in quote.text.splitlines() if line.startswith("2026")], "no history table"
    assert f'href="/exchange/bulletin/{chosen.obscure.exchange}/daily/index.html"' in quote.html
    # The engine crawled few of the obscure entity's deep pages (reachable from its company page),
    # all of the famous one's; company, quote, filing and report pages are always indexed.
    assert any(not p.indexed for p in obscure)
    # (A long report's continuation pages are reached by reading on from its cover: web/reports.py.)
    assert all(p.indexed for p in obscure if p.kind in ("hub", "quote", "filings", "report")
               and continuation_number(p.path) is None)
    assert all(p.indexed for p in _by_entity(web, chosen.famous.code))
    hub = next(p for p in obscure if p.kind == "hub")
    assert all(f'href="{p.path}"' in hub.html for p in obscure if p is not hub and continuation_number(p.path) is None)
    middling, famous = _by_entity(web, chosen.middling.code), _by_entity(web, chosen.famous.code)
    # Copies, not the pages of one long report (the middling entity's reports are paginated).
    middling = [p for p in middling if continuation_number(p.path) is None]
    assert len(famous) > 2 * len(middling) > 0
    portals = lambda pages: {p.site for p in pages if p.kind in ("quote", "data", "profile", "history")} - {"exchange"}
    assert len(portals(famous)) > len(portals(middling)) >= 1
    assert len(portals(famous)) <= sources_for(10) and len(portals(middling)) <= sources_for(3)
    assert Counter(p.kind for p in famous)["news"] > Counter(p.kind for p in middling)["news"]
    assert {p.lang for p in famous} == {"en", "zh"}


def test_the_web_carries_the_noise_of_a_real_one(web: list[Page]) -> None:
    kinds = Counter(p.kind for p in web)
    assert kinds["spam"] > 0 and kinds["report"] > 0 and kinds["release"] > 0 and kinds["history"] > 0
    latest = max(k for p in web for k in AS_OF.findall(p.text) if len(k) == 8)
    stale = [p for p in web if p.kind in ("quote", "data") and p.entity and
             any(len(k) == 8 and k < latest for k in AS_OF.findall(p.text))]
    assert stale, "some portal pages lag behind the clock"
    assert any("亿元" in p.text or "million CNY" in p.text for p in web), "restated units"
    assert any("third-party" in p.text or "第三方" in p.text for p in web), "third-party feeds"


def test_generation_is_deterministic(web: list[Page]) -> None:
    again = list(generate_pages(small_web().config()))
    digest = lambda pages: [(p.path, hashlib.sha256(p.html.encode()).hexdigest()) for p in pages]
    assert digest(again) == digest(web)
    assert len({p.path for p in web}) == len(web)


def test_bad_configurations_fail_with_a_clear_message() -> None:
    with pytest.raises(WebCorpusError, match="history_sessions"):
        CorpusConfig(clock=CLOCK, history_sessions=0)
    with pytest.raises(WebCorpusError, match="NOPE.SH"):
        list(generate_pages(CorpusConfig(clock=CLOCK, entities=("NOPE.SH",), market_tools=())))
    with pytest.raises(WebCorpusError, match="not market series"):
        list(generate_pages(CorpusConfig(clock=CLOCK, entities=(), market_tools=("daily",))))


@pytest.mark.slow
def test_parallel_generation_gives_the_same_pages(web: list[Page]) -> None:
    parallel = list(generate_pages(small_web().config(), workers=2))
    assert [(p.path, p.html) for p in parallel] == [(p.path, p.html) for p in web]


def test_a_hong_kong_vwap_is_printed_as_computed_and_prices_at_their_tick() -> None:
    """A change of a volume-weighted average price can be worked out from the page: it is a
    quotient printed to four decimals, while traded prices keep their tick sizes."""
    from livesearch_pipeline.dataservice.catalog import ServiceConfig, build_catalog, collect_tool_specs
    from livesearch_pipeline.web.formatting import Look, _figure
    from livesearch_pipeline.web.sites import EXCHANGE_EN

    meta = build_catalog(collect_tool_specs(), ServiceConfig()).get("hk_daily_adj")
    look = Look(EXCHANGE_EN, None)
    vwap, close = meta.field("vwap"), meta.field("close")
    assert _figure(look, vwap, 1.2346, 1, "s", meta)[0] == "1.2346"  # the service computes it to 4 decimals
    assert _figure(look, close, 1.2346, 1, "s", meta)[0] == "1.23"
