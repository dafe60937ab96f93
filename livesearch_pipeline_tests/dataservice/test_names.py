"""One name per company on any day (issue 40): `search`, the basic tools, `namechange` and the
visibility list agree at every date, and a former name exists only where `namechange` records it."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.sanity import Impossible, check_names
from livesearch_pipeline.dataservice.server import DataService

CLOCK = dt.date(2026, 12, 4)


def at(market: Market, clock: dt.date) -> DataService:
    return DataService(config=ServiceConfig(clock=clock), market=market)


@pytest.fixture(scope="module")
def renamed(market: Market):
    """An A-share renamed between 2020 and the clock (its rename day), and one whose rename lies
    after the clock (the case of 000007.SZ on 2026-12-04)."""
    names = market.names
    past = next((e.code, s.start) for e in market.universe.of_class("cn_equity")
                for s in names.history(e.code)[1:] if dt.date(2020, 1, 1) <= s.start <= CLOCK)
    future = next(e.code for e in market.universe.of_class("cn_equity")
                  if len(names.history(e.code)) == 1 and names.history(e.code)[0].name != e.name)
    return past, future


def _name_in(market: Market, clock: dt.date, code: str) -> dict[str, str]:
    service = at(market, clock)
    hit = next(r for r in service.call("search", {"keyword": code})["items"] if r["ts_code"] == code)
    current = [r["name"] for r in service.call("namechange", {"ts_code": code})["items"] if r["end_date"] is None]
    return {"search": hit["name"], "stock_basic": service.call("stock_basic", {"ts_code": code})["items"][0]["name"],
            "namechange": current[0],
            "visibility": service.call("entity_visibility", {"ts_code": code})["items"][0]["name"]}


def test_a_company_renamed_after_the_clock_has_its_listing_name_everywhere(market, renamed):
    _, code = renamed
    names = _name_in(market, CLOCK, code)
    listing = market.names.history(code)[0].name
    # Before the fix, `search` and the visibility list (the questions' names) said the final name.
    assert set(names.values()) == {listing} != {market.universe.get(code).name}


def test_a_rename_changes_every_tool_on_its_day_and_search_keeps_the_former_name(market, renamed):
    (code, day), _ = renamed
    before, on = _name_in(market, day - dt.timedelta(days=1), code), _name_in(market, day, code)
    old, new = market.names.history(code)[0].name, market.names.history(code)[1].name
    assert set(before.values()) == {old} and set(on.values()) == {new}
    service = at(market, day)
    history = service.call("namechange", {"ts_code": code})["items"]
    assert [(r["name"], r["end_date"] is None, r["change_reason"]) for r in history] == [(new, True, "改名"), (old, False, "其他")]
    assert history[1]["end_date"] == (day - dt.timedelta(days=1)).strftime("%Y%m%d")
    found = [r for r in service.call("search", {"keyword": old})["items"] if r["ts_code"] == code]
    assert found and found[0]["name"] == new and found[0]["former_names"] == old
    # The day before the rename, the new name finds nothing of it yet.
    earlier = at(market, day - dt.timedelta(days=1)).call("search", {"keyword": new})["items"]
    assert code not in {r["ts_code"] for r in earlier}
    basic = service.call("stock_basic", {"ts_code": code})["items"][0]
    assert basic["fullname"] == f"{new}股份有限公司" and basic["enname"].startswith(market.names.history(code)[1].name_en)


@pytest.mark.parametrize("clock", [dt.date(2019, 6, 3), dt.date(2023, 3, 1), CLOCK])
def test_every_code_has_one_name_across_the_tools(market, clock):
    assert check_names(at(market, clock)) == []


def test_the_name_check_finds_two_names_and_an_unrecorded_former_name(market, renamed, monkeypatch):
    _, code = renamed
    service = at(market, CLOCK)
    real_call = service.call

    def call(tool, args, *rest, **kw):
        result = real_call(tool, args, *rest, **kw)
        if tool == "search" and args.get("keyword") == code:
            result = {**result, "items": [{**r, "name": market.universe.get(code).name, "former_names": "某某科技"}
                                          if r["ts_code"] == code else r for r in result["items"]]}
        return result

    monkeypatch.setattr(service, "call", call)
    found = check_names(service)
    assert all(isinstance(f, Impossible) and f.check == "names" for f in found)
    assert {f.where for f in found} == {code} and len(found) == 2, [str(f) for f in found]
