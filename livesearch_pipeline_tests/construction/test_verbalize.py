"""Stage 5: formats and proposed rules, template texts, the clamp and the date gate."""

from __future__ import annotations

import pytest

from livesearch_pipeline.construction.formats import proposed_rule, value_format, zh_unit
from livesearch_pipeline.core.lexicon import LexiconError
from livesearch_pipeline.construction.conventions import SUSPENSION_EN
from livesearch_pipeline.construction.verbalize import unit_phrase_en as template_unit_en
from livesearch_pipeline.construction.verbalize import (
    TEMPLATE,
    Verbalized,
    finalize,
    lint_context,
    template_question_en,
    template_question_zh,
    template_verbalize,
)
from livesearch_pipeline.construction.lint import lint_question
from livesearch_pipeline.core.catalog import FieldMeta
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.matching import match_answer
from livesearch_pipeline.core.models import Format, MatchRule
from livesearch_pipeline_tests.construction.builders import candidate

PRICE = FieldMeta(name="close", type="number", unit="CNY", description="closing price")
NAV = FieldMeta(name="unit_nav", type="number", unit="CNY", description="NAV per unit")
PCT = FieldMeta(name="pct_chg", type="number", unit="%", description="daily change")
MACRO_PCT = FieldMeta(name="nt_yoy", type="number", unit="%", description="national CPI year-over-year change")
VOLUME = FieldMeta(name="vol", type="number", unit="lots", description="volume")
HOLDING = FieldMeta(name="hold_amount", type="number", unit="shares", description="shares held")
AMOUNT = FieldMeta(name="amount", type="number", unit="thousand CNY", description="turnover value")
TOTAL_MV = FieldMeta(name="total_mv", type="number", unit="HKD", description="total market value")
INDEX = FieldMeta(name="close", type="number", unit="points", description="closing level")
FX = FieldMeta(name="bid_close", type="number", unit="quote currency", description="bid close")
NAME = FieldMeta(name="industry", type="text", description="industry")
LISTED = FieldMeta(name="list_date", type="date", description="listing date")


# --------------------------------------------------------------------------- formats and rules


@pytest.mark.parametrize(
    ("field", "aggregate", "sample", "expected"),
    [
        (PRICE, None, 1688.5, Format(kind="number", decimals=2, unit="CNY")),
        (PRICE, None, 0.35, Format(kind="number", decimals=2, unit="CNY")),  # never 4-decimal prices
        (PRICE, "std", 1688.5, Format(kind="number", decimals=2, unit="CNY")),
        (NAV, None, 1.2847, Format(kind="number", decimals=4, unit="CNY")),  # NAV keeps 4
        (FX, None, 7.1032, Format(kind="number", decimals=4)),
        (PRICE, "pct_change", 1688.5, Format(kind="percent", decimals=2, unit="%")),
        (PRICE, "argmax", 1688.5, Format(kind="date", in_fmt="%Y%m%d", out_fmt="%Y-%m-%d")),
        (PRICE, "count", 1688.5, Format(kind="integer")),
        (PCT, None, 1.25, Format(kind="percent", decimals=2, unit="%")),
        (PCT, None, 0.05, Format(kind="percent", decimals=2, unit="%")),  # never 4-decimal percentages
        (MACRO_PCT, None, 0.3, Format(kind="percent", decimals=1, unit="%")),
        (INDEX, None, 4812.37, Format(kind="number", decimals=2, unit="points")),
        # amounts and share counts get a scale word: "5.38 billion HKD", "6.12 million shares"
        (TOTAL_MV, None, 53_844_347_768.0, Format(kind="number", decimals=2, unit="billion HKD", scale=1e-9)),
        (AMOUNT, None, 2_500_000.0, Format(kind="number", decimals=2, unit="billion CNY", scale=1e-6)),
        (AMOUNT, None, 25_000.0, Format(kind="number", decimals=2, unit="million CNY", scale=1e-3)),
        (AMOUNT, None, 50.0, Format(kind="number", decimals=2, unit="CNY", scale=1e3)),
        # one observed day of a volume: "million" only with a tenfold margin (a day's volume
        # varies tenfold), else whole shares — never "0.08 million shares"
        (VOLUME, None, 161_159, Format(kind="number", decimals=2, unit="million shares", scale=1e-4)),
        # a whole count in the tool's own unit: lots of 100 shares (手), as the data reports it
        (VOLUME, None, 61_159, Format(kind="integer", unit="lots")),
        (VOLUME, None, 800, Format(kind="integer", unit="lots")),
        # a sum over (by default) 60 sessions of 12,000 shares is 0.72 million: still whole
        (VOLUME, "sum", 120, Format(kind="integer", unit="lots")),
        (VOLUME, "sum", 2_000, Format(kind="number", decimals=2, unit="million shares", scale=1e-4)),
        (VOLUME, "max", 120, Format(kind="integer", unit="lots")),
        (VOLUME, "mean", 120, Format(kind="integer", unit="lots")),  # an average too
        (HOLDING, None, 15_000, Format(kind="integer", unit="shares")),
        (HOLDING, None, 9_990_000, Format(kind="integer", unit="shares")),
        (HOLDING, None, 12_845_000_000, Format(kind="number", decimals=2, unit="million shares", scale=1e-6)),
        (NAME, None, "Liquor", Format(kind="text")),
        (LISTED, None, "20010827", Format(kind="date", in_fmt="%Y%m%d", out_fmt="%Y-%m-%d")),
    ],
)
def test_value_format(field, aggregate, sample, expected):
    assert value_format(field, aggregate, sample, "%Y%m%d") == expected


MINUTE_VOLUME = FieldMeta(name="vol", type="number", unit="shares", description="volume of the bar")


def test_a_minute_bars_volume_stays_whole_even_when_one_bar_reached_a_million():
    # The case: one sampled bar of 0.1 million picked "million", the question then read
    # "0.08 million shares". The bars of the enumeration window decide, and most are small.
    bars = [80_000, 120_000, 1_050_000, 35_500, 64_100, 0, 98_700]
    fmt = value_format(MINUTE_VOLUME, None, 1_050_000, "%Y%m%d%H%M", observed=bars)
    assert fmt == Format(kind="integer", unit="shares")
    assert template_unit_en(fmt) == ", as a whole number of shares"


def test_a_daily_volume_safely_in_millions_says_million_from_its_observed_days():
    days = [41_200, 61_159, 18_800, 25_010, 33_000, 47_500, 12_300, 29_900, 51_000, 22_000]  # lots
    fmt = value_format(VOLUME, None, days[0], "%Y%m%d", observed=days)
    assert fmt == Format(kind="number", decimals=2, unit="million shares", scale=1e-4)
    assert template_unit_en(fmt) == ", in millions of shares to 2 decimals"
    assert zh_unit(fmt) == ("万股", 2)
    # one day under a million shares among those observed: whole shares, however large the rest
    fmt = value_format(VOLUME, None, days[0], "%Y%m%d", observed=[*days, 9_000])
    assert fmt == Format(kind="integer", unit="lots")
    assert zh_unit(fmt) == ("手", None)
    assert template_unit_en(fmt) == ", as a whole number of 100-share lots"
    # a sum over the days of its window: 5 days of at least 0.3 million is safely in millions
    fmt = value_format(VOLUME, "sum", 3_000, "%Y%m%d", observed=[3_000] * 10, window=5)
    assert fmt.unit == "million shares"
    fmt = value_format(VOLUME, "sum", 1_500, "%Y%m%d", observed=[1_500] * 10, window=5)
    assert fmt == Format(kind="integer", unit="lots")


def test_counts_in_millions_rule():
    from livesearch_pipeline.construction.formats import counts_in_millions

    assert counts_in_millions([1e7]) and not counts_in_millions([9.9e6])  # one observation: tenfold margin
    assert counts_in_millions([1e6] * 5) and not counts_in_millions([1e6] * 4)
    assert not counts_in_millions([2e6] * 10, aggregate="std")  # a spread is far below the level
    assert counts_in_millions([-3e6, 2e6, 0, None, "n/a", 1e6, 4e6, 5e6])  # zeros and non-numbers say nothing
    assert not counts_in_millions([0, None])
    assert counts_in_millions([200] * 10, factor=100.0, aggregate="sum", window=60)  # 1.2 million
    assert not counts_in_millions([200] * 10, factor=100.0, aggregate="sum", window=20)


def test_value_format_reads_the_tool_override_when_given():
    # balancesheet.total_share is share capital in CNY (an amount), not a share count
    capital = FieldMeta(name="total_share", type="number", unit="CNY", description="share capital")
    assert value_format(capital, None, 2e9, "%Y%m%d", tool="balancesheet") == Format(
        kind="number", decimals=2, unit="billion CNY", scale=1e-9)
    assert value_format(capital, None, 2e9, "%Y%m%d") == value_format(capital, None, 2e9, "%Y%m%d",
                                                                         tool="balancesheet")


def test_value_format_without_a_fitting_lexicon_entry_is_an_error_naming_the_field():
    unknown = FieldMeta(name="no_such_field", type="number", unit="CNY", description="?")
    with pytest.raises(LexiconError, match="no_such_field"):
        value_format(unknown, None, 1.0, "%Y%m%d")


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        (Format(kind="number", decimals=2, unit="billion CNY"), ("亿元", 2)),
        (Format(kind="number", decimals=2, unit="million HKD"), ("万港元", 2)),
        (Format(kind="number", decimals=2, unit="million shares"), ("万股", 2)),
        (Format(kind="number", decimals=2, unit="USD"), ("美元", 2)),
        (Format(kind="number", decimals=2, unit="points"), ("点", 2)),
        (Format(kind="percent", decimals=2, unit="%"), ("", 2)),
    ],
)
def test_chinese_unit_is_chinese_and_one_scale_finer(fmt, expected):
    assert zh_unit(fmt) == expected


def test_chinese_precision_passes_the_english_rule():
    """Asked in 亿元 to 2 decimals, a correct Chinese answer passes the billion-CNY rule."""
    rule = proposed_rule(Format(kind="number", decimals=2, unit="billion CNY", scale=1e-9))
    gold = 538.44423  # billion CNY
    assert match_answer(rule, gold, "5384.44亿元").correct
    rule = proposed_rule(Format(kind="number", decimals=2, unit="million CNY", scale=1e-6))
    assert match_answer(rule, 327.4449, "32744.49万元").correct


def test_proposed_rule_by_format_kind():
    assert proposed_rule(Format(kind="text")) == MatchRule(rule="semantic")
    assert proposed_rule(Format(kind="date", in_fmt="%Y%m%d", out_fmt="%Y-%m-%d")) == MatchRule(rule="exact")
    assert proposed_rule(Format(kind="integer", unit="shares")) == MatchRule(rule="exact", unit="shares")
    assert proposed_rule(Format(kind="number", decimals=2, unit="CNY")) == MatchRule(
        rule="approx", unit="CNY", decimals=2)
    assert proposed_rule(Format(kind="percent", decimals=2, unit="%")) == MatchRule(
        rule="approx", unit="%", decimals=2)


# --------------------------------------------------------------------------- template texts

ANCHORS = [
    ("latest", None, None, "T1"),
    ("snapshot:5", None, None, "T2"),
    ("window:20", "mean", Format(kind="number", decimals=2, unit="CNY"), "T3"),
    ("window:60", "pct_change", Format(kind="percent", decimals=2, unit="%"), "T3"),
    ("window:5", "argmax", Format(kind="date", in_fmt="%Y%m%d", out_fmt="%Y-%m-%d"), "T3"),
]


@pytest.mark.parametrize(("anchor", "aggregate", "fmt", "tier"), ANCHORS)
def test_template_texts_pass_the_date_gate_and_state_unit_and_precision(anchor, aggregate, fmt, tier):
    c = candidate(anchor=anchor, aggregate=aggregate, fmt=fmt, tier=tier)
    en, zh = template_question_en(c), template_question_zh(c)
    assert zh is not None, "a Chinese-market entity with a Chinese field description gets a Chinese text"
    for text in (en, zh):
        assert check_text(text).passed, check_text(text).hits
        assert "600519.SH" in text
    final = c.program.extract.format
    # A stock's window ends with the suspension convention's sentence (construction/conventions.py).
    asked = en.split("?")[0] + "?"
    assert en.endswith(SUSPENSION_EN) == anchor.startswith("window:")
    if final.kind == "number":
        assert asked.endswith(", in CNY to 2 decimals?") and en.count("CNY") == 1
        assert "是多少元？保留2位小数。" in zh
    elif final.kind == "percent":
        assert asked.endswith(", in percent to 2 decimals?")
        assert "以百分比表示，保留2位小数" in zh
    else:
        assert "YYYY-MM-DD" in en and "YYYY-MM-DD" in zh and "是多少" not in zh
    assert en.startswith(("What was the closing price of Name 600519.SH (600519.SH)",
                          "What was the average closing price of Name 600519.SH (600519.SH)",
                          "By what percentage did the closing price of Name 600519.SH (600519.SH)",
                          "On which trading day in the last 5 sessions did Name 600519.SH (600519.SH)"))
    assert zh.startswith("Name 600519.SH（600519.SH）")
    if anchor.startswith("window:") and c.program.extract.aggregate in ("change", "pct_change"):
        # A change states its window convention: from the close k sessions back to the latest.
        k = c.program.calls[0].dates["start_date"].sessions_back
        assert f"from the trading day {k} sessions before the most recent one to the most recent trading day" in en
        assert f"自最近一个交易日之前第{k}个交易日至最近一个交易日" in zh
    elif anchor.startswith("window:"):
        n = anchor.split(":")[1]
        assert f"last {n} " in en and f"最近{n}个" in zh
    assert lint_question(en, zh, lint_context(c)) == []


def test_no_chinese_text_outside_chinese_markets():
    c = candidate("AAPL.O", asset_class="us_equity")
    assert template_question_zh(c) is None
    assert check_text(template_question_en(c)).passed


def test_template_verbalize_labels_itself():
    (v,) = template_verbalize([candidate()])
    assert v.verbalizer == TEMPLATE
    assert v.proposed == MatchRule(rule="approx", unit="CNY", decimals=2)


def test_unknown_anchor_is_an_error_naming_the_candidate():
    c = candidate(anchor="sideways")
    with pytest.raises(ValueError, match=c.qid):
        template_question_en(c)


# --------------------------------------------------------------------------- finalize


def test_finalize_rejects_an_absolute_date_into_the_date_gate():
    c = candidate()
    items = [Verbalized(c, "What was the closing price of 600519.SH on 2026-10-27?", None,
                        MatchRule(rule="approx", decimals=2), "litellm:m")]
    questions, rejects = finalize(items)
    assert questions == []
    (reject,) = rejects
    assert (reject.qid, reject.stage) == (c.qid, "date_gate")
    assert "2026-10-27" in reject.reason
    assert reject.question == items[0].question and reject.proposed_match == items[0].proposed


def test_finalize_gates_the_chinese_text_too():
    c = candidate()
    items = [Verbalized(c, template_question_en(c), "2026年10月27日贵州茅台的收盘价是多少？", MatchRule(rule="approx"), "t")]
    questions, rejects = finalize(items)
    assert questions == [] and [r.stage for r in rejects] == ["date_gate"]


def test_finalize_never_keeps_exact_on_an_aggregate():
    c = candidate(anchor="window:20", aggregate="mean", tier="T3", observed_value=1700.123)
    (q,), rejects = finalize([Verbalized(c, template_question_en(c), template_question_zh(c),
                                         MatchRule(rule="exact", rel_tol=0.5), "litellm:m")])
    assert rejects == []
    assert q.match.rule == "approx"
    assert q.match.unit == "CNY" and q.match.decimals == 2
    assert q.match.rel_tol is None or q.match.rel_tol <= 0.01
    assert any(d.field == "rule" and d.applied == "approx" for d in q.provenance.clamp)
    assert q.provenance.proposed_match == MatchRule(rule="exact", rel_tol=0.5)
    assert (q.qid, q.tier, q.signature, q.entity) == (c.qid, "T3", c.signature, c.entity)


def test_finalize_turns_a_semantic_rule_on_a_number_into_approx():
    c = candidate()
    (q,), _ = finalize([Verbalized(c, template_question_en(c), None, MatchRule(rule="semantic"), "t")])
    assert q.match.rule == "approx"


def test_finalize_keeps_a_template_pool_as_proposed_when_within_bounds():
    cs = [candidate(), candidate("000001.SZ", visibility=4)]
    questions, rejects = finalize(template_verbalize(cs))
    assert rejects == [] and sorted(q.qid for q in questions) == sorted(c.qid for c in cs)
    assert all(q.provenance.verbalizer == TEMPLATE for q in questions)


# --------------------------------------------------------------------------- period-pinned anchors


def test_period_anchor_names_the_completed_period_the_program_asks_for():
    from livesearch_pipeline.construction.verbalize import period_phrase_en, period_phrase_zh

    c = candidate(anchor="period:year:1", tier="T1")
    en, zh = template_question_en(c), template_question_zh(c)
    assert en == ("What was the closing price of Name 600519.SH (600519.SH) for the calendar year before the "
                  "most recently completed one, in CNY to 2 decimals?")
    assert zh.startswith("Name 600519.SH（600519.SH）最近一个已结束年度的上一个年度的收盘价")
    assert check_text(en).passed and check_text(zh).passed
    assert period_phrase_en("quarter:0") == "the most recently completed calendar quarter"
    assert period_phrase_en("month:3") == "the calendar month 3 calendar months before the most recently completed one"
    assert period_phrase_zh("quarter:2") == "最近一个已结束季度之前的第2个季度"


def test_malformed_period_anchor_is_an_error_naming_it():
    with pytest.raises(ValueError, match="malformed period anchor 'week:1'"):
        template_question_en(candidate(anchor="period:week:1"))


# --------------------------------------------------------------------------- Chinese-market series


def series_candidate(tool: str, field: str, *, asset_class: str, key: str = "trade_date", key_fmt: str = "%Y%m%d",
                     where: dict | None = None, anchor: str = "latest", aggregate: str | None = None,
                     calendar: str | None = "XSHG", fmt: Format | None = None, observed_value: float = 1.5):
    """A candidate of a series tool (no instrument: the entity is the tool), as enumeration drafts it."""
    from livesearch_pipeline.construction.models import Candidate, CandidateFacts
    from livesearch_pipeline.core.models import Call, DateSpec, Extractor, Program, Selection
    from livesearch_pipeline.core.qid import compute_qid

    dates = {"start_date": DateSpec(days_back=30, fmt="%Y%m%d"), "end_date": DateSpec(days_back=0, fmt="%Y%m%d")}
    mode = "all" if aggregate else ("snapshot" if anchor.startswith("snapshot") else "latest")
    select = dict(mode=mode, key=key, key_fmt=key_fmt, where=where or {})
    if mode == "snapshot":
        select["anchor"] = DateSpec(sessions_back=int(anchor.split(":")[1]), calendar=calendar, fmt=key_fmt)
    fmt = fmt or Format(kind="percent", decimals=1, unit="%")
    program = Program(calls=[Call(id="c1", tool=tool, args={}, dates=dates)],
                      extract=Extractor(call="c1", select=Selection(**select), field=field, aggregate=aggregate,
                                        format=fmt))
    return Candidate(
        qid=compute_qid(program, tool), signature="sig", tier="T1", refresh_class="daily", asset_class=asset_class,
        entity=tool, entity_name=tool, visibility=0, program=program,
        facts=CandidateFacts(tool=tool, tool_description="A series.", field=field, field_description=field,
                             field_unit="%", anchor=anchor, aggregate=aggregate, calendar=calendar,
                             observed_value=observed_value, observed_answer=str(observed_value)))


BN_CNY = Format(kind="number", decimals=2, unit="billion CNY", scale=1e-3)
PCT2 = Format(kind="percent", decimals=2, unit="%")
MONTHLY = dict(asset_class="macro", key="month", key_fmt="%Y%m", calendar=None)
# A series whose subject implies no calendar names it (DESIGN §4.8, issue 40): 上海证券交易所交易日,
# FX 工作日; a series on a named exchange (上交所) or an official statistic (a month) needs none.
CHINESE_SERIES = [
    (series_candidate("cn_cpi", "nt_yoy", **MONTHLY),
     "最近一个已公布月份的全国居民消费价格指数（CPI）同比涨幅是多少？以百分比表示，保留1位小数。"),
    (series_candidate("cn_pmi", "pmi010000", fmt=Format(kind="number", decimals=1), **MONTHLY),
     "最近一个已公布月份的制造业采购经理指数（PMI）是多少？保留1位小数。"),
    (series_candidate("cn_m", "m2", fmt=Format(kind="number", decimals=2, unit="billion CNY", scale=0.1),
                      observed_value=3.1e6, **MONTHLY),
     "最近一个已公布月份的广义货币（M2）余额是多少亿元？保留2位小数。"),
    (series_candidate("shibor", "on", asset_class="rates_fx", key="date", fmt=PCT2),
     "最近一个上海证券交易所交易日的隔夜上海银行间同业拆放利率（SHIBOR）是多少？以百分比表示，保留2位小数。"),
    (series_candidate("shibor", "1w", asset_class="rates_fx", key="date", anchor="window:20", aggregate="mean",
                      fmt=PCT2),
     "最近20个上海证券交易所交易日（含最近一个交易日）1周上海银行间同业拆放利率（SHIBOR）的平均值是多少？"
     "以百分比表示，保留2位小数。"),
    (series_candidate("fx_daily", "bid_close", asset_class="rates_fx", where={"ts_code": "USDCNH.FXCM"},
                      calendar=None, fmt=Format(kind="number", decimals=4)),
     "最近一个工作日的美元兑离岸人民币买入收盘价是多少？保留4位小数。"),
    (series_candidate("moneyflow_hsgt", "north_money", asset_class="market", fmt=BN_CNY),
     "最近一个上海证券交易所交易日的北向资金净买入额是多少亿元？保留2位小数。"),
    (series_candidate("moneyflow_hsgt", "north_money", asset_class="market", anchor="window:5", aggregate="sum",
                      fmt=BN_CNY),
     "最近5个上海证券交易所交易日（含最近一个交易日）北向资金净买入额的合计是多少亿元？保留2位小数。"),
    (series_candidate("margin", "rzye", asset_class="market", where={"exchange_id": "SSE"}, anchor="snapshot:5",
                      fmt=Format(kind="number", decimals=2, unit="billion CNY", scale=1e-9)),
     "上交所最近一个交易日之前第5个交易日的融资余额是多少亿元？保留2位小数。"),
    (series_candidate("margin", "rqyl", asset_class="market", where={"exchange_id": "SZSE"},
                      fmt=Format(kind="integer", unit="shares")),
     "深交所最近一个交易日的融券余量是多少股？请给出整数。"),
]


@pytest.mark.parametrize(("c", "expected"), CHINESE_SERIES, ids=lambda x: getattr(x, "qid", "text"))
def test_chinese_market_series_get_an_entirely_chinese_text(c, expected):
    import re

    zh = template_question_zh(c)
    assert zh == expected
    assert lint_question(template_question_en(c), zh, lint_context(c)) == []
    # Entirely Chinese: Latin letters only in a parenthesised abbreviation after the Chinese name
    # and in the Chinese word A股.
    assert re.findall(r"[A-Za-z]", re.sub(r"（[^（）]+）|A股", "", zh)) == []


@pytest.mark.parametrize("c", [
    series_candidate("hibor", "on", asset_class="rates_fx", key="date", calendar="XHKG", fmt=PCT2),
    series_candidate("us_tycr", "y10", asset_class="rates_fx", key="date", calendar="XNYS", fmt=PCT2),
    series_candidate("fx_daily", "bid_close", asset_class="rates_fx", where={"ts_code": "USDJPY.FXCM"},
                     calendar=None, fmt=Format(kind="number", decimals=4)),
    series_candidate("fx_daily", "bid_close", asset_class="rates_fx", where={"ts_code": "USDHKD.FXCM"},
                     calendar=None, fmt=Format(kind="number", decimals=4)),
], ids=["hibor", "us_treasury", "usdjpy", "usdhkd"])
def test_series_outside_the_chinese_market_stay_english_only(c):
    from livesearch_pipeline.construction.verbalize import has_chinese_text

    assert not has_chinese_text(c)
    assert template_question_zh(c) is None
    assert lint_question(template_question_en(c), None, lint_context(c)) == []


def test_a_yuan_pair_is_named_in_chinese_and_the_lint_accepts_that_name():
    c = series_candidate("fx_daily", "ask_close", asset_class="rates_fx", where={"ts_code": "EURCNH.FXCM"},
                         calendar=None, fmt=Format(kind="number", decimals=4), anchor="window:5", aggregate="mean")
    en, zh = template_question_en(c), template_question_zh(c)
    assert "EUR/CNH" in en
    assert zh.startswith("欧元兑离岸人民币最近5个工作日")  # FX counts weekdays (DESIGN §4.8)
    assert lint_question(en, zh, lint_context(c)) == []
    # a Chinese text that does not name the pair is still caught
    unnamed = zh.replace("欧元兑离岸人民币", "")
    assert any(f.rule == "unnamed_series" for f in lint_question(en, unnamed, lint_context(c)))


def test_the_llm_prompt_says_whether_a_chinese_text_is_wanted():
    import json

    from livesearch_pipeline.construction.prompts import VERBALIZER_SYSTEM
    from livesearch_pipeline.construction.verbalize import verbalizer_user_message

    assert "`chinese_text` is true" in VERBALIZER_SYSTEM
    cpi, _ = CHINESE_SERIES[0]
    assert json.loads(verbalizer_user_message(cpi))["chinese_text"] is True
    assert json.loads(verbalizer_user_message(candidate()))["chinese_text"] is True
    assert json.loads(verbalizer_user_message(candidate("AAPL.O", asset_class="us_equity")))["chinese_text"] is False


def test_lint_context_reads_the_observed_value_as_already_scaled():
    # 50,000 lots are 5,000,000 shares: the executor's value is already in the format's unit, so
    # a whole number of shares under the huge-value threshold is not "huge and unscaled".
    whole = Format(kind="integer", unit="shares", scale=100.0)
    c = candidate(fmt=whole, observed_value=5_000_000)
    assert lint_context(c).value == 5_000_000
    huge = candidate(fmt=whole, observed_value=2e8)
    assert lint_context(huge).value == 2e8
    assert [f.rule for f in lint_question("What was the volume of Name 600519.SH (600519.SH) on the most recent "
                                          "trading day, as a whole number of shares?", None,
                                          lint_context(huge))] == ["huge_unscaled"]



def _single_call_candidate(tool: str, field: str, *, entity: str, name: str, asset_class: str, args: dict,
                           key: str, where: dict | None = None, fmt: Format = PCT2, refresh_class: str = "monthly"):
    """A one-call `latest` candidate of an instrument's tool, as enumeration drafts it."""
    from livesearch_pipeline.construction.models import Candidate, CandidateFacts
    from livesearch_pipeline.core.models import Call, DateSpec, Extractor, Program, Selection
    from livesearch_pipeline.core.qid import compute_qid

    dates = {"start_date": DateSpec(days_back=400), "end_date": DateSpec(days_back=0)}
    program = Program(calls=[Call(id="c1", tool=tool, args=args, dates=dates)],
                      extract=Extractor(call="c1", select=Selection(mode="latest", key=key, where=where or {}),
                                        field=field, format=fmt))
    return Candidate(
        qid=compute_qid(program, entity), signature="sig", tier="T2", refresh_class=refresh_class,
        asset_class=asset_class, entity=entity, entity_name=name, visibility=5, program=program,
        facts=CandidateFacts(tool=tool, tool_description="A data set.", field=field, field_description=field,
                             field_unit=fmt.unit or "", anchor="latest", aggregate=None, calendar="XSHG",
                             observed_value=1.1, observed_answer="1.1"))


def test_an_index_weight_is_asked_at_the_latest_rebalance_not_the_latest_session():
    """Weights are published at a rebalance (2026-11-30), not every session: "on the most recent
    trading day" (2026-12-01) named a day the gold's record is not of."""
    c = _single_call_candidate("index_weight", "weight", entity="801230.SI", name="服饰行业指数", asset_class="index",
                               args={"index_code": "801230.SI"}, key="trade_date", where={"con_code": "600306.SH"})
    en, zh = template_question_en(c), template_question_zh(c)
    assert "at the index's most recent rebalance" in en and "most recent trading day" not in en
    assert "最近一次权重调整时" in zh and "最近一个交易日" not in zh
    assert lint_question(en, zh, lint_context(c)) == []


def test_audit_fees_are_of_the_audited_fiscal_year_not_a_balance_at_a_period_end():
    c = _single_call_candidate("fina_audit", "audit_fees", entity="601451.SH", name="昶骁软件", asset_class="cn_equity",
                               args={"ts_code": "601451.SH"}, key="end_date", refresh_class="annual",
                               fmt=Format(kind="number", decimals=2, unit="CNY"))
    en, zh = template_question_en(c), template_question_zh(c)
    assert en.startswith("What were the audit fees of 昶骁软件 (601451.SH) for its most recently audited fiscal year")
    assert "最近一个已审计会计年度的审计总费用" in zh
    assert lint_question(en, zh, lint_context(c)) == []


def test_taxes_paid_take_a_plural_verb():
    c = _single_call_candidate("cashflow", "c_paid_for_taxes", entity="688902.SH", name="泠曦汽配",
                               asset_class="cn_equity", args={"ts_code": "688902.SH"}, key="end_date",
                               refresh_class="quarterly", fmt=Format(kind="number", decimals=2, unit="CNY"))
    assert template_question_en(c).startswith("What were the taxes paid of 泠曦汽配 (688902.SH)")


def test_closing_cash_is_a_balance_at_the_period_end_not_a_year_to_date_flow():
    """The cash-flow statement's closing cash was asked "… at the period end … for the most recently
    reported period (year to date)": a balance worded as a flow."""
    c = _single_call_candidate("hk_cashflow", "c_cash_equ_end_period", entity="01659.HK", name="筠琰金融控股",
                               asset_class="hk_equity", args={"ts_code": "01659.HK"}, key="end_date",
                               refresh_class="quarterly", fmt=Format(kind="number", decimals=2, unit="million HKD",
                                                                     scale=1e-6))
    en = template_question_en(c)
    assert en.startswith("What were the closing cash and cash equivalents of 筠琰金融控股 (01659.HK) at the end of the "
                         "most recently reported period")
    assert "year to date" not in en
    assert lint_question(en, template_question_zh(c), lint_context(c)) == []
