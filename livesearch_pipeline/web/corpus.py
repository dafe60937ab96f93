"""The pages of the offline web at a clock, generated from the embedded data service.

Every figure comes from a tool call to the embedded `DataService` at the corpus clock (never
the wall clock), so a page can only show what the service would return that day; a page's
published date is the date of the data it shows and is never after the clock.

Who writes about an entity follows its visibility level (0..10):
- level 0: only the exchange's filing index (announcement titles and dates, no figures);
- level >= 1: the exchange's periodic-report pages, plus data-portal pages from
  `1 + level // 2` of six portals (a per-entity choice); each portal covers each of the
  entity's tools with probability `0.3 + 0.07 * level`, and shows the latest data with
  probability `0.5 + 0.045 * level` (otherwise it lags one to three updates: a stale page);
- news items on the sessions of the history window, with probability `0.05 + 0.07 * level`
  per session and news site; history tables from level 4; spam about entities from level 6.
Portals differ the way real ones do: one restates big amounts in 亿元, one in million, one
rounds to one decimal, two sometimes carry third-party figures that disagree by 0.5-3%.

All randomness is a hash of (seed, purpose, entity, tool, site[, date]): the corpus is a pure
function of (seed, clock, history window).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import struct
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from livesearch_pipeline.core.lexicon import load_lexicon
from livesearch_pipeline.core.catalog import FieldMeta, ToolMeta
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline.web.render import (
    Block, Heading, Links, Paragraph, Table, format_number, render_page, restate_amount,
)

CORPUS_VERSION = "1"


@dataclass(frozen=True)
class Site:
    key: str  # first path segment of its URLs
    name: str
    lang: str  # "en" | "zh"
    role: str  # "exchange" | "portal" | "news" | "stats" | "spam"
    restates: bool = False  # big amounts in 亿元 (zh) / million (en)
    rounding: int | None = None  # every figure rounded to this many decimals
    disagree: float = 0.0  # probability that a page carries a third-party feed's (different) figures


PORTALS = (
    Site("finquote", "FinQuote", "en", "portal"),
    Site("caijing", "财经数据网", "zh", "portal"),
    Site("marketpulse", "MarketPulse", "en", "portal", restates=True),
    Site("gushi", "股市通", "zh", "portal", restates=True, disagree=0.35),
    Site("quotehub", "QuoteHub", "en", "portal", rounding=1),
    Site("hangqing", "行情中心", "zh", "portal", disagree=0.2),
)
NEWS_SITES = (Site("investwire", "InvestWire", "en", "news"), Site("caixun", "财讯网", "zh", "news"))
EXCHANGE = Site("exchange", "Exchange Disclosure Portal 交易所信息披露平台", "zh", "exchange")
STATS = Site("stats", "Statistics Release Portal 统计数据发布", "zh", "stats")
SPAM_SITES = (Site("hotstocktips", "Hot Stock Tips", "en", "spam"), Site("niugu", "牛股天天荐", "zh", "spam"))
SITES = {s.key: s for s in (*PORTALS, *NEWS_SITES, EXCHANGE, STATS, *SPAM_SITES)}

SERVICE_ZH = {
    "reference": "基本资料", "cn_quotes": "A股行情", "hk_us": "港美股行情", "indices": "指数行情",
    "funds": "基金数据", "statements": "财务数据", "corporate": "公司公告与股东", "microstructure": "资金与交易",
    "macro": "宏观与利率汇率",
}
# Tools with no entity whose data a portal publishes (macro releases, rates, FX, market flows).
MARKET_TOOL_CLASSES = frozenset({"macro", "rates_fx", "market"})
# Reference lists and calendars are not pages anyone reads for a figure.
_SKIPPED_TOOLS = frozenset({"trade_cal", "hk_tradecal", "us_tradecal", "new_share", "hs_const", "fund_company",
                            "index_classify"})
# Market-wide series (rates, FX, macro releases) are household names: the pool scores them 10.
MARKET_VISIBILITY = 10
# How far back each refresh class is fetched, in days (a lag of up to three updates must fit).
_WINDOW_DAYS = {"weekly": 60, "monthly": 200, "quarterly": 800, "annual": 1500}
# Announcing tools whose records the exchange's filing index lists, with the title they get.
_FILINGS = {
    "income": ("Periodic report", "定期报告"), "hk_income": ("Periodic report", "定期报告"),
    "us_income": ("Periodic report", "定期报告"), "dividend": ("Dividend announcement", "分红派息公告"),
    "fund_div": ("Distribution announcement", "基金分红公告"), "forecast": ("Earnings forecast", "业绩预告"),
    "express": ("Preliminary results", "业绩快报"), "share_float": ("Lock-up expiry notice", "限售股解禁公告"),
    "repurchase": ("Share repurchase announcement", "回购公告"),
}
_REPORT_TOOLS = {
    "cn_equity": ("income", "balancesheet", "cashflow", "fina_indicator"),
    "hk_equity": ("hk_income", "hk_balancesheet", "hk_cashflow", "hk_fina_indicator"),
    "us_equity": ("us_income", "us_balancesheet", "us_cashflow", "us_fina_indicator"),
}
_QUOTE_TOOL = {"cn_equity": "daily", "hk_equity": "hk_daily", "us_equity": "us_daily", "index": "index_daily",
               "fund": "fund_nav"}
REPORTS_BACK = 4
# Calendar days fetched for daily tools other than the quote tool: a history table and a lag of
# three updates fit; only the quote tool reaches back over the whole history window.
RECENT_DAYS = 100
HISTORY_ROWS = 60
FILING_ROWS = 40


class WebCorpusError(RuntimeError):
    """The corpus cannot be generated as asked (bad configuration, or a tool answered unexpectedly)."""


@dataclass(frozen=True)
class CorpusConfig:
    clock: dt.date
    seed: int = DEFAULT_SEED
    # Dated pages (news items, market wraps) reach back this many sessions before the clock.
    history_sessions: int = 20
    # A part of the web (tests, demos): only these entities' pages and these market series'
    # pages. None means every entity / every market series of the market.
    entities: tuple[str, ...] | None = None
    market_tools: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None  # entity tools whose pages exist (None: all)

    def __post_init__(self) -> None:
        if not 1 <= self.history_sessions <= 400:
            raise WebCorpusError(f"history_sessions must be between 1 and 400, got {self.history_sessions}")

    @property
    def identity(self) -> str:
        part = ""
        if self.entities is not None or self.market_tools is not None or self.tools is not None:
            digest = hashlib.sha256(repr((self.entities, self.market_tools, self.tools)).encode()).hexdigest()[:12]
            part = f" part={digest}"
        return (f"livesearch-offline-web/{CORPUS_VERSION} market-seed={self.seed} clock={self.clock.isoformat()} "
                f"history={self.history_sessions}{part}")


@dataclass(frozen=True, slots=True)
class Page:
    path: str  # URL path, e.g. /finquote/daily/600519.SH.html
    site: str
    kind: str  # quote | data | history | profile | report | filings | news | wrap | release | spam
    lang: str
    title: str
    published: dt.date
    entity: str | None
    snippet: str
    text: str
    html: str


def _unit(seed: int, *parts: object) -> float:
    """A uniform number in [0, 1) fixed by the seed and the parts."""
    digest = hashlib.blake2b("|".join(map(str, (seed, *parts))).encode(), digest_size=8).digest()
    return struct.unpack(">Q", digest)[0] / 2**64


def sources_for(visibility: int) -> int:
    """How many portals publish data pages about an entity of this visibility level."""
    return 0 if visibility <= 0 else min(len(PORTALS), 1 + visibility // 2)


def coverage_probability(visibility: int) -> float:
    return min(1.0, 0.3 + 0.07 * visibility)


def fresh_probability(visibility: int) -> float:
    return min(0.97, 0.5 + 0.045 * visibility)


def news_probability(visibility: int) -> float:
    return 0.0 if visibility <= 0 else min(0.9, 0.05 + 0.07 * visibility)


# --------------------------------------------------------------------------- data access


@dataclass
class _Fetched:
    """Records of one tool for one entity (or none), newest first, grouped by time key."""

    meta: ToolMeta
    groups: list[list[dict[str, Any]]]


class _Reader:
    """The data service at the corpus clock; every call is checked and read once."""

    def __init__(self, config: CorpusConfig) -> None:
        self.config = config
        self.service = DataService(config=ServiceConfig(seed=config.seed, clock=config.clock),
                                   market=shared_market(config.seed))
        self.market = self.service.market
        self.specs = {s.name: s for s in self.service.specs if s.meta.role == "data"}

    def window_start(self, meta: ToolMeta, history_days: int) -> dt.date:
        days = _WINDOW_DAYS.get(meta.refresh_class, history_days)
        return self.config.clock - dt.timedelta(days=max(days, 10))

    def fetch(self, tool: str, entity: str | None, history_days: int) -> _Fetched:
        spec = self.specs[tool]
        meta = spec.meta
        args: dict[str, Any] = {}
        if entity is not None:
            args[meta.entity_param] = entity
        names = {p.name for p in spec.params}
        start = self.window_start(meta, history_days)
        if meta.time_key is not None and {"start_date", "end_date"} <= names:
            args.update(start_date=start.strftime("%Y%m%d"), end_date=self.config.clock.strftime("%Y%m%d"))
        elif {"start_m", "end_m"} <= names:
            args.update(start_m=(self.config.clock - dt.timedelta(days=800)).strftime("%Y%m"),
                        end_m=self.config.clock.strftime("%Y%m"))
        elif {"start_q", "end_q"} <= names:
            first = self.config.clock - dt.timedelta(days=1100)
            args.update(start_q=f"{first.year}Q{(first.month - 1) // 3 + 1}",
                        end_q=f"{self.config.clock.year}Q{(self.config.clock.month - 1) // 3 + 1}")
        args["limit"] = 2000
        try:
            result = self.service.call(tool, args)
        except Exception as exc:
            raise WebCorpusError(f"tool {tool} failed for {entity or 'the market'} at clock "
                                 f"{self.config.clock}: {type(exc).__name__}: {exc}") from exc
        if result["has_more"]:
            raise WebCorpusError(f"tool {tool} returned more than 2000 records for {entity} in the corpus window")
        key = meta.time_key
        if key is None:
            return _Fetched(meta, [[record] for record in result["items"]])
        # One group per time key, newest first (records of several series may interleave).
        by_key: dict[Any, list[dict[str, Any]]] = {}
        for record in result["items"]:
            by_key.setdefault(record.get(key), []).append(record)
        ordered = sorted(by_key, key=lambda k: str(k), reverse=True)
        return _Fetched(meta, [by_key[k] for k in ordered])


# --------------------------------------------------------------------------- helpers


def _key_date(value: Any, fmt: str | None) -> dt.date | None:
    """The last calendar day a time-key value covers (a month's last day, a quarter's)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        if re.fullmatch(r"\d{8}", text):
            return dt.datetime.strptime(text, "%Y%m%d").date()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return dt.date.fromisoformat(text)
        if re.fullmatch(r"\d{6}", text):
            year, month = int(text[:4]), int(text[4:])
            nxt = dt.date(year + month // 12, month % 12 + 1, 1)
            return nxt - dt.timedelta(days=1)
        found = re.fullmatch(r"(\d{4})Q([1-4])", text)
        if found:
            year, quarter = int(found.group(1)), int(found.group(2))
            nxt = dt.date(year + quarter // 4, (quarter * 3) % 12 + 1, 1)
            return nxt - dt.timedelta(days=1)
        if re.fullmatch(r"\d{8} \d{2}:\d{2}(:\d{2})?", text):
            return dt.datetime.strptime(text[:8], "%Y%m%d").date()
    except ValueError:
        return None
    return None


def _published(meta: ToolMeta, group: list[dict[str, Any]], clock: dt.date) -> dt.date:
    """When a page showing `group` went up: its announcement date when it has one, else its time key;
    never after the clock (the service shows nothing dated later)."""
    record = group[0]
    for name in ("ann_date", "f_ann_date"):
        day = _key_date(record.get(name), None)
        if day is not None:
            return min(day, clock)
    day = _key_date(record.get(meta.time_key), meta.time_key_fmt) if meta.time_key else None
    return min(day, clock) if day is not None else clock


def _decimals_of(value: float) -> int:
    text = repr(value)
    return len(text.split(".")[1]) if "." in text and "e" not in text else 0


def _shown_fields(meta: ToolMeta) -> list[FieldMeta]:
    return [f for f in meta.fields if f.role in ("measure", "label", "date") and f.name != meta.entity_param]


@dataclass
class _Look:
    """How one site shows figures on one page."""

    site: Site
    disagree_seed: float | None  # not None: figures come from a third-party feed that differs


def _figure(look: _Look, f: FieldMeta, value: Any, seed: int, salt: str) -> tuple[str, str]:
    """(value text, unit text) of one field as `look` prints it."""
    if value is None:
        return ("—" if look.site.lang == "en" else "--"), ""
    if f.type not in ("number", "integer") or isinstance(value, str):
        return str(value), ""
    number = float(value)
    decimals: int | None = _decimals_of(number) if isinstance(value, float) else 0
    if look.disagree_seed is not None and f.role == "measure" and number != 0:
        shift = 0.005 + 0.025 * _unit(seed, "disagree", salt, f.name)
        number *= 1 + (shift if look.disagree_seed < 0.5 else -shift)
    unit = f.unit or ""
    if look.site.restates:
        restated = restate_amount(number, f.unit, look.site.lang)
        if restated is not None:
            number, unit = restated
            decimals = 2
    if look.site.rounding is not None and isinstance(decimals, int) and decimals > look.site.rounding:
        decimals = look.site.rounding
    if isinstance(value, int) and decimals == 0 and look.disagree_seed is None and not look.site.restates:
        return str(value), unit
    return format_number(number, decimals), unit


def _label(meta: ToolMeta, f: FieldMeta, lang: str) -> str:
    """A field's label as a financial site prints it: the reviewed lexicon's noun ("Closing price",
    "收盘价"), the catalog's description where the lexicon has no entry (non-answer fields)."""
    entry = load_lexicon().entry(meta.name, f.name)
    if entry is None:
        return (f.description_zh or f.description) if lang == "zh" else f.description
    return entry.zh if lang == "zh" else entry.en[:1].upper() + entry.en[1:]


def _display_name(entity: Entity | None, lang: str) -> str:
    if entity is None:
        return ""
    if lang == "zh":
        return entity.name_zh or entity.name_en
    return entity.name_en if not entity.name_zh else f"{entity.name_en} {entity.name_zh}"


def _tool_title(meta: ToolMeta, lang: str) -> str:
    if lang == "zh":
        return f"{SERVICE_ZH.get(meta.service, meta.service)} · {meta.name}"
    head = re.split(r"[;(]", meta.description, maxsplit=1)[0].strip()
    return f"{head} · {meta.name}"


def _as_of_text(meta: ToolMeta, group: list[dict[str, Any]], lang: str) -> str:
    record = group[0]
    key = record.get(meta.time_key) if meta.time_key else None
    if key is None:
        return "Reference data." if lang == "en" else "参考资料。"
    return f"Data as of {key}." if lang == "en" else f"数据截至{key}。"


def _group_table(meta: ToolMeta, group: list[dict[str, Any]], look: _Look, seed: int, salt: str) -> Table:
    """One record: Item | Value | Unit rows. Several records of one time key (holders, segments,
    series): one row per record, one column per field."""
    lang = look.site.lang
    fields = _shown_fields(meta)
    if len(group) == 1:
        rows = []
        for f in fields:
            text, unit = _figure(look, f, group[0].get(f.name), seed, salt)
            rows.append((_label(meta, f, lang), text, unit))
        header = ("Item", "Value", "Unit") if lang == "en" else ("项目", "数值", "单位")
        return Table(header=header, rows=tuple(rows))
    header = tuple(_label(meta, f, lang) + (f" ({f.unit})" if f.unit and look.site.restates is False else "") for f in fields)
    rows = []
    for index, record in enumerate(group):
        cells = []
        for f in fields:
            text, unit = _figure(look, f, record.get(f.name), seed, f"{salt}:{index}")
            cells.append(f"{text} {unit}".strip() if look.site.restates and unit and unit != (f.unit or "") else text)
        rows.append(tuple(cells))
    return Table(header=header, rows=tuple(rows))


# --------------------------------------------------------------------------- the generator


class CorpusGenerator:
    """Yields every page of the web at `config.clock`, in a fixed order."""

    def __init__(self, config: CorpusConfig) -> None:
        self.config = config
        self.reader = _Reader(config)
        self.seed = config.seed
        self.clock = config.clock
        # Calendar days the history window needs, with room for holidays.
        self.history_days = int(config.history_sessions * 1.6) + 20
        self.entity_tools = self._entity_tools()

    def _entity_tools(self) -> dict[str, list[str]]:
        by_class: dict[str, list[str]] = defaultdict(list)
        for name, spec in sorted(self.reader.specs.items()):
            meta = spec.meta
            if name in _SKIPPED_TOOLS or meta.entity_param is None or meta.time_key == "trade_time":
                continue
            if self.config.tools is not None and name not in self.config.tools:
                continue
            required = {p.name for p in spec.params if p.required} - {meta.entity_param}
            if required:
                continue
            for asset_class in meta.asset_classes:
                by_class[asset_class].append(name)
        return by_class

    def market_tools(self) -> list[str]:
        tools = [name for name, spec in sorted(self.reader.specs.items())
                 if spec.meta.entity_param is None and name not in _SKIPPED_TOOLS and spec.meta.time_key is not None
                 and set(spec.meta.asset_classes) & MARKET_TOOL_CLASSES]  # reference lists have no time key
        if self.config.market_tools is None:
            return tools
        unknown = sorted(set(self.config.market_tools) - set(tools))
        if unknown:
            raise WebCorpusError(f"market_tools {unknown} are not market series of the service (known: {tools})")
        return [t for t in tools if t in self.config.market_tools]

    def entity_batch(self, codes: Sequence[str]) -> tuple[list[Page], list[tuple[str, str, dict[str, Any]]]]:
        """The pages of these entities, and their recent sessions (calendar, code, quote record)
        that the market wraps are made from."""
        pages: list[Page] = []
        moves: list[tuple[str, str, dict[str, Any]]] = []
        universe = self.reader.market.universe
        for code in codes:
            pages.extend(self._entity_pages(universe.get(code), moves))
        return pages, moves

    def market_batch(self) -> list[Page]:
        return [page for tool in self.market_tools() for page in self._market_tool_pages(tool)]

    # ------------------------------------------------------------------ per entity

    def _portals(self, entity: Entity) -> list[Site]:
        ranked = sorted(PORTALS, key=lambda s: _unit(self.seed, "portal-rank", entity.code, s.key))
        return ranked[: sources_for(entity.visibility)]

    def _entity_pages(self, entity: Entity, moves: list[tuple[str, str, dict[str, Any]]]) -> Iterator[Page]:
        tools = self.entity_tools.get(entity.asset_class, [])
        fetched: dict[str, _Fetched] = {}
        needed = set(_FILINGS) & set(tools)
        if entity.visibility > 0:
            needed = set(tools)
        for tool in sorted(needed):
            days = self.history_days if tool == _QUOTE_TOOL.get(entity.asset_class) else RECENT_DAYS
            fetched[tool] = self.reader.fetch(tool, entity.code, days)
        yield self._filing_index(entity, fetched)
        if entity.visibility <= 0:
            return
        yield from self._reports(entity, fetched)
        portals = self._portals(entity)
        for tool in tools:
            data = fetched[tool]
            if not data.groups:
                continue
            for rank, site in enumerate(portals):
                if _unit(self.seed, "covers", entity.code, tool, site.key) >= coverage_probability(entity.visibility):
                    continue
                lag = self._lag(entity.visibility, entity.code, tool, site.key)
                if lag >= len(data.groups):
                    continue
                yield self._data_page(entity, site, data, lag)
                if (rank < 2 and entity.visibility >= 4 and data.meta.refresh_class == "daily"
                        and all(len(g) == 1 for g in data.groups[lag: lag + HISTORY_ROWS])
                        and len(data.groups) - lag >= 5):
                    yield self._history_page(entity, site, data, lag)
        quote = fetched.get(_QUOTE_TOOL.get(entity.asset_class, ""))
        if quote is not None:
            recent = [g[0] for g in quote.groups[: self.config.history_sessions]]
            moves.extend((entity.calendar, entity.code, record) for record in recent)
            yield from self._news(entity, quote, recent)
        if entity.visibility >= 6:
            yield from self._spam(entity)

    def _lag(self, visibility: int, code: str, tool: str, site: str) -> int:
        u = _unit(self.seed, "fresh", code, tool, site, self.clock.isoformat())
        if u < fresh_probability(visibility):
            return 0
        return 1 + int(3 * _unit(self.seed, "lag", code, tool, site, self.clock.isoformat()))

    def _look(self, site: Site, salt: str) -> _Look:
        if site.disagree and _unit(self.seed, "feed", site.key, salt) < site.disagree:
            return _Look(site, _unit(self.seed, "feed-sign", site.key, salt))
        return _Look(site, None)

    def _page(self, *, site: Site, kind: str, path: str, lang: str, title: str, published: dt.date,
              entity: str | None, snippet: str, blocks: Sequence[Block]) -> Page:
        if published > self.clock:
            raise WebCorpusError(f"{path}: published {published} after the clock {self.clock}")
        body, text = render_page(lang=lang, site_name=site.name, title=title, published=published,
                                 description=snippet, blocks=blocks, url_path=path)
        return Page(path=path, site=site.key, kind=kind, lang=lang, title=title, published=published,
                    entity=entity, snippet=snippet, text=text, html=body)

    def _data_page(self, entity: Entity, site: Site, data: _Fetched, lag: int) -> Page:
        meta, group = data.meta, data.groups[lag]
        lang = site.lang
        name = _display_name(entity, lang)
        salt = f"{entity.code}:{meta.name}:{group[0].get(meta.time_key) if meta.time_key else ''}"
        look = self._look(site, salt)
        table = _group_table(meta, group, look, self.seed, salt)
        kind = ("quote" if meta.name == _QUOTE_TOOL.get(entity.asset_class)
                else "profile" if meta.refresh_class == "static" else "data")
        if lang == "en":
            title = f"{name} ({entity.code}) {_tool_title(meta, lang)}"
            lead = f"{meta.description}. {_as_of_text(meta, group, lang)}"
        else:
            title = f"{name}（{entity.code}）{_tool_title(meta, lang)}"
            lead = f"{name}（{entity.code}）{_tool_title(meta, lang)}。{_as_of_text(meta, group, lang)}"
        if look.disagree_seed is not None:
            lead += " Source: third-party data feed." if lang == "en" else " 数据来源：第三方数据商。"
        snippet = f"{lead} " + "; ".join(f"{r[0]} {r[1]}" for r in table.rows[:4] if len(r) == 3)[:220]
        return self._page(site=site, kind=kind, path=f"/{site.key}/{meta.name}/{entity.code}.html", lang=lang,
                          title=title, published=_published(meta, group, self.clock), entity=entity.code,
                          snippet=snippet, blocks=[Paragraph(lead), table])

    def _history_page(self, entity: Entity | None, site: Site, data: _Fetched, lag: int,
                      subject: str | None = None) -> Page:
        """The last HISTORY_ROWS records of a daily series, newest first (an entity's or a market series')."""
        meta = data.meta
        lang = site.lang
        code = entity.code if entity is not None else subject or meta.name
        fields = [f for f in _shown_fields(meta) if f.type in ("number", "integer")]
        rows = []
        look = self._look(site, f"history:{code}:{meta.name}")
        for index, group in enumerate(data.groups[lag: lag + HISTORY_ROWS]):
            record = group[0]
            cells = [str(record.get(meta.time_key))]
            for f in fields:
                text, unit = _figure(look, f, record.get(f.name), self.seed, f"{code}:{meta.name}:h{index}")
                cells.append(text)
            rows.append(tuple(cells))
        units = {f.name: f.unit for f in fields}
        if site.restates:
            # Restated columns print their own unit in each header.
            sample = data.groups[lag][0]
            units = {f.name: (restate_amount(float(sample[f.name]), f.unit, lang) or (0, f.unit))[1]
                     if isinstance(sample.get(f.name), (int, float)) else f.unit for f in fields}
        header = ("Date" if lang == "en" else "日期",
                  *(_label(meta, f, lang) + (f" ({units[f.name]})" if units[f.name] else "") for f in fields))
        if entity is not None:
            name = _display_name(entity, lang)
            title = (f"{name} ({code}) historical data · {meta.name}" if lang == "en"
                     else f"{name}（{code}）历史数据 · {meta.name}")
        else:
            name = _tool_title(meta, lang)
            title = f"{name} — historical data" if lang == "en" else f"{name}（{meta.description}）历史数据"
        lead = (f"{meta.description}: the last {len(rows)} records, newest first." if lang == "en"
                else f"{name}最近{len(rows)}条记录（由近及远）。")
        return self._page(site=site, kind="history", path=f"/{site.key}/{meta.name}/{code}/history.html",
                          lang=lang, title=title, published=_published(meta, data.groups[lag], self.clock),
                          entity=entity.code if entity is not None else None, snippet=lead,
                          blocks=[Paragraph(lead), Table(header, tuple(rows))])

    def _filing_index(self, entity: Entity, fetched: dict[str, _Fetched]) -> Page:
        lang = "zh" if entity.name_zh else "en"
        entries: list[tuple[dt.date, str, str | None]] = []
        for tool, (title_en, title_zh) in _FILINGS.items():
            data = fetched.get(tool)
            if data is None:
                continue
            for group in data.groups:
                day = _published(data.meta, group, self.clock)
                period = group[0].get("end_date") or ""
                label = f"{title_zh if lang == 'zh' else title_en} {period}".strip()
                link = None
                if tool in ("income", "hk_income", "us_income") and entity.visibility > 0:
                    link = f"/exchange/reports/{entity.code}/{period}.html"
                entries.append((day, label, link))
        entries.sort(key=lambda e: (e[0], e[1]), reverse=True)
        entries = entries[:FILING_ROWS]
        name = _display_name(entity, lang)
        title = f"{name}（{entity.code}）公告列表" if lang == "zh" else f"{name} ({entity.code}) filings"
        rows = tuple((d.isoformat(), label) for d, label, _ in entries)
        links = tuple((link, label) for _, label, link in entries if link)
        blocks: list[Block] = [Paragraph(f"{entity.exchange} {entity.code} {name}"),
                               Table(("Date", "Title") if lang == "en" else ("公告日期", "公告标题"), rows)]
        if links:
            blocks.append(Links(links))
        published = entries[0][0] if entries else min(entity.list_date, self.clock)
        return self._page(site=EXCHANGE, kind="filings", path=f"/exchange/filings/{entity.code}.html", lang=lang,
                          title=title, published=published, entity=entity.code,
                          snippet=f"{title}: {len(entries)}", blocks=blocks)

    def _reports(self, entity: Entity, fetched: dict[str, _Fetched]) -> Iterator[Page]:
        tools = _REPORT_TOOLS.get(entity.asset_class)
        if not tools or tools[0] not in fetched:
            return
        lang = "zh" if entity.name_zh else "en"
        name = _display_name(entity, lang)
        by_period: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
        for tool in tools:
            data = fetched.get(tool)
            if data is None:
                continue
            for group in data.groups:
                period = group[0].get("end_date")
                if isinstance(period, str):
                    by_period[period][tool] = group
        look = _Look(EXCHANGE if lang == "zh" else Site("exchange", EXCHANGE.name, "en", "exchange"), None)
        for period in sorted(by_period, reverse=True)[:REPORTS_BACK]:
            statements = by_period[period]
            blocks: list[Block] = []
            published = self.clock
            for tool in tools:
                group = statements.get(tool)
                if group is None:
                    continue
                meta = fetched[tool].meta
                published = min(published, _published(meta, group, self.clock))
                blocks.append(Heading(_tool_title(meta, lang)))
                blocks.append(_group_table(meta, group, look, self.seed, f"report:{entity.code}:{tool}:{period}"))
            title = (f"{name}（{entity.code}）{period}定期报告" if lang == "zh"
                     else f"{name} ({entity.code}) periodic report for the period ended {period}")
            yield self._page(site=EXCHANGE, kind="report", path=f"/exchange/reports/{entity.code}/{period}.html",
                             lang=lang, title=title, published=published, entity=entity.code,
                             snippet=title, blocks=blocks)

    def _news(self, entity: Entity, quote: _Fetched, recent: list[dict[str, Any]]) -> Iterator[Page]:
        meta = quote.meta
        for site in NEWS_SITES:
            if site.lang == "zh" and not entity.name_zh:
                continue
            for record in recent:
                key = record.get(meta.time_key)
                day = _key_date(key, None)
                if day is None or _unit(self.seed, "news", entity.code, site.key, key) >= news_probability(entity.visibility):
                    continue
                yield self._news_item(entity, site, meta, record, day)

    def _news_item(self, entity: Entity, site: Site, meta: ToolMeta, record: dict[str, Any], day: dt.date) -> Page:
        lang = site.lang
        name = _display_name(entity, lang)
        look = _Look(site, None)
        price_field = "unit_nav" if "unit_nav" in record else "close"
        price = record.get(price_field)
        pct = record.get("pct_chg")
        if lang == "en":
            move = "" if pct is None else (f" up {abs(pct):.2f}%" if pct >= 0 else f" down {abs(pct):.2f}%")
            title = f"{name} ({entity.code}) closes{move} at {price} on {day.isoformat()}"
            lead = (f"{name} ({entity.code}) ended the session of {day.isoformat()} at {price} {entity.currency}"
                    f"{move}. Figures below are for that session only.")
        else:
            move = "" if pct is None else (f"涨{abs(pct):.2f}%" if pct >= 0 else f"跌{abs(pct):.2f}%")
            title = f"{name}（{entity.code}）{day.isoformat()}收盘{move}，报{price}"
            lead = f"{day.isoformat()}，{name}（{entity.code}）收于{price}{move}。以下为当日数据。"
        table = _group_table(meta, [record], look, self.seed, f"news:{entity.code}:{day}")
        return self._page(site=site, kind="news", path=f"/{site.key}/{day.isoformat()}/{entity.code}.html",
                          lang=lang, title=title, published=day, entity=entity.code, snippet=lead,
                          blocks=[Paragraph(lead), table])

    def _spam(self, entity: Entity) -> Iterator[Page]:
        for site in SPAM_SITES:
            count = 1 + int(3 * _unit(self.seed, "spam-count", entity.code, site.key))
            for index in range(count):
                lang = site.lang
                name = _display_name(entity, lang)
                fake = [round(1 + 200 * _unit(self.seed, "spam", entity.code, site.key, index, k), 2) for k in range(4)]
                if lang == "en":
                    title = f"{name} {entity.code} stock price target: buy now before it is too late! #{index + 1}"
                    lead = (f"{name} {entity.code} closing price, market value, net profit, NAV — insider tips. "
                            f"{name} price prediction. {name} closing price today {fake[0]}.")
                    header = ("Item", "Value")
                    rows = (("Closing price", str(fake[0])), ("Target price", str(fake[1])),
                            ("Net profit", f"{fake[2]} million"), ("Market value", f"{fake[3]} billion"))
                else:
                    title = f"{name}{entity.code}牛股推荐！主力资金抢筹，目标价曝光 #{index + 1}"
                    lead = f"{name}（{entity.code}）收盘价、总市值、净利润内部消息！{name}今日收盘价{fake[0]}元。"
                    header = ("项目", "数值")
                    rows = (("收盘价", str(fake[0])), ("目标价", str(fake[1])), ("净利润", f"{fake[2]}亿元"),
                            ("总市值", f"{fake[3]}亿元"))
                published = self.clock - dt.timedelta(days=int(30 * _unit(self.seed, "spam-day", entity.code, index)))
                yield self._page(site=site, kind="spam", path=f"/{site.key}/{entity.code}-{index + 1}.html", lang=lang,
                                 title=title, published=published, entity=entity.code, snippet=lead,
                                 blocks=[Paragraph(lead), Table(header, rows), Paragraph(lead)])

    # ------------------------------------------------------------------ market pages

    def wraps(self, moves: Sequence[tuple[str, str, dict[str, Any]]]) -> Iterator[Page]:
        """Daily market wraps (top gainers and losers of each exchange's session) from the entities' quotes."""
        names = {"XSHG": ("Shanghai/Shenzhen", "沪深"), "XHKG": ("Hong Kong", "港股"), "XNYS": ("New York", "美股")}
        universe = self.reader.market.universe
        sessions: dict[str, dict[dt.date, list[tuple[Entity, dict[str, Any]]]]] = defaultdict(lambda: defaultdict(list))
        for calendar, code, record in moves:
            day = _key_date(record.get("trade_date") or record.get("nav_date"), None)
            if day is not None:
                sessions[calendar][day].append((universe.get(code), record))
        for calendar in sorted(sessions):
            for day in sorted(sessions[calendar]):
                movers = [(e, r) for e, r in sessions[calendar][day]
                          if e.asset_class.endswith("equity") and isinstance(r.get("pct_chg"), (int, float))]
                if len(movers) < 5:
                    continue
                movers.sort(key=lambda item: (-item[1]["pct_chg"], item[0].code))
                for site in NEWS_SITES:
                    lang = site.lang
                    market = names.get(calendar, (calendar, calendar))[0 if lang == "en" else 1]
                    picks = movers[:10] + movers[-10:]
                    rows = tuple((_display_name(e, lang), e.code, str(r.get("close")), f"{r['pct_chg']:.2f}")
                                 for e, r in picks)
                    if lang == "en":
                        title = f"{market} market wrap for {day.isoformat()}: top gainers and losers"
                        header = ("Name", "Code", "Close", "Change (%)")
                    else:
                        title = f"{day.isoformat()}{market}收评：涨跌幅榜"
                        header = ("名称", "代码", "收盘价", "涨跌幅（%）")
                    yield self._page(site=site, kind="wrap", path=f"/{site.key}/{day.isoformat()}/wrap-{calendar}.html",
                                     lang=lang, title=title, published=day, entity=None, snippet=title,
                                     blocks=[Paragraph(title), Table(header, rows)])

    def _market_tool_pages(self, tool: str) -> Iterator[Page]:
        # Daily market series are published (and fetched) over the recent window only: FX alone
        # has a dozen pairs a day, and its release pages would otherwise dwarf everything else.
        data = self.reader.fetch(tool, None, RECENT_DAYS)
        if not data.groups:
            return
        meta = data.meta
        for site in PORTALS:
            if _unit(self.seed, "covers", tool, site.key) >= coverage_probability(MARKET_VISIBILITY):
                continue
            lag = self._lag(MARKET_VISIBILITY, tool, tool, site.key)
            if lag < len(data.groups):
                yield self._market_page(site, data, lag, f"/{site.key}/{tool}/latest.html")
                if (meta.refresh_class == "daily" and len(data.groups) - lag >= 5
                        and all(len(g) == 1 for g in data.groups[lag: lag + HISTORY_ROWS])):
                    yield self._history_page(None, site, data, lag, subject=tool)
        # The official release pages: every period in the window, each at its own URL.
        periodic = meta.refresh_class in ("monthly", "quarterly")
        count = len(data.groups) if periodic else min(len(data.groups), self.config.history_sessions)
        for position in range(count):
            key = data.groups[position][0].get(meta.time_key)
            yield self._market_page(STATS, data, position, f"/stats/{tool}/{key}.html", release=True)

    def _market_page(self, site: Site, data: _Fetched, lag: int, path: str, release: bool = False) -> Page:
        meta, group = data.meta, data.groups[lag]
        lang = site.lang
        salt = f"{meta.name}:{group[0].get(meta.time_key)}"
        look = _Look(site, None) if release else self._look(site, salt)
        table = _group_table(meta, group, look, self.seed, salt)
        key = group[0].get(meta.time_key)
        if lang == "en":
            title = f"{_tool_title(meta, lang)} — {key}"
            lead = f"{meta.description}. {_as_of_text(meta, group, lang)}"
        else:
            title = f"{_tool_title(meta, lang)}（{meta.description}）{key}"
            lead = f"{meta.description}。{_as_of_text(meta, group, lang)}"
        published = _published(meta, group, self.clock)
        return self._page(site=site, kind="release" if release else "data", path=path, lang=lang, title=title,
                          published=published, entity=None, snippet=lead[:220], blocks=[Paragraph(lead), table])


ENTITY_BATCH = 16
_WORKER: CorpusGenerator | None = None


def _init_worker(config: CorpusConfig) -> None:
    global _WORKER
    _WORKER = CorpusGenerator(config)


def _run_batch(batch: tuple[str, ...]) -> tuple[list[Page], list[tuple[str, str, dict[str, Any]]]]:
    assert _WORKER is not None, "worker not initialised"
    if batch == ("<market>",):
        return _WORKER.market_batch(), []
    return _WORKER.entity_batch(batch)


def generate_pages(config: CorpusConfig, workers: int = 1) -> Iterator[Page]:
    """Every page of the web at `config.clock`, in a fixed order whatever `workers` is.

    With `workers` > 1, entity batches are generated by that many processes (each simulates the
    entities it is given; the market is a pure function of the seed, so the pages are the same)."""
    if workers < 1:
        raise WebCorpusError(f"workers must be at least 1, got {workers}")
    generator = CorpusGenerator(config)
    universe = generator.reader.market.universe
    if config.entities is None:
        codes = sorted(e.code for e in universe.entities)
    else:
        unknown = sorted(c for c in config.entities if not universe.has(c))
        if unknown:
            raise WebCorpusError(f"entities {unknown} are not instruments of the market (seed {config.seed})")
        codes = sorted(set(config.entities))
    batches: list[tuple[str, ...]] = [("<market>",)]
    batches += [tuple(codes[i: i + ENTITY_BATCH]) for i in range(0, len(codes), ENTITY_BATCH)]
    moves: list[tuple[str, str, dict[str, Any]]] = []
    if workers == 1:
        global _WORKER
        _WORKER = generator
        for pages, batch_moves in map(_run_batch, batches):
            yield from pages
            moves.extend(batch_moves)
    else:
        yield from _parallel(config, batches, workers, moves)
    yield from generator.wraps(moves)


def _parallel(config: CorpusConfig, batches: list[tuple[str, ...]], workers: int,
              moves: list[tuple[str, str, dict[str, Any]]]) -> Iterator[Page]:
    """Batches generated by `workers` processes, yielded in batch order; at most two batches per
    worker are in flight, so memory stays bounded whatever the corpus size. A crashed worker fails
    the build (BrokenProcessPool) instead of being replaced silently."""
    import multiprocessing
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(config,)) as pool:
        pending: deque = deque()
        queue = iter(batches)
        try:
            for batch in queue:
                pending.append(pool.submit(_run_batch, batch))
                if len(pending) >= 2 * workers:
                    break
            while pending:
                pages, batch_moves = pending.popleft().result()
                next_batch = next(queue, None)
                if next_batch is not None:
                    pending.append(pool.submit(_run_batch, next_batch))
                yield from pages
                moves.extend(batch_moves)
        finally:
            for future in pending:
                future.cancel()
