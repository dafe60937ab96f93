"""What the navigator (evaluation/agents/navigator.py) and its chains (agents/chains.py) read off
one page, and one question's reading state: a column by its label in any site's words, the stock a
first hop's page names, the FX release's closing bids, a page's rows of a data set, the report
periods a company page links, a bulletin archive's pages for a code; the budget's exception; the
constants and helpers the navigator and its investigations (agents/investigations.py) share (a
market's calendar, a statement's figure on a report page, a code's asset class). They import it; it
imports none of them.
"""

from __future__ import annotations

import functools
import re
from contextvars import ContextVar
from urllib.parse import urlsplit
from dataclasses import dataclass, field
from typing import Any, Sequence

from livesearch_pipeline.core.lexicon import load_lexicon
from livesearch_pipeline.core.models import ReadBudget, ServedQuestion
from livesearch_pipeline.evaluation.agents.budget import Ledger
from livesearch_pipeline.evaluation.agents.reading import UNIT_SUFFIX, ParsedPage, Reading, cell_number

# A bulletin archive's item: the session's date, then its page's first and last codes.
_ARCHIVE_ITEM = re.compile(r"^(\d{4}-\d{2}-\d{2})\D.*?(\S+)\s*[–-]\s*(\S+)$")


class BudgetExhausted(Exception):
    """The question's page-read budget is spent."""


# What finding a code-free question's entity by its name cost before the question's own reading
# (evaluation/agents/entity_search.py): the question's ledger, which counted those searches and
# reads against its budget and holds their trace, and the site paths its searches showed. Set by
# the navigator for the duration of one question (a context variable: one per task); every
# `_Question` made for the question goes on with that ledger.
PRIOR_WORK: ContextVar[tuple[Ledger | None, frozenset[str]]] = ContextVar("prior_work", default=(None, frozenset()))


@dataclass
class _Question:
    """One question's state: its reading, what it has seen, its budget's ledger (agents/budget.py:
    the searches and reads made, each recorded in `trace`)."""

    question: ServedQuestion
    reading: Reading
    budget: ReadBudget | int | None  # its budget (an int: pages it may read; None: no limit)
    trace: list[dict[str, Any]] = field(default_factory=list)
    # The site paths it has seen: in its search results and in the links of the pages it read
    # (the navigator opens an exchange page only when it has seen it: NavigatorAgent._read).
    seen: set[str] = field(default_factory=lambda: set(PRIOR_WORK.get()[1]))
    ledger: Ledger = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.budget, ReadBudget):
            self.budget = ReadBudget(max_reads=self.budget)
        prior = PRIOR_WORK.get()[0]
        if prior is not None and prior.trace is not None:
            self.ledger, self.trace = prior, prior.trace
        else:
            self.ledger = Ledger(self.budget, self.trace)

    @property
    def reads(self) -> int:
        return self.ledger.reads

    @property
    def opened(self) -> set[str]:
        """The URLs it has read: a page open once is not read (nor counted) again for this question."""
        return self.ledger.opened


# The first hop's ranking column: a holding's market value, a constituent's weight.
_FIRST_HOP_FIELD = {"fund_portfolio": "mkv", "index_weight": "weight"}




def fx_bid_closes(page: ParsedPage, day: str) -> dict[str, float]:
    """The closing bid rate of each pair (USDCNH, ...) on `day` from an FX release's table."""
    out: dict[str, float] = {}
    for rows in page.tables:
        if len(rows) < 2:
            continue
        column = _column(rows[0], "fx_daily", "bid_close")
        if column is None:
            continue
        for row in rows[1:]:
            if len(row) > column and day in row:
                value = cell_number(row[column])
                if value is not None:
                    out[row[0].split(".")[0].replace("/", "")] = value
    return out


def top_of_first_hop(page: ParsedPage, tool: str) -> str | None:
    """The stock a fund's portfolio page (largest market value in its latest report) or an index's
    weights page (highest weight at its latest rebalance) names first; the earliest listed on a tie."""
    best: tuple[str, float, int, str] | None = None  # (period, value, -position, code)
    for rows in page.tables:
        if len(rows) < 2:
            continue
        header = list(rows[0])
        value_col = _column(header, tool, _FIRST_HOP_FIELD[tool])
        code_col = next((i for i, cell in enumerate(rows[1]) if re.fullmatch(r"\d{6}\.(?:SH|SZ|BJ)", cell)), None)
        if value_col is None or code_col is None:
            continue
        date_cols = [i for i, cell in enumerate(rows[1]) if re.fullmatch(r"\d{8}", cell)]
        for position, row in enumerate(rows[1:]):
            if len(row) <= max(value_col, code_col):
                continue
            value = cell_number(row[value_col])
            period = max((row[i] for i in date_cols if i < len(row)), default="")
            if value is None:
                continue
            key = (period, value, -position, row[code_col])
            if best is None or key[:3] > best[:3]:
                best = key
    return best[3] if best else None


def _column(header: Sequence[str], tool: str, field_name: str) -> int | None:
    """The column of `header` printing `field_name` of `tool` (its label in any site's words)."""
    from livesearch_pipeline.web.wording import canonical_label

    entry = load_lexicon().entry(tool, field_name)
    if entry is None:
        return None
    for position, label in enumerate(header):
        bare = UNIT_SUFFIX.sub("", label).strip()
        for lang, noun in (("en", entry.en), ("zh", entry.zh)):
            if noun and canonical_label(bare, lang) == canonical_label(noun, lang):
                return position
    return None


def history_rows(page: ParsedPage, tool: str, fields: Sequence[str]) -> list[dict[str, Any]]:
    """The records of `fields` of `tool` on a page, newest first ({"date", field: value}): its
    history table, else its item table (the latest record only)."""
    for rows in page.tables:
        if len(rows) < 2 or rows[0][0].lower() not in ("date", "日期"):
            continue
        columns = [_column(rows[0], tool, f) for f in fields]
        if any(c is None for c in columns):
            continue
        out = []
        for row in rows[1:]:
            values = [cell_number(row[c]) if c is not None and c < len(row) else None for c in columns]
            if all(v is not None for v in values):
                out.append({"date": row[0], **dict(zip(fields, values))})
        return out
    # An item table (the latest record only).
    for rows in page.tables:
        if rows and len(rows[0]) == 3:
            labels = [row[0] for row in rows[1:] if row]
            columns = [_column(labels, tool, f) for f in fields]
            day = next((r[1] for r in rows[1:] if len(r) > 1 and re.fullmatch(r"\d{8}", r[1])), None)
            if day is not None and all(c is not None for c in columns):
                values = [cell_number(rows[1 + c][1]) for c in columns if c is not None]
                if all(v is not None for v in values):
                    return [{"date": day, **dict(zip(fields, values))}]
    return []


_REPORT_COVER = re.compile(r"^/exchange/reports/(?P<code>[^/]+)/(?P<period>\d{8})\.html$")


def report_periods(hub: ParsedPage, code: str) -> list[str]:
    """The report periods (YYYYMMDD) of `code`'s periodic reports its company page links, newest
    first; each report's page (a long report's cover) is /exchange/reports/<code>/<period>.html."""
    return sorted({m.group("period") for href, _ in hub.links
                   if (m := _REPORT_COVER.match(urlsplit(href).path)) and m.group("code") == code}, reverse=True)


def archive_index(listing: ParsedPage, code: str) -> tuple[list[str], dict[str, str]]:
    """A bulletin archive read for `code`: every period it lists (YYYY-MM-DD, newest first, as
    listed) and, for each, the link to the page whose code range holds `code`."""
    periods: list[str] = []
    page_of: dict[str, str] = {}
    for href, text in listing.links:
        found = _ARCHIVE_ITEM.match(text)
        if found is None:
            continue
        day, first, last = found.groups()
        if day not in periods:
            periods.append(day)
        if first <= code <= last:
            page_of.setdefault(day, href)
    return periods, page_of


# ---------------------------------------------------------------- shared by the navigator and its investigations

# Search results a question reads of each query.
RESULTS_PER_QUERY = 8
# The trading calendar of each asset class's market (a snapshot's session is counted on it).
_CALENDARS = {"cn_equity": "XSHG", "fund": "XSHG", "index": "XSHG", "hk_equity": "XHKG", "us_equity": "XNYS"}


@functools.lru_cache(maxsize=1)
def _publication_lags() -> dict[str, int]:
    """Sessions between a record's date and its publication, per data set that has a lag (a
    fund's NAV is announced the next session): what an analyst knows of its release."""
    from livesearch_pipeline.dataservice.catalog import collect_tool_specs

    return {spec.meta.name: spec.meta.publication_lag_sessions for spec in collect_tool_specs()
            if spec.meta.publication_lag_sessions}


# The income statement of each asset class's reports and the fields its growth and margin
# questions name (DESIGN's statement families: growth of four fields, three margins over revenue).
_INCOME = {"cn_equity": "income", "hk_equity": "hk_income", "us_equity": "us_income"}
_STATEMENT_FIELDS = ("revenue", "n_income", "n_income_attr_p", "operate_profit", "rd_exp")


def _statement_field(tool: str, noun: str) -> str | None:
    """The income statement's field a question's noun names (the lexicon's English noun)."""
    from livesearch_pipeline.web.wording import canonical_label

    lexicon = load_lexicon()
    for name in _STATEMENT_FIELDS:
        entry = lexicon.entry(tool, name)
        if entry is not None and entry.en and canonical_label(entry.en, "en") == canonical_label(noun, "en"):
            return name
    return None


def report_figure(page: ParsedPage, tool: str, field_name: str) -> float | None:
    """A report page's figure of `field_name` of the statement `tool` (its first item table naming it)."""
    for rows in page.tables:
        if not rows or len(rows[0]) != 3:
            continue
        labels = [row[0] for row in rows[1:] if row]
        position = _column(labels, tool, field_name)
        if position is not None and len(rows[1 + position]) == 3:
            return cell_number(rows[1 + position][1])
    return None


def _class_of(code: str, default: str) -> str:
    """The asset class a code's form tells (another entity named in a comparison)."""
    if code.endswith(".HK"):
        return "hk_equity"
    if code.endswith(".OF"):
        return "fund"
    if "." not in code:
        return "us_equity"
    return default
