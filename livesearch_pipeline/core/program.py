"""Gold programs (DESIGN §4.2): static validation against the tool catalog, the call DAG, the
concrete arguments of a call on a date, and loading a question pool without executing anything.
"""

from __future__ import annotations

import datetime as dt
import functools
from pathlib import Path
from typing import Any, Mapping

from pydantic import ValidationError

from livesearch_pipeline.core.catalog import Catalog, FieldType, ToolMeta
from livesearch_pipeline.core.dates import resolve_date_spec
from livesearch_pipeline.core.extract import (
    ORDERED_AGGREGATES,
    REVISION_FIELD,
    ExtractionEmpty,
    ExtractionError,
    ExtractionNotMeaningful,
    ExtractionTie,
    read_value,
    relocated,
)
from livesearch_pipeline.core.models import (
    DRAWDOWN_DAYS, ArgValue, Call, DateSpec, Extractor, Program, Question, ValueRef,
)
from livesearch_pipeline.core.qid import compute_qid

NUMERIC_TYPES: frozenset[FieldType] = frozenset({"number", "integer"})
# Aggregates that return a field's own value (or a count) and so work on any field type.
TYPE_PRESERVING_AGGREGATES = frozenset({"first", "last", "count"})
ARG_AGGREGATES = frozenset({"argmax", "argmin"})


class ProgramError(ValueError):
    """A program that must not run. The message names the question and each faulty part."""

    def __init__(self, label: str, problems: list[tuple[str, str]] | None = None) -> None:
        """`label` names the question (qid, or "program"); each problem is (part, message).
        Without problems, `label` is the whole message."""
        self.label = label
        self.problems = problems or []
        if problems:
            super().__init__("; ".join(f"{label} {part}: {message}" for part, message in problems))
        else:
            super().__init__(label)


class PoolLoadError(ValueError):
    """A pool file that cannot be trusted; the message names the file and line."""


# --------------------------------------------------------------------------- validation


def _result_type(ref: ValueRef, meta: ToolMeta | None) -> FieldType | None:
    """The type of the value `ref` yields, or None when the catalog does not say."""
    if ref.aggregate == "count":
        return "integer"
    if ref.aggregate in ARG_AGGREGATES:
        field = meta.field(ref.arg_field or ref.select.key) if meta else None
        return field.type if field else None
    if ref.aggregate in DRAWDOWN_DAYS:
        field = meta.field(ref.select.key) if meta else None
        return field.type if field else None
    if ref.aggregate in (None, "first", "last"):
        field = meta.field(ref.field) if meta else None
        return field.type if field else None
    return "number"


def _check_ref(ref: ValueRef, meta: ToolMeta | None, part: str) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    sel, aggregate = ref.select, ref.aggregate
    if sel.mode == "all" and aggregate is None:
        problems.append((f"{part}.select", "mode 'all' needs an aggregate"))
    if sel.mode == "match" and aggregate in ORDERED_AGGREGATES:
        problems.append((f"{part}.aggregate", f"{aggregate!r} needs time-ordered records; mode 'match' has none"))
    if ref.arg_field is not None and aggregate not in ARG_AGGREGATES:
        problems.append((f"{part}.arg_field", "only argmax/argmin return an arg_field"))
    if meta is None:
        return problems
    if meta.fields:
        named = {"field": ref.field, "select.key": sel.key}
        if ref.arg_field is not None:
            named["arg_field"] = ref.arg_field
        named.update({f"select.where.{name}": name for name in sel.where})
        named.update({f"select.above.{name}": name for name in sel.above or {}})
        if sel.within is not None:
            named["select.within.key"] = sel.within.key
        for where, name in named.items():
            if meta.field(name) is None:
                problems.append((f"{part}.{where}", f"tool {meta.name!r} has no field {name!r}"))
    if sel.mode != "match" and sel.key == meta.time_key and meta.time_key_fmt and sel.key_fmt != meta.time_key_fmt:
        problems.append(
            (f"{part}.select.key_fmt", f"{sel.key_fmt!r} differs from the {meta.name!r} time key format {meta.time_key_fmt!r}")
        )
    if sel.revision is not None and meta.revision_field != REVISION_FIELD:
        problems.append((f"{part}.select.revision",
                         f"tool {meta.name!r} publishes one version of each record (it declares no revision field "
                         f"{REVISION_FIELD!r})"))
    for name in sel.above or {}:
        bounded = meta.field(name)
        if bounded is not None and bounded.type not in NUMERIC_TYPES:
            problems.append((f"{part}.select.above.{name}", f"{name!r} is {bounded.type}; a threshold bounds a number"))
    field = meta.field(ref.field)
    if aggregate is not None and aggregate not in TYPE_PRESERVING_AGGREGATES and field and field.type not in NUMERIC_TYPES:
        problems.append((f"{part}.aggregate", f"{aggregate!r} needs a numeric field; {ref.field!r} is {field.type}"))
    return problems


def _check_format(extractor: Extractor, result: FieldType | None) -> list[tuple[str, str]]:
    fmt = extractor.format
    if fmt.kind == "integer" and fmt.decimals not in (None, 0):
        return [("extract.format.decimals", "format 'integer' has no decimals")]
    if result is None:
        return []
    if fmt.kind in ("number", "percent", "integer") and result not in NUMERIC_TYPES:
        return [("extract.format", f"format {fmt.kind!r} needs a number; the extracted value is {result}")]
    if fmt.kind == "date" and result != "date":
        return [("extract.format", f"format 'date' needs a date; the extracted value is {result}")]
    if fmt.kind == "text" and result in NUMERIC_TYPES:
        return [("extract.format", "a number is never a text answer; use number, percent or integer")]
    return []


def _check_call(call: Call, meta: ToolMeta | None, part: str) -> list[tuple[str, str]]:
    if meta is None:
        return [(f"{part}.tool", f"unknown tool {call.tool!r}")]
    problems: list[tuple[str, str]] = []
    if not meta.defines_gold:
        problems.append((f"{part}.tool", f"tool {call.tool!r} has role {meta.role!r}; only data tools define gold"))
    date_params = {p.name: p for p in meta.date_params}
    for name in call.args:
        if name in date_params:
            problems.append(
                (f"{part}.args.{name}", "a date parameter takes a relative date spec (dates), never a fixed value")
            )
    if date_params:
        for name, spec in call.dates.items():
            param = date_params.get(name)
            if param is None:
                problems.append((f"{part}.dates.{name}", f"tool {call.tool!r} has no date parameter {name!r}"))
            elif spec.fmt != param.fmt:
                problems.append((f"{part}.dates.{name}.fmt", f"{spec.fmt!r} but {call.tool!r} expects {param.fmt!r}"))
    for name, spec in call.dates.items():
        # Counting sessions on another exchange's calendar silently shifts dates around holidays.
        if spec.calendar and meta.calendar and spec.calendar != meta.calendar:
            problems.append(
                (f"{part}.dates.{name}.calendar", f"{spec.calendar} but {call.tool!r} trades on {meta.calendar}")
            )
    return problems


def _series_problems(ref: ValueRef, call: Call, meta: ToolMeta | None, part: str) -> list[tuple[str, str]]:
    """One series per time key (DESIGN §2 item 4): a selection over a tool that returns several
    series for one date names each series key in `where` (or matches on it), so an aggregate
    never mixes two currency pairs or two exchanges and the question can name its series."""
    if meta is None:
        return []
    if any(name in call.args or name in call.refs for name in meta.one_series_by):
        return []  # the call's arguments narrow the response to one series (ToolMeta.one_series_by)
    needed = list(meta.series_keys)
    # An instrument tool called without its entity lists every instrument of the date.
    entity = meta.entity_param
    if entity and meta.field(entity) is not None and entity not in call.args and entity not in call.refs:
        needed.append(entity)
    pinned = set(ref.select.where) | ({ref.select.key} if ref.select.mode == "match" else set())
    if ref.select.within is not None:
        # A screen: the records are the members' own series, each once per time key.
        pinned.add(ref.select.within.key)
    if ref.aggregate in ARG_AGGREGATES and ref.select.mode == "latest" and ref.arg_field is not None:
        # Entity resolution: which series (holding, constituent) ranks first on the latest
        # period. The argmax runs across the series of one time key and answers with the series.
        pinned.add(ref.arg_field)
    missing = [key for key in needed if key not in pinned]
    if not missing:
        return []
    per = f"per {meta.time_key!r}" if meta.time_key else "in one response"
    return [(f"{part}.select.where",
             f"tool {meta.name!r} returns several series {per}; the selection must name its series "
             f"in select.where (missing: {', '.join(repr(k) for k in missing)})")]


def _window_problems(ref: ValueRef, call: Call, meta: ToolMeta | None, part: str) -> list[tuple[str, str]]:
    """A session count must be on the calendar the series trades on: exchange sessions of another
    market, or of any exchange for a calendar-less weekday series (FX), count days the series
    does not have, so "the last 20 sessions" would hold more or fewer than 20 records."""
    if meta is None or not meta.time_key_fmt or "%d" not in meta.time_key_fmt:
        return []
    problems = []
    anchor = ref.select.anchor
    # Call dates on another exchange's calendar are _check_call's; the selection anchor is ours.
    if anchor is not None and anchor.calendar and meta.calendar and anchor.calendar != meta.calendar:
        problems.append((f"{part}.select.anchor", f"{anchor.calendar} but {meta.name!r} trades on {meta.calendar}"))
    if meta.calendar is None:
        specs = [(f"calls ({call.id}).dates.{name}", spec) for name, spec in call.dates.items()]
        specs += [(f"{part}.select.anchor", anchor)] if anchor is not None else []
        problems.extend(
            (where, f"{spec.calendar} sessions, but {meta.name!r} follows no exchange calendar; "
                    "count calendar days (days_back) instead")
            for where, spec in specs if spec.sessions_back is not None
        )
    return problems


def _answer_role_problems(ref: ValueRef, meta: ToolMeta | None, part: str) -> list[tuple[str, str]]:
    """Only measures and labels are answers (argmax/argmin answer with the date on which a
    measure peaked; a count counts records): never a flag, code, identifier, adjustment factor,
    date or description."""
    if meta is None or ref.aggregate == "count":
        return []
    field = meta.field(ref.field)
    if field is None or field.answerable:
        return []
    return [(f"{part}.field", f"field {ref.field!r} of {meta.name!r} has role {field.role!r}; "
                              "only measures and labels are answers")]


def _join_problems(ref: ValueRef, meta: ToolMeta | None, join_meta: ToolMeta | None, part: str) -> list[tuple[str, str]]:
    """A RecordJoin multiplies by a numeric field of a tool keyed by the same time key."""
    join = ref.times
    assert join is not None
    problems: list[tuple[str, str]] = []
    if ref.select.mode == "match":
        problems.append((f"{part}.times", "a join needs time-keyed records; mode 'match' has no time key"))
    if join_meta is None or meta is None:
        return problems
    if join_meta.time_key != ref.select.key:
        problems.append((f"{part}.times.call", f"tool {join_meta.name!r} is keyed by {join_meta.time_key!r}, "
                                               f"not by the selection key {ref.select.key!r}"))
    joined = join_meta.field(join.field)
    if join_meta.fields and joined is None:
        problems.append((f"{part}.times.field", f"tool {join_meta.name!r} has no field {join.field!r}"))
    elif joined is not None and joined.type not in NUMERIC_TYPES:
        problems.append((f"{part}.times.field", f"{join.field!r} is {joined.type}; a join multiplies by a number"))
    field = meta.field(ref.field)
    if field is not None and field.type not in NUMERIC_TYPES:
        problems.append((f"{part}.times", f"{ref.field!r} is {field.type}; only a number is multiplied"))
    return problems


def validate_program(program: Program, catalog: Catalog, *, qid: str | None = None) -> None:
    """Raise ProgramError listing every problem that would make the program unsafe or wrong."""
    problems: list[tuple[str, str]] = []
    tool_of: dict[str, ToolMeta | None] = {}
    call_of: dict[str, Call] = {}
    position: dict[str, int] = {}
    for i, call in enumerate(program.calls):
        part = f"calls[{i}] ({call.id})"
        if call.id in position:
            problems.append((f"{part}.id", f"duplicate call id {call.id!r} (first at calls[{position[call.id]}])"))
        else:
            position[call.id] = i
        meta = catalog.get(call.tool)
        tool_of.setdefault(call.id, meta)
        call_of.setdefault(call.id, call)
        problems.extend(_check_call(call, meta, part))

    def check_ref(ref: ValueRef, part: str, before: int | None) -> None:
        if ref.call not in position:
            problems.append((f"{part}.call", f"unknown call {ref.call!r}"))
            return
        if before is not None and position[ref.call] >= before:
            problems.append((f"{part}.call", f"call {ref.call!r} is not an earlier call (a program is a DAG in call order)"))
            return
        problems.extend(_check_ref(ref, tool_of[ref.call], part))
        if ref.times is not None:
            join = ref.times.call
            if join not in position:
                problems.append((f"{part}.times.call", f"unknown call {join!r}"))
            elif before is not None and position[join] >= before:
                problems.append((f"{part}.times.call", f"call {join!r} is not an earlier call"))
            else:
                problems.extend(_join_problems(ref, tool_of[ref.call], tool_of[join], part))
        member = ref.select.within
        if member is not None:
            if member.call not in position:
                problems.append((f"{part}.select.within.call", f"unknown call {member.call!r}"))
            elif position[member.call] >= (position[ref.call] if before is None else before):
                problems.append((f"{part}.select.within.call", f"call {member.call!r} is not an earlier call"))
            else:
                listed = tool_of[member.call]
                if listed is not None and listed.fields and listed.field(member.field) is None:
                    problems.append((f"{part}.select.within.field",
                                     f"tool {listed.name!r} has no field {member.field!r}"))
        problems.extend(_series_problems(ref, call_of[ref.call], tool_of[ref.call], part))
        problems.extend(_window_problems(ref, call_of[ref.call], tool_of[ref.call], part))
        if before is None:  # the answer itself, not an argument read for a later call
            problems.extend(_answer_role_problems(ref, tool_of[ref.call], part))

    for i, call in enumerate(program.calls):
        for name, ref in call.refs.items():
            check_ref(ref, f"calls[{i}] ({call.id}).refs.{name}", i)
    extractor = program.extract
    for part, ref in extractor.refs():
        check_ref(ref, part, None)
    result = _result_type(extractor, tool_of.get(extractor.call))
    if extractor.combine is not None:
        for part, ref in extractor.refs():
            kind = _result_type(ref, tool_of.get(ref.call))
            if kind is not None and kind not in NUMERIC_TYPES:
                problems.append((part, f"combine {extractor.combine.op!r} needs a number; the value is {kind}"))
        result = "number"
    if extractor.pick is not None:
        for part, ref in extractor.refs():
            kind = _result_type(ref, tool_of.get(ref.call))
            if kind is not None and kind not in NUMERIC_TYPES:
                problems.append((part, f"pick {extractor.pick.op!r} compares numbers; the value is {kind}"))
        result = "text"  # the label of the value that ranks first
        if extractor.format.kind != "text":
            problems.append(("extract.format", f"a pick answers with a label: format 'text', not {extractor.format.kind!r}"))
    problems.extend(_check_format(extractor, result))
    if problems:
        # A call's date problem is found once per selection over it; report it once.
        raise ProgramError(qid or "program", list(dict.fromkeys(problems)))


# --------------------------------------------------------------------------- execution helpers


def call_levels(program: Program) -> list[list[Call]]:
    """The calls in topological levels: a call's refs all point into earlier levels, so the
    calls of one level are independent and may run concurrently. Program order within a level."""
    by_id = {call.id: call for call in program.calls}
    level_of: dict[str, int] = {}
    visiting: set[str] = set()

    def level(call_id: str, part: str) -> int:
        if call_id in level_of:
            return level_of[call_id]
        if call_id not in by_id:
            raise ProgramError("program", [(part, f"unknown call {call_id!r}")])
        if call_id in visiting:
            raise ProgramError("program", [(part, f"call {call_id!r} is part of a cycle")])
        visiting.add(call_id)
        refs = by_id[call_id].refs
        level_of[call_id] = 1 + max((level(r.call, f"{call_id}.refs.{n}") for n, r in refs.items()), default=-1)
        visiting.discard(call_id)
        return level_of[call_id]

    levels: list[list[Call]] = []
    for call in program.calls:
        depth = level(call.id, call.id)
        while len(levels) <= depth:
            levels.append([])
        levels[depth].append(call)
    return levels


# The window convention (issue 28, DESIGN "Conventions"): a change or return "over the last N
# sessions" runs from the close N sessions before the latest to the latest, N intervals over
# N + 1 closes, as a terminal's N-day change (Wind's, Tushare's pct_chg chained) does; a mean,
# sum, high, low or any other aggregate over N sessions reads N rows.
CHANGE_AGGREGATES = frozenset({"change", "pct_change"})


def window_rows(aggregate: str | None, sessions: int) -> int:
    """The records an aggregate "over the last `sessions` sessions" reads: N + 1 for a change."""
    return sessions + 1 if aggregate in CHANGE_AGGREGATES else sessions


def concrete_args(call: Call, as_of: dt.date, responses: Mapping[str, Any]) -> dict[str, ArgValue]:
    """The arguments `call` sends on `as_of`: fixed args, resolved dates, and values read from
    the responses of earlier calls. ExtractionEmpty/ExtractionError when a ref cannot be read."""
    args: dict[str, ArgValue] = dict(call.args)
    for name, spec in call.dates.items():
        args[name] = resolve_date_spec(spec, as_of)
    for name, ref in call.refs.items():
        try:
            args[name] = read_value(ref, responses, as_of).value
        except (ExtractionTie, ExtractionNotMeaningful) as exc:
            raise relocated(exc, f"call {call.id!r} refs.{name} from call {ref.call!r}") from exc
        except ExtractionEmpty as exc:
            raise ExtractionEmpty(f"call {call.id!r} refs.{name} (from call {ref.call!r}): {exc}") from exc
        except ExtractionError as exc:
            raise ExtractionError(f"call {call.id!r} refs.{name} (from call {ref.call!r}): {exc}") from exc
    return args


# --------------------------------------------------------------------------- bounds

# Bounds on what one program may make the data service do. Built programs stay inside them
# (construction: one call per member of a peer set of at most 17 stocks, windows of at most 260
# sessions, look-backs of at most 3,650 days for static tools); a pool from an untrusted source
# must not turn a refresh into a bulk download (20,000 calls, or decades of minute bars).
MAX_CALLS_PER_PROGRAM = 20
MAX_SESSIONS_BACK = 260  # about one trading year
MAX_DAYS_BACK = 3660  # ten years and a leap-day margin
MAX_PERIODS_BACK = 20  # five years of quarters (halves, years)
MAX_MONTHS_BACK = 60  # five years of months (the best month of the last 24, issue 29)


def _date_specs(program: Program) -> list[tuple[str, DateSpec]]:
    specs: list[tuple[str, DateSpec]] = []
    for i, call in enumerate(program.calls):
        specs.extend((f"calls[{i}] ({call.id}).dates.{name}", spec) for name, spec in call.dates.items())
        specs.extend((f"calls[{i}] ({call.id}).refs.{name}.select.anchor", ref.select.anchor)
                     for name, ref in call.refs.items() if ref.select.anchor is not None)
    refs = program.extract.refs()
    specs.extend((f"{part}.select.anchor", ref.select.anchor) for part, ref in refs if ref.select.anchor is not None)
    specs.extend((f"{part}.select.within.select.anchor", ref.select.within.select.anchor) for part, ref in refs
                 if ref.select.within is not None and ref.select.within.select.anchor is not None)
    return specs


def check_program_bounds(program: Program, *, qid: str | None = None) -> None:
    """Raise ProgramError when the program makes more calls, or reaches further back, than the bounds."""
    problems: list[tuple[str, str]] = []
    if len(program.calls) > MAX_CALLS_PER_PROGRAM:
        # Reported alone: walking every call of such a program is the cost the bound prevents.
        raise ProgramError(qid or "program", [
            ("calls", f"{len(program.calls)} calls, more than the {MAX_CALLS_PER_PROGRAM} a program may make")])
    for part, spec in _date_specs(program):
        for name, value, bound in (("sessions_back", spec.sessions_back, MAX_SESSIONS_BACK),
                                   ("days_back", spec.days_back, MAX_DAYS_BACK),
                                   ("periods_back", spec.periods_back,
                                    MAX_MONTHS_BACK if spec.period == "month" else MAX_PERIODS_BACK)):
            if value is not None and value > bound:
                problems.append((f"{part}.{name}", f"{value} is beyond the bound of {bound}"))
    if problems:
        raise ProgramError(qid or "program", problems)


# Every data tool answers `{"items": [record], "total": n, "has_more": bool}` (the embedded
# service's output schema, which the Tushare forwarder reproduces): records live under "items".
RECORDS_PATH = "items"


def check_record_paths(program: Program, *, qid: str | None = None) -> None:
    """Raise ProgramError when a value is read from anywhere but the records of a response."""
    refs: list[tuple[str, ValueRef]] = program.extract.refs()
    for i, call in enumerate(program.calls):
        refs.extend((f"calls[{i}] ({call.id}).refs.{name}", ref) for name, ref in call.refs.items())
    paths = [(part, ref.path) for part, ref in refs]
    paths += [(f"{part}.times", ref.times.path) for part, ref in refs if ref.times is not None]
    paths += [(f"{part}.select.within", ref.select.within.path) for part, ref in refs if ref.select.within is not None]
    problems = [(f"{part}.path", f"{path!r} is not a path of a data tool's response (records are under "
                 f"{RECORDS_PATH!r})") for part, path in paths if path != RECORDS_PATH]
    if problems:
        raise ProgramError(qid or "program", problems)


def check_question(question: Question, catalog: Catalog) -> None:
    """Everything that must hold before a pool question's program may run: the bounds, the
    record paths, and the catalog's `validate_program` (known tool of role `data`, fields that
    exist, date formats the tool expects, format kinds that fit the value). Raises ProgramError;
    the bounds come first, so that a 20,000-call program is refused before it is walked."""
    check_program_bounds(question.program, qid=question.qid)
    check_record_paths(question.program, qid=question.qid)
    validate_program(question.program, catalog, qid=question.qid)


# --------------------------------------------------------------------------- pool


def load_pool(path: Path, catalog: Catalog | None = None) -> list[Question]:
    """Read a question pool (JSONL). Never executes anything.

    Every line must be a valid Question whose qid equals `compute_qid(program, entity)` (a
    mismatch means the pool was edited by hand or built by other code); qids are unique; with
    a catalog, every program also passes `check_question` (catalog and bounds). Errors name the
    file and line. A pool about to be executed is loaded with `core.pool.load_checked_pool`,
    which also checks the bytes against the pool manifest's sha256.
    """
    path = Path(path)
    return parse_pool_bytes(str(path), path.read_bytes(), catalog)


def parse_pool_bytes(where: str, data: bytes, catalog: Catalog | None = None) -> list[Question]:
    """`load_pool` on bytes already read (so that the bytes hashed are the bytes parsed)."""
    parsed = _parse_pool(where, data)
    if catalog is not None:
        _check_pool(where, data, catalog.model_dump_json())
    return list(parsed)


# The steps of one refresh check the same pool against the same catalog (~0.2 ms a question);
# keyed by both texts, so a changed pool or catalog is checked afresh. Errors are never cached.
@functools.lru_cache(maxsize=2)
def _check_pool(where: str, data: bytes, catalog_json: str) -> None:
    catalog = Catalog.model_validate_json(catalog_json)
    for number, question in enumerate(_parse_pool(where, data), start=1):
        try:
            check_question(question, catalog)
        except ProgramError as exc:
            raise PoolLoadError(f"{where}:{number}: {exc}") from exc


# One daily refresh reads the same pool in several steps of one process (served questions, shard
# steps, checks). Records are frozen models, and the key is the file's bytes, so a rewritten pool
# is parsed afresh; errors are raised, never cached. Two entries: the pool and its rebuild (each
# parsed pool is ~75,000 objects that every full garbage collection walks).
@functools.lru_cache(maxsize=2)
def _parse_pool(where: str, data: bytes) -> tuple[Question, ...]:
    questions: list[Question] = []
    line_of: dict[str, int] = {}
    for number, raw in enumerate(data.splitlines(), start=1):
        at = f"{where}:{number}"
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PoolLoadError(f"{at}: not UTF-8 ({exc})") from None
        if not text.strip():
            raise PoolLoadError(f"{at}: blank line (a pool has one question per line)")
        try:
            question = Question.model_validate_json(text)
        except ValidationError as exc:
            raise PoolLoadError(f"{at}: not a valid question record:\n{exc}") from None
        if question.qid in line_of:
            raise PoolLoadError(f"{at}: duplicate qid {question.qid} (first on line {line_of[question.qid]})")
        line_of[question.qid] = number
        expected = compute_qid(question.program, question.entity)
        if question.qid != expected:
            raise PoolLoadError(
                f"{at}: qid {question.qid} does not match its program and entity (expected {expected}); "
                "the record was altered after it was built"
            )
        questions.append(question)
    return tuple(questions)
