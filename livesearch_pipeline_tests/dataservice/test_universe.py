"""The fictional universe: sizes, code formats, visibility coverage, uniqueness, determinism."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter

import pytest

from livesearch_pipeline.dataservice.market.universe import ASSET_CLASSES, build_universe

SEED = 20260101


@pytest.fixture(scope="module")
def universe():
    return build_universe(SEED)


def test_class_sizes_meet_the_brief(universe):
    sizes = Counter(e.asset_class for e in universe.entities)
    assert sizes["cn_equity"] >= 300
    assert sizes["hk_equity"] >= 100
    assert sizes["us_equity"] >= 200
    assert sizes["index"] >= 30
    assert sizes["fund"] >= 100


def test_codes_follow_exchange_formats(universe):
    patterns = {
        "cn_equity": r"^(60\d{4}\.SH|688\d{3}\.SH|00\d{4}\.SZ|30\d{4}\.SZ)$",
        "hk_equity": r"^\d{5}\.HK$",
        "us_equity": r"^[A-Z]{3,5}$",
        "fund": r"^(\d{6}\.(SH|SZ)|\d{6}\.OF)$",
    }
    for asset_class, pattern in patterns.items():
        bad = [e.code for e in universe.of_class(asset_class) if not re.match(pattern, e.code)]
        assert not bad, f"{asset_class} codes off format: {bad[:5]}"
    boards = Counter(e.code[:2] + e.code[-3:] for e in universe.of_class("cn_equity"))
    assert {k for k in boards if boards[k]} >= {"60.SH", "68.SH", "00.SZ", "30.SZ"}
    funds = universe.of_class("fund")
    assert any(e.code.endswith(".OF") for e in funds) and any(e.market == "E" for e in funds)


@pytest.mark.parametrize("asset_class", ASSET_CLASSES)
def test_every_visibility_level_in_every_class(universe, asset_class):
    assert {e.visibility for e in universe.of_class(asset_class)} == set(range(11))


def test_codes_and_names_are_unique(universe):
    codes = [e.code for e in universe.entities]
    assert len(codes) == len(set(codes))
    # One name per company: an H-share carries its A-share company's names, nothing else shares one.
    companies = [e for e in universe.entities if universe.a_share_of(e.code) is None]
    assert len({e.name for e in companies}) == len(companies)
    assert len({e.name_en for e in companies}) == len(companies)
    for h, a in universe.dual_listings.items():
        assert (universe.get(h).name, universe.get(h).name_en) == (universe.get(a).name, universe.get(a).name_en)


def test_names_are_in_the_market_language(universe):
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for e in universe.of_class("cn_equity") + universe.of_class("hk_equity"):
        assert cjk.search(e.name) and e.name == e.name_zh
    for e in universe.of_class("us_equity"):
        assert e.name == e.name_en and e.name_zh is None and not cjk.search(e.name)


def test_no_famous_real_ticker_is_used(universe):
    famous = {"AAPL", "MSFT", "GOOG", "AMZN", "META", "NVDA", "TSLA", "JPM", "IBM", "NFLX"}
    assert not famous & {e.code for e in universe.of_class("us_equity")}


def test_build_is_deterministic_and_seeded():
    a, b, c = build_universe(SEED), build_universe(SEED), build_universe(SEED + 1)
    assert a.entities == b.entities
    assert a.entities != c.entities


def test_listing_dates(universe):
    equities = universe.of_class("cn_equity") + universe.of_class("hk_equity") + universe.of_class("us_equity")
    before = sum(e.list_date < dt.date(2015, 1, 1) for e in equities)
    assert before > len(equities) / 2, "most listings predate the simulation"
    assert before < len(equities), "some new listings happen during the simulation"
    assert all(e.list_date >= dt.date(2019, 7, 22) for e in equities if e.code.startswith("688"))
    assert all(e.list_date.weekday() < 5 for e in universe.entities)


def test_get_and_search(universe):
    entity = universe.of_class("cn_equity")[0]
    assert universe.get(entity.code) is entity
    with pytest.raises(LookupError, match="search"):
        universe.get("999999.SH")
    assert entity in universe.search(entity.name_zh[:2])
    assert universe.search(entity.code)[0] is entity
    assert universe.search(entity.name_en.split()[0].lower())
    assert universe.search("   ") == []


def test_index_and_fund_specs_reference_real_entities(universe):
    for code, spec in universe.index_specs.items():
        assert universe.get(code).asset_class == "index"
        assert all(universe.get(m).asset_class == "cn_equity" for m in spec.members)
    assert sum(bool(s.members) for s in universe.index_specs.values()) >= 30
    for code, spec in universe.fund_specs.items():
        if spec.benchmark_index is not None:
            assert universe.index_specs[spec.benchmark_index].members
            assert universe.get(code).market == "E"
