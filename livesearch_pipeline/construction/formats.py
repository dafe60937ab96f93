"""Answer formats a professional would write, from the field lexicon (DESIGN §2 item 5, §4.3).

A field's lexicon *kind* fixes the unit, scale word and decimals of its answer: prices in the
trading currency to 2 decimals (NAV and FX 4), amounts in million/billion with 2 decimals,
share counts whole (in lots of 100 shares where the tool reports lots) or in millions, percentages to 2 decimals (official statistics 1), index
levels in points. The scale word is chosen once, from the magnitude of the value observed when
the program is built, and frozen in the program's format: "5.38 billion HKD", never
"53844347768.00 HKD".

Counts of shares or units stay whole ("80000 shares") unless the value is safely in millions:
the lowest of the observed values must reach one million (COUNT_MILLION_FROM), with a tenfold
margin when fewer than COUNT_MIN_OBSERVATIONS values were observed, because a day's or a
minute bar's volume varies tenfold from one day to the next and the question is asked on days
the builder never saw ("0.08 million shares" is what one lucky sample produced).

The Chinese question asks for the same quantity one scale finer (亿 for billion, 万 for million),
at the same decimals; the match rule records that unit and those decimals (`unit_zh`,
`decimals_zh`, issue 28) and a Chinese answer is scored at them, not at the English tolerance.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from livesearch_pipeline.core.lexicon import Kind, Lexicon, LexiconError, load_lexicon
from livesearch_pipeline.core.catalog import FieldMeta
from livesearch_pipeline.core.models import PERCENTAGE_POINTS, Format, MatchRule
from livesearch_pipeline.core.normalize import CURRENCIES, unit_scale

_WORD_MAGNITUDES = ((1e9, "billion"), (1e6, "million"), (1e3, "thousand"))
# Scale words a professional uses for an amount, each only for values of at least 1 in it (issue
# 20: "0.23 million CNY" is 230,000 CNY). The magnitude that picks the word is the lowest value
# the answer can take as far as the observed records tell (`amount_magnitude`), so an answer on
# a day the builder never saw stays at or above 1 in the word too. Counts: see the module doc.
AMOUNT_SCALES = ((1e9, 1e9, "billion"), (1e6, 1e6, "million"))  # (from magnitude, size, word)
COUNT_MILLION_FROM = 1e6  # every observed value of a count at least this: "million shares"
COUNT_MIN_OBSERVATIONS = 5  # fewer observed values: each must be ten times COUNT_MILLION_FROM
COUNT_MARGIN = 10.0  # the day-to-day variation of a volume the margin covers
SUM_WINDOW = 60  # the longest window enumeration aggregates over (enumerate.AGGREGATE_WINDOWS)
# Chinese unit of each English format unit; the magnitude is one step finer (see module doc).
ZH_BASE = {"CNY": "元", "HKD": "港元", "USD": "美元", "shares": "股", "units": "份", "points": "点", "lots": "手"}
ZH_SCALE = {"billion": "亿", "million": "万", "": ""}
ZH_SCALE_FACTOR = {"billion": 10.0, "million": 100.0, "": 1.0}  # value in 亿 = value in billion × 10

# Which kinds fit a unit's base: the kind is looked up by tool when the caller knows the tool,
# else among the readings of the field name the one that fits the catalog unit.
_KINDS_OF_BASE: dict[str | None, frozenset[str]] = {
    **{c: frozenset({"price", "nav", "amount"}) for c in CURRENCIES},
    "shares": frozenset({"shares"}),
    "units": frozenset({"units"}),
    "%": frozenset({"percent", "macro_percent"}),
    "points": frozenset({"index_level", "macro_index"}),
    "quote currency": frozenset({"fx"}),
}
_UNITLESS_KINDS = frozenset({"ratio", "count", "label", "macro_index", "factor"})


def word_unit(unit: str | None) -> tuple[str | None, float]:
    """A unit with a numeric magnitude ("10k shares", "100M CNY") as a word unit and a scale.

    An answer written "34058.70 10k shares" has two numbers in it; "340587.00 thousand shares"
    has one. Returns (unit, scale) with value_in_new_unit = value × scale.
    """
    if unit is None or not re.search(r"\d", unit):
        return unit, 1.0
    base, factor = unit_scale(unit)
    for size, word in _WORD_MAGNITUDES:
        if factor >= size:
            return f"{word} {base}", factor / size
    return base, factor


def _base_of(unit: str | None) -> str | None:
    try:
        return unit_scale(unit)[0]
    except ValueError:
        return None  # "persons", "holders": counted things the matcher has no unit for


def lexicon_kind(f: FieldMeta, tool: str | None = None, lexicon: Lexicon | None = None) -> Kind:
    """The lexicon kind of a field: the tool's reading when `tool` is given, else the reading
    of the field name that fits the catalog unit. LexiconError when none fits."""
    lexicon = lexicon or load_lexicon()
    if tool is not None:
        return lexicon.require(tool, f.name).kind
    base = _base_of(f.unit)
    fitting = _KINDS_OF_BASE.get(base, _UNITLESS_KINDS)
    readings = lexicon.entries_for(f.name)
    kinds = [e.kind for e in readings if e.kind in fitting or (f.type == "integer" and e.kind == "count")]
    if not kinds:
        raise LexiconError(f"no lexicon reading of field {f.name!r} fits its unit {f.unit!r}; "
                           "add an entry (or a tool override) with a fitting kind")
    return kinds[0]


def _magnitude(value: Any) -> float | None:
    return abs(float(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _scaled(base: str, factor: float, magnitude: float | None, scales) -> tuple[str, float, str]:
    """(unit, scale, scale word) for a value of `magnitude` in base units."""
    for threshold, size, word in scales:
        if magnitude is not None and magnitude >= threshold:
            return f"{word} {base}", factor / size, word
    return base, factor, ""


def counts_in_millions(observed: Sequence[Any], factor: float = 1.0, aggregate: str | None = None,
                       window: int | None = None) -> bool:
    """Whether a count of shares or units is safely in millions (see the module doc).

    `observed` are raw values in the catalog unit (`factor` turns them into shares or units);
    zeros and non-numbers say nothing about the scale and are left out. A sum over `window`
    records is at least `window` times the lowest value (SUM_WINDOW when the window is not
    given); a spread ("std") or a difference ("change") can be far below the level, so it gets
    the tenfold margin whatever was observed.
    """
    magnitudes = [m * factor for m in map(_magnitude, observed) if m]
    if not magnitudes:
        return False
    low = min(magnitudes)
    if aggregate == "sum":
        low *= window or SUM_WINDOW
    margin = (COUNT_MARGIN if len(magnitudes) < COUNT_MIN_OBSERVATIONS or aggregate in ("std", "change")
              else 1.0)
    return low >= COUNT_MILLION_FROM * margin


def amount_magnitude(sample: Any, observed: Sequence[Any], aggregate: str | None, window: int | None) -> float | None:
    """The lowest magnitude (in the catalog unit) an answer over these records can be expected at.

    A record or a mean, maximum or minimum is at least the lowest observed value; a sum over
    `window` records at least `window` times it; a change or a spread can be as small as the
    smallest move between consecutive observed records. Zeros say nothing about the scale. With
    no observed records the one sample decides, as before.
    """
    values = [v for v in (observed or [sample]) if _magnitude(v) is not None]
    magnitudes = [m for m in map(_magnitude, values) if m]
    if not magnitudes:
        return None
    if aggregate in ("change", "std"):
        moves = [abs(float(a) - float(b)) for a, b in zip(values, values[1:]) if float(a) != float(b)]
        return min(moves) if moves else None
    low = min(magnitudes)
    if aggregate == "sum":
        low *= window or SUM_WINDOW
    return low


def value_format(f: FieldMeta, aggregate: str | None, sample: Any, key_fmt: str, *,
                 tool: str | None = None, lexicon: Lexicon | None = None,
                 observed: Sequence[Any] = (), window: int | None = None) -> Format:
    """The answer format of a field under an aggregate, from its lexicon kind.

    `sample` is an observed raw value (in the catalog unit); it picks the scale word. For a
    count of shares or units, `observed` (when given) is every value seen, the sample among them
    (e.g. the series' records of the enumeration window), and `window` the number of records a
    sum adds up; the scale word comes from all of them (`counts_in_millions`).
    """
    if aggregate in ("argmax", "argmin"):
        return Format(kind="date", in_fmt=key_fmt, out_fmt="%Y-%m-%d")
    if aggregate == "count":
        return Format(kind="integer")
    if f.type == "text":
        return Format(kind="text")
    if f.type == "date":
        return Format(kind="date", in_fmt="%Y%m%d", out_fmt="%Y-%m-%d")
    lexicon = lexicon or load_lexicon()
    kind = lexicon_kind(f, tool, lexicon)
    if aggregate == "pct_change":
        return Format(kind="percent", decimals=lexicon.kinds["percent"].decimals, unit="%")
    decimals = lexicon.kinds[kind].decimals
    if kind in ("percent", "macro_percent"):
        return Format(kind="percent", decimals=decimals, unit="%")
    if kind == "count":
        return Format(kind="integer")
    if kind in ("ratio", "macro_index", "fx", "factor"):
        # A multiple, an indicator, an official index level or an exchange rate: a bare number.
        return Format(kind="number", decimals=decimals, unit=None)
    base, factor = unit_scale(f.unit)
    if base is None:
        raise LexiconError(f"field {f.name!r} of kind {kind!r} has no unit in the catalog")
    if kind == "amount":
        magnitude = amount_magnitude(sample, observed, aggregate, window)
        magnitude = None if magnitude is None else magnitude * factor
        unit, scale, _ = _scaled(base, factor, magnitude, AMOUNT_SCALES)
        return Format(kind="number", decimals=decimals, unit=unit, scale=scale)
    if kind in ("shares", "units"):
        if kind == "units":
            # An ETF's volume counts fund units (份), 100 to a lot (DESIGN §4.8): asked in units, never
            # in shares or in lots.
            base = "units"
        if counts_in_millions(list(observed) or [sample], factor, aggregate, window):
            return Format(kind="number", decimals=decimals, unit=f"million {base}", scale=factor / 1e6)
        # Whole shares or units, an average too ("the average daily volume, as a whole number"); a
        # count the tool reports in lots of 100 shares (A-share volumes, 手) is asked in lots, the
        # unit the reader finds in the data.
        if f.unit == "lots" and kind == "shares":
            return Format(kind="integer", unit="lots", scale=1.0)
        return Format(kind="integer", unit=base, scale=factor)
    # price, nav, index_level: the unit itself, at the kind's precision.
    return Format(kind="number", decimals=decimals, unit=base, scale=factor)


def proposed_rule(fmt: Format) -> MatchRule:
    """The rule a template verbalizer proposes before the clamp (DESIGN §4.3)."""
    if fmt.kind in ("text",):
        return MatchRule(rule="semantic")
    if fmt.kind in ("date", "integer"):
        return MatchRule(rule="exact", unit=fmt.unit)
    return MatchRule(rule="approx", unit=fmt.unit, decimals=fmt.decimals)


def zh_unit(fmt: Format) -> tuple[str, int | None]:
    """The Chinese unit word and decimals a Chinese question asks for, given the answer format.

    "billion CNY" at 2 decimals -> ("亿元", 2); "million shares" -> ("万股", 2); "CNY" -> ("元", 2);
    a unitless or percent format -> ("", decimals), percentage points -> ("个百分点", decimals). One scale finer than
    the English unit; `verbalize.finalize` records it in the match rule (see the module doc).
    """
    if fmt.kind == "percent" and fmt.unit == PERCENTAGE_POINTS:
        return "个百分点", fmt.decimals
    if fmt.unit is None or fmt.kind == "percent":
        return "", fmt.decimals
    word, _, base = fmt.unit.rpartition(" ")
    if base not in ZH_BASE or word not in ZH_SCALE:
        raise LexiconError(f"no Chinese unit for the answer unit {fmt.unit!r}")
    return ZH_SCALE[word] + ZH_BASE[base], fmt.decimals


def unit_phrase_en(fmt: Format) -> str:
    """", in billions of CNY to 2 decimals" — the one place the English text states the unit."""
    if fmt.kind == "percent":
        unit = PERCENTAGE_POINTS if fmt.unit == PERCENTAGE_POINTS else "percent"
        return f", in {unit} to {_decimals_en(fmt.decimals)}"
    if fmt.kind == "integer":
        if fmt.unit == "lots":
            return ", as a whole number of 100-share lots"
        return f", as a whole number of {fmt.unit}" if fmt.unit else ", as a whole number"
    if fmt.kind != "number":
        return ""
    if fmt.unit is None:
        return f", to {_decimals_en(fmt.decimals)}"
    word, _, base = fmt.unit.rpartition(" ")
    unit = f"{word}s of {base}" if word else base
    return f", in {unit} to {_decimals_en(fmt.decimals)}"


def _decimals_en(n: int | None) -> str:
    return "1 decimal" if n == 1 else f"{n} decimals"


def ask_zh(fmt: Format) -> str:
    """"是多少亿元？保留2位小数。" — the question word and the one unit of the Chinese text."""
    if fmt.kind == "percent":
        if fmt.unit == PERCENTAGE_POINTS:
            return f"是多少个百分点？保留{fmt.decimals}位小数。"
        return f"是多少？以百分比表示，保留{fmt.decimals}位小数。"
    if fmt.kind == "date":
        return "是哪一个交易日？请按YYYY-MM-DD格式作答。"
    if fmt.kind == "text":
        return "是什么？"
    unit, decimals = zh_unit(fmt)
    if fmt.kind == "integer":
        return f"是多少{unit}？请给出整数。"
    return f"是多少{unit}？保留{decimals}位小数。"
