"""Pydantic models of every record the pipeline reads or writes (DESIGN §4).

One model per file format; unknown fields are rejected on load. Models are frozen so that a
loaded question or snapshot row cannot be mutated by accident on its way through the pipeline.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import (
    BaseModel, ConfigDict, Field, PrivateAttr, SerializerFunctionWrapHandler, model_serializer, model_validator,
)

Scalar = Union[str, int, float, bool, None]
# Scalars that may be sent as a tool argument or compared against a record field.
ArgValue = Union[str, int, float, bool]

CallId = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
Qid = Annotated[str, Field(pattern=r"^ls-[0-9a-f]{16}$")]

RefreshClass = Literal["daily", "weekly", "monthly", "quarterly", "annual", "static"]
Tier = Literal["T1", "T2", "T3"]
AssetClass = Literal[
    "cn_equity", "hk_equity", "us_equity", "index", "fund", "macro", "rates_fx", "market"
]
CalendarName = Literal["XSHG", "XHKG", "XNYS"]
PeriodName = Literal["month", "quarter", "half", "year"]
SelectionMode = Literal["latest", "snapshot", "match", "minute", "all"]
Aggregate = Literal[
    "sum", "mean", "min", "max", "first", "last", "count",
    "change", "pct_change", "std", "argmax", "argmin",
    # Issue 29 (T3 investigations): the path over a window's closes — the largest fall from a
    # running peak (a positive percentage of the peak), and the days of that peak and trough.
    "max_drawdown", "drawdown_peak", "drawdown_trough",
]
# The aggregates that answer with a time key of the window rather than a number.
DRAWDOWN_DAYS = frozenset({"drawdown_peak", "drawdown_trough"})
FormatKind = Literal["number", "percent", "integer", "date", "text"]
# The unit of a difference of two percentages (a return gap, a change of a rate): an analyst
# writes "5.76 percentage points" ("5.76个百分点"), never "5.76%". Matched like a percent.
PERCENTAGE_POINTS = "percentage points"
RuleName = Literal["exact", "approx", "semantic"]
AnswerStatus = Literal["ok", "empty", "error"]


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class _OmitsUnsetExtensions(StrictModel):
    """A program model whose later, optional fields are left out of its dump while unset.

    The qid (DESIGN §4.5) hashes the full dump of a program, defaults included; fields added to
    the program language after pools were built (`_EXTENSIONS`) appear in the dump only when
    set, so a program that does not use them keeps its bytes and its qid, and one that does is
    identified by them like by any other field.
    """

    _EXTENSIONS: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_unset_extensions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for name in self._EXTENSIONS:
            if name in data and getattr(self, name) is None:
                del data[name]
        return data


# --------------------------------------------------------------------------- gold program


class DateSpec(StrictModel):
    """A date relative to the as-of date D, rendered in the format a tool expects.

    Exactly one of `sessions_back`, `days_back` or `period` is set.
    - `sessions_back=n` on `calendar`: the n-th session before the last session on or before D
      (0 = the last session on or before D).
    - `days_back=n`: D minus n calendar days; with `calendar`, rolled back to the last session
      on or before that day.
    - `period` with `periods_back=n`: the n-th completed period before D (0 = the most recent
      period that ended on or before D); `edge` picks its first or last day.
    `fmt` is a strftime pattern, or `YYYYMM` / `YYYYQn` for tools keyed by month or quarter.
    """

    sessions_back: int | None = Field(default=None, ge=0, le=5000)
    days_back: int | None = Field(default=None, ge=0, le=20000)
    period: PeriodName | None = None
    periods_back: int | None = Field(default=None, ge=0, le=200)
    edge: Literal["start", "end"] = "end"
    calendar: CalendarName | None = None
    fmt: str = "%Y%m%d"

    @model_validator(mode="after")
    def _one_kind(self) -> DateSpec:
        kinds = [self.sessions_back is not None, self.days_back is not None, self.period is not None]
        if sum(kinds) != 1:
            raise ValueError("a date spec sets exactly one of sessions_back, days_back, period")
        if self.sessions_back is not None and self.calendar is None:
            raise ValueError("sessions_back needs a calendar (XSHG, XHKG or XNYS)")
        if self.period is not None and self.periods_back is None:
            raise ValueError("period needs periods_back")
        if self.period is None and self.periods_back is not None:
            raise ValueError("periods_back is only meaningful with period")
        return self


class Membership(StrictModel):
    """Keep only the records whose `key` is one of the `field` values that `select` picks in
    another call's response: the constituents of an index at its latest rebalance, the members
    of an industry (a screen across a cross-section of the market, issue 29)."""

    call: CallId
    path: str = "items"
    select: Selection
    field: str
    key: str


class Selection(_OmitsUnsetExtensions):
    """Which records of a response the extractor reads (DESIGN §4.2 selection modes).

    - `latest`: the record with the greatest `key` not after `anchor` (default: D itself); with
      `years_back=n`, the record of the same series whose key is n years before that latest key
      (the same quarter a year earlier, the fiscal year before), nothing if it is absent.
    - `snapshot`: the record whose `key` equals `anchor` (required).
    - `match`: records whose `key` equals `value`.
    - `minute`: the record whose `key` equals `anchor`'s session at `time` (HH:MM).
    - `all`: every record (needs an aggregate).
    `where` pre-filters records on fixed field values in every mode. `key_fmt` is the strftime
    format of time-valued keys so that anchors can be compared with them.
    """

    mode: SelectionMode
    key: str
    key_fmt: str = "%Y%m%d"
    anchor: DateSpec | None = None
    value: ArgValue | None = None
    time: Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")] | None = None
    where: dict[str, ArgValue] = Field(default_factory=dict)
    years_back: int | None = Field(default=None, ge=1, le=5)
    # Issue 29 (screens): records of the members of another call's set only (applied before the
    # mode: `latest` is then the members' latest key), and records whose field is strictly above
    # a threshold ("how many constituents closed up": pct_chg above 0).
    within: Membership | None = None
    above: dict[str, float] | None = None
    # Issue 39 (restatements): which version of a period a report restated the selection reads,
    # where the records carry Tushare's `update_flag` ("0" as first reported, "1" restated):
    # "first" the first-reported figures only, "latest" the latest version published by the
    # clock (restated where restated). Unset reads "latest" (core/extract.py `one_version`).
    revision: Literal["first", "latest"] | None = None
    # Issue 39 (fiscal years): with `latest`, the newest of the records `where` keeps rather than
    # the `where` records on the newest key of the response: the latest annual report
    # (`end_type` "4") although an interim came after it; `years_back` then counts from it.
    where_first: bool | None = None

    _EXTENSIONS: ClassVar[tuple[str, ...]] = ("years_back", "within", "above", "revision", "where_first")

    @model_validator(mode="after")
    def _mode_fields(self) -> Selection:
        if self.mode == "snapshot" and self.anchor is None:
            raise ValueError("selection mode 'snapshot' needs an anchor date spec")
        if self.mode == "minute" and (self.anchor is None or self.time is None):
            raise ValueError("selection mode 'minute' needs an anchor date spec and a time HH:MM")
        if self.mode == "match" and self.value is None:
            raise ValueError("selection mode 'match' needs a value")
        if self.mode != "match" and self.value is not None:
            raise ValueError(f"selection mode {self.mode!r} takes no value (only 'match' does)")
        if self.mode != "minute" and self.time is not None:
            raise ValueError(f"selection mode {self.mode!r} takes no time (only 'minute' does)")
        if self.mode != "latest" and self.years_back is not None:
            raise ValueError(f"selection mode {self.mode!r} takes no years_back (only 'latest' does)")
        if self.above is not None and not self.above:
            raise ValueError("select.above names at least one field (or is left unset)")
        if self.where_first is not None and (self.mode != "latest" or not self.where):
            raise ValueError("select.where_first applies to mode 'latest' with a `where` (the newest record it keeps)")
        return self


class RecordJoin(StrictModel):
    """Multiply each selected record's field by `field` of another call's record on the same
    time key (a price by the cumulative adjustment factor of its session)."""

    call: CallId
    path: str = "items"
    field: str


class ValueRef(_OmitsUnsetExtensions):
    """A value read from one call's response: path, selection, field, optional aggregate."""

    call: CallId
    path: str = "items"
    select: Selection
    field: str
    aggregate: Aggregate | None = None
    # For argmax/argmin: the field returned for the winning record (default: the selection key).
    arg_field: str | None = None
    # Each selected value times the joined record's field, before any aggregate.
    times: RecordJoin | None = None

    _EXTENSIONS: ClassVar[tuple[str, ...]] = ("times",)


# `cagr` (issue 39): the compound annual growth rate of the main value over `other`, `years`
# years before it: ((main / other) ** (1 / years) - 1) * 100; both values must be positive.
CombineOp = Literal["difference", "ratio", "pct_difference", "product", "cagr"]
# A combine chain longer than this is refused on load (a question is a chain an analyst states).
MAX_COMBINE_CHAIN = 3


class Combine(_OmitsUnsetExtensions):
    """Combine the main value with a second one (the same field for two entities, a ratio of two
    fields, a conversion at an exchange rate); `then` combines that result with a third value."""

    op: CombineOp
    other: ValueRef
    then: Combine | None = None
    # The years `cagr` compounds over (only `cagr` takes it, and it needs it).
    years: int | None = Field(default=None, ge=1, le=10)

    _EXTENSIONS: ClassVar[tuple[str, ...]] = ("then", "years")

    @model_validator(mode="after")
    def _short_chain(self) -> Combine:
        if (self.op == "cagr") != (self.years is not None):
            raise ValueError("combine 'cagr' needs `years` (the years it compounds over); no other op takes it")
        if len(self.chain()) > MAX_COMBINE_CHAIN:
            raise ValueError(f"a combine chain has at most {MAX_COMBINE_CHAIN} steps, got {len(self.chain())}")
        return self

    def chain(self) -> list[Combine]:
        """This step and every `then` after it, in order."""
        steps: list[Combine] = []
        step: Combine | None = self
        while step is not None:
            steps.append(step)
            step = step.then
        return steps


class Format(StrictModel):
    """How the extracted value becomes the answer string.

    `number`/`integer`/`percent`: value × `scale`, rounded to `decimals`, in `unit` (a
    percent: "%", or PERCENTAGE_POINTS for a difference of two percentages).
    `date`: a time key in `in_fmt` rendered as `out_fmt`. `text`: the string as it is.
    """

    kind: FormatKind
    decimals: int | None = Field(default=None, ge=0, le=8)
    unit: str | None = None
    scale: float = 1.0
    in_fmt: str | None = None
    out_fmt: str | None = None

    @model_validator(mode="after")
    def _kind_fields(self) -> Format:
        if self.kind in ("number", "percent") and self.decimals is None:
            raise ValueError(f"format {self.kind!r} needs decimals")
        if self.kind == "percent" and self.unit not in (None, "%", PERCENTAGE_POINTS):
            raise ValueError(f"format 'percent' has unit '%' or {PERCENTAGE_POINTS!r}, got {self.unit!r}")
        if self.kind in ("date", "text") and (self.scale != 1.0 or self.decimals is not None):
            raise ValueError(f"format {self.kind!r} takes no scale or decimals")
        return self


# How many instruments a pick compares (the main value and the others): three named indices
# (issue 29), or the members of an industry index, a peer set (issue 39: 4 to 17 members).
MAX_PICK = 20


class Pick(StrictModel):
    """Which of several instruments ranks first (issue 29): the extractor's value is the first
    candidate, `others` the rest; the answer is the label of the largest (`argmax`) or smallest
    (`argmin`) value, `labels` in the same order (the main value's first)."""

    op: Literal["argmax", "argmin"]
    others: list[ValueRef] = Field(min_length=1, max_length=MAX_PICK - 1)
    labels: list[str] = Field(min_length=2, max_length=MAX_PICK)

    @model_validator(mode="after")
    def _one_label_each(self) -> Pick:
        if len(self.labels) != len(self.others) + 1:
            raise ValueError(f"a pick labels each of its {len(self.others) + 1} values, got {len(self.labels)} labels")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"a pick's labels are distinct, got {self.labels}")
        return self


class Extractor(ValueRef):
    combine: Combine | None = None
    format: Format
    pick: Pick | None = None

    _EXTENSIONS: ClassVar[tuple[str, ...]] = ("times", "pick")

    @model_validator(mode="after")
    def _pick_alone(self) -> Extractor:
        if self.pick is not None and self.combine is not None:
            raise ValueError("an extractor either combines values or picks among them, not both")
        return self

    def refs(self) -> list[tuple[str, ValueRef]]:
        """(part, ref) of every value the answer reads: the main one, then each combine step's
        or each other value a pick compares."""
        out: list[tuple[str, ValueRef]] = [("extract", self)]
        if self.combine is not None:
            for i, step in enumerate(self.combine.chain()):
                out.append(("extract.combine" + ".then" * i + ".other", step.other))
        if self.pick is not None:
            out.extend((f"extract.pick.others[{i}]", ref) for i, ref in enumerate(self.pick.others))
        return out


class Call(StrictModel):
    """One tool call: fixed args, relative dates, and args taken from earlier calls (DAG edges)."""

    id: CallId
    tool: str
    args: dict[str, ArgValue] = Field(default_factory=dict)
    dates: dict[str, DateSpec] = Field(default_factory=dict)
    refs: dict[str, ValueRef] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _disjoint_args(self) -> Call:
        names = [*self.args, *self.dates, *self.refs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"call {self.id!r} sets argument(s) {dupes} more than once")
        return self


class Program(StrictModel):
    calls: list[Call] = Field(min_length=1)
    extract: Extractor


# --------------------------------------------------------------------------- matching rule


class MatchRule(_OmitsUnsetExtensions):
    """How answers are matched against the gold (DESIGN §4.3).

    `unit` and `decimals` are the English text's; `unit_zh` and `decimals_zh` (issue 28) the
    Chinese text's, recorded at construction for a numeric question with a Chinese text: a
    Chinese answer is scored in that unit at that precision ("万元" at 2 decimals beside
    "million CNY" at 2). `decimals_zh` set means the Chinese precision is recorded (`unit_zh`
    None: a unitless Chinese text). Both are left out of the dump while unset, so a rule
    without them keeps its bytes; for such a rule the matcher derives the Chinese unit
    (`core.normalize.reading_unit`) at the English decimals.
    """

    _EXTENSIONS: ClassVar[tuple[str, ...]] = ("unit_zh", "decimals_zh")

    rule: RuleName
    abs_tol: float | None = Field(default=None, ge=0)
    rel_tol: float | None = Field(default=None, ge=0)
    unit: str | None = None
    decimals: int | None = Field(default=None, ge=0, le=8)
    unit_zh: str | None = None
    decimals_zh: int | None = Field(default=None, ge=0, le=8)

    @model_validator(mode="after")
    def _zh_precision_whole(self) -> MatchRule:
        if self.unit_zh is not None and self.decimals_zh is None:
            raise ValueError(f"match rule: unit_zh {self.unit_zh!r} without decimals_zh; "
                             "the Chinese text's precision is recorded as both")
        if self.decimals_zh is not None and self.rule == "semantic":
            raise ValueError("match rule: a semantic (text) rule has no Chinese precision (decimals_zh)")
        return self


class ClampDecision(StrictModel):
    """One mechanical change (or confirmation) the clamp made to a proposed rule."""

    field: str
    proposed: Scalar
    applied: Scalar
    reason: str


# --------------------------------------------------------------------------- question pool


# Trivial-answer flags of a replayed question: its value is 0, a 1.00 factor, only 0/1, or the
# same on every replayed day.
DynamicsFlag = Literal["zero", "unit_factor", "flag_like", "constant"]


class Dynamics(StrictModel):
    """How a question's answer behaved when construction replayed it at past as-of days.

    Each of `days` consecutive sessions of `calendar` (ending at the construction date) ran the
    gold program at that day's point-in-time cut-off (`point_in_time` is False only for a
    provider without a clock). `changes` counts the consecutive pairs (both answers `ok`) on
    which the earlier day's answer fails the later day's gold under the question's own matching
    rule: exactly what reusing yesterday's gold would fail. `observed_class` and `tier` are the
    decisions taken from it (None when the candidate was dropped), with the reasons in words.
    """

    calendar: CalendarName | None  # None: a series on no exchange calendar, replayed on weekdays
    days: int = Field(ge=2)
    first_day: dt.date
    last_day: dt.date
    point_in_time: bool
    pairs: int = Field(ge=0)
    changes: int = Field(ge=0)
    change_rate: float = Field(ge=0, le=1)
    distinct_answers: int = Field(ge=0)
    not_ok_days: int = Field(ge=0)
    flags: list[DynamicsFlag] = Field(default_factory=list)
    tool_cadence: RefreshClass
    observed_class: RefreshClass | None = None
    class_reason: str
    tier: Tier | None = None
    tier_reason: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Dynamics:
        if self.changes > self.pairs:
            raise ValueError(f"dynamics: {self.changes} changes over only {self.pairs} pairs")
        if self.pairs and abs(self.change_rate - self.changes / self.pairs) > 1e-9:
            raise ValueError(f"dynamics: change_rate {self.change_rate} is not {self.changes}/{self.pairs}")
        if (self.observed_class is None) != (self.tier is None) or (self.tier is None) != (self.tier_reason is None):
            raise ValueError("dynamics: observed_class, tier and tier_reason are set together (a kept question) or not at all")
        if self.tier == "T1" and self.observed_class != "daily":
            raise ValueError(f"dynamics: a T1 question must change on most sessions (observed class daily), "
                             f"not {self.observed_class!r} ({self.changes}/{self.pairs} pairs changed)")
        return self


class Provenance(StrictModel):
    verbalizer: str  # "template" or "litellm:<model>"
    proposed_match: MatchRule | None = None
    clamp: list[ClampDecision] = Field(default_factory=list)
    pool_version: str | None = None
    derived_from: Qid | None = None  # set when stage 2 re-instantiated a template
    # The construction replay that decided refresh_class and tier (None for pools built before it).
    dynamics: Dynamics | None = None


class Question(StrictModel):
    """One line of `data/pool/questions.jsonl` (DESIGN §4.1)."""

    qid: Qid
    question: str = Field(min_length=1)
    question_zh: str | None = None
    program: Program
    match: MatchRule
    refresh_class: RefreshClass
    tier: Tier
    asset_class: AssetClass
    entity: str
    entity_name: str
    visibility: int = Field(ge=0, le=10)
    signature: str
    provenance: Provenance

    @model_validator(mode="after")
    def _labels_follow_dynamics(self) -> Question:
        # An auditor reads class and tier from the profile: they may never disagree with it.
        problem = self.dynamics_disagreement()
        if problem is not None:
            raise ValueError(problem)
        return self

    def dynamics_disagreement(self) -> str | None:
        """Why the question's class and tier disagree with its dynamics profile; None when they agree."""
        dynamics = self.provenance.dynamics
        if dynamics is not None and (dynamics.observed_class, dynamics.tier) != (self.refresh_class, self.tier):
            return (f"{self.qid}: refresh_class/tier {self.refresh_class}/{self.tier} disagree with the "
                    f"dynamics profile ({dynamics.observed_class}/{dynamics.tier})")
        return None

    def with_dynamics(self, dynamics: Dynamics) -> Question:
        """The question with `dynamics` in its provenance, checked like a validated one (ValueError
        when the profile disagrees with the labels). Both parts are validated models already: no
        field is validated again, which for a pool of ~14,000 questions took most of this step."""
        provenance = self.provenance.model_copy(update={"dynamics": dynamics})
        question = self.model_copy(update={"provenance": provenance})
        problem = question.dynamics_disagreement()
        if problem is not None:
            raise ValueError(problem)
        return question


class PoolManifest(StrictModel):
    """`data/pool/pool_manifest.json`: the identity and make-up of a question pool."""

    version: str
    questions: int
    sha256: str
    data_service: str
    created_at: dt.datetime
    counts: dict[str, dict[str, int]]  # dimension (tier, asset_class, tool, ...) -> value -> n
    # sha256 of `tool_catalog.json` beside the pool: the catalog it was built from travels with it
    # (None: a pool written before it did, which reads the construction folder's catalog).
    catalog_sha256: str | None = None


# --------------------------------------------------------------------------- gold snapshot


class GoldAnswer(StrictModel):
    """One line of `gold_answers_<D>.jsonl` (DESIGN §4.6).

    `value` is the extracted value after aggregation and `format.scale`, before rounding,
    expressed in `unit` (the format's unit, which may carry a scale such as `亿元`).
    """

    qid: Qid
    date: dt.date
    status: AnswerStatus
    answer: str | None = None
    value: float | int | str | None = None
    unit: str | None = None
    observed_period: str | None = None
    args: dict[str, dict[str, ArgValue]] = Field(default_factory=dict)
    match: MatchRule
    error: str | None = None

    @model_validator(mode="after")
    def _status_fields(self) -> GoldAnswer:
        if self.status == "ok" and (self.answer is None or self.value is None):
            raise ValueError(f"{self.qid}: status 'ok' needs an answer and a value")
        if self.status == "error" and not self.error:
            raise ValueError(f"{self.qid}: status 'error' needs an error message")
        if self.status != "ok" and self.answer is not None:
            raise ValueError(f"{self.qid}: status {self.status!r} carries no answer")
        return self


class SnapshotManifest(StrictModel):
    """`gold_answers_<D>.manifest.json`, written beside the snapshot."""

    date: dt.date
    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    records: int = Field(ge=0)
    counts_by_status: dict[AnswerStatus, int]
    pool_version: str
    pool_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # sha256 of the questions.jsonl that was executed
    data_service: str
    # Point in time. A provider with a clock (the embedded market) is queried as of `cutoff`, D's
    # cut-off, whatever the wall clock: a backfill gives the bytes of the day itself. A provider
    # without one (Tushare, an external MCP server) has no cut-off: `vintage` is when the data was
    # retrieved, and `late_backfill` says that this was after D's cut-off (recomputed gold, which
    # may hold figures published after D).
    cutoff: dt.datetime | None = None
    vintage: dt.datetime | None = None
    late_backfill: bool = False
    # Questions withdrawn from D (their program returned `empty` or `error` on D): qid -> reason.
    # D's scoring set is the served set minus these; above `max_withdrawn_share` nothing is frozen.
    withdrawn: dict[Qid, str] = Field(default_factory=dict)
    max_withdrawn_share: float = Field(ge=0, le=1)
    code_version: str
    created_at: dt.datetime

    @model_validator(mode="after")
    def _point_in_time_is_stated(self) -> "SnapshotManifest":
        if (self.cutoff is None) == (self.vintage is None):
            raise ValueError("a snapshot manifest states exactly one of `cutoff` (point-in-time provider) "
                             "and `vintage` (retrieval time of a provider without a clock)")
        if self.cutoff is not None and self.late_backfill:
            raise ValueError("`late_backfill` applies only to a provider without a point-in-time clock")
        return self


# --------------------------------------------------------------------------- serving and scoring


class ServedQuestion(StrictModel):
    """One line of `served_questions_<D>.jsonl`: what an agent receives, never an answer."""

    qid: Qid
    question: str
    question_zh: str | None = None
    tier: Tier
    asset_class: AssetClass
    refresh_class: RefreshClass
    visibility: int = Field(ge=0, le=10)
    entity: str


# The question text an answer replies to: `question` ("en") or `question_zh` ("zh").
AnswerLanguage = Literal["en", "zh"]


class ReadBudget(StrictModel):
    """What a web agent may spend on one question, declared with its run: the distinct pages it may
    open (`max_reads`) and the searches it may run (`max_searches`); None: no limit. The harness
    that hands out the pages refuses a search or a read beyond it and records the refusal."""

    max_reads: int | None = Field(default=None, ge=1)
    max_searches: int | None = Field(default=None, ge=1)

    def describe(self) -> str:
        """`6 reads, 6 searches`, `20 reads, unlimited searches`, `unlimited`."""
        if self.max_reads is None and self.max_searches is None:
            return "unlimited"
        reads = "unlimited reads" if self.max_reads is None else f"{self.max_reads} reads"
        searches = "unlimited searches" if self.max_searches is None else f"{self.max_searches} searches"
        return f"{reads}, {searches}"


class Usage(StrictModel):
    """What answering cost: model calls' tokens, tool calls, money and time.

    `cost_usd` comes from litellm's price map; None when the model is not in it or runs on a
    self-hosted endpoint (`api_base`), whose price no map knows. `wall_s` is the question's
    time from first model call to answer.
    """

    model_calls: int = Field(default=0, ge=0)
    tool_calls: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)
    wall_s: float = Field(default=0.0, ge=0)
    # A web agent's searches run and distinct pages opened for the question, and the searches or
    # reads its harness refused beyond the declared budget (`ReadBudget`).
    searches: int = Field(default=0, ge=0)
    page_reads: int = Field(default=0, ge=0)
    budget_refusals: int = Field(default=0, ge=0)


class Prediction(StrictModel):
    """One line of an agent's predictions file.

    `lang` names the text answered (absent: "en"); the answer is scored in that text's unit at
    that text's precision (a bare number read in 万元 and held to its decimals for "zh").
    """

    qid: Qid
    answer: str | None = None
    lang: AnswerLanguage | None = None
    error: str | None = None
    trace: list[dict[str, object]] | None = None
    usage: Usage | None = None
    # The conversation that produced the answer (for trajectories.jsonl), never serialised here.
    _messages: list[dict[str, object]] | None = PrivateAttr(default=None)

    @property
    def answer_lang(self) -> AnswerLanguage:
        return self.lang or "en"

    @property
    def messages(self) -> list[dict[str, object]] | None:
        return self._messages

    def with_messages(self, messages: list[dict[str, object]]) -> Prediction:
        """This prediction carrying the conversation behind it (kept out of predictions.jsonl)."""
        self._messages = messages
        return self


class TrajectoryLine(StrictModel):
    """One line of `trajectories.jsonl` beside the predictions: the whole exchange of a question."""

    qid: Qid
    lang: AnswerLanguage = "en"
    messages: list[dict[str, object]]
    tool_calls: list[dict[str, object]] = Field(default_factory=list)
    usage: Usage | None = None
    error: str | None = None


class PredictionRunMeta(StrictModel):
    """`predictions.meta.json` beside a predictions file: who answered, for which day."""

    agent: str
    model: str | None = None
    date: dt.date
    served_qid_set_hash: str
    started_at: dt.datetime
    finished_at: dt.datetime | None = None
    # Which text the agent was given: "en", "zh" (the Chinese text where there is one) or "both".
    lang: Literal["en", "zh", "both"] | None = None
    # The harness that produced the run, when not `livesearch agent run` (e.g. "inspect_ai 0.3.285").
    harness: str | None = None
    # A web agent's declared budget per question (None: not a web agent, or none declared).
    budget: ReadBudget | None = None
    # The version of the code that ran the agent (`settings.code_version()`: package version and git
    # commit) when `livesearch agent run` wrote it; None for runs made elsewhere or before it was recorded.
    code_version: str | None = None


class Verdict(StrictModel):
    """One line of `verdicts.jsonl`. `correct` is None only when the judge failed (`error`)."""

    qid: Qid
    correct: bool | None
    rule: RuleName
    judge: str  # "deterministic" or "llm:<model>"
    reason: str
    error: str | None = None

    @model_validator(mode="after")
    def _error_iff_undecided(self) -> Verdict:
        if (self.correct is None) != (self.error is not None):
            raise ValueError(f"{self.qid}: a verdict is either decided or carries an error")
        return self
