"""`shared_reads`: programs of a batch reading the same response share its time order and a
screen's filtering, with the answers they would get alone (core/extract.py)."""

from __future__ import annotations

import datetime as dt

import pytest

from livesearch_pipeline.core import extract
from livesearch_pipeline.core.extract import run_extractor, shared_reads
from livesearch_pipeline.core.models import DateSpec, Extractor, Format, Membership, Selection

DAY = dt.date(2026, 11, 27)
NUM = Format(kind="number", decimals=2)
TEXT = Format(kind="text")


def _responses() -> dict:
    # Two series per day (where pins one), newest first as the service answers, one day twice.
    days = ["20261127", "20261126", "20261125", "20261124", "20261123", "20261120"]
    bars = [{"ts_code": code, "trade_date": d, "close": 10.0 + i + (0.5 if code == "B" else 0.0), "vol": 100 - i}
            for i, d in enumerate(days) for code in ("A", "B")]
    members = [{"con_code": c, "trade_date": "20261127"} for c in ("A", "B")]
    market = [{"ts_code": c, "trade_date": "20261127", "pct_chg": v}
              for c, v in (("A", 1.0), ("B", -2.0), ("C", -5.0), ("D", 3.0))]
    return {"c1": {"items": bars}, "c2": {"items": members}, "c3": {"items": market}}


WITHIN = Membership(call="c2", select=Selection(mode="latest", key="trade_date"), field="con_code", key="ts_code")
EXTRACTORS = [
    Extractor(call="c1", select=Selection(mode="latest", key="trade_date", where={"ts_code": "B"}),
              field="close", format=NUM),
    Extractor(call="c1", select=Selection(mode="all", key="trade_date", where={"ts_code": "A"}),
              field="close", aggregate="pct_change", format=NUM),
    Extractor(call="c1", select=Selection(mode="all", key="trade_date", where={"ts_code": "B"}),
              field="close", aggregate="first", format=NUM),
    Extractor(call="c1", select=Selection(mode="all", key="trade_date"), field="vol", aggregate="sum", format=NUM),
    Extractor(call="c1", select=Selection(mode="snapshot", key="trade_date", where={"ts_code": "A"},
                                          anchor=DateSpec(sessions_back=2, calendar="XSHG")),
              field="close", format=NUM),
    Extractor(call="c3", select=Selection(mode="latest", key="trade_date", within=WITHIN), field="pct_chg",
              aggregate="argmin", arg_field="ts_code", format=TEXT),
    Extractor(call="c3", select=Selection(mode="all", key="trade_date", within=WITHIN), field="pct_chg",
              aggregate="argmax", arg_field="ts_code", format=TEXT),
]


def test_answers_inside_and_outside_shared_reads_are_the_same():
    responses = _responses()
    alone = [run_extractor(ex, responses, DAY) for ex in EXTRACTORS]
    assert all(o.status == "ok" for o in alone), alone
    with shared_reads():
        shared = [run_extractor(ex, responses, DAY) for ex in EXTRACTORS]
        again = [run_extractor(ex, responses, DAY) for ex in reversed(EXTRACTORS)]
    assert shared == alone
    assert again == alone[::-1]
    assert [o.answer for o in alone[-2:]] == ["B", "A"]  # the screen ignores C and D, not members


def test_a_response_is_ordered_once_per_time_key_within_the_block(monkeypatch):
    sorts: list[int] = []
    real = extract._sorted_by_time

    def counting(records, key, fmt):
        sorts.append(len(records))
        return real(records, key, fmt)

    monkeypatch.setattr(extract, "_sorted_by_time", counting)
    responses = _responses()
    with shared_reads():
        for _ in range(3):
            for ex in EXTRACTORS[:4]:
                run_extractor(ex, responses, DAY)
    assert sorts == [12]  # the 12 bars of c1, once for all twelve reads
    sorts.clear()
    for ex in EXTRACTORS[:4]:
        run_extractor(ex, responses, DAY)
    assert len(sorts) == 4  # outside the block each read sorts what it keeps


def test_an_unreadable_key_outside_the_kept_records_changes_nothing():
    responses = _responses()
    responses["c1"]["items"].append({"ts_code": "Z", "trade_date": "not a date", "close": 1.0, "vol": 1})
    pinned = EXTRACTORS[1]  # where ts_code A: the broken record is not read
    everything = EXTRACTORS[3]  # every record: the broken one is an error
    alone = [run_extractor(ex, responses, DAY) for ex in (pinned, everything)]
    with shared_reads():
        shared = [run_extractor(ex, responses, DAY) for ex in (pinned, everything)]
    assert shared == alone
    assert alone[0].status == "ok" and alone[1].status == "error" and "not a date" in alone[1].error


def test_the_block_ends_with_its_memo():
    responses = _responses()
    with shared_reads():
        run_extractor(EXTRACTORS[0], responses, DAY)
        assert extract._SHARED.get() is not None
    assert extract._SHARED.get() is None


@pytest.mark.parametrize("ex", EXTRACTORS[:3])
def test_a_new_response_list_is_never_mistaken_for_a_memoised_one(ex):
    # Lists of two batches within one block: the memo keeps each alive, so ids never collide.
    with shared_reads():
        first = run_extractor(ex, _responses(), DAY)
        shifted = _responses()
        for r in shifted["c1"]["items"]:
            r["close"] += 1
        second = run_extractor(ex, shifted, DAY)
    assert first.status == second.status == "ok" and first.answer != second.answer
    assert second == run_extractor(ex, shifted, DAY)
