"""Language-aware matching: a bare number is read in the unit of the text answered (issue 21), at
that text's precision (issue 28)."""

from __future__ import annotations

import pytest

from livesearch_pipeline.construction.formats import ZH_BASE, ZH_SCALE, zh_unit
from livesearch_pipeline.core.lexicon import Lexicon, load_lexicon
from livesearch_pipeline.core.matching import clamp_rule, match_answer, text_rule
from livesearch_pipeline.core.models import Format, MatchRule
from livesearch_pipeline.core.normalize import ZH_BASE_WORDS, ZH_SCALE_WORDS, reading_unit

MILLION_SHARES = MatchRule(rule="approx", unit="million shares", decimals=2)
BILLION_CNY = MatchRule(rule="approx", unit="billion CNY", decimals=2)


def test_the_reading_unit_tables_are_the_ones_the_chinese_text_is_written_with() -> None:
    assert ZH_BASE_WORDS == ZH_BASE and ZH_SCALE_WORDS == ZH_SCALE
    for scale in ZH_SCALE:
        for base in ZH_BASE:
            unit = f"{scale} {base}".strip()
            assert reading_unit(unit, "zh") == zh_unit(Format(kind="number", decimals=2, unit=unit))[0]


@pytest.mark.parametrize(("unit", "lang", "expected"), [
    ("million shares", "zh", "万股"), ("billion CNY", "zh", "亿元"), ("million CNY", "zh", "万元"),
    ("CNY", "zh", "元"), ("billion HKD", "zh", "亿港元"), ("%", "zh", "%"), (None, "zh", None),
    ("quote currency", "zh", "quote currency"), ("million shares", "en", "million shares"),
])
def test_reading_unit(unit: str | None, lang: str, expected: str | None) -> None:
    assert reading_unit(unit, lang) == expected


def test_an_unknown_language_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown answer language 'fr'"):
        reading_unit("CNY", "fr")


# The measured cases: each bare number is right in the unit the Chinese text asks for.
@pytest.mark.parametrize(("rule", "gold", "answer"), [
    (MILLION_SHARES, 20.5625, "2056.25"),  # 沪深港通持股数量是多少万股
    (BILLION_CNY, 16.721, "167.21"),  # 成交额是多少亿元
    (BILLION_CNY, 550.822, "5508.22"),  # 融资余额是多少亿元
])
def test_bare_numbers_in_the_chinese_unit_score_correct_with_lang_zh(rule: MatchRule, gold: float, answer: str) -> None:
    chinese = match_answer(rule, gold, answer, lang="zh")
    assert chinese.correct and "read in" in chinese.reason
    english = match_answer(rule, gold, answer)  # read in the English rule's unit: wrong by 10x or 100x
    assert not english.correct


def test_lang_zh_does_not_accept_the_english_scale_nor_change_stated_units() -> None:
    assert not match_answer(MILLION_SHARES, 20.5625, "20.56", lang="zh").correct
    assert match_answer(MILLION_SHARES, 20.5625, "20.5625 million shares", lang="zh").correct
    # Stated in the English unit at the English precision: 2056 万股, not the 2056.25 the Chinese
    # text asks for at 2 decimals (issue 28).
    assert not match_answer(MILLION_SHARES, 20.5625, "20.56 million shares", lang="zh").correct
    assert match_answer(BILLION_CNY, 16.721, "167.21亿元", lang="en").correct
    # The base-unit reading still holds: 16,721,000,000 元 is 167.21 亿元.
    assert match_answer(BILLION_CNY, 16.721, "16721000000", lang="zh").correct


def test_label_answers_in_the_other_language_match_without_a_judge() -> None:
    lexicon = load_lexicon()
    names = lexicon.label_names("建筑工程")
    assert "Construction engineering" in names
    outcome = match_answer(MatchRule(rule="semantic"), "建筑工程", "Construction engineering", aliases=names)
    assert outcome.correct and not outcome.needs_judge
    wrong = match_answer(MatchRule(rule="semantic"), "建筑工程", "Real estate", aliases=names)
    assert not wrong.correct and wrong.needs_judge
    assert lexicon.label_names("construction ENGINEERING")[0] == "建筑工程"
    assert lexicon.label_names("not a label") == ()


def test_a_label_name_in_two_groups_is_refused() -> None:
    base = load_lexicon().model_dump()
    with pytest.raises(ValueError, match="already a name of labels"):
        Lexicon.model_validate({**base, "labels": [["银行", "Banks"], ["Banks", "Banking"]]})


# --------------------------------------------------------------------------- issue 28: each text's precision

MILLION_CNY = MatchRule(rule="approx", unit="million CNY", decimals=2)
MILLION_CNY_RECORDED = MatchRule(rule="approx", unit="million CNY", decimals=2, unit_zh="万元", decimals_zh=2)


@pytest.mark.parametrize("rule", [MILLION_CNY, MILLION_CNY_RECORDED])
def test_a_chinese_answer_is_scored_at_the_chinese_texts_precision(rule: MatchRule) -> None:
    # The case: the Chinese text asks 万元 to 2 decimals; 0.40 万元 off was scored correct
    # at the English text's 0.005 million (= 0.5 万元).
    gold = 2459.9521  # million CNY: 245995.21 万元
    off = match_answer(rule, gold, "245995.61", lang="zh")
    assert not off.correct
    assert off.reason == "approx: |245995.61 - 245995.21| 万元 (read in 万元, the zh text's unit) = 0.4 > 0.005 (rounding at 2 decimals)"
    assert not match_answer(rule, gold, "245995.61万元", lang="zh").correct
    within = match_answer(rule, 2459.952104, "245995.21", lang="zh")
    assert within.correct and within.parsed == pytest.approx(245995.21)
    assert match_answer(rule, gold, "245995.214 万元", lang="zh").correct
    assert not match_answer(rule, gold, "245995.22", lang="zh").correct


@pytest.mark.parametrize("rule", [MILLION_CNY, MILLION_CNY_RECORDED])
def test_an_english_answer_is_still_scored_at_the_english_texts_precision(rule: MatchRule) -> None:
    gold = 2459.9521
    assert match_answer(rule, gold, "2459.95", lang="en").correct
    assert match_answer(rule, gold, "2,459.95 million CNY").correct
    assert match_answer(rule, gold, "2459.954").correct  # within half a 0.01 million step
    late = match_answer(rule, gold, "2459.96")
    assert not late.correct and "0.005 (rounding at 2 decimals)" in late.reason


def test_the_recorded_chinese_precision_decides_over_the_derived_one() -> None:
    # A rule recording a coarser Chinese text (亿元 at 1 decimal) is scored at that precision,
    # not at the 万元 reading_unit would derive.
    coarse = MatchRule(rule="approx", unit="million CNY", decimals=2, unit_zh="亿元", decimals_zh=1)
    assert text_rule(coarse, "zh") == MatchRule(rule="approx", unit="亿元", decimals=1)
    assert match_answer(coarse, 2459.9521, "24.6", lang="zh").correct
    assert not match_answer(coarse, 2459.9521, "24.5", lang="zh").correct
    assert not match_answer(coarse, 2459.9521, "245995.21", lang="zh").correct  # read in 亿元


def test_text_rule_keeps_english_rules_and_counts_abs_tol_in_steps_of_the_last_decimal() -> None:
    assert text_rule(MILLION_CNY_RECORDED, "en") is MILLION_CNY_RECORDED
    percent = MatchRule(rule="approx", unit="%", decimals=2, unit_zh="%", decimals_zh=2)
    assert text_rule(percent, "zh") is percent
    loose = MatchRule(rule="approx", unit="million CNY", decimals=2, abs_tol=0.01, rel_tol=0.001,
                      unit_zh="万元", decimals_zh=2)
    # 0.01 million CNY at 2 decimals is 0.01 万元 at 2: a 100× finer unit, a 100× finer tolerance.
    assert text_rule(loose, "zh") == MatchRule(rule="approx", unit="万元", decimals=2, abs_tol=0.01, rel_tol=0.001)
    three = MatchRule(rule="approx", unit="billion CNY", decimals=2, abs_tol=0.02, unit_zh="亿元", decimals_zh=3)
    assert text_rule(three, "zh").abs_tol == pytest.approx(0.002)
    with pytest.raises(ValueError, match="unknown answer language 'fr'"):
        text_rule(MILLION_CNY, "fr")
    wrong = MatchRule(rule="approx", unit="million CNY", decimals=2, unit_zh="万股", decimals_zh=2)
    with pytest.raises(ValueError, match="the zh text's unit '万股' .* not convertible"):
        match_answer(wrong, 1.0, "1", lang="zh")


def test_a_rule_without_the_chinese_precision_keeps_its_bytes() -> None:
    assert MILLION_CNY.model_dump_json() == (
        '{"rule":"approx","abs_tol":null,"rel_tol":null,"unit":"million CNY","decimals":2}')
    assert MILLION_CNY_RECORDED.model_dump()["unit_zh"] == "万元"
    assert MatchRule.model_validate_json(MILLION_CNY_RECORDED.model_dump_json()) == MILLION_CNY_RECORDED
    with pytest.raises(ValueError, match="unit_zh '万元' without decimals_zh"):
        MatchRule(rule="approx", unit="million CNY", decimals=2, unit_zh="万元")
    with pytest.raises(ValueError, match="semantic"):
        MatchRule(rule="semantic", decimals_zh=2)


@pytest.mark.parametrize(("fmt", "unit_zh", "decimals_zh"), [
    (Format(kind="number", decimals=2, unit="million CNY", scale=1e-6), "万元", 2),
    (Format(kind="number", decimals=2, unit="billion CNY", scale=1e-9), "亿元", 2),
    (Format(kind="percent", decimals=2, unit="%"), "%", 2),
    (Format(kind="percent", decimals=2, unit="percentage points"), "个百分点", 2),
    (Format(kind="integer", unit="shares"), "股", 0),
    (Format(kind="number", decimals=4), None, 4),
])
def test_the_clamp_records_the_chinese_texts_unit_and_decimals(fmt: Format, unit_zh: str | None,
                                                                 decimals_zh: int) -> None:
    proposed = MatchRule(rule="approx", unit=fmt.unit, decimals=fmt.decimals)
    rule, decisions = clamp_rule(proposed, fmt, aggregate=None, value_kind=fmt.kind, value=12.5,
                                 zh_precision=zh_unit(fmt))
    assert (rule.unit_zh, rule.decimals_zh) == (unit_zh, decimals_zh)
    assert {d.field for d in decisions} >= {"decimals_zh"}
    english_only, _ = clamp_rule(proposed, fmt, aggregate=None, value_kind=fmt.kind, value=12.5)
    assert (english_only.unit_zh, english_only.decimals_zh) == (None, None)
    assert english_only == rule.model_copy(update={"unit_zh": None, "decimals_zh": None})


def test_the_clamp_refuses_a_chinese_unit_of_another_quantity() -> None:
    fmt = Format(kind="number", decimals=2, unit="million CNY", scale=1e-6)
    with pytest.raises(ValueError, match="Chinese text's unit '万股' is not a unit of the same quantity"):
        clamp_rule(MatchRule(rule="approx"), fmt, aggregate=None, value_kind="number", zh_precision=("万股", 2))
    text, _ = clamp_rule(MatchRule(rule="semantic", unit_zh=None), Format(kind="text"), aggregate=None,
                         value_kind="text")
    assert (text.unit_zh, text.decimals_zh) == (None, None)


def test_construction_records_the_chinese_precision_only_for_a_question_with_a_chinese_text() -> None:
    from livesearch_pipeline.construction.verbalize import (
        Verbalized, finalize, template_question_en, template_question_zh,
    )
    from livesearch_pipeline_tests.construction.builders import candidate

    amount = Format(kind="number", decimals=2, unit="million CNY", scale=1e-6)
    c = candidate(fmt=amount, observed_value=2_459_952_100.0)
    proposed = MatchRule(rule="approx", unit="million CNY", decimals=2)
    (both,), _ = finalize([Verbalized(c, template_question_en(c), template_question_zh(c), proposed, "t")])
    assert "万元" in both.question_zh and "保留2位小数" in both.question_zh
    assert (both.match.unit, both.match.decimals, both.match.unit_zh, both.match.decimals_zh) == (
        "million CNY", 2, "万元", 2)
    assert any(d.field == "unit_zh" and d.applied == "万元" for d in both.provenance.clamp)
    (english,), _ = finalize([Verbalized(c, template_question_en(c), None, proposed, "t")])
    assert (english.match.unit_zh, english.match.decimals_zh) == (None, None)
    assert "unit_zh" not in english.model_dump_json()


def test_a_large_value_is_held_to_its_last_decimal_too() -> None:
    # make run's gold of 2026-12-01: the float epsilon (1e-9 relative) added 32 CNY to a 50 CNY
    # tolerance on 3.2e10 CNY, and 0.04 CNY to 0.005 CNY on 4.0e7 CNY: one step off passed.
    assert not match_answer(MILLION_CNY, 31875.90342, "3187590.35", lang="zh").correct
    assert match_answer(MILLION_CNY, 31875.90342, "3187590.34", lang="zh").correct
    cny = MatchRule(rule="approx", unit="CNY", decimals=2)
    assert not match_answer(cny, 40464025.55, "40464025.56").correct
    assert match_answer(cny, 40464025.554, "40464025.55").correct
    shares = MatchRule(rule="exact", unit="shares", decimals=0)
    assert not match_answer(shares, 12_345_678_901, "12345678902").correct
