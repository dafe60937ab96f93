"""The effort is the exact fewest reads (web/effort.py): a lower bound the greedy cover is not, with
walks through unindexed pages counted, alternative walks taken into account, and a window's change
decided by its two ends only."""

from __future__ import annotations

from livesearch_pipeline.core.models import ValueRef
from livesearch_pipeline.web.effort import minimum_reads
from livesearch_pipeline.web.evidence import (
    PRE_CLOSE, Link, Walks, cover_items, deciding_records, effort_cover, next_session_key,
)


def _parents(graph: dict[str, list[str]]):
    return lambda page: graph.get(page, [])


def test_the_exact_minimum_beats_the_greedy_cover_where_greedy_is_wrong() -> None:
    # The classic trap: one big page shows 4 of 6 items, two small pages show 3 each and cover all.
    needed = {1, 2, 3, 4, 5, 6}
    shows = {"/big": {1, 2, 3, 4}, "/left": {1, 2, 5}, "/right": {3, 4, 6}}
    greedy = effort_cover([], {})  # no links: nothing needed
    assert greedy == []
    upper = ["/big", "/left", "/right"]  # what the greedy rule picks (most items first)
    effort = minimum_reads(needed, shows, frozenset(), _parents({}), upper)
    assert effort is not None and effort.exact
    assert effort.reads == 2 and set(effort.pages) == {"/left", "/right"}


def test_an_unindexed_page_costs_the_walk_to_it_and_a_shared_walk_once() -> None:
    # /cover (indexed) -> /p1 -> /p2 -> /p3: records on /p2 and /p3; a portal page shows the /p3 one.
    graph = {"/p1": ["/cover"], "/p2": ["/p1", "/p3"], "/p3": ["/p2"]}
    hidden = frozenset({"/p1", "/p2", "/p3"})
    shows = {"/p2": {"a"}, "/p3": {"b"}, "/portal": {"b"}}
    effort = minimum_reads({"a", "b"}, shows, hidden, _parents(graph), ["/cover", "/p1", "/p2", "/p3"])
    assert effort is not None and effort.exact
    # The cover, p1 and p2 (three reads) then p3 or the portal: four either way.
    assert effort.reads == 4
    assert effort.pages[:3] == ("/cover", "/p1", "/p2")
    # The mutual links p2 <-> p3 do not let the two pages reach each other without the cover.
    only_b = minimum_reads({"a"}, {"/p2": {"a"}}, hidden, _parents(graph), ["/cover", "/p1", "/p2"])
    assert only_b is not None and only_b.reads == 3


def test_a_second_route_to_an_unindexed_page_is_found() -> None:
    # /bulletin (hidden) is linked from its archive (hidden, two reads from /index) and from /company
    # (indexed): the company route is the shorter.
    graph = {"/archive": ["/index"], "/bulletin": ["/archive", "/company"]}
    hidden = frozenset({"/archive", "/bulletin"})
    shows = {"/bulletin": {"x"}, "/company": set()}
    effort = minimum_reads({"x"}, shows, hidden, _parents(graph), ["/index", "/archive", "/bulletin"])
    assert effort is not None and effort.reads == 2 and effort.pages == ("/company", "/bulletin")


def test_nothing_needed_and_nothing_reachable() -> None:
    assert minimum_reads(set(), {}, frozenset(), _parents({}), None).reads == 0
    assert minimum_reads({"x"}, {"/p": {"x"}}, frozenset({"/p"}), _parents({}), None) is None


def test_a_windows_change_is_decided_by_its_two_ends() -> None:
    records = [{"trade_date": f"202611{d:02d}", "close": 10.0 + d} for d in range(1, 22)]
    change = ValueRef(call="c1", select={"mode": "all", "key": "trade_date"}, field="close", aggregate="pct_change")
    mean = ValueRef(call="c1", select={"mode": "all", "key": "trade_date"}, field="close", aggregate="mean")
    assert [r["trade_date"] for r in deciding_records(change, records)] == ["20261101", "20261121"]
    assert len(deciding_records(mean, records)) == 21


def test_a_snippet_showing_a_record_costs_no_read() -> None:
    keys = ("daily|X|20261120", "daily|X|20261121")
    link = Link("extract", "c1", "daily", "X", "close", keys, (10.5, 11.0), (), ())
    pages_of = {keys[0]: ["/q/X.html"], keys[1]: ["/q/X.html", "/news/X.html"]}
    free = frozenset({(0, keys[1])})
    needed, shows = cover_items([link], pages_of, free)
    assert needed == {(0, keys[0])} and shows["/news/X.html"] == set()
    walks = Walks(frozenset(), lambda page: [])
    assert effort_cover([link], pages_of, walks, free) == ["/q/X.html"]


def test_a_close_is_shown_again_as_the_next_sessions_previous_close() -> None:
    """A careful searcher read a 30-session window's closes from every other day's bulletin (each
    prints the session before's close as its previous close): the effort counts that, so no
    reader answers in fewer reads than the effort."""
    assert next_session_key("daily|600000.SH|20261127") == "daily|600000.SH|20261130"  # over a weekend
    assert next_session_key("us_daily|IVX|20261125") == "us_daily|IVX|20261127"  # Thanksgiving closed
    assert next_session_key("income|600000.SH|20260930") is None  # no quote: no previous close
    keys = ("daily|X|20261126", "daily|X|20261127")
    bulletin = "/exchange/bulletin/SSE/daily/2026-11-27/p1.html"
    pages_of = {keys[0]: ["/exchange/bulletin/SSE/daily/2026-11-26/p1.html"], keys[1]: [bulletin],
                PRE_CLOSE + keys[0]: [bulletin]}
    close = Link("extract", "c1", "daily", "X", "close", keys, (10.5, 11.0), (), ())
    walks = Walks(frozenset(), lambda page: [])
    assert effort_cover([close], pages_of, walks) == [bulletin]  # one page shows both closes
    volume = Link("extract", "c1", "daily", "X", "vol", keys, (1e5, 2e5), (), ())
    assert len(effort_cover([volume], pages_of, walks) or []) == 2  # the volume is printed once


def test_an_announcement_date_is_shown_by_the_filings_list() -> None:
    """The day a report was announced is on its company's filings list (date, kind, period): that
    page counts for it, not a walk through the long report to its cover's date."""
    from livesearch_pipeline.web.evidence import ANNOUNCED, _filings_lists

    class Index:
        def page_text(self, path: str) -> str:
            return "公告日期 公告标题 2026-10-23  定期报告 20260930  2026-08-04  定期报告 20260630" if "X" in path else ""

    keys = ("income|X|20260930", "income|X|20260630|restated", "income|X|20260331")
    link = Link("extract", "c1", "income", "X", "ann_date", keys, ("20261023", "20260804", "20260429"), (), ())
    found = _filings_lists(Index(), [(None, None, [link])])
    assert found == {ANNOUNCED + keys[0]: ["/exchange/filings/X.html"], ANNOUNCED + keys[1]: ["/exchange/filings/X.html"]}
    walks = Walks(frozenset(), lambda page: [])
    one = Link("extract", "c1", "income", "X", "ann_date", keys[:1], ("20261023",), (), ())
    assert effort_cover([one], {keys[0]: ["/exchange/reports/X/20260930/p8.html"], **found}, walks) is not None
    assert len(effort_cover([one], {keys[0]: ["/r/p8.html"], **found}, walks) or []) == 1


def test_a_quote_is_shown_by_its_twin_data_sets_page() -> None:
    """A Hong Kong stock's adjusted-quote record prints the same open, close and turnover as its
    daily quote (and pro_bar and bak_daily as the A-share daily quote): the daily quote page counts
    for them, and its next session's record for a close."""
    from livesearch_pipeline.web.evidence import SAME, twin_key

    assert twin_key("hk_daily_adj|00260.HK|20261204") == "hk_daily|00260.HK|20261204"
    assert twin_key("pro_bar|600000.SH|20261204") == "daily|600000.SH|20261204"
    assert twin_key("daily|600000.SH|20261204") is None and twin_key("income|600000.SH|20260930") is None
    key = "hk_daily_adj|X|20261204"
    walks = Walks(frozenset(), lambda page: [])
    pages_of = {key: ["/exchange/company/X.html#walk", "/exchange/hk_daily_adj/X.html"], SAME + key: ["/q/X.html"]}
    amount = Link("extract", "c1", "hk_daily_adj", "X", "amount", (key,), (1.0,), (), ())
    assert effort_cover([amount], {key: [], SAME + key: ["/q/X.html"]}, walks) == ["/q/X.html"]
    total_mv = Link("extract", "c1", "hk_daily_adj", "X", "total_mv", (key,), (1.0,), (), ())
    assert effort_cover([total_mv], pages_of, walks) != ["/q/X.html"]  # a field the twin does not print
