"""Date gate: question text must not name an absolute date (DESIGN §4.4).

A question is re-dated every day, so its text may refer to time only relatively ("the most
recent trading day", "最近一个交易日"). Anything that pins a calendar date or period — an ISO
date, "October 27", "Q3 2026", "FY25", a bare year, "2026年", "10月27日", "二〇二六年" — rejects it.

The gate is deliberately strict: a false rejection only drops one candidate question, while a
missed date leaks a stale reference into the frozen benchmark. Heuristics, and the false
positives they accept:

- A bare integer 1900–2099 is a year unless it is part of a larger number ("2045.32",
  "1,998"), carries a currency ("$2025", "2025元"), is followed by a unit ("2000 shares",
  "2000点", "2025亿") or is a listing code ("2020.HK"). "closed at 2050" is rejected.
- Full month names are rejected even alone ("the October CPI" names a fixed month);
  abbreviations and "May" (also a verb) only with a day or a year. "May" must be capitalised.
- "M/D" with a slash is a date only when one side has two digits ("10/27", "3/15"), so that
  fractions such as "1/2" or "3/4" pass.
- An eight-digit YYYYMMDD number with a valid month and day is a date (Tushare's format).
- Chinese: "N月" is a month unless it is a tenor or window ("3月期", "近3月", "6个月");
  "N季度/季报" a fixed quarter unless relative ("上一季度", "最近一季度"). A bare "N日" is
  not rejected (it is also the window in "5日均线"); "10月27日" is.

Full-width digits and punctuation are folded to ASCII one character at a time before
matching, so hit offsets index the original text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GateHit:
    start: int
    end: int
    text: str
    reason: str


@dataclass(frozen=True)
class GateResult:
    passed: bool
    hits: tuple[GateHit, ...]


# One code point to one code point, so that offsets into the folded text index the original.
_FOLD = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_FOLD.update({0x3000: 0x20, 0x2212: 0x2D, 0xFFE5: 0xA5, 0x2018: 0x27, 0x2019: 0x27})


def fold_width(text: str) -> str:
    """Full-width ASCII, ideographic space, unicode minus and curly quotes to ASCII (1:1)."""
    if text.isascii():  # nothing to fold, and translate looks up every character
        return text
    return text.translate(_FOLD)


_MONTH_FULL = "january|february|march|april|june|july|august|september|october|november|december"
_MONTH_ABBR = "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
_MONTH = rf"\b(?:(?i:{_MONTH_FULL}|{_MONTH_ABBR})|May)\b\.?"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?i:st|nd|rd|th)?"
_YEAR4 = r"(?:19|20)\d{2}"
_YEAR = rf"(?:{_YEAR4}|'\d{{2}})"
_CN_DIGIT = "〇零○一二三四五六七八九"
_CN_NUM = "一二三四五六七八九十"
# Characters before "N月"/"N季度" that make it a window or a relative reference.
_CN_RELATIVE_BEFORE = "近去前后上下本每个第最" + _CN_NUM + "〇零"

# Cheap necessary conditions, each shared by a family of patterns: when a text fails one, no
# pattern of that family can match it, so it is not scanned (most answers are plain amounts
# such as "1,234.56 CNY", which fail all of them). Each must accept a superset of what its
# patterns match, on the folded text and with the same case-insensitivity.
_GATES: dict[str, re.Pattern[str]] = {
    # Every numeric date form with a separator: "2026-10-27", "2026/10", "27.10.2026", "10/27".
    "separated digits": re.compile(r"\d[-/]\d|\d\.\d{1,2}\.\d"),
    "eight digits": re.compile(rf"{_YEAR4}\d{{4}}"),
    "year digits": re.compile(_YEAR4),
    # Every full or abbreviated month name, "May" included, starts a word with one of these;
    # the lookahead on first letters lets the scan skip most positions quickly.
    "month word": re.compile(r"(?i:\b(?=[jfmasond])(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))"),
    "quarter or half code": re.compile(r"[1-4](?i:[qh])|(?i:[qh])[1-4]|(?i:fy)"),
    "quarter or half word": re.compile(r"(?i:[qh][ua][al])"),
    "年": re.compile("年"),
    "月": re.compile("月"),
    "季": re.compile("季"),
}

# (reason, pattern, is_bare_year, gate). Order matters only for equal spans: the first reason wins.
# `\s*+` (possessive) where two optional blanks meet: giving blanks back can never let the
# next token (a digit, "Q", "H", "of") match, and backtracking them is quadratic in a long blank run.
# "第" takes its blanks with it, so that a search does not start a match at every blank of a run.
_PATTERNS: tuple[tuple[str, re.Pattern[str], bool, str], ...] = tuple(
    (reason, re.compile(pattern), bare, gate)
    for reason, pattern, bare, gate in (
        ("ISO date",
         rf"(?<![\d.]){_YEAR4}([-/.])(?:1[0-2]|0?[1-9])\1(?:[12]\d|3[01]|0?[1-9])(?!\d)", False, "separated digits"),
        ("year-month", rf"(?<![\d.]){_YEAR4}[-/](?:1[0-2]|0[1-9])(?![\d.])", False, "separated digits"),
        ("day-month-year or month-day-year",
         rf"(?<![\d.])(?:[12]\d|3[01]|0?[1-9])([-/.])(?:[12]\d|3[01]|0?[1-9])\1(?:{_YEAR4}|\d{{2}})(?!\d)",
         False, "separated digits"),
        ("compact date (YYYYMMDD)",
         rf"(?<![\d.,]){_YEAR4}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?![\d]|[.,]\d)", False, "eight digits"),
        ("month/day",
         r"(?<![\d./])(?:(?:0[1-9]|1[0-2])/(?:[12]\d|3[01]|0?[1-9])|[1-9]/(?:0[1-9]|[12]\d|3[01]))"
         r"(?![\d/]|\.\d)", False, "separated digits"),
        ("month name with a day", rf"{_MONTH}\s*{_DAY}\b(?:\s*+,?\s*+{_YEAR4}\b)?", False, "month word"),
        ("day with a month name", rf"\b{_DAY}\s*(?:of\s+)?{_MONTH}(?:\s*+,?\s*+{_YEAR4}\b)?", False, "month word"),
        ("month name with a year", rf"{_MONTH}\s*+,?\s*+(?:of\s+)?{_YEAR}\b", False, "month word"),
        ("month name", rf"\b(?i:{_MONTH_FULL})\b", False, "month word"),
        ("quarter with a year",
         rf"(?i:\bQ[1-4]\s*(?:FY\s*)?{_YEAR}\b|\b{_YEAR4}\s*+-?\s*+Q[1-4]\b|\b[1-4]Q\s*'?(?:\d{{4}}|\d{{2}})\b)",
         False, "quarter or half code"),
        ("half-year with a year",
         rf"(?i:\bH[12]\s*(?:FY\s*)?{_YEAR}\b|\b{_YEAR4}\s*+-?\s*+H[12]\b|\b[12]H\s*'?(?:\d{{4}}|\d{{2}})\b)",
         False, "quarter or half code"),
        ("fiscal year", r"(?i:\bFY\s*'?(?:\d{4}|\d{2})\b)", False, "quarter or half code"),
        ("named quarter", r"(?i:\bQ[1-4]\b)", False, "quarter or half code"),
        ("named half-year", r"(?i:\bH[12]\b)", False, "quarter or half code"),
        ("ordinal quarter",
         r"(?i:\b(?:first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+(?:fiscal\s+)?quarter\b)", False, "quarter or half word"),
        ("ordinal half-year",
         r"(?i:\b(?:first|second|1st|2nd)[\s-]+half\b(?!\s*(?:an?\s+)?hour|-hour))", False, "quarter or half word"),
        ("year (年)", rf"(?<!\d){_YEAR4}\s*年", False, "年"),
        ("year in Chinese numerals (年)", rf"[{_CN_DIGIT}]{{4}}\s*年", False, "年"),
        ("month and day (月日)",
         rf"(?:\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s*月\s*(?:\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s*[日号]", False, "月"),
        ("month (月)",
         rf"(?<![\d{_CN_RELATIVE_BEFORE}])(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月(?!期)",
         False, "月"),
        ("quarter (季度)",
         rf"(?<![{_CN_RELATIVE_BEFORE}\d])(?:第\s*)?(?:[一二三四]|[1-4])\s*季(?:度|报)", False, "季"),
        ("bare year", rf"(?<![\d.,$¥+\-]){_YEAR4}(?![\d]|[.,]\d)", True, "year digits"),
    )
)

# A 4-digit number followed by one of these is an amount, not a year.
_UNIT_AFTER = re.compile(
    r"\s*(?:(?i:shares?|lots?|points?|pts|bps|bp|basis\s+points?|units?|contracts?|yuan|cny|rmb|usd|hkd"
    r"|dollars?|thousand|million|billion|trillion|mn|bn|level|mark|times|employees|percent|per\s*cent)\b"
    r"|[kKmMbBx]\b|%|\.(?:HK|SH|SZ|BJ|SS)\b"
    r"|股|手|点|元|万|亿|千|百|个|只|家|倍|份|张|次|名|人|美元|港元|港币|基点|百分点)"
)
_CURRENCY_BEFORE = re.compile(r"(?:\$|¥|€|£|(?i:US\$|HK\$|RMB|CNY|USD|HKD))\s*$")


def _is_amount(folded: str, start: int, end: int) -> bool:
    return bool(_UNIT_AFTER.match(folded, end) or _CURRENCY_BEFORE.search(folded[max(0, start - 6):start]))


def find_date_spans(text: str, *, include_bare_years: bool = True) -> tuple[GateHit, ...]:
    """Absolute-date spans of `text`, ordered, none contained in another.

    `include_bare_years=False` keeps only unambiguous date forms; number parsing uses it to
    skip "2026-10-27" without dropping a value such as "closed at 2050".
    """
    folded = fold_width(text)
    open_gates: dict[str, bool] = {}
    found: list[GateHit] = []
    for reason, pattern, is_bare_year, gate in _PATTERNS:
        if is_bare_year and not include_bare_years:
            continue
        if gate not in open_gates:
            open_gates[gate] = _GATES[gate].search(folded) is not None
        if not open_gates[gate]:
            continue
        for m in pattern.finditer(folded):
            if is_bare_year and _is_amount(folded, m.start(), m.end()):
                continue
            found.append(GateHit(m.start(), m.end(), text[m.start():m.end()], reason))
    found.sort(key=lambda h: (h.start, -(h.end - h.start)))
    kept: list[GateHit] = []
    # Hits come by start, so every kept hit starts at or before this one: it lies inside one of
    # them exactly when it ends by the furthest kept end (one comparison, not a scan of `kept`).
    furthest_end = -1
    for hit in found:
        if hit.end <= furthest_end:
            continue
        kept.append(hit)
        furthest_end = hit.end
    return tuple(kept)


def check_text(text: str) -> GateResult:
    """Pass when `text` names no absolute date or calendar period; else list the offending spans."""
    hits = find_date_spans(text)
    return GateResult(passed=not hits, hits=hits)
