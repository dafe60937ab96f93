"""Units, number parsing and final-answer selection (DESIGN §4.3)."""

from __future__ import annotations

import pytest

from livesearch_pipeline.core.normalize import final_number, parse_numbers, unit_scale


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        (None, (None, 1.0)),
        ("USD million", ("USD", 1e6)),
        ("million USD", ("USD", 1e6)),
        ("USD mn", ("USD", 1e6)),
        ("US$ bn", ("USD", 1e9)),
        ("千元", ("CNY", 1e3)),
        ("万元", ("CNY", 1e4)),
        ("亿元", ("CNY", 1e8)),
        ("万亿元", ("CNY", 1e12)),
        ("千万元", ("CNY", 1e7)),
        ("百万美元", ("USD", 1e6)),
        ("亿美元", ("USD", 1e8)),
        ("万港元", ("HKD", 1e4)),
        ("thousand CNY", ("CNY", 1e3)),
        ("CNY thousand", ("CNY", 1e3)),
        ("CNY", ("CNY", 1.0)),
        ("元", ("CNY", 1.0)),
        ("RMB", ("CNY", 1.0)),
        ("HKD", ("HKD", 1.0)),
        ("港币", ("HKD", 1.0)),
        ("USD", ("USD", 1.0)),
        ("万股", ("shares", 1e4)),
        ("亿股", ("shares", 1e8)),
        ("shares", ("shares", 1.0)),
        ("手", ("shares", 100.0)),
        ("lots", ("shares", 100.0)),
        ("万手", ("shares", 1e6)),
        ("%", ("%", 1.0)),
        ("percent", ("%", 1.0)),
        ("percentage points", ("%", 1.0)),
        ("pp", ("%", 1.0)),
        ("个百分点", ("%", 1.0)),
        ("bps", ("%", 0.01)),
        ("basis points", ("%", 0.01)),
        ("points", ("points", 1.0)),
        ("点", ("points", 1.0)),
        ("倍", ("x", 1.0)),
        ("万份", ("units", 1e4)),
        ("million", (None, 1e6)),
        ("元/股", ("CNY/shares", 1.0)),
        ("ＵＳＤ　ｍｉｌｌｉｏｎ", ("USD", 1e6)),
    ],
)
def test_unit_scale(unit: str | None, expected: tuple[str | None, float]) -> None:
    assert unit_scale(unit) == expected


@pytest.mark.parametrize("unit", ["furlongs", "", "  ", "USD HKD", "亿克", "a/b/c"])
def test_unknown_units_raise_with_the_unit_named(unit: str) -> None:
    with pytest.raises(ValueError, match="unit"):
        unit_scale(unit)


def _one(text: str):
    numbers = parse_numbers(text)
    assert len(numbers) == 1, numbers
    return numbers[0]


@pytest.mark.parametrize(
    ("text", "value", "currency", "is_percent", "negative_by"),
    [
        ("1,234.5", 1234.5, None, False, None),
        ("共1，234股", 1234.0, None, False, None),
        ("１，２３４．５元", 1234.5, "CNY", False, None),
        ("4220亿美元", 4.22e11, "USD", False, None),
        ("-$422 billion", -4.22e11, "USD", False, "-"),
        ("$-422 billion", -4.22e11, "USD", False, "-"),
        ("US$1.2bn", 1.2e9, "USD", False, None),
        ("HK$3.4 billion", 3.4e9, "HKD", False, None),
        ("RMB1,234", 1234.0, "CNY", False, None),
        ("CNY 5.6 million", 5.6e6, "CNY", False, None),
        ("¥12.5", 12.5, "CNY", False, None),
        ("￥12.5", 12.5, "CNY", False, None),
        ("12.5 yuan", 12.5, "CNY", False, None),
        ("12.5港元", 12.5, "HKD", False, None),
        ("12.5港币", 12.5, "HKD", False, None),
        ("3 US dollars", 3.0, "USD", False, None),
        ("3 Hong Kong dollars", 3.0, "HKD", False, None),
        ("5k", 5e3, None, False, None),
        ("5K", 5e3, None, False, None),
        ("5m", 5e6, None, False, None),
        ("5 mn", 5e6, None, False, None),
        ("5M", 5e6, None, False, None),
        ("5B", 5e9, None, False, None),
        ("1.5tn", 1.5e12, None, False, None),
        ("2 trillion", 2e12, None, False, None),
        ("3 thousand", 3e3, None, False, None),
        ("3千", 3e3, None, False, None),
        ("3万", 3e4, None, False, None),
        ("3万亿", 3e12, None, False, None),
        ("(47.9)", -47.9, None, False, "()"),
        ("($1,234)", -1234.0, "USD", False, "()"),
        ("−3.2", -3.2, None, False, "-"),
        ("负12.5亿元", -1.25e9, "CNY", False, "负"),
        ("minus 4", -4.0, None, False, "minus"),
        ("2.3%", 2.3, None, True, None),
        ("2.3％", 2.3, None, True, None),
        ("2.3 percent", 2.3, None, True, None),
        ("2.3 per cent", 2.3, None, True, None),
        ("百分之2.5", 2.5, None, True, None),
        ("2.3个百分点", 2.3, None, True, None),
        ("25 bps", 0.25, None, True, None),
        ("25个基点", 0.25, None, True, None),
        ("-1.5%", -1.5, None, True, "-"),
    ],
)
def test_parse_numbers_reads_sign_scale_and_currency(
    text: str, value: float, currency: str | None, is_percent: bool, negative_by: str | None
) -> None:
    number = _one(text)
    assert number.value == pytest.approx(value, rel=1e-12)
    assert number.currency == currency
    assert number.is_percent is is_percent
    assert number.negative_by == negative_by
    assert number.raw == text[number.start:number.end]


def test_parse_numbers_records_scale_unit_and_raw_span() -> None:
    lots = _one("成交12.5万手")
    assert (lots.value, lots.scale, lots.unit, lots.raw) == (12_500_000.0, 1e6, "shares", "12.5万手")
    points = _one("the index rose 20 points")
    assert (points.unit, points.scale, points.raw) == ("points", 1.0, "20 points")
    bare = _one("closed at 1,234.56.")
    assert (bare.unit, bare.scale, bare.raw, bare.start) == (None, 1.0, "1,234.56", 10)
    times = _one("PE of 15.3x")
    assert times.unit == "x"


def test_parse_numbers_skips_dates_identifiers_and_list_labels() -> None:
    text = (
        "1. 600519.SH closed at 1,700.5 on 2026-10-27 (Q3, 5G, T-1, 3Q26).\n"
        "2. (2) The 10月27日 volume was 3 lots."
    )
    assert [n.value for n in parse_numbers(text)] == [1700.5, 300.0]


def test_a_range_dash_is_not_a_sign_and_parenthesised_percent_is_an_aside() -> None:
    assert [n.value for n in parse_numbers("grew 10-12 units")] == [10.0, 12.0]
    assert [(n.value, n.negative_by) for n in parse_numbers("rose 20 points (3%)")] == [
        (20.0, None), (3.0, None)
    ]


def test_a_number_naming_two_currencies_is_not_read() -> None:
    assert parse_numbers("$5元") == []


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        ("The close on the most recent day was 1,234.56 CNY, up 2.3% from 1,206.8",
         {"expect_currency": "CNY", "expect_percent": False}, 1234.56),
        ("The close on the most recent day was 1,234.56 CNY, up 2.3% from 1,206.8",
         {"expect_percent": True}, 2.3),
        ("Open 1,206.8, close 1,234.56. **Final answer: 1,234.56**", {}, 1234.56),
        ("Looking at the data: open 1,206.8, close 1,234.56.\nFinal answer: 1,234.56 CNY", {}, 1234.56),
        ("The answer is 42 shares, from 40 a day earlier.", {}, 42.0),
        ("The volume was **3,200 lots**, against 3,100 the day before.", {}, 320_000.0),
        ("Sum of the closes: 1,234.56 + 10 = 1,244.56", {}, 1244.56),
        ("Average ≈ 17.32", {}, 17.32),
        ("最近一个交易日收盘价为1234.56元，较前一日上涨2.3%。", {"expect_percent": False}, 1234.56),
        ("最近一个交易日收盘价为1234.56元，比前一日的1206.80元上涨2.3%。",
         {"expect_currency": "CNY", "expect_percent": False}, 1234.56),
        ("答案：4220亿美元", {"expect_currency": "USD"}, 4.22e11),
        ("The index closed at 3,245.12 points. Volume was 32.1 billion shares.",
         {"expect_unit": "points"}, 3245.12),
        ("Net profit was 12.3 and 11.8 in the two quarters, so the total is 24.1.", {}, 24.1),
        ("It closed at 1,234.56 (1,234.56 CNY).", {}, 1234.56),
        ("It rose from 1,206.8 to 1,234.56.", {}, 1234.56),
        ("It rose from a lower level to 1,234.56.", {}, 1234.56),
        ("Up from the previous close of 1,206.8, it ended at 1,234.56.", {}, 1234.56),
    ],
)
def test_final_number_picks_what_a_careful_grader_would(text: str, kwargs: dict, expected: float) -> None:
    chosen, candidates = final_number(text, **kwargs)
    assert chosen is not None, candidates
    assert chosen.value == pytest.approx(expected, rel=1e-12)
    assert chosen in candidates


@pytest.mark.parametrize(
    "text",
    [
        "Open 1,206.8, close 1,234.56.",
        "The high was 12.5 and the low was 11.9.",
        "收盘价1234.56元，开盘价1206.8元。",
    ],
)
def test_final_number_reports_ambiguity_with_the_candidates(text: str) -> None:
    chosen, candidates = final_number(text)
    assert chosen is None
    assert len(candidates) == 2


def test_final_number_with_no_number_or_no_compatible_number() -> None:
    assert final_number("I could not find the data.") == (None, [])
    assert final_number("It rose 2.3%.", expect_percent=False) == (None, [])
    assert final_number("$4.2 billion", expect_currency="CNY") == (None, [])


def test_final_number_rejects_contradictory_expectations() -> None:
    with pytest.raises(ValueError, match="expect_currency"):
        final_number("5", expect_currency="EUR")
    with pytest.raises(ValueError, match="contradicts"):
        final_number("5", expect_currency="USD", expect_unit="shares")


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("(1.25) million CNY", -1.25e6, "CNY"),
        ("(1.25) 亿元", -1.25e8, "CNY"),
        ("a loss of (3.5) bn USD", -3.5e9, "USD"),
        ("(47.9)", -47.9, None),
    ],
)
def test_accounting_negative_takes_a_scale_word_after_the_parenthesis(text, value, unit):
    (n,) = parse_numbers(text)
    assert n.value == pytest.approx(value) and n.unit == unit and n.negative_by == "()"
