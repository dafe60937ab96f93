"""The evaluator's speed-ups (issue 6) must not change what the date gate, the number parser and
the matcher return: cheap pre-checks may only skip work that cannot find anything, and caches
must answer each input with its own result."""

from __future__ import annotations

import pytest

from livesearch_pipeline.core import dategate
from livesearch_pipeline.core.dategate import GateHit, find_date_spans, fold_width
from livesearch_pipeline.core.matching import parse_date
from livesearch_pipeline.core.normalize import final_number, parse_numbers, unit_scale

GATE_TEXTS = [
    "1,234.56 CNY", "The answer is 12.5%", "2026-10-27", "2026.10.27", "27.10.2026", "10/27", "3/4 of it",
    "20261027", "2050", "closed at 2050", "October CPI", "oct 27", "27 Oct 2026", "May 5", "may rise",
    "Q3 2026", "q3", "3Q26", "H1 FY25", "2h 2025", "FY2025", "fy25", "first half", "third fiscal quarter",
    "the first half-hour", "2026年", "10月27日", "二〇二六年", "3月期", "近3月", "第三季度", "上一季度",
    "ＯＣＴ２７", "２０２６－１０－２７", "Septembre 5", "ſep 5, 2026", "Kunlun Brewing Co., Ltd.",
    "Looking at the data, the session opened at 1,319.04 CNY, and the prior reading was 1,171.13 CNY.",
]


def _scan_every_pattern(text: str, *, include_bare_years: bool) -> tuple[GateHit, ...]:
    """find_date_spans as it was before the pre-checks: every pattern scans every text."""
    folded = fold_width(text)
    found = []
    for reason, pattern, is_bare_year, _gate in dategate._PATTERNS:
        if is_bare_year and not include_bare_years:
            continue
        for m in pattern.finditer(folded):
            if is_bare_year and dategate._is_amount(folded, m.start(), m.end()):
                continue
            found.append(GateHit(m.start(), m.end(), text[m.start():m.end()], reason))
    found.sort(key=lambda h: (h.start, -(h.end - h.start)))
    kept: list[GateHit] = []
    for hit in found:
        if not any(k.start <= hit.start and hit.end <= k.end for k in kept):
            kept.append(hit)
    return tuple(kept)


@pytest.mark.parametrize("text", GATE_TEXTS)
@pytest.mark.parametrize("include_bare_years", [True, False])
def test_pre_checks_never_hide_a_date(text: str, include_bare_years: bool) -> None:
    expected = _scan_every_pattern(text, include_bare_years=include_bare_years)
    assert find_date_spans(text, include_bare_years=include_bare_years) == expected


def test_gated_texts_still_find_their_dates() -> None:
    # A guard on the test above: the texts do exercise every family of patterns.
    reasons = {hit.reason for text in GATE_TEXTS for hit in find_date_spans(text)}
    assert {"ISO date", "compact date (YYYYMMDD)", "month/day", "month name with a day", "month name",
            "quarter with a year", "fiscal year", "ordinal quarter", "ordinal half-year", "year (年)",
            "month and day (月日)", "quarter (季度)", "bare year", "year in Chinese numerals (年)"} <= reasons


def test_fold_width_keeps_ascii_and_folds_the_rest() -> None:
    assert fold_width("1,234.56 CNY") == "1,234.56 CNY"
    assert fold_width("１２３４．５") == "1234.5"


def test_cached_parse_date_answers_each_text_with_its_own_date() -> None:
    assert str(parse_date("2026-10-27")) == "2026-10-27"
    assert str(parse_date("27 Oct 2026")) == "2026-10-27"
    assert str(parse_date("2025-01-02")) == "2025-01-02"
    assert parse_date("Kunlun Brewing") is None
    assert str(parse_date("2026-10-27")) == "2026-10-27"  # a cache hit returns the same answer
    assert parse_date.cache_info().hits >= 1


def test_cached_unit_scale_keeps_units_apart_and_still_raises() -> None:
    assert unit_scale("亿元") == ("CNY", 1e8)
    assert unit_scale("万元") == ("CNY", 1e4)
    assert unit_scale("亿元") == ("CNY", 1e8)
    for _ in range(2):  # errors are not cached away
        with pytest.raises(ValueError, match="unknown unit"):
            unit_scale("furlongs")


def test_parse_numbers_returns_a_fresh_list_each_time() -> None:
    first = parse_numbers("up from 1,206.8 to 1,234.5 CNY")
    first.clear()
    assert [n.value for n in parse_numbers("up from 1,206.8 to 1,234.5 CNY")] == [1206.8, 1234.5]


def test_single_candidate_is_the_answer_even_as_a_comparison_base() -> None:
    chosen, candidates = final_number("Final answer: compared with 1,206.8 CNY")
    assert chosen is not None and chosen.value == 1206.8 and len(candidates) == 1
    chosen, candidates = final_number("Final answer: 1,234.5 CNY, compared with 1,206.8 CNY")
    assert chosen is not None and chosen.value == 1234.5 and len(candidates) == 2
