"""The fictional instruments of the synthetic market: A-shares, Hong Kong and US equities,
indices and funds.

Names are assembled from syllable tables of uncommon characters (Chinese) and invented
syllables (English), so no entity carries a real company's name; codes follow the real
exchanges' formats (600xxx.SH, 300xxx.SZ, 00xxx.HK, 51xxxx.SH, ...). Everything is a pure
function of the seed. An entity's `name` is the company's final name: the name in effect on a
day is `market.names.on(code, day)` (market/names.py), which every tool and page asks.

A/H dual listings (issue 39): some large A-share companies of the industries that list in Hong
Kong (banks, brokers, insurers, energy, utilities, shipping, industrials, pharmaceuticals) also
have H-shares on HKEX: the same company under the same names, its statements the A-share's in
CNY, its own Hong Kong quote in HKD (`Universe.a_share_of` / `h_share_of`). Each listed company
also has its reporting profile (market/reporting.py): the month its fiscal year ends in and the
currency its statements are in.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from livesearch_pipeline.core.calendars import CALENDAR_START, session_dates
from livesearch_pipeline.dataservice.market.reporting import fiscal_year_end_month, reporting_currency
from livesearch_pipeline.dataservice.market.rng import generator

ASSET_CLASSES = ("cn_equity", "hk_equity", "us_equity", "index", "fund")
VISIBILITY_LEVELS = tuple(range(11))


@dataclass(frozen=True)
class Entity:
    code: str
    name: str
    name_en: str
    name_zh: str | None
    asset_class: str
    exchange: str
    calendar: str
    currency: str
    industry: str
    list_date: dt.date
    visibility: int
    market: str
    # The reporting profile of a listed company (market/reporting.py): the month its fiscal year
    # ends in, and the currency of its statements (None: its trading currency).
    fy_end_month: int = 12
    report_currency: str | None = None

    @property
    def reporting_currency(self) -> str:
        return self.report_currency or self.currency


@dataclass(frozen=True)
class IndexSpec:
    """How an index is made. `members` is the constituent rule's candidate list (A-share codes,
    in rank order); empty for the global indices, whose level is simulated directly."""

    code: str
    category: str  # 规模指数 / 主题指数 / 行业指数 / 海外指数
    publisher: str
    base_date: dt.date
    base_point: float
    members: tuple[str, ...]
    weight_rule: str  # "float_mv" (free-float cap weighted) or "" for the global indices (total-cap weighted)


@dataclass(frozen=True)
class FundSpec:
    code: str
    management: str  # fund company display name
    custodian: str
    fund_type: str  # 股票型 / 混合型 / 债券型 / 货币市场型
    invest_type: str
    benchmark_index: str | None  # tracked index code for ETFs
    m_fee: float  # management fee, percent per year
    c_fee: float  # custodian fee, percent per year
    found_date: dt.date


# Uncommon characters, each with its pinyin, for Chinese names and their romanisations.
_ZH_SYLLABLES = (
    ("琨", "kun"), ("澜", "lan"), ("岚", "lan"), ("曦", "xi"), ("翊", "yi"), ("珩", "heng"),
    ("璟", "jing"), ("湛", "zhan"), ("霁", "ji"), ("砚", "yan"), ("棠", "tang"), ("芷", "zhi"),
    ("沅", "yuan"), ("峤", "qiao"), ("溯", "su"), ("骁", "xiao"), ("珂", "ke"), ("篁", "huang"),
    ("筠", "yun"), ("泠", "ling"), ("崧", "song"), ("蔚", "wei"), ("旻", "min"), ("翎", "ling"),
    ("渺", "miao"), ("樾", "yue"), ("垚", "yao"), ("琰", "yan"), ("昶", "chang"), ("赟", "yun"),
    ("淼", "miao"), ("珈", "jia"), ("焱", "yan"), ("骞", "qian"), ("槿", "jin"), ("霈", "pei"),
    ("滢", "ying"), ("瑭", "tang"), ("晞", "xi"), ("钰", "yu"),
)

# (industry label as Tushare shows it, Chinese name suffix, English name suffix)
_CN_INDUSTRIES = (
    ("银行", "银行", "Bank"), ("证券", "证券", "Securities"), ("保险", "保险", "Insurance"),
    ("白酒", "酒业", "Distillery"), ("食品", "食品", "Foods"), ("化学制药", "医药", "Pharmaceutical"),
    ("医疗保健", "医疗", "Medical"), ("半导体", "微电子", "Microelectronics"),
    ("元器件", "电子", "Electronics"), ("软件服务", "软件", "Software"),
    ("通信设备", "通信", "Communications"), ("汽车整车", "汽车", "Motors"),
    ("汽车配件", "汽配", "Auto Parts"), ("电气设备", "电气", "Electric"),
    ("新型电力", "新能源", "New Energy"), ("化工原料", "化工", "Chemical"), ("普钢", "钢铁", "Steel"),
    ("小金属", "有色", "Metals"), ("煤炭开采", "煤业", "Coal"), ("建筑工程", "建工", "Construction"),
    ("全国地产", "地产", "Properties"), ("家用电器", "电器", "Appliances"),
    ("服饰", "服饰", "Apparel"), ("影视音像", "传媒", "Media"), ("专用机械", "机械", "Machinery"),
    ("水运", "航运", "Shipping"), ("火力发电", "电力", "Power"), ("农业综合", "农业", "Agriculture"),
)
_HK_INDUSTRIES = (
    ("地产", "置业", "Land"), ("金融", "金融", "Financial"), ("资讯科技", "科技", "Technology"),
    ("消费", "消费", "Consumer"), ("医疗保健", "健康", "Healthcare"), ("能源", "能源", "Energy"),
    ("电讯", "电讯", "Telecom"), ("公用事业", "公用", "Utilities"), ("物流", "物流", "Logistics"),
    ("工业", "实业", "Industries"),
)
_US_INDUSTRIES = (
    ("Software", "Systems"), ("Semiconductors", "Semiconductor"), ("Biotechnology", "Therapeutics"),
    ("Banks", "Bancorp"), ("Insurance", "Assurance"), ("Retail", "Retail"), ("Energy", "Energy"),
    ("Industrials", "Industries"), ("Utilities", "Utilities"), ("Media", "Media"),
    ("Consumer Goods", "Brands"), ("Real Estate", "Realty Trust"), ("Aerospace", "Aerospace"),
    ("Healthcare", "Health"),
)
_EN_HEADS = (
    "Zor", "Vel", "Quan", "Thal", "Bry", "Kor", "Ner", "Xan", "Ul", "Pry", "Dax", "Mer", "Syl",
    "Cor", "Fen", "Gal", "Hal", "Jor", "Lum", "Ost", "Rav", "Tor", "Vex", "Wyn", "Ael", "Iv",
)
_EN_TAILS = (
    "vane", "tra", "dyne", "ora", "ix", "eon", "ara", "ux", "ent", "ica", "iro", "oth", "ema",
    "yst", "ova", "quel", "dris", "wen",
)
# Well-known real tickers a generated ticker must never take.
_RESERVED_TICKERS = frozenset(
    "AAPL MSFT GOOG GOOGL AMZN META NVDA TSLA BRK JPM BAC WFC XOM CVX JNJ PFE MRK KO PEP WMT "
    "COST HD DIS NFLX INTC AMD IBM ORCL CSCO QCOM TXN ADBE CRM PYPL V MA GS MS C T VZ NKE MCD "
    "SBUX BA CAT GE GM F UBER LYFT ABNB SNAP PINS SHOP SQ BABA JD PDD BIDU NIO TSM ASML SPY QQQ".split()
)

_BROAD_INDICES = (  # (Chinese theme, English theme, rule)
    ("大盘", "Large Cap", "top:50"), ("龙头", "Leaders", "top:100"), ("中盘", "Mid Cap", "rank:50:200"),
    ("小盘", "Small Cap", "rank:150:300"), ("沪市综合", "Shanghai Composite", "board:SH"),
    ("深市综合", "Shenzhen Composite", "board:SZ"), ("成长创业", "ChiNext Growth", "prefix:30"),
    ("科创", "Sci-Tech Innovation", "prefix:688"),
)
_THEME_INDICES = (
    ("红利", "Dividend", ("银行", "煤炭开采", "火力发电", "普钢", "全国地产", "水运")),
    ("消费", "Consumer", ("白酒", "食品", "家用电器", "服饰", "影视音像")),
    ("科技", "Technology", ("半导体", "元器件", "软件服务", "通信设备")),
    ("医药", "Healthcare", ("化学制药", "医疗保健")),
    ("金融", "Financials", ("银行", "证券", "保险")),
    ("周期", "Cyclicals", ("化工原料", "普钢", "小金属", "煤炭开采", "建筑工程")),
    ("新能源车", "New Energy Vehicles", ("汽车整车", "汽车配件", "新型电力", "电气设备")),
    ("高端制造", "Advanced Manufacturing", ("专用机械", "电气设备", "汽车配件")),
)
# The publisher of the global indices: a fictional index provider, named as real ones are.
GLOBAL_INDEX_PUBLISHER = "Meridian Global Indices Ltd."
_GLOBAL_INDICES = (  # (code, name_en, name_zh, calendar, currency, base point)
    ("SGX500", "Grand 500 Index", None, "XNYS", "USD", 1000.0),
    ("SNTX", "Tech Composite Index", None, "XNYS", "USD", 2000.0),
    ("SIND30", "Industrial 30 Index", None, "XNYS", "USD", 10000.0),
    ("SSML2K", "Small Cap 2000 Index", None, "XNYS", "USD", 1000.0),
    ("SHKC", "Harbour Composite Index", "港股综合指数", "XHKG", "HKD", 10000.0),
    ("SHKT", "Harbour Tech Index", "港股科技指数", "XHKG", "HKD", 5000.0),
)
_FUND_STRATEGIES = (  # (Chinese, English, fund_type, invest_type)
    ("成长混合", "Growth Mixed", "混合型", "偏股混合型"), ("价值精选混合", "Value Select Mixed", "混合型", "偏股混合型"),
    ("稳健回报债券", "Steady Return Bond", "债券型", "中长期纯债型"), ("优选股票", "Select Equity", "股票型", "普通股票型"),
    ("新动力混合", "New Momentum Mixed", "混合型", "灵活配置型"), ("货币", "Money Market", "货币市场型", "货币型"),
    ("红利股票", "Dividend Equity", "股票型", "普通股票型"), ("双债增强", "Enhanced Bond", "债券型", "混合债券型"),
    ("量化对冲", "Quant Hedge", "混合型", "灵活配置型"), ("医疗创新股票", "Healthcare Innovation Equity", "股票型", "普通股票型"),
)
_CUSTODIANS = ("琨澜银行", "霁棠银行", "珩曦银行", "沅峤银行")

_STAR_START = dt.date(2019, 7, 22)
_CHINEXT_START = dt.date(2009, 10, 30)
_SIM_START = dt.date(2015, 1, 1)


class Universe:
    def __init__(
        self,
        entities: tuple[Entity, ...],
        index_specs: dict[str, IndexSpec],
        fund_specs: dict[str, FundSpec],
        dual_listings: dict[str, str] | None = None,
    ) -> None:
        codes = [e.code for e in entities]
        duplicated = sorted({c for c in codes if codes.count(c) > 1})
        if duplicated:
            raise ValueError(f"duplicate entity codes in the universe: {duplicated}")
        self.entities = entities
        self.index_specs = index_specs
        self.fund_specs = fund_specs
        self._by_code = {e.code: e for e in entities}
        # H-share code -> A-share code of the same company, and back.
        self.dual_listings = dict(dual_listings or {})
        self._h_of = {a: h for h, a in self.dual_listings.items()}

    def a_share_of(self, code: str) -> str | None:
        """The A-share of the company whose H-share is `code` (None for any other code)."""
        return self.dual_listings.get(code)

    def h_share_of(self, code: str) -> str | None:
        """The H-share of the A-share company `code` (None when it has none)."""
        return self._h_of.get(code)

    def get(self, code: str) -> Entity:
        entity = self._by_code.get(code)
        if entity is None:
            near = self.search(code.split(".")[0])[:3]
            hint = f"; similar codes: {', '.join(e.code for e in near)}" if near else ""
            raise LookupError(
                f"unknown ts_code {code!r}: not an instrument of the synthetic market{hint}. "
                "Use the search tool to look a code up by name (e.g. '600xxx.SH', '00xxx.HK')."
            )
        return entity

    def has(self, code: str) -> bool:
        return code in self._by_code

    def of_class(self, asset_class: str) -> list[Entity]:
        if asset_class not in ASSET_CLASSES:
            raise LookupError(f"unknown asset class {asset_class!r}; expected one of {', '.join(ASSET_CLASSES)}")
        return [e for e in self.entities if e.asset_class == asset_class]

    @cached_property
    def _search_keys(self) -> list[tuple[Entity, str]]:
        return [
            (e, "\x1f".join(filter(None, (e.code.lower(), e.name_en.lower(), (e.name_zh or "").lower()))))
            for e in self.entities
        ]

    def search(self, text: str) -> list[Entity]:
        """Entities whose code or name contains `text` (case-insensitive): exact code first,
        then code prefixes, then name matches, each by code."""
        needle = text.strip().lower()
        if not needle:
            return []
        hits = [e for e, key in self._search_keys if needle in key]

        def rank(e: Entity) -> tuple[int, str]:
            code = e.code.lower()
            return (0 if code == needle else 1 if code.startswith(needle) else 2, e.code)

        return sorted(hits, key=rank)


# --------------------------------------------------------------------------- construction


class _Names:
    """Hands out unique names; a clash draws again instead of silently reusing a name."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def zh_stem(self) -> tuple[str, str]:
        for _ in range(10_000):
            a, b = self.rng.choice(len(_ZH_SYLLABLES), size=2, replace=False)
            zh = _ZH_SYLLABLES[a][0] + _ZH_SYLLABLES[b][0]
            pinyin = (_ZH_SYLLABLES[a][1] + _ZH_SYLLABLES[b][1]).capitalize()
            if zh not in self.used and pinyin not in self.used:  # homophones would clash in English
                self.used.update((zh, pinyin))
                return zh, pinyin
        raise RuntimeError("ran out of Chinese name stems")

    def en_stem(self) -> str:
        for _ in range(10_000):
            stem = str(self.rng.choice(_EN_HEADS)) + str(self.rng.choice(_EN_TAILS))
            if stem not in self.used:
                self.used.add(stem)
                return stem
        raise RuntimeError("ran out of English name stems")


def _weekday_on_or_before(day: dt.date) -> dt.date:
    while day.weekday() >= 5:
        day -= dt.timedelta(days=1)
    return day


def _trading_day(calendar: str, day: dt.date) -> dt.date:
    """`day` moved onto a session: the calendar's when it knows the date, a weekday before."""
    if day < CALENDAR_START:
        return _weekday_on_or_before(day)
    sessions = session_dates(calendar)
    i = bisect.bisect_left(sessions, day)
    return sessions[min(i, len(sessions) - 1)]


def _random_date(rng: np.random.Generator, start: dt.date, end: dt.date) -> dt.date:
    return start + dt.timedelta(days=int(rng.integers(0, (end - start).days + 1)))


def _listing_date(rng: np.random.Generator, earliest: dt.date, calendar: str) -> dt.date:
    """Mostly before the simulation start; about one in six a new listing in 2015..2024."""
    if earliest >= dt.date(2015, 1, 1) or rng.random() < 0.16:
        start = max(earliest, dt.date(2015, 1, 5))
        return _trading_day(calendar, _random_date(rng, start, dt.date(2024, 12, 31)))
    return _trading_day(calendar, _random_date(rng, max(earliest, dt.date(1995, 1, 3)), dt.date(2014, 12, 31)))


def _visibilities(rng: np.random.Generator, count: int) -> list[int]:
    """Every level 0..10 at least once (given count >= 11), the rest skewed towards obscure."""
    if count < len(VISIBILITY_LEVELS):
        raise ValueError(f"need at least {len(VISIBILITY_LEVELS)} entities to cover every visibility level")
    weights = np.array([11.0 - level for level in VISIBILITY_LEVELS])
    rest = rng.choice(len(VISIBILITY_LEVELS), size=count - len(VISIBILITY_LEVELS), p=weights / weights.sum())
    levels = list(VISIBILITY_LEVELS) + [int(v) for v in rest]
    rng.shuffle(levels)
    return levels


def _unique_numbers(rng: np.random.Generator, low: int, high: int, count: int, taken: set[int]) -> list[int]:
    numbers: list[int] = []
    while len(numbers) < count:
        n = int(rng.integers(low, high))
        if n not in taken:
            taken.add(n)
            numbers.append(n)
    return numbers


# Code prefixes of each A-share board (the exchanges' allocation): a code matches its board.
BOARD_PREFIXES = {("SH", "主板"): ("600", "601", "603", "605"), ("SH", "科创板"): ("688",),
                  ("SZ", "主板"): ("000", "001", "002", "003"), ("SZ", "创业板"): ("300", "301")}
GROWTH_BOARDS = frozenset({"科创板", "创业板"})
FINANCIAL_CN = ("银行", "证券", "保险")  # the first industries of _CN_INDUSTRIES


def _sh_main_board_number(number: int, taken: set[int]) -> int:
    """A drawn Shanghai main-board number moved onto an allocated prefix (600/601/603/605) when it
    fell on an unused one (602, 604, 606), keeping its last three digits where free."""
    if f"{number:06d}"[:3] in BOARD_PREFIXES[("SH", "主板")]:
        return number
    for prefix in (603, 605, 601, 600):
        for offset in range(1000):
            moved = prefix * 1000 + (number + offset) % 1000
            if moved not in taken:
                taken.discard(number)
                taken.add(moved)
                return moved
    raise ValueError("the Shanghai main board has no free code left")


def _cn_equities(seed: int, names: _Names) -> list[Entity]:
    rng = generator(seed, "universe", "cn_equity")
    boards = (  # (code range, suffix, exchange, market, earliest listing, count)
        ((600000, 606000), "SH", "SSE", "主板", dt.date(1995, 1, 3), 120),
        ((688000, 688999), "SH", "SSE", "科创板", _STAR_START, 40),
        ((1, 4000), "SZ", "SZSE", "主板", dt.date(1995, 1, 3), 90),
        ((300001, 301600), "SZ", "SZSE", "创业板", _CHINEXT_START, 50),
    )
    rows = []
    taken: set[int] = set()
    for (low, high), suffix, exchange, market, earliest, count in boards:
        for number in _unique_numbers(rng, low, high, count, taken):
            if suffix == "SH" and market == "主板":
                number = _sh_main_board_number(number, taken)
            rows.append((f"{number:06d}.{suffix}", exchange, market, earliest))
    visibility = _visibilities(rng, len(rows))
    entities = []
    for (code, exchange, market, earliest), vis in zip(rows, visibility):
        drawn = int(rng.integers(len(_CN_INDUSTRIES)))
        if market in GROWTH_BOARDS and _CN_INDUSTRIES[drawn][0] in FINANCIAL_CN:
            # Banks, brokers and insurers list on the main boards, never on ChiNext or STAR.
            drawn = len(FINANCIAL_CN) + drawn % (len(_CN_INDUSTRIES) - len(FINANCIAL_CN))
        industry, suffix_zh, suffix_en = _CN_INDUSTRIES[drawn]
        zh, pinyin = names.zh_stem()
        name_zh = zh + suffix_zh
        entities.append(
            Entity(
                code=code, name=name_zh, name_en=f"{pinyin} {suffix_en}", name_zh=name_zh,
                asset_class="cn_equity", exchange=exchange, calendar="XSHG", currency="CNY",
                industry=industry, list_date=_listing_date(rng, earliest, "XSHG"), visibility=vis,
                market=market,
            )
        )
    return entities


def _hk_equities(seed: int, names: _Names) -> list[Entity]:
    rng = generator(seed, "universe", "hk_equity")
    taken: set[int] = set()
    rows = [(n, "Main") for n in _unique_numbers(rng, 1, 4000, 100, taken)]
    rows += [(n, "GEM") for n in _unique_numbers(rng, 8001, 8700, 12, taken)]
    visibility = _visibilities(rng, len(rows))
    entities = []
    for (number, market), vis in zip(rows, visibility):
        industry, suffix_zh, suffix_en = _HK_INDUSTRIES[int(rng.integers(len(_HK_INDUSTRIES)))]
        zh, pinyin = names.zh_stem()
        group = "集团" if rng.random() < 0.5 else "控股"
        name_zh = zh + suffix_zh + group
        earliest = dt.date(1999, 11, 25) if market == "GEM" else dt.date(1995, 1, 3)
        entities.append(
            Entity(
                code=f"{number:05d}.HK", name=name_zh,
                name_en=f"{pinyin} {suffix_en} {'Group' if group == '集团' else 'Holdings'}",
                name_zh=name_zh, asset_class="hk_equity", exchange="HKEX", calendar="XHKG",
                currency="HKD", industry=industry, list_date=_listing_date(rng, earliest, "XHKG"),
                visibility=vis, market=market,
            )
        )
    return entities


def _ticker(stem: str, taken: set[str], rng: np.random.Generator) -> str:
    letters = [c for c in stem.upper() if c.isalpha()]
    consonants = [letters[0]] + [c for c in letters[1:] if c not in "AEIOU"]
    for candidate in ("".join(consonants[:4]), "".join(letters[:4]), "".join(consonants[:3]) + letters[-1]):
        if len(candidate) >= 3 and candidate not in taken and candidate not in _RESERVED_TICKERS:
            taken.add(candidate)
            return candidate
    while True:
        candidate = letters[0] + "".join(chr(ord("A") + int(i)) for i in rng.integers(0, 26, size=3))
        if candidate not in taken and candidate not in _RESERVED_TICKERS:
            taken.add(candidate)
            return candidate


def _us_equities(seed: int, names: _Names) -> list[Entity]:
    rng = generator(seed, "universe", "us_equity")
    count = 220
    visibility = _visibilities(rng, count)
    taken: set[str] = set()
    entities = []
    for vis in visibility:
        industry, suffix = _US_INDUSTRIES[int(rng.integers(len(_US_INDUSTRIES)))]
        stem = names.en_stem()
        name_en = f"{stem} {suffix}"
        exchange = "NASDAQ" if rng.random() < 0.55 else "NYSE"
        entities.append(
            Entity(
                code=_ticker(stem, taken, rng), name=name_en, name_en=name_en, name_zh=None,
                asset_class="us_equity", exchange=exchange, calendar="XNYS", currency="USD",
                industry=industry, list_date=_listing_date(rng, dt.date(1995, 1, 3), "XNYS"),
                visibility=vis, market=exchange,
            )
        )
    return entities


def _size_order(seed: int, cn: list[Entity]) -> list[Entity]:
    """A-shares by a size score: visible companies tend to be large, with noise."""
    rng = generator(seed, "universe", "size_order")
    noise = rng.normal(0.0, 1.5, size=len(cn))
    scores = [(e.visibility + n, e.code) for e, n in zip(cn, noise)]
    order = sorted(range(len(cn)), key=lambda i: scores[i], reverse=True)
    return [cn[i] for i in order]


def _indices(seed: int, names: _Names, cn: list[Entity]) -> tuple[list[Entity], dict[str, IndexSpec]]:
    rng = generator(seed, "universe", "index")
    by_size = _size_order(seed, cn)
    rows: list[tuple[str, str, str, str, str, str, str, str, float, tuple[str, ...]]] = []
    taken: set[int] = set()

    def members_for(rule: str) -> tuple[str, ...]:
        kind, _, arg = rule.partition(":")
        if kind == "top":
            return tuple(e.code for e in by_size[: int(arg)])
        if kind == "rank":
            lo, hi = (int(x) for x in arg.split(":"))
            return tuple(e.code for e in by_size[lo:hi])
        if kind == "board":
            return tuple(e.code for e in by_size if e.code.endswith("." + arg))
        if kind == "prefix":
            return tuple(e.code for e in by_size if e.code.startswith(arg))
        raise ValueError(f"unknown index rule {rule!r}")

    for theme_zh, theme_en, rule in _BROAD_INDICES:
        zh, pinyin = names.zh_stem()
        sz = rule in ("board:SZ", "prefix:30")
        number = _unique_numbers(rng, 399001, 399999, 1, taken)[0] if sz else _unique_numbers(rng, 1, 999, 1, taken)[0]
        code = f"{number:06d}.SZ" if sz else f"{number:06d}.SH"
        rows.append((code, f"{zh}{theme_zh}指数", f"{pinyin} {theme_en} Index", "规模指数", "SZSE" if sz else "CSI",
                     "深证" if sz else "中证", "XSHG", "CNY", 1000.0, members_for(rule)))
    for theme_zh, theme_en, industries in _THEME_INDICES:
        zh, pinyin = names.zh_stem()
        number = _unique_numbers(rng, 1, 999, 1, taken)[0]
        members = tuple(e.code for e in by_size if e.industry in industries)[:60]
        rows.append((f"{number:06d}.SH", f"{zh}{theme_zh}指数", f"{pinyin} {theme_en} Index", "主题指数", "CSI",
                     "中证", "XSHG", "CNY", 1000.0, members))
    for i, (industry, suffix_zh, suffix_en) in enumerate(_CN_INDUSTRIES):
        members = tuple(e.code for e in by_size if e.industry == industry)
        if not members:
            continue
        rows.append((f"{801010 + 10 * i}.SI", f"{industry}行业指数", f"{suffix_en} Industry Index",
                     "行业指数", "SW", "申万", "XSHG", "CNY", 1000.0, members))
    entities: list[Entity] = []
    specs: dict[str, IndexSpec] = {}
    visibility = _visibilities(rng, len(rows) + len(_GLOBAL_INDICES))
    for row, vis in zip(rows, visibility):
        code, name_zh, name_en, category, market, publisher, calendar, currency, base_point, members = row
        base_date = _weekday_on_or_before(_random_date(rng, dt.date(2002, 1, 1), dt.date(2013, 12, 31)))
        if code.startswith("688") or _all_star_members(members):
            base_date = _trading_day(calendar, dt.date(2019, 12, 31))
        entities.append(
            Entity(code=code, name=name_zh, name_en=name_en, name_zh=name_zh, asset_class="index",
                   exchange=market, calendar=calendar, currency=currency, industry=category,
                   list_date=base_date, visibility=vis, market=market)
        )
        specs[code] = IndexSpec(code, category, publisher, base_date, base_point, members, "float_mv")
    for (code, name_en, name_zh, calendar, currency, base_point), vis in zip(
        _GLOBAL_INDICES, visibility[len(rows):]
    ):
        base_date = _weekday_on_or_before(_random_date(rng, dt.date(1990, 1, 1), dt.date(2010, 12, 31)))
        entities.append(
            Entity(code=code, name=name_zh or name_en, name_en=name_en, name_zh=name_zh, asset_class="index",
                   exchange="GLOBAL", calendar=calendar, currency=currency, industry="海外指数",
                   list_date=base_date, visibility=vis, market="GLOBAL")
        )
        specs[code] = IndexSpec(code, "海外指数", GLOBAL_INDEX_PUBLISHER, base_date, base_point, (), "")
    return entities, specs


def _all_star_members(members: tuple[str, ...]) -> bool:
    """An index made only of STAR-market stocks cannot have a base date before that board."""
    return bool(members) and all(m.startswith("688") for m in members)


def _index_theme(index: Entity) -> tuple[str, str]:
    """The theme words of an index name ("琨澜红利指数" -> "红利"), for naming funds on it."""
    assert index.name_zh is not None
    if index.industry == "行业指数":
        return index.name_zh.removesuffix("行业指数"), index.name_en.removesuffix(" Industry Index")
    return index.name_zh[2:].removesuffix("指数"), index.name_en.split(" ", 1)[1].removesuffix(" Index")


def _funds(seed: int, names: _Names, indices: list[Entity], index_specs: dict[str, IndexSpec]) -> tuple[list[Entity], dict[str, FundSpec]]:
    rng = generator(seed, "universe", "fund")
    companies = [names.zh_stem() for _ in range(14)]
    trackable = [e for e in indices if index_specs[e.code].members]
    taken: set[int] = set()
    rows = []
    for _ in range(50):
        tracked = trackable[int(rng.integers(len(trackable)))]
        on_sh = rng.random() < 0.6
        number = _unique_numbers(rng, 510000, 516999, 1, taken)[0] if on_sh else _unique_numbers(rng, 159001, 159999, 1, taken)[0]
        rows.append(("etf", number, on_sh, tracked))
    for _ in range(62):
        low, high = (160100, 169999) if rng.random() < 0.4 else (1000, 19999)
        rows.append(("of", _unique_numbers(rng, low, high, 1, taken)[0], False, None))
    visibility = _visibilities(rng, len(rows))
    entities: list[Entity] = []
    specs: dict[str, FundSpec] = {}
    used_names: set[str] = set()
    for (kind, number, on_sh, tracked), vis in zip(rows, visibility):
        company_zh, company_en = companies[int(rng.integers(len(companies)))]
        if kind == "etf":
            theme_zh, theme_en = _index_theme(tracked)
            code = f"{number:06d}.{'SH' if on_sh else 'SZ'}"
            name_zh = f"{company_zh}{theme_zh}ETF"
            name_en = f"{company_en} {theme_en} ETF"
            fund_type, invest_type, exchange, market = "股票型", "被动指数型", "SSE" if on_sh else "SZSE", "E"
            earliest = dt.date(2006, 1, 4)
        else:
            theme_zh, theme_en, fund_type, invest_type = _FUND_STRATEGIES[int(rng.integers(len(_FUND_STRATEGIES)))]
            code = f"{number:06d}.OF"
            name_zh = f"{company_zh}{theme_zh}"
            name_en = f"{company_en} {theme_en} Fund"
            exchange, market, earliest = "OTC", "O", dt.date(2003, 1, 6)
        serial = 1
        base_zh, base_en = name_zh, name_en
        while name_zh in used_names:
            serial += 1
            share_class = "ABCDEFGH"[serial - 1]
            name_zh, name_en = f"{base_zh}{share_class}", f"{base_en} {share_class}"
        used_names.add(name_zh)
        list_date = _listing_date(rng, earliest, "XSHG")
        if tracked is not None:
            list_date = max(list_date, _trading_day("XSHG", index_specs[tracked.code].base_date + dt.timedelta(days=30)))
        entities.append(
            Entity(code=code, name=name_zh, name_en=name_en, name_zh=name_zh, asset_class="fund",
                   exchange=exchange, calendar="XSHG", currency="CNY", industry=fund_type,
                   list_date=list_date, visibility=vis, market=market)
        )
        m_fee = {"股票型": 1.2, "混合型": 1.5, "债券型": 0.7, "货币市场型": 0.33}[fund_type]
        if kind == "etf":
            m_fee = 0.5
        specs[code] = FundSpec(
            code=code, management=f"{company_zh}基金", custodian=_CUSTODIANS[int(rng.integers(len(_CUSTODIANS)))],
            fund_type=fund_type, invest_type=invest_type,
            benchmark_index=tracked.code if tracked is not None else None, m_fee=m_fee,
            c_fee=0.1 if kind == "etf" else 0.25, found_date=list_date - dt.timedelta(days=int(rng.integers(14, 60))),
        )
    return entities, specs


# A-share industries whose large companies list H-shares too, and their Hong Kong industry.
_AH_INDUSTRIES = {"银行": "金融", "证券": "金融", "保险": "金融", "煤炭开采": "能源", "火力发电": "公用事业",
                  "新型电力": "公用事业", "水运": "物流", "建筑工程": "工业", "普钢": "工业", "汽车整车": "工业",
                  "专用机械": "工业", "化工原料": "工业", "化学制药": "医疗保健", "全国地产": "地产"}
AH_PAIRS = 14


def _h_shares(seed: int, cn: list[Entity], hk: list[Entity]) -> tuple[list[Entity], dict[str, str]]:
    """The H-shares of the largest, best-known A-share companies of the industries that dual-list
    (`_AH_INDUSTRIES`, main boards, listed by 2020): each on its own Hong Kong code, listed on or
    after its A-share, named as its company, reporting in CNY with a December year."""
    rng = generator(seed, "universe", "ah")
    candidates = [e for e in cn if e.market == "主板" and e.industry in _AH_INDUSTRIES and e.list_date <= dt.date(2020, 12, 31)]
    noise = rng.normal(0.0, 1.5, len(candidates))
    ranked = sorted(range(len(candidates)), key=lambda i: (-(candidates[i].visibility + noise[i]), candidates[i].code))
    chosen = sorted((candidates[i] for i in ranked[:AH_PAIRS]), key=lambda e: e.code)
    taken = {int(e.code.split(".")[0]) for e in hk}
    shares, pairs = [], {}
    for a in chosen:
        number = _unique_numbers(rng, 1000, 4000, 1, taken)[0]
        visibility = max(0, a.visibility - int(rng.integers(0, 3)))
        listed = _trading_day("XHKG", _random_date(rng, max(a.list_date, dt.date(1999, 1, 4)), dt.date(2022, 12, 30)))
        h = Entity(code=f"{number:05d}.HK", name=a.name, name_en=a.name_en, name_zh=a.name_zh, asset_class="hk_equity",
                   exchange="HKEX", calendar="XHKG", currency="HKD", industry=_AH_INDUSTRIES[a.industry],
                   list_date=max(listed, a.list_date), visibility=visibility, market="Main", fy_end_month=12,
                   report_currency="CNY")
        shares.append(h)
        pairs[h.code] = a.code
    return shares, pairs


def _with_reporting_profile(seed: int, entity: Entity) -> Entity:
    """A Hong Kong or US company with the month its fiscal year ends in and its reporting currency."""
    return dataclasses.replace(
        entity, fy_end_month=fiscal_year_end_month(seed, entity.code, entity.asset_class, entity.industry),
        report_currency=reporting_currency(seed, entity.code, entity.asset_class, entity.industry, entity.currency),
    )


def build_universe(seed: int) -> Universe:
    names = _Names(generator(seed, "universe", "names"))
    cn = _cn_equities(seed, names)
    hk = _hk_equities(seed, names)
    us = _us_equities(seed, names)
    indices, index_specs = _indices(seed, names, cn)
    funds, fund_specs = _funds(seed, names, indices, index_specs)
    h_shares, pairs = _h_shares(seed, cn, hk)
    hk = [_with_reporting_profile(seed, e) for e in hk]
    us = [_with_reporting_profile(seed, e) for e in us]
    return Universe(tuple(cn + hk + h_shares + us + indices + funds), index_specs, fund_specs, pairs)
