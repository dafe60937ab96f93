"""`shared_key_times` (issue 29): each response parsed and ordered by its time key once per block,
with the selections, values and errors of extraction without it."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.core import extract
from livesearch_pipeline.core.extract import run_extractor, shared_key_times
from livesearch_pipeline.core.models import Extractor

AS_OF = dt.date(2026, 11, 27)

# Newest first, two series per day (a `where` picks one), one day out of order.
DAILY = [
    {"trade_date": "20261127", "side": "a", "close": 10.0},
    {"trade_date": "20261127", "side": "b", "close": 20.0},
    {"trade_date": "20261125", "side": "a", "close": 11.0},
    {"trade_date": "20261126", "side": "a", "close": 12.0},
    {"trade_date": "20261126", "side": "b", "close": 22.0},
    {"trade_date": "20261124", "side": "b", "close": 19.0},
]
# A key that does not parse, on a record that only one selection keeps.
BROKEN = [
    {"trade_date": "20261127", "side": "a", "close": 10.0},
    {"trade_date": "2026-11-26", "side": "b", "close": 22.0},
    {"trade_date": "20261126", "side": "a", "close": 12.0},
]


def extractor(**select) -> Extractor:
    aggregate = select.pop("aggregate", None)
    return Extractor.model_validate({"call": "c1", "field": "close", "aggregate": aggregate,
                                     "select": {"key": "trade_date", **select},
                                     "format": {"kind": "number", "decimals": 2}})


EXTRACTORS = [
    extractor(mode="latest", where={"side": "a"}),
    extractor(mode="latest", where={"side": "b"}),
    extractor(mode="all", where={"side": "a"}, aggregate="pct_change"),
    extractor(mode="all", where={"side": "b"}, aggregate="first"),
    extractor(mode="all", aggregate="max"),
    extractor(mode="all", aggregate="last"),
    extractor(mode="all", aggregate="mean"),
    extractor(mode="snapshot", anchor={"sessions_back": 1, "calendar": "XSHG"}, where={"side": "b"}),
]


@pytest.mark.parametrize("records", [DAILY, BROKEN], ids=["daily", "broken key"])
def test_the_same_outcomes_with_and_without_shared_key_times(records):
    responses = {"c1": {"items": records}}
    alone = [run_extractor(e, responses, AS_OF) for e in EXTRACTORS]
    with shared_key_times():
        shared = [run_extractor(e, responses, AS_OF) for e in EXTRACTORS]
        again = [run_extractor(e, responses, AS_OF) for e in EXTRACTORS]
    assert shared == alone == again
    if records is DAILY:
        assert [o.answer for o in alone] == ["10.00", "20.00", "-9.09", "19.00", "22.00", "20.00", "15.67", "22.00"]
    else:
        # Side a never meets the broken key: answered; every selection reading it: an error.
        assert [o.status for o in alone] == ["error", "error", "ok", "error", "error", "error", "error", "error"]


def test_a_response_is_parsed_once_per_block(monkeypatch):
    parsed: list[str] = []
    original = extract._key_time

    def counting(record, key, fmt):
        parsed.append(record[key])
        return original(record, key, fmt)

    monkeypatch.setattr(extract, "_key_time", counting)
    responses = {"c1": {"items": DAILY}}
    with shared_key_times():
        for e in EXTRACTORS:
            run_extractor(e, responses, AS_OF)
    assert len(parsed) == len(DAILY)  # one key per record, for all the extractors
    parsed.clear()
    run_extractor(EXTRACTORS[5], responses, AS_OF)  # outside the block: parsed again
    assert len(parsed) == len(DAILY)
