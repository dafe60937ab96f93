"""Reading a question and a page, as the deterministic web baselines do (search-read and the
navigator): what a question asks, read from the text the template verbalizer writes (`Reading`:
entity, quantity, relative time, aggregate, unit), and what a page says (`parse_page`: its
tables, links and data date; `candidates_from_page`: the figures it gives for a question), with
the arithmetic of a window (`aggregate`), unit conversion and the choice among pages (`choose`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Callable, Sequence
from urllib.parse import urlsplit

import httpx

from livesearch_pipeline.core.models import ServedQuestion
from livesearch_pipeline.core.normalize import unit_scale
from livesearch_pipeline.core.program import window_rows  # N + 1 closes for a change over N sessions
from livesearch_pipeline.evaluation.agents.loop import ToolFailure
from livesearch_pipeline.web.wording import canonical_label

_ITEM_HEADERS = {("item", "value", "unit"), ("项目", "数值", "单位")}
_DATE_HEADERS = {"date", "日期"}
_AS_OF = re.compile(r"(?:Data as of|数据截至)\s*([0-9]{4}(?:Q[1-4]|[0-9]{2}(?:[0-9]{2})?)?)")
UNIT_SUFFIX = re.compile(r"\s*\(([^()]*)\)\s*$")
_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d+)?$")

# The leading words of a window question, as the template verbalizer writes them.
_WINDOW_HEADS = (
    ("What was the sample standard deviation of the ", "std"), ("What were the sample standard deviation of the ", "std"),
    ("By how much did the ", "change"), ("By what percentage did the ", "pct_change"),
)
# Aggregates whose result is not in the figure's unit (a date, a count, a percentage change).
_UNITLESS = ("argmax", "argmin", "count", "pct_change")
_AGGREGATE_WORDS = {"average": "mean", "highest": "max", "lowest": "min", "total": "sum", "first": "first",
                    "last": "last"}
# How a question counts days: its instrument's own sessions, a named exchange's ("Shanghai Stock
# Exchange trading days"), or FX's weekdays (construction/conventions.py).
_DAYS = r"(?:(?:[A-Z][a-z]+ )*trading days|weekdays)"
_DAY = r"(?:(?:[A-Z][a-z]+ )*trading day|weekday)"
_UNIT_TAIL = re.compile(r", (?:in (?P<unit>.+?) to (?P<places>\d+) decimals?|to (?P<bare>\d+) decimals?|"
                        r"as a whole number(?: of (?:100-share )?(?P<whole>.+?))?)\?(?: [^?]+\.)?$")  # a definition may follow
# Where the quantity's noun ends in the question (whichever comes first).
_NOUN_ENDS = re.compile(r" of | over (?:the )?| on the most recent| for the | at the end of| in the most recent| on the "
                        r"(?:Shanghai|Shenzhen) Stock Exchange| \d+ trading days before"
                        rf"| on the {_DAY} \d+ (?:sessions|weekdays) before"
                        r"| change over| change from| in the one-minute")
_ZH_AGGREGATE = re.compile(r"(?:最近\d+个[^（，。？]{0,8}?(?:交易日|工作日)（含最近一个(?:交易日|工作日)）(?:的[周月]线)?|"
                           r"至最近一个(?:交易日|工作日)，)(.+?)的(?:平均值|最高值|最低值|合计|首日值|末日值|"
                           r"样本标准差|变化|涨跌幅)")

@dataclass(frozen=True)
class Reading:
    """What the question asks, as this agent reads it."""

    kind: str  # latest | static | snapshot | window | match
    name: str  # the subject as the question names it (empty for market-wide series)
    quantity_en: str
    quantity_zh: str | None
    sessions: int = 0  # snapshot: sessions back; window: window length
    aggregate: str | None = None
    match_key: str | None = None
    match_value: str | None = None
    answer: str = "number"  # number | percent | integer | date | text
    unit: str | None = None
    decimals: int | None = None
    # The row a table of many instruments is read at: an FX pair ("EURUSD"), an exchange ("SSE")
    # of a market-wide series, a fund's or an index's constituent ("301494.SZ").
    key: str | None = None


class UnreadableQuestion(ValueError):
    """The question has a shape this baseline does not attempt (minute bars, two entities, ...)."""


def read_question(question: ServedQuestion) -> Reading:
    """What the question asks, read from the English text the template verbalizer writes (entity,
    quantity, relative time, one unit): e.g. "What was the closing price of X (600123.SH) on the trading
    day 5 sessions before the most recent one, in CNY to 2 decimals?"."""
    text = question.question
    answer, unit, decimals = _precision(text)
    tail = _UNIT_TAIL.search(text)
    body = text[: tail.start()] if tail else text.rstrip("?")
    if (" exceed that of " in body or " beat that of " in body or " minus that of " in body
            or " minus the return of " in body or "one-minute bar" in body or " closed highest" in body):
        raise UnreadableQuestion("compares two entities, or needs minute bars or a reference session")
    code = question.entity
    subject = re.search(rf" (?:of|did) ((?:(?! of | did )[^()])+?) \({re.escape(code)}\)", body) if code else None
    name = subject.group(1) if subject else ""
    kind, sessions, aggregate, match_key, match_value = "latest", 0, None, None, None
    quantity = None
    series = re.search(r" for the (?:shareholder|business segment) “(.+?)”", body)
    if series:
        match_key, match_value = "series", series.group(1)
    if (found := re.match(rf"On which (?:{_DAY} in the last (\d+) (?:sessions|weekdays) did .+? record its "
                          rf"(highest|lowest) (.+?)\? Give the date|of the last (\d+) {_DAYS} (?:was|were) the (.+?) "
                          r"at its (highest|lowest))", text)):
        kind = "window"
        sessions = int(found.group(1) or found.group(4))
        aggregate = "argmax" if (found.group(2) or found.group(6)) == "highest" else "argmin"
        quantity = found.group(3) or found.group(5)
    elif (found := re.search(rf"over (?:the (?:week|month)ly bars of )?the last (\d+) {_DAYS}|from the {_DAY} "
                             rf"(\d+) (?:sessions|weekdays) before the most recent one to the most recent {_DAY}", body)):
        # A change from the trading day k sessions back is a change over k sessions: k + 1 closes
        # (`window_rows`, the window convention).
        kind, sessions = "window", int(found.group(1)) if found.group(1) else int(found.group(2))
        head = next(((prefix, agg) for prefix, agg in _WINDOW_HEADS if body.startswith(prefix)), None)
        if head is not None:
            aggregate, rest = head[1], body[len(head[0]):]
        elif (start := re.match(r"What (?:was|were) the (\S+) ", body)) and start.group(1) in _AGGREGATE_WORDS:
            aggregate, rest = _AGGREGATE_WORDS[start.group(1)], body[start.end():]
        else:
            raise UnreadableQuestion("an aggregate this baseline does not recognise")
        quantity = _noun(rest, code)
    elif (found := re.search(rf" (?:on the {_DAY} )?(\d+) (?:trading days|sessions|weekdays) before the most recent "
                             r"one", body)):
        kind, sessions = "snapshot", int(found.group(1))
    elif re.match(r"What (?:is|are) the ", body):
        kind = "static"
    elif " most recent" not in body and " most recently" not in body:
        raise UnreadableQuestion("a period or anchor this baseline does not recognise")
    if match_value is not None and kind == "latest":
        kind = "match"
    if quantity is None:
        lead = re.match(r"What (?:was|were|is|are) the (?:latest completed (?:week|month)'s )?", body)
        if lead is None:
            raise UnreadableQuestion("a question shape this baseline does not recognise")
        quantity = _noun(body[lead.end():], code)
    return Reading(kind=kind, name=name, quantity_en=quantity, quantity_zh=_quantity_zh(question.question_zh),
                   sessions=sessions, aggregate=aggregate, match_key=match_key, match_value=match_value,
                   answer=answer, unit=unit, decimals=decimals, key=row_key(body, bool(name)))


# The exchanges a market-wide series is reported per, as the questions name them.
_EXCHANGE_KEYS = {"Shanghai Stock Exchange": "SSE", "Shenzhen Stock Exchange": "SZSE"}


def row_key(body: str, named: bool) -> str | None:
    """The row a question reads in a table listing many instruments: the constituent of a fund's
    portfolio or an index's weights ("for the constituent 301494.SZ"), else, for a market-wide
    series (no entity named), its FX pair ("EUR/USD" → "EURUSD") or exchange ("SSE")."""
    if (found := re.search(r" for the constituent ([0-9A-Z]+\.[A-Z]+)\b", body)):
        return found.group(1)
    if named:
        return None
    if (found := re.search(r"\b([A-Z]{3})/([A-Z]{3})\b", body)):
        return found.group(1) + found.group(2)
    # A series on a named exchange ("on the Shanghai Stock Exchange"), not a calendar named
    # ("the last 20 Shanghai Stock Exchange trading days").
    return next((key for name, key in _EXCHANGE_KEYS.items() if re.search(rf" {name}(?! trading day)", body)), None)


def _is_key(cell: str, key: str) -> bool:
    text = cell.replace("/", "").strip().upper()
    return text == key.upper() or text.split(".")[0] == key.upper() and "." not in key


def keyed_table(rows: Sequence[Sequence[str]], key: str) -> list[list[str]] | None:
    """A table listing many instruments restated as the history of one (`key`): its rows of that
    instrument, newest first, under a header whose first column is the rows' date (the first
    column printing a date on every such row) and without the instrument's column; None when the
    table has no row of `key` or no date."""
    if len(rows) < 2:
        return None
    header, body = list(rows[0]), [list(r) for r in rows[1:]]
    column = next((i for i in range(len(header)) if any(len(r) > i and _is_key(r[i], key) for r in body)), None)
    if column is None:
        return None
    kept = [r for r in body if len(r) > column and _is_key(r[column], key)]
    date = next((i for i in range(len(header)) if i != column
                 and all(len(r) > i and re.fullmatch(r"\d{8}", r[i]) for r in kept)), None)
    if date is None:
        return None
    order = [date] + [i for i in range(len(header)) if i not in (date, column)]
    restated = [["date"] + [header[i] for i in order[1:]]]
    restated += sorted(([r[i] for i in order] for r in kept), key=lambda r: r[0], reverse=True)
    return restated


def _noun(rest: str, code: str) -> str:
    """The quantity's noun at the start of `rest`: up to " of <name> (<code>)" when the entity is
    named (a noun may hold " of " itself: "holding as a percentage of float shares"), else up to
    the first phrase that follows a noun."""
    if code and (subject := re.search(rf" of (?:(?! of )[^()])+? \({re.escape(code)}\)", rest)):
        return rest[: subject.start()]
    return _NOUN_ENDS.split(rest, maxsplit=1)[0]


def _quantity_zh(text: str | None) -> str | None:
    if not text:
        return None
    if (found := _ZH_AGGREGATE.search(text)):
        return found.group(1)
    if (found := re.search(r"个交易日中([^的，。？]+?)最[高低大小]的是哪", text)):  # the day of a window's extreme
        return found.group(1)
    found = re.findall(r"的([^的，。？]+?)(?:是多少|是什么|是哪)", text)
    return found[-1] if found else None


def _unit_words(unit: str) -> str:
    """"billions of CNY" → "billion CNY": the form `unit_scale` reads."""
    found = re.fullmatch(r"(thousand|million|billion|trillion)s of (.+)", unit)
    return f"{found.group(1)} {found.group(2)}" if found else unit


def _precision(text: str) -> tuple[str, str | None, int | None]:
    if "Give the date as YYYY-MM-DD" in text:
        return "date", None, None
    tail = _UNIT_TAIL.search(text)
    if tail is None:
        return "text", None, None
    if tail.group("unit") == "percent":
        return "percent", "%", int(tail.group("places"))
    if tail.group("unit"):
        return "number", _unit_words(tail.group("unit")), int(tail.group("places"))
    if tail.group("bare"):
        return "number", None, int(tail.group("bare"))
    return "integer", tail.group("whole"), 0


# --------------------------------------------------------------------------- reading pages


@dataclass
class _Table:
    rows: list[list[str]] = field(default_factory=list)


class _PageParser(HTMLParser):
    """Tables (rows of cell texts), the published date and the visible text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[_Table] = []
        self.title = ""
        self.published: str | None = None
        self.text: list[str] = []
        self.links: list[tuple[str, str]] = []
        self._link: tuple[str, list[str]] | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append(_Table())
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "title":
            self._in_title = True
        elif tag == "a" and dict(attrs).get("href"):
            self._link = (str(dict(attrs)["href"]), [])
        elif tag == "meta" and dict(attrs).get("name") == "date":
            self.published = dict(attrs).get("content")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            self.tables[-1].rows.append(self._row)
            self._row = None
        elif tag == "title":
            self._in_title = False
        elif tag == "a" and self._link is not None:
            self.links.append((self._link[0], " ".join("".join(self._link[1]).split())))
            self._link = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._in_title:
            self.title += data
        if self._link is not None:
            self._link[1].append(data)
        self.text.append(data)


@dataclass(frozen=True)
class Candidate:
    value: float | str
    unit: str | None
    as_of: str
    url: str
    rank: int
    label: str


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def label_matches(label: str, reading: Reading, question: ServedQuestion) -> bool:
    """The row or column label names the quantity the question asks for, in the question's words or
    in a site's synonyms for them ("Close" for closing price, "归母净利润" for 归属于母公司股东的净利润):
    both are compared in the lexicon's canonical wording (web/wording.py)."""
    return label_matcher(reading, question)(label)


def label_matcher(reading: Reading, question: ServedQuestion) -> Callable[[str], bool]:
    """`label_matches` for one question and reading, its question texts put in canonical wording
    once for the many labels it is asked about."""
    # The question itself, not the definition that may follow it ("DIF is the 12-day EMA minus
    # the 26-day EMA of the back-adjusted close" names no quantity asked).
    asked_en = canonical_label(_asked(question.question, "?"), "en")
    asked_zh = (canonical_label(_asked(question.question_zh, "？"), "zh")
                if question.question_zh and reading.quantity_zh else None)

    def matches(label: str) -> bool:
        for candidate in {label, _without_unit(label)}:
            if len(candidate) < 2:
                continue
            english = canonical_label(candidate, "en")
            if len(english) >= 4 and english in asked_en:
                return True
            if asked_zh is not None:
                chinese = canonical_label(candidate, "zh")
                if len(chinese) >= 2 and chinese in asked_zh:
                    return True
        return False

    return matches


def _without_unit(label: str) -> str:
    """A label without the unit in parentheses it may end with ("Close (CNY)" → "Close")."""
    return UNIT_SUFFIX.sub("", label) if label.endswith(")") and not label.endswith("))") else label


def _asked(text: str, mark: str) -> str:
    """A question's text up to its question mark (a definition may follow it)."""
    return text.split(mark, 1)[0] + mark if mark in text else text


@functools.lru_cache(maxsize=4096)
def _english_nouns(label: str) -> tuple[str, ...]:
    """The canonical English nouns of the lexicon's fields whose Chinese noun is `label`."""
    from livesearch_pipeline.core.lexicon import load_lexicon

    lexicon = load_lexicon()
    wanted = canonical_label(label, "zh")
    entries = [e for name in lexicon.fields for e in lexicon.entries_for(name)]
    entries += [e for tool, overrides in lexicon.tools.items() for name in overrides
                if name not in lexicon.fields and (e := lexicon.entry(tool, name)) is not None]
    return tuple(sorted({canonical_label(e.en, "en") for e in entries if canonical_label(e.zh, "zh") == wanted}))


def best_label(labels: Sequence[str], reading: Reading, question: ServedQuestion) -> int | None:
    """Index of the label that is the quantity's noun, else of the longest label that names the
    quantity (a longer label is the more specific; "trading day" is named by "on the most recent
    trading day" but is not the quantity)."""
    matches = label_matcher(reading, question)
    matching = [(len(label), -i, i) for i, label in enumerate(labels) if matches(label)]
    if len(matching) > 1 and reading.quantity_en:
        noun = canonical_label(reading.quantity_en, "en")
        exact = [m for m in matching if noun in _english_forms(labels[m[2]])]
        longest = max(matching)[2]
        # ... unless the longest label is the noun made more specific ("manufacturing PMI of large
        # enterprises" where the noun read is "manufacturing PMI").
        if exact and not any(noun in form for form in _english_forms(labels[longest])):
            return max(exact)[2]
    return max(matching)[2] if matching else None


def _english_forms(label: str) -> set[str]:
    """A label's canonical English noun, without its unit suffix: its own words, or the lexicon's
    English nouns of the field a Chinese label names."""
    bare = UNIT_SUFFIX.sub("", label).strip()
    return {canonical_label(bare, "en"), *_english_nouns(bare)}


def cell_number(cell: str) -> float | None:
    text = cell.replace(",", "").strip()
    return float(text) if _NUMBER.match(text) else None


def aggregate_values(values: list[float], dates: list[str], aggregate: str) -> float | str | None:
    """`values`/`dates` oldest first."""
    if not values:
        return None
    if aggregate == "mean":
        return statistics.fmean(values)
    if aggregate == "max":
        return max(values)
    if aggregate == "min":
        return min(values)
    if aggregate == "sum":
        return math.fsum(values)
    if aggregate == "change":
        return values[-1] - values[0]
    if aggregate == "pct_change":
        return None if values[0] == 0 else (values[-1] / values[0] - 1) * 100
    if aggregate == "std":
        return statistics.stdev(values) if len(values) > 1 else None
    if aggregate == "count":
        return float(len(values))
    if aggregate == "first":
        return values[0]
    if aggregate == "last":
        return values[-1]
    if aggregate in ("argmax", "argmin"):
        best = max(values) if aggregate == "argmax" else min(values)
        return dates[values.index(best)]  # the earliest session on a tie (oldest first)
    raise ValueError(f"unknown aggregate {aggregate!r}")


@dataclass(frozen=True)
class ParsedPage:
    """What the agent reads of a page whatever the question: its tables and its data date."""

    tables: tuple[tuple[tuple[str, ...], ...], ...]  # rows of cell texts, per table
    as_of: str
    links: tuple[tuple[str, str], ...] = ()  # (href, text), in page order
    title: str = ""


def parse_page(html: str) -> ParsedPage:
    parser = _PageParser()
    parser.feed(html)
    parser.close()
    text = "".join(parser.text)
    as_of_match = _AS_OF.search(text)
    as_of = as_of_match.group(1) if as_of_match else (parser.published or "").replace("-", "")
    return ParsedPage(tuple(tuple(tuple(row) for row in t.rows) for t in parser.tables), as_of,
                      tuple(parser.links), parser.title)


def candidates_from_page(html: str | ParsedPage, url: str, rank: int, reading: Reading,
                         question: ServedQuestion, snapshot_day: str | None = None) -> list[Candidate]:
    """The figures this page gives for the question (usually none or one). `snapshot_day`
    (YYYYMMDD), from the market's calendar: the session a snapshot asks for, or a window's first
    session; rows are then read by their dates (a data set may skip a session), else counted
    from the newest."""
    page = parse_page(html) if isinstance(html, str) else html
    as_of = page.as_of
    found: list[Candidate] = []
    many = sum(1 for rows in page.tables if rows and tuple(_norm(h) for h in rows[0]) in _ITEM_HEADERS) > 1
    for rows in page.tables:
        if reading.key is not None:
            # A table of many instruments is read at the question's row only.
            keyed = keyed_table(rows, reading.key)
            if keyed is None:
                continue
            rows = tuple(tuple(row) for row in keyed)
        table = _Table(rows=[list(row) for row in rows])
        if not table.rows:
            continue
        header = [_norm(h) for h in table.rows[0]]
        body = table.rows[1:]
        if tuple(header) in _ITEM_HEADERS and reading.kind in ("latest", "static"):
            index = best_label([row[0] for row in body if row], reading, question)
            if index is not None and len(body[index]) == 3:
                label, cell, unit = body[index]
                value = cell_number(cell) if reading.answer != "text" else cell
                # A page of many records (a month's bars each): the record's own date, if it prints one.
                dated = next((row[1] for row in body if len(row) == 3 and re.fullmatch(r"\d{8}", row[1])), None)
                if value is not None and cell not in ("—", "--"):
                    found.append(Candidate(value, unit or None, dated if dated and many else as_of, url, rank, label))
        elif header and header[0] in _DATE_HEADERS and reading.kind in ("latest", "snapshot", "window"):
            column = best_label(table.rows[0][1:], reading, question)
            if column is None:
                continue
            label = table.rows[0][column + 1]
            unit_match = UNIT_SUFFIX.search(label)
            unit = unit_match.group(1) if unit_match else None
            cells = [(row[0], cell_number(row[column + 1])) for row in body if len(row) > column + 1]
            if reading.kind == "latest" and cells and cells[0][1] is not None:
                found.append(Candidate(cells[0][1], unit, cells[0][0], url, rank, label))
            elif reading.kind == "snapshot" and snapshot_day is not None:
                dated = next((value for day, value in cells if day == snapshot_day), None)
                if dated is not None and cells[0][0] >= snapshot_day:
                    found.append(Candidate(dated, unit, cells[0][0], url, rank, label))
            elif reading.kind == "snapshot" and len(cells) > reading.sessions and cells[reading.sessions][1] is not None:
                found.append(Candidate(cells[reading.sessions][1], unit, cells[0][0], url, rank, label))
            elif reading.kind == "window" and snapshot_day is not None:
                # The window's sessions from its first (`snapshot_day`) to the newest, by date: the
                # rows a data set prints in that span, when the table reaches back to its start.
                window = [(d, v) for d, v in reversed(cells) if d >= snapshot_day]
                if (window and any(d <= snapshot_day for d, _ in cells) and all(v is not None for _, v in window)):
                    value = aggregate_values([v for _, v in window], [d for d, _ in window],  # type: ignore[misc]
                                             reading.aggregate or "mean")
                    if value is not None:
                        found.append(Candidate(value, None if reading.aggregate in _UNITLESS
                                               else unit, cells[0][0], url, rank, label))
            elif reading.kind == "window" and len(cells) >= window_rows(reading.aggregate, reading.sessions):
                window = list(reversed(cells[: window_rows(reading.aggregate, reading.sessions)]))
                if all(v is not None for _, v in window):
                    value = aggregate_values([v for _, v in window], [d for d, _ in window], reading.aggregate or "mean")
                    if value is not None:
                        found.append(Candidate(value, None if reading.aggregate in _UNITLESS
                                               else unit, cells[0][0], url, rank, label))
        elif reading.kind == "match" and reading.match_value is not None and len(table.rows) > 1:
            column = best_label(table.rows[0], reading, question)
            if column is None:
                continue
            for row in body:
                if reading.match_value in row and len(row) > column:
                    value = cell_number(row[column]) if reading.answer != "text" else row[column]
                    if value is not None:
                        unit_match = UNIT_SUFFIX.search(table.rows[0][column])
                        # The row's own date (a report's announcement), so the latest report wins.
                        dated = next((cell for cell in row if re.fullmatch(r"\d{8}", cell)), as_of)
                        found.append(Candidate(value, unit_match.group(1) if unit_match else None, dated, url, rank,
                                               table.rows[0][column]))
                    break
    if len({c.label for c in found}) > 1:
        # Several tables of one page (a report's statements) name the quantity: the one whose label
        # is it (the cash flow's "net increase in cash", not the balance sheet's "cash").
        best = best_label([c.label for c in found], reading, question)
        if best is not None:
            found = [c for c in found if c.label == found[best].label]
    return found


def convert(value: float, unit: str | None, wanted: str | None) -> float | None:
    """`value` in `unit` restated in `wanted`; None when the two units cannot be reconciled."""
    if not unit or not wanted or unit == wanted:
        return value
    try:
        have_base, have_factor = unit_scale(unit)
        want_base, want_factor = unit_scale(wanted)
    except ValueError:
        return None
    # An ETF's shares are its units (DESIGN §4.8: its volume in lots of 100 units).
    if {have_base, want_base} == {"shares", "units"}:
        have_base = want_base
    if have_base != want_base or not have_factor or not want_factor:
        return None
    return value * have_factor / want_factor


def format_answer(value: float | str, reading: Reading) -> str:
    if isinstance(value, str):
        if reading.answer == "date" and re.fullmatch(r"\d{8}", value):
            return f"{value[:4]}-{value[4:6]}-{value[6:]}"
        return value
    if reading.answer == "percent":
        return f"{value:.{reading.decimals or 2}f}%"
    if reading.answer == "integer":
        return str(int(round(value)))
    decimals = reading.decimals if reading.decimals is not None else 2
    return f"{value:.{decimals}f}"


def choose(candidates: Sequence[Candidate], reading: Reading) -> tuple[str, Candidate] | None:
    """The answer: the freshest data date, then the value most pages give, then the best-ranked page."""
    usable: list[tuple[str, Candidate]] = []
    for candidate in candidates:
        value = candidate.value
        if isinstance(value, float) and reading.answer in ("number", "percent", "integer"):
            converted = convert(value, candidate.unit, reading.unit)
            if converted is None:
                continue
            value = converted
        usable.append((format_answer(value, reading), candidate))
    if not usable:
        return None
    freshest = max(c.as_of for _, c in usable)
    fresh = _most_specific([(answer, c) for answer, c in usable if c.as_of == freshest])
    votes = Counter(answer for answer, _ in fresh)
    top = max(votes.values())
    return min(((a, c) for a, c in fresh if votes[a] == top), key=lambda item: item[1].rank)


def _most_specific(found: list[tuple[str, Candidate]]) -> list[tuple[str, Candidate]]:
    """Of candidates whose labels all name the quantity asked, those whose label is not part of
    another's: "Net increase in cash & cash equivalents" over the balance sheet's "Cash & cash
    equivalents", 购建固定资产、无形资产和其他长期资产支付的现金 over 固定资产 (both are words of the
    question; the longer names it, the shorter only a part of it)."""
    named = [canonical_label(_without_unit(c.label)) for _, c in found]
    labels = set(named)
    return [item for item, mine in zip(found, named) if not any(other != mine and mine in other for other in labels)]


async def fetch_text(http: httpx.AsyncClient, url: str, *, timeout: float) -> str:
    """A page's text over HTTP for the scripted web agents; ToolFailure naming the URL on a
    non-http URL, a transport error or a status other than 200."""
    if urlsplit(url).scheme not in ("http", "https"):
        raise ToolFailure(f"not an http URL {url!r}")
    try:
        response = await http.get(url, timeout=timeout)
    except httpx.HTTPError as exc:
        raise ToolFailure(f"cannot fetch {url}: {type(exc).__name__}: {exc}") from exc
    if response.status_code != 200:
        raise ToolFailure(f"{url} answered HTTP {response.status_code}")
    return response.text


@contextlib.asynccontextmanager
async def forked_web_agent(agent):
    """`agent` (a scripted web agent: a dataclass with `tools` and `http`) in a forked worker
    process: the same agent, caches included, over its own HTTP client on the worker's event loop
    (the parent's client belongs to the parent's loop). Its `ForkableAgent.forked`."""
    async with httpx.AsyncClient() as http:
        yield dataclasses.replace(agent, tools=type(agent.tools)(agent.tools.config, http), http=http)
