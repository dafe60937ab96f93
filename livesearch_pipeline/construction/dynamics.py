"""Stage 4b, the dynamics profile (DESIGN §2 item 4): how each candidate's answer really moves.

Enumeration sees one day. Here every candidate that survived its mechanical filters is replayed
at the last `days` consecutive sessions of its own market, ending at the construction date, each
at that day's point-in-time cut-off (the embedded service is rebuilt with its clock at the day;
a provider without a clock is replayed at its current vintage and the profile says so). Two
consecutive days are exactly what the daily benchmark compares, D-1 against D, so the share of
pairs on which the earlier answer fails the later gold under the question's own matching rule
is the stale-gold failure rate the question will show once it is served.

From the profile:
- trivial answers are dropped (a 0, a 1.00 factor, 0/1 flag values), as are answers that never
  move although the tool's cadence says they must (a daily or weekly series that stayed put over
  the whole window: adjustment factors, share counts, cumulative distributions);
- `refresh_class` is the observed class: `daily` when the answer changes on at least
  `daily_min_change_rate` of the pairs; otherwise the slower of the observed change cadence and
  the tool's cadence (a quarterly statement does not move in a month, and that is expected);
  `static` only for time-less reference data that did not move;
- `tier` follows FinSearchComp's task families, checked against the profile (issue 28, DESIGN
  §4.8): T3 only for real multi-step work — calls that depend on each other, arithmetic across
  calls, a statistic of a window's whole path (`structural_tier` says which, in the tier reason);
  any single call read once (a record, one aggregate, arithmetic between records of one response)
  is T1 when it moves on most sessions (observed daily), else T2. A rolling anchor ("5 sessions
  back", a minute bar of the previous session) is never a simple historical lookup: it is T1
  when it moves daily and is dropped otherwise;
- a ranking that ties, or a ratio over a non-positive base, on any replayed day is dropped
  (`dynamics_tie`, `dynamics_not_meaningful`): the refresh would withdraw it on such a day.

Cost: replays share work. All days of all calendars are replayed in one pass per day over every
candidate that needs that day, so identical calls (same tool and concrete arguments) run once
per day for all the candidates that share them; programs are executed level by level with the
core primitives (dates, extractor) instead of one task per program; the point-in-time service of
each day is built on the one simulated market of the process, whose per-entity series stay warm
across days; and the days are split over forked worker processes (two by default, one per core
of the reference machine), which inherit that warm market.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from livesearch_pipeline.core import aio
from livesearch_pipeline.construction.formats import proposed_rule
from livesearch_pipeline.construction.models import Candidate, DynamicsRow, FilterCount
from livesearch_pipeline.core.calendars import sessions_back
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.client import OpenAt, ToolClient
from livesearch_pipeline.core.executor import (
    PROGRAM_ERRORS, CallFailure, CallKey, ExecutorConfig, call_key, call_with_retries, existing_objects_exempt_from_gc,
)
from livesearch_pipeline.core.extract import ExtractionEmpty, is_not_meaningful, is_tie, located, run_extractor
from livesearch_pipeline.core.matching import clamp_rule, match_answer
from livesearch_pipeline.core.models import (
    AnswerStatus,
    Dynamics,
    MatchRule,
    Program,
    RefreshClass,
    Tier,
)
from livesearch_pipeline.core.program import ProgramError, call_levels, concrete_args
from livesearch_pipeline.core.progress import Progress, Report, say
from livesearch_pipeline.core.publication import expected_latest_period, publication_lags
from livesearch_pipeline.core.workers import default_workers, forked_pool, inherited

# 21 days = 20 consecutive pairs, the "20 trading days" the issue measured over.
DEFAULT_REPLAY_DAYS = 21
# Fastest to slowest; `static` never moves at all.
CADENCE_ORDER: tuple[RefreshClass, ...] = ("daily", "weekly", "monthly", "quarterly", "annual", "static")
# Cadences that publish within a month: over 20 sessions such an answer must move at least once.
MUST_MOVE_CADENCES = frozenset({"daily", "weekly"})



@dataclass(frozen=True)
class DynamicsPolicy:
    days: int = DEFAULT_REPLAY_DAYS
    # "Changes on most sessions": the share of pairs that makes an answer `daily` (and T1-able).
    # Measured on the default pool (see the README): single-record daily answers change on 95-100 %
    # of pairs, window extremes and rolling flags far less; 0.8 keeps the former and leaves the
    # latter to slower classes, so that a `daily` stale answer fails on >= 90 % of days.
    daily_min_change_rate: float = 0.8
    # Sessions per change up to which a slower-than-daily answer is `weekly`, then `monthly`.
    weekly_max_gap: float = 7.5
    monthly_max_gap: float = 45.0
    # Days on which the program may return empty/error before the question is too unreliable to
    # serve (each such day withdraws it from the benchmark). None by default (issue 20): a
    # candidate withdrawn on any replayed day would be withdrawn on days of the benchmark too.
    max_not_ok_share: float = 0.0
    executor: ExecutorConfig = ExecutorConfig()
    # Processes replaying days side by side (forked: each starts with the warm market of the
    # process). Only with a point-in-time service; 1 replays in this process.
    workers: int = field(default_factory=default_workers)

    def __post_init__(self) -> None:
        if self.days < 3:
            raise ValueError(f"DynamicsPolicy.days must be >= 3 (at least two consecutive pairs), got {self.days}")
        if not 0 < self.daily_min_change_rate <= 1:
            raise ValueError(f"DynamicsPolicy.daily_min_change_rate must be in (0, 1], got {self.daily_min_change_rate}")
        if not 0 < self.weekly_max_gap <= self.monthly_max_gap:
            raise ValueError("DynamicsPolicy needs 0 < weekly_max_gap <= monthly_max_gap")
        if not 0 <= self.max_not_ok_share < 1:
            raise ValueError(f"DynamicsPolicy.max_not_ok_share must be in [0, 1), got {self.max_not_ok_share}")
        if self.workers < 1:
            raise ValueError(f"DynamicsPolicy.workers must be >= 1, got {self.workers}")


# --------------------------------------------------------------------------- replay days


def replay_days(calendar: str | None, as_of: dt.date, n: int) -> list[dt.date]:
    """The last `n` completed days of a market up to and including `as_of`, ascending.

    Sessions of the exchange calendar; weekdays for a series on no exchange calendar (FX).
    """
    if calendar is None:
        days: list[dt.date] = []
        day = as_of
        while len(days) < n:
            if day.weekday() < 5:
                days.append(day)
            day -= dt.timedelta(days=1)
        return days[::-1]
    return [sessions_back(calendar, as_of, k) for k in range(n - 1, -1, -1)]


# --------------------------------------------------------------------------- replay engine


@dataclass(frozen=True)
class DayAnswer:
    """A program's result on one replayed day (the fields of a gold answer the profile needs)."""

    status: AnswerStatus
    answer: str | None = None
    value: float | int | str | None = None
    unit: str | None = None
    error: str | None = None
    observed_period: str | None = None  # the time key the answer read (the close guard's input)


@dataclass
class ReplayStats:
    days: int = 0
    programs: int = 0  # program executions over all days
    calls: int = 0  # distinct tool calls over all days
    failed_calls: int = 0
    retries: int = 0
    tool_time_s: float = 0.0


async def run_programs_on_day(programs: Mapping[str, Program], day: dt.date, client: ToolClient,
                              config: ExecutorConfig = ExecutorConfig(),
                              stats: ReplayStats | None = None) -> dict[str, DayAnswer]:
    """Every program as of `day`, with the statuses the core executor gives (ok/empty/error).

    Level by level over all programs at once: the distinct calls of a level are fetched once
    and shared, then each program's extractor runs on its responses. No task per program: a
    day of the default pool is ~30,000 programs over ~1,300 distinct calls.
    """
    # The warm market and the programs are millions of long-lived objects: exempt from the cyclic
    # GC while the day runs (core.executor; ~8 % of a day's CPU), reference counting frees the rest.
    with existing_objects_exempt_from_gc():
        return await _run_programs_on_day(programs, day, client, config,
                                          stats if stats is not None else ReplayStats())


async def _run_programs_on_day(programs: Mapping[str, Program], day: dt.date, client: ToolClient,
                               config: ExecutorConfig, stats: ReplayStats) -> dict[str, DayAnswer]:
    semaphore = asyncio.Semaphore(config.max_concurrency)
    done: dict[str, DayAnswer] = {}
    levels: dict[str, list] = {}
    for qid, program in programs.items():
        try:
            levels[qid] = call_levels(program)
        except ProgramError as exc:
            done[qid] = DayAnswer("error", error=str(exc))
    responses: dict[str, dict[str, dict[str, Any]]] = {qid: {} for qid in levels}
    depth = max((len(lv) for lv in levels.values()), default=0)
    for index in range(depth):
        wanted: dict[CallKey, tuple[str, dict[str, Any]]] = {}
        plan: list[tuple[str, str, str, CallKey]] = []
        for qid, program_levels in levels.items():
            if qid in done or index >= len(program_levels):
                continue
            for call in program_levels[index]:
                try:
                    args = concrete_args(call, day, responses[qid])
                except ExtractionEmpty as exc:
                    done[qid] = DayAnswer("empty", error=located(exc, f"{call.id} {call.tool}"))
                    break
                except PROGRAM_ERRORS as exc:
                    done[qid] = DayAnswer("error", error=f"{call.id} {call.tool}: {exc}")
                    break
                key = call_key(call.tool, args)
                wanted.setdefault(key, (call.tool, args))
                plan.append((qid, call.id, call.tool, key))
        keys = list(wanted)
        fetched = await asyncio.gather(*(call_with_retries(client, *wanted[k], config, semaphore, stats)
                                         for k in keys))
        results = dict(zip(keys, fetched))
        stats.calls += len(keys)
        for qid, call_id, tool, key in plan:  # in call order: the first failing call is the one reported
            if qid in done:
                continue
            result = results[key]
            if isinstance(result, CallFailure):
                done[qid] = DayAnswer("error", error=f"{call_id} {tool}: {result.message}")
            else:
                responses[qid][call_id] = result
    for qid in levels:
        if qid in done:
            continue
        try:
            outcome = run_extractor(programs[qid].extract, responses[qid], day)
        except PROGRAM_ERRORS as exc:
            done[qid] = DayAnswer("error", error=f"extract: {exc}")
            continue
        done[qid] = DayAnswer(outcome.status, outcome.answer, outcome.value, outcome.unit, outcome.error,
                              outcome.observed_period)
    stats.programs += len(programs)
    return done


async def _replay_days(days: Sequence[dt.date], programs_by_day: Mapping[dt.date, Mapping[str, Program]],
                       open_at: OpenAt | None, client: ToolClient | None, config: ExecutorConfig,
                       progress: Progress | None = None) -> tuple[dict[dt.date, dict[str, DayAnswer]], ReplayStats]:
    stats = ReplayStats()
    out: dict[dt.date, dict[str, DayAnswer]] = {}
    for day in days:
        if open_at is not None:
            async with open_at(day) as day_client:
                out[day] = await run_programs_on_day(programs_by_day[day], day, day_client, config, stats)
        else:
            assert client is not None
            out[day] = await run_programs_on_day(programs_by_day[day], day, client, config, stats)
        stats.days += 1
        if progress is not None:
            progress.advance(detail=f"{day.isoformat()}: {len(out[day]):,} programs")
    return out, stats


def _forked_worker(days: list[dt.date]) -> tuple[dict[dt.date, dict[str, DayAnswer]], ReplayStats]:
    """In a worker forked by `replay`: its days, with the programs of every day it inherited."""
    programs_by_day, open_at, config = inherited()
    return aio.run(_replay_days(days, programs_by_day, open_at, None, config))


async def replay(programs_by_day: Mapping[dt.date, Mapping[str, Program]], *, open_at: OpenAt | None,
                 client: ToolClient | None, config: ExecutorConfig = ExecutorConfig(), workers: int = 1,
                 report: Report = None) -> tuple[dict[str, dict[dt.date, DayAnswer]], ReplayStats]:
    """Run each day's programs against the service as of that day; answers per qid and day.

    `open_at(day)` gives a client whose clock is `day` (point in time). Without it every day goes
    to `client` as it is (a provider without a clock: the programs are re-dated, the data vintage
    is today's). With `workers` > 1 and `open_at`, the days are handed one at a time to forked
    processes (a free worker takes the next day, so the cores stay busy and each finished day
    can be reported); the answers do not depend on which process replays a day. `report` gets
    a line at each quarter of the days replayed (core/progress.py).
    """
    if open_at is None and client is None:
        raise ValueError("replay needs open_at (a point-in-time service) or a client")
    days = sorted(programs_by_day)
    progress = Progress(total=len(days), what="replayed", report=report, unit="days")
    workers = min(workers, len(days)) if open_at is not None else 1
    if workers <= 1:
        by_day, stats = await _replay_days(days, programs_by_day, open_at, client, config, progress)
    else:
        assert open_at is not None
        by_day, stats = {}, ReplayStats()
        with forked_pool(workers, (programs_by_day, open_at, config)) as pool:
            loop = asyncio.get_running_loop()
            for finished in asyncio.as_completed([loop.run_in_executor(pool, _forked_worker, [day])
                                                  for day in days]):
                part, part_stats = await finished
                by_day.update(part)
                for name in ("days", "programs", "calls", "failed_calls", "retries", "tool_time_s"):
                    setattr(stats, name, getattr(stats, name) + getattr(part_stats, name))
                (day,) = part
                progress.advance(detail=f"{day.isoformat()}: {len(part[day]):,} programs")
    answers: dict[str, dict[dt.date, DayAnswer]] = defaultdict(dict)
    for day in days:
        for qid, answer in by_day[day].items():
            answers[qid][day] = answer
    return dict(answers), stats


# --------------------------------------------------------------------------- the profile (pure)


def question_rule(candidate: Candidate) -> MatchRule:
    """The matching rule the question will carry: the template proposal, clamped (DESIGN §4.3)."""
    fmt = candidate.program.extract.format
    value = candidate.facts.observed_value
    rule, _ = clamp_rule(proposed_rule(fmt), fmt, aggregate=candidate.program.extract.aggregate, value_kind=fmt.kind,
                         value=float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None)
    return rule


def stale_fails(rule: MatchRule, earlier: DayAnswer, later: DayAnswer) -> bool:
    """Whether the earlier day's answer fails the later day's gold, as the stale-gold audit scores it.

    Identical answer strings never fail (a formatted answer matches its own value: the gold
    self-test). A text that only a judge could accept counts as failed, as in the audit.
    """
    if earlier.answer == later.answer:
        return False
    assert later.value is not None
    return not match_answer(rule, later.value, earlier.answer, gold_unit=later.unit).correct


def trivial_flags(values: Sequence[float | int | str], distinct_answers: int) -> list[str]:
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    flags = []
    if numbers:
        if 2 * sum(1 for v in numbers if v == 0) > len(numbers):
            flags.append("zero")
        if 2 * sum(1 for v in numbers if math.isclose(v, 1.0, rel_tol=0, abs_tol=1e-12)) > len(numbers):
            flags.append("unit_factor")
        if len(numbers) == len(values) and all(v in (0, 1) for v in numbers):
            flags.append("flag_like")
    if distinct_answers == 1:
        flags.append("constant")
    return flags


# Single-call aggregates that are T3 (issue 28): a statistic of the whole path of a window (a
# volatility needs every session's value, not one or two records). Any other aggregate of one
# call (a mean, a sum, a high, a change) is one call's arithmetic: T1 or T2 by its dynamics.
PATH_AGGREGATES = frozenset({"std", "max_drawdown", "drawdown_peak", "drawdown_trough"})
_COUNT_WORDS = {2: "two", 3: "three", 4: "four"}


def _ref_phrase(ref) -> str:
    what = ref.arg_field or (ref.select.key if ref.aggregate in ("argmax", "argmin") else ref.field)
    how = ref.aggregate or ref.select.mode
    return f"{how} {what}"


def structural_tier(program: Program) -> tuple[Tier | None, str]:
    """T3 from the program's shape alone, with why; or None and what kind of record it reads.

    T3 is real multi-step work (issue 28): calls that depend on each other (an argument read from
    an earlier response), arithmetic across calls (a value times another call's factor, two
    instruments' returns compared), or a statistic of a window's whole path. A single call read
    once — a record, one aggregate, or arithmetic between records of the same response (growth
    on the year before, a margin) — is T1 or T2 by its measured dynamics.
    """
    extract = program.extract
    tools = {c.id: c.tool for c in program.calls}
    dependent = [(c, name, ref) for c in program.calls for name, ref in sorted(c.refs.items())]
    if dependent:
        count = _COUNT_WORDS.get(len(program.calls), str(len(program.calls)))
        links = "; ".join(f"{tools.get(ref.call, ref.call)} → {c.tool} ({name} from the {_ref_phrase(ref)})"
                          for c, name, ref in dependent)
        return "T3", f"{count} dependent calls: {links}"
    read = [extract.call, *(step.other.call for step in (extract.combine.chain() if extract.combine else ()))]
    if extract.times is not None:
        read.append(extract.times.call)
    # Issue 29: a screen reads its set from another call; a pick compares other calls' values.
    if extract.select.within is not None:
        read.append(extract.select.within.call)
    if extract.pick is not None:
        read.extend(ref.call for ref in extract.pick.others)
    if len(set(read)) > 1:
        if extract.pick is not None:
            what = f"{extract.pick.op} of {extract.aggregate} {extract.field} across {len(set(read))} calls"
        elif extract.select.within is not None:
            member = extract.select.within
            what = (f"a screen of {tools.get(extract.call)} across the {member.field} listed by "
                    f"{tools.get(member.call)} ({extract.aggregate} of {extract.field})")
        elif extract.times is not None:
            joined = f"{tools.get(extract.call)} {extract.field} times {tools.get(extract.times.call)} {extract.times.field}"
            what = f"{joined}, then {extract.aggregate}" if extract.aggregate else joined
        else:
            ops = ", ".join(step.op for step in extract.combine.chain())  # type: ignore[union-attr]
            what = f"{ops} of {' and '.join(f'{tools.get(c)} ({c})' for c in dict.fromkeys(read))}"
        return "T3", f"cross-call arithmetic: {what}"
    if extract.combine is not None:
        ops = ", ".join(step.op for step in extract.combine.chain())
        return None, f"one call's arithmetic ({ops} of records of one {tools.get(extract.call)} response)"
    if extract.aggregate is not None:
        if extract.aggregate in PATH_AGGREGATES:
            return "T3", f"a path over a window: {extract.aggregate} of {extract.field!r} over every session of it"
        if extract.aggregate in ("argmax", "argmin") and extract.arg_field not in (None, extract.select.key):
            # Issue 29: the record that ranks first over a window, read at another of its figures.
            return "T3", (f"a ranking over a window: {extract.aggregate} of {extract.field!r}, then the winning "
                          f"record's {extract.arg_field!r}")
        return None, f"one aggregate of one call ({extract.aggregate} of {extract.field!r} over a window)"
    select = extract.select
    if select.mode in ("snapshot", "minute") and select.anchor is not None and select.anchor.period is None:
        return None, f"rolling anchor ({select.mode} at a date relative to the as-of day)"
    if select.mode == "latest":
        return None, "the latest published record"
    return None, f"one record ({select.mode} on {select.key!r})"


def slower(a: RefreshClass, b: RefreshClass) -> RefreshClass:
    return a if CADENCE_ORDER.index(a) >= CADENCE_ORDER.index(b) else b


def chain_cadence(candidate: Candidate, catalog: Catalog) -> RefreshClass:
    """The cadence a candidate's answer is expected to move at: its answer tool's, or for a chain
    of calls the slowest link's (the close on the latest ex-date moves with the dividend table)."""
    tool = catalog.get(candidate.facts.tool)
    if tool is None:
        raise ValueError(f"{candidate.qid}: tool {candidate.facts.tool!r} is not in the catalog")
    cadence = tool.refresh_class
    for call in candidate.program.calls:
        meta = catalog.get(call.tool)
        if meta is not None and meta.refresh_class != "static":
            cadence = slower(cadence, meta.refresh_class)
    return cadence


def observed_cadence(pairs: int, changes: int, policy: DynamicsPolicy) -> RefreshClass:
    """The cadence of an answer that moved on `changes` of `pairs` consecutive sessions."""
    if changes / pairs >= policy.daily_min_change_rate:
        return "daily"
    gap = pairs / changes
    if gap <= policy.weekly_max_gap:
        return "weekly"
    if gap <= policy.monthly_max_gap:
        return "monthly"
    return "quarterly"


@dataclass(frozen=True)
class Decision:
    dynamics: Dynamics
    dropped: str | None  # filter name
    detail: str


def decide(candidate: Candidate, days: Sequence[dt.date], answers: Sequence[DayAnswer], *, calendar: str | None,
           tool_cadence: RefreshClass, static_tool: bool, point_in_time: bool, policy: DynamicsPolicy,
           rule: MatchRule | None = None) -> Decision:
    """The profile of one candidate's replay, its observed class and tier, or why it is dropped."""
    if len(days) != len(answers):
        raise ValueError(f"{candidate.qid}: {len(days)} days but {len(answers)} answers")
    rule = rule if rule is not None else question_rule(candidate)
    ok = [a for a in answers if a.status == "ok"]
    not_ok = len(answers) - len(ok)
    pairs = changes = 0
    for earlier, later in zip(answers, answers[1:]):
        if earlier.status == "ok" and later.status == "ok":
            pairs += 1
            changes += stale_fails(rule, earlier, later)
    distinct = len({a.answer for a in ok})
    flags = trivial_flags([a.value for a in ok if a.value is not None], distinct)
    measured = dict(calendar=calendar, days=len(days), first_day=days[0], last_day=days[-1],
                    point_in_time=point_in_time, pairs=pairs, changes=changes,
                    change_rate=changes / pairs if pairs else 0.0, distinct_answers=distinct,
                    not_ok_days=not_ok, flags=flags, tool_cadence=tool_cadence)
    moved = f"changed on {changes} of {pairs} consecutive session pairs"

    def drop(name: str, why: str) -> Decision:
        return Decision(Dynamics(**measured, class_reason=why), name, why)

    # A ranking that ties (core.extract.ranking_tie) or a ratio over a non-positive base on any
    # replayed day would be withdrawn on such a day of the benchmark: dropped with its own reason.
    for day, answer in zip(days, answers):
        if answer.status == "empty" and is_tie(answer.error):
            return drop("dynamics_tie", f"{day.isoformat()}: {answer.error}")
        if answer.status == "empty" and is_not_meaningful(answer.error):
            return drop("dynamics_not_meaningful", f"{day.isoformat()}: {answer.error}")
    if not_ok > policy.max_not_ok_share * len(answers) or pairs == 0:
        return drop("dynamics_unreliable", f"no ok answer on {not_ok} of {len(answers)} replayed days")
    for flag, why in (("flag_like", "every answer is 0 or 1 (a flag)"),
                      ("zero", "the answer is 0 on most days"),
                      ("unit_factor", "the answer is 1 on most days (a factor)")):
        if flag in flags:
            return drop(f"dynamics_trivial_{flag}", why)
    if changes == 0:
        if static_tool:
            observed: RefreshClass = "static"
            class_reason = f"reference data without a time key that never changed ({moved})"
        elif tool_cadence in MUST_MOVE_CADENCES:
            return drop("dynamics_never_moves", f"a {tool_cadence} tool whose answer never changed ({moved})")
        else:
            observed = tool_cadence
            class_reason = (f"{moved}, as expected of a {tool_cadence} series over {len(days)} sessions: "
                            f"the tool's cadence")
    else:
        cadence = observed_cadence(pairs, changes, policy)
        if cadence == "daily":
            observed, class_reason = "daily", f"{moved} (>= {policy.daily_min_change_rate:.0%})"
        elif static_tool:
            observed, class_reason = cadence, f"{moved}: observed {cadence}"
        else:
            observed = slower(cadence, tool_cadence)
            class_reason = f"{moved}: observed {cadence}, tool cadence {tool_cadence}, the slower of the two"
    tier, shape = structural_tier(candidate.program)
    if tier is not None:
        tier_reason = f"T3 complex historical investigation: {shape}"
    elif observed == "daily":
        tier, tier_reason = "T1", f"T1 time-sensitive: {shape} that {moved}"
    elif shape.startswith("rolling anchor"):
        return drop("dynamics_rolling_not_time_sensitive",
                    f"{shape} rolls every session yet {moved}: neither time-sensitive nor a fixed historical record")
    else:
        tier, tier_reason = "T2", f"T2 simple historical lookup: {shape}, {moved}"
    dynamics = Dynamics(**measured, observed_class=observed, class_reason=class_reason, tier=tier,
                        tier_reason=tier_reason)
    return Decision(dynamics, None, f"{observed}/{tier}: {class_reason}")


def withdrawn_days(program: Program, days: Sequence[dt.date], answers: Sequence[DayAnswer],
                   lags: Mapping[str, int]) -> list[tuple[str, str | None, str]]:
    """(day, observed, expected) of each replayed day on which the daily refresh's close guard
    would withdraw this answer: a `latest` record older than the last (published) session;
    `lags` are the tools' publication lags (core.publication.publication_lags)."""
    out = []
    for day, answer in zip(days, answers):
        if answer.status != "ok":
            continue
        expected = expected_latest_period(program, day, lags)
        if expected is not None and answer.observed_period != expected:
            out.append((day.isoformat(), answer.observed_period, expected))
    return out


# --------------------------------------------------------------------------- the stage


@dataclass
class DynamicsResult:
    candidates: list[Candidate]  # kept, with refresh_class, tier and dynamics from the profile
    rows: list[DynamicsRow]  # every replayed candidate, kept or dropped
    filters: list[FilterCount]
    days: dict[str, list[dt.date]]  # calendar ("weekdays" for none) -> replayed days
    point_in_time: bool
    stats: ReplayStats
    seconds: float
    by_class: dict[str, int] = field(default_factory=dict)
    by_tier: dict[str, int] = field(default_factory=dict)


async def profile_candidates(
    candidates: Sequence[Candidate],
    catalog: Catalog,
    as_of: dt.date,
    *,
    open_at: OpenAt | None,
    client: ToolClient | None = None,
    policy: DynamicsPolicy = DynamicsPolicy(),
    report: Report = None,
) -> DynamicsResult:
    """Replay every candidate at `policy.days` past days of its market; keep, relabel or drop it.

    `report`: progress lines of the replay (core/progress.py)."""
    started = time.perf_counter()
    days_of: dict[str | None, list[dt.date]] = {}
    programs_by_day: dict[dt.date, dict[str, Program]] = defaultdict(dict)
    for c in candidates:
        calendar = c.facts.calendar
        if calendar not in days_of:
            days_of[calendar] = replay_days(calendar, as_of, policy.days)
        for day in days_of[calendar]:
            programs_by_day[day][c.qid] = c.program
    say(report, f"replaying {len(candidates):,} candidates at {len(programs_by_day)} days "
                f"({sum(map(len, programs_by_day.values())):,} program runs)")
    answers, stats = await replay(programs_by_day, open_at=open_at, client=client, config=policy.executor,
                                  workers=policy.workers, report=report)

    counts: Counter[str] = Counter()
    lags = publication_lags(catalog)
    kept: list[Candidate] = []
    rows: list[DynamicsRow] = []
    rules: dict[tuple[str, ...], MatchRule] = {}
    for c in sorted(candidates, key=lambda c: c.qid):
        tool = catalog.get(c.facts.tool)
        if tool is None:
            raise ValueError(f"{c.qid}: tool {c.facts.tool!r} is not in the catalog")
        days = days_of[c.facts.calendar]
        day_answers = [answers[c.qid][d] for d in days]
        fmt = c.program.extract.format
        rule_key = (fmt.model_dump_json(), c.program.extract.aggregate or "", str(c.facts.observed_value))
        rule = rules.get(rule_key) or rules.setdefault(rule_key, question_rule(c))
        decision = decide(c, days, day_answers, calendar=c.facts.calendar, tool_cadence=chain_cadence(c, catalog),
                          static_tool=tool.time_key is None or tool.refresh_class == "static",
                          point_in_time=open_at is not None, policy=policy, rule=rule)
        dropped, detail = decision.dropped, decision.detail
        # Only a point-in-time replay knows what was current on each day.
        stale = (withdrawn_days(c.program, days, day_answers, lags)
                 if open_at is not None and decision.dynamics.observed_class == "daily" else [])
        if dropped is None and stale:
            # The refresh's close guard would withdraw it on these days (refresh.withdraw_stale_latest).
            dropped = "dynamics_withdrawn_stale"
            detail = (f"withdrawn by the close guard on {len(stale)} of {len(days)} replayed days (first "
                      f"{stale[0][0]}: observed {stale[0][1]!r}, expected {stale[0][2]!r})")
            decision = Decision(decision.dynamics.model_copy(update={
                "observed_class": None, "tier": None, "tier_reason": None, "class_reason": detail}), dropped, detail)
        last = day_answers[-1]
        if dropped is None and open_at is not None and days[-1] == as_of and last.answer != c.facts.observed_answer:
            # The replay of the construction day must reproduce what enumeration observed; when
            # it does not, the service was not at the construction date's cut-off for one of them.
            dropped = "dynamics_replay_disagrees"
            detail = (f"the replay of {as_of} answered {last.answer!r}, enumeration observed "
                      f"{c.facts.observed_answer!r}")
            decision = Decision(decision.dynamics.model_copy(update={
                "observed_class": None, "tier": None, "tier_reason": None, "class_reason": detail}), dropped, detail)
        rows.append(DynamicsRow(qid=c.qid, tool=c.facts.tool, signature=c.signature, entity=c.entity,
                                anchor=c.facts.anchor, aggregate=c.facts.aggregate, days=list(days),
                                answers=[a.answer if a.status == "ok" else None for a in day_answers],
                                dynamics=decision.dynamics, dropped=dropped, detail=detail))
        if dropped is not None:
            counts[dropped] += 1
            continue
        d = decision.dynamics
        assert d.observed_class is not None and d.tier is not None
        kept.append(c.model_copy(update={"refresh_class": d.observed_class, "tier": d.tier, "dynamics": d}))
    return DynamicsResult(
        candidates=kept, rows=rows,
        filters=[FilterCount(filter=name, dropped=n) for name, n in sorted(counts.items())],
        days={(cal or "weekdays"): ds for cal, ds in sorted(days_of.items(), key=lambda kv: kv[0] or "")},
        point_in_time=open_at is not None, stats=stats, seconds=time.perf_counter() - started,
        by_class=dict(sorted(Counter(c.refresh_class for c in kept).items())),
        by_tier=dict(sorted(Counter(c.tier for c in kept).items())),
    )
