"""Text lint of question texts (DESIGN §2 item 5, issue 13): what no professional would write.

Pure: a text and a `LintContext` in, a list of `Finding`s out. The verbalize stage lints every
text (template or LLM) and sends a text with any finding to the rejects table with the
findings as its reason; the test suite lints a built pool.

Hard rules (a pool must have none): pasted description fragments, raw identifiers, unit
disagreement (two units, or a unit or precision that is not the answer format's), Latin unit
words in Chinese text, an unnamed series, an unstated bar frequency, vague phrases that name
nothing ("adjusted as requested", "quote currency"), an answer given away by the question,
a date asked with 是多少, a gloss in parentheses or a tool's explanation pasted as a phrase
("(change in closing price)", "(the first minus the second)", "last minus first"), "year to
date" on a balance, an entity named with the market's construction prefix ("Synthetic …",
"合成…"), a count asked in shares where the tool reports lots, and a derived indicator asked
without its definition (MACD without "2 × (DIF − DEA)"); issue 40's: a wording that presupposes the
sign of a difference or change ("by how much did A beat B", "高多少": ask for A minus B, growth is
growth), a count of trading days of a series that does not name whose calendar, a market-wide
figure that does not name its series ("the extrapolation factor" of what?). Soft rules (at most a few percent): Chinese outside names in
English text, over-precision, a huge value with no scale word, number agreement.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from livesearch_pipeline.core.models import Format
from livesearch_pipeline.core.normalize import CURRENCIES, unit_scale

HARD_RULES = frozenset({
    "description_fragment", "raw_identifier", "unit_disagreement", "latin_unit_in_zh",
    "unnamed_series", "bar_frequency", "vague_phrase", "answer_given_away", "date_asked_as_amount",
    "parenthetical_gloss", "gloss_phrase", "ytd_on_balance", "construction_prefix", "unit_not_reported",
    "undefined_indicator", "presupposed_sign", "unnamed_calendar", "code_given",
})
SOFT_RULES = frozenset({"chinese_in_english", "over_precision", "huge_unscaled", "number_agreement"})
# Kinds whose convention keeps more than 2 decimals (see dataservice/lexicon.yaml).
FINE_KINDS = frozenset({"nav", "fx", "factor"})
HUGE = 1e8


@dataclass(frozen=True)
class Finding:
    rule: str
    lang: str  # "en" or "zh"
    detail: str

    @property
    def hard(self) -> bool:
        return self.rule in HARD_RULES

    def __str__(self) -> str:
        return f"{self.rule} [{self.lang}]: {self.detail}"


@dataclass(frozen=True)
class LintContext:
    """What the lint knows about the question beside its text."""

    fmt: Format | None = None
    kind: str | None = None  # the field's lexicon kind
    descriptions: tuple[str, ...] = ()  # catalog descriptions of fields, English
    tool_descriptions: tuple[str, ...] = ()  # catalog descriptions of tools
    descriptions_zh: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()  # field and argument names of the tools involved
    names: tuple[str, ...] = ()  # entity names and quoted series values: may be in any script
    # Each series the program selects, as the forms a text may name it by (any one suffices).
    series: tuple[tuple[str, ...], ...] = ()
    series_unpinned: tuple[str, ...] = ()  # series keys of the tool the program leaves open
    bar_frequency: str | None = None  # "week" / "month" for weekly and monthly bars
    answer: str | None = None  # a text answer the question must not contain
    value: float | None = None  # the observed answer value after the format's scale
    quantity: str | None = None  # the field's lexicon quantity ("stock" for a balance)
    tool_unit: str | None = None  # the unit the tool reports the field in (catalog FieldMeta.unit)
    # A derived indicator's definition sentence (lexicon define_en, define_zh) each text must state.
    definition_en: str | None = None
    definition_zh: str | None = None
    # A series whose subject implies no calendar (a rate, a statistic, an FX pair): the calendar's
    # names (EN and ZH, any one suffices) a text that counts trading days must contain.
    calendar_names: tuple[str, ...] = ()
    # A market-wide series: the words that name it (conventions.SERIES_NAMES); each text holds one.
    series_names: tuple[str, ...] = ()
    # Codes a text must not give: its entity is named as people name it (issue 39, construction/naming.py).
    withheld_codes: tuple[str, ...] = ()


# --------------------------------------------------------------------------- helpers

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|‘[^’]*’|'[^']*'|「[^」]*」")
_CODE = re.compile(r"\b[0-9A-Z]{1,8}\.[A-Z]{1,4}\b")
_SNAKE = re.compile(r"(?<![\w.])[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9](?![\w])")
_WORD = re.compile(r"[a-z0-9%]+(?:[-'][a-z0-9]+)*")


def _without(text: str, names: tuple[str, ...]) -> str:
    """The text with names, quoted spans and instrument codes blanked out."""
    for name in sorted((n for n in names if n), key=len, reverse=True):
        text = text.replace(name, " ")
    text = _QUOTED.sub(" ", text)
    return _CODE.sub(" ", text)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


_EXPLAINS = re.compile(r"[:;=(（]| x |/")
_PAREN = re.compile(r"\(([^()]{2,})\)|（([^（）]{1,})）")


@functools.lru_cache(maxsize=4096)
def _tool_description_runs(d: str) -> frozenset[tuple[str, ...]]:
    """The six-word runs of a tool description (empty when it has fewer than six words)."""
    words = _words(d)
    return frozenset(_ngrams(words, 6)) if len(words) >= 6 else frozenset()


@functools.lru_cache(maxsize=8192)
def _description_parts(d: str) -> tuple[str, bool, tuple[tuple[str, str], ...]]:
    """What the lint compares of a description: its folded text, whether it explains (so that its
    whole text may not be pasted), and its parenthesised asides (folded, as written)."""
    d_fold = d.casefold().strip().rstrip(".")
    explains = bool(_EXPLAINS.search(d_fold) or ("," in d_fold and len(d_fold.split()) >= 5))
    return d_fold, explains, tuple((m.group(0).casefold(), m.group(0)) for m in _PAREN.finditer(d))


def _description_fragments(text: str, descriptions: tuple[str, ...], lang: str,
                           tool_descriptions: tuple[str, ...] = ()) -> list[Finding]:
    """Pasted catalog text. A field description's plain head ("total assets") is the field's
    name and may appear; its explanations and asides may not. A tool description is never a
    name: six consecutive words of one are a paste. (The descriptions' words, runs and asides
    are computed once per description: a pool lints ~24,000 texts against a few hundred.)"""
    out: list[Finding] = []
    folded = text.casefold()
    words = _words(text) if lang == "en" else []
    grams = _ngrams(words, 6)
    for d in tool_descriptions:
        if lang == "en" and d:
            runs = _tool_description_runs(d)
            shared = grams & runs if runs else set()
            if shared:
                out.append(Finding("description_fragment", lang,
                                   f"shares the run {' '.join(sorted(shared)[0])!r} with the tool description {d!r}"))
        if d and d.strip().casefold().rstrip(".") in folded:
            out.append(Finding("description_fragment", lang, f"pastes the tool description {d!r}"))
    for d in (*descriptions, *tool_descriptions):
        if not d or not d.strip():
            continue
        d_fold, explains, asides = _description_parts(d)
        # An explanatory description pasted whole ("turnover: volume / float shares, percent").
        if explains and d_fold in folded:
            out.append(Finding("description_fragment", lang, f"pastes the description {d!r}"))
            continue
        # A parenthesised aside of a description ("(unadjusted)", "(50 = no change)", "（万元）").
        for aside, written in asides:
            if aside in folded:
                out.append(Finding("description_fragment", lang, f"pastes {written!r} from {d!r}"))
                break
    return out


_VAGUE_EN = ("adjusted as requested", "as the data source records it", "published so far", "quote currency",
             "the exchange's trading session")
_VAGUE_ZH = ("按复权方式", "数据源记载", "截至目前已发布的最近一期")


# Unit mentions. English: "in billions of CNY", "in CNY", "in million CNY", ", HKD", "in percent".
_EN_SCALE = r"(?:thousands?|millions?|billions?|trillions?|10 thousand|100 million|hundred million|ten thousand)"
_EN_BASE = r"(?:CNY|HKD|USD|RMB|yuan|shares|lots|units|points|percent)"
_EN_UNIT = re.compile(rf"\bin (?:(?P<scale>{_EN_SCALE})(?: of)? )?(?P<base>{_EN_BASE})\b"
                      rf"|,\s*(?:in )?(?:(?P<scale2>{_EN_SCALE}) )?(?P<base2>CNY|HKD|USD)\b(?! to)")
_ZH_UNIT = re.compile(r"是多少(?P<a>(?:万亿|亿|万|千|百万)?(?:元|港元|美元|股|份|点|手))"
                      r"|以(?P<b>[^，。？]{1,12}?)为单位"
                      r"|[（(](?P<c>(?:万亿|亿|万|千|百万)?(?:元|港元|美元|股|份|点|手)|%|CNY|HKD|USD)[）)]")
# Chinese characters are word characters, so "以CNY为" has no \b around CNY: letters bound it.
_ZH_LATIN_UNIT = re.compile(r"(?i)(?<![A-Za-z])(CNY|HKD|USD|RMB|thousand|million|billion|points?|shares?|lots?|percent"
                            r"|units?)(?![A-Za-z])")
_DECIMALS_EN = re.compile(r"\bto (\d+) decimal|\b(\d+) decimal places?")
_DECIMALS_ZH = re.compile(r"保留(\d+)位小数")


_EN_SCALE_FACTOR = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "10 thousand": 1e4,
                    "ten thousand": 1e4, "100 million": 1e8, "hundred million": 1e8}


def _en_unit_key(scale: str | None, base: str) -> tuple[str | None, float] | None:
    """(base unit, factor) of a unit mention, comparable with the answer format's."""
    word = {"percent": "%", "yuan": "CNY", "RMB": "CNY"}.get(base, base)
    try:
        unit, factor = unit_scale(word)
    except ValueError:
        return None
    if scale:
        factor *= _EN_SCALE_FACTOR[scale.casefold().removesuffix("s")]
    return unit, factor


def _fmt_key(fmt: Format) -> tuple[str | None, float]:
    if fmt.kind == "percent":
        return "%", 1.0
    return unit_scale(fmt.unit)


def _units_en(text: str, fmt: Format | None) -> list[Finding]:
    mentions = []
    for m in _EN_UNIT.finditer(text):
        key = _en_unit_key(m.group("scale") or m.group("scale2"), m.group("base") or m.group("base2"))
        if key is not None:
            mentions.append((m.group(0).strip(" ,"), key))
    out: list[Finding] = []
    distinct = {k for _, k in mentions}
    if len(mentions) > 1:
        out.append(Finding("unit_disagreement", "en",
                           f"states the unit more than once: {', '.join(repr(t) for t, _ in mentions)}"))
    if fmt is not None and fmt.kind in ("number", "percent", "integer"):
        expected = _fmt_key(fmt)
        wrong = [t for t, k in mentions if k != expected]
        if wrong and len(distinct) >= 1:
            out.append(Finding("unit_disagreement", "en",
                               f"states {wrong[0]!r}; the answer is in {fmt.unit or '%'!r}"))
        stated = [int(a or b) for a, b in _DECIMALS_EN.findall(text)]
        if stated and fmt.decimals is not None and any(d != fmt.decimals for d in stated):
            out.append(Finding("unit_disagreement", "en",
                               f"asks for {stated[0]} decimals; the answer has {fmt.decimals}"))
    return out


def _zh_expected(fmt: Format) -> str | None:
    from livesearch_pipeline.construction.formats import zh_unit  # formats imports the lexicon, not lint

    if fmt.kind not in ("number", "integer") or fmt.unit is None:
        return None
    try:
        return zh_unit(fmt)[0]
    except ValueError:
        return None


def _units_zh(text: str, fmt: Format | None) -> list[Finding]:
    mentions = [m.group("a") or m.group("b") or m.group("c") for m in _ZH_UNIT.finditer(text)]
    out: list[Finding] = []
    if len(mentions) > 1:
        out.append(Finding("unit_disagreement", "zh", f"states the unit more than once: {mentions}"))
    if fmt is not None:
        expected = _zh_expected(fmt)
        if expected is not None and mentions and mentions[0] != expected:
            out.append(Finding("unit_disagreement", "zh", f"states {mentions[0]!r}; expected {expected!r}"))
        stated = [int(d) for d in _DECIMALS_ZH.findall(text)]
        if stated and fmt.decimals is not None and any(d != fmt.decimals for d in stated):
            out.append(Finding("unit_disagreement", "zh",
                               f"asks for {stated[0]} decimals; the answer has {fmt.decimals}"))
    return out


_PLURAL_HEADS = (r"assets|liabilities|shares|expenses|borrowings|earnings|investments|inventories|prepayments"
                 r"|equivalents|fees|interests|units|reserves|receivables|payables|funds")
_SINGULAR_HEADS = r"price|value|ratio|rate|profit|revenue|level|balance|volume|turnover|yield|amount|margin|income"
# The head noun ends the phrase: no preposition between "the" and it ("the turnover rate on
# float shares" has the head "rate").
_MODIFIER = r"(?:(?!(?:on|of|in|to|as|per|by|via|for|at|from|with|including|excluding|after|before|than)\s)[\w'-]+ )"
_WAS_PLURAL = re.compile(rf"\b(?:what|which) (?:was|is) the {_MODIFIER}{{0,6}}?(?:{_PLURAL_HEADS})(?= of| for| on| at| in|,|\?)",
                         re.I)
_WERE_SINGULAR = re.compile(rf"\b(?:what|which) (?:were|are) the {_MODIFIER}{{0,4}}?(?:{_SINGULAR_HEADS})(?= of| for| on| at| in|,|\?)",
                            re.I)


def _norm(text: str) -> str:
    return re.sub(r"[\s\W_]+", "", text.casefold())


# --------------------------------------------------------------------------- rules


def lint_text(text: str, lang: str, ctx: LintContext = LintContext()) -> list[Finding]:
    """Every finding of one text (`lang` "en" or "zh")."""
    if lang not in ("en", "zh"):
        raise ValueError(f"lint language must be 'en' or 'zh', not {lang!r}")
    out: list[Finding] = []
    bare = _without(text, ctx.names)
    out += _description_fragments(bare, ctx.descriptions if lang == "en" else ctx.descriptions_zh, lang,
                                  ctx.tool_descriptions)
    folded = text.casefold()
    for phrase in (_VAGUE_EN if lang == "en" else _VAGUE_ZH):
        if phrase in folded:
            out.append(Finding("vague_phrase", lang, f"{phrase!r} names nothing the reader can check"))
    raw = sorted({m.group(0) for m in _SNAKE.finditer(bare)}
                 | {i for i in ctx.identifiers if ("_" in i or i == "ts_code") and re.search(rf"(?<![\w]){re.escape(i)}(?![\w])", bare)})
    if raw:
        out.append(Finding("raw_identifier", lang, f"raw identifier(s) {raw}"))
    if re.search(r"\bwhose [a-z_]+ is\b|[a-z_]{3,}为[“\"]", text):
        out.append(Finding("raw_identifier", lang, "selects a record by a raw field name"))
    out += _units_en(bare, ctx.fmt) if lang == "en" else _units_zh(bare, ctx.fmt)
    if lang == "zh":
        latin = sorted({m.group(0) for m in _ZH_LATIN_UNIT.finditer(bare)})
        if latin:
            out.append(Finding("latin_unit_in_zh", lang, f"Latin unit word(s) {latin} in Chinese text"))
        asks_date = (ctx.fmt is not None and ctx.fmt.kind == "date") or "YYYY-MM-DD" in text
        if asks_date and "是多少" in text:
            out.append(Finding("date_asked_as_amount", lang, "asks for a date with 是多少; use 哪一天/哪一个交易日"))
    else:
        cjk = _CJK.findall(bare)
        if cjk:
            out.append(Finding("chinese_in_english", lang, f"Chinese outside names: {''.join(cjk)[:20]!r}"))
        bad = _WAS_PLURAL.search(text) or _WERE_SINGULAR.search(text)
        if bad:
            out.append(Finding("number_agreement", lang, f"{bad.group(0)!r}"))
    for forms in ctx.series:
        if not any(f and f in text for f in forms):
            out.append(Finding("unnamed_series", lang, f"does not name the series {forms[0]!r}"))
    if ctx.series_unpinned:
        out.append(Finding("unnamed_series", lang,
                           f"the program leaves the series key(s) {list(ctx.series_unpinned)} open"))
    if ctx.bar_frequency:
        marks = ("week",) if ctx.bar_frequency == "week" else ("month",)
        marks_zh = ("周",) if ctx.bar_frequency == "week" else ("月",)
        if not any(m in folded for m in (marks if lang == "en" else marks_zh)):
            out.append(Finding("bar_frequency", lang, f"does not say the bars are {ctx.bar_frequency}ly"))
    if ctx.answer and len(_norm(ctx.answer)) >= 2 and _norm(ctx.answer) in _norm(text):
        out.append(Finding("answer_given_away", lang, f"the text contains its answer {ctx.answer!r}"))
    out += _gloss_findings(text, lang, ctx)
    out += _format_findings(lang, ctx)
    out += _convention_findings(text, lang, ctx)
    return out


# --------------------------------------------------------------------------- issue 40: signs, calendars, series

# Wordings that presuppose the sign of a difference or a change: "by how much did A beat B" is
# wrong when A returned less. A difference is asked as "A minus B", a change as a change, growth
# as growth (which may be negative).
_PRESUPPOSE = {
    "en": (
        (re.compile(r"\bby how much did\b.{0,240}?\b(?:beat|exceed|outperform|grow|rise|increase|gain)\b", re.I | re.S),
         "positive"),
        (re.compile(r"\bby what percentage did\b.{0,240}?\b(?:grow|rise|increase|gain)\b", re.I | re.S), "positive"),
        (re.compile(r"\bhow much (?:higher|more|larger|greater|bigger)\b", re.I), "positive"),
        (re.compile(r"\bwhich\b.{0,200}?\b(?:rose|gained|grew|climbed) the most\b", re.I | re.S), "positive"),
        (re.compile(r"\bby how much did\b.{0,240}?\b(?:fall|decline|drop|decrease|lag|underperform|shrink)\b",
                    re.I | re.S), "negative"),
        (re.compile(r"\bby what percentage did\b.{0,240}?\b(?:fall|decline|drop|decrease|shrink)\b", re.I | re.S),
         "negative"),
        (re.compile(r"\bhow much (?:lower|less|smaller)\b", re.I), "negative"),
        (re.compile(r"\bwhich\b.{0,200}?\b(?:fell|dropped|declined|lost) the most\b", re.I | re.S), "negative"),
    ),
    "zh": (
        (re.compile(r"高多少|多多少|增长了多少|上涨了多少|上升了多少|增加了多少|跑赢[^，。？]*多少|超过[^，。？]*多少|"
                    r"超出[^，。？]*多少|涨幅最大"), "positive"),
        (re.compile(r"低多少|少多少|下降了多少|下跌了多少|减少了多少|跑输[^，。？]*多少|跌幅最大"), "negative"),
    ),
}
_DAYS = {"en": re.compile(r"\btrading days?\b|\bsessions?\b|\bweekdays?\b", re.I), "zh": re.compile(r"交易日|工作日")}


def presupposed_sign(text: str, lang: str) -> tuple[str, str] | None:
    """("positive" or "negative", the words) when the text's wording presupposes the sign of the
    quantity it asks for; None when it asks for a signed value without presupposing one."""
    for pattern, sign in _PRESUPPOSE[lang]:
        found = pattern.search(text)
        if found:
            return sign, found.group(0)
    return None


def names_calendar(text: str, lang: str, names: tuple[str, ...]) -> bool:
    """Whether a text that counts trading days (or weekdays) names one of the calendar's `names`;
    True when it counts none."""
    if not names or not _DAYS[lang].search(text):
        return True
    folded = text.casefold()
    return any(n.casefold() in folded for n in names)


def _convention_findings(text: str, lang: str, ctx: LintContext) -> list[Finding]:
    out: list[Finding] = []
    presumed = presupposed_sign(text, lang)
    if presumed is not None:
        out.append(Finding("presupposed_sign", lang, f"{presumed[1]!r} presupposes a {presumed[0]} value: ask for the "
                           "difference (A minus B) or the change, saying which sign means what"))
    if not names_calendar(text, lang, ctx.calendar_names):
        out.append(Finding("unnamed_calendar", lang, f"counts trading days without naming whose ({ctx.calendar_names[0]!r})"))
    folded = text.casefold()
    if ctx.series_names and not any(n.casefold() in folded for n in ctx.series_names):
        out.append(Finding("unnamed_series", lang, f"does not name its series ({ctx.series_names[0]!r})"))
    for code in ctx.withheld_codes:
        if re.search(rf"(?<![0-9A-Za-z]){re.escape(code)}(?![0-9A-Za-z])", text):
            out.append(Finding("code_given", lang, f"gives the code {code} of an entity it names without one"))
    return out


# What a parenthesis may hold in a question: an instrument code or an acronym ("(600123.SH)",
# "(TTM)", "（CPI）", "（综合PMI）"), the reporting basis of a statement flow ("(year to date)",
# "（年初至报告期末）"), the inclusive window of the Chinese convention ("（含最近一个交易日）"),
# or a formula that defines the quantity ("(net profit divided by revenue)", "2 × (DIF − DEA)").
# Anything else is a gloss: the tool's explanation pasted into the question.
_PAREN_ANY = re.compile(r"\(([^()]*)\)|（([^（）]*)）")
_PAREN_OK = re.compile(
    r"[0-9A-Z][0-9A-Z.&/-]{0,11}|[\u4e00-\u9fff]{0,4}[A-Z][A-Za-z0-9]{1,7}|TTM|year to date|年初至报告期末|含最近一个(?:交易日|工作日)"
    r"|.*(?:divided by|除以|×|÷|=).*|[A-Z]{2,4} ?[−-] ?[A-Z]{2,4}")
_GLOSS_PHRASES = ("last minus first", "the first minus the second", "change in closing price", "change in closing level",
                  "末值减首值", "前者减后者", "末值相对首值", "首日至最近一个交易日", "(the earliest, if tied)",
                  "if days tie", "如有并列")
_YTD = ("year to date", "year-to-date", "年初至报告期末")
_CONSTRUCTION = re.compile(r"\b(?:Synthetic|Fictional)\b|(?<!混)合成|虚构")  # not 混合 + 成分股


def _gloss_findings(text: str, lang: str, ctx: LintContext) -> list[Finding]:
    out: list[Finding] = []
    bare = text
    for name in sorted((n for n in ctx.names if n), key=len, reverse=True):
        bare = bare.replace(f"({name})", " ").replace(f"（{name}）", " ")
    glosses = [m.group(0) for m in _PAREN_ANY.finditer(bare)
               if not _PAREN_OK.fullmatch((m.group(1) if m.group(1) is not None else m.group(2)).strip())]
    if glosses:
        out.append(Finding("parenthetical_gloss", lang, f"gloss in parentheses {glosses[0]!r}: say it as an analyst would"))
    folded = text.casefold()
    pasted = [p for p in _GLOSS_PHRASES if p in folded]
    if pasted:
        out.append(Finding("gloss_phrase", lang, f"{pasted[0]!r} explains the computation like a tool description"))
    if ctx.quantity == "stock" and any(y in folded for y in _YTD):
        out.append(Finding("ytd_on_balance", lang, "a balance (a stock at the period end) has no year to date"))
    prefix = _CONSTRUCTION.search(text)
    if prefix:
        out.append(Finding("construction_prefix", lang,
                           f"names an entity with the construction word {prefix.group(0)!r}, which its pages never use"))
    fmt = ctx.fmt
    if (ctx.tool_unit == "lots" and fmt is not None and fmt.kind == "integer" and fmt.unit == "shares"):
        out.append(Finding("unit_not_reported", lang, "asks whole shares of a count the tool reports in lots of 100 shares"))
    definition = ctx.definition_en if lang == "en" else ctx.definition_zh
    if definition and definition not in text:
        out.append(Finding("undefined_indicator", lang, f"does not state the indicator's definition {definition!r}"))
    return out


def _format_findings(lang: str, ctx: LintContext) -> list[Finding]:
    fmt = ctx.fmt
    if fmt is None or fmt.kind not in ("number", "percent", "integer"):
        return []
    out: list[Finding] = []
    base = "%" if fmt.kind == "percent" else unit_scale(fmt.unit)[0]
    if (fmt.decimals or 0) > 2 and ctx.kind not in FINE_KINDS and (base in CURRENCIES or base in ("%", "points", "shares", "units")):
        out.append(Finding("over_precision", lang, f"{fmt.decimals} decimals on a value in {base}"))
    scaled_word = fmt.unit is not None and re.search(r"\b(thousand|million|billion|trillion)\b", fmt.unit)
    if ctx.value is not None and abs(ctx.value) > HUGE and not scaled_word:
        out.append(Finding("huge_unscaled", lang, f"answer {ctx.value:.6g} in {fmt.unit!r} has no scale word"))
    return out


def lint_question(question: str, question_zh: str | None, ctx: LintContext = LintContext()) -> list[Finding]:
    """Findings of both texts of a question; a format finding is reported once (English)."""
    found = lint_text(question, "en", ctx)
    if question_zh is not None:
        found += [f for f in lint_text(question_zh, "zh", ctx) if f.rule not in ("over_precision", "huge_unscaled")]
    return found
