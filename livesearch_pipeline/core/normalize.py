"""Answer normalisation: units, magnitude words, currencies and signs (DESIGN §4.3).

Units are brought to a base unit and a factor before any rule compares numbers:
`unit_scale("亿元") == ("CNY", 1e8)`, `unit_scale("手") == ("shares", 100.0)`,
`unit_scale("bps") == ("%", 0.01)`. Base units: CNY, USD, HKD, shares, points, %, x (times),
units (fund units), or None for a dimensionless count.

`parse_numbers` reads every number an answer states, in English or Chinese, with its sign,
magnitude word, currency and unit; `final_number` picks the one a careful grader would take
as the final answer, or reports that the choice is ambiguous.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass

from livesearch_pipeline.core.dategate import find_date_spans, fold_width

CURRENCIES = ("CNY", "USD", "HKD")

# --------------------------------------------------------------------------- units

_CN_MAGNITUDE = {"十": 10.0, "百": 1e2, "千": 1e3, "万": 1e4, "亿": 1e8}
_EN_MAGNITUDE = {
    "thousand": 1e3, "k": 1e3,
    "million": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6,
    "billion": 1e9, "bn": 1e9, "b": 1e9,
    "trillion": 1e12, "tn": 1e12,
}
# Base-unit words (casefolded) -> (base unit, factor).
_BASE_WORDS: dict[str, tuple[str, float]] = {
    **{w: ("CNY", 1.0) for w in ("cny", "rmb", "yuan", "元", "人民币", "人民币元", "¥")},
    **{w: ("USD", 1.0) for w in ("usd", "us$", "$", "美元", "dollar", "dollars")},
    **{w: ("HKD", 1.0) for w in ("hkd", "hk$", "港元", "港币")},
    **{w: ("shares", 1.0) for w in ("shares", "share", "股")},
    **{w: ("shares", 100.0) for w in ("lots", "lot", "手")},
    **{w: ("points", 1.0) for w in ("points", "point", "pts", "点")},
    **{w: ("%", 1.0) for w in ("%", "percent", "pct", "百分点", "个百分点", "pp", "ppt", "ppts")},
    **{w: ("%", 0.01) for w in ("bps", "bp", "基点")},
    **{w: ("x", 1.0) for w in ("x", "times", "倍")},
    **{w: ("units", 1.0) for w in ("units", "unit", "份")},
    # Index levels (price indices, CPI bases) are points; FX quotes are in the quote currency.
    **{w: ("points", 1.0) for w in ("index",)},
    **{w: ("quote currency", 1.0) for w in ("quote currency", "quote_currency")},
    **{w: ("pips", 1.0) for w in ("pips", "pip")},
    **{w: ("ticks", 1.0) for w in ("ticks", "tick")},
}
# A numeric magnitude glued to a word, as data vendors write it: "100M CNY", "10k shares".
_NUMERIC_MAGNITUDE = re.compile(r"^(\d+(?:\.\d+)?)([a-z]*)$")
_CN_BASE = sorted((w for w in _BASE_WORDS if re.fullmatch(r"[\u4e00-\u9fff]+", w)), key=len, reverse=True)
_CN_UNIT = re.compile(rf"([十百千万亿]*)({'|'.join(_CN_BASE)})?")


def _magnitude_of_cn(chars: str) -> float:
    factor = 1.0
    for ch in chars:
        factor *= _CN_MAGNITUDE[ch]
    return factor


def _scale_of_part(part: str, original: str) -> tuple[str | None, float]:
    text = unicodedata.normalize("NFKC", part).strip().casefold()
    text = re.sub(r"basis\s+points?", "bps", text)
    text = re.sub(r"per\s*cent", "percent", text)
    text = re.sub(r"percentage\s+points?", "pp", text)
    # Split a leading currency symbol from an attached magnitude ("$bn", "us$m").
    text = re.sub(r"^(us\$|hk\$|\$|¥)(?=\w)", r"\1 ", text)
    text = re.sub(r"\bquote\s+currency\b", "quote_currency", text)
    if not text:
        raise ValueError(f"empty unit in {original!r}")
    base: str | None = None
    factor = 1.0
    for token in re.split(r"\s+", text):
        numeric = _NUMERIC_MAGNITUDE.fullmatch(token)
        if numeric and (not numeric.group(2) or numeric.group(2) in _EN_MAGNITUDE):
            factor *= float(numeric.group(1)) * (_EN_MAGNITUDE[numeric.group(2)] if numeric.group(2) else 1.0)
            continue
        if token in _EN_MAGNITUDE:
            factor *= _EN_MAGNITUDE[token]
            continue
        if token in _BASE_WORDS:
            token_base, token_factor = _BASE_WORDS[token]
        else:
            m = _CN_UNIT.fullmatch(token)
            if m is None or not token:
                raise ValueError(f"unknown unit {original!r}: cannot read {token!r}")
            magnitude, word = m.group(1), m.group(2)
            factor *= _magnitude_of_cn(magnitude)
            if word is None:
                continue
            token_base, token_factor = _BASE_WORDS[word]
        if base is not None and base != token_base:
            raise ValueError(f"unknown unit {original!r}: names both {base!r} and {token_base!r}")
        base = token_base
        factor *= token_factor
    return base, factor


# Units come from a handful of rule and gold strings, repeated on every answer scored.
@functools.lru_cache(maxsize=4096)
def unit_scale(unit: str | None) -> tuple[str | None, float]:
    """(base unit, factor) of a unit string; value_in_base = value_in_unit * factor.

    "USD million" -> ("USD", 1e6); "千元" -> ("CNY", 1e3); "万股" -> ("shares", 1e4);
    "手" -> ("shares", 100); "bps" -> ("%", 0.01); "元/股" -> ("CNY/shares", 1).
    None means a dimensionless value: (None, 1.0). An unknown unit raises ValueError.
    """
    if unit is None:
        return None, 1.0
    if not unit.strip():
        raise ValueError("empty unit string; use None for a dimensionless value")
    parts = re.sub(r"\s+per\s+", "/", unit.strip()).split("/")
    if len(parts) > 2:
        raise ValueError(f"unknown unit {unit!r}: more than one '/'")
    base, factor = _scale_of_part(parts[0], unit)
    if len(parts) == 2:
        per_base, per_factor = _scale_of_part(parts[1], unit)
        return f"{base}/{per_base}", factor / per_factor
    return base, factor


# The unit a question's Chinese text asks in, given its answer unit (the English rule's unit):
# one scale finer, 亿 for billion and 万 for million (construction/formats.py `zh_unit`, which
# writes the Chinese text; a test holds the two tables equal). Rules built since issue 28 record
# it (`MatchRule.unit_zh`); `reading_unit` derives it for the rules built before.
ZH_BASE_WORDS = {"CNY": "元", "HKD": "港元", "USD": "美元", "shares": "股", "units": "份", "points": "点", "lots": "手"}
ZH_SCALE_WORDS = {"billion": "亿", "million": "万", "": ""}
LANGUAGES = ("en", "zh")


def reading_unit(unit: str | None, lang: str) -> str | None:
    """The unit a bare number answering the `lang` text of a question is read in.

    "en" (or a unit without a Chinese counterpart): `unit` itself. "zh": the Chinese text's
    unit, "million shares" -> "万股", "billion CNY" -> "亿元", "CNY" -> "元"; a percent or
    unitless answer stays as it is.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"unknown answer language {lang!r}; expected one of {', '.join(LANGUAGES)}")
    if lang == "en" or unit is None:
        return unit
    word, _, base = unit.strip().rpartition(" ")
    if base not in ZH_BASE_WORDS or word not in ZH_SCALE_WORDS:
        return unit
    return ZH_SCALE_WORDS[word] + ZH_BASE_WORDS[base]


# --------------------------------------------------------------------------- parsing numbers


@dataclass(frozen=True)
class ParsedNumber:
    """One number stated in a text.

    `value` is in base units: numeral x `scale` x sign, where `scale` multiplies the magnitude
    word ("billion", "亿"), a scaled unit ("手" = 100 shares) and basis points (0.01 %).
    Percentages stay in percent points. `unit` is the base unit the text stated (a currency,
    "shares", "points", "%", "x", "units") or None; `currency` repeats it when it is one.
    """

    value: float
    raw: str
    start: int
    end: int
    is_percent: bool
    scale: float
    currency: str | None
    negative_by: str | None
    unit: str | None = None


_NUMERAL = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_CURRENCY_PREFIX = r"US\$|HK\$|\$|¥|(?i:RMB|CNY|USD|HKD)|人民币"
_LEFT = re.compile(
    rf"(?P<open>\(\s*)?(?P<neg>-|负|(?i:minus)\s+)?\s*(?P<cur>{_CURRENCY_PREFIX})?\s*(?P<neg2>-)?"
    r"\s*(?P<pct>百分之)?\Z"
)
_EN_MAG = r"(?i:thousand|million|billion|trillion)\b|(?:mn|mm|bn|Bn|BN|tn)(?![A-Za-z])"
_EN_MAG_ATTACHED = r"(?:[kKmMbBT])(?![A-Za-z])"
_UNIT_WORDS = (
    r"(?i:US\s+dollars?|HK\s+dollars?|Hong\s+Kong\s+dollars?|dollars?|yuan|USD|HKD|CNY|RMB"
    r"|shares?|lots?|points?|pts|units|times)\b"
    r"|人民币元|人民币|美元|港元|港币|元|股|手|点|倍|份"
    r"|x(?![A-Za-z])"
)
_RIGHT = re.compile(
    r"(?P<pct>\s*(?:%|(?i:percentage\s+points?|percent|per\s*cent|pct|pp|ppts?)\b|个百分点|百分点))?"
    r"(?P<bps>\s*(?:(?i:bps|bp|basis\s+points?)\b|个基点|基点))?"
    rf"(?:(?P<mag_en>\s?(?:{_EN_MAG})|{_EN_MAG_ATTACHED})|(?P<mag_cn>\s?[十百千万亿]+))?"
    rf"(?P<unit>\s*(?:{_UNIT_WORDS}))?"
    r"(?P<close>\s*\))?"
)
# A magnitude and unit written after an accounting negative's closing parenthesis:
# "(1.25) million CNY" is minus 1.25 million CNY.
_AFTER_CLOSE = re.compile(
    rf"(?:(?P<mag_en>\s?(?:{_EN_MAG}))|(?P<mag_cn>\s?[十百千万亿]+))?(?P<unit>\s*(?:{_UNIT_WORDS}))?"
)
_UNIT_WORD_BASE = {
    "us dollar": "USD", "us dollars": "USD", "dollar": "USD", "dollars": "USD",
    "hk dollar": "HKD", "hk dollars": "HKD", "hong kong dollar": "HKD", "hong kong dollars": "HKD",
}
_LISTING_SUFFIX = re.compile(r"\.(?:SH|SZ|HK|BJ|SS|US)\b")
_ENUMERATOR_LINE = re.compile(r"(?m)^[ \t]*(?:[-*][ \t]+)?(\d{1,2})[.)][ \t]")
# A list label needs a digit, then "." or ")", then a blank: a fast scan rules most texts out
# before the slower line-anchored pattern runs.
_ENUMERATOR_HINT = re.compile(r"\d[.)][ \t]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_WORD_OR_DOT = re.compile(r"[\w.]")
_LIST_LABEL = re.compile(r"\d{1,2}")


@functools.lru_cache(maxsize=1024)
def _unit_of_word(word: str) -> tuple[str, float]:
    key = re.sub(r"\s+", " ", word.strip().casefold())
    if key in _UNIT_WORD_BASE:
        return _UNIT_WORD_BASE[key], 1.0
    return _BASE_WORDS[key]


def _magnitude(m: re.Match[str]) -> float:
    if m.group("mag_cn"):
        return _magnitude_of_cn(m.group("mag_cn").strip())
    if m.group("mag_en"):
        return _EN_MAGNITUDE[m.group("mag_en").strip().casefold()]
    return 1.0


def _sign_marker(folded: str, left: re.Match[str]) -> str | None:
    """The explicit negative marker before a number, if any ("-", "负", "minus")."""
    group = "neg" if left.group("neg") else "neg2" if left.group("neg2") else None
    if group is None:
        return None
    token = left.group(group).strip()
    sign_start = left.start(group)
    if token == "-" and sign_start and _WORD_OR_DOT.match(folded[sign_start - 1]):
        return None  # a hyphen or range dash ("2024-25", "T-1"), not a sign
    return "minus" if token.casefold() == "minus" else token


def _enumerator_starts(folded: str) -> set[int]:
    if not _ENUMERATOR_HINT.search(folded):
        return set()
    return {m.start(1) for m in _ENUMERATOR_LINE.finditer(folded)}


def parse_numbers(text: str) -> list[ParsedNumber]:
    """Every number stated in `text`, in order, with sign, scale, currency and unit.

    Skipped: numbers inside absolute dates ("2026-10-27", "10月27日"), parts of identifiers
    ("600519.SH", "Q3", "A1"), list labels ("1. ", "(2)").
    """
    folded = fold_width(text)
    date_spans = find_date_spans(text, include_bare_years=False)
    enumerators = _enumerator_starts(folded)
    numbers: list[ParsedNumber] = []
    # Numerals and date spans both come in start order: the spans starting before a numeral's end
    # grow as a prefix, and the numeral overlaps one of them exactly when their furthest end is
    # past its start. One pass over both, instead of every span for every numeral.
    next_span, furthest_end = 0, -1
    for m in _NUMERAL.finditer(folded):
        n_start, n_end = m.start(), m.end()
        while next_span < len(date_spans) and date_spans[next_span].start < n_end:
            furthest_end = max(furthest_end, date_spans[next_span].end)
            next_span += 1
        if furthest_end > n_start:
            continue
        if n_start in enumerators or _LISTING_SUFFIX.match(folded, n_end):
            continue
        if folded[n_end:n_end + 1] == "_" or (n_start and folded[n_start - 1] in "._"):
            continue
        previous_end = numbers[-1].end if numbers else None
        number = _read_number(text, folded, m, previous_end)
        if number is not None:
            numbers.append(number)
    return numbers


def _read_number(text: str, folded: str, m: re.Match[str], previous_end: int | None) -> ParsedNumber | None:
    """The number around numeral `m` with its context, or None when it is not a value."""
    n_start, n_end = m.start(), m.end()
    left = _LEFT.search(folded, max(0, n_start - 12), n_start)
    right = _RIGHT.match(folded, n_end)
    assert left is not None and right is not None  # all groups optional: empty matches exist
    prefix_groups = [g for g in ("open", "neg", "cur", "neg2", "pct") if left.group(g)]
    prefix_start = left.start(prefix_groups[0]) if prefix_groups else n_start
    if prefix_start and _ASCII_LETTER.match(folded[prefix_start - 1]):
        return None  # "Q3", "A1", "T-1": part of an identifier
    if not right.group(0) and _ASCII_LETTER.match(folded[n_end:n_end + 1]):
        return None  # "5G", "3Q26"
    numeral = m.group(0)
    parenthesised = bool(left.group("open") and right.group("close"))
    stated_suffix = right.group(0).replace(")", "").strip()
    if parenthesised and _LIST_LABEL.fullmatch(numeral) and not (left.group("cur") or stated_suffix):
        return None  # "(2)" labels a list item
    negative_by = _sign_marker(folded, left)
    is_percent_number = bool(right.group("pct") or left.group("pct") or right.group("bps"))
    open_at = left.start("open") if left.group("open") else n_start
    restates_previous = previous_end is not None and not folded[previous_end:open_at].strip()
    if negative_by is None and parenthesised and not is_percent_number and not restates_previous:
        # An accounting negative. "(3%)" and "1,234.56 (1,234.56 CNY)" are asides.
        negative_by = "()"
    tail = None
    if parenthesised and not is_percent_number and not (right.group("mag_en") or right.group("mag_cn")
                                                         or right.group("unit")):
        tail = _AFTER_CLOSE.match(folded, right.end())
        if not tail.group(0).strip():
            tail = None
    sized = tail or right
    scale = _magnitude(sized)
    unit = _unit_of_word(left.group("cur"))[0] if left.group("cur") else None
    if sized.group("unit"):
        word_unit, word_factor = _unit_of_word(sized.group("unit"))
        if unit is not None and word_unit != unit:
            return None  # "$5 元" states two currencies: no reading a grader could trust
        unit = word_unit
        scale *= word_factor
    if is_percent_number:
        if unit not in (None, "%"):
            return None
        unit = "%"
        if right.group("bps"):
            scale *= 0.01
    start = prefix_start
    if left.group("open") and not parenthesised:
        start = next((left.start(g) for g in ("neg", "cur", "neg2", "pct") if left.group(g)), n_start)
    if negative_by is None and folded[start] == "-":
        start += 1  # the dash belonged to a range or a word, not to this number
    end = right.end() if parenthesised or not right.group("close") else right.start("close")
    if tail is not None:
        end = tail.end()
    end = _strip_trailing_space(folded, n_end, end)
    value = float(numeral.replace(",", "")) * scale
    if negative_by:
        value = -value
    return ParsedNumber(
        value=value, raw=text[start:end], start=start, end=end,
        is_percent=is_percent_number, scale=scale,
        currency=unit if unit in CURRENCIES else None,
        negative_by=negative_by, unit=unit,
    )


def _strip_trailing_space(text: str, limit: int, end: int) -> int:
    while end > limit and text[end - 1].isspace():
        end -= 1
    return end


# --------------------------------------------------------------------------- the final answer

_ANSWER_MARKER = re.compile(
    r"(?i:final\s+answer|the\s+answer\s+is|\banswer\s*[:：]|\bresult\s*[:：])|最终答案|答案|结果[:：为是]"
)
_CONCLUSION_MARKER = re.compile(
    r"(?i:\b(?:therefore|thus|hence|so|in\s+summary|in\s+conclusion|in\s+total|overall)\b)"
    r"|综上|因此|所以|总计|合计|总共"
)
# A number right after these is the base of a comparison, not the answer.
_REFERENCE_BEFORE = re.compile(
    r"(?:(?i:\b(?:from|vs\.?|versus|compared\s+(?:with|to)|against|than|previous(?:ly)?|prior|earlier)\b)"
    r"(?:(?!\bto\b)[^.,;:\d]){0,30}"
    r"|(?:比|较|相比|对比|从|由|高于|低于)(?:(?!到|至)[^，。,;；：\d]){0,8})\Z"
)
# Every answer marker holds one of these words: a text without any has no marker to find.
_ANSWER_HINT = re.compile(r"(?i:\b(?=[ar])(?:answer|result))|答案|结果")
_EQUALS_BEFORE = re.compile(r"[=≈]\s*\Z")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__", re.S)


def _single_value(numbers: list[ParsedNumber]) -> bool:
    """Whether the numbers state one value. Linear: listing the distinct values is quadratic
    in an answer stating many different numbers."""
    return bool(numbers) and all(
        math.isclose(n.value, numbers[0].value, rel_tol=1e-12, abs_tol=1e-12) for n in numbers
    )


def _inside_spans(numbers: list[ParsedNumber], spans: list[tuple[int, int]]) -> list[ParsedNumber]:
    """The numbers lying inside one of `spans`; both in start order, spans disjoint (a merge)."""
    inside: list[ParsedNumber] = []
    index = 0
    for number in numbers:
        while index < len(spans) and spans[index][1] < number.end:
            index += 1
        if index < len(spans) and spans[index][0] <= number.start:
            inside.append(number)
    return inside


def _filter_expected(
    numbers: list[ParsedNumber], expect_percent: bool | None, expect_unit: str | None
) -> list[ParsedNumber]:
    kept = numbers
    if expect_percent is False:
        kept = [n for n in kept if not n.is_percent]
    elif expect_percent is True:
        percents = [n for n in kept if n.is_percent]
        # An agent may drop the % sign; bare numbers stay in play only when none carries it.
        kept = percents or [n for n in kept if n.unit is None]
    if expect_unit is not None:
        kept = [n for n in kept if n.unit in (None, expect_unit)]
    return kept


def _is_reference(text: str, number: ParsedNumber) -> bool:
    return bool(_REFERENCE_BEFORE.search(fold_width(text[max(0, number.start - 40):number.start])))


def final_number(
    text: str,
    expect_percent: bool | None = None,
    expect_currency: str | None = None,
    *,
    expect_unit: str | None = None,
) -> tuple[ParsedNumber | None, list[ParsedNumber]]:
    """The number a careful grader reads as the final answer, and the candidates considered.

    Candidates are the parsed numbers compatible with the expectations (a percentage when
    `expect_percent`, never one when it is False; no other currency or base unit than
    `expect_currency` / `expect_unit`). Then, in order:
      1. the first candidate after the last explicit marker ("final answer", "the answer is",
         "answer:", "答案", "结果：");
      2. the candidates in **bold**, when they state a single value;
      3. the last candidate, when "=" or "≈" introduces it;
      4. ignoring comparison bases ("from 1,206.8", "比…", "较…"): a single remaining value,
         or the only one that states the expected unit;
      5. a single value after the last concluding word ("therefore", "so", "综上", "因此").
    Otherwise the answer is ambiguous: (None, candidates), for an LLM to extract. The last
    sentence alone is not a marker: agents as often end on context ("volume was 3.2 billion")
    as on the answer.
    """
    if expect_currency is not None:
        if expect_currency not in CURRENCIES:
            raise ValueError(f"expect_currency {expect_currency!r} is not one of {CURRENCIES}")
        if expect_unit not in (None, expect_currency):
            raise ValueError(f"expect_currency {expect_currency!r} contradicts expect_unit {expect_unit!r}")
        expect_unit = expect_currency
    if expect_unit == "%" and expect_percent is None:
        expect_percent = True
    candidates = _filter_expected(parse_numbers(text), expect_percent, expect_unit)
    if not candidates:
        return None, []

    if len(candidates) == 1:
        # Every rule below picks the only candidate (step 4 falls back to all candidates).
        return candidates[0], candidates

    markers = list(_ANSWER_MARKER.finditer(text)) if _ANSWER_HINT.search(text) else []
    if markers:
        after = [c for c in candidates if c.start >= markers[-1].end() and not _is_reference(text, c)]
        if after:
            return after[0], candidates

    bold_spans = [m.span() for m in _BOLD.finditer(text)]
    in_bold = _inside_spans(candidates, bold_spans)
    if _single_value(in_bold):
        return in_bold[-1], candidates

    last = candidates[-1]
    if _EQUALS_BEFORE.search(text[max(0, last.start - 8):last.start]):
        return last, candidates

    primary = [c for c in candidates if not _is_reference(text, c)] or candidates
    if _single_value(primary):
        return primary[0], candidates
    if expect_unit is not None:
        stating_unit = [c for c in primary if c.unit == expect_unit]
        if _single_value(stating_unit):
            return stating_unit[0], candidates

    conclusions = list(_CONCLUSION_MARKER.finditer(text))
    if conclusions:
        concluded = [c for c in primary if c.start >= conclusions[-1].end()]
        if _single_value(concluded):
            return concluded[0], candidates
    return None, candidates
