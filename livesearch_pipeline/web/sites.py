"""The sites of the offline web and the chances an entity's visibility gives its evidence there.

Every entity has its exchange's own pages (in Chinese in Shanghai/Shenzhen, in English elsewhere:
`official_lang`); a visible entity is also written about by portals, news sites and spam sites,
each a `Site` persona with its own language and its own way of printing figures (restating
amounts, rounding, a third-party feed that disagrees). Visibility (0..10) sets how many portals
write about an entity (`sources_for`), how likely one covers a data set, shows the latest figures
and a news site reports a session (`coverage_probability`, `fresh_probability`,
`news_probability`), and how likely the search engine indexed a deep exchange page
(`crawl_probability`). Each chance is drawn with `uniform`, a hash of the seed and the draw's
purpose, so the web is a pure function of its configuration.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from livesearch_pipeline.dataservice.market.universe import Entity


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
EXCHANGE_EN = Site("exchange", EXCHANGE.name, "en", "exchange")
STATS = Site("stats", "Statistics Release Portal 统计数据发布", "zh", "stats")
SPAM_SITES = (Site("hotstocktips", "Hot Stock Tips", "en", "spam"), Site("niugu", "牛股天天荐", "zh", "spam"))
SITES = {s.key: s for s in (*PORTALS, *NEWS_SITES, EXCHANGE, STATS, *SPAM_SITES)}

# Market-wide series (rates, FX, macro releases) are household names: the pool scores them 10.
MARKET_VISIBILITY = 10

# How deep the work for an entity's market data goes, by visibility (`depth_of`): portals digest a
# well-known entity's figures (changes, highs and lows, averages over 5/20/60 sessions) and print
# its history in one table; a middle one's exchange pages show its last week (RECENT_ROWS), its
# quote's history month by month on the exchange's monthly pages and its other daily series in
# the exchange's daily bulletins; an obscure one's history is only in the bulletins (one page per
# session, every instrument) and, further back, the monthly pages, its pages showing the latest
# session alone.
DIGEST_FROM = 7
BULLETIN_UP_TO = 3
# The rows of a daily series an exchange page shows at the middle depth (its last week).
RECENT_ROWS = 5


def depth_of(visibility: int) -> str:
    """"digest" (7..10), "history" (4..6) or "bulletin" (0..3): where an entity's market history is."""
    if visibility >= DIGEST_FROM:
        return "digest"
    return "bulletin" if visibility <= BULLETIN_UP_TO else "history"


def crawl_probability(visibility: int) -> float:
    """How likely the engine indexed one of an entity's exchange data-set pages: search engines
    crawl the deep pages of a popular entity, fewer of an obscure one's (its company, quote,
    filing and report pages are always indexed)."""
    return min(1.0, 0.25 + 0.1 * visibility)


def uniform(seed: int, *parts: object) -> float:
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
    """How likely a news site reports one session of an entity: never an obscure one's (levels up to
    BULLETIN_UP_TO: nobody writes daily about it, so its closes are only in its exchange's pages)."""
    return 0.0 if visibility <= BULLETIN_UP_TO else min(0.9, 0.05 + 0.07 * visibility)


def official_lang(entity: Entity) -> str:
    """The language the entity's exchange publishes in: Chinese in Shanghai/Shenzhen, English elsewhere."""
    return "zh" if entity.calendar == "XSHG" and entity.name_zh else "en"
