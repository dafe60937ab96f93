"""Entities named as people name them (issue 39): every name the data service knows for every
entity, which names fit exactly one of them, and which questions name their entity without a code.

- `load_names(call, entities)` reads the names through the service's own tools, whatever market is
  behind them: the `search` tool's short and English names (the names the offline web prints), the
  listing tools' short, full and English names (`stock_basic`, `hk_basic`, `us_basic`,
  `index_basic`, `fund_basic`) and the former names a name-history tool records (`namechange`, and
  any other tool named `*namechange`). A tool the service lacks or refuses is skipped.
- `NameBook.fits(name)`: the entities a name fits — one of their names equals it, contains it or
  is contained in it, compared case- and width-insensitively (a search for 骞澜科技 returns
  骞澜科技ETF too). A name is usable alone only when it fits exactly its own entity.
- `naming_for(qid, ...)`: whether a question names its entity without a code (a deterministic
  share of the eligible questions, spread by the qid's hash over families, bands and languages),
  and by which name: its short name, the English name of a Chinese company (the English text; the
  Chinese one keeps the short name), or a former name ("the company formerly named X" / "原名X的公司").
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, Mapping, Sequence

from livesearch_pipeline.construction.models import Candidate, EntityInfo, Naming

# Listing tools and the fields of theirs that name an instrument.
LISTING_NAMES: dict[str, tuple[tuple[str, str], ...]] = {
    "stock_basic": (("name", "short"), ("fullname", "full"), ("enname", "english")),
    "hk_basic": (("name", "short"), ("fullname", "full"), ("enname", "english")),
    "us_basic": (("name", "short"), ("enname", "english")),
    "index_basic": (("name", "short"), ("fullname", "full")),
    "fund_basic": (("name", "short"),),
}
SEARCH_TOOL = "search"
SEARCH_NAMES = (("name", "short"), ("name_en", "english"))
NAME_HISTORY = re.compile(r"(?:^|_)namechange$")
INSTRUMENT_CLASSES = ("cn_equity", "hk_equity", "us_equity", "index", "fund")
# The share of eligible questions (an instrument whose name fits it alone, in each language its
# texts are written in) that name their entity without a code.
CODE_FREE_PERCENT = 55
# Of those, the share named by a former name (where one is recorded) and by the English name of a
# Chinese company (its English text).
FORMER_PERCENT = 30
ENGLISH_PERCENT = 50
# Shorter names are not compared by containment ("AB" is in too many names to mean anything).
MIN_CONTAINED = 2

Call = Callable[[str, dict[str, Any]], Awaitable[list[dict[str, Any]]]]


def fold(name: str) -> str:
    """A name as a search compares it: NFKC (full-width to half-width), case-folded, without spaces."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", name).casefold())


@dataclass(frozen=True)
class KnownName:
    code: str
    name: str
    kind: str  # short | full | english | former


class NameBook:
    """Every name the service knows, by entity."""

    def __init__(self, names: Iterable[KnownName]) -> None:
        by_code: dict[str, dict[tuple[str, str], KnownName]] = defaultdict(dict)
        for n in names:
            if n.name and n.name.strip():
                by_code[n.code].setdefault((n.kind, n.name.strip()), KnownName(n.code, n.name.strip(), n.kind))
        self.by_code = {code: list(found.values()) for code, found in sorted(by_code.items())}
        self._folded = sorted({(fold(n.name), n.code) for ns in self.by_code.values() for n in ns})

    def names_of(self, code: str, kind: str | None = None) -> list[str]:
        return [n.name for n in self.by_code.get(code, ()) if kind is None or n.kind == kind]

    @functools.lru_cache(maxsize=None)
    def fits(self, name: str) -> frozenset[str]:
        """The entities `name` fits: one of their names equals it, contains it, or (when at least
        MIN_CONTAINED characters) is contained in it."""
        wanted = fold(name)
        if not wanted:
            return frozenset()
        return frozenset(code for known, code in self._folded
                         if known == wanted or wanted in known or (len(known) >= MIN_CONTAINED and known in wanted))

    def alone(self, name: str, code: str) -> bool:
        """Whether `name` fits `code` and no other entity."""
        return self.fits(name) == frozenset({code})


def book_of_entities(entities: Iterable[EntityInfo]) -> list[KnownName]:
    """The names the coverage listing gives (the visibility scorer's): each entity's display name."""
    return [KnownName(e.code, e.name, "short") for e in entities]


async def load_names(call: Call, entities: Sequence[EntityInfo], tools: Iterable[str] = ()) -> NameBook:
    """Every name the service knows for `entities` (module doc); `call(tool, args)` returns a tool's
    records and raises on a tool the service lacks; `tools` are the service's tool names (for the
    name-history tools), defaulting to `namechange`."""
    names = book_of_entities(entities)
    # Every instrument the listing tools list counts, beyond those given: a name is used alone only
    # when no entity of the service answers to it.
    equities = {e.code for e in entities if e.asset_class in ("cn_equity", "hk_equity", "us_equity")}

    async def records(tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            return await call(tool, args)
        except Exception:  # noqa: BLE001 - a service without the tool, or refusing it, gives no names
            return []

    # A company listed in Shanghai or Shenzhen and in Hong Kong (`stock_basic.h_code`,
    # `hk_basic.a_code`): one company, so a name of either listing fits both (its former names too,
    # which `namechange` records for the A-share only).
    partners: dict[str, str] = {}
    for tool, fields in LISTING_NAMES.items():
        for row in await records(tool, {}):
            code = row.get("ts_code")
            if code:
                names += [KnownName(code, str(row[f]), kind) for f, kind in fields if row.get(f)]
                if tool in ("stock_basic", "hk_basic", "us_basic"):
                    equities.add(code)
                partner = row.get("h_code") or row.get("a_code")
                if partner:
                    partners[code] = str(partner)
    for e in entities:
        for row in await records(SEARCH_TOOL, {"keyword": e.code}):
            if row.get("ts_code") == e.code:
                names += [KnownName(e.code, str(row[f]), kind) for f, kind in SEARCH_NAMES if row.get(f)]
    history = sorted({t for t in tools if NAME_HISTORY.search(t)} or {"namechange"})
    for tool in history:
        for code in sorted(equities):
            rows = await records(tool, {"ts_code": code})
            # A superseded name: one whose period ended (a later name took over).
            names += [KnownName(code, str(r["name"]), "former") for r in rows if r.get("name") and r.get("end_date")]
    names += [KnownName(partners[n.code], n.name, n.kind) for n in list(names) if n.code in partners]
    return NameBook(names)


def _hash(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16)


def _has_cjk(text: str) -> bool:
    return bool(re.search(r"[\u3400-\u9fff]", text))


def handles(code: str, display: str, book: NameBook) -> dict[str, str]:
    """The names a question may give `code` alone, by kind: its display (short) name, its English
    name (when its short name is not English), a former name; each only when it fits the entity
    alone (`NameBook.alone`)."""
    out: dict[str, str] = {}
    if book.alone(display, code):
        out["short"] = display
    # The plain English name (the one pages print), not the legal one ("… Co., Ltd."): the shortest.
    english = next((n for n in sorted(book.names_of(code, "english"), key=lambda n: (len(n), n))
                    if n != display and not _has_cjk(n) and book.alone(n, code)), None)
    if english is not None and _has_cjk(display):
        out["english"] = english
    current = set(book.names_of(code, "short"))
    former = next((n for n in book.names_of(code, "former") if n not in current and book.alone(n, code)), None)
    if former is not None:
        out["former"] = former
    return out


def _naming(kind: str, name: str, zh_name: str | None) -> Naming:
    if kind == "former":
        return Naming(kind=kind, name=name, en=f"the company formerly named {name}", zh=f"原名{name}的公司")
    # An index's or a fund's English name takes the article ("the Jinhe Consumer Index"), a company's none.
    article = "the " if kind == "english" and _is_product(name) else ""
    return Naming(kind=kind, name=name, en=f"{article}{name}", zh=zh_name)


def _is_product(name: str) -> bool:
    return bool(re.search(r"\b(?:Index|ETF|Fund|LOF)\b", name))


def naming_for(qid: str, code: str, display: str, book: NameBook, *, chinese: bool) -> Naming | None:
    """How a question names its entity without a code, or None when it gives the code: a
    CODE_FREE_PERCENT share (by the qid's hash) of the questions whose entity has a name fitting it
    alone in each of its texts' languages (`chinese`: it has a Chinese text, which names it in
    Chinese: its short name or a former name)."""
    found = handles(code, display, book)
    zh_name = found["short"] if "short" in found and _has_cjk(found["short"]) else None
    options = [kind for kind in ("former", "english", "short") if kind in found
               and (kind == "former" or not chinese or zh_name is not None)]
    if not options or _hash("named", qid) % 100 >= CODE_FREE_PERCENT:
        return None
    pick = _hash("kind", qid) % 100
    if "former" in options and (pick < FORMER_PERCENT or options == ["former"]):
        return _naming("former", found["former"], None)
    rest = [kind for kind in options if kind != "former"]
    kind = "english" if "english" in rest and (pick % 100) >= 100 - ENGLISH_PERCENT else rest[-1]
    return _naming(kind, found[kind], zh_name)


# Families whose texts name the instruments by code on purpose (the choices of a pick are its
# answers) or name the stock their own way (`named_high`).
KEEP_CODES = ("family:three_indices", "family:named_high")


def with_naming(c: Candidate, book: NameBook, chinese: Callable[[Candidate], bool]) -> Candidate:
    """The candidate with the naming of its entity (and of the instrument it is compared with) when
    its question goes without a code (`naming_for`); unchanged otherwise. Both entities of a
    comparison go without a code, or neither."""
    if c.asset_class not in INSTRUMENT_CLASSES or c.facts.anchor.startswith(KEEP_CODES):
        return c
    zh = chinese(c)
    naming = naming_for(c.qid, c.entity, c.entity_name, book, chinese=zh)
    if naming is None:
        return c
    update: dict[str, Any] = {"named_as": naming}
    if c.facts.other_entity:
        other = naming_for(c.qid, c.facts.other_entity, c.facts.other_entity_name or "", book, chinese=zh)
        if other is None:
            return c
        update["other_named_as"] = other
    return c.model_copy(update={"facts": c.facts.model_copy(update=update)})


# --------------------------------------------------------------------------- reading texts


def code_mentions(text: str, code: str) -> bool:
    """Whether a text gives `code` (or its bare ticker, 600123 for 600123.SH)."""
    ticker = code.split(".")[0]
    return bool(re.search(rf"(?<![0-9A-Za-z]){re.escape(code)}(?![0-9A-Za-z])", text)
                or re.search(rf"(?<![0-9A-Za-z.]){re.escape(ticker)}(?![0-9A-Za-z])", text))


def fitting_entities(text: str, code: str, book: NameBook) -> set[str]:
    """The other entities a code-free text's naming of `code` also fits: for each name of `code` the
    text holds, the entities that name fits besides `code` (empty when the text names it alone)."""
    others: set[str] = set()
    folded = fold(text)
    for name in {n for n in book.names_of(code) if fold(n) and fold(n) in folded}:
        others |= set(book.fits(name)) - {code}
    return others


def service_names(day: Any, seed: int | None = None) -> NameBook:
    """The NameBook of the embedded data service at `day` (for the benchmarks and the tests)."""
    import anyio

    from livesearch_pipeline.construction.sampling import CLASS_CALENDAR
    from livesearch_pipeline.dataservice.catalog import ServiceConfig
    from livesearch_pipeline.dataservice.server import DataService

    config = ServiceConfig(clock=day) if seed is None else ServiceConfig(clock=day, seed=seed)
    service = DataService(config=config)
    rows = service.call("entity_visibility", {})["items"]
    entities = [EntityInfo(code=r["ts_code"], name=r["name"], asset_class=r["asset_class"], visibility=r["visibility"],
                           calendar=CLASS_CALENDAR.get(r["asset_class"])) for r in rows]

    async def call(tool: str, args: Mapping[str, Any]) -> list[dict[str, Any]]:
        return service.call(tool, dict(args))["items"]

    return anyio.run(lambda: load_names(call, entities, [t.name for t in service.catalog.tools]))
