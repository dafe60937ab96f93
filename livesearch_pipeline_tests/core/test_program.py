from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from livesearch_pipeline.core.extract import ExtractionEmpty, ExtractionError
from livesearch_pipeline.core.models import Program, Question
from livesearch_pipeline.core.program import (
    PoolLoadError,
    ProgramError,
    call_levels,
    concrete_args,
    load_pool,
    validate_program,
)
from livesearch_pipeline.core.qid import compute_qid, compute_signature
from livesearch_pipeline_tests.core.sample_programs import (
    CATALOG,
    daily_call,
    extract,
    mean_close_program,
    program,
)

AS_OF = dt.date(2026, 11, 27)


def latest_date_ref(call: str = "c1") -> dict:
    return {"call": call, "select": {"mode": "latest", "key": "trade_date"}, "field": "trade_date"}


def two_call_program() -> Program:
    """c1 finds the latest session in a window; c2 asks the holders of that date's quarter."""
    return program(
        [daily_call("c1"), {"id": "c2", "tool": "daily", "args": {"ts_code": "000001.SZ"},
                            "refs": {"trade_date": latest_date_ref("c1")}}],
        extract(call="c2"),
    )


# --------------------------------------------------------------------------- validation


def test_valid_programs_pass():
    validate_program(mean_close_program(), CATALOG)
    validate_program(two_call_program(), CATALOG, qid="ls-0123456789abcdef")
    validate_program(program(
        [{"id": "c1", "tool": "cn_cpi", "dates": {"end_m": {"period": "month", "periods_back": 0, "fmt": "YYYYMM"}}}],
        extract(field="nt_yoy", select={"mode": "latest", "key": "month", "key_fmt": "YYYYMM"},
                format={"kind": "percent", "decimals": 1}),
    ), CATALOG)
    validate_program(program(
        [daily_call()],
        extract(select={"mode": "all", "key": "trade_date"}, aggregate="argmax", format={"kind": "date"}),
    ), CATALOG)
    validate_program(program(
        [daily_call()],
        extract(field="name", select={"mode": "all", "key": "trade_date"}, aggregate="count",
                format={"kind": "integer"}),
    ), CATALOG)
    # A tool without field metadata: names cannot be checked, everything else still is.
    validate_program(program([{"id": "c1", "tool": "free_form", "args": {"q": "x"}}],
                             extract(field="anything", select={"mode": "match", "key": "k", "value": 1})), CATALOG)


ERROR_CASES = [
    ("unknown tool",
     program([{"id": "c1", "tool": "nope"}], extract()),
     "calls[0] (c1).tool: unknown tool 'nope'"),
    ("search tool",
     program([{"id": "c1", "tool": "web_search", "args": {"q": "x"}}], extract()),
     "calls[0] (c1).tool: tool 'web_search' has role 'search'; only data tools define gold"),
    ("intraday tool",
     program([{"id": "c1", "tool": "stk_mins_live"}], extract()),
     "has role 'intraday'"),
    ("utility tool",
     program([{"id": "c1", "tool": "clock"}], extract()),
     "has role 'utility'"),
    ("duplicate call id",
     program([daily_call("c1"), daily_call("c1")], extract()),
     "calls[1] (c1).id: duplicate call id 'c1' (first at calls[0])"),
    ("ref to unknown call",
     program([daily_call("c1"), {"id": "c2", "tool": "daily", "refs": {"trade_date": latest_date_ref("c9")}}],
             extract()),
     "calls[1] (c2).refs.trade_date.call: unknown call 'c9'"),
    ("ref to a later call",
     program([{"id": "c1", "tool": "daily", "refs": {"trade_date": latest_date_ref("c2")}}, daily_call("c2")],
             extract(call="c2")),
     "calls[0] (c1).refs.trade_date.call: call 'c2' is not an earlier call"),
    ("ref to itself",
     program([{"id": "c1", "tool": "daily", "refs": {"trade_date": latest_date_ref("c1")}}], extract()),
     "calls[0] (c1).refs.trade_date.call: call 'c1' is not an earlier call"),
    ("extract from unknown call",
     program([daily_call()], extract(call="c7")),
     "extract.call: unknown call 'c7'"),
    ("unknown date parameter",
     program([{"id": "c1", "tool": "daily", "dates": {"day": {"days_back": 0}}}], extract()),
     "calls[0] (c1).dates.day: tool 'daily' has no date parameter 'day'"),
    ("date format differs from the tool's",
     program([{"id": "c1", "tool": "daily", "dates": {"trade_date": {"days_back": 0, "fmt": "%Y-%m-%d"}}}],
             extract()),
     "calls[0] (c1).dates.trade_date.fmt: '%Y-%m-%d' but 'daily' expects '%Y%m%d'"),
    ("fixed date argument",
     program([{"id": "c1", "tool": "daily", "args": {"trade_date": "20261127"}}], extract()),
     "calls[0] (c1).args.trade_date: a date parameter takes a relative date spec"),
    ("date spec on another exchange's calendar",
     program([daily_call(), {"id": "c2", "tool": "daily",
                             "dates": {"trade_date": {"sessions_back": 0, "calendar": "XNYS"}}}], extract()),
     "calls[1] (c2).dates.trade_date.calendar: XNYS but 'daily' trades on XSHG"),
    ("all without aggregate",
     program([daily_call()], extract(select={"mode": "all", "key": "trade_date"})),
     "extract.select: mode 'all' needs an aggregate"),
    ("mean of a text field",
     program([daily_call()], extract(field="name", select={"mode": "all", "key": "trade_date"}, aggregate="mean")),
     "extract.aggregate: 'mean' needs a numeric field; 'name' is text"),
    ("argmax of a code field",
     program([daily_call()], extract(field="ts_code", select={"mode": "all", "key": "trade_date"},
                                     aggregate="argmax", format={"kind": "date"})),
     "extract.aggregate: 'argmax' needs a numeric field; 'ts_code' is code"),
    ("ordered aggregate in match mode",
     program([daily_call()], extract(select={"mode": "match", "key": "name", "value": "A"}, aggregate="last")),
     "extract.aggregate: 'last' needs time-ordered records"),
    ("arg_field without argmax",
     program([daily_call()], extract(select={"mode": "all", "key": "trade_date"}, aggregate="max",
                                     arg_field="ts_code")),
     "extract.arg_field: only argmax/argmin return an arg_field"),
    ("number format on a text field",
     program([daily_call()], extract(field="name")),
     "extract.format: format 'number' needs a number; the extracted value is text"),
    ("percent format on a date",
     program([daily_call()], extract(field="trade_date", format={"kind": "percent", "decimals": 1})),
     "format 'percent' needs a number; the extracted value is date"),
    ("integer format on the argmax key",
     program([daily_call()], extract(select={"mode": "all", "key": "trade_date"}, aggregate="argmax",
                                     format={"kind": "integer"})),
     "format 'integer' needs a number; the extracted value is date"),
    ("date format on a number",
     program([daily_call()], extract(format={"kind": "date"})),
     "extract.format: format 'date' needs a date; the extracted value is number"),
    ("text format on a number",
     program([daily_call()], extract(format={"kind": "text"})),
     "a number is never a text answer"),
    ("integer with decimals",
     program([daily_call()], extract(format={"kind": "integer", "decimals": 2})),
     "extract.format.decimals: format 'integer' has no decimals"),
    ("unknown field",
     program([daily_call()], extract(field="closing_price")),
     "extract.field: tool 'daily' has no field 'closing_price'"),
    ("unknown key",
     program([daily_call()], extract(select={"mode": "latest", "key": "date"})),
     "extract.select.key: tool 'daily' has no field 'date'"),
    ("unknown where field",
     program([daily_call()], extract(select={"mode": "latest", "key": "trade_date", "where": {"exchange": "SH"}})),
     "extract.select.where.exchange: tool 'daily' has no field 'exchange'"),
    ("key format differs from the time key's",
     program([daily_call()], extract(select={"mode": "latest", "key": "trade_date", "key_fmt": "%Y-%m-%d"})),
     "extract.select.key_fmt: '%Y-%m-%d' differs from the 'daily' time key format '%Y%m%d'"),
    ("combine other from unknown call",
     program([daily_call()], extract(combine={"op": "difference", "other": latest_date_ref("c3") | {"field": "close"}})),
     "extract.combine.other.call: unknown call 'c3'"),
    ("combine other unknown field",
     program([daily_call()], extract(combine={"op": "ratio", "other": latest_date_ref() | {"field": "high"}})),
     "extract.combine.other.field: tool 'daily' has no field 'high'"),
    ("combine of a text value",
     program([daily_call()], extract(combine={"op": "difference", "other": latest_date_ref() | {"field": "name"}})),
     "extract.combine.other: combine 'difference' needs a number; the value is text"),
    ("ref with an all selection and no aggregate",
     program([daily_call("c1"), {"id": "c2", "tool": "daily",
                                 "refs": {"trade_date": {"call": "c1", "field": "trade_date",
                                                         "select": {"mode": "all", "key": "trade_date"}}}}],
             extract(call="c2")),
     "calls[1] (c2).refs.trade_date.select: mode 'all' needs an aggregate"),
]


@pytest.mark.parametrize(("name", "bad", "message"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_validation_errors_name_the_part(name, bad, message):
    with pytest.raises(ProgramError) as caught:
        validate_program(bad, CATALOG, qid="ls-00000000000000aa")
    assert str(caught.value).startswith("ls-00000000000000aa ")
    assert message in str(caught.value)


def test_program_error_without_parts_is_its_message():
    assert str(ProgramError("ls-00000000000000aa: cannot run")) == "ls-00000000000000aa: cannot run"


def test_validation_reports_every_problem_at_once():
    bad = program([{"id": "c1", "tool": "web_search"}, {"id": "c2", "tool": "nope"}],
                  extract(call="c9"))
    with pytest.raises(ProgramError) as caught:
        validate_program(bad, CATALOG)
    parts = [part for part, _ in caught.value.problems]
    assert parts == ["calls[0] (c1).tool", "calls[1] (c2).tool", "extract.call"]
    assert str(caught.value).startswith("program calls[0] (c1).tool:")


# --------------------------------------------------------------------------- DAG


def test_call_levels_group_independent_calls():
    diamond = program(
        [daily_call("a"),
         daily_call("b", ts_code="000001.SZ"),
         {"id": "c", "tool": "daily", "refs": {"trade_date": latest_date_ref("a")}},
         {"id": "d", "tool": "daily", "refs": {"trade_date": latest_date_ref("c"), "ts_code": {
             "call": "b", "select": {"mode": "latest", "key": "trade_date"}, "field": "ts_code"}}},
         {"id": "e", "tool": "daily", "refs": {"trade_date": latest_date_ref("b")}}],
        extract(call="d"),
    )
    assert [[c.id for c in level] for level in call_levels(diamond)] == [["a", "b"], ["c", "e"], ["d"]]
    assert [[c.id for c in level] for level in call_levels(mean_close_program())] == [["c1"]]


def test_call_levels_reject_cycles_and_unknown_calls():
    cycle = program(
        [{"id": "a", "tool": "daily", "refs": {"trade_date": latest_date_ref("b")}},
         {"id": "b", "tool": "daily", "refs": {"trade_date": latest_date_ref("a")}}],
        extract(call="a"),
    )
    with pytest.raises(ProgramError, match="is part of a cycle"):
        call_levels(cycle)
    dangling = program([{"id": "a", "tool": "daily", "refs": {"trade_date": latest_date_ref("z")}}], extract(call="a"))
    with pytest.raises(ProgramError, match="a.refs.trade_date: unknown call 'z'"):
        call_levels(dangling)


# --------------------------------------------------------------------------- concrete args


def test_concrete_args_resolve_dates_on_the_as_of_date():
    call = mean_close_program().calls[0]
    assert concrete_args(call, AS_OF, {}) == {"ts_code": "600519.SH", "start_date": "20261102", "end_date": "20261127"}
    # Re-dated to the National Day week: the window ends on the last session before it.
    assert concrete_args(call, dt.date(2026, 10, 6), {})["end_date"] == "20260930"


def test_concrete_args_take_refs_from_earlier_responses():
    c2 = two_call_program().calls[1]
    responses = {"c1": {"items": [{"trade_date": "20261127"}, {"trade_date": "20261126"}]}}
    assert concrete_args(c2, AS_OF, responses) == {"ts_code": "000001.SZ", "trade_date": "20261127"}


def test_concrete_args_raise_when_a_ref_cannot_be_read():
    c2 = two_call_program().calls[1]
    with pytest.raises(ExtractionEmpty, match="call 'c2' refs.trade_date \\(from call 'c1'\\): .*matched no record"):
        concrete_args(c2, AS_OF, {"c1": {"items": []}})
    with pytest.raises(ExtractionError, match="call 'c2' refs.trade_date .*no response for call 'c1'"):
        concrete_args(c2, AS_OF, {})


# --------------------------------------------------------------------------- pool


def make_question(prog: Program | None = None, entity: str = "600519.SH", **overrides) -> Question:
    prog = prog or mean_close_program(ts_code=entity)
    record = {
        "qid": compute_qid(prog, entity), "question": "What was the mean close over the last 20 sessions?",
        "program": prog.model_dump(mode="json"), "match": {"rule": "approx", "abs_tol": 0.005, "decimals": 2},
        "refresh_class": "daily", "tier": "T3", "asset_class": "cn_equity", "entity": entity,
        "entity_name": "Alpha Spirits", "visibility": 7, "signature": compute_signature(prog, CATALOG),
        "provenance": {"verbalizer": "template"},
    }
    record.update(overrides)
    return Question.model_validate_json(json.dumps(record))


def write_pool(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_load_pool_round_trip(tmp_path):
    questions = [make_question(entity="600519.SH"), make_question(entity="000001.SZ")]
    path = write_pool(tmp_path / "questions.jsonl", [q.model_dump_json() for q in questions])
    assert load_pool(path) == questions
    assert load_pool(path, CATALOG) == questions


def test_load_pool_rereads_a_rewritten_file_and_does_not_cache_errors(tmp_path):
    path = tmp_path / "questions.jsonl"
    first = [make_question(entity="600519.SH")]
    second = [make_question(entity="000001.SZ"), make_question(entity="600519.SH")]
    write_pool(path, [q.model_dump_json() for q in first])
    assert load_pool(path) == first
    write_pool(path, [q.model_dump_json() for q in second])
    assert load_pool(path) == second
    write_pool(path, ["{}"])
    with pytest.raises(PoolLoadError):
        load_pool(path)
    write_pool(path, [q.model_dump_json() for q in first])
    assert load_pool(path) == first
    loaded = load_pool(path)
    loaded.clear()  # callers get their own list
    assert load_pool(path) == first


def test_load_pool_rejects_tampered_qids(tmp_path):
    question = make_question()
    tampered = question.model_dump(mode="json")
    tampered["program"]["calls"][0]["dates"]["start_date"]["sessions_back"] = 59
    path = write_pool(tmp_path / "q.jsonl", [make_question(entity="000001.SZ").model_dump_json(), json.dumps(tampered)])
    with pytest.raises(PoolLoadError, match=r"q.jsonl:2: qid ls-[0-9a-f]{16} does not match .*altered"):
        load_pool(path)


def test_load_pool_rejects_duplicates(tmp_path):
    line = make_question().model_dump_json()
    path = write_pool(tmp_path / "q.jsonl", [line, make_question(entity="000001.SZ").model_dump_json(), line])
    with pytest.raises(PoolLoadError, match=r"q.jsonl:3: duplicate qid .* \(first on line 1\)"):
        load_pool(path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r":1: not a valid question record"),
        ("", r":1: blank line"),
        (json.dumps({"qid": "ls-0000000000000000"}), r":1: not a valid question record"),
    ],
)
def test_load_pool_rejects_malformed_lines(tmp_path, line, message):
    with pytest.raises(PoolLoadError, match=message):
        load_pool(write_pool(tmp_path / "q.jsonl", [line]))


def test_load_pool_rejects_unknown_fields(tmp_path):
    record = make_question().model_dump(mode="json") | {"answer": "42"}
    with pytest.raises(PoolLoadError, match=r"(?s):1: not a valid question record.*answer"):
        load_pool(write_pool(tmp_path / "q.jsonl", [json.dumps(record)]))


def test_load_pool_rejects_non_utf8(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(make_question().model_dump_json().encode() + b"\n\xff\xfe\n")
    with pytest.raises(PoolLoadError, match=r"q.jsonl:2: not UTF-8"):
        load_pool(path)


def test_load_pool_validates_programs_against_the_catalog(tmp_path):
    bad_program = program([{"id": "c1", "tool": "web_search", "args": {"q": "x"}}], extract())
    question = make_question(prog=bad_program, signature="sig-000000000000")
    path = write_pool(tmp_path / "q.jsonl", [make_question().model_dump_json(), question.model_dump_json()])
    assert len(load_pool(path)) == 2  # without a catalog, only the records' own integrity is checked
    with pytest.raises(PoolLoadError, match=rf"q.jsonl:2: {question.qid} calls\[0\] \(c1\).tool: .*role 'search'"):
        load_pool(path, CATALOG)


def test_load_pool_never_executes_anything(tmp_path, monkeypatch):
    import livesearch_pipeline.core.program as program_module

    def forbidden(*args, **kwargs):
        raise AssertionError("load_pool must not resolve or extract anything")

    monkeypatch.setattr(program_module, "read_value", forbidden)
    monkeypatch.setattr(program_module, "resolve_date_spec", forbidden)
    path = write_pool(tmp_path / "q.jsonl", [make_question(prog=two_call_program()).model_dump_json()])
    assert len(load_pool(path, CATALOG)) == 1


# --------------------------------------------------------------------------- pools checked before they run

import functools  # noqa: E402

from livesearch_pipeline.core.pool import MANIFEST_FILE, POOL_FILE, load_checked_pool  # noqa: E402
from livesearch_pipeline.construction.pool import write_pool as write_pool_dir  # noqa: E402
from livesearch_pipeline.core.program import (  # noqa: E402
    MAX_CALLS_PER_PROGRAM,
    MAX_DAYS_BACK,
    MAX_MONTHS_BACK,
    MAX_SESSIONS_BACK,
    check_question,
)


def _with_program(calls: list[dict], **extract_overrides) -> Question:
    """A pool question carrying `calls` (its signature is not recomputed: the tool may be unknown)."""
    prog = program(calls, extract(**extract_overrides))
    return make_question().model_copy(update={"program": prog, "qid": compute_qid(prog, "600519.SH")})


@functools.cache
def _twenty_thousand_calls() -> Question:
    return _with_program([daily_call(f"c{i}") for i in range(20_000)])  # built once: ~5 s of validation


UNSAFE_QUESTIONS = [
    ("unknown tool", lambda: _with_program([{"id": "c1", "tool": "no_such_tool", "args": {}}]),
     r"calls\[0\] \(c1\).tool: unknown tool 'no_such_tool'"),
    ("non-data tool", lambda: _with_program([{"id": "c1", "tool": "web_search", "args": {"q": "x"}}]),
     r"calls\[0\] \(c1\).tool: .*role 'search'; only data tools define gold"),
    ("bogus extractor path", lambda: _with_program([daily_call()], path="items.0.secrets"),
     r"extract.path: 'items.0.secrets' is not a path of a data tool's response"),
    ("bogus extractor field", lambda: _with_program([daily_call()], field="password"),
     r"extract.field: tool 'daily' has no field 'password'"),
    ("bad date format", lambda: _with_program([daily_call(dates={
        "start_date": {"sessions_back": 19, "calendar": "XSHG", "fmt": "%Y-%m-%d %H:%M"},
        "end_date": {"sessions_back": 0, "calendar": "XSHG"}})]),
     r"calls\[0\] \(c1\).dates.start_date.fmt: '%Y-%m-%d %H:%M' but 'daily' expects '%Y%m%d'"),
    ("20,000 calls", lambda: _twenty_thousand_calls(),
     rf"calls: 20000 calls, more than the {MAX_CALLS_PER_PROGRAM} a program may make"),
    ("window of sessions", lambda: _with_program([daily_call(window=5000)]),
     rf"calls\[0\] \(c1\).dates.start_date.sessions_back: 5000 is beyond the bound of {MAX_SESSIONS_BACK}"),
    ("window of days", lambda: _with_program([daily_call(dates={
        "start_date": {"days_back": 20000}, "end_date": {"days_back": 0}})]),
     rf"calls\[0\] \(c1\).dates.start_date.days_back: 20000 is beyond the bound of {MAX_DAYS_BACK}"),
    ("periods back", lambda: _with_program([{"id": "c1", "tool": "cn_cpi", "dates": {
        "end_m": {"period": "month", "periods_back": 200, "fmt": "YYYYMM"}}}],
        field="nt_yoy", select={"mode": "latest", "key": "month", "key_fmt": "YYYYMM"},
        format={"kind": "percent", "decimals": 1}),
     rf"calls\[0\] \(c1\).dates.end_m.periods_back: 200 is beyond the bound of {MAX_MONTHS_BACK}"),
]


@pytest.mark.parametrize(("name", "make", "message"), UNSAFE_QUESTIONS, ids=[c[0] for c in UNSAFE_QUESTIONS])
def test_check_question_refuses_what_must_not_run(name, make, message):
    question = make()
    with pytest.raises(ProgramError, match=rf"{question.qid} {message}"):
        check_question(question, CATALOG)


def test_built_programs_stay_inside_the_bounds():
    from livesearch_pipeline.construction.enumerate import AGGREGATE_WINDOWS, LATEST_WINDOW, SNAPSHOT_BACK
    from livesearch_pipeline.construction.sampling import LOOKBACK_DAYS

    assert max(LOOKBACK_DAYS.values()) <= MAX_DAYS_BACK
    assert max(*AGGREGATE_WINDOWS, LATEST_WINDOW, SNAPSHOT_BACK) <= MAX_SESSIONS_BACK
    check_question(make_question(prog=mean_close_program(window=MAX_SESSIONS_BACK)), CATALOG)


def _pool_dir(tmp_path: Path, questions: list[Question]) -> Path:
    root = tmp_path / "pool"
    write_pool_dir(root, questions, data_service="test-service")
    return root


def test_load_checked_pool_returns_the_manifest_and_the_questions(tmp_path):
    root = _pool_dir(tmp_path, [make_question(entity="600519.SH"), make_question(entity="000001.SZ")])
    manifest, questions = load_checked_pool(root, CATALOG)
    assert manifest.questions == 2 and sorted(q.entity for q in questions) == ["000001.SZ", "600519.SH"]


def test_load_checked_pool_refuses_a_tampered_questions_file(tmp_path):
    root = _pool_dir(tmp_path, [make_question()])
    pool = root / POOL_FILE
    pool.write_bytes(pool.read_bytes().replace(b"mean close", b"mean  close"))
    with pytest.raises(PoolLoadError, match=rf"{pool} has sha256 [0-9a-f]{{64}} but {MANIFEST_FILE} records"):
        load_checked_pool(root, CATALOG)


@pytest.mark.parametrize(("name", "make", "message"), UNSAFE_QUESTIONS[:5] + UNSAFE_QUESTIONS[6:],
                         ids=[c[0] for c in UNSAFE_QUESTIONS[:5] + UNSAFE_QUESTIONS[6:]])
def test_load_checked_pool_refuses_an_unsafe_program_even_with_a_matching_manifest(tmp_path, name, make, message):
    bad = make()
    root = _pool_dir(tmp_path, [make_question(), bad])  # the manifest's sha256 is the bad pool's own
    with pytest.raises(PoolLoadError, match=rf"{root / POOL_FILE}:\d: {bad.qid} {message}"):
        load_checked_pool(root, CATALOG)


def test_load_checked_pool_refuses_a_20000_call_program_naming_it(tmp_path):
    bad = UNSAFE_QUESTIONS[5][1]()
    root = _pool_dir(tmp_path, [bad])
    with pytest.raises(PoolLoadError, match=rf"{root / POOL_FILE}:1: {bad.qid} calls: 20000 calls"):
        load_checked_pool(root, CATALOG)


def test_load_checked_pool_needs_its_manifest(tmp_path):
    root = _pool_dir(tmp_path, [make_question()])
    (root / MANIFEST_FILE).unlink()
    with pytest.raises(PoolLoadError, match=rf"no pool manifest {root / MANIFEST_FILE}"):
        load_checked_pool(root, CATALOG)
