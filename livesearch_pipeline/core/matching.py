"""Deterministic answer matching and the mechanical clamp of proposed rules (DESIGN §4.3).

Numbers: both sides are brought to base units (`unit_scale`) before any rule. The gold value
is given in `gold_unit` (default: the rule's unit). An answer number is read as stated when it
carries a magnitude word, a scaled unit ("手", "bps") or a percent sign; a bare number — or one
that only restates the currency ("1,234.56 CNY") — is read in the rule's unit, because agents
routinely repeat the currency but drop the scale the question asked for ("in 亿元").
The text answered decides that unit and the precision (`text_rule`, issue 28): an answer to a
question's Chinese text (`lang="zh"`) is scored in the Chinese text's unit at the Chinese text's
decimals (the rule's `unit_zh`/`decimals_zh`: 万元 at 2 decimals for a rule in million CNY at 2,
so half a 0.01 万元 step, not half a 0.01 million step), an answer to the English text in the
rule's unit at its decimals.
A bare number is also read the other way a professional may mean it (see `_readings`): in
base units against a scaled rule ("5,384,434,777 HKD" for 5.38 billion HKD) and, for a percent
rule, as a fraction ("0.0123" for 1.23 %, as FinSearchComp's judge accepts), under the same
tolerance in the rule's unit.

A sign mismatch fails under every rule. Float noise from unit scaling is absorbed by a
relative epsilon of 1e-12 (float arithmetic errs by about 1e-16 per step), far below any step a
text asks for; 1e-9 was not: on a gold of 3.2e10 CNY asked in 万元 to 2 decimals (a tolerance of
50 CNY) it added 32 CNY, and an answer one 0.01 万元 step off passed.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import unicodedata
from dataclasses import dataclass

from livesearch_pipeline.core.dategate import find_date_spans, fold_width
from livesearch_pipeline.core.models import ClampDecision, Format, MatchRule
from livesearch_pipeline.core.normalize import (
    CURRENCIES, LANGUAGES, ParsedNumber, final_number, reading_unit, unit_scale,
)

FLOAT_EPSILON = 1e-12
MAX_REL_TOL = 0.01
PLAUSIBLE_YEARS = (1900, 2099)


@dataclass(frozen=True)
class MatchOutcome:
    correct: bool
    reason: str
    needs_judge: bool
    parsed: float | str | None
    candidates: tuple[float, ...] = ()


# --------------------------------------------------------------------------- text


_PUNCT_OR_SPACE = re.compile(r"[\W_]+", re.UNICODE)
# Legal-form suffixes that name the same company with or without them: whole words at the end
# (two-word forms first, since "company" alone is not one), or Chinese forms glued to the last
# word (longest first: "股份有限公司" must not stop at "公司").
_COMPANY_SUFFIX_PAIRS = frozenset({("co", "ltd"), ("company", "limited")})
_COMPANY_SUFFIX_WORDS = frozenset({
    "coltd", "co", "ltd", "limited", "inc", "incorporated", "corp", "corporation", "plc", "llc",
    "group", "holding", "holdings", "sa", "ag", "nv",
})
_COMPANY_SUFFIXES_CN = ("股份有限公司", "有限责任公司", "有限公司", "集团", "控股", "公司")


def normalize_text(text: str) -> str:
    """NFKC, casefold, punctuation and whitespace collapsed to single spaces."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _PUNCT_OR_SPACE.sub(" ", folded).strip()


def _strip_company_suffix(normalized: str) -> str:
    """`normalized` without trailing legal-form suffixes; unchanged when nothing else is left.

    Words are popped from the end, so the cost is linear in the text: an end-anchored regex
    is retried at every position, and alternatives such as "co ltd" / "co" + "ltd" made it
    backtrack exponentially on an answer repeating them.
    """
    words = normalized.split()
    while words:
        if len(words) >= 2 and (words[-2], words[-1]) in _COMPANY_SUFFIX_PAIRS:
            del words[-2:]
        elif words[-1] in _COMPANY_SUFFIX_WORDS:
            words.pop()
        else:
            last = words[-1]
            suffix = next((s for s in _COMPANY_SUFFIXES_CN if last.endswith(s)), None)
            if suffix is None:
                break
            last = last[: -len(suffix)]
            if last:
                words[-1] = last
            else:
                words.pop()
    return " ".join(words) or normalized


_DATE_FORMATS = (
    "%Y%m%d", "%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d", "%Y年%m月%d日",
    "%B %d %Y", "%B %d, %Y", "%b %d %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y",
    "%m/%d/%Y",
)
_ORDINAL_SUFFIX = re.compile(r"(?<=\d)(?:st|nd|rd|th)\b")
_ABBREVIATION_DOT = re.compile(r"(?<=[A-Za-z])\.")
_SPACES = re.compile(r"\s+")
_SPACED_CN_DATE_CHAR = re.compile(r"\s*([年月日])\s*")
_EIGHT_DIGITS = re.compile(r"\d{8}")
# strptime reads %d, %m and %Y with the regex class \d: a text without one cannot be a date.
_ANY_DIGIT = re.compile(r"\d")


# Gold texts repeat on every answer scored against them, and strptime is slow.
@functools.lru_cache(maxsize=4096)
def parse_date(text: str) -> dt.date | None:
    """A calendar date written in one of the common forms, else None."""
    cleaned = fold_width(text).strip()
    if not _ANY_DIGIT.search(cleaned):
        return None
    cleaned = _ORDINAL_SUFFIX.sub("", cleaned)
    cleaned = _ABBREVIATION_DOT.sub("", cleaned)
    cleaned = _SPACES.sub(" ", cleaned).replace(" ,", ",")
    cleaned = _SPACED_CN_DATE_CHAR.sub(r"\1", cleaned)
    for fmt in _DATE_FORMATS:
        if fmt == "%Y%m%d" and not _EIGHT_DIGITS.fullmatch(cleaned):
            continue  # strptime would read a code such as "600519" as 6005-01-09
        try:
            parsed = dt.datetime.strptime(cleaned, fmt).date()
        except ValueError:
            continue
        if PLAUSIBLE_YEARS[0] <= parsed.year <= PLAUSIBLE_YEARS[1]:
            return parsed
    return None


def _date_texts(answer: str) -> list[str]:
    """Date spans of the answer, adjacent ones joined ("2026年" + "10月27日" is one date)."""
    merged: list[tuple[int, int]] = []
    for hit in find_date_spans(answer):
        if merged and not answer[merged[-1][1]:hit.start].strip():
            merged[-1] = (merged[-1][0], hit.end)
        else:
            merged.append((hit.start, hit.end))
    return [answer[start:end] for start, end in merged]


def _match_date(gold: dt.date, gold_text: str, answer: str) -> MatchOutcome:
    stated = {d for d in (parse_date(t) for t in _date_texts(answer)) if d is not None}
    if not stated:
        return MatchOutcome(False, f"no date in the answer (gold {gold_text})", False, None)
    if stated == {gold}:
        return MatchOutcome(True, f"date {gold.isoformat()} matches", False, gold.isoformat())
    if gold in stated:
        listed = ", ".join(sorted(d.isoformat() for d in stated))
        return MatchOutcome(False, f"several dates in the answer ({listed}); gold {gold.isoformat()}",
                            True, None)
    listed = ", ".join(sorted(d.isoformat() for d in stated))
    return MatchOutcome(False, f"date {listed} differs from gold {gold.isoformat()}", False, listed)


def _contains_phrase(haystack: str, needle: str) -> bool:
    return bool(needle) and f" {needle} " in f" {haystack} "


def _match_text(rule: MatchRule, gold: str, answer: str, aliases: tuple[str, ...] = ()) -> MatchOutcome:
    gold_date = parse_date(gold)
    if gold_date is not None:
        return _match_date(gold_date, gold, answer)
    gold_norm, answer_norm = normalize_text(gold), normalize_text(answer)
    if not gold_norm:
        raise ValueError(f"gold text {gold!r} is empty after normalisation")
    if answer_norm == gold_norm:
        return MatchOutcome(True, "text equal after normalisation", False, answer_norm)
    # The gold label's names in the other language (the lexicon's reviewed labels): equal to one
    # of them is the same label, not a paraphrase a judge must weigh.
    for alias in aliases:
        alias_norm = normalize_text(alias)
        if alias_norm and (answer_norm == alias_norm or (
                rule.rule == "semantic" and _strip_company_suffix(answer_norm) == _strip_company_suffix(alias_norm))):
            return MatchOutcome(True, f"text equals {alias!r}, a name of the gold label {gold!r}", False, answer_norm)
    if rule.rule == "exact":
        if _contains_phrase(answer_norm, gold_norm):
            return MatchOutcome(False, f"gold text {gold!r} appears inside a longer answer; "
                                "only a judge can tell whether it is the answer", True, answer_norm)
        return MatchOutcome(False, f"text differs from gold {gold!r}", False, answer_norm)
    gold_core, answer_core = _strip_company_suffix(gold_norm), _strip_company_suffix(answer_norm)
    if gold_core == answer_core:
        return MatchOutcome(True, "text equal after normalisation and legal-form suffixes removed",
                            False, answer_norm)
    return MatchOutcome(False, f"semantic: text differs from gold {gold!r} after normalisation; "
                        "needs a judge", True, answer_norm)


# --------------------------------------------------------------------------- numbers


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def _approx_tolerance(rule: MatchRule, factor: float, gold_base: float) -> tuple[float, str]:
    """The allowed |answer - gold| in base units, and how it was derived."""
    allowed: list[tuple[float, str]] = []
    if rule.abs_tol is not None:
        allowed.append((rule.abs_tol * factor, f"abs_tol {_fmt(rule.abs_tol)}"))
    if rule.rel_tol is not None:
        allowed.append((rule.rel_tol * abs(gold_base), f"rel_tol {_fmt(rule.rel_tol)}"))
    if not allowed:
        if rule.decimals is None:
            raise ValueError("an approx rule needs abs_tol, rel_tol or decimals to define its tolerance")
        half_unit = 0.5 * 10.0 ** -rule.decimals
        allowed.append((half_unit * factor, f"rounding at {rule.decimals} decimals"))
    return max(allowed, key=lambda pair: pair[0])


def _unit_conflict(number: ParsedNumber, rule_base: str | None) -> str | None:
    if rule_base is None:
        return None
    if number.is_percent and rule_base != "%":
        return f"unit mismatch: the answer is a percentage, the rule's unit is {rule_base}"
    if number.unit is not None and number.unit != rule_base:
        kind = "currency" if number.unit in CURRENCIES and rule_base in CURRENCIES else "unit"
        return f"{kind} mismatch: the answer is in {number.unit}, the rule's unit is {rule_base}"
    return None


def text_rule(rule: MatchRule, lang: str) -> MatchRule:
    """The rule an answer to the `lang` text of a question is scored under (DESIGN §4.3).

    "en": `rule` itself. "zh": the same rule in the Chinese text's unit at the Chinese text's
    precision: `unit_zh`/`decimals_zh` when recorded (`decimals_zh` set), else the unit
    `reading_unit` derives (the table construction wrote the Chinese text with) at the English
    decimals. An `abs_tol` keeps its count of steps of the last decimal ("0.01 million CNY" at
    2 decimals is "0.01 万元" at 2), so a Chinese text asking a 100× finer unit is held to a
    100× finer tolerance; `rel_tol` is unit-free and kept. ValueError for an unknown language
    or a Chinese unit that is not the English unit's quantity.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"unknown answer language {lang!r}; expected one of {', '.join(LANGUAGES)}")
    if lang == "en":
        return rule
    if rule.decimals_zh is not None:
        unit, decimals = rule.unit_zh, rule.decimals_zh
    else:
        unit, decimals = reading_unit(rule.unit, lang), rule.decimals
    if (unit, decimals) == (rule.unit, rule.decimals):
        return rule
    base, _ = unit_scale(rule.unit)
    zh_base, _ = unit_scale(unit)
    if zh_base != base:
        raise ValueError(f"the zh text's unit {unit!r} ({zh_base}) is not convertible to the rule's unit "
                         f"{rule.unit!r} ({base})")
    abs_tol = rule.abs_tol
    if abs_tol is not None:
        if rule.decimals is not None and decimals is not None:
            abs_tol = abs_tol * 10.0 ** (rule.decimals - decimals)
        else:  # no decimals to count steps in: the same tolerance, converted to the Chinese unit
            abs_tol = abs_tol * unit_scale(rule.unit)[1] / unit_scale(unit)[1]
    return MatchRule(rule=rule.rule, abs_tol=abs_tol, rel_tol=rule.rel_tol, unit=unit, decimals=decimals)


def _match_number(rule: MatchRule, gold_value: float, answer: str, gold_unit: str | None,
                  lang: str = "en") -> MatchOutcome:
    if rule.rule == "semantic":
        raise ValueError("a semantic rule cannot score a numeric gold value: numbers are never semantic")
    if not math.isfinite(gold_value):
        raise ValueError(f"gold value {gold_value!r} is not a finite number")
    rule_base, _ = unit_scale(rule.unit)
    gold_base_unit, gold_factor = unit_scale(gold_unit if gold_unit is not None else rule.unit)
    if gold_base_unit != rule_base:
        raise ValueError(f"gold unit {gold_unit!r} ({gold_base_unit}) is not convertible to the rule's "
                         f"unit {rule.unit!r} ({rule_base})")
    gold_base = gold_value * gold_factor
    # The answer is scored in the unit and at the precision of the text it answers (issue 28):
    # a bare number is read in that unit, the tolerance is that text's.
    english_unit = rule.unit
    rule = text_rule(rule, lang)
    _, rule_factor = unit_scale(rule.unit)
    read_note = f" (read in {rule.unit}, the {lang} text's unit)" if rule.unit != english_unit else ""

    # "元/股": an answer states the numerator ("1.23元"), rarely the "per share".
    stated_base = rule_base.split("/")[0] if rule_base is not None else None
    chosen, candidates = final_number(answer, expect_percent=(rule_base == "%"), expect_unit=stated_base)
    if chosen is None and not candidates:
        unfiltered, _ = final_number(answer)
        conflict = unfiltered and _unit_conflict(unfiltered, stated_base)
        if conflict:
            return MatchOutcome(False, conflict, False, unfiltered.value)
        return MatchOutcome(False, "no number compatible with the rule's unit in the answer", False, None)
    if chosen is None:
        values = tuple(c.value / rule_factor if _reads_as_stated(c) else c.value for c in candidates)
        return MatchOutcome(False, "ambiguous: several candidate numbers and no final-answer marker; "
                            "needs a judge to extract the answer", True, None, values)
    conflict = _unit_conflict(chosen, stated_base)
    if conflict:
        return MatchOutcome(False, conflict, False, chosen.value)

    readings = _readings(chosen, rule_factor, rule_base, read_note)
    unit_label = f" {rule.unit}" if rule.unit else ""
    answer_base = readings[0][0]
    in_rule_unit = answer_base / rule_factor
    if answer_base != 0 and gold_base != 0 and (answer_base < 0) != (gold_base < 0):
        return MatchOutcome(False, f"sign mismatch: answer {_fmt(in_rule_unit)}{unit_label}, "
                            f"gold {_fmt(gold_base / rule_factor)}{unit_label}", False, in_rule_unit)
    outcomes = [_compare(rule, reading, note, gold_base, rule_factor, unit_label) for reading, note in readings]
    return next((o for o in outcomes if o.correct), outcomes[0])


def _readings(chosen: ParsedNumber, rule_factor: float, rule_base: str | None,
              note: str = "") -> list[tuple[float, str]]:
    """The answer number in base units, as a grader may read it: first as stated (a bare number
    in `rule_factor`, the factor of the answered text's unit, said by `note` when it is not the
    rule's), then the alternatives a professional's answer may mean.

    - A bare number against a scaled rule ("billion HKD") may be in base units: "5,384,434,777
      HKD" is 5.38 billion HKD. The two readings differ by the scale (at least 1,000), so no
      wrong answer passes under the other reading by accident.
    - A bare number against a percent rule may be a fraction, as FinSearchComp's judge accepts:
      "0.0123" for 1.23 %. It is compared in percent points under the same tolerance, so it
      must carry two more decimals than the rule ("0.0123" passes 1.23 % at 2 decimals,
      "0.012" does not). A sign mismatch fails under every reading.
    """
    if _reads_as_stated(chosen):
        return [(chosen.value, "")]
    readings = [(chosen.value * rule_factor, note)]
    if rule_base == "%":
        readings.append((chosen.value * 100.0, " (read as a fraction)"))
    elif rule_factor != 1.0:
        readings.append((chosen.value, " (read in base units)"))
    return readings


def _compare(rule: MatchRule, answer_base: float, note: str, gold_base: float, rule_factor: float,
             unit_label: str) -> MatchOutcome:
    in_rule_unit = answer_base / rule_factor
    difference = abs(answer_base - gold_base)
    gold_shown = f"gold {_fmt(gold_base / rule_factor)}{unit_label}"
    if rule.rule == "exact":
        equal = math.isclose(answer_base, gold_base, rel_tol=FLOAT_EPSILON, abs_tol=0.0)
        verdict = "equals" if equal else "differs from"
        return MatchOutcome(equal, f"exact: {_fmt(in_rule_unit)}{unit_label}{note} {verdict} {gold_shown}",
                            False, in_rule_unit)
    tolerance, source = _approx_tolerance(rule, rule_factor, gold_base)
    within = difference <= tolerance * (1 + FLOAT_EPSILON) + FLOAT_EPSILON * abs(gold_base)
    relation = "<=" if within else ">"
    return MatchOutcome(
        within,
        f"approx: |{_fmt(in_rule_unit)} - {_fmt(gold_base / rule_factor)}|{unit_label}{note} = "
        f"{_fmt(difference / rule_factor)} {relation} {_fmt(tolerance / rule_factor)} ({source})",
        False, in_rule_unit,
    )


def _reads_as_stated(number: ParsedNumber) -> bool:
    return number.scale != 1.0 or number.is_percent


def match_answer(
    rule: MatchRule,
    gold_value: float | int | str,
    answer: str | None,
    *,
    gold_unit: str | None = None,
    lang: str = "en",
    aliases: tuple[str, ...] = (),
) -> MatchOutcome:
    """Score one answer against the gold value under `rule`, deterministically.

    `lang` names the question text the answer replies to ("en" or "zh"): a bare number is read
    in that text's unit. `aliases` are other names of a text gold value (the lexicon's English
    and Chinese labels); an answer equal to one of them is correct without a judge.

    `needs_judge` is set (with `correct=False`) when only an LLM can decide: a semantic rule
    whose normalised texts differ, a gold text inside a longer answer, or several candidate
    numbers without a final-answer marker. Bad rule/unit input raises ValueError.
    """
    if isinstance(gold_value, bool):
        raise ValueError("gold value is a boolean; expected a number or a string")
    if answer is None or not answer.strip():
        return MatchOutcome(False, "no answer", False, None)
    if isinstance(gold_value, str):
        if rule.rule == "approx":
            raise ValueError(f"an approx rule cannot score the text gold value {gold_value!r}")
        return _match_text(rule, gold_value, answer, tuple(aliases))
    return _match_number(rule, float(gold_value), answer, gold_unit, lang)


# --------------------------------------------------------------------------- clamp

NUMERIC_KINDS = frozenset({"number", "integer", "int", "float", "percent"})
TEXT_KINDS = frozenset({"text", "str", "date"})


def _derived_reasons(fmt: Format, aggregate: str | None, value: float | None) -> list[str]:
    reasons = []
    if aggregate is not None:
        reasons.append(f"aggregate {aggregate!r}")
    if fmt.scale != 1.0:
        reasons.append(f"scale {fmt.scale:g}")
    if fmt.kind == "percent" or fmt.unit == "%":
        reasons.append("percent unit")
    if fmt.kind in ("number", "percent"):
        reasons.append(f"rounded to {fmt.decimals} decimals")
    if fmt.kind == "integer" and value is not None and not float(value).is_integer():
        reasons.append("rounded to an integer")
    return reasons


def clamp_rule(
    proposed: MatchRule,
    fmt: Format,
    *,
    aggregate: str | None,
    value_kind: str,
    value: float | None = None,
    zh_precision: tuple[str | None, int | None] | None = None,
) -> tuple[MatchRule, list[ClampDecision]]:
    """Bring a proposed rule within the bounds of DESIGN §4.3; record every change.

    Numbers: never semantic; exact only when nothing marks the value as derived (no
    aggregate, scale 1, no percent, no rounding format), else approx; unit and decimals come
    from the format; rel_tol at most 1 %; abs_tol at most 1 % of |value| (left unchecked, and
    said so, without a value); an approx tolerance never tighter than the format's own
    rounding (half a unit of the last decimal), since a correctly rounded answer must pass.
    `zh_precision`, the (unit, decimals) the question's Chinese text asks for (construction's
    `formats.zh_unit`; None: no Chinese text), becomes `unit_zh`/`decimals_zh` (an empty or
    None unit: the format's own, None decimals: 0, as for the English text); a unit of another
    quantity than the format's raises ValueError.
    Text: never approx (a date format becomes exact, other text semantic); no tolerances and
    no Chinese precision.
    Decisions list each changed field; when nothing changed, one "accepted" decision.
    """
    if value_kind in NUMERIC_KINDS:
        if fmt.kind in ("date", "text"):
            raise ValueError(f"value kind {value_kind!r} does not fit format kind {fmt.kind!r}")
        rule, decisions = _clamp_numeric(proposed, fmt, aggregate, value, zh_precision)
    elif value_kind in TEXT_KINDS:
        if fmt.kind not in ("date", "text"):
            raise ValueError(f"value kind {value_kind!r} does not fit format kind {fmt.kind!r}")
        rule, decisions = _clamp_text(proposed, fmt)
    else:
        kinds = ", ".join(sorted(NUMERIC_KINDS | TEXT_KINDS))
        raise ValueError(f"unknown value kind {value_kind!r}; expected one of {kinds}")
    if not decisions:
        decisions.append(ClampDecision(field="rule", proposed=proposed.rule, applied=rule.rule,
                                       reason="accepted: the proposal is within bounds"))
    return rule, decisions


def _change(decisions: list[ClampDecision], fields: dict[str, object], name: str,
            applied: object, reason: str, proposed: MatchRule) -> None:
    """Set `fields[name]`; keep one decision per field, and none when it ends as proposed."""
    fields[name] = applied
    decisions[:] = [d for d in decisions if d.field != name]
    original = getattr(proposed, name)
    if original != applied:
        decisions.append(ClampDecision(field=name, proposed=original, applied=applied, reason=reason))


def _clamp_zh_precision(decisions: list[ClampDecision], fields: dict[str, object], proposed: MatchRule,
                        unit: str | None, zh_precision: tuple[str | None, int | None] | None) -> None:
    if zh_precision is None:
        _change(decisions, fields, "unit_zh", None, "no Chinese text", proposed)
        _change(decisions, fields, "decimals_zh", None, "no Chinese text", proposed)
        return
    zh_word, zh_decimals = zh_precision
    unit_zh = zh_word or unit
    if unit_scale(unit_zh)[0] != unit_scale(unit)[0]:
        raise ValueError(f"the Chinese text's unit {unit_zh!r} is not a unit of the same quantity as {unit!r}")
    _change(decisions, fields, "unit_zh", unit_zh, "unit the Chinese text asks for", proposed)
    _change(decisions, fields, "decimals_zh", zh_decimals if zh_decimals is not None else 0,
            "decimals the Chinese text asks for", proposed)


def _clamp_numeric(proposed: MatchRule, fmt: Format, aggregate: str | None, value: float | None,
                   zh_precision: tuple[str | None, int | None] | None) -> tuple[MatchRule, list[ClampDecision]]:
    fields: dict[str, object] = proposed.model_dump()
    decisions: list[ClampDecision] = []
    unit = "%" if fmt.kind == "percent" else fmt.unit
    decimals = fmt.decimals if fmt.decimals is not None else 0
    _change(decisions, fields, "unit", unit, "unit copied from the format", proposed)
    _change(decisions, fields, "decimals", decimals, "decimals copied from the format", proposed)
    _clamp_zh_precision(decisions, fields, proposed, unit, zh_precision)

    derived = _derived_reasons(fmt, aggregate, value)
    if proposed.rule == "semantic":
        _change(decisions, fields, "rule", "approx", "numbers are never semantic", proposed)
    elif proposed.rule == "exact" and derived:
        _change(decisions, fields, "rule", "approx",
                "exact is only for underived values; derived by " + ", ".join(derived), proposed)
    if fields["rule"] == "exact":
        _change(decisions, fields, "abs_tol", None, "an exact rule has no tolerance", proposed)
        _change(decisions, fields, "rel_tol", None, "an exact rule has no tolerance", proposed)
        return MatchRule(**fields), decisions

    if proposed.rel_tol is not None and proposed.rel_tol > MAX_REL_TOL:
        _change(decisions, fields, "rel_tol", MAX_REL_TOL, "rel_tol clamped to 1 %", proposed)
    half_unit = 0.5 * 10.0 ** -decimals
    abs_tol = proposed.abs_tol
    if abs_tol is not None and value is not None and abs_tol > MAX_REL_TOL * abs(value):
        cap = max(MAX_REL_TOL * abs(value), half_unit)
        if cap < abs_tol:
            _change(decisions, fields, "abs_tol", cap,
                    f"abs_tol clamped to 1 % of |value| ({_fmt(abs(value))}), not below the rounding", proposed)
    elif abs_tol is not None and value is None:
        decisions.append(ClampDecision(field="abs_tol", proposed=abs_tol, applied=abs_tol,
                                       reason="kept unchecked: no value given to bound it by 1 %"))
    current_abs = fields["abs_tol"]
    tighter_than_rounding = (current_abs is not None and current_abs < half_unit) or (
        current_abs is None and fields["rel_tol"] is not None
        and (value is None or fields["rel_tol"] * abs(value) < half_unit))
    if tighter_than_rounding:
        _change(decisions, fields, "abs_tol", half_unit,
                f"raised to the format's rounding at {decimals} decimals", proposed)
    return MatchRule(**fields), decisions


def _clamp_text(proposed: MatchRule, fmt: Format) -> tuple[MatchRule, list[ClampDecision]]:
    fields: dict[str, object] = proposed.model_dump()
    decisions: list[ClampDecision] = []
    if fmt.kind == "date" and proposed.rule != "exact":
        _change(decisions, fields, "rule", "exact",
                "dates are compared deterministically, whatever their written form", proposed)
    elif proposed.rule == "approx":
        _change(decisions, fields, "rule", "semantic", "text is never approx", proposed)
    for name in ("abs_tol", "rel_tol", "decimals", "unit_zh", "decimals_zh"):
        _change(decisions, fields, name, None, "text takes no tolerance or decimals", proposed)
    _change(decisions, fields, "unit", fmt.unit, "unit copied from the format", proposed)
    return MatchRule(**fields), decisions
