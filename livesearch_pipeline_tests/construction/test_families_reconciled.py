"""The families of issue 39 (construction/families/reconciled.py) on the embedded market of
2026-12-04, each program's answer checked by hand from the raw tool responses: compound growth
over four or five annual reports of the company's own fiscal years (`cagr`), the A/H premium of a
dual-listed company (`ah_premium`), and a Hong Kong company's HKD market value against its latest
annual figure in the currency it reports in (`cross_currency`). Their texts pass the date gate and
the lint in both languages, and the construction of the pool drafts them from the listings."""

from __future__ import annotations

import datetime as dt

import anyio
import pytest

from livesearch_pipeline.construction.enumerate import _facts, _family_draft
from livesearch_pipeline.construction.families import family_drafts, family_of, question_en, question_zh
from livesearch_pipeline.construction.families.reconciled import _ah_drafts, _cagr_drafts, _cross_drafts
from livesearch_pipeline.construction.models import Candidate, EntityInfo
from livesearch_pipeline.construction.verbalize import finalize, template_verbalize
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.executor import execute_programs
from livesearch_pipeline.core.extract import round_half_up
from livesearch_pipeline.core.models import MatchRule
from livesearch_pipeline.core.program import validate_program
from livesearch_pipeline.core.qid import compute_qid, compute_signature
from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.server import DataService

CLOCK = dt.date(2026, 12, 4)
SPECS = collect_tool_specs()


class _Job:
    def __init__(self, qid: str, program) -> None:
        self.qid, self.program, self.match = qid, program, MatchRule(rule="approx", rel_tol=0.001)


def _entity(code: str, cls: str, name: str = "X", calendar: str = "XSHG") -> EntityInfo:
    return EntityInfo(code=code, name=name, asset_class=cls, visibility=5, calendar=calendar)


async def _run(drafts):
    service = DataService(specs=SPECS, config=ServiceConfig(clock=CLOCK), market=shared_market(DEFAULT_SEED))
    async with McpToolClient.in_process(service) as client:
        catalog = await client.list_tools()
        jobs = {compute_qid(d.program, d.entity.code): d for d in drafts(catalog, service)}
        answers, _ = await execute_programs([_Job(q, d.program) for q, d in jobs.items()], CLOCK, client)
        raw = {}
        for a in answers:
            tools = {call.id: call.tool for call in jobs[a.qid].program.calls}
            raw[a.qid] = {cid: (await client.call_tool(tools[cid], args))["items"] for cid, args in a.args.items()}
    out = []
    for a in answers:
        d = _family_draft(jobs[a.qid])
        validate_program(d.program, catalog)
        c = None
        if a.status == "ok":
            c = Candidate(qid=a.qid, signature=compute_signature(d.program, catalog), tier=d.tier,
                          refresh_class=d.refresh_class, asset_class=d.entity.asset_class, entity=d.entity.code,
                          entity_name=d.entity.name, visibility=d.entity.visibility, program=d.program,
                          facts=_facts(d, a))
        out.append((family_of(c)[1] if c else jobs[a.qid].family, a, c, raw[a.qid]))
    return catalog, out


def _annual(records, field):
    """{fiscal year end: the figure as most recently published} of the annual reports."""
    out: dict[str, tuple[str, float]] = {}
    for r in records:
        if r["end_type"] == "4" and (r["end_date"] not in out or r["update_flag"] > out[r["end_date"]][0]):
            out[r["end_date"]] = (r["update_flag"], r[field])
    return {k: v for k, (_, v) in sorted(out.items())}


def test_cagr_compounds_the_latest_annual_report_over_the_one_n_years_before():
    def drafts(catalog, service):
        records = service.call("income", {"ts_code": "600580.SH"})["items"]
        return _cagr_drafts(catalog, _entity("600580.SH", "cn_equity"), records)

    _, out = anyio.run(_run, drafts)
    assert {p for p, *_ in out} == {"3", "4"} and len(out) == 4
    for param, answer, c, raw in out:
        field = c.facts.field
        annual = _annual(raw["c1"], field)
        # Five annual reports on the web by 2026-12-04: FY2021..FY2025 (the 2026 interims come after).
        assert list(annual)[-1] == "20251231"
        n = int(param)
        base = annual[f"{2025 - n}1231"]
        last = annual["20251231"]
        if base <= 0 or last <= 0:
            assert answer.status == "empty" and "not meaningful" in answer.error
            continue
        assert answer.status == "ok"
        assert answer.answer == round_half_up(((last / base) ** (1 / n) - 1) * 100, 2) + "%"
        assert c.facts.observed_period == f"20251231 vs {2025 - n}1231"


def test_cagr_reads_a_march_fiscal_year_and_the_restated_figures():
    # 01949.HK closes its year on 31 March: its latest annual report is the year to 31 March 2026,
    # although its interim to 30 September 2026 came after it.
    def drafts(catalog, service):
        records = service.call("hk_income", {"ts_code": "01949.HK"})["items"]
        return _cagr_drafts(catalog, _entity("01949.HK", "hk_equity", calendar="XHKG"), records)

    _, out = anyio.run(_run, drafts)
    param, answer, c, raw = next(o for o in out if o[0] == "3" and o[2] and o[2].facts.field == "revenue")
    annual = _annual(raw["c1"], "revenue")
    assert list(annual)[-1] == "20260331" and max(r["end_date"] for r in raw["c1"]) > "20260331"
    assert answer.answer == round_half_up(((annual["20260331"] / annual["20230331"]) ** (1 / 3) - 1) * 100, 2) + "%"


def test_ah_premium_converts_the_h_close_into_cny_at_the_days_bids():
    def drafts(catalog, service):
        return _ah_drafts(catalog, _entity("001327.SZ", "cn_equity", "珩渺电力"),
                          _entity("02538.HK", "hk_equity", "珩渺电力", "XHKG"))

    _, out = anyio.run(_run, drafts)
    by_k = {p: (a, c, raw) for p, a, c, raw in out}
    answer, c, raw = by_k["0"]
    a_close = next(r["close"] for r in raw["c1"] if r["trade_date"] == "20261204")
    h_close = next(r["close"] for r in raw["c2"] if r["trade_date"] == "20261204")
    rate = {r["ts_code"]: r["bid_close"] for r in raw["c3"] if r["trade_date"] == "20261204"}
    premium = a_close / (h_close * rate["USDCNH.FXCM"] / rate["USDHKD.FXCM"]) - 1
    assert answer.answer == round_half_up(premium * 100, 2) + "%" == "16.49%"  # docs/dataservice.md's example
    # Five Shanghai sessions back: 2026-11-27; each price and rate the latest on or before it.
    answer5, _, raw5 = by_k["5"]
    day = "20261127"
    a5 = next(r["close"] for r in raw5["c1"] if r["trade_date"] == day)
    h5 = max((r for r in raw5["c2"] if r["trade_date"] <= day), key=lambda r: r["trade_date"])["close"]
    fx5 = {r["ts_code"]: r["bid_close"] for r in raw5["c3"]
           if r["trade_date"] == max(x["trade_date"] for x in raw5["c3"] if x["trade_date"] <= day)}
    assert answer5.answer == round_half_up((a5 / (h5 * fx5["USDCNH.FXCM"] / fx5["USDHKD.FXCM"]) - 1) * 100, 2) + "%"
    assert "20" in by_k


def test_cross_currency_values_a_cny_reporter_trading_in_hkd_in_cny():
    def drafts(catalog, service):
        return _cross_drafts(catalog, _entity("00905.HK", "hk_equity", "旻砚置业控股", "XHKG"), "CNY")

    _, out = anyio.run(_run, drafts)
    by_param = {p: (a, c, raw) for p, a, c, raw in out}
    answer, c, raw = by_param["ps"]
    bar = max(raw["c1"], key=lambda r: r["trade_date"])
    rate = {r["ts_code"]: r["bid_close"] for r in raw["c2"] if r["trade_date"] == bar["trade_date"]}
    mv_cny = bar["total_mv"] * rate["USDCNH.FXCM"] / rate["USDHKD.FXCM"]
    annual = [r for r in raw["c3"] if r["end_type"] == "4"]
    latest = max(annual, key=lambda r: r["end_date"])
    assert latest["end_date"] == "20251231" and latest["currency"] == "CNY"
    assert answer.answer == round_half_up(mv_cny / latest["revenue"], 2)
    pe, _, _ = by_param["pe"]
    assert pe.answer == round_half_up(mv_cny / latest["n_income_attr_p"], 2)


def test_usd_reporters_are_converted_at_the_usd_hkd_bid_alone():
    def drafts(catalog, service):
        return _cross_drafts(catalog, _entity("03703.HK", "hk_equity", "Y", "XHKG"), "USD")

    _, out = anyio.run(_run, drafts)
    answer, c, raw = next((a, c, raw) for p, a, c, raw in out if p == "ps")
    bar = max(raw["c1"], key=lambda r: r["trade_date"])
    rate = {r["ts_code"]: r["bid_close"] for r in raw["c2"] if r["trade_date"] == bar["trade_date"]}
    latest = max((r for r in raw["c3"] if r["end_type"] == "4"), key=lambda r: r["end_date"])
    assert latest["currency"] == "USD"
    assert answer.answer == round_half_up(bar["total_mv"] / rate["USDHKD.FXCM"] / latest["revenue"], 2)
    assert "USD/HKD" in question_en(c) and "USD/CNH" not in question_en(c)


@pytest.fixture(scope="module")
def drafted():
    """The families as construction drafts them: from every entity and the listings' records."""
    def drafts(catalog, service):
        basics = {r["ts_code"]: r for tool in ("stock_basic", "hk_basic") for r in service.call(tool, {})["items"]}
        market = {}
        for code, r in basics.items():
            cls = "hk_equity" if code.endswith(".HK") else "cn_equity"
            market[code] = EntityInfo(code=code, name=r["name"], asset_class=cls, visibility=len(market) % 11,
                                      calendar="XHKG" if cls == "hk_equity" else "XSHG")
        covered = {"income": [market["600580.SH"]], "hk_income": [market["01949.HK"]]}
        explored = {("income", "600580.SH"): service.call("income", {"ts_code": "600580.SH"})["items"],
                    ("hk_income", "01949.HK"): service.call("hk_income", {"ts_code": "01949.HK"})["items"]}
        out = family_drafts(catalog, covered, explored, lambda t, e: {}, market=market, basics=basics)
        return [d for d in out if d.family.split(":")[0] in ("cagr", "ah_premium", "cross_currency")]

    return anyio.run(_run, drafts)


def test_construction_drafts_every_pair_and_a_spread_of_reporters(drafted):
    _, out = drafted
    families = {}
    for _, answer, c, _ in out:
        if c is not None:
            families.setdefault(family_of(c)[0], set()).add(c.entity)
    assert len(families["ah_premium"]) == 14  # every A/H pair of the market
    assert all(code.endswith(".HK") for code in families["cross_currency"]) and len(families["cross_currency"]) >= 15
    # Never the H share of an A+H company (its market value is the H class's, its profit the company's).
    assert not families["cross_currency"] & {"02538.HK", "01529.HK", "02172.HK", "02821.HK", "02892.HK"}
    assert families["cagr"] == {"600580.SH", "01949.HK"}


def test_the_families_texts_pass_the_gate_and_the_lint_in_both_languages(drafted):
    catalog, out = drafted
    candidates = [c for _, _, c, _ in out if c is not None]
    questions, rejects = finalize(template_verbalize(candidates), catalog)
    assert not rejects, rejects[:3]
    assert {family_of(c)[0] for c in candidates} == {"cagr", "ah_premium", "cross_currency"}
    for q in questions:
        assert check_text(q.question).passed and q.question_zh and check_text(q.question_zh).passed
    c = next(c for c in candidates if family_of(c)[0] == "ah_premium")
    assert "USD/CNH and USD/HKD" in question_en(c) and "a discount being negative" in question_en(c)
    assert "美元兑离岸人民币" in question_zh(c) and "折价以负数表示" in question_zh(c)
    c = next(c for c in candidates if family_of(c)[0] == "cagr")
    assert "restated where the company restated it" in question_en(c) and "重述" in question_zh(c)


def test_peer_best_picks_the_member_with_the_highest_annual_figure_of_the_last_year():
    from livesearch_pipeline.construction.families.peers import peer_drafts

    banks = ["601523.SH", "603209.SH", "603369.SH", "603488.SH", "603729.SH"]  # 801010.SI's members

    def drafts(catalog, service):
        index = EntityInfo(code="801010.SI", name="银行行业指数", asset_class="index", visibility=5, calendar="XSHG")
        return peer_drafts(catalog, index, banks)

    catalog, out = anyio.run(_run, drafts)
    assert {p for p, *_ in out} == {"margin", "roe", "growth"}
    for param, answer, c, raw in out:
        field = c.facts.field
        figures = {}
        for i, code in enumerate(banks):
            # Each member's FY2025 annual figure as most recently published (restated where restated).
            versions = [r for r in raw[f"c{i + 1}"] if r["end_date"] == "20251231"]
            figures[code] = max(versions, key=lambda r: r["update_flag"])[field]
        best = max(figures.values())
        assert list(figures.values()).count(best) == 1
        assert answer.status == "ok" and answer.answer == next(k for k, v in figures.items() if v == best)
        text = question_en(c)
        assert all(code in text for code in banks) and "Answer with its stock code" in text
        assert "银行行业指数（801010.SI）的成分股" in question_zh(c)
    questions, rejects = finalize(template_verbalize([c for *_, c, _ in out]), catalog)
    assert not rejects, rejects[:3]
    assert all(check_text(q.question).passed and check_text(q.question_zh).passed for q in questions)


def test_growth_first_compares_with_the_comparative_as_first_reported():
    from livesearch_pipeline.construction.families.reconciled import _growth_first_drafts
    from livesearch_pipeline.construction.families.reports import _statement_drafts
    from livesearch_pipeline.construction.sampling import window_dates

    # 603779.SH's Q3 2026 report restated Q3 2025 (docs/dataservice.md): revenue growth −9.09% on the
    # restated comparative (`growth_period`), −12.17% on the one first reported (`growth_first`).
    def drafts(catalog, service):
        tool = catalog.get("income")
        entity = _entity("603779.SH", "cn_equity")
        records = service.call("income", {"ts_code": "603779.SH"})["items"]
        lookback = window_dates(tool, "XSHG", sessions=10)
        restated = [d for d in _statement_drafts(catalog, entity, records, lookback)
                    if d.family == "growth_period" and d.field.name == "revenue"]
        return restated + _growth_first_drafts(catalog, entity, records, lookback)

    _, out = anyio.run(_run, drafts)
    answers = {(c.facts.anchor, c.facts.field): a.answer for _, a, c, _ in out}
    assert answers[("family:growth_period", "revenue")] == "-9.09%"
    assert answers[("family:growth_first", "revenue")] == "-12.17%"
    _, _, c, raw = next(o for o in out if o[2].facts.anchor == "family:growth_first" and o[2].facts.field == "revenue")
    first = next(r for r in raw["c1"] if r["end_date"] == "20250930" and r["update_flag"] == "0")
    latest = next(r for r in raw["c1"] if r["end_date"] == "20260930")
    assert answers[("family:growth_first", "revenue")] == round_half_up(
        (latest["revenue"] - first["revenue"]) / first["revenue"] * 100, 2) + "%"
    assert "as first reported" in question_en(c) and "首次披露" in question_zh(c)


def test_fiscal_growth_reads_the_companys_own_fiscal_years():
    from livesearch_pipeline.construction.families.reconciled import _fiscal_drafts

    # FNWN's fiscal year ends on 30 June: fiscal 2026 (to 30 June 2026) against fiscal 2025.
    def drafts(catalog, service):
        return _fiscal_drafts(catalog, _entity("FNWN", "us_equity", calendar="XNYS"))

    _, out = anyio.run(_run, drafts)
    _, answer, c, raw = next(o for o in out if o[2] and o[2].facts.field == "revenue")
    annual = _annual(raw["c1"], "revenue")
    assert list(annual)[-2:] == ["20250630", "20260630"]
    assert answer.answer == round_half_up((annual["20260630"] - annual["20250630"]) / annual["20250630"] * 100, 2) + "%"
    assert "whose fiscal year is not the calendar year" in question_en(c)
    assert check_text(question_en(c)).passed


def test_cross_currency_leaves_out_the_h_share_of_an_a_h_company():
    from livesearch_pipeline.construction.families.base import DraftInputs
    from livesearch_pipeline.construction.families.reconciled import _draft_cross

    service = DataService(specs=SPECS, config=ServiceConfig(clock=CLOCK), market=shared_market(DEFAULT_SEED))
    basics = {code: service.call("hk_basic", {"ts_code": code})["items"][0] for code in ("02892.HK", "00905.HK")}
    assert basics["02892.HK"]["a_code"] and basics["02892.HK"]["report_curr"] == "CNY"
    market = {code: _entity(code, "hk_equity", calendar="XHKG") for code in basics}
    inputs = DraftInputs(service.catalog, {}, {}, lambda t, e: {}, market=market, basics=basics)
    _draft_cross(inputs)
    assert {d.entity.code for d in inputs.out} == {"00905.HK"}
