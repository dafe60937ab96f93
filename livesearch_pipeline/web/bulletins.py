"""The exchanges' daily market-data bulletins: per session and data set, every instrument of an
exchange in one table, paginated, and a dated archive of them per exchange and data set.

This is where an obscure entity's market history lives (web/sites.py `depth_of`: its quote and
data pages show the latest session only), as on a real exchange, whose daily bulletins list every
instrument while only well-known names get history tables and digests elsewhere. A window figure
of such an entity then takes one bulletin read per session; a lookup still one or two (the
archive, then the session's page, whose code range the archive names).

Weekly and monthly bars (`PERIOD_BAR_TOOLS`) are published the same way as the exchange's weekly
(monthly) market-statistics bulletins: one per week (month), dated on the period's last session,
every instrument with that data set, paginated, under the same archive scheme; an obscure
entity's page of its bars then shows the latest bar alone, so the best month of the last 24 takes
about 24 bulletin reads.

Each entity batch contributes its rows (`bulletin_rows`: the exchange's own figures, formatted
as its history tables print them, over the last BULLETIN_SESSIONS sessions); once every batch is
in, `bulletin_pages` groups them by exchange, data set and session, BULLETIN_ROWS instruments a
page in code order. Each bulletin page records the records it prints (evidence), links its
archive and the same page of the sessions before and after; the search engine indexes the
archives, not the bulletins' tables of figures (found by browsing, as on the real web).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

from livesearch_pipeline.core.catalog import ToolMeta
from livesearch_pipeline.web.corpus import Page, record_key
from livesearch_pipeline.web.formatting import Look, history_table, tool_title
from livesearch_pipeline.web.reader import Fetched, key_date
from livesearch_pipeline.web.render import Block, Links, Paragraph, Table

# Sessions a bulletin archive keeps (a 60-session window and its previous close fit), and
# instruments per bulletin page: 40, so that a screen over an index's members (a few dozen stocks
# spread over the exchange's code range) takes a read of most of the session's pages.
BULLETIN_SESSIONS = 65
BULLETIN_ROWS = 40
# Weekly and monthly bars: the exchange's market-statistics bulletins, one per week (month), by
# the period each tool's bars cover (a bar's time key is the period's last session).
PERIOD_BAR_TOOLS = {"weekly": "week", "index_weekly": "week", "monthly": "month", "index_monthly": "month"}
# (English, Chinese) names of a bulletin by its cadence, and of the step between two of them.
_CADENCE = {"day": (("daily bulletin", "每日行情公告"), ("Previous session", "前一交易日"), ("Next session", "后一交易日")),
            "week": (("weekly bulletin", "每周行情统计公告"), ("Previous week", "上一周"), ("Next week", "下一周")),
            "month": (("monthly bulletin", "每月行情统计公告"), ("Previous month", "上月"), ("Next month", "下月"))}


def cadence_of(tool: str) -> str:
    """"day", "week" or "month": how often the exchange publishes a bulletin of this data set."""
    return PERIOD_BAR_TOOLS.get(tool, "day")


def bulletin_label(tool: str, lang: str) -> str:
    """What an exchange calls its bulletins of this data set ("Daily bulletins", "每月行情统计公告")."""
    en, zh = _CADENCE[cadence_of(tool)][0]
    return zh if lang == "zh" else en[0].upper() + en[1:] + "s"

_EXCHANGE_NAMES = {
    "SSE": ("Shanghai Stock Exchange", "上海证券交易所"), "SZSE": ("Shenzhen Stock Exchange", "深圳证券交易所"),
    "HKEX": ("Hong Kong Exchanges", "香港交易所"), "NYSE": ("New York Stock Exchange", "纽约证券交易所"),
    "NASDAQ": ("Nasdaq", "纳斯达克"), "OTC": ("Fund market", "场外基金"), "SW": ("Shenwan indices", "申万指数"),
    "CSI": ("CSI indices", "中证指数"), "GLOBAL": ("Global indices", "全球指数"),
}


@dataclass(frozen=True, slots=True)
class BulletinRow:
    """One instrument's record on one session's bulletin of a data set."""

    exchange: str
    lang: str
    tool: str
    day: str  # the record's time key (YYYYMMDD)
    code: str
    name: str
    cells: tuple[str, ...]  # the figures, as the exchange's history table prints them
    record: str  # its record_key

    def __reduce__(self) -> tuple:
        # Pickled as its fields: a web's 350,000 rows go to the building process and back to the
        # workers, which a frozen dataclass' own pickling (a state dict per row) makes slow.
        return type(self), tuple([getattr(self, name) for name in self.__slots__])


@functools.lru_cache(maxsize=1 << 16)
def _key_date_of_text(value: str) -> dt.date | None:
    return key_date(value, None)


def day_of(value: object) -> dt.date | None:
    """`key_date(value, None)`, remembered: a web reads the same few thousand time keys (sessions,
    months, quarters) hundreds of thousands of times."""
    return _key_date_of_text(value) if isinstance(value, str) else None


def _period(row: BulletinRow) -> str:
    """The period a row's bulletin covers: its session, or the ISO week (the month) of its bar."""
    cadence = cadence_of(row.tool)
    if cadence == "day":
        return row.day
    if cadence == "month":
        return row.day[:6]
    day = day_of(row.day)
    assert day is not None, row.day
    year, week, _ = day.isocalendar()
    return f"{year}W{week:02d}"


def archive_path(exchange: str, tool: str) -> str:
    return f"/exchange/bulletin/{exchange}/{tool}/index.html"


def bulletin_path(exchange: str, tool: str, day: str, page: int) -> str:
    return f"/exchange/bulletin/{exchange}/{tool}/{day}-{page}.html"


def exchange_name(exchange: str, lang: str) -> str:
    names = _EXCHANGE_NAMES.get(exchange)
    return exchange if names is None else names[0 if lang == "en" else 1]


def bulletin_rows(*, exchange: str, lang: str, code: str, name: str | Callable[[dt.date], str], data: Fetched,
                  since: dt.date, look: Look, seed: int) -> list[BulletinRow]:
    """The rows one entity contributes to its exchange's bulletins of one daily (weekly, monthly)
    data set: each record from `since` on (one record per period; series of several records a
    period are not bulletin material). `name`: the entity's name, or its name on a session (a
    renamed company is listed under the name it had that day)."""
    meta = data.meta
    if meta.time_key is None or any(len(group) != 1 for group in data.groups):
        return []
    groups = [group for group in data.groups
              if (day := day_of(group[0].get(meta.time_key))) is not None and day >= since]
    if not groups:
        return []
    table = history_table(meta, groups, look, seed, f"bulletin:{code}:{meta.name}")
    def named(group: list[dict[str, Any]]) -> str:
        if isinstance(name, str):
            return name
        return name(day_of(group[0].get(meta.time_key)) or since)

    return [BulletinRow(exchange, lang, meta.name, str(group[0].get(meta.time_key)), code, named(group), tuple(row[1:]),
                        record_key(meta.name, code, group[0].get(meta.time_key)))
            for group, row in zip(groups, table.rows)]


def bulletin_header(meta: ToolMeta, look: Look) -> tuple[str, ...]:
    """Code | Name | the figures' labels (those of the exchange's history table of the data set)."""
    labels = history_table(meta, [], look, 0, "").header[1:]
    return ("代码", "名称", *labels) if look.site.lang == "zh" else ("Code", "Name", *labels)


MakePage = Callable[..., Page]


BulletinGroup = tuple[str, str, str]  # (exchange, tool, lang): one archive's bulletins
# An archive's entry in its exchange's list: (exchange, archive path, heading, newest day, lang).
ArchiveEntry = tuple[str, str, str, str, str]


def bulletin_groups(rows: Sequence[BulletinRow]) -> list[tuple[BulletinGroup, dict[str, list[BulletinRow]]]]:
    """The rows by archive (exchange, data set, language), in `bulletin_pages`' order, each
    archive's rows by period (as the rows came within a period)."""
    grouped: dict[BulletinGroup, dict[str, list[BulletinRow]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        grouped[(row.exchange, row.tool, row.lang)][_period(row)].append(row)
    return [(group, dict(grouped[group])) for group in sorted(grouped)]


def bulletin_pages(rows: Sequence[BulletinRow], metas: Mapping[str, ToolMeta], looks: Mapping[str, Look],
                   make_page: MakePage) -> Iterator[Page]:
    """Every bulletin page and archive, in a fixed order (exchange, data set, session newest first).
    `make_page(site=, kind=, path=, lang=, title=, published=, entity=, snippet=, blocks=, records=)`
    renders a page (the generator's, which refuses a date after the clock); `looks` gives the
    exchange's look per language. The archives are independent of each other
    (`archive_pages`), so a caller may render them in several processes and put them in this
    order, then the exchanges' lists (`exchange_indexes`)."""
    entries: list[ArchiveEntry] = []
    for group, periods in bulletin_groups(rows):
        pages, entry = archive_pages(group, periods, metas, looks, make_page)
        yield from pages
        entries.append(entry)
    yield from exchange_indexes(entries, looks, make_page)


def archive_pages(group: BulletinGroup, periods: Mapping[str, Sequence[BulletinRow]], metas: Mapping[str, ToolMeta],
                  looks: Mapping[str, Look], make_page: MakePage) -> tuple[list[Page], ArchiveEntry]:
    """One archive's bulletin pages (session newest first) and the archive page itself, last; and
    the archive's entry in its exchange's list."""
    exchange, tool, lang = group
    out: list[Page] = []
    # Each bulletin is dated on its period's last session: a week's or a month's bars of
    # instruments that stopped trading early in the period are listed in that bulletin too.
    sessions = {max(r.day for r in rows): rows for rows in periods.values()}
    meta, look = metas[tool], looks[lang]
    cadence = cadence_of(tool)
    (kind_en, kind_zh), earlier, later = _CADENCE[cadence]
    header = bulletin_header(meta, look)
    heading = tool_title(meta, lang)
    market = exchange_name(exchange, lang)
    days = sorted(sessions, reverse=True)
    listing: list[tuple[str, list[tuple[str, str, str]]]] = []  # day, [(path, first code, last code)]
    archive = archive_path(exchange, tool)
    for position, day in enumerate(days):
        ordered = sorted(sessions[day], key=lambda r: r.code)
        chunks = [ordered[i: i + BULLETIN_ROWS] for i in range(0, len(ordered), BULLETIN_ROWS)]
        parts = []
        for number, chunk in enumerate(chunks, start=1):
            path = bulletin_path(exchange, tool, day, number)
            parts.append((path, chunk[0].code, chunk[-1].code))
            date = day_of(day)
            assert date is not None, day
            iso = date.isoformat()
            if lang == "zh":
                title = f"{market}{kind_zh} {heading} {iso} 第{number}/{len(chunks)}页"
                period = {"day": "", "week": "当周（截至该日）", "month": "当月（截至该日）"}[cadence]
                lead = (f"{market} {iso} {period}{heading}：全部{len(ordered)}只证券，本页第{number}页，"
                        f"代码 {chunk[0].code} 至 {chunk[-1].code}。")
                labels = ("归档", earlier[1], later[1])
            else:
                title = f"{market} {kind_en}: {heading}, {iso}, page {number} of {len(chunks)}"
                period = {"day": "session of", "week": "week ended", "month": "month ended"}[cadence]
                lead = (f"{market}, {period} {iso}, {heading}: all {len(ordered)} instruments; page {number}, "
                        f"codes {chunk[0].code} to {chunk[-1].code}.")
                labels = ("Archive", earlier[0], later[0])
            links = [(archive, labels[0])]
            if position + 1 < len(days):
                links.append((bulletin_path(exchange, tool, days[position + 1], 1), labels[1]))
            if position > 0:
                links.append((bulletin_path(exchange, tool, days[position - 1], 1), labels[2]))
            blocks: list[Block] = [Paragraph(lead),
                                   Table(header, tuple((r.code, r.name, *r.cells) for r in chunk)),
                                   Links(tuple(links))]
            page = make_page(site=look.site, kind="bulletin", path=path, lang=lang, title=title,
                             published=date, entity=None, snippet=lead, blocks=blocks,
                             records=tuple(r.record for r in chunk))
            # Tables of figures the search engine leaves out: found from the archive.
            out.append(dataclasses.replace(page, indexed=False))
        listing.append((day, parts))
    # The archive lists code ranges, not what a name search should find first: the engine
    # indexes the exchange's list of its bulletins instead (`_exchange_index`).
    out.append(dataclasses.replace(_archive(exchange, tool, lang, market, heading, listing, look, make_page,
                                            cadence), indexed=False))
    return out, (exchange, archive, heading, days[0], lang)


def exchange_indexes(entries: Sequence[ArchiveEntry], looks: Mapping[str, Look], make_page: MakePage) -> list[Page]:
    """Each exchange's list of its archives, from the archives' entries in `bulletin_pages`' order."""
    archives: dict[str, list[tuple[str, str, str, str]]] = defaultdict(list)
    for exchange, path, heading, newest, lang in entries:
        archives[exchange].append((path, heading, newest, lang))
    pages = []
    for exchange, listed in sorted(archives.items()):
        lang = listed[0][3]  # an exchange publishes in one language
        pages.append(_exchange_index(exchange, lang, [item[:3] for item in listed], looks[lang], make_page))
    return pages


def exchange_index_path(exchange: str) -> str:
    return f"/exchange/bulletin/{exchange}/index.html"


def _exchange_index(exchange: str, lang: str, listed: list[tuple[str, str, str]], look: Look,
                    make_page: MakePage) -> Page:
    """An exchange's list of its daily bulletins: one archive per data set."""
    market = exchange_name(exchange, lang)
    newest = max(key_date(day, None) or dt.date.min for _, _, day in listed)
    if lang == "zh":
        title = f"{market}每日行情公告"
        lead = (f"{market}每个交易日发布的行情公告（周线、月线为每周、每月的行情统计公告），按数据类别归档"
                "（全部证券，分页）。")
    else:
        title = f"{market} daily market-data bulletins"
        lead = (f"{market} publishes a bulletin per session and data set (weekly and monthly bars: one per week "
                "and month), listing every instrument, page by page.")
    return make_page(site=look.site, kind="archive", path=exchange_index_path(exchange), lang=lang, title=title,
                     published=newest, entity=None, snippet=lead,
                     blocks=[Paragraph(lead), Links(tuple((path, heading) for path, heading, _ in listed))],
                     records=())


def _archive(exchange: str, tool: str, lang: str, market: str, heading: str,
             listing: list[tuple[str, list[tuple[str, str, str]]]], look: Look, make_page: MakePage,
             cadence: str = "day") -> Page:
    """The dated archive of one exchange's bulletins of one data set: each session (week, month),
    newest first, with its pages and the code range each holds."""
    newest = key_date(listing[0][0], None)
    assert newest is not None
    (kind_en, kind_zh), _, _ = _CADENCE[cadence]
    span_zh, span_en = {"day": ("个交易日", "sessions"), "week": ("周", "weeks"), "month": ("个月", "months")}[cadence]
    if lang == "zh":
        title = f"{market}{kind_zh}归档：{heading}"
        lead = (f"{market}{heading}{kind_zh}，最近{len(listing)}{span_zh}，由近及远；每页列出代码区间内的全部证券。")
    else:
        title = f"{market} {kind_en}s archive: {heading}"
        lead = (f"{market} {kind_en}s of {heading}, the last {len(listing)} {span_en}, newest "
                "first; each page lists every instrument of its code range.")
    items = []
    for day, parts in listing:
        date = key_date(day, None)
        assert date is not None
        for number, (path, first, last) in enumerate(parts, start=1):
            text = (f"{date.isoformat()} 第{number}页 {first}–{last}" if lang == "zh"
                    else f"{date.isoformat()} page {number}: {first}–{last}")
            items.append((path, text))
    return make_page(site=look.site, kind="archive", path=archive_path(exchange, tool), lang=lang, title=title,
                     published=newest, entity=None, snippet=lead, blocks=[Paragraph(lead), Links(tuple(items))],
                     records=())

