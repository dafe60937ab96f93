"""The multi-step question families (construction/families/, issue 20) on the embedded market.

Each family is drafted from explored responses as enumeration does, validated against the
catalog, executed by the core executor at a fixed clock, and its answer checked by hand from
the raw tool responses; its texts pass the date gate and the lint in English and (for the
Chinese market) Chinese, the LLM payload states its chain, and the dynamics replay keeps it as
a T3 question.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import defaultdict

import anyio
import pytest

from livesearch_pipeline.construction.dynamics import DynamicsPolicy, profile_candidates
from livesearch_pipeline.construction.enumerate import (
    AGGREGATE_WINDOWS,
    LATEST_WINDOW,
    _calendar,
    _facts,
    _family_draft,
)
from livesearch_pipeline.construction.families import (
    INVESTIGATIONS,
    compare_family_drafts,
    family_drafts,
    family_of,
    investigation_of,
    is_multi_step,
    question_en,
    question_zh,
    shape_of,
    ticker_of,
    unique_handles,
)
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.construction.pool import PoolPolicy, cap_key, select_pool, signature_cap
from livesearch_pipeline.construction.sampling import counts_sessions, load_entities, window_dates
from livesearch_pipeline.construction.verbalize import (
    finalize,
    has_chinese_text,
    template_verbalize,
    verbalizer_user_message,
)
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.executor import execute_programs
from livesearch_pipeline.core.extract import round_half_up
from livesearch_pipeline.core.models import MatchRule
from livesearch_pipeline.core.program import validate_program
from livesearch_pipeline.core.qid import compute_qid, compute_signature
from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.point_in_time import EmbeddedPointInTime
from livesearch_pipeline.dataservice.server import DataService

CLOCK = dt.date(2026, 11, 27)
SPECS = collect_tool_specs()
FAMILY_TOOLS = ("income", "daily", "hk_income", "hk_daily", "hk_daily_adj", "us_income", "us_daily", "us_daily_adj",
                "fund_portfolio", "fund_nav", "fund_daily", "index_weight", "index_daily")
PER_CLASS = {"cn_equity": 8, "hk_equity": 3, "us_equity": 3, "fund": 12, "index": 6}
ALL_FAMILIES = {"growth_period", "growth_year", "margin", "payout", "exdate_close", "since_exdate", "since_report",
                "top_holding", "top_constituent", "adj_return", "fx_convert", "price_to_nav", "compare",
                "holding_industry", "named_high", "cagr", "growth_first"}


SINGLE_CALL_FAMILIES = {"growth_period", "growth_year", "margin", "cagr", "growth_first"}


class _Job:
    def __init__(self, qid: str, program) -> None:
        self.qid, self.program, self.match = qid, program, MatchRule(rule="approx", rel_tol=0.001)


def _service() -> DataService:
    return DataService(specs=SPECS, config=ServiceConfig(clock=CLOCK), market=shared_market(DEFAULT_SEED))


async def _build():
    async with McpToolClient.in_process(_service()) as client:
        catalog = await client.list_tools()
        entities = await load_entities(client, catalog)
        # Listed funds (ETFs) first: only they have a market price to compare with the NAV.
        listed = sorted(entities["fund"], key=lambda e: e.code.endswith(".OF"))
        covered = {cls: (listed if cls == "fund" else entities[cls])[:n] for cls, n in PER_CLASS.items()}
        explored: dict[tuple[str, str], list] = {}
        by_tool = {}
        for name in FAMILY_TOOLS:
            tool = catalog.get(name)
            group = [e for cls in tool.asset_classes for e in covered.get(cls, ())]
            by_tool[name] = group
            for e in group:
                sessions = max(AGGREGATE_WINDOWS) if counts_sessions(tool) else LATEST_WINDOW
                args = {tool.entity_param: e.code}
                from livesearch_pipeline.core.dates import resolve_date_spec

                for pname, spec in window_dates(tool, _calendar(tool, e), sessions=sessions).items():
                    args[pname] = resolve_date_spec(spec, CLOCK)
                explored[(name, e.code)] = (await client.call_tool(name, args))["items"]
        handles = unique_handles([e for group in entities.values() for e in group])
        drafts = family_drafts(catalog, by_tool, explored,
                               lambda t, e: window_dates(t, _calendar(t, e), sessions=LATEST_WINDOW), handles=handles)
        for cls, tool in (("cn_equity", "daily"), ("index", "index_daily")):
            group = covered[cls]
            drafts += compare_family_drafts(catalog, [(group[0], group[1])])
        jobs = {compute_qid(d.program, d.entity.code): d for d in drafts}
        answers, _ = await execute_programs([_Job(q, d.program) for q, d in jobs.items()], CLOCK, client)

        async def call(tool: str, args: dict) -> list[dict]:
            return (await client.call_tool(tool, args))["items"]

        raw = {}
        for a in answers:
            if a.status == "ok":
                raw[a.qid] = {cid: await call(jobs[a.qid].program.calls[i].tool, args)
                              for i, (cid, args) in enumerate(a.args.items())}
    candidates = []
    for a in answers:
        if a.status != "ok":
            continue
        d = _family_draft(jobs[a.qid])
        candidates.append(Candidate(
            qid=a.qid, signature=compute_signature(d.program, catalog), tier=d.tier, refresh_class=d.refresh_class,
            asset_class=d.entity.asset_class, entity=d.entity.code, entity_name=d.entity.name,
            visibility=d.entity.visibility, program=d.program, facts=_facts(d, a)))
    return catalog, drafts, answers, candidates, raw


@pytest.fixture(scope="module")
def built():
    return anyio.run(_build)


def _by_family(candidates) -> dict[str, list[Candidate]]:
    out = defaultdict(list)
    for c in candidates:
        out[family_of(c)[0]].append(c)
    return out


def test_every_family_is_drafted_valid_multi_step_and_answers(built):
    catalog, drafts, answers, candidates, _ = built
    for d in drafts:
        validate_program(d.program, catalog)
        # The T3 investigations (issue 29; test_investigations.py) include single-call paths.
        assert is_multi_step(d.program) or investigation_of(d.program) is not None
    assert set(_by_family(candidates)) - INVESTIGATIONS == ALL_FAMILIES
    ok = sum(a.status == "ok" for a in answers)
    assert ok >= 0.6 * len(answers)  # funds without an ETF listing have no price-to-NAV, etc.
    shapes = {shape_of(c.program) for c in candidates}
    assert len(shapes) >= 20


def _one(built, family: str, **facts) -> tuple[Candidate, dict]:
    _, _, _, candidates, raw = built
    for c in _by_family(candidates)[family]:
        if all(getattr(c.facts if hasattr(c.facts, k) else c, k) == v for k, v in facts.items()):
            return c, raw[c.qid]
    raise AssertionError(f"no {family} candidate with {facts}")


def _latest(records, key, **where):
    records = [r for r in records if all(r.get(k) == v for k, v in where.items())]
    top = max(r[key] for r in records)
    (record,) = [r for r in records if r[key] == top]
    return record


def _pct(a: float, b: float) -> str:
    return round_half_up((a - b) / abs(b) * 100, 2) + "%"


def test_growth_is_the_latest_period_against_the_same_period_a_year_earlier(built):
    c, raw = _one(built, "growth_period", field="revenue")
    records = raw["c1"]
    latest = _latest(records, "end_date")
    year_ago = str(int(latest["end_date"][:4]) - 1) + latest["end_date"][4:]
    (before,) = [r for r in records if r["end_date"] == year_ago]
    assert c.facts.observed_answer == _pct(latest["revenue"], before["revenue"])
    assert c.facts.observed_period == f"{latest['end_date']} vs {year_ago}"


def test_annual_growth_reads_the_last_two_annual_reports(built):
    c, raw = _one(built, "growth_year")
    annual = {r["end_date"]: r for r in raw["c1"] if r.get("end_type") == "4"}
    field = c.facts.field
    assert c.facts.observed_answer == _pct(annual["20251231"][field], annual["20241231"][field])


def test_margin_divides_two_fields_of_the_latest_report(built):
    c, raw = _one(built, "margin", anchor="family:margin:net_margin")
    latest = _latest(raw["c1"], "end_date")
    assert c.facts.observed_answer == round_half_up(latest["n_income"] / latest["revenue"] * 100, 2) + "%"


def test_top_holding_resolves_the_largest_holding_then_reads_its_close(built):
    c, raw = _one(built, "top_holding", field="close", tool="daily")
    newest = max(r["ann_date"] for r in raw["c1"])
    holdings = [r for r in raw["c1"] if r["ann_date"] == newest]
    top = max(holdings, key=lambda r: r["mkv"])["symbol"]
    assert c.program.calls[1].refs["ts_code"].arg_field == "symbol"
    assert {r["ts_code"] for r in raw["c2"]} == {top}
    assert c.facts.observed_answer == round_half_up(_latest(raw["c2"], "trade_date")["close"], 2) + " CNY"


def test_holding_industry_chains_the_top_holding_its_industry_index_and_that_index_return(built):
    c, raw = _one(built, "holding_industry", anchor="family:holding_industry:20")
    newest = max(r["ann_date"] for r in raw["c1"])
    top = max((r for r in raw["c1"] if r["ann_date"] == newest), key=lambda r: r["mkv"])["symbol"]
    (member,) = raw["c2"]  # index_member by a stock's code: its one industry index (one_series_by)
    assert member["con_code"] == top and member["index_code"].endswith(".SI")
    bars = sorted(raw["c3"], key=lambda r: r["trade_date"])
    assert {r["ts_code"] for r in bars} == {member["index_code"]}
    assert len(bars) == 21  # 20 sessions: from the close 20 sessions back, 21 closes
    assert c.facts.observed_answer == _pct(bars[-1]["close"], bars[0]["close"])
    assert cap_key(c) == "fund_portfolio>index_member>index_daily"
    text, text_zh = question_en(c), question_zh(c)
    assert "industry index that stock belongs to" in text and "from the close 20 trading days before" in text
    assert "所属行业指数" in text_zh and "之前第20个交易日收盘" in text_zh


def test_unique_handles_name_a_stock_alone_only_where_one_entity_answers_to_it():
    def e(code, name, cls="cn_equity"):
        return EntityInfo(code=code, name=name, asset_class=cls, visibility=1)

    entities = [e("600001.SH", "恒宇电气"), e("600002.SH", "兰亭食品"), e("000001.SZ", "兰亭食品"),
                e("000001.SH", "上证指数", "index"), e("00721.HK", "Harbor Lane", "hk_equity"),
                e("AAPX.O", "Harbor Lane", "us_equity"), e("600003.SH", "600001")]
    assert unique_handles(entities) == {
        "600001.SH": "name",   # one entity answers to 恒宇电气 (another's name is its ticker: not its name)
        "600002.SH": "ticker",  # two stocks share 兰亭食品; 600002 is one stock's ticker alone
        # 000001.SZ: its name is shared and its ticker 000001 is also the index 000001.SH's: neither
        "00721.HK": "ticker", "AAPX.O": "ticker",  # the name is shared across markets
        "600003.SH": "ticker",  # its name is another stock's ticker
    }


def test_named_high_names_the_stock_alone_and_reads_the_highest_close_since_the_report(built):
    c, raw = _one(built, "named_high", asset_class="cn_equity")
    announced = _latest(raw["c1"], "end_date")["ann_date"]
    closes = [r["close"] for r in raw["c2"]]
    assert min(r["trade_date"] for r in raw["c2"]) >= announced and len(closes) >= 1
    assert c.facts.observed_answer == round_half_up(max(closes), 2) + " CNY"
    handle = c.entity_name if c.facts.anchor.endswith(":name") else ticker_of(c.entity)
    assert c.entity not in question_en(c) and handle in question_en(c) and question_zh(c).startswith(handle)


def test_top_constituent_resolves_the_heaviest_weight_of_the_latest_rebalance(built):
    c, raw = _one(built, "top_constituent", field="close", tool="daily")
    newest = max(r["trade_date"] for r in raw["c1"])
    top = max((r for r in raw["c1"] if r["trade_date"] == newest), key=lambda r: r["weight"])["con_code"]
    assert {r["ts_code"] for r in raw["c2"]} == {top}


def test_adjusted_return_multiplies_closes_by_the_adjustment_factor(built):
    c, raw = _one(built, "adj_return", asset_class="cn_equity", anchor="family:adj_return:60")
    factor = {r["trade_date"]: r["adj_factor"] for r in raw["c2"]}
    bars = sorted(raw["c1"], key=lambda r: r["trade_date"])
    first, last = (bars[0]["close"] * factor[bars[0]["trade_date"]], bars[-1]["close"] * factor[bars[-1]["trade_date"]])
    assert c.facts.observed_answer == _pct(last, first)
    assert len(bars) == 61  # 60 sessions: from the close 60 sessions back, 61 closes (issue 28)


def test_hong_kong_market_value_is_converted_at_two_fx_rates(built):
    c, raw = _one(built, "fx_convert", field="total_mv", asset_class="hk_equity")
    bar = _latest(raw["c1"], "trade_date")
    rate = {r["ts_code"]: r["bid_close"] for r in raw["c2"]}
    assert {r["trade_date"] for r in raw["c2"]} == {bar["trade_date"]}
    value = bar["total_mv"] * rate["USDCNH.FXCM"] / rate["USDHKD.FXCM"]
    fmt = c.program.extract.format
    assert fmt.unit.endswith("CNY")
    assert c.facts.observed_answer == f"{round_half_up(value * fmt.scale, fmt.decimals)} {fmt.unit}"


def test_price_to_nav_compares_the_close_with_the_nav_of_the_same_day(built):
    c, raw = _one(built, "price_to_nav")
    nav = _latest(raw["c1"], "nav_date")
    (bar,) = raw["c2"]
    assert bar["trade_date"] == nav["nav_date"]
    assert c.facts.observed_answer == _pct(bar["close"], nav["unit_nav"])


def test_compare_is_the_difference_of_two_window_returns(built):
    c, raw = _one(built, "compare", anchor="family:compare:20", tool="daily")
    returns = []
    for cid in ("c1", "c2"):
        bars = sorted(raw[cid], key=lambda r: r["trade_date"])
        returns.append((bars[-1]["close"] - bars[0]["close"]) / abs(bars[0]["close"]) * 100)
    # A gap between two returns is stated in percentage points, as an analyst writes it.
    assert c.facts.observed_answer == round_half_up(returns[0] - returns[1], 2) + " percentage points"
    assert c.facts.other_entity and c.facts.other_entity != c.entity
    q = question_en(c)
    # The window convention is stated (from the close k sessions earlier), no gloss in parentheses.
    span = c.program.calls[0].dates["start_date"].sessions_back
    # A signed difference, the first minus the second, saying what a negative value means (issue 40).
    assert q.startswith("What was the return of ") and " minus the return of " in q and "beat" not in q
    assert f"from the close {span} trading days before the most recent one to the most recent close, in " in q
    assert ", in percentage points to 2 decimals? A negative value means the first returned less." in q
    assert "percent to" not in q
    assert re.findall(r"\(([^)]*)\)", q) == [c.entity, c.facts.other_entity]
    zh = question_zh(c)
    assert zh.startswith(f"自最近一个交易日之前第{span}个交易日收盘至最近一个交易日收盘，")
    assert "的涨跌幅减去" in zh and "是多少个百分点？保留2位小数。为负表示前者涨幅较低。" in zh
    assert "高多少" not in zh and "以百分比表示" not in zh and "前者减后者" not in zh


def test_event_anchored_values_start_from_the_latest_implemented_dividend_or_report(built):
    c, raw = _one(built, "exdate_close")
    done = sorted((r for r in raw["c1"] if r["div_proc"] == "实施"), key=lambda r: r["ann_date"])
    assert raw["c2"][0]["trade_date"] == done[-1]["ex_date"]
    assert c.facts.observed_answer == round_half_up(raw["c2"][0]["close"], 2) + " CNY"
    c, raw = _one(built, "since_report", asset_class="cn_equity")
    announced = _latest(raw["c1"], "end_date")["ann_date"]
    bars = sorted(raw["c2"], key=lambda r: r["trade_date"])
    assert bars[0]["trade_date"] >= announced
    assert c.facts.observed_answer == _pct(bars[-1]["close"], bars[0]["close"])
    c, raw = _one(built, "payout")
    done = sorted((r for r in raw["c1"] if r["div_proc"] == "实施"), key=lambda r: r["ann_date"])
    eps = _latest(raw["c2"], "end_date")
    assert eps["end_date"] == done[-1]["end_date"]
    assert c.facts.observed_answer == round_half_up(done[-1]["cash_div_tax"] / eps["eps"] * 100, 2) + "%"


def test_every_family_has_lint_clean_texts_in_english_and_chinese(built):
    catalog, _, _, candidates, _ = built
    questions, rejects = finalize(template_verbalize(candidates), catalog)
    assert not rejects, rejects[:3]
    by_qid = {c.qid: c for c in candidates}
    zh_families = set()
    for q in questions:
        c = by_qid[q.qid]
        if family_of(c)[0] in INVESTIGATIONS:
            continue  # their texts: test_investigations.py
        named = family_of(c)[0] == "named_high"  # the stock by its short name or ticker alone
        assert check_text(q.question).passed and (c.entity not in q.question if named else c.entity in q.question)
        assert q.question.index(c.entity_name if not named or "name" in c.facts.anchor else ticker_of(c.entity)) < 80  # the entity comes early, the chain after it
        if has_chinese_text(c):
            assert (q.question_zh and q.question_zh.startswith(c.entity_name) or "最近" in q.question_zh[:4]
                    or named and q.question_zh.startswith(ticker_of(c.entity)))
            zh_families.add(family_of(c)[0])
        else:
            assert q.question_zh is None
    # Every family that has Chinese-market instruments gets a Chinese text.
    assert ALL_FAMILIES - {"fx_convert"} <= zh_families


def test_the_llm_payload_states_the_chain(built):
    _, _, _, candidates, _ = built
    c = _by_family(candidates)["top_holding"][0]
    payload = json.loads(verbalizer_user_message(c))
    assert payload["anchor"] == "family:top_holding"
    assert payload["chain"][0].startswith("c1: fund_portfolio")
    assert "ts_code from c1 (argmax symbol)" in payload["chain"][1]


def test_families_replay_in_the_dynamics_profile_as_t3(built):
    catalog, _, _, candidates, _ = built
    picked = [cs[0] for name, cs in _by_family(candidates).items() if name in ALL_FAMILIES]
    policy = DynamicsPolicy(days=3, workers=1)
    result = anyio.run(lambda: profile_candidates(picked, catalog, CLOCK, policy=policy,
                                                  open_at=EmbeddedPointInTime(DEFAULT_SEED, SPECS)))
    assert len(result.rows) == len(picked)
    for row in result.rows:
        assert row.answers[-1] is not None
    for c in result.candidates:
        family = family_of(c)[0]
        reason = c.dynamics.tier_reason
        if family in SINGLE_CALL_FAMILIES:
            # Records of one response combined (growth on the year before, a margin): one call's
            # arithmetic, T1 or T2 as measured, never "multi-call derivation (1 calls)" (issue 28).
            assert c.tier in ("T1", "T2") and "one call's arithmetic (" in reason, (family, reason)
        else:
            assert c.tier == "T3", (family, reason)
            assert reason.startswith(("T3 complex historical investigation: two dependent calls: ",
                                      "T3 complex historical investigation: three dependent calls: ",
                                      "T3 complex historical investigation: cross-call arithmetic: ")), reason
    reasons = {family_of(c)[0]: c.dynamics.tier_reason for c in result.candidates}
    assert re.fullmatch(r"T3 complex historical investigation: two dependent calls: fund_portfolio → daily(_basic)? "
                        r"\(ts_code from the argmax symbol\)", reasons["top_holding"]), reasons["top_holding"]
    assert re.search(r"cross-call arithmetic: [a-z_]+ close times [a-z_]+ adj_factor, then pct_change$",
                     reasons["adj_return"]), reasons["adj_return"]
    assert reasons["holding_industry"] == (
        "T3 complex historical investigation: three dependent calls: fund_portfolio → index_member (ts_code from the "
        "argmax symbol); index_member → index_daily (ts_code from the latest index_code)"), reasons["holding_industry"]
    kept = {family_of(c)[0] for c in result.candidates}
    assert {"top_holding", "adj_return", "compare", "growth_period"} <= kept


def test_the_pool_keeps_family_questions_under_their_chain(built):
    catalog, _, _, candidates, _ = built
    questions, _ = finalize(template_verbalize(candidates), catalog)
    policy = PoolPolicy()
    selection = select_pool(questions, {}, policy)
    assert len(selection.questions) >= 0.8 * len(questions)
    counts = defaultdict(int)
    for q in selection.questions:
        counts[q.signature] += 1
        assert counts[q.signature] <= signature_cap(q, policy) == policy.max_per_chain_signature
    assert {cap_key(q) for q in selection.questions} >= {"fund_portfolio>daily", "income|pct_difference",
                                                         "hk_daily_adj>fx_daily|product,ratio"}
