"""Language-aware matching: a bare number is read in the unit of the text answered (issue 21)."""

from __future__ import annotations

import pytest

from livesearch_pipeline.construction.formats import ZH_BASE, ZH_SCALE, zh_unit
from livesearch_pipeline.core.lexicon import Lexicon, load_lexicon
from livesearch_pipeline.core.matching import match_answer
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
    assert match_answer(MILLION_SHARES, 20.5625, "20.56 million shares", lang="zh").correct
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
