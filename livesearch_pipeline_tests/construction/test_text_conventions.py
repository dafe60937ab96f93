"""Texts that presuppose nothing and conventions stated (issue 40, DESIGN §4.8 "Conventions"):
a difference asked signed in both languages, growth asked as growth, the calendar of a market-wide
series and the series itself named, and each convention a professional could read two ways stated
in the text — checked against what the embedded data service actually does."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from livesearch_pipeline.construction.conventions import (
    SERIES_NAMES,
    SUSPENSION_EN,
    SUSPENSION_ZH,
    counts_stock_window,
)
from livesearch_pipeline.construction.enumerate import _facts, _family_draft
from livesearch_pipeline.construction.families import FamilyDraft, compare_family_drafts
from livesearch_pipeline.construction.families.investigations import _best_month_drafts, _drawdown_drafts
from livesearch_pipeline.construction.families.reports import _since_report_drafts, _statement_drafts
from livesearch_pipeline.construction.formats import value_format
from livesearch_pipeline.construction.lint import LintContext, lint_question, lint_text, presupposed_sign
from livesearch_pipeline.construction.models import Candidate, CandidateFacts, EntityInfo
from livesearch_pipeline.construction.sampling import is_series_tool, window_dates
from livesearch_pipeline.construction.verbalize import (
    lint_context,
    template_question_en,
    template_question_zh,
)
from livesearch_pipeline.core.calendars import session_dates
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.lexicon import load_lexicon
from livesearch_pipeline.core.models import Call, Extractor, Format, Program, Selection
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline.dataservice.catalog import ServiceConfig, build_catalog, collect_tool_specs
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline_tests.construction.builders import candidate

CLOCK = dt.date(2026, 11, 27)
A = EntityInfo(code="600123.SH", name="恒宇电气", asset_class="cn_equity", visibility=5, calendar="XSHG")
B = EntityInfo(code="002456.SZ", name="兰亭食品", asset_class="cn_equity", visibility=3, calendar="XSHG")
INDEX = EntityInfo(code="000300.SH", name="沪深300", asset_class="index", visibility=9, calendar="XSHG")
PCT = Format(kind="percent", decimals=2, unit="%")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return build_catalog(collect_tool_specs(), ServiceConfig(clock=CLOCK))


def _service() -> DataService:
    return DataService(config=ServiceConfig(clock=CLOCK), market=shared_market(DEFAULT_SEED))


def a_share() -> str:
    """A listed A-share of the embedded market (the first by code)."""
    return sorted(e.code for e in shared_market(DEFAULT_SEED).universe.of_class("cn_equity")
                  if e.list_date.year < 2020)[0]


def as_candidate(d: FamilyDraft, value: float | str, answer: str) -> Candidate:
    """A family draft as the candidate enumeration makes of it, with the day's answer given."""
    draft = _family_draft(d)
    executed = SimpleNamespace(value=value, answer=answer, observed_period=None)
    return Candidate(qid=compute_qid(d.program, d.entity.code), signature="sig", tier="T3", refresh_class="daily",
                     asset_class=d.entity.asset_class, entity=d.entity.code, entity_name=d.entity.name,
                     visibility=d.entity.visibility, program=d.program, facts=_facts(draft, executed))


def rules(en: str, zh: str | None, ctx: LintContext = LintContext()) -> set[str]:
    return {f.rule for f in lint_question(en, zh, ctx)}


# --------------------------------------------------------------------------- signs


def test_a_difference_of_two_returns_is_asked_signed_in_both_languages_for_a_negative_gold(catalog):
    (draft, *_) = compare_family_drafts(catalog, [(A, B)])
    c = as_candidate(draft, -1.19, "-1.19 percentage points")
    en, zh = template_question_en(c), template_question_zh(c)
    assert en.startswith("What was the return of 恒宇电气 (600123.SH) minus the return of 兰亭食品 (002456.SZ) from")
    assert "A negative value means the first returned less." in en and "beat" not in en
    assert "恒宇电气（600123.SH）的涨跌幅减去兰亭食品（002456.SZ）的涨跌幅是多少个百分点？" in zh
    assert "为负表示前者涨幅较低" in zh and "高多少" not in zh
    assert presupposed_sign(en, "en") is None and presupposed_sign(zh, "zh") is None
    assert lint_question(en, zh, lint_context(c, catalog)) == []


def test_a_difference_of_one_field_of_two_instruments_is_first_minus_second():
    c = candidate(observed_value=-6.35)
    c = c.model_copy(update={"facts": c.facts.model_copy(update={"other_entity": "002456.SZ",
                                                                  "other_entity_name": "兰亭食品"})})
    en, zh = template_question_en(c), template_question_zh(c)
    assert " minus that of 兰亭食品 (002456.SZ) " in en and en.endswith("A negative value means the first was lower.")
    assert "减去兰亭食品（002456.SZ）的收盘价" in zh and zh.endswith("为负表示前者较低。")
    assert presupposed_sign(en, "en") is None and presupposed_sign(zh, "zh") is None


def test_growth_is_asked_as_growth_which_may_be_negative(catalog):
    records = [{"end_date": "20260930", "revenue": 10.0, "n_income": 1.0, "operate_profit": 1.0,
                "n_income_attr_p": 1.0, "rd_exp": 0.5}]
    drafts = _statement_drafts(catalog, A, records, window_dates(catalog.get("income"), "XSHG", sessions=10))
    growth = as_candidate(next(d for d in drafts if d.family == "growth_period" and d.field.name == "revenue"),
                          -13.57, "-13.57%")
    en, zh = template_question_en(growth), template_question_zh(growth)
    assert "what was the year-on-year growth of the year-to-date operating revenue" in en and " grow " not in en
    assert "营业收入同比增长率是多少？" in zh and "增长了多少" not in zh
    assert presupposed_sign(en, "en") is None and presupposed_sign(zh, "zh") is None


@pytest.mark.parametrize(("text", "lang", "sign"), [
    ("By how much did the return of Merux Media (MRX) beat that of Veldris Aerospace (VLDR) from the close 5 "
     "trading days before the most recent one to the most recent close?", "en", "positive"),
    ("By what percentage did the year-to-date revenue of X (1.SZ) grow over the same period a year earlier?", "en",
     "positive"),
    ("By how much did the P/E of X (1.SZ) exceed that of Y (2.SZ)?", "en", "positive"),
    ("Of the indices A, B and C, which rose the most from the close 5 trading days before the most recent one?",
     "en", "positive"),
    ("How much lower was the close of X (1.SZ) than its NAV?", "en", "negative"),
    ("X（1.SZ）的涨跌幅比Y（2.SZ）高多少个百分点？", "zh", "positive"),
    ("X（1.SZ）的营业收入较上年同期增长了多少？", "zh", "positive"),
    ("X（1.SZ）的市盈率比Y（2.SZ）低多少？", "zh", "negative"),
])
def test_the_lint_flags_a_wording_that_presupposes_a_sign(text, lang, sign):
    assert presupposed_sign(text, lang)[0] == sign
    assert "presupposed_sign" in {f.rule for f in lint_text(text, lang)}


@pytest.mark.parametrize(("text", "lang"), [
    ("What was the return of X (1.SZ) minus the return of Y (2.SZ), in percentage points to 2 decimals? A negative "
     "value means the first returned less.", "en"),
    ("By how much did the closing price of X (1.SZ) change from the trading day 5 sessions before the most recent "
     "one to the most recent trading day, in CNY to 2 decimals?", "en"),
    ("What was the net increase in cash and cash equivalents of X (1.SZ) for the most recently reported period?", "en"),
    ("For X (1.SZ), what was the growth of the revenue in its most recent annual report over the fiscal year before?",
     "en"),
    ("X（1.SZ）的涨跌幅减去Y（2.SZ）的涨跌幅是多少个百分点？保留2位小数。为负表示前者涨幅较低。", "zh"),
    ("X（1.SZ）最近一期年度报告的营业收入较上一财年的增长率是多少？", "zh"),
])
def test_a_signed_question_is_not_flagged(text, lang):
    assert presupposed_sign(text, lang) is None


# --------------------------------------------------------------------------- calendars and series


def series(tool: str, field: str, *, asset_class: str = "rates_fx", where: dict | None = None,
           calendar: str | None, aggregate: str | None = "mean", anchor: str = "window:20",
           fmt: Format = PCT, catalog: Catalog) -> Candidate:
    """A market-wide series' candidate as enumeration drafts it (its tool's own date arguments)."""
    meta = catalog.get(tool)
    sessions = int(anchor.split(":")[1]) if anchor.startswith("window:") else 10
    program = Program(calls=[Call(id="c1", tool=tool, args={}, dates=window_dates(meta, calendar, sessions=sessions))],
                      extract=Extractor(call="c1", select=Selection(mode="all" if aggregate else "latest",
                                                                    key=meta.time_key, key_fmt="%Y%m%d",
                                                                    where=where or {}),
                                        field=field, aggregate=aggregate, format=fmt))
    f = meta.field(field)
    facts = CandidateFacts(tool=tool, tool_description=meta.description, field=field, field_description=f.description,
                           field_description_zh=f.description_zh, field_unit=f.unit, anchor=anchor,
                           aggregate=aggregate, calendar=calendar, observed_value=1.5, observed_answer="1.50%")
    return Candidate(qid=compute_qid(program, tool), signature="sig", tier="T3", refresh_class="daily",
                     asset_class=asset_class, entity=tool, entity_name=tool, visibility=10, program=program,
                     facts=facts)


def test_a_rate_counts_the_trading_days_of_a_named_calendar_in_both_languages(catalog):
    shibor = series("shibor", "1w", calendar="XSHG", catalog=catalog)
    en, zh = template_question_en(shibor), template_question_zh(shibor)
    assert "over the last 20 Shanghai Stock Exchange trading days" in en
    assert zh.startswith("最近20个上海证券交易所交易日（含最近一个交易日）")
    assert lint_question(en, zh, lint_context(shibor, catalog)) == []
    bills = series("us_tbr", "w4_bd", calendar="XNYS", catalog=catalog)
    assert "over the last 20 New York Stock Exchange trading days" in template_question_en(bills)
    hibor = series("hibor", "on", calendar="XHKG", catalog=catalog, aggregate=None, anchor="latest")
    assert "on the most recent Hong Kong Stock Exchange trading day" in template_question_en(hibor)
    fx = series("fx_daily", "bid_close", where={"ts_code": "USDCNH.FXCM"}, calendar=None, catalog=catalog,
                fmt=Format(kind="number", decimals=4))
    en, zh = template_question_en(fx), template_question_zh(fx)
    assert "over the last 20 weekdays" in en and "最近20个工作日（含最近一个工作日）" in zh
    assert lint_question(en, zh, lint_context(fx, catalog)) == []


def test_the_lint_flags_a_series_counting_trading_days_without_a_calendar(catalog):
    shibor = series("shibor", "1w", calendar="XSHG", catalog=catalog)
    ctx = lint_context(shibor, catalog)
    bare_en = "What was the average 1-week SHIBOR rate over the last 20 trading days, in percent to 2 decimals?"
    bare_zh = "最近20个交易日（含最近一个交易日）1周上海银行间同业拆放利率（SHIBOR）的平均值是多少？以百分比表示，保留2位小数。"
    assert rules(bare_en, bare_zh, ctx) == {"unnamed_calendar"}
    # An instrument implies its exchange: a stock's window names none.
    stock = candidate(anchor="window:20", aggregate="mean")
    assert lint_context(stock).calendar_names == ()
    assert "unnamed_calendar" not in rules(template_question_en(stock), template_question_zh(stock), lint_context(stock))


def test_every_market_wide_series_names_its_series(catalog):
    """Every entity-free data tool has the words that name its series, and every answerable field's
    lexicon noun holds one (issue 40: "the extrapolation factor" named no series)."""
    lexicon = load_lexicon()
    series_tools = [t for t in catalog.data_tools() if is_series_tool(t) and not t.entity_param
                    and set(t.asset_classes) & {"rates_fx", "macro", "market"}]
    assert series_tools and {t.name for t in series_tools} <= set(SERIES_NAMES)
    unnamed = []
    for tool in series_tools:
        words = SERIES_NAMES[tool.name]
        for f in tool.fields:
            entry = lexicon.entry(tool.name, f.name)
            if not words or entry is None or f.role not in ("measure",) or entry.kind == "label":
                continue
            if not any(w.casefold() in entry.en.casefold() for w in words):
                unnamed.append(f"{tool.name}.{f.name}: {entry.en!r}")
            chinese = tool.name in lexicon.chinese_market.tools
            if chinese and not any(w.casefold() in entry.zh.casefold() for w in words):
                unnamed.append(f"{tool.name}.{f.name}: {entry.zh!r}")
    assert unnamed == []
    factor = series("us_tltr", "e_factor", calendar="XNYS", catalog=catalog)
    assert "Treasury" in template_question_en(factor)
    ctx = LintContext(series_names=SERIES_NAMES["us_tltr"])
    assert "unnamed_series" in {f.rule for f in lint_text("What was the highest extrapolation factor over the last 5 "
                                                           "New York Stock Exchange trading days?", "en", ctx)}


def test_an_index_volume_is_the_index_own():
    lexicon = load_lexicon()
    for tool in ("index_daily", "index_weekly", "index_monthly"):
        for name in ("vol", "amount"):
            assert "constituents" not in lexicon.entry(tool, name).en


# --------------------------------------------------------------------------- conventions stated


def test_a_stocks_window_states_what_a_suspended_day_does_and_the_data_does_it(catalog):
    stock = candidate(anchor="window:60", aggregate="mean")
    assert counts_stock_window(stock)
    assert template_question_en(stock).endswith(SUSPENSION_EN) and template_question_zh(stock).endswith(SUSPENSION_ZH)
    index = candidate("000300.SH", anchor="window:60", aggregate="mean", asset_class="index")
    lookup = candidate(anchor="latest")
    assert not counts_stock_window(index) and not counts_stock_window(lookup)
    assert SUSPENSION_EN not in template_question_en(lookup)
    # A family's window of a stock (a drawdown) says it too; an index's does not.
    (drawdown, *_) = _drawdown_drafts(catalog, A)
    assert template_question_en(as_candidate(drawdown, 4.68, "4.68%")).endswith(SUSPENSION_EN)
    (index_drawdown, *_) = _drawdown_drafts(catalog, INDEX)
    assert SUSPENSION_EN not in template_question_en(as_candidate(index_drawdown, 4.68, "4.68%"))
    # What the service does: a suspended session is in the exchange's window without a record.
    market = shared_market(DEFAULT_SEED)
    window = [d for d in session_dates("XSHG") if d <= CLOCK][-60:]
    suspended = next(e.code for e in market.universe.of_class("cn_equity")
                     if set(market.corporate.suspensions(e.code)) & set(window) and e.list_date < window[0])
    rows = _service().call("daily", {"ts_code": suspended, "start_date": window[0].strftime("%Y%m%d"),
                                     "end_date": window[-1].strftime("%Y%m%d")})["items"]
    off = set(market.corporate.suspensions(suspended)) & set(window)
    assert len(rows) == len(window) - len(off)
    assert not {r["trade_date"] for r in rows} & {d.strftime("%Y%m%d") for d in off}


def test_a_minute_bar_is_named_by_the_minute_it_covers_as_the_data_stamps_it_at_its_end():
    c = candidate(anchor="minute:1:10:30")
    assert "in the one-minute bar from 10:29 to 10:30 on the trading day before the most recent one" in \
        template_question_en(c)
    assert "10:29至10:30的一分钟K线" in template_question_zh(c)
    bars = _service().call("stk_mins", {"ts_code": a_share(), "freq": "1min", "trade_date": "20261126"})["items"]
    times = sorted(r["trade_time"][-8:-3] for r in bars)
    # Stamped at the bar's end: the morning's first bar is 09:31, the afternoon's 13:01; 10:30 ends one.
    assert times[0] == "09:31" and "11:30" in times and "13:01" in times and "10:30" in times and "15:00" in times
    assert "09:30" not in times and "13:00" not in times and len(times) == 240


def test_a_report_is_dated_by_its_announcement(catalog):
    (since,) = _since_report_drafts(catalog, A, window_dates(catalog.get("income"), "XSHG", sessions=10))
    c = as_candidate(since, 3.1, "3.10%")
    assert "its most recent financial report was announced" in template_question_en(c)
    assert "最近一期财报公告当日" in template_question_zh(c)
    reports = _service().call("income", {"ts_code": a_share(), "start_date": "20240101", "end_date": "20261127"})["items"]
    assert reports and all(r["ann_date"] == r["f_ann_date"] for r in reports)


def test_a_segment_figure_comes_from_the_half_year_or_annual_report():
    c = candidate(anchor="latest")
    c = c.model_copy(update={"facts": c.facts.model_copy(update={"tool": "fina_mainbz", "field": "bz_sales"})})
    c = c.model_copy(update={"program": c.program.model_copy(update={"extract": c.program.extract.model_copy(
        update={"select": Selection(mode="latest", key="end_date", key_fmt="%Y%m%d", where={"bz_item": "核心产品"}),
                "field": "bz_sales"})})})
    assert "for its most recent half-year or annual report (year to date)" in template_question_en(c)
    assert "最近一期已披露的半年度或年度报告（年初至报告期末）" in template_question_zh(c)
    rows = _service().call("fina_mainbz", {"ts_code": a_share(), "start_date": "20240101",
                                           "end_date": "20261127"})["items"]
    assert rows and {r["end_date"][4:] for r in rows} <= {"0630", "1231"}  # no third-quarter segments


def test_an_etf_volume_is_asked_in_units(catalog):
    tool = catalog.get("fund_daily")
    vol = tool.field("vol")
    assert "units" in vol.description and vol.unit == "lots"
    assert value_format(vol, "sum", 5e6, "%Y%m%d", tool="fund_daily", window=20).unit == "million units"
    assert value_format(vol, "mean", 5e3, "%Y%m%d", tool="fund_daily").unit == "units"
    # A stock's volume stays in shares (or the lots it is reported in).
    assert value_format(catalog.get("daily").field("vol"), "sum", 5e6, "%Y%m%d", tool="daily",
                        window=20).unit == "million shares"


def test_a_stocks_best_month_says_its_change_is_unadjusted_as_the_data_computes_it(catalog):
    records = [{"trade_date": "20261030", "close": 10.0, "amount": 1e6}]
    (stock, *_) = _best_month_drafts(catalog, A, records)
    (index, *_) = _best_month_drafts(catalog, INDEX, records)
    assert "highest unadjusted monthly percentage change" in template_question_en(as_candidate(stock, 10.0, "10.00 CNY"))
    assert "未复权月涨跌幅最高" in template_question_zh(as_candidate(stock, 10.0, "10.00 CNY"))
    assert "unadjusted" not in template_question_en(as_candidate(index, 3537.66, "3537.66 points"))
    # What the service does: a month's change is its close against the previous month's, unadjusted.
    months = _service().call("monthly", {"ts_code": a_share(), "start_date": "20250101",
                                         "end_date": "20261031"})["items"]
    months.sort(key=lambda r: r["trade_date"])
    for before, after in zip(months, months[1:]):
        assert after["pre_close"] == before["close"]
        assert after["pct_chg"] == pytest.approx((after["close"] / before["close"] - 1) * 100, abs=0.01)
