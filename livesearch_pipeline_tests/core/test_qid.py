from __future__ import annotations

import datetime as dt
import re

import pytest

from livesearch_pipeline.core.models import DateSpec, Program
from livesearch_pipeline.core.program import concrete_args
from livesearch_pipeline.core.qid import canonical_json, compute_qid, compute_signature
from livesearch_pipeline_tests.core.sample_programs import CATALOG, daily_call, extract, mean_close_program, program

QID = re.compile(r"^ls-[0-9a-f]{16}$")
SIGNATURE = re.compile(r"^sig-[0-9a-f]{12}$")


def holder_program(ts_code: str, rank: int) -> Program:
    return program(
        [{"id": "c1", "tool": "top10_holders", "args": {"ts_code": ts_code},
          "dates": {"period": {"period": "quarter", "periods_back": 0}}}],
        extract(field="holder_name", select={"mode": "match", "key": "rank", "value": rank,
                                             "where": {"ts_code": ts_code}},
                format={"kind": "text"}),
    )


def test_canonical_json_is_sorted_compact_and_keeps_unicode():
    assert canonical_json({"b": 1, "a": [1.5, "亿元"], "c": {"z": None, "y": True}}) == (
        '{"a":[1.5,"亿元"],"b":1,"c":{"y":true,"z":null}}'
    )


def test_canonical_json_dumps_models_with_defaults_and_dates():
    text = canonical_json({"spec": DateSpec(days_back=3), "day": dt.date(2026, 11, 27)})
    assert text == (
        '{"day":"2026-11-27","spec":{"calendar":null,"days_back":3,"edge":"end","fmt":"%Y%m%d",'
        '"period":null,"periods_back":null,"sessions_back":null}}'
    )


def test_canonical_json_refuses_what_it_cannot_encode_exactly():
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})
    with pytest.raises(TypeError, match="cannot encode set"):
        canonical_json({"x": {1, 2}})


def test_qid_shape_and_determinism():
    qid = compute_qid(mean_close_program(), "600519.SH")
    assert QID.match(qid)
    assert compute_qid(mean_close_program(), "600519.SH") == qid


def test_qid_is_pinned():
    # The hash defines the identity of every stored question: changing it orphans all pools.
    assert compute_qid(mean_close_program(), "600519.SH") == "ls-54910d68e7cbc694"


def test_redating_keeps_the_qid_while_concrete_args_move():
    prog = mean_close_program()
    days = [dt.date(2026, 11, 27), dt.date(2026, 10, 8), dt.date(2025, 2, 3)]
    args = {concrete_args(prog.calls[0], day, {})["end_date"] for day in days}
    assert len(args) == 3
    assert compute_qid(prog, "600519.SH") == compute_qid(Program.model_validate_json(prog.model_dump_json()), "600519.SH")


@pytest.mark.parametrize(
    ("variant", "entity"),
    [
        (mean_close_program(window=59), "600519.SH"),  # window length 20 vs 60 sessions
        (mean_close_program(ts_code="000001.SZ"), "000001.SZ"),  # another entity
        (mean_close_program(), "000001.SZ"),  # the same program filed under another entity
        (program([daily_call(window=19, args={"ts_code": "600519.SH", "adj": "qfq"})],
                 mean_close_program().extract.model_dump()), "600519.SH"),  # a fixed argument
        (program([daily_call()], mean_close_program().extract.model_dump() | {"aggregate": "max"}), "600519.SH"),
        (program([daily_call()], mean_close_program().extract.model_dump()
                 | {"format": {"kind": "number", "decimals": 3, "unit": "CNY"}}), "600519.SH"),
    ],
)
def test_anything_that_changes_the_question_changes_the_qid(variant, entity):
    assert compute_qid(variant, entity) != compute_qid(mean_close_program(), "600519.SH")


def test_qid_ignores_the_order_arguments_were_written_in():
    a = program([{"id": "c1", "tool": "daily", "args": {"ts_code": "X", "adj": "qfq"}}], extract())
    b = program([{"id": "c1", "tool": "daily", "args": {"adj": "qfq", "ts_code": "X"}}], extract())
    assert compute_qid(a, "X") == compute_qid(b, "X")


def test_signature_is_entity_free():
    sig = compute_signature(mean_close_program("600519.SH"), CATALOG)
    assert SIGNATURE.match(sig)
    assert compute_signature(mean_close_program("000001.SZ"), CATALOG) == sig
    assert compute_signature(mean_close_program(window=59), CATALOG) != sig


def test_signature_blanks_match_values_and_entity_filters():
    sig = compute_signature(holder_program("600519.SH", 1), CATALOG)
    assert compute_signature(holder_program("000001.SZ", 3), CATALOG) == sig
    assert compute_qid(holder_program("600519.SH", 1), "600519.SH") != compute_qid(
        holder_program("600519.SH", 3), "600519.SH"
    )


def test_signature_keeps_the_shape():
    base = compute_signature(holder_program("600519.SH", 1), CATALOG)
    other_field = holder_program("600519.SH", 1).model_dump()
    other_field["extract"]["field"] = "hold_ratio"
    other_field["extract"]["format"] = {"kind": "number", "decimals": 2}
    assert compute_signature(Program.model_validate(other_field), CATALOG) != base
    assert compute_signature(mean_close_program(), CATALOG) != base


def test_signature_of_a_combine_blanks_both_entities():
    def spread(a: str, b: str) -> Program:
        return program(
            [daily_call("c1", ts_code=a), daily_call("c2", ts_code=b)],
            extract(combine={"op": "difference",
                             "other": {"call": "c2", "select": {"mode": "latest", "key": "trade_date"},
                                       "field": "close"}}),
        )

    assert compute_signature(spread("A", "B"), CATALOG) == compute_signature(spread("C", "D"), CATALOG)


def test_signature_needs_catalogued_tools():
    with pytest.raises(ValueError, match="call 'c1': tool 'nope' is not in the catalog"):
        compute_signature(program([{"id": "c1", "tool": "nope"}], extract()), CATALOG)


def test_signature_blanks_the_series_a_program_pins():
    """The same template over another series (holder, currency pair, exchange) is one template."""
    tools = [t.model_copy(update={"series_keys": ["holder_name"]}) if t.name == "top10_holders" else t
             for t in CATALOG.tools]
    catalog = CATALOG.model_copy(update={"tools": tools})

    def holding(holder: str) -> Program:
        return program(
            [{"id": "c1", "tool": "top10_holders", "args": {"ts_code": "600519.SH"},
              "dates": {"period": {"period": "quarter", "periods_back": 0}}}],
            extract(field="hold_ratio", select={"mode": "latest", "key": "end_date",
                                                "where": {"holder_name": holder}}),
        )

    assert compute_signature(holding("Fund A"), catalog) == compute_signature(holding("Fund B"), catalog)
    assert compute_qid(holding("Fund A"), "600519.SH") != compute_qid(holding("Fund B"), "600519.SH")
    # Without the series declared, the holder stays part of the template.
    assert compute_signature(holding("Fund A"), CATALOG) != compute_signature(holding("Fund B"), CATALOG)
