"""The declarative extractor engine (DESIGN §4.2): from tool responses to one gold answer.

`read_value` reads one `ValueRef` (path → records → selection → field → aggregate);
`run_extractor` adds the optional combine and the answer format, and never raises for data
problems: they become an `ExtractOutcome` with status `empty` or `error`.

Semantics worth knowing:
- Time keys (modes latest, snapshot, minute, all) are parsed with `select.key_fmt` before any
  comparison or ordering; a record whose key is missing or does not parse is an error, never
  compared as a string. Period keys (`YYYYMM`, `YYYYQn`) parse to their period's last day.
- `match` keys are compared by value (1 ≠ "1", and a bool never equals a number); the records
  keep the response order, and `observed_period` is not set since the key is not a time.
- Aggregates skip records whose field is null, as SQL aggregates do; if every selected record
  is null the outcome is `empty`. first/last/change/pct_change/argmax/argmin work on records
  ordered by key ascending (responses arrive newest first). change, pct_change and std need at
  least two values.
- Ties are never broken silently (issue 28): when the deciding value of a ranking (argmax,
  argmin, a top-N boundary, a screen's threshold) is shared by two or more records, there is
  no one answer. `ranking_tie` is the one test every ranking construct calls; a tie raises
  `ExtractionTie` (an `empty` outcome) whose reason begins "tie:" and names the tied keys and
  the value ("tie: 601682.SH and 603899.SH at 30.0"), so the refresh withdraws the question on
  that day with that reason and construction drops a candidate that ties on any day it sees.
- A percentage change, a percentage difference or a ratio needs a positive base (issue 28):
  a payout ratio against a loss per share, or a growth rate from a loss, means nothing; the
  outcome is `empty` with a reason beginning "not meaningful:".
- One version per period (issue 39): where records carry Tushare's `update_flag` (a statement a
  later report restated comes back twice for one period: "0" as first reported, "1" restated),
  every selection reads one version of each (instrument, key) before its mode applies
  (`one_version`): `select.revision` "first" keeps the first-reported records only, "latest" (and
  an unset revision) the latest version of each, restated where the clock has seen the
  restatement. So a window never mixes versions and "the same quarter a year earlier" is the
  comparative the company itself compares against.
- Compound growth (issue 39): `cagr` is ((main / other) ** (1 / years) − 1) × 100, both values
  positive (a loss at either end is "not meaningful:"). `select.where_first` makes `latest` the
  newest record `where` keeps (the latest annual report although an interim came after it).
- Rounding is decimal ROUND_HALF_UP everywhere (2.675 → 2.68, −2.5 → −3), applied to the
  shortest decimal repr of the float, so that the answer is what a person rounding the shown
  number would write; a rounded zero is never rendered with a minus sign.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import statistics
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any, Literal, Mapping, Sequence

from livesearch_pipeline.core.dates import format_date, parse_datetime, resolve_date
from livesearch_pipeline.core.models import (
    DRAWDOWN_DAYS, PERCENTAGE_POINTS, Combine, Extractor, Format, Pick, Selection, ValueRef,
)

Number = int | float
ExtractedScalar = float | int | str

DEFAULT_DATE_IN_FMT = "%Y%m%d"
DEFAULT_DATE_OUT_FMT = "%Y-%m-%d"
ORDERED_AGGREGATES = frozenset({"first", "last", "change", "pct_change", "argmax", "argmin",
                                "max_drawdown", *DRAWDOWN_DAYS})
# Enough digits for any finite float at 8 decimals (the largest is ~1.8e308).
_ROUNDING_CONTEXT = Context(prec=400)


class ExtractionEmpty(Exception):
    """The program ran but selected nothing (no record, or a null value): status `empty`."""


class ExtractionError(Exception):
    """The response does not fit the extractor (bad path, type mismatch, ambiguity): `error`."""


# Tushare's version marker of statement records (issue 39) and its two values.
REVISION_FIELD = "update_flag"
FIRST_REPORTED, RESTATED = "0", "1"

TIE = "tie:"
NOT_MEANINGFUL = "not meaningful:"
MAX_TIED_NAMED = 5  # keys a tie reason names before counting the rest


class _ReasonFirst(ExtractionEmpty):
    """An empty outcome whose reason must stay first in every message built from it (the
    withdrawal reason starts with it); the places it passed through follow in parentheses,
    outermost first: "tie: A and B at 30.0 (c2 daily; call 'c2' refs.ts_code from call 'c1')"."""

    def __init__(self, reason: str, places: tuple[str, ...] = ()) -> None:
        self.reason, self.places = reason, places
        super().__init__(f"{reason} ({'; '.join(places)})" if places else reason)


class ExtractionTie(_ReasonFirst):
    """The deciding value of a ranking is shared: no one answer on the day (status `empty`).
    Its message begins with TIE."""


class ExtractionNotMeaningful(_ReasonFirst):
    """A ratio or percentage over a non-positive base (status `empty`); message begins NOT_MEANINGFUL."""


def located(exc: Exception, where: str) -> str:
    """`exc`'s message with the place it happened: a tie or a not-meaningful value keeps its
    reason first (see _ReasonFirst); any other message is prefixed ("c2 daily: ...")."""
    if isinstance(exc, _ReasonFirst):
        return str(relocated(exc, where))
    return f"{where}: {exc}"


def relocated(exc: ExtractionEmpty, where: str) -> ExtractionEmpty:
    """The same kind of empty outcome, with `where` added (see `located`)."""
    if isinstance(exc, _ReasonFirst):
        return type(exc)(exc.reason, (where, *exc.places))
    return ExtractionEmpty(f"{where}: {exc}")


def is_tie(reason: str | None) -> bool:
    """Whether a withdrawal or outcome reason is a tie (see ExtractionTie)."""
    return bool(reason) and reason.removeprefix("empty: ").startswith(TIE)


def is_not_meaningful(reason: str | None) -> bool:
    """Whether a withdrawal or outcome reason is a ratio or percentage over a non-positive base."""
    return bool(reason) and reason.removeprefix("empty: ").startswith(NOT_MEANINGFUL)


def ranking_tie(entries: Sequence[tuple[Any, Number]], *, highest: bool, n: int = 1) -> str | None:
    """The tie that leaves a ranking of `entries` (key, deciding value) undecided, or None.

    The first `n` by value (highest or lowest first) must be told apart from the rest: the
    n-th value may not be shared with any entry beyond it, and (for n = 1, an argmax or argmin)
    no two entries may share the best value. A top-N whose members are listed in order passes
    each position: call it with n = 1, 2, ..., N. Values are compared exactly as the data gives
    them (the data service rounds them once): 30.0 and 30.0 tie, 30.0 and 29.99 do not.
    Returns the reason "tie: K1 and K2 at V" (more keys: "K1, K2 and K3 at V").
    """
    if n < 1:
        raise ValueError(f"ranking_tie: n must be >= 1, got {n}")
    if len(entries) <= n:
        return None
    ordered = sorted(entries, key=lambda kv: kv[1], reverse=highest)
    boundary = ordered[n - 1][1]
    if ordered[n][1] != boundary:
        return None
    tied = [str(k) for k, v in ordered if v == boundary]
    if len(tied) > MAX_TIED_NAMED:
        # A factor constant over a window ties on every day of it: name a few, count the rest.
        names = f"{', '.join(tied[:MAX_TIED_NAMED])} and {len(tied) - MAX_TIED_NAMED} more"
    else:
        names = f"{', '.join(tied[:-1])} and {tied[-1]}"
    return f"{TIE} {names} at {boundary!r}"


def check_ranking(entries: Sequence[tuple[Any, Number]], *, highest: bool, n: int = 1) -> None:
    """Raise ExtractionTie when `ranking_tie` finds one."""
    reason = ranking_tie(entries, highest=highest, n=n)
    if reason is not None:
        raise ExtractionTie(reason)


@dataclass(frozen=True)
class ExtractedValue:
    value: ExtractedScalar
    observed_period: str | None


@dataclass(frozen=True)
class ExtractOutcome:
    status: Literal["ok", "empty", "error"]
    answer: str | None
    value: ExtractedScalar | None
    unit: str | None
    observed_period: str | None
    error: str | None


# --------------------------------------------------------------------------- records


def _records_at(response: Any, path: str) -> list[dict[str, Any]]:
    node = response
    walked: list[str] = []
    for segment in path.split(".") if path else []:
        walked.append(segment)
        if isinstance(node, dict):
            if segment not in node:
                raise ExtractionError(f"path {'.'.join(walked)!r} not found in the response")
            node = node[segment]
        elif isinstance(node, list) and segment.isdigit():
            if int(segment) >= len(node):
                raise ExtractionError(f"path {'.'.join(walked)!r}: index out of range ({len(node)} items)")
            node = node[int(segment)]
        else:
            raise ExtractionError(f"path {'.'.join(walked)!r}: cannot descend into {type(node).__name__}")
    if not isinstance(node, list):
        raise ExtractionError(f"path {path!r} holds {type(node).__name__}, not a list of records")
    if not set(map(type, node)) <= _DICT_ONLY:  # every record exactly a dict (a C-level pass)
        i, record = next((i, r) for i, r in enumerate(node) if not isinstance(r, dict))
        raise ExtractionError(f"path {path!r}: record {i} is {type(record).__name__}, not an object")
    return node


def _same_value(a: Any, b: Any) -> bool:
    # bool is an int subclass in Python; a flag must never match a number.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


_DICT_ONLY = frozenset({dict})


@functools.lru_cache(maxsize=262144)
def _key_text(moment: dt.datetime, fmt: str) -> str:
    """`format_date` of a parsed time key (a response's keys recur for every program reading it)."""
    return format_date(moment, fmt)


@functools.lru_cache(maxsize=262144)
def _parse_key_cached(text: str, fmt: str) -> dt.datetime:
    return parse_datetime(text, fmt)


def _key_time(record: dict[str, Any], key: str, fmt: str) -> dt.datetime:
    raw = record.get(key)
    if type(raw) is str:
        try:
            return _parse_key_cached(raw, fmt)
        except ValueError as exc:
            raise ExtractionError(f"time key {key!r}: {exc}") from None
    if raw is None:
        raise ExtractionError(f"a record has no time key {key!r}")
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise ExtractionError(f"time key {key!r} is {type(raw).__name__} {raw!r}, not a {fmt!r} string")
    try:
        return _parse_key_cached(str(raw), fmt)
    except ValueError as exc:
        raise ExtractionError(f"time key {key!r}: {exc}") from None


@dataclass(frozen=True)
class _Selected:
    records: list[dict[str, Any]]
    keys: list[str] | None  # time keys, ascending with records; None for match mode


def _where(sel: Selection, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not sel.where:
        return records
    return [r for r in records if all(_same_value(r.get(f), v) for f, v in sel.where.items())]


def _members(sel: Selection, responses: Mapping[str, Any] | None, as_of: dt.date) -> set[Any]:
    """The set `sel.within` names: the `field` values of the records its selection picks in the
    other call's response (an index's constituents at its latest rebalance)."""
    member = sel.within
    assert member is not None
    if responses is None or member.call not in responses:
        raise ExtractionError(f"within: no response for call {member.call!r}")
    ref = ValueRef(call=member.call, path=member.path, select=member.select, field=member.field)
    picked = _select(ref, _records_at(responses[member.call], member.path), as_of, responses)
    members = {r.get(member.field) for r in picked.records} - {None}
    if not members:
        raise ExtractionEmpty(f"within: call {member.call!r} lists no {member.field!r}")
    return members


def _keep(sel: Selection, records: list[dict[str, Any]], responses: Mapping[str, Any] | None,
          as_of: dt.date) -> list[dict[str, Any]]:
    """`where`, then a screen's threshold (`above`, strict; a record whose field is null or not a
    number is not above anything). Membership (`within`) was applied first, in `_select`."""
    records = _where(sel, records)
    if sel.above:
        records = [r for r in records
                   if all(_is_number(r.get(f)) and r[f] > bound for f, bound in sel.above.items())]
    return records


def _years_before(moment: dt.datetime, years: int) -> dt.datetime:
    """The same calendar day `years` earlier; a 29 February becomes the 28th."""
    try:
        return moment.replace(year=moment.year - years)
    except ValueError:
        return moment.replace(year=moment.year - years, day=28)


def one_version(sel: Selection, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of one version of each (instrument, key) (module doc): unchanged when the
    records carry no REVISION_FIELD; the first-reported ones for `revision` "first"; else, per
    instrument and key, those of the greatest flag (the restated version where there is one)."""
    if not records or REVISION_FIELD not in records[0]:
        return records
    if sel.revision == "first":
        return [r for r in records if r.get(REVISION_FIELD) == FIRST_REPORTED]
    newest: dict[tuple[Any, Any], Any] = {}
    for r in records:
        identity, flag = (r.get("ts_code"), r.get(sel.key)), r.get(REVISION_FIELD)
        if flag is not None and (identity not in newest or str(flag) > str(newest[identity])):
            newest[identity] = flag
    return [r for r in records
            if r.get(REVISION_FIELD) is None or newest.get((r.get("ts_code"), r.get(sel.key))) == r.get(REVISION_FIELD)]


def _select(ref: ValueRef, records: list[dict[str, Any]], as_of: dt.date,
            responses: Mapping[str, Any] | None = None) -> _Selected:
    sel = ref.select
    records = one_version(sel, records)
    if sel.within is not None:
        # A screen reads the members' records only, before any mode: the latest session of a
        # cross-section of the whole market is the latest of its members, and a set of 50 costs
        # the same in a market of 300 instruments or of 5,000.
        members = _members(sel, responses, as_of)
        records = [r for r in records if r.get(sel.within.key) in members]
    if sel.mode == "match":
        return _Selected([r for r in _keep(sel, records, responses, as_of) if _same_value(r.get(sel.key), sel.value)],
                         None)
    if sel.mode == "latest":
        # The latest time key of the whole response first, then the named series on it: a series
        # absent from the latest period (a holder that left the top ten, a delisted pair) selects
        # nothing, instead of silently answering with an older period's value.
        timed = sorted(((_key_time(r, sel.key, sel.key_fmt), r) for r in records), key=lambda kr: kr[0])
        limit = resolve_date(sel.anchor, as_of) if sel.anchor else as_of
        eligible = [(t, r) for t, r in timed if t.date() <= limit]
        if sel.where_first:
            # The newest of the records `where` keeps (the latest annual report, an interim after it).
            eligible = [(t, r) for t, r in eligible if _where(sel, [r])]
        newest = eligible[-1][0] if eligible else None
        on_newest = _keep(sel, [r for t, r in eligible if t == newest], responses, as_of)
        if sel.years_back is not None and newest is not None and on_newest:
            # The same series n years before the latest key: a missing period selects nothing.
            wanted = format_date(_years_before(newest, sel.years_back), sel.key_fmt)
            on_newest = _where(sel, [r for t, r in eligible if _key_text(t, sel.key_fmt) == wanted])
        return _Selected(on_newest, [str(r[sel.key]) for r in on_newest])

    timed = sorted(((_key_time(r, sel.key, sel.key_fmt), r) for r in _keep(sel, records, responses, as_of)),
                   key=lambda kr: kr[0])
    if sel.mode == "snapshot":
        assert sel.anchor is not None  # Selection's validator
        wanted = format_date(resolve_date(sel.anchor, as_of), sel.key_fmt)
        timed = [(t, r) for t, r in timed if _key_text(t, sel.key_fmt) == wanted]
    elif sel.mode == "minute":
        assert sel.anchor is not None and sel.time is not None  # Selection's validator
        hour, minute = (int(p) for p in sel.time.split(":"))
        wanted_time = dt.datetime.combine(resolve_date(sel.anchor, as_of), dt.time(hour, minute))
        timed = [(t, r) for t, r in timed if t == wanted_time]
    return _Selected([r for _, r in timed], [str(r[sel.key]) for _, r in timed])


# --------------------------------------------------------------------------- values


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_value(value: Any, field: str) -> ExtractedScalar:
    kind = type(value)
    if kind is int or kind is str or (kind is float and math.isfinite(value)):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ExtractionError(f"field {field!r} holds {type(value).__name__} {value!r}, not a number or string")
    if isinstance(value, float) and not math.isfinite(value):
        raise ExtractionError(f"field {field!r} holds the non-finite number {value!r}")
    return value


def _numbers(values: Sequence[Any], field: str, aggregate: str) -> list[Number]:
    for value in values:
        if type(value) is not float and not _is_number(value):
            raise ExtractionError(
                f"aggregate {aggregate!r} needs numbers; field {field!r} holds {type(value).__name__} {value!r}"
            )
    return list(values)


def _period(keys: Sequence[str]) -> str:
    return keys[0] if keys[0] == keys[-1] else f"{keys[0]}..{keys[-1]}"


def _joined(ref: ValueRef, picked: _Selected, responses: Mapping[str, Any]) -> _Selected:
    """The selected records with `ref.field` multiplied by the joined call's field on the same
    time key (RecordJoin); a selected record without a joined value is an error, never skipped."""
    join = ref.times
    assert join is not None
    if picked.keys is None:
        raise ExtractionError("times: a join needs time-keyed records; mode 'match' has no time key")
    if join.call not in responses:
        raise ExtractionError(f"times: no response for call {join.call!r}")
    key = ref.select.key
    factors: dict[str, Any] = {}
    for record in _records_at(responses[join.call], join.path):
        stamp = record.get(key)
        if stamp is not None:
            factors[str(stamp)] = record.get(join.field)
    records = []
    for record, stamp in zip(picked.records, picked.keys):
        value = record.get(ref.field)
        if value is None:
            records.append(record)
            continue
        factor = factors.get(stamp)
        if factor is None:
            raise ExtractionEmpty(f"times: call {join.call!r} has no {join.field!r} for {key} {stamp}")
        if not (_is_number(value) and _is_number(factor)):
            raise ExtractionError(f"times: {ref.field!r} {value!r} and {join.field!r} {factor!r} are not both numbers")
        records.append({**record, ref.field: value * factor})
    return _Selected(records, picked.keys)


def _aggregate(ref: ValueRef, picked: _Selected) -> ExtractedValue:
    aggregate, field = ref.aggregate, ref.field
    assert aggregate is not None
    keys = picked.keys
    rows = [
        (i, _check_value(r[field], field))
        for i, r in enumerate(picked.records)
        if r.get(field) is not None
    ]
    if aggregate == "count":
        used = [keys[i] for i, _ in rows] if keys else []
        return ExtractedValue(len(rows), _period(used) if used else None)
    if not rows:
        raise ExtractionEmpty(f"field {ref.field!r} is null in all {len(picked.records)} selected record(s)")
    if aggregate in ORDERED_AGGREGATES and keys is None:
        raise ExtractionError(f"aggregate {aggregate!r} needs time-ordered records; mode 'match' has no order")
    values = [v for _, v in rows]
    period = _period([keys[i] for i, _ in rows]) if keys else None

    if aggregate == "first":
        return ExtractedValue(values[0], keys[rows[0][0]] if keys else None)
    if aggregate == "last":
        return ExtractedValue(values[-1], keys[rows[-1][0]] if keys else None)
    numbers = _numbers(values, field, aggregate)
    if aggregate in ("argmax", "argmin"):
        arg_field = ref.arg_field or ref.select.key
        check_ranking([(picked.records[i].get(arg_field), v) for (i, _), v in zip(rows, numbers)],
                      highest=aggregate == "argmax")
        best = max(numbers) if aggregate == "argmax" else min(numbers)
        winner = picked.records[rows[numbers.index(best)][0]]
        if winner.get(arg_field) is None:
            raise ExtractionEmpty(f"field {arg_field!r} of the {aggregate} record is null")
        return ExtractedValue(_check_value(winner[arg_field], arg_field), period)
    if aggregate in ("max_drawdown", *DRAWDOWN_DAYS):
        return _drawdown(aggregate, numbers, [keys[i] for i, _ in rows], period)
    if aggregate == "sum":
        return ExtractedValue(math.fsum(numbers) if any(isinstance(n, float) for n in numbers) else sum(numbers), period)
    if aggregate == "mean":
        return ExtractedValue(math.fsum(numbers) / len(numbers), period)
    if aggregate == "min":
        return ExtractedValue(min(numbers), period)
    if aggregate == "max":
        return ExtractedValue(max(numbers), period)
    if len(numbers) < 2:
        raise ExtractionError(f"aggregate {aggregate!r} needs at least 2 non-null values, got {len(numbers)}")
    if aggregate == "std":
        return ExtractedValue(statistics.stdev(numbers), period)
    first, last = numbers[0], numbers[-1]
    if aggregate == "change":
        return ExtractedValue(last - first, period)
    if aggregate == "pct_change":
        if first <= 0:
            raise ExtractionNotMeaningful(f"{NOT_MEANINGFUL} pct_change from a first value of {first!r} (not positive)")
        return ExtractedValue((last - first) / first * 100, period)
    raise ExtractionError(f"unknown aggregate {aggregate!r}")


def _drawdown(aggregate: str, closes: Sequence[Number], keys: Sequence[str], period: str) -> ExtractedValue:
    """The largest fall from a running peak over closes in time order, as a positive percentage of
    that peak (`max_drawdown`), or the key of its trough or peak (`drawdown_trough`/`_peak`).

    A window that never closes below an earlier close has no drawdown (`empty`). Asked for a day,
    the answer must be one day (`check_ranking`): a largest fall reached on two days, or a peak
    close that two days share, is a tie.
    """
    if len(closes) < 2:
        raise ExtractionError(f"aggregate {aggregate!r} needs at least 2 non-null values, got {len(closes)}")
    if any(c <= 0 for c in closes):
        raise ExtractionError(f"aggregate {aggregate!r} needs positive closes")
    falls: list[float] = []
    peak = closes[0]
    for close in closes:
        peak = max(peak, close)
        falls.append((peak - close) / peak * 100)
    worst = max(falls)
    if worst <= 0:
        raise ExtractionEmpty(f"no drawdown: no close in {period} is below an earlier one")
    if aggregate == "max_drawdown":
        return ExtractedValue(worst, period)
    check_ranking(list(zip(keys, falls)), highest=True)
    trough = falls.index(worst)
    if aggregate == "drawdown_trough":
        return ExtractedValue(keys[trough], period)
    before = closes[: trough + 1]
    check_ranking(list(zip(keys, before)), highest=True)
    return ExtractedValue(keys[before.index(max(before))], period)


def read_value(ref: ValueRef, responses: Mapping[str, Any], as_of: dt.date) -> ExtractedValue:
    """The value `ref` denotes in the responses (keyed by call id) of a program run on `as_of`.

    Raises ExtractionEmpty when nothing is selected or the value is null, ExtractionError when
    the response does not fit (see the module docstring for the exact semantics).
    """
    if ref.call not in responses:
        raise ExtractionError(f"no response for call {ref.call!r}")
    records = _records_at(responses[ref.call], ref.path)
    picked = _select(ref, records, as_of, responses)
    if not picked.records:
        raise ExtractionEmpty(f"selection {ref.select.mode!r} on key {ref.select.key!r} matched no record")
    if ref.times is not None:
        picked = _joined(ref, picked, responses)
    if ref.aggregate is not None:
        return _aggregate(ref, picked)
    if len(picked.records) > 1:
        shown = ", ".join(picked.keys[:3]) if picked.keys else repr(ref.select.value)
        raise ExtractionError(
            f"ambiguous: selection {ref.select.mode!r} matched {len(picked.records)} records ({shown}) "
            "and no aggregate is given"
        )
    record = picked.records[0]
    if record.get(ref.field) is None:
        raise ExtractionEmpty(f"field {ref.field!r} is null or absent in the selected record")
    return ExtractedValue(_check_value(record[ref.field], ref.field), picked.keys[0] if picked.keys else None)


def select_records(ref: ValueRef, responses: Mapping[str, Any], as_of: dt.date) -> list[dict[str, Any]]:
    """The records `ref` selects in the responses of a program run on `as_of` (before any
    aggregate or combine): the record of a lookup, the window of an aggregate, every record an
    argmax compares. What a reader needs in front of them to compute the value."""
    if ref.call not in responses:
        raise ExtractionError(f"no response for call {ref.call!r}")
    return _select(ref, _records_at(responses[ref.call], ref.path), as_of, responses).records


def _describe(ref: ValueRef) -> str:
    return f"call {ref.call!r} path {ref.path!r} field {ref.field!r}"


def _read(ref: ValueRef, responses: Mapping[str, Any], as_of: dt.date) -> ExtractedValue:
    try:
        return read_value(ref, responses, as_of)
    except ExtractionEmpty as exc:
        raise relocated(exc, _describe(ref)) from exc
    except ExtractionError as exc:
        raise ExtractionError(f"{_describe(ref)}: {exc}") from exc


# --------------------------------------------------------------------------- combine and format


def _combine(combine: Combine, main: ExtractedValue, other: ExtractedValue) -> ExtractedValue:
    a, b = main.value, other.value
    if not (_is_number(a) and _is_number(b)):
        raise ExtractionError(f"combine {combine.op!r} needs two numbers, got {a!r} and {b!r}")
    if combine.op == "difference":
        value: Number = a - b
    elif combine.op == "product":
        value = a * b
    elif b <= 0:
        # A ratio or percentage against a zero or negative base (a payout ratio against a loss
        # per share, growth from a loss) is not a figure anyone states.
        raise ExtractionNotMeaningful(f"{NOT_MEANINGFUL} combine {combine.op!r} over a base of {b!r} (not positive)")
    elif combine.op == "ratio":
        value = a / b
    elif combine.op == "cagr":
        if a <= 0:
            raise ExtractionNotMeaningful(f"{NOT_MEANINGFUL} combine 'cagr' to a value of {a!r} (not positive)")
        value = ((a / b) ** (1 / (combine.years or 1)) - 1) * 100
    else:
        value = (a - b) / b * 100
    period = main.observed_period
    if other.observed_period != main.observed_period:
        period = f"{main.observed_period} vs {other.observed_period}"
    return ExtractedValue(value, period)


def _pick(pick: Pick, main: ExtractedValue, responses: Mapping[str, Any], as_of: dt.date) -> ExtractedValue:
    """The label of the value that ranks first among the main one and `pick.others`; a tie at
    the top is `empty` (`check_ranking`)."""
    values = [main.value, *(_read(ref, responses, as_of).value for ref in pick.others)]
    if not all(_is_number(v) for v in values):
        raise ExtractionError(f"pick {pick.op!r} compares numbers, got {values!r}")
    check_ranking(list(zip(pick.labels, values)), highest=pick.op == "argmax")
    best = max(values) if pick.op == "argmax" else min(values)
    return ExtractedValue(pick.labels[values.index(best)], main.observed_period)


def round_half_up(value: Number, decimals: int) -> str:
    """`value` rounded half-up at `decimals` places, as plain digits (never '-0.00')."""
    rounded = Decimal(repr(value) if isinstance(value, float) else value).quantize(
        Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP, context=_ROUNDING_CONTEXT
    )
    if rounded == 0:
        rounded = abs(rounded)
    return f"{rounded:.{decimals}f}"


def _with_unit(number: str, unit: str | None) -> str:
    return f"{number} {unit}" if unit else number


def format_answer(value: ExtractedScalar, fmt: Format) -> tuple[str, ExtractedScalar]:
    """(answer string, value after scale) for an extracted value; ExtractionError on mismatch."""
    if fmt.kind in ("number", "percent", "integer"):
        if not _is_number(value):
            raise ExtractionError(f"format {fmt.kind!r} needs a number, got {type(value).__name__} {value!r}")
        scaled = value if fmt.scale == 1.0 else value * fmt.scale
        if isinstance(scaled, float) and not math.isfinite(scaled):
            raise ExtractionError(f"{value!r} × scale {fmt.scale} is not finite")
        if fmt.kind == "integer":
            return _with_unit(round_half_up(scaled, 0), fmt.unit), scaled
        digits = round_half_up(scaled, fmt.decimals or 0)
        if fmt.kind == "percent":
            return (f"{digits} {PERCENTAGE_POINTS}" if fmt.unit == PERCENTAGE_POINTS else f"{digits}%"), scaled
        return _with_unit(digits, fmt.unit), scaled
    if fmt.kind == "date":
        if isinstance(value, float):
            raise ExtractionError(f"format 'date' needs a time key, got the number {value!r}")
        in_fmt = fmt.in_fmt or DEFAULT_DATE_IN_FMT
        try:
            day = parse_datetime(str(value), in_fmt)
        except ValueError as exc:
            raise ExtractionError(f"format 'date': {exc}") from None
        return format_date(day, fmt.out_fmt or DEFAULT_DATE_OUT_FMT), value
    return str(value), value


def _unit(fmt: Format) -> str | None:
    return "%" if fmt.kind == "percent" else fmt.unit


def run_extractor(extractor: Extractor, responses: Mapping[str, Any], as_of: dt.date) -> ExtractOutcome:
    """Extract, combine and format one answer; data problems become status empty/error.

    Only a program that cannot be dated raises: an anchor outside the trading calendar's
    known span (CalendarRangeError), since no answer for that day can be trusted.
    """
    try:
        extracted = _read(extractor, responses, as_of)
        if extractor.pick is not None:
            extracted = _pick(extractor.pick, extracted, responses, as_of)
        if extractor.combine is not None:
            for step in extractor.combine.chain():
                other = _read(step.other, responses, as_of)
                try:
                    extracted = _combine(step, extracted, other)
                except ExtractionError as exc:
                    raise ExtractionError(f"{_describe(extractor)}: {exc}") from exc
                except ExtractionEmpty as exc:
                    raise relocated(exc, _describe(extractor)) from exc
        try:
            answer, value = format_answer(extracted.value, extractor.format)
        except ExtractionError as exc:
            raise ExtractionError(f"{_describe(extractor)}: {exc}") from exc
    except ExtractionEmpty as exc:
        return ExtractOutcome("empty", None, None, None, None, str(exc))
    except ExtractionError as exc:
        return ExtractOutcome("error", None, None, None, None, str(exc))
    return ExtractOutcome("ok", answer, value, _unit(extractor.format), extracted.observed_period, None)
