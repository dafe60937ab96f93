"""Deterministic matching and the mechanical clamp of proposed rules (DESIGN §4.3)."""

from __future__ import annotations

import pytest

from livesearch_pipeline.core.matching import clamp_rule, match_answer, normalize_text, parse_date
from livesearch_pipeline.core.models import PERCENTAGE_POINTS, Format, MatchRule

APPROX_USD_1PCT = MatchRule(rule="approx", rel_tol=0.01, unit="USD")
CNY_2DP = MatchRule(rule="approx", unit="CNY", decimals=2)
PERCENT_2DP = MatchRule(rule="approx", unit="%", decimals=2)


@pytest.mark.parametrize(
    ("rule", "gold", "answer", "gold_unit", "correct"),
    [
        # units and magnitude words on either side
        (APPROX_USD_1PCT, 422_000_000_000, "4220亿美元", None, True),
        (APPROX_USD_1PCT, 422_000_000_000, "$422 billion", None, True),
        (APPROX_USD_1PCT, 422_000_000_000, "US$ 421.9bn", None, True),
        (APPROX_USD_1PCT, 422_000_000_000, "$410 billion", None, False),
        (APPROX_USD_1PCT, 422_000, "$422 million", "USD thousand", True),
        (MatchRule(rule="approx", rel_tol=0.01, unit="USD million"), 422_000, "$422 billion", None, True),
        (MatchRule(rule="approx", unit="亿元", decimals=2), 1234.5678, "1234.57", None, True),
        (MatchRule(rule="approx", unit="亿元", decimals=2), 1234.5678, "1234.57亿元", None, True),
        # a bare number may also be in base units (issue 13): 123,456,780,000 yuan is 1234.5678 亿元
        (MatchRule(rule="approx", unit="亿元", decimals=2), 1234.5678, "123,456,780,000 yuan", None, True),
        (MatchRule(rule="approx", unit="亿元", decimals=2), 1234.5678, "123,456,000,000 yuan", None, False),
        (MatchRule(rule="approx", unit="亿元", decimals=2), 1234.5678, "1234.57 CNY", None, True),
        (MatchRule(rule="approx", unit="亿元", decimals=2), 1234.5678, "123.457 billion yuan", None, True),
        (MatchRule(rule="exact", unit="手", decimals=0), 1234, "1234手", None, True),
        (MatchRule(rule="exact", unit="手", decimals=0), 1234, "12.34万股", None, True),
        (MatchRule(rule="exact", unit="shares", decimals=0), 123_400, "1,234 lots", None, True),
        (MatchRule(rule="approx", unit="元/股", decimals=2), 1.234, "每股收益1.23元/股", None, True),
        (MatchRule(rule="approx", unit="元/股", decimals=2), 1.234, "EPS of $1.23", None, False),
        # rounding tolerance at the stated decimals
        (CNY_2DP, 1234.5678, "The close was 1,234.57 CNY.", None, True),
        (CNY_2DP, 1234.5678, "The close was 1,234.56 CNY.", None, False),
        (CNY_2DP, 1234.565, "1234.57", None, True),
        (CNY_2DP, 1234.5678, "1,234.6", None, False),
        # percent
        (PERCENT_2DP, 1.23, "1.23%", None, True),
        (PERCENT_2DP, 1.23, "1.23", None, True),
        # a plain fraction for a percentage, as FinSearchComp's judge accepts, at the same tolerance
        (PERCENT_2DP, 1.23, "0.0123", None, True),
        (PERCENT_2DP, 1.23, "0.012", None, False),
        (PERCENT_2DP, 1.23, "-0.0123", None, False),
        (PERCENT_2DP, 1.23, "123 bps", None, True),
        (PERCENT_2DP, 1.23, "百分之1.23", None, True),
        (MatchRule(rule="approx", unit="bps", decimals=0), 25, "0.25%", None, True),
        (MatchRule(rule="approx", unit="bps", decimals=0), 25, "25", None, True),
        # tolerances
        (MatchRule(rule="approx", abs_tol=0.5, unit="points", decimals=2), 3245.12, "3,245.5 points", None, True),
        (MatchRule(rule="approx", abs_tol=0.5, unit="points", decimals=2), 3245.12, "3,245.7 points", None, False),
        (MatchRule(rule="approx", abs_tol=0.01, rel_tol=0.001, unit="points"), 3245.12, "3,248", None, True),
        # exact numbers
        (MatchRule(rule="exact", unit="shares", decimals=0), 1_000_000, "1 million shares", None, True),
        (MatchRule(rule="exact", unit="shares", decimals=0), 1_000_000, "1,000,001 shares", None, False),
        # negative values agree
        (CNY_2DP, -47.9, "(47.90)", None, True),
        (CNY_2DP, -47.9, "a loss of -47.90 CNY", None, True),
        (CNY_2DP, -47.9, "净利润为负47.90元", None, True),
        # a final-answer marker settles several numbers
        (CNY_2DP, 1234.5678, "Open 1,206.80, close 1,234.57.\nFinal answer: 1,234.57", None, True),
    ],
)
def test_numeric_matching(rule: MatchRule, gold: float, answer: str, gold_unit: str | None, correct: bool) -> None:
    outcome = match_answer(rule, gold, answer, gold_unit=gold_unit)
    assert outcome.correct is correct, outcome.reason
    assert outcome.needs_judge is False
    assert outcome.reason


@pytest.mark.parametrize("rule_name", ["exact", "approx"])
@pytest.mark.parametrize(
    ("gold", "answer"),
    [(422_000_000_000, "-$422 billion"), (-47.9, "47.9"), (-47.9, "47.9 CNY"), (1.5, "−1.5")],
)
def test_a_sign_mismatch_fails_under_every_rule(rule_name: str, gold: float, answer: str) -> None:
    rule = MatchRule(rule=rule_name, rel_tol=0.5 if rule_name == "approx" else None, abs_tol=None)
    outcome = match_answer(rule, gold, answer)
    assert outcome.correct is False
    assert "sign mismatch" in outcome.reason


def test_sign_mismatch_wins_even_within_a_wide_tolerance() -> None:
    outcome = match_answer(MatchRule(rule="approx", abs_tol=10.0, unit="CNY"), 0.5, "-0.5 CNY")
    assert (outcome.correct, "sign mismatch" in outcome.reason) == (False, True)


@pytest.mark.parametrize(
    ("rule", "answer", "fragment"),
    [
        (APPROX_USD_1PCT, "HK$422 billion", "currency mismatch"),
        (APPROX_USD_1PCT, "4220亿元", "currency mismatch"),
        (CNY_2DP, "up 2.3%", "unit mismatch"),
        (PERCENT_2DP, "$1.23", "unit mismatch"),
        (MatchRule(rule="approx", unit="points", decimals=2), "1,234 shares", "unit mismatch"),
    ],
)
def test_unit_mismatches_are_wrong_and_say_why(rule: MatchRule, answer: str, fragment: str) -> None:
    outcome = match_answer(rule, 422_000_000_000 if rule.unit == "USD" else 1.23, answer)
    assert outcome.correct is False and outcome.needs_judge is False
    assert fragment in outcome.reason


def test_several_candidates_without_a_marker_need_a_judge() -> None:
    outcome = match_answer(MatchRule(rule="approx", unit="亿元", decimals=2), 1234.5678,
                           "Revenue was 1,234.57 and costs were 1,000.12.")
    assert (outcome.correct, outcome.needs_judge, outcome.parsed) == (False, True, None)
    assert outcome.candidates == pytest.approx((1234.57, 1000.12))
    assert "ambiguous" in outcome.reason


@pytest.mark.parametrize("answer", [None, "", "   "])
def test_no_answer_is_wrong(answer: str | None) -> None:
    outcome = match_answer(CNY_2DP, 1.0, answer)
    assert (outcome.correct, outcome.needs_judge, outcome.reason) == (False, False, "no answer")


def test_no_number_is_wrong() -> None:
    outcome = match_answer(CNY_2DP, 1.0, "The data is not available.")
    assert outcome.correct is False and outcome.needs_judge is False
    assert "no number" in outcome.reason


@pytest.mark.parametrize(
    ("rule", "gold", "gold_unit", "message"),
    [
        (MatchRule(rule="semantic"), 1.0, None, "never semantic"),
        (MatchRule(rule="approx", unit="CNY"), 1.0, None, "needs abs_tol, rel_tol or decimals"),
        (MatchRule(rule="approx", unit="CNY", decimals=2), 1.0, "USD", "not convertible"),
        (MatchRule(rule="approx", unit="furlongs", decimals=2), 1.0, None, "unknown unit 'furlongs'"),
        (MatchRule(rule="approx", unit="CNY", decimals=2), float("nan"), None, "not a finite number"),
        (MatchRule(rule="approx", unit="CNY", decimals=2), "Acme", None, "approx rule cannot score"),
        (MatchRule(rule="exact"), True, None, "boolean"),
    ],
)
def test_bad_rules_and_gold_values_raise(rule: MatchRule, gold: object, gold_unit: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        match_answer(rule, gold, "1.00", gold_unit=gold_unit)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- text


def test_normalize_text() -> None:
    assert normalize_text("  Ｋｗｅｉｃｈｏｗ  Moutai, Co.,Ltd. ") == "kweichow moutai co ltd"
    assert normalize_text("贵州茅台（600519）") == "贵州茅台 600519"


@pytest.mark.parametrize(
    ("rule_name", "gold", "answer", "correct", "needs_judge"),
    [
        ("exact", "Shanghai", "  shanghai. ", True, False),
        ("exact", "600519.SH", "600519.sh", True, False),
        ("exact", "Shanghai", "Shenzhen", False, False),
        ("exact", "Shanghai", "It is listed in Shanghai.", False, True),
        ("semantic", "Acme Robotics Co., Ltd.", "ACME ROBOTICS", True, False),
        ("semantic", "华东精密股份有限公司", "华东精密", True, False),
        ("semantic", "Acme Robotics", "Acme Robotics Group Holdings", True, False),
        ("semantic", "Acme Robotics", "the robotics firm Acme", False, True),
        ("semantic", "Acme Robotics", "Beta Foods", False, True),
    ],
)
def test_text_matching(rule_name: str, gold: str, answer: str, correct: bool, needs_judge: bool) -> None:
    outcome = match_answer(MatchRule(rule=rule_name), gold, answer)
    assert (outcome.correct, outcome.needs_judge) == (correct, needs_judge), outcome.reason


@pytest.mark.parametrize(
    ("answer", "correct", "needs_judge"),
    [
        ("2026-10-27", True, False),
        ("The highest close was on October 27, 2026.", True, False),
        ("It peaked on 27 Oct 2026", True, False),
        ("2026年10月27日", True, False),
        ("20261027", True, False),
        ("2026-10-28", False, False),
        ("Either 2026-10-27 or 2026-10-28", False, True),
        ("Last Tuesday", False, False),
    ],
)
def test_date_gold_matches_any_written_form(answer: str, correct: bool, needs_judge: bool) -> None:
    outcome = match_answer(MatchRule(rule="exact"), "20261027", answer)
    assert (outcome.correct, outcome.needs_judge) == (correct, needs_judge), outcome.reason


def test_parse_date_forms() -> None:
    assert str(parse_date("Oct. 27th, 2026")) == "2026-10-27"
    assert str(parse_date("２０２６年１０月２７日")) == "2026-10-27"
    assert parse_date("not a date") is None
    assert parse_date("600519") is None
    assert parse_date("60051901") is None


# --------------------------------------------------------------------------- clamp


NUMBER_2DP_CNY = Format(kind="number", decimals=2, unit="CNY")


def _fields(decisions) -> dict[str, tuple[object, object]]:
    return {d.field: (d.proposed, d.applied) for d in decisions}


@pytest.mark.parametrize(
    ("fmt", "aggregate", "why"),
    [
        (NUMBER_2DP_CNY, None, "rounded to 2 decimals"),
        (Format(kind="integer", unit="shares"), "sum", "aggregate 'sum'"),
        (Format(kind="integer", unit="亿元", scale=1e-8), None, "scale"),
        (Format(kind="percent", decimals=2), None, "percent unit"),
    ],
)
def test_exact_becomes_approx_when_the_value_is_derived(fmt: Format, aggregate: str | None, why: str) -> None:
    rule, decisions = clamp_rule(MatchRule(rule="exact"), fmt, aggregate=aggregate, value_kind="number")
    assert rule.rule == "approx"
    (decision,) = [d for d in decisions if d.field == "rule"]
    assert (decision.proposed, decision.applied) == ("exact", "approx")
    assert why in decision.reason


def test_exact_is_kept_for_an_underived_integer() -> None:
    rule, decisions = clamp_rule(MatchRule(rule="exact", unit="shares", decimals=0),
                                 Format(kind="integer", unit="shares"), aggregate=None,
                                 value_kind="number", value=123_400)
    assert rule == MatchRule(rule="exact", unit="shares", decimals=0)
    assert [(d.field, d.reason.split(":")[0]) for d in decisions] == [("rule", "accepted")]


def test_integer_format_of_a_fractional_value_rounds() -> None:
    rule, _ = clamp_rule(MatchRule(rule="exact"), Format(kind="integer", unit="shares"), aggregate=None,
                         value_kind="number", value=1234.6)
    assert (rule.rule, rule.abs_tol, rule.decimals) == ("approx", None, 0)
    assert match_answer(rule, 1234.6, "1,235 shares").correct
    assert not match_answer(rule, 1234.6, "1,234 shares").correct


def test_numbers_are_never_semantic_and_take_unit_and_decimals_from_the_format() -> None:
    rule, decisions = clamp_rule(MatchRule(rule="semantic", unit="USD", decimals=4), NUMBER_2DP_CNY,
                                 aggregate=None, value_kind="number")
    assert rule == MatchRule(rule="approx", unit="CNY", decimals=2)
    assert _fields(decisions) == {"rule": ("semantic", "approx"), "unit": ("USD", "CNY"), "decimals": (4, 2)}


def test_percent_format_sets_the_percent_unit() -> None:
    rule, _ = clamp_rule(MatchRule(rule="approx"), Format(kind="percent", decimals=2), aggregate="pct_change",
                         value_kind="number")
    assert (rule.unit, rule.decimals) == ("%", 2)


def test_a_percentage_point_gap_is_matched_like_a_percent_in_every_way_an_analyst_writes_it() -> None:
    # A return gap's gold reads "5.76 percentage points" (Format unit PERCENTAGE_POINTS); the rule
    # stays a percent rule, so "5.76 pp", "5.76个百分点" and "5.76%" are the same answer.
    rule, _ = clamp_rule(MatchRule(rule="approx"), Format(kind="percent", decimals=2, unit=PERCENTAGE_POINTS),
                         aggregate="pct_change", value_kind="number")
    assert (rule.unit, rule.decimals) == ("%", 2)
    for answer in ("5.76 percentage points", "5.76 pp", "5.76 ppts", "高出5.76个百分点", "5.76%", "5.76"):
        assert match_answer(rule, 5.76, answer).correct, answer
    assert not match_answer(rule, 5.76, "5.7 percentage points").correct
    assert match_answer(rule, -1.2, "-1.20 percentage points").correct


def test_rel_tol_is_clamped_to_one_percent() -> None:
    rule, decisions = clamp_rule(MatchRule(rule="approx", rel_tol=0.05, unit="CNY", decimals=2), NUMBER_2DP_CNY,
                                 aggregate="mean", value_kind="number", value=1234.5)
    assert rule.rel_tol == 0.01
    assert _fields(decisions) == {"rel_tol": (0.05, 0.01)}


def test_abs_tol_is_clamped_to_one_percent_of_the_value() -> None:
    rule, decisions = clamp_rule(MatchRule(rule="approx", abs_tol=50.0, unit="CNY", decimals=2), NUMBER_2DP_CNY,
                                 aggregate=None, value_kind="number", value=-1000.0)
    assert rule.abs_tol == pytest.approx(10.0)
    assert _fields(decisions)["abs_tol"] == (50.0, pytest.approx(10.0))


def test_abs_tol_without_a_value_is_kept_and_said_unchecked() -> None:
    rule, decisions = clamp_rule(MatchRule(rule="approx", abs_tol=50.0, unit="CNY", decimals=2), NUMBER_2DP_CNY,
                                 aggregate=None, value_kind="number")
    assert rule.abs_tol == 50.0
    (decision,) = decisions
    assert decision.field == "abs_tol" and "unchecked" in decision.reason


def test_a_tolerance_tighter_than_the_rounding_is_raised_to_it() -> None:
    rule, decisions = clamp_rule(MatchRule(rule="approx", abs_tol=0.0001, unit="CNY", decimals=2),
                                 NUMBER_2DP_CNY, aggregate=None, value_kind="number", value=1234.5)
    assert rule.abs_tol == 0.005
    (decision,) = decisions
    assert decision.field == "abs_tol" and "rounding" in decision.reason
    rule, _ = clamp_rule(MatchRule(rule="approx", rel_tol=1e-7, unit="CNY", decimals=2), NUMBER_2DP_CNY,
                         aggregate=None, value_kind="number", value=1234.5)
    assert (rule.abs_tol, rule.rel_tol) == (0.005, 1e-7)


def test_a_clamped_rule_still_scores_a_correctly_rounded_answer() -> None:
    value = 1234.5678
    rule, _ = clamp_rule(MatchRule(rule="exact", rel_tol=1e-9), NUMBER_2DP_CNY, aggregate="mean",
                         value_kind="number", value=value)
    assert match_answer(rule, value, "1,234.57 CNY").correct
    assert not match_answer(rule, value, "1,234.58 CNY").correct


@pytest.mark.parametrize(
    ("proposed", "fmt", "expected_rule"),
    [
        (MatchRule(rule="approx", rel_tol=0.01), Format(kind="text"), "semantic"),
        (MatchRule(rule="exact"), Format(kind="text"), "exact"),
        (MatchRule(rule="semantic"), Format(kind="text"), "semantic"),
        (MatchRule(rule="semantic"), Format(kind="date", in_fmt="%Y%m%d", out_fmt="%Y-%m-%d"), "exact"),
        (MatchRule(rule="approx", abs_tol=1.0, decimals=2), Format(kind="date"), "exact"),
    ],
)
def test_text_is_never_approx_and_takes_no_tolerances(proposed: MatchRule, fmt: Format, expected_rule: str) -> None:
    rule, decisions = clamp_rule(proposed, fmt, aggregate=None, value_kind="text")
    assert rule == MatchRule(rule=expected_rule)
    changed = {d.field: (d.proposed, d.applied) for d in decisions}
    if proposed.rule != expected_rule:
        assert changed["rule"] == (proposed.rule, expected_rule)
    for name in ("abs_tol", "rel_tol", "decimals"):
        if getattr(proposed, name) is not None:
            assert changed[name] == (getattr(proposed, name), None)
    if proposed == rule:
        assert [d.reason.split(":")[0] for d in decisions] == ["accepted"]


@pytest.mark.parametrize(
    ("fmt", "value_kind", "message"),
    [
        (Format(kind="text"), "number", "does not fit"),
        (NUMBER_2DP_CNY, "text", "does not fit"),
        (NUMBER_2DP_CNY, "blob", "unknown value kind"),
    ],
)
def test_clamp_rejects_inconsistent_input(fmt: Format, value_kind: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        clamp_rule(MatchRule(rule="approx"), fmt, aggregate=None, value_kind=value_kind)


# --------------------------------------------------------------------------- issue 13: scales across languages

BILLION_HKD = MatchRule(rule="approx", unit="billion HKD", decimals=2)


@pytest.mark.parametrize(
    ("answer", "correct"),
    [
        ("5.38 billion HKD", True),
        ("53.84亿港元", True),  # the Chinese question's unit, one scale finer
        ("5,384,434,777 HKD", True),  # base units: the scale is the only difference
        ("HK$5.38bn", True),
        ("5.38", True),  # bare: in the rule's unit
        ("5.40 billion HKD", False),
        ("5,430,000,000 HKD", False),
        ("538 HKD", False),  # neither reading is within the tolerance
        ("-5.38 billion HKD", False),  # a sign mismatch fails under every reading
        ("5.38 billion USD", False),
    ],
)
def test_units_normalise_across_scales_and_languages(answer: str, correct: bool) -> None:
    outcome = match_answer(BILLION_HKD, 5.38, answer)
    assert outcome.correct is correct, outcome.reason


@pytest.mark.parametrize(
    ("answer", "correct"),
    [
        ("(1.25) million CNY", True),
        ("(1.25) million", True),
        ("(125.00)万元", True),
        ("(1.25 million) CNY", True),
        ("1.25 million CNY", False),
    ],
)
def test_accounting_negative_with_a_scale_word(answer: str, correct: bool) -> None:
    rule = MatchRule(rule="approx", unit="million CNY", decimals=2)
    outcome = match_answer(rule, -1.25, answer)
    assert outcome.correct is correct, outcome.reason


def test_fraction_reading_is_named_in_the_reason() -> None:
    outcome = match_answer(MatchRule(rule="approx", unit="%", decimals=2), 1.23, "0.0123")
    assert outcome.correct and "fraction" in outcome.reason


def test_cli_reads_a_date_gold_as_a_date(capsys: pytest.CaptureFixture[str]) -> None:
    from livesearch_pipeline.cli import main

    exact = '{"rule":"exact"}'
    assert main(["match", "--match", exact, "--value", "20140914", "--answer", "2014-09-14"]) == 0
    assert main(["match", "--match", exact, "--value", "2014-09-14", "--answer", "September 14, 2014"]) == 0
    assert main(["match", "--match", exact, "--value", "20140914", "--answer", "2014-09-15"]) == 1
    assert main(["match", "--match", exact, "--value", "20140914", "--value-type", "date",
                 "--answer", "2014年9月14日"]) == 0
    # an exact rule with a unit is a count, not a date: 8 digits stay a number
    assert main(["match", "--match", '{"rule":"exact","unit":"shares"}', "--value", "20140914",
                 "--answer", "20,140,914 shares"]) == 0
    assert main(["match", "--match", exact, "--value", "x", "--value-type", "date", "--answer", "1"]) == 2
    assert "is not a date" in capsys.readouterr().err
