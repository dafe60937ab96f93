"""The T3 investigation families (construction/families/, issue 29) on the embedded market.

Drafted as enumeration does, validated against the catalog, executed at a fixed clock; each
family's answer is checked by hand from the raw tool responses, its texts pass the date gate and
the lint in English and Chinese, its tier is T3 for the reason of its construct, and the pool
keeps it under a cap of its own.
"""

from __future__ import annotations

from collections import defaultdict

import anyio
import pytest

from livesearch_pipeline.construction.dynamics import structural_tier
from livesearch_pipeline.construction.enumerate import LATEST_WINDOW, _calendar, _facts, _family_draft
from livesearch_pipeline.construction.families import (
    INVESTIGATIONS,
    family_of,
    investigation_drafts,
    investigation_of,
    question_en,
    question_zh,
)
from livesearch_pipeline.construction.models import Candidate
from livesearch_pipeline.construction.pool import cap_key
from livesearch_pipeline.construction.sampling import load_entities, window_dates
from livesearch_pipeline.construction.verbalize import finalize, template_verbalize
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.dates import resolve_date_spec
from livesearch_pipeline.core.executor import execute_programs
from livesearch_pipeline.core.extract import round_half_up
from livesearch_pipeline.core.models import MatchRule
from livesearch_pipeline.core.program import validate_program
from livesearch_pipeline.core.qid import compute_qid, compute_signature
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline_tests.construction.test_families import CLOCK, _service

PER_CLASS = {"cn_equity": 4, "hk_equity": 2, "us_equity": 2, "fund": 4, "index": 50}
BARS = {"cn_equity": "daily", "hk_equity": "hk_daily", "us_equity": "us_daily", "fund": "fund_daily",
        "index": "index_daily"}


class _Job:
    def __init__(self, qid: str, program) -> None:
        self.qid, self.program, self.match = qid, program, MatchRule(rule="approx", rel_tol=0.001)


async def _build():
    async with McpToolClient.in_process(_service()) as client:
        catalog = await client.list_tools()
        entities = await load_entities(client, catalog)
        covered: dict[str, list] = defaultdict(list)
        explored = {}
        for cls, n in PER_CLASS.items():
            tools = [BARS[cls], *(("index_weight", "index_member") if cls == "index" else ())]
            for e in entities[cls][:n]:
                for name in tools:
                    tool = catalog.get(name)
                    args = {tool.entity_param: e.code}
                    for pname, spec in window_dates(tool, _calendar(tool, e), sessions=LATEST_WINDOW).items():
                        args[pname] = resolve_date_spec(spec, CLOCK)
                    records = (await client.call_tool(name, args))["items"]
                    if records:
                        covered[name].append(e)
                        explored[(name, e.code)] = records
        drafts = investigation_drafts(catalog, covered, explored,
                                      lambda t, e: window_dates(t, _calendar(t, e), sessions=LATEST_WINDOW))
        jobs = {compute_qid(d.program, d.entity.code): d for d in drafts}
        answers, _ = await execute_programs([_Job(q, d.program) for q, d in jobs.items()], CLOCK, client)
        raw = {}
        for a in answers:
            if a.status == "ok":
                raw[a.qid] = {cid: (await client.call_tool(jobs[a.qid].program.calls[i].tool, args))["items"]
                              for i, (cid, args) in enumerate(a.args.items())}
    candidates = []
    for a in answers:
        if a.status == "ok":
            d = _family_draft(jobs[a.qid])
            candidates.append(Candidate(
                qid=a.qid, signature=compute_signature(d.program, catalog), tier=d.tier,
                refresh_class=d.refresh_class, asset_class=d.entity.asset_class, entity=d.entity.code,
                entity_name=d.entity.name, visibility=d.entity.visibility, program=d.program, facts=_facts(d, a)))
    return catalog, drafts, answers, candidates, raw


@pytest.fixture(scope="module")
def built():
    return anyio.run(_build)


def _family(built, anchor: str, **where) -> list[tuple[Candidate, dict]]:
    _, _, _, candidates, raw = built
    found = [(c, raw[c.qid]) for c in candidates if c.facts.anchor == f"family:{anchor}"
             and all(getattr(c, k) == v for k, v in where.items())]
    assert found, f"no candidate of {anchor} {where}"
    return found


def _pct(a: float, b: float) -> str:
    return round_half_up((a - b) / abs(b) * 100, 2) + "%"


def test_every_investigation_is_drafted_valid_t3_and_answers(built):
    catalog, drafts, answers, candidates, _ = built
    for d in drafts:
        validate_program(d.program, catalog)
        tier, reason = structural_tier(d.program)
        assert tier == "T3", (d.family, reason)
        assert investigation_of(d.program) is not None
    assert {family_of(c)[0] for c in candidates} == INVESTIGATIONS
    assert sum(a.status == "ok" for a in answers) >= 0.6 * len(answers)
    # A screen is one cross-section call per session, shared by every index screened.
    screens = [d.program.calls[1] for d in drafts if d.family.startswith("screen:")]
    assert len({c.model_dump_json() for c in screens}) == 2  # daily and daily_basic


def test_drawdown_follows_the_adjusted_closes_from_their_running_peak(built):
    for c, raw in _family(built, "drawdown:value:60", asset_class="cn_equity")[:2]:
        factor = {r["trade_date"]: r["adj_factor"] for r in raw["c2"]}
        path = [r["close"] * factor[r["trade_date"]] for r in sorted(raw["c1"], key=lambda r: r["trade_date"])]
        assert len(path) == 60
        peak, worst = path[0], 0.0
        for x in path:
            peak = max(peak, x)
            worst = max(worst, (peak - x) / peak * 100)
        assert c.facts.observed_answer == round_half_up(worst, 2) + "%"


def test_drawdown_days_are_the_peak_and_trough_of_the_largest_fall(built):
    c, raw = _family(built, "drawdown:trough:60", asset_class="index")[0]
    bars = sorted(raw["c1"], key=lambda r: r["trade_date"])
    falls, peak, peaks = [], bars[0]["close"], []
    for r in bars:
        peak = max(peak, r["close"])
        falls.append((peak - r["close"]) / peak)
        peaks.append(peak)
    j = falls.index(max(falls))
    assert c.facts.observed_answer == f"{bars[j]['trade_date'][:4]}-{bars[j]['trade_date'][4:6]}-{bars[j]['trade_date'][6:]}"
    same = [p for p, _ in _family(built, "drawdown:peak:60", asset_class="index") if p.entity == c.entity]
    if same:
        i = next(i for i in range(j + 1) if bars[i]["close"] == peaks[j])
        assert same[0].facts.observed_answer.replace("-", "") == bars[i]["trade_date"]


def test_volume_day_is_the_change_on_the_session_of_the_highest_volume(built):
    c, raw = _family(built, "volume_day:60", asset_class="cn_equity")[0]
    top = max(raw["c1"], key=lambda r: r["vol"])
    assert len(raw["c1"]) == 60
    assert c.facts.observed_answer == round_half_up(top["pct_chg"], 2) + "%"


def test_best_month_reads_the_month_of_the_largest_gain(built):
    c, raw = _family(built, "best_month:12", asset_class="index")[0]
    months = raw["c1"]
    assert len(months) == 12 and all(r["trade_date"] < "20261101" for r in months)  # completed months only
    best = max(months, key=lambda r: r["pct_chg"])
    fmt = c.program.extract.format
    assert c.facts.observed_value == pytest.approx(best[c.program.extract.arg_field] * fmt.scale)


def test_a_screen_counts_and_ranks_the_latest_set_of_members(built):
    c, raw = _family(built, "screen:count_up")[0]
    tool = c.program.calls[0].tool
    if tool == "index_weight":
        latest = max(r["trade_date"] for r in raw["c1"])
        members = {r["con_code"] for r in raw["c1"] if r["trade_date"] == latest}
    else:
        members = {r["con_code"] for r in raw["c1"]}
    day = [r for r in raw["c2"] if r["ts_code"] in members]
    assert 0 < len(day) <= len(members)  # a suspended member has no record of the session
    assert c.facts.observed_answer == str(sum(r["pct_chg"] > 0 for r in day))
    f, raw = _family(built, "screen:largest_fall")[0]
    if f.program.calls[0].tool == "index_member":
        members = {r["con_code"] for r in raw["c1"]}
    else:
        latest = max(r["trade_date"] for r in raw["c1"])
        members = {r["con_code"] for r in raw["c1"] if r["trade_date"] == latest}
    assert f.facts.observed_answer == min((r for r in raw["c2"] if r["ts_code"] in members), key=lambda r: r["pct_chg"])["ts_code"]


def test_three_indices_names_the_one_that_rose_the_most(built):
    c, raw = _family(built, "three_indices:gain:20")[0]
    returns = {}
    for i, code in enumerate(c.program.extract.pick.labels):
        bars = sorted(raw[f"c{i + 1}"], key=lambda r: r["trade_date"])
        assert len(bars) == 21  # 20 sessions: 21 closes
        returns[code] = (bars[-1]["close"] - bars[0]["close"]) / bars[0]["close"]
    assert c.facts.observed_answer == max(returns, key=returns.get)


def test_every_investigation_has_lint_clean_texts_in_both_languages(built):
    catalog, _, _, candidates, _ = built
    questions, rejects = finalize(template_verbalize(candidates), catalog)
    assert not rejects, rejects[:3]
    by_qid = {c.qid: c for c in candidates}
    zh = set()
    for q in questions:
        c = by_qid[q.qid]
        assert check_text(q.question).passed and c.entity in q.question
        assert q.question == question_en(c)
        if q.question_zh:
            assert q.question_zh == question_zh(c) and check_text(q.question_zh).passed
            zh.add(family_of(c)[0])
    assert zh == INVESTIGATIONS


def test_the_pool_caps_each_investigation_under_its_own_key(built):
    _, _, _, candidates, _ = built
    keys = {cap_key(c) for c in candidates}
    assert {"index_weight>daily|screen:count", "index_daily|drawdown:max_drawdown",
            "daily>adj_factor|drawdown:drawdown_trough", "index_daily|pick:argmax>close"} <= keys
