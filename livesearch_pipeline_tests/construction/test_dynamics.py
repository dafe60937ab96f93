"""The dynamics profile: how replayed answers decide refresh class, tier, or a drop (issue 12).

Pure tests of the classification on hand-written day series, then a small replay against the
embedded service at a fixed clock (checked against the core executor), and the profile carried
into the question's provenance.
"""

from __future__ import annotations

import datetime as dt
import os

import anyio
import pytest
from pydantic import ValidationError

from livesearch_pipeline.construction.dynamics import (
    DayAnswer,
    DynamicsPolicy,
    decide,
    profile_candidates,
    replay_days,
    run_programs_on_day,
    stale_fails,
)
from livesearch_pipeline.construction.models import Candidate
from livesearch_pipeline.construction.pipeline import verbalize_candidates
from livesearch_pipeline.core.calendars import sessions_back
from livesearch_pipeline.core.executor import execute_programs
from livesearch_pipeline.core.models import (
    DateSpec,
    Dynamics,
    MatchRule,
    Program,
    Provenance,
    Question,
    Selection,
)
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.point_in_time import EmbeddedPointInTime
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline_tests.construction.builders import YMD, bar_tool, candidate, catalog_of

CLOCK = dt.date(2026, 11, 27)  # a Friday, a Shanghai session
DAYS = replay_days("XSHG", CLOCK, 21)
POLICY = DynamicsPolicy()


def ok(values: list[float]) -> list[DayAnswer]:
    return [DayAnswer("ok", answer=f"{v:.2f}", value=v, unit="CNY") for v in values]


def moving(n: int = 21, *, changes: int | None = None) -> list[float]:
    """`n` daily values that change on `changes` of the n-1 pairs (all of them by default)."""
    changes = n - 1 if changes is None else changes
    values, value = [100.0], 100.0
    for i in range(1, n):
        if i <= changes:
            value += 1.0
        values.append(value)
    return values


def judged(c: Candidate, values: list[float] | list[DayAnswer], *, cadence: str = "daily", static: bool = False):
    answers = values if values and isinstance(values[0], DayAnswer) else ok(values)  # type: ignore[arg-type]
    return decide(c, DAYS, answers, calendar="XSHG", tool_cadence=cadence, static_tool=static,
                  point_in_time=True, policy=POLICY)


def snapshot_candidate(code: str = "600519.SH", back: int = 5) -> Candidate:
    base = candidate(code)
    select = Selection(mode="snapshot", key="trade_date", key_fmt=YMD,
                       anchor=DateSpec(sessions_back=back, calendar="XSHG", fmt=YMD))
    program = base.program.model_copy(update={"extract": base.program.extract.model_copy(update={"select": select})})
    return base.model_copy(update={"qid": compute_qid(program, code), "program": program,
                                   "facts": base.facts.model_copy(update={"anchor": f"snapshot:{back}"})})


# --------------------------------------------------------------------------- days


def test_replay_days_are_the_consecutive_sessions_ending_at_the_construction_date():
    assert len(DAYS) == 21 and DAYS[-1] == CLOCK
    # Consecutive sessions: each pair is what the daily benchmark compares, D-1 against D.
    assert DAYS == [sessions_back("XSHG", CLOCK, k) for k in range(20, -1, -1)]
    weekdays = replay_days(None, dt.date(2026, 11, 30), 6)  # a Monday; FX has no exchange calendar
    assert weekdays == [dt.date(2026, 11, d) for d in (23, 24, 25, 26, 27, 30)]


# --------------------------------------------------------------------------- classification (pure)


def test_a_never_moving_daily_candidate_is_dropped_with_its_reason():
    decision = judged(candidate(), [1688.5] * 21)
    assert decision.dropped == "dynamics_never_moves"
    assert "never changed" in decision.detail and "0 of 20" in decision.detail
    assert decision.dynamics.observed_class is None and decision.dynamics.tier is None
    assert "constant" in decision.dynamics.flags


def test_a_slow_series_that_does_not_move_in_the_window_keeps_the_tool_cadence_as_T2():
    decision = judged(candidate(), [1688.5] * 21, cadence="quarterly")
    assert decision.dropped is None
    assert (decision.dynamics.observed_class, decision.dynamics.tier) == ("quarterly", "T2")
    static = judged(candidate(), [1688.5] * 21, cadence="static", static=True)
    assert (static.dynamics.observed_class, static.dynamics.tier) == ("static", "T2")


def test_a_latest_that_changes_every_session_is_daily_and_T1():
    decision = judged(candidate(), moving())
    assert decision.dropped is None
    d = decision.dynamics
    assert (d.observed_class, d.tier, d.pairs, d.changes, d.change_rate) == ("daily", "T1", 20, 20, 1.0)
    assert d.distinct_answers == 21 and d.point_in_time and d.first_day == DAYS[0] and d.last_day == CLOCK
    assert "20 of 20" in d.tier_reason


@pytest.mark.parametrize("changes", [1, 2, 4, 8, 15])
def test_a_latest_that_changes_on_few_sessions_is_never_T1(changes):
    d = judged(candidate(), moving(changes=changes)).dynamics
    assert d.tier == "T2" and d.observed_class in ("weekly", "monthly")
    assert d.changes == changes


def test_a_T1_whose_answer_does_not_move_is_impossible():
    kept = judged(candidate(), moving()).dynamics
    with pytest.raises(ValidationError, match="T1 question must change on most sessions"):
        Dynamics.model_validate({**kept.model_dump(), "changes": 0, "change_rate": 0.0, "observed_class": "weekly"})
    # Nor may a question's labels disagree with its profile.
    slow = judged(candidate(), moving(changes=2)).dynamics
    c = candidate()
    with pytest.raises(ValidationError, match="disagree with the dynamics profile"):
        Question(qid=c.qid, question="What was the close?", program=c.program,
                 match=MatchRule(rule="approx", unit="CNY", decimals=2), refresh_class="daily", tier="T1",
                 asset_class="cn_equity", entity=c.entity, entity_name=c.entity_name, visibility=c.visibility,
                 signature=c.signature, provenance=Provenance(verbalizer="template", dynamics=slow))


def test_with_dynamics_attaches_a_profile_as_a_validated_question_would_and_refuses_a_disagreeing_one():
    kept = judged(candidate(), moving()).dynamics
    slow = judged(candidate(), moving(changes=2)).dynamics
    c = candidate()
    bare = Question(qid=c.qid, question="What was the close?", program=c.program,
                    match=MatchRule(rule="approx", unit="CNY", decimals=2), refresh_class="daily", tier="T1",
                    asset_class="cn_equity", entity=c.entity, entity_name=c.entity_name, visibility=c.visibility,
                    signature=c.signature, provenance=Provenance(verbalizer="template"))
    attached = bare.with_dynamics(kept)
    validated = Question.model_validate({**bare.model_dump(), "provenance": {"verbalizer": "template",
                                                                            "dynamics": kept.model_dump()}})
    assert attached == validated and attached.model_dump_json() == validated.model_dump_json()
    assert bare.provenance.dynamics is None  # a copy: the question given is unchanged
    with pytest.raises(ValueError, match="disagree with the dynamics profile"):
        bare.with_dynamics(slow)


@pytest.mark.parametrize("changes", range(0, 21))
def test_a_snapshot_five_sessions_back_is_never_a_simple_historical_lookup(changes):
    decision = judged(snapshot_candidate(), moving(changes=changes))
    assert decision.dynamics.tier != "T2"
    if decision.dropped is None:
        assert decision.dynamics.tier == "T1" and decision.dynamics.observed_class == "daily"
    else:
        assert decision.dropped in ("dynamics_never_moves", "dynamics_rolling_not_time_sensitive")


def test_one_aggregate_of_one_call_is_T1_or_T2_by_its_dynamics():
    # Issue 28: the highest close of a window is one call's arithmetic, not a T3 investigation.
    c = candidate(anchor="window:20", aggregate="max")
    fast = judged(c, moving()).dynamics
    assert fast.tier == "T1"
    assert fast.tier_reason == ("T1 time-sensitive: one aggregate of one call (max of 'close' over a window) that "
                                "changed on 20 of 20 consecutive session pairs")
    slow = judged(c, moving(changes=1)).dynamics
    assert (slow.tier, slow.observed_class) == ("T2", "monthly")
    assert slow.tier_reason.startswith("T2 simple historical lookup: one aggregate of one call (max of 'close'")


def test_a_statistic_of_a_window_s_path_is_T3_whatever_its_cadence():
    c = candidate(anchor="window:20", aggregate="std")
    for values in (moving(), moving(changes=1)):
        d = judged(c, values).dynamics
        assert d.tier == "T3"
        assert d.tier_reason == ("T3 complex historical investigation: a path over a window: std of 'close' over "
                                 "every session of it")


@pytest.mark.parametrize(("values", "dropped"), [
    ([0.0, 1.0] * 10 + [1.0], "dynamics_trivial_flag_like"),
    ([0.0] * 15 + moving(6), "dynamics_trivial_zero"),
    ([1.0] * 15 + moving(6), "dynamics_trivial_unit_factor"),
])
def test_trivial_answers_are_dropped(values, dropped):
    assert judged(candidate(), values).dropped == dropped


def test_a_program_that_fails_on_too_many_days_is_dropped():
    answers = ok(moving())
    answers[3:6] = [DayAnswer("empty", error="no record")] * 3
    decision = judged(candidate(), answers)
    assert decision.dropped == "dynamics_unreliable" and decision.dynamics.not_ok_days == 3


def test_a_change_is_what_the_question_s_own_rule_fails():
    a, b = DayAnswer("ok", "10.00", 10.0, "CNY"), DayAnswer("ok", "10.01", 10.01, "CNY")
    assert stale_fails(MatchRule(rule="approx", unit="CNY", decimals=2), a, b)
    assert not stale_fails(MatchRule(rule="approx", unit="CNY", decimals=2, abs_tol=0.05), a, b)
    same = DayAnswer("ok", "10.00", 10.0, "CNY")
    assert not stale_fails(MatchRule(rule="approx", unit="CNY", decimals=2), a, same)
    # Text that only a judge could accept counts as a change, as in the stale-gold audit.
    x, y = DayAnswer("ok", "Alpha Holdings", "Alpha Holdings"), DayAnswer("ok", "Beta Bank", "Beta Bank")
    assert stale_fails(MatchRule(rule="semantic"), x, y)


# --------------------------------------------------------------------------- replay (embedded service)


SPECS = collect_tool_specs(["quotes_cn", "utility"])


def _a_share() -> str:
    return shared_market(DEFAULT_SEED).universe.of_class("cn_equity")[0].code


def _programs(code: str) -> dict[str, Program]:
    base = candidate(code).program
    call = base.calls[0].model_copy(update={"tool": "daily"})
    latest = Program(calls=[call], extract=base.extract)
    window = Program(calls=[call.model_copy(update={"dates": {
        "start_date": DateSpec(sessions_back=19, calendar="XSHG", fmt=YMD),
        "end_date": DateSpec(sessions_back=0, calendar="XSHG", fmt=YMD)}})],
        extract=base.extract.model_copy(update={"select": Selection(mode="all", key="trade_date", key_fmt=YMD),
                                                "aggregate": "max"}))
    snapshot = Program(calls=[call], extract=snapshot_candidate(code).program.extract)
    return {compute_qid(p, code): p for p in (latest, window, snapshot)}


class _Job:
    def __init__(self, qid: str, program: Program) -> None:
        self.qid, self.program, self.match = qid, program, MatchRule(rule="approx", unit="CNY", decimals=2)


def test_the_replay_of_a_day_gives_what_the_executor_gives_at_that_day_s_cut_off():
    code = _a_share()
    programs = _programs(code)
    day = DAYS[5]

    async def run():
        async with EmbeddedPointInTime(DEFAULT_SEED, SPECS)(day) as client:
            replayed = await run_programs_on_day(programs, day, client)
        # The reference: the core executor through MCP against a service whose clock is `day`.
        service = DataService(specs=SPECS, config=ServiceConfig(clock=day), market=shared_market(DEFAULT_SEED))
        async with McpToolClient.in_process(service) as mcp:
            executed, _ = await execute_programs([_Job(q, p) for q, p in programs.items()], day, mcp)
        return replayed, executed

    replayed, executed = anyio.run(run)
    assert {a.qid: (a.status, a.answer, a.value) for a in executed} == {
        q: (r.status, r.answer, r.value) for q, r in replayed.items()}
    assert all(r.status == "ok" for r in replayed.values())


def _candidates(code: str) -> list[Candidate]:
    async def observe():
        service = DataService(specs=SPECS, config=ServiceConfig(clock=CLOCK), market=shared_market(DEFAULT_SEED))
        async with McpToolClient.in_process(service) as mcp:
            return await execute_programs([_Job(q, p) for q, p in _programs(code).items()], CLOCK, mcp)

    answers, _ = anyio.run(observe)
    out = []
    for answer in answers:
        program = _programs(code)[answer.qid]
        base = candidate(code, anchor="window:20" if program.extract.aggregate else "latest",
                         aggregate=program.extract.aggregate)
        facts = base.facts.model_copy(update={"tool": "daily", "observed_value": answer.value,
                                              "observed_answer": answer.answer})
        out.append(base.model_copy(update={"qid": answer.qid, "program": program, "facts": facts}))
    return out


def test_profile_candidates_replays_at_point_in_time_and_labels_from_the_profile():
    code = _a_share()
    candidates = _candidates(code)
    catalog = catalog_of(bar_tool("daily"))
    lines: list[str] = []
    result = anyio.run(lambda: profile_candidates(candidates, catalog, CLOCK, report=lines.append,
                                                  open_at=EmbeddedPointInTime(DEFAULT_SEED, SPECS)))
    assert result.point_in_time and result.days == {"XSHG": DAYS}
    # Progress: what is replayed, then a line at each quarter of the days (forked workers too).
    assert lines[0] == "replaying 3 candidates at 21 days (63 program runs)"
    assert [line.split(" (")[0] for line in lines[1:]] == [f"replayed: {n} of 21 days" for n in (6, 11, 16, 21)]
    assert len(result.rows) == 3 and result.stats.days == 21
    rows = {r.qid: r for r in result.rows}
    for c in candidates:
        row = rows[c.qid]
        # The construction day's replay reproduces what enumeration observed.
        assert row.answers[-1] == c.facts.observed_answer
        assert row.days == DAYS and row.dynamics.point_in_time
    # Days split over forked workers (the default) or replayed in this process: the same rows.
    alone = anyio.run(lambda: profile_candidates(candidates, catalog, CLOCK, policy=DynamicsPolicy(workers=1),
                                                 open_at=EmbeddedPointInTime(DEFAULT_SEED, SPECS)))
    assert POLICY.workers > 1 or (os.cpu_count() or 1) == 1
    assert alone.rows == result.rows
    by_shape = {c.program.extract.select.mode: c for c in result.candidates}
    latest = by_shape["latest"]
    assert (latest.refresh_class, latest.tier) == ("daily", "T1")
    assert latest.dynamics is not None and latest.dynamics.change_rate >= POLICY.daily_min_change_rate
    window = by_shape["all"]  # the highest close of 20 sessions: one call's aggregate (issue 28)
    assert window.tier in ("T1", "T2") and "one aggregate of one call (max of 'close'" in window.dynamics.tier_reason
    assert by_shape.get("snapshot") is None or by_shape["snapshot"].tier == "T1"


def test_the_profile_travels_into_the_question_s_provenance():
    code = _a_share()
    catalog = catalog_of(bar_tool("daily"))
    candidates = _candidates(code)
    result = anyio.run(lambda: profile_candidates(candidates, catalog, CLOCK,
                                                  open_at=EmbeddedPointInTime(DEFAULT_SEED, SPECS)))
    questions, _ = anyio.run(verbalize_candidates, result.candidates, None)
    assert questions
    by_qid = {c.qid: c for c in result.candidates}
    for q in questions:
        profile = q.provenance.dynamics
        assert profile is not None and profile == by_qid[q.qid].dynamics
        assert (q.refresh_class, q.tier) == (profile.observed_class, profile.tier)
        assert Question.model_validate_json(q.model_dump_json()) == q


# --------------------------------------------------------------------------- pool make-up


def test_the_pool_fills_each_tool_with_its_moving_questions_first_and_caps_the_slow_ones():
    from livesearch_pipeline.construction.pool import PoolPolicy, select_pool
    from livesearch_pipeline_tests.construction.builders import question

    questions = []
    for i in range(40):
        q = question(f"6{i:05d}.SH", signature=f"sig-{i:02d}", visibility=i % 11, sessions=5 + i)
        slow = i % 2 == 0
        questions.append(q.model_copy(update={"refresh_class": "quarterly" if slow else "daily",
                                              "tier": "T2" if slow else "T1"}))
    pool = select_pool(questions, {}, PoolPolicy(max_per_tool=30, max_slow_per_tool=5)).questions
    classes = [q.refresh_class for q in pool]
    assert classes.count("daily") == 20 and classes.count("quarterly") == 5
