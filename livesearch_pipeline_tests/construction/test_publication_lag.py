"""The publication lag (issue 20): a T+1 series anchors on its latest published record, and a
candidate the close guard would withdraw on any replayed day is dropped by construction."""

from __future__ import annotations

import datetime as dt

import anyio

from livesearch_pipeline.construction.dynamics import DayAnswer, DynamicsPolicy, profile_candidates, withdrawn_days
from livesearch_pipeline.construction.sampling import window_dates
from livesearch_pipeline.core.calendars import sessions_back
from livesearch_pipeline.core.executor import execute_programs
from livesearch_pipeline.core.models import Call, Extractor, Format, MatchRule, Program, Selection
from livesearch_pipeline.core.publication import expected_latest_period, publication_lags
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline.dataservice.catalog import ServiceConfig, build_catalog, collect_tool_specs
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.point_in_time import EmbeddedPointInTime
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline.refresh import latest_observations
from livesearch_pipeline_tests.construction.builders import YMD, candidate, question

CLOCK = dt.date(2026, 11, 27)  # a Friday, a Shanghai session
SPECS = collect_tool_specs()
CATALOG = build_catalog(SPECS, ServiceConfig(clock=CLOCK))
FUND_NAV = CATALOG.get("fund_nav")


def _nav_program(code: str, *, lagged: bool) -> Program:
    dates = window_dates(FUND_NAV, "XSHG", sessions=10)
    if not lagged:  # what enumeration wrote before the lag was modelled
        dates = {name: spec.model_copy(update={"sessions_back": spec.sessions_back - 1}) for name, spec in dates.items()}
    return Program(calls=[Call(id="c1", tool="fund_nav", args={"ts_code": code}, dates=dates)],
                   extract=Extractor(call="c1", select=Selection(mode="latest", key="nav_date", key_fmt=YMD),
                                     field="unit_nav", format=Format(kind="number", decimals=4, unit="CNY")))


def test_the_nav_tool_declares_its_lag_and_its_windows_end_on_the_last_published_session():
    assert FUND_NAV.publication_lag_sessions == 1
    assert CATALOG.get("daily").publication_lag_sessions == 0
    dates = window_dates(FUND_NAV, "XSHG", sessions=10)
    assert (dates["start_date"].sessions_back, dates["end_date"].sessions_back) == (10, 1)
    assert window_dates(CATALOG.get("daily"), "XSHG", sessions=10)["end_date"].sessions_back == 0


def test_the_guard_expects_the_last_session_moved_back_by_the_tool_s_declared_lag():
    code = "000001.OF"
    monday = dt.date(2026, 11, 30)
    lags = publication_lags(CATALOG)
    assert lags == {"fund_nav": 1}
    assert expected_latest_period(_nav_program(code, lagged=True), monday, lags) == "20261127"
    # The lag is the tool's, never the program's: a window ending early is not a declaration.
    assert expected_latest_period(_nav_program(code, lagged=False), monday, lags) == "20261127"
    assert expected_latest_period(_nav_program(code, lagged=True), monday, {}) == "20261130"
    # A Saturday: the last session is Friday, its NAV is published on Monday.
    assert expected_latest_period(_nav_program(code, lagged=True), dt.date(2026, 11, 28), lags) == "20261126"
    # Not a guarded shape: a window aggregate.
    window = _nav_program(code, lagged=True)
    window = window.model_copy(update={"extract": window.extract.model_copy(update={
        "select": Selection(mode="all", key="nav_date", key_fmt=YMD), "aggregate": "mean"})})
    assert expected_latest_period(window, monday, lags) is None


class _Job:
    def __init__(self, qid: str, program: Program) -> None:
        self.qid, self.program, self.match = qid, program, MatchRule(rule="approx", unit="CNY", decimals=4)


def _fund() -> str:
    return shared_market(DEFAULT_SEED).universe.of_class("fund")[0].code


def _nav_candidates(code: str):
    programs = {lagged: _nav_program(code, lagged=lagged) for lagged in (True, False)}

    async def observe():
        service = DataService(specs=SPECS, config=ServiceConfig(clock=CLOCK), market=shared_market(DEFAULT_SEED))
        async with McpToolClient.in_process(service) as mcp:
            jobs = [_Job(compute_qid(p, code), p) for p in programs.values()]
            return await execute_programs(jobs, CLOCK, mcp)

    answers, _ = anyio.run(observe)
    by_qid = {a.qid: a for a in answers}
    out = {}
    for lagged, program in programs.items():
        qid = compute_qid(program, code)
        answer = by_qid[qid]
        assert answer.status == "ok", answer
        base = candidate(code, asset_class="fund")
        facts = base.facts.model_copy(update={"tool": "fund_nav", "field": "unit_nav", "observed_value": answer.value,
                                              "observed_answer": answer.answer})
        out[lagged] = base.model_copy(update={"qid": qid, "program": program, "facts": facts,
                                              "signature": f"nav-{lagged}"})
    return out


def test_a_nav_question_lives_under_the_declared_lag_and_is_dropped_as_withdrawn_without_it():
    code = _fund()
    candidates = list(_nav_candidates(code).values())
    open_at = EmbeddedPointInTime(DEFAULT_SEED, SPECS)
    result = anyio.run(lambda: profile_candidates(candidates, CATALOG, CLOCK, policy=DynamicsPolicy(workers=1),
                                                  open_at=open_at))
    assert all(r.dropped is None and r.dynamics.observed_class == "daily" for r in result.rows), result.rows
    # The same replay judged by a catalog that declares no lag: every NAV is a session late.
    unlagged = CATALOG.model_copy(update={"tools": [
        t.model_copy(update={"publication_lag_sessions": 0}) for t in CATALOG.tools]})
    result = anyio.run(lambda: profile_candidates(candidates, unlagged, CLOCK, policy=DynamicsPolicy(workers=1),
                                                  open_at=open_at))
    assert all(r.dropped == "dynamics_withdrawn_stale" and "close guard" in r.detail for r in result.rows)
    assert {f.filter: f.dropped for f in result.filters} == {"dynamics_withdrawn_stale": 2}


def test_the_refresh_guard_reads_the_lag_from_the_catalog():
    code = _fund()
    day = dt.date(2026, 11, 30)
    previous = sessions_back("XSHG", day, 1).strftime(YMD)
    pool = {}
    for lagged in (True, False):
        q = question(code, signature=f"nav-{lagged}", visibility=3)
        program = _nav_program(code, lagged=lagged)
        q = q.model_copy(update={"program": program, "qid": compute_qid(program, code)})
        pool[q.qid] = q

    class _Answer:  # what latest_observations reads of a gold answer
        def __init__(self, qid: str) -> None:
            self.qid, self.status, self.observed_period = qid, "ok", previous

    answers = [_Answer(qid) for qid in pool]
    found = latest_observations(day, answers, pool, publication_lags(CATALOG))
    assert found.checked == 2 and found.stale == []
    # Without the tool's lag both are a session late.
    assert len(latest_observations(day, answers, pool, {}).stale) == 2


def test_withdrawn_days_ignores_days_without_an_answer():
    program = _nav_program("000001.OF", lagged=True)
    days = [dt.date(2026, 11, 26), dt.date(2026, 11, 27)]
    answers = [DayAnswer("empty"), DayAnswer("ok", "1.0000", 1.0, "CNY", observed_period="20261126")]
    lags = {"fund_nav": 1}
    assert withdrawn_days(program, days, answers, lags) == []
    answers[1] = DayAnswer("ok", "1.0000", 1.0, "CNY", observed_period="20261125")
    assert withdrawn_days(program, days, answers, lags) == [("2026-11-27", "20261125", "20261126")]


def test_a_candidate_without_an_answer_on_any_one_replayed_day_is_dropped():
    """Withdrawn on one replayed day is withdrawn on days of the benchmark too (issue 20: 5 NAV
    questions withdrawn on every day survived construction)."""
    from livesearch_pipeline.construction.dynamics import decide, replay_days

    days = replay_days("XSHG", CLOCK, 21)
    answers = [DayAnswer("ok", f"{100 + i:.2f}", 100.0 + i, "CNY") for i in range(21)]
    c = candidate("600519.SH")
    kept = decide(c, days, answers, calendar="XSHG", tool_cadence="daily", static_tool=False, point_in_time=True,
                  policy=DynamicsPolicy())
    assert kept.dropped is None
    answers[7] = DayAnswer("empty", error="suspended")
    dropped = decide(c, days, answers, calendar="XSHG", tool_cadence="daily", static_tool=False, point_in_time=True,
                     policy=DynamicsPolicy())
    assert dropped.dropped == "dynamics_unreliable" and dropped.dynamics.not_ok_days == 1
