"""The pages of the offline web at a clock: which exist for each entity and market series, and what they say.

Every figure comes from a tool call to the embedded `DataService` at the corpus clock (web/reader.py,
never the wall clock), so a page can only show what the service would return that day; a page's
published date is the date of the data it shows and is never after the clock.

Visibility (0..10) governs how hard an entity's evidence is to find, never whether it exists:
- every level: the exchange's own pages: the company page (names, codes, short name, links to
  every page about the entity), the daily quote page with a history table (the latest session at
  levels 0..3, the last week at 4..6: `sites.depth_of`, `RECENT_ROWS`), monthly
  historical-price pages of the quote (the last RECENT_HISTORY_MONTHS months, further back where
  `CorpusConfig.history_from` asks), one page per data set
  (daily series with their last EXCHANGE_ROWS records, others with their last EXCHANGE_GROUPS
  periods), the filing index and the periodic reports (at visibility 0..3 long documents walked
  page by page from an indexed cover, web/reports.py; an obscure fund's holdings only inside
  them). Deep data-set pages are indexed by the
  search engine with probability `crawl_probability(level)` (served and linked either way);
- level >= 1: data-portal pages from `1 + level // 2` of six portals (a per-entity choice); each
  portal covers each of the entity's tools with probability `0.3 + 0.07 * level`, and shows the
  latest data with probability `0.5 + 0.045 * level` (otherwise it lags one to three updates: a
  stale page); from level 4 news items on the sessions of the history window, with probability
  `0.05 + 0.07 * level` per session and news site; history tables from level 7; spam from level 6
  (the sites and these chances: web/sites.py); from level 7 a portal's constituents board of an
  index (web/constituents.py).
Portals differ the way real ones do: one restates big amounts in 亿元, one in million, one
rounds to one decimal, two sometimes carry third-party figures that disagree by 0.5-3%; each
words its labels its own way (web/formatting.py, web/wording.py). Each page records the records
it prints (`Page.records`), from which the evidence map is derived (web/evidence.py). Market-wide
series get portal pages, official release pages and a history page per series.

All randomness is a hash of (seed, purpose, entity, tool, site[, date]) (`sites.uniform`): the
corpus is a pure function of (seed, clock, history window, `history_from`: how far back each
entity's monthly quote history reaches, web/needs.py).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections import defaultdict
from typing import Any, Iterator, Mapping, Sequence

from livesearch_pipeline.core.calendars import session_on_or_before, sessions_back
from livesearch_pipeline.core.catalog import ToolMeta
from livesearch_pipeline.core.extract import REVISION_FIELD
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.web.bulletins import (
    BULLETIN_SESSIONS, PERIOD_BAR_TOOLS, ArchiveEntry, BulletinGroup, BulletinRow, archive_pages, archive_path,
    bulletin_label, bulletin_pages, bulletin_rows, day_of, exchange_indexes,
)
from livesearch_pipeline.web.constituents import CONSTITUENT_TOOLS, constituents_page
from livesearch_pipeline.web.corpus import CorpusConfig, Page, WebCorpusError, record_key
from livesearch_pipeline.web.digest import digest_table
from livesearch_pipeline.web.formatting import (
    Look, as_of_text, display_name, group_table, has_figures, history_table, plain, short_name, tool_title,
    unit_text,
)
from livesearch_pipeline.web.reader import (
    Fetched, Reader, month_start, published_on, release_date,
)
from livesearch_pipeline.web.render import Block, Heading, Links, Paragraph, Table, render_page
from livesearch_pipeline.web.company import company_facts, is_restated, version_heading
from livesearch_pipeline.web.reports import (
    ANNUAL_REPORT_DAYS, REPORTS_BACK, Statement, continuation_number, kept_periods, periodic_reports, report_document,
)
from livesearch_pipeline.web.sites import (
    EXCHANGE, EXCHANGE_EN, MARKET_VISIBILITY, NEWS_SITES, PORTALS, RECENT_ROWS, SPAM_SITES, STATS, Site,
    coverage_probability,
    crawl_probability, depth_of, fresh_probability, news_probability, official_lang, sources_for, uniform,
)

# Tools with no entity whose data a portal publishes (macro releases, rates, FX, market flows).
MARKET_TOOL_CLASSES = frozenset({"macro", "rates_fx", "market"})
# Reference lists and calendars are not pages anyone reads for a figure.
_SKIPPED_TOOLS = frozenset({"trade_cal", "hk_tradecal", "us_tradecal", "new_share", "hs_const", "fund_company",
                            "index_classify"})
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
# A fund's published portfolio: at bulletin depth only inside its periodic reports.
_FUND_REPORT_TOOLS = frozenset({"fund_portfolio"})
_QUOTE_TOOL = {"cn_equity": "daily", "hk_equity": "hk_daily", "us_equity": "us_daily", "index": "index_daily",
               "fund": "fund_nav"}
# Calendar days fetched for daily tools other than the quote tool: a history table and a lag of
# three updates fit; only the quote tool reaches back over the whole history window.
RECENT_DAYS = 100
HISTORY_ROWS = 60
FILING_ROWS = 40
# The exchange's own pages for every listed entity, whatever its visibility: daily series over
# this many calendar days (a 60-session window, holidays and a few sessions' lag fit), at most
# EXCHANGE_ROWS records; other series their last EXCHANGE_GROUPS periods.
EXCHANGE_DAYS = 115
EXCHANGE_ROWS = 70
EXCHANGE_GROUPS = 8
# Daily series a path over a long window joins to the quote (a 120-session drawdown of adjusted
# closes: the adjustment factors; a fund's exchange bars) have no monthly pages: the exchange keeps
# LONG_ROWS sessions of them (fetched over LONG_DAYS calendar days), and its bulletins as many.
LONG_TOOLS = frozenset({"adj_factor", "hk_adjfactor", "us_adjfactor", "fund_adj", "fund_daily"})
LONG_DAYS = 200
LONG_ROWS = 125
# Monthly bars (a stock's or an index's month): the last MONTHLY_BARS months, so that the best
# month of the last 24 completed ones can be read.
MONTHLY_BAR_TOOLS = frozenset({"monthly", "index_monthly"})
MONTHLY_BARS = 26
MONTHLY_BAR_DAYS = 820
# A name history is printed whole, from the listing on: a question may name a company by a former
# name (issue 39), which a reader finds by searching it.
NAME_HISTORY_TOOLS = frozenset({"namechange"})
NEWS_LINKS = 12
# The exchange's monthly historical-price pages of an entity's quote: the last few months for
# everyone, further back (to a month or three before the earliest month a question needs) for
# the entities in `CorpusConfig.history_from`; never more than MAX_HISTORY_MONTHS.
RECENT_HISTORY_MONTHS = 4
MAX_HISTORY_MONTHS = 84
_MONTHS_EN = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December")


def _keys(meta: ToolMeta, subject: str | None, groups: Sequence[list[dict[str, Any]]]) -> tuple[str, ...]:
    return tuple(record_key(meta.name, subject, group[0].get(meta.time_key) if meta.time_key else None,
                            group[0].get(REVISION_FIELD))
                 for group in groups)


class CorpusGenerator:
    """Yields every page of the web at `config.clock`, in a fixed order."""

    def __init__(self, config: CorpusConfig) -> None:
        self.config = config
        self.reader = Reader(config)
        self.seed = config.seed
        self.clock = config.clock
        # Calendar days the history window needs, with room for holidays.
        self.history_days = int(config.history_sessions * 1.6) + 20
        self.entity_tools = self._entity_tools()
        self.history_from = dict(config.history_from)
        self._since: dict[tuple[str, bool], dt.date] = {}
        self._sections: dict[tuple[str, dt.date], dict[str, dict[str, Any]]] = {}
        self.marker = config.identity_digest  # each page's head carries it (worked out once)

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

    def entity_batch(self, codes: Sequence[str]) -> tuple[list[Page], list[tuple[str, str, dict[str, Any]]],
                                                          list[BulletinRow]]:
        """The pages of these entities, their recent sessions (calendar, code, quote record) that
        the market wraps are made from, and their rows of their exchanges' daily bulletins."""
        pages: list[Page] = []
        moves: list[tuple[str, str, dict[str, Any]]] = []
        rows: list[BulletinRow] = []
        names = self.reader.market.names
        for code in codes:
            # Every page of an entity names it as on the web's day (market/names.py); a report or
            # a month's history page as on its own date.
            pages.extend(self._entity_pages(names.on(code, self.clock), moves, rows))
        return pages, moves, rows

    def _named(self, entity: Entity, day: dt.date) -> Entity:
        """The entity as it was named on `day` (no later than the web's day)."""
        return self.reader.market.names.on(entity.code, min(day, self.clock))

    def bulletin_since(self, calendar: str, long: bool = False) -> dt.date:
        """The first session the exchanges' bulletins of this calendar keep (BULLETIN_SESSIONS back;
        LONG_ROWS for the LONG_TOOLS)."""
        since = self._since.get((calendar, long))
        if since is None:
            since = self._since[(calendar, long)] = sessions_back(
                calendar, session_on_or_before(calendar, self.clock), (LONG_ROWS if long else BULLETIN_SESSIONS) - 1)
        return since

    def bulletins(self, rows: Sequence[BulletinRow]) -> Iterator[Page]:
        """The exchanges' daily bulletins and their archives, from every entity's rows (web/bulletins.py)."""
        return bulletin_pages(rows, *self._bulletin_looks(), self._page)

    def bulletin_archive(self, group: BulletinGroup,
                         periods: Mapping[str, Sequence[BulletinRow]]) -> tuple[list[Page], ArchiveEntry]:
        """One archive's bulletin pages and archive page, from its rows by period
        (`bulletin_groups`): a part of `bulletins`, for a worker process."""
        return archive_pages(group, periods, *self._bulletin_looks(), self._page)

    def bulletin_indexes(self, entries: Sequence[ArchiveEntry]) -> list[Page]:
        """The exchanges' lists of their archives: the last pages of `bulletins`."""
        return exchange_indexes(entries, self._bulletin_looks()[1], self._page)

    def _bulletin_looks(self) -> tuple[dict[str, ToolMeta], dict[str, Look]]:
        metas = {spec.name: spec.meta for spec in self.reader.specs.values()}
        return metas, {"zh": Look(EXCHANGE, None), "en": Look(EXCHANGE_EN, None)}

    def market_batch(self) -> list[Page]:
        return [page for tool in self.market_tools() for page in self._market_tool_pages(tool)]

    # ------------------------------------------------------------------ per entity

    def _portals(self, entity: Entity) -> list[Site]:
        ranked = sorted(PORTALS, key=lambda s: uniform(self.seed, "portal-rank", entity.code, s.key))
        return ranked[: sources_for(entity.visibility)]

    def _entity_pages(self, entity: Entity, moves: list[tuple[str, str, dict[str, Any]]],
                      rows: list[BulletinRow]) -> list[Page]:
        """Every page about one entity. Whatever its visibility, its exchange publishes its quote
        and data pages, its filings and periodic reports, and lists it in its daily bulletins;
        visibility decides where its market history is (`depth_of`: digested by portals, in
        history tables, or only in the bulletins), how many portals, news and forum posts also
        write about it (and how often they lag)."""
        tools = self.entity_tools.get(entity.asset_class, [])
        report_tools = frozenset(_REPORT_TOOLS.get(entity.asset_class, ()))
        fetched: dict[str, Fetched] = {}
        quote_tool = _QUOTE_TOOL.get(entity.asset_class, "")
        history_start = self._history_start(entity)
        for tool in sorted(tools):
            daily = self.reader.specs[tool].meta.refresh_class == "daily"
            days = LONG_DAYS if tool in LONG_TOOLS else EXCHANGE_DAYS if daily else RECENT_DAYS
            start = (history_start if tool == quote_tool
                     else self.clock - dt.timedelta(days=MONTHLY_BAR_DAYS) if tool in MONTHLY_BAR_TOOLS
                     else entity.list_date if tool in NAME_HISTORY_TOOLS
                     # The statements of the older annual reports the exchange keeps (reports.py).
                     else self.clock - dt.timedelta(days=ANNUAL_REPORT_DAYS) if tool in report_tools
                     else None)
            fetched[tool] = self.reader.fetch(tool, entity.code, days, start=start)
        depth = depth_of(entity.visibility)
        since = self.bulletin_since(entity.calendar)
        lang = official_lang(entity)
        look = Look(EXCHANGE if lang == "zh" else EXCHANGE_EN, None)
        archives: list[tuple[str, str]] = []
        for tool in tools:
            data = fetched[tool]
            if ((data.meta.refresh_class != "daily" and tool not in PERIOD_BAR_TOOLS) or not data.groups
                    or not has_figures(data.meta, data.groups)):
                continue
            # Weekly and monthly bars: the exchange's weekly (monthly) bulletins of every bar it
            # fetched (the last MONTHLY_BARS months), whatever the entity's visibility.
            first = (month_start(self.clock, MONTHLY_BARS - 1) if PERIOD_BAR_TOOLS.get(tool) == "month"
                     else dt.date.min if tool in PERIOD_BAR_TOOLS
                     else self.bulletin_since(entity.calendar, tool in LONG_TOOLS))
            mine = bulletin_rows(exchange=entity.exchange, lang=lang, code=entity.code,
                                 name=lambda day, e=entity, lang=lang: display_name(self._named(e, day), lang),
                                 data=data, since=first, look=look, seed=self.seed)
            if mine:
                rows.extend(mine)
                archives.append((archive_path(entity.exchange, tool), tool))
        monthly = (self._monthly_history(entity, fetched[quote_tool], history_start,
                                         before=since if depth == "bulletin" else None)
                   if quote_tool in fetched else [])
        pages: list[Page] = [self._filing_index(entity, fetched)]
        pages.extend(periodic_reports(entity, fetched, report_tools=_REPORT_TOOLS.get(entity.asset_class, ()),
                                      market=self.reader.market, clock=self.clock, seed=self.seed,
                                      named=lambda day: self._named(entity, day), make_page=self._page))
        pages.extend(monthly)
        report_tools = set(_REPORT_TOOLS.get(entity.asset_class, ()))
        for tool in tools:
            if tool in _FUND_REPORT_TOOLS and depth == "bulletin" and fetched[tool].groups:
                # An obscure fund's holdings: only inside its periodic reports.
                pages.extend(self._fund_reports(entity, fetched[tool]))
                continue
            if tool not in report_tools and fetched[tool].groups and has_figures(fetched[tool].meta, fetched[tool].groups):
                archive = next((path for path, name in archives if name == tool), None)
                page = self._official_page(entity, fetched[tool], monthly if tool == quote_tool else (),
                                           latest_only=depth == "bulletin" and archive is not None,
                                           recent_only=depth == "history", archive=archive)
                if page.kind != "quote" and uniform(self.seed, "crawled", entity.code, tool) >= crawl_probability(
                        entity.visibility):
                    page = dataclasses.replace(page, indexed=False)
                pages.append(page)
        quote = fetched.get(_QUOTE_TOOL.get(entity.asset_class, ""))
        recent = [g[0] for g in quote.groups[: self.config.history_sessions]] if quote is not None else []
        moves.extend((entity.calendar, entity.code, record) for record in recent)
        if entity.visibility > 0:
            portals = self._portals(entity)
            for tool in tools:
                data = fetched[tool]
                if not data.groups or not has_figures(data.meta, data.groups):
                    continue
                for rank, site in enumerate(portals):
                    if uniform(self.seed, "covers", entity.code, tool, site.key) >= coverage_probability(entity.visibility):
                        continue
                    lag = self._lag(entity.visibility, entity.code, tool, site.key)
                    if lag >= len(data.groups):
                        continue
                    pages.append(self._data_page(entity, site, data, lag))
                    if rank < 2 and depth == "digest" and tool == quote_tool:
                        digest = self._digest_page(entity, site, data, lag)
                        if digest is not None:
                            pages.append(digest)
                    if (rank < 2 and depth == "digest" and data.meta.refresh_class == "daily"
                            and all(len(g) == 1 for g in data.groups[lag: lag + HISTORY_ROWS])
                            and len(data.groups) - lag >= 5):
                        pages.append(self._history_page(entity, site, data, lag))
            if quote is not None:
                pages.extend(self._news(entity, quote, recent))
            if depth == "digest":
                board = self._constituents(entity, fetched, portals)
                if board is not None:
                    pages.append(board)
        if entity.visibility >= 6:
            pages.extend(self._spam(entity))
        former = tuple(dict.fromkeys(str(r["name"]) for tool in NAME_HISTORY_TOOLS if tool in fetched
                                     for group in fetched[tool].groups for r in group if r.get("end_date")))
        pages.append(self._hub(entity, pages, archives, former))
        return pages

    def _constituents(self, entity: Entity, fetched: dict[str, Fetched], portals: Sequence[Site]) -> Page | None:
        """A portal's constituents board of a well-known index (web/constituents.py): its members as
        of the latest rebalance (and its current membership list), each with its figures of the
        latest session. Published by the first of the entity's portals that prints figures as
        they are (no rounding, restating or third-party feed)."""
        if entity.asset_class != "index":
            return None
        site = next((s for s in portals if s.rounding is None and not s.disagree and not s.restates), None)
        weights, members = fetched.get("index_weight"), fetched.get("index_member")
        if site is None or not ((weights and weights.groups) or (members and members.groups)):
            return None
        day = session_on_or_before("XSHG", self.clock)
        sections = {tool: self._cross_section(tool, day) for tool in CONSTITUENT_TOOLS
                    if tool in self.reader.specs and (self.config.tools is None or tool in self.config.tools)}
        return constituents_page(entity=entity, site=site, weights=weights, members=members, sections=sections,
                                 metas={t: self.reader.specs[t].meta for t in sections}, day=day,
                                 make_page=self._page, seed=self.seed,
                                 name_of=lambda code: display_name(self.reader.market.names.on(code, day), site.lang))

    def _cross_section(self, tool: str, day: dt.date) -> dict[str, dict[str, Any]]:
        """Every instrument's record of `tool` on the session `day` (one call, kept for the run)."""
        cached = self._sections.get((tool, day))
        if cached is None:
            try:
                result = self.reader.service.call(tool, {"trade_date": day.strftime("%Y%m%d"), "limit": 5000})
            except Exception as exc:
                raise WebCorpusError(f"tool {tool} failed for the session {day}: {type(exc).__name__}: {exc}") from exc
            if result["has_more"]:
                raise WebCorpusError(f"tool {tool} returned more than 5000 records for the session {day}")
            entity_param = self.reader.specs[tool].meta.entity_param
            cached = self._sections[(tool, day)] = {str(r.get(entity_param)): r for r in result["items"]}
        return cached

    def _lag(self, visibility: int, code: str, tool: str, site: str) -> int:
        u = uniform(self.seed, "fresh", code, tool, site, self.clock.isoformat())
        if u < fresh_probability(visibility):
            return 0
        return 1 + int(3 * uniform(self.seed, "lag", code, tool, site, self.clock.isoformat()))

    def _look(self, site: Site, salt: str) -> Look:
        if site.disagree and uniform(self.seed, "feed", site.key, salt) < site.disagree:
            return Look(site, uniform(self.seed, "feed-sign", site.key, salt))
        return Look(site, None)

    def _page(self, *, site: Site, kind: str, path: str, lang: str, title: str, published: dt.date,
              entity: str | None, snippet: str, blocks: Sequence[Block], records: tuple[str, ...] = ()) -> Page:
        if published > self.clock:
            raise WebCorpusError(f"{path}: published {published} after the clock {self.clock}")
        body, text = render_page(lang=lang, site_name=site.name, title=title, published=published,
                                 description=snippet, blocks=blocks, url_path=path,
                                 marker=self.marker)
        return Page(path=path, site=site.key, kind=kind, lang=lang, title=title, published=published,
                    entity=entity, snippet=snippet, text=text, html=body, records=records)

    def _history_start(self, entity: Entity) -> dt.date:
        """The first day of the first month of the entity's monthly quote history."""
        recent = month_start(self.clock, RECENT_HISTORY_MONTHS - 1)
        needed = self.history_from.get(entity.code)
        if needed is None:
            return recent
        year, month = (int(part) for part in needed.split("-"))
        # One to three months more than the question needs, so the first page does not tell a
        # reader which month a question starts in.
        pad = 1 + int(3 * uniform(self.seed, "history-pad", entity.code))
        start = month_start(dt.date(year, month, 1), pad)
        return max(min(start, recent), month_start(self.clock, MAX_HISTORY_MONTHS - 1))

    def _monthly_history(self, entity: Entity, data: Fetched, start: dt.date,
                         before: dt.date | None = None) -> list[Page]:
        """The exchange's historical-price pages of the entity's quote, one per month from `start`
        to the clock's month, each with the month's sessions (newest first) and links to the
        months before and after, the quote page and the company page. A month's page is published
        on its last session (the current month's: its last session so far, never after the clock).
        With `before` (an obscure entity, whose recent sessions are in the bulletins only), only
        the sessions before that day."""
        meta = data.meta
        if meta.time_key is None or any(len(g) != 1 for g in data.groups):
            return []
        by_month: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
        first = f"{start.year:04d}-{start.month:02d}"
        for group in data.groups:
            day = day_of(group[0].get(meta.time_key))
            if before is not None and (day or before) >= before:
                continue
            month = f"{day.year:04d}-{day.month:02d}" if day is not None else None  # reader.month_of
            if month is not None and month >= first:
                by_month[month].append(group)
        months = sorted(by_month)
        lang = official_lang(entity)
        look = Look(EXCHANGE if lang == "zh" else EXCHANGE_EN, None)
        pages = []
        for position, month in enumerate(months):
            groups = by_month[month]
            name = display_name(self._named(entity, published_on(meta, groups[0], self.clock)), lang)
            year, number = int(month[:4]), int(month[5:])
            if lang == "zh":
                period = f"{year}年{number:02d}月"
                title = f"{name}（{entity.code}）{period}历史行情"
                lead = f"{entity.exchange} {entity.code} {name}：{period}每个交易日的行情，共{len(groups)}个交易日，由近及远。"
                earlier, later, quote_label = "上月", "下月", "最新行情"
            else:
                period = f"{_MONTHS_EN[number - 1]} {year}"
                title = f"{name} ({entity.code}) historical prices, {period}"
                lead = (f"{entity.exchange} {entity.code} {name}: every session of {period}, "
                        f"{len(groups)} sessions, newest first.")
                earlier, later, quote_label = "Previous month", "Next month", "Latest quote"
            links: list[tuple[str, str]] = []
            if position > 0:
                links.append((self._month_path(meta, entity, months[position - 1]), f"{earlier} {months[position - 1]}"))
            if position + 1 < len(months):
                links.append((self._month_path(meta, entity, months[position + 1]), f"{later} {months[position + 1]}"))
            links += [(f"/exchange/{meta.name}/{entity.code}.html", quote_label),
                      (f"/exchange/company/{entity.code}.html", name)]
            table = history_table(meta, groups, look, self.seed, f"month:{entity.code}:{meta.name}:{month}")
            page = self._page(site=EXCHANGE, kind="history", path=self._month_path(meta, entity, month), lang=lang,
                              title=title, published=published_on(meta, groups[0], self.clock), entity=entity.code,
                              snippet=lead, blocks=[Paragraph(lead), table, Links(tuple(links))],
                              records=_keys(meta, entity.code, groups))
            if uniform(self.seed, "crawled", entity.code, meta.name, month) >= crawl_probability(entity.visibility):
                page = dataclasses.replace(page, indexed=False)
            pages.append(page)
        return pages

    @staticmethod
    def _month_path(meta: ToolMeta, entity: Entity, month: str) -> str:
        return f"/exchange/{meta.name}/{entity.code}/history/{month}.html"

    def _official_page(self, entity: Entity, data: Fetched, monthly: Sequence[Page] = (), *,
                       latest_only: bool = False, recent_only: bool = False, archive: str | None = None) -> Page:
        """The exchange's page of one data set of an entity: the latest record, then the history
        (daily series) or the last periods (holders, plans, schedules). `latest_only` (an obscure
        entity's daily series): the latest record alone, its history being in the bulletins
        (`archive`, linked either way); `recent_only` (a middle one's): its last RECENT_ROWS
        sessions, older ones on the monthly pages (the quote) or in the bulletins."""
        meta = data.meta
        lang = official_lang(entity)
        name = display_name(entity, lang)
        look = Look(EXCHANGE if lang == "zh" else EXCHANGE_EN, None)
        salt = f"official:{entity.code}:{meta.name}"
        heading = tool_title(meta, lang)
        title = f"{name}（{entity.code}）{heading}" if lang == "zh" else f"{name} ({entity.code}) {heading}"
        blocks: list[Block] = [Paragraph(f"{entity.exchange} {entity.code} {name}. {as_of_text(meta, data.groups[0], lang)}")]
        rows = LONG_ROWS if meta.name in LONG_TOOLS else EXCHANGE_ROWS
        if meta.refresh_class == "daily" and all(len(g) == 1 for g in data.groups[:rows]):
            shown = data.groups[:1 if latest_only else RECENT_ROWS if recent_only else rows]
            blocks.append(group_table(meta, shown[0], look, self.seed, salt))
            if len(shown) > 1:
                blocks.append(Heading("历史数据" if lang == "zh" else "History"))
                blocks.append(history_table(meta, shown, look, self.seed, salt))
        else:
            # Reference lists (an industry's members since its launch) in full; other series their
            # last periods.
            shown = (data.groups if meta.refresh_class == "static"
                     else data.groups[:EXCHANGE_ROWS if meta.refresh_class == "daily"
                                      else MONTHLY_BARS if meta.name in MONTHLY_BAR_TOOLS else EXCHANGE_GROUPS])
            if latest_only and meta.name in PERIOD_BAR_TOOLS:
                shown = shown[:1]  # an obscure entity's weekly (monthly) bars: in the bulletins
            for index, group in enumerate(shown):
                if meta.time_key is not None:
                    blocks.append(Heading(version_heading(meta, group, lang), level=3))
                blocks.append(group_table(meta, group, look, self.seed, f"{salt}:{index}"))
        kind = ("quote" if meta.name == _QUOTE_TOOL.get(entity.asset_class)
                else "profile" if meta.refresh_class == "static" else "data")
        months = tuple((page.path, page.title) for page in reversed(monthly))
        if months:
            blocks.append(Heading("历史行情（按月）" if lang == "zh" else "Historical prices by month"))
        bulletins = (((archive, bulletin_label(meta.name, lang)),) if archive is not None else ())
        blocks.append(Links(((f"/exchange/company/{entity.code}.html", name), *months, *bulletins)))
        return self._page(site=EXCHANGE, kind=kind, path=f"/exchange/{meta.name}/{entity.code}.html", lang=lang,
                          title=title, published=published_on(meta, shown[0], self.clock), entity=entity.code,
                          snippet=f"{title}. {as_of_text(meta, shown[0], lang)}", blocks=blocks,
                          records=_keys(meta, entity.code, shown))

    def _hub(self, entity: Entity, pages: Sequence[Page], archives: Sequence[tuple[str, str]] = (),
             former: Sequence[str] = ()) -> Page:
        """The entity's page on its exchange: names (former ones too, from its name history),
        codes and links to every page about it, and to its exchange's bulletin archives of its
        daily data sets."""
        lang = official_lang(entity)
        name = display_name(entity, lang)
        ticker = entity.code.split(".")[0]
        names = " / ".join(dict.fromkeys(filter(None, (plain(entity.name_en), plain(entity.name_zh),
                                                       plain(short_name(entity))))))
        if lang == "zh":
            title = f"{name}（{entity.code}）公司主页"
            were = f"；曾用名：{'、'.join(former)}" if former else ""
            lead = f"{entity.exchange} 代码 {entity.code}（{ticker}），名称：{names}{were}。行情、公告、定期报告与新闻。"
        else:
            title = f"{name} ({entity.code}) company page"
            were = f"; formerly {', '.join(former)}" if former else ""
            lead = (f"{entity.exchange} code {entity.code} ({ticker}), names: {names}{were}. Quotes, filings, reports "
                    "and news.")
        facts = company_facts(self.reader.market, entity, lang, self.clock)
        # A report's continuation pages are linked from the page before and after, not from here.
        own = [p for p in pages if p.site == "exchange" and continuation_number(p.path) is None]
        others = [p for p in pages if p.site != "exchange" and p.kind not in ("news", "spam")]
        news = sorted((p for p in pages if p.kind == "news"), key=lambda p: p.published, reverse=True)[:NEWS_LINKS]
        links = tuple((p.path, p.title) for p in (*own, *others, *news))
        links += tuple((path, f"{bulletin_label(tool, lang)}: {tool_title(self.reader.specs[tool].meta, lang)}")
                       for path, tool in archives)
        published = max((p.published for p in own), default=min(entity.list_date, self.clock))
        return self._page(site=EXCHANGE, kind="hub", path=f"/exchange/company/{entity.code}.html", lang=lang,
                          title=title, published=min(published, self.clock), entity=entity.code,
                          snippet=" ".join((lead, *(f.text for f in facts if isinstance(f, Paragraph))))[:400],
                          blocks=[Paragraph(lead), *facts, Links(links)])

    def _data_page(self, entity: Entity, site: Site, data: Fetched, lag: int) -> Page:
        meta, group = data.meta, data.groups[lag]
        lang = site.lang
        name = display_name(entity, lang)
        salt = f"{entity.code}:{meta.name}:{group[0].get(meta.time_key) if meta.time_key else ''}"
        look = self._look(site, salt)
        table = group_table(meta, group, look, self.seed, salt)
        kind = ("quote" if meta.name == _QUOTE_TOOL.get(entity.asset_class)
                else "profile" if meta.refresh_class == "static" else "data")
        if lang == "en":
            title = f"{name} ({entity.code}) {tool_title(meta, lang)}"
        else:
            title = f"{name}（{entity.code}）{tool_title(meta, lang)}"
        lead = f"{title}. {as_of_text(meta, group, lang)}"
        if look.disagree_seed is not None:
            lead += " Source: third-party data feed." if lang == "en" else " 数据来源：第三方数据商。"
        snippet = f"{lead} " + "; ".join(f"{r[0]} {r[1]}" for r in table.rows[:4] if len(r) == 3)[:220]
        records = _keys(meta, entity.code, [group]) if look.disagree_seed is None else ()
        return self._page(site=site, kind=kind, path=f"/{site.key}/{meta.name}/{entity.code}.html", lang=lang,
                          title=title, published=published_on(meta, group, self.clock), entity=entity.code,
                          snippet=snippet, blocks=[Paragraph(lead), table], records=records)

    def _digest_page(self, entity: Entity, site: Site, data: Fetched, lag: int) -> Page | None:
        """A portal's key statistics of a well-known entity's quote (web/digest.py), as of its lag."""
        meta = data.meta
        found = digest_table(meta, entity.code, data.groups[lag:], Look(site, None))
        if found is None:
            return None
        table, keys = found
        lang = site.lang
        name = display_name(entity, lang)
        title = (f"{name} ({entity.code}) key statistics" if lang == "en" else f"{name}（{entity.code}）关键指标")
        lead = f"{title}. {as_of_text(meta, data.groups[lag], lang)}"
        return self._page(site=site, kind="digest", path=f"/{site.key}/stats/{entity.code}.html", lang=lang,
                          title=title, published=published_on(meta, data.groups[lag], self.clock), entity=entity.code,
                          snippet=lead, blocks=[Paragraph(lead), table], records=keys)

    def _history_page(self, entity: Entity | None, site: Site, data: Fetched, lag: int,
                      subject: str | None = None) -> Page:
        """The last HISTORY_ROWS records of a daily series, newest first (an entity's or a market series')."""
        meta = data.meta
        lang = site.lang
        code = entity.code if entity is not None else subject or meta.name
        look = self._look(site, f"history:{code}:{meta.name}")
        groups = data.groups[lag: lag + HISTORY_ROWS]
        table = history_table(meta, groups, look, self.seed, f"{code}:{meta.name}")
        if entity is not None:
            name = display_name(entity, lang)
            title = (f"{name} ({code}) {tool_title(meta, lang)}: historical data" if lang == "en"
                     else f"{name}（{code}）{tool_title(meta, lang)}历史数据")
        else:
            name = tool_title(meta, lang)
            title = f"{name} — historical data" if lang == "en" else f"{name}历史数据"
        lead = (f"{name}: the last {len(table.rows)} records, newest first." if lang == "en"
                else f"{name}最近{len(table.rows)}条记录（由近及远）。")
        records = _keys(meta, entity.code if entity is not None else None, groups) if look.disagree_seed is None else ()
        return self._page(site=site, kind="history", path=f"/{site.key}/{meta.name}/{code}/history.html",
                          lang=lang, title=title, published=published_on(meta, data.groups[lag], self.clock),
                          entity=entity.code if entity is not None else None, snippet=lead,
                          blocks=[Paragraph(lead), table], records=records)

    def _filing_index(self, entity: Entity, fetched: dict[str, Fetched]) -> Page:
        lang = official_lang(entity)
        entries: list[tuple[dt.date, str, str, str | None]] = []
        statements = fetched.get(_REPORT_TOOLS.get(entity.asset_class, ("",))[0])
        # The reports the exchange keeps a page of (reports.py `kept_periods`): only they are linked.
        reported = set(kept_periods({str(g[0].get("end_date")): (str(g[0]["end_type"]) if g[0].get("end_type") else None)
                                     for g in statements.groups if g and not is_restated(g)})) if statements else set()
        for tool, (title_en, title_zh) in _FILINGS.items():
            data = fetched.get(tool)
            if data is None:
                continue
            for group in data.groups:
                if is_restated(group):
                    continue  # a comparative of a later report, listed under that report's period
                day = published_on(data.meta, group, self.clock)
                period = str(group[0].get("end_date") or "")
                label = f"{title_zh if lang == 'zh' else title_en} {period}".strip()
                link = None
                if tool in ("income", "hk_income", "us_income") and period in reported:
                    link = f"/exchange/reports/{entity.code}/{period}.html"
                entries.append((day, period, label, link))
        # Newest first; on one day, the later period first (an annual report and the next
        # first-quarter report published together list the quarter above the year).
        entries.sort(key=lambda e: (e[0], e[1], e[2]), reverse=True)
        entries = entries[:FILING_ROWS]
        name = display_name(entity, lang)
        title = f"{name}（{entity.code}）公告列表" if lang == "zh" else f"{name} ({entity.code}) filings"
        rows = tuple((d.isoformat(), label) for d, _, label, _ in entries)
        links = tuple((link, label) for _, _, label, link in entries if link)
        blocks: list[Block] = [Paragraph(f"{entity.exchange} {entity.code} {name}"),
                               Table(("Date", "Title") if lang == "en" else ("公告日期", "公告标题"), rows)]
        blocks.append(Links(((f"/exchange/company/{entity.code}.html", name), *links)))
        published = entries[0][0] if entries else min(entity.list_date, self.clock)
        return self._page(site=EXCHANGE, kind="filings", path=f"/exchange/filings/{entity.code}.html", lang=lang,
                          title=title, published=published, entity=entity.code,
                          snippet=f"{title}: {len(entries)}", blocks=blocks)

    def _fund_reports(self, entity: Entity, data: Fetched) -> Iterator[Page]:
        """An obscure fund's periodic reports, one long document per published portfolio (its last
        REPORTS_BACK), its holdings on a page of their own (web/reports.py)."""
        lang = official_lang(entity)
        name = display_name(entity, lang)
        meta = data.meta
        look = Look(EXCHANGE if lang == "zh" else EXCHANGE_EN, None)
        back = ((f"/exchange/company/{entity.code}.html", name),
                (f"/exchange/filings/{entity.code}.html", "公告列表" if lang == "zh" else "Filings"))
        seen: set[str] = set()
        for group in data.groups[:REPORTS_BACK]:
            stamp = group[0].get(meta.time_key) if meta.time_key else None
            period = str(group[0].get("end_date") or stamp or "")
            if not period or period in seen:
                continue
            seen.add(period)
            table = group_table(meta, group, look, self.seed, f"report:{entity.code}:{meta.name}:{period}")
            title = (f"{name}（{entity.code}）{period}定期报告" if lang == "zh"
                     else f"{name} ({entity.code}) periodic report for the period ended {period}")
            yield from report_document(
                site=look.site, lang=lang, code=entity.code, name=name, exchange=entity.exchange, period=period,
                title=title, published=published_on(meta, group, self.clock),
                statements=[Statement(tool_title(meta, lang), table, record_key(meta.name, entity.code, stamp))],
                back=back, seed=self.seed, fund=True, make_page=self._page)

    def _news(self, entity: Entity, quote: Fetched, recent: list[dict[str, Any]]) -> Iterator[Page]:
        meta = quote.meta
        for site in NEWS_SITES:
            if site.lang == "zh" and not entity.name_zh:
                continue
            for record in recent:
                key = record.get(meta.time_key)
                day = day_of(key)
                if day is None or uniform(self.seed, "news", entity.code, site.key, key) >= news_probability(entity.visibility):
                    continue
                yield self._news_item(entity, site, meta, record, day)

    def _news_item(self, entity: Entity, site: Site, meta: ToolMeta, record: dict[str, Any], day: dt.date) -> Page:
        lang = site.lang
        name = display_name(entity, lang)
        look = Look(site, None)
        price_field = "unit_nav" if "unit_nav" in record else "close"
        price = record.get(price_field)
        field_meta = meta.field(price_field)
        unit = unit_text(field_meta.unit if field_meta is not None else entity.currency, lang)
        pct = record.get("pct_chg")
        if lang == "en":
            move = "" if pct is None else (f" up {abs(pct):.2f}%" if pct >= 0 else f" down {abs(pct):.2f}%")
            title = f"{name} ({entity.code}) closes{move} at {price} on {day.isoformat()}"
            lead = (f"{name} ({entity.code}) ended the session of {day.isoformat()} at {price} {unit}"
                    f"{move}. Figures below are for that session only.")
        else:
            move = "" if pct is None else (f"涨{abs(pct):.2f}%" if pct >= 0 else f"跌{abs(pct):.2f}%")
            title = f"{name}（{entity.code}）{day.isoformat()}收盘{move}，报{price}"
            lead = f"{day.isoformat()}，{name}（{entity.code}）收于{price}{unit}{move}。以下为当日数据。"
        table = group_table(meta, [record], look, self.seed, f"news:{entity.code}:{day}")
        quote_label = "行情" if lang == "zh" else "Quote"
        links = Links(((f"/exchange/{meta.name}/{entity.code}.html", f"{name} {quote_label}"),
                       (f"/exchange/company/{entity.code}.html", name)))
        return self._page(site=site, kind="news", path=f"/{site.key}/{day.isoformat()}/{entity.code}.html",
                          lang=lang, title=title, published=day, entity=entity.code, snippet=lead,
                          blocks=[Paragraph(lead), table, links],
                          records=(record_key(meta.name, entity.code, record.get(meta.time_key)),))

    def _spam(self, entity: Entity) -> Iterator[Page]:
        for site in SPAM_SITES:
            count = 1 + int(3 * uniform(self.seed, "spam-count", entity.code, site.key))
            for index in range(count):
                lang = site.lang
                name = display_name(entity, lang)
                fake = [round(1 + 200 * uniform(self.seed, "spam", entity.code, site.key, index, k), 2) for k in range(4)]
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
                published = self.clock - dt.timedelta(days=int(30 * uniform(self.seed, "spam-day", entity.code, index)))
                yield self._page(site=site, kind="spam", path=f"/{site.key}/{entity.code}-{index + 1}.html", lang=lang,
                                 title=title, published=published, entity=entity.code, snippet=lead,
                                 blocks=[Paragraph(lead), Table(header, rows), Paragraph(lead)])

    # ------------------------------------------------------------------ market pages

    def wraps(self, moves: Sequence[tuple[str, str, dict[str, Any]]]) -> Iterator[Page]:
        """Daily market wraps (top gainers and losers of each exchange's session) from the entities' quotes."""
        names = {"XSHG": ("Shanghai/Shenzhen", "沪深"), "XHKG": ("Hong Kong", "港股"), "XNYS": ("New York", "美股")}
        sessions: dict[str, dict[dt.date, list[tuple[Entity, dict[str, Any]]]]] = defaultdict(lambda: defaultdict(list))
        for calendar, code, record in moves:
            day = day_of(record.get("trade_date") or record.get("nav_date"))
            if day is not None:
                sessions[calendar][day].append((self.reader.market.names.on(code, min(day, self.clock)), record))
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
                    rows = tuple((display_name(e, lang), e.code, str(r.get("close")), f"{r['pct_chg']:.2f}")
                                 for e, r in picks)
                    if lang == "en":
                        title = f"{market} market wrap for {day.isoformat()}: top gainers and losers"
                        header = ("Name", "Code", "Close", "Change (%)")
                    else:
                        title = f"{day.isoformat()}{market}收评：涨跌幅榜"
                        header = ("名称", "代码", "收盘价", "涨跌幅（%）")
                    records = tuple(record_key(_QUOTE_TOOL.get(e.asset_class, ""), e.code, r.get("trade_date"))
                                    for e, r in picks)
                    yield self._page(site=site, kind="wrap", path=f"/{site.key}/{day.isoformat()}/wrap-{calendar}.html",
                                     lang=lang, title=title, published=day, entity=None, snippet=title,
                                     blocks=[Paragraph(title), Table(header, rows)], records=records)

    def _market_tool_pages(self, tool: str) -> Iterator[Page]:
        data = self.reader.fetch(tool, None, EXCHANGE_DAYS)
        if not data.groups:
            return
        meta = data.meta
        for site in PORTALS:
            if uniform(self.seed, "covers", tool, site.key) >= coverage_probability(MARKET_VISIBILITY):
                continue
            lag = self._lag(MARKET_VISIBILITY, tool, tool, site.key)
            if lag < len(data.groups):
                yield self._market_page(site, data, lag, f"/{site.key}/{tool}/latest.html")
                if (meta.refresh_class == "daily" and len(data.groups) - lag >= 5
                        and all(len(g) == 1 for g in data.groups[lag: lag + HISTORY_ROWS])):
                    yield self._history_page(None, site, data, lag, subject=tool)
        # The official release pages: every period in the window, each at its own URL; daily
        # series the last sessions of the history window, and the whole window as one table per
        # series (per exchange, per currency pair).
        periodic = meta.refresh_class in ("monthly", "quarterly")
        count = len(data.groups) if periodic else min(len(data.groups), self.config.history_sessions)
        for position in range(count):
            key = data.groups[position][0].get(meta.time_key)
            yield self._market_page(STATS, data, position, f"/stats/{tool}/{key}.html", release=True)
        if meta.refresh_class == "daily":
            yield from self._series_histories(data)

    def _series_histories(self, data: Fetched) -> Iterator[Page]:
        meta = data.meta
        by_series: dict[tuple[str, ...], list[list[dict[str, Any]]]] = defaultdict(list)
        for group in data.groups[:EXCHANGE_ROWS]:
            for record in group:
                series = tuple(str(record.get(k) or "") for k in meta.series_keys)
                by_series[series].append([record])
        look = Look(STATS, None)
        for series in sorted(by_series):
            groups = by_series[series]
            label = " ".join(series)
            slug = "-".join(re.sub(r"[^A-Za-z0-9]+", "", s) or "x" for s in series) if series else ""
            title_base = tool_title(meta, "zh")
            title = f"{title_base}{(' ' + label) if label else ''}历史数据（{len(groups)}期）"
            table = history_table(meta, groups, look, self.seed, f"stats-history:{meta.name}:{slug}")
            lead = f"{title_base}{(' ' + label) if label else ''}：最近{len(groups)}期数据，由近及远。"
            path = f"/stats/{meta.name}/{slug + '/' if slug else ''}history.html"
            yield self._page(site=STATS, kind="history", path=path, lang="zh", title=title,
                             published=published_on(meta, groups[0], self.clock), entity=None, snippet=lead,
                             blocks=[Paragraph(lead), table], records=_keys(meta, None, groups))

    def _market_page(self, site: Site, data: Fetched, lag: int, path: str, release: bool = False) -> Page:
        meta, group = data.meta, data.groups[lag]
        lang = site.lang
        salt = f"{meta.name}:{group[0].get(meta.time_key)}"
        look = Look(site, None) if release else self._look(site, salt)
        table = group_table(meta, group, look, self.seed, salt)
        key = group[0].get(meta.time_key)
        title = f"{tool_title(meta, lang)} — {key}" if lang == "en" else f"{tool_title(meta, lang)} {key}"
        published = release_date(meta, group, self.clock)
        if lang == "en":
            lead = f"{tool_title(meta, lang)}. {as_of_text(meta, group, lang)} Released {published.isoformat()}."
        else:
            lead = f"{tool_title(meta, lang)}。{as_of_text(meta, group, lang)}发布日期：{published.isoformat()}。"
        records = _keys(meta, None, [group]) if look.disagree_seed is None else ()
        return self._page(site=site, kind="release" if release else "data", path=path, lang=lang, title=title,
                          published=published, entity=None, snippet=lead[:220], blocks=[Paragraph(lead), table],
                          records=records)


