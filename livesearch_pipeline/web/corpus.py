"""What an offline web is: its configuration and identity, its pages, and the records they print.

A web is a pure function of its `CorpusConfig` (market seed, clock, history window, the part of the
market it covers, how far back each entity's monthly quote history reaches): its `identity` names
it in the index and the manifest, and an opaque digest of it marks each page's head. Which pages
exist and what they say is web/pages.py's job; web/generate.py yields them all in a fixed order.
`record_key` names the records a page prints (`Page.records`), which the evidence map
(web/evidence.py) matches a question's selected records against.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import Any

from livesearch_pipeline.core.extract import RESTATED
from livesearch_pipeline.dataservice.market import DEFAULT_SEED

CORPUS_VERSION = "3"


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
    # (entity code, "YYYY-MM"): the earliest month whose quote history the exchange keeps a
    # monthly page of, for entities whose questions need it (web/needs.py derives it from the
    # pool and D's gold); every other entity gets its last RECENT_HISTORY_MONTHS months.
    history_from: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not 1 <= self.history_sessions <= 400:
            raise WebCorpusError(f"history_sessions must be between 1 and 400, got {self.history_sessions}")

    @property
    def identity_digest(self) -> str:
        """A short, opaque digest of the identity: the machine-readable marker in each page's head."""
        return hashlib.sha256(self.identity.encode()).hexdigest()[:16]

    @property
    def identity(self) -> str:
        part = ""
        if self.entities is not None or self.market_tools is not None or self.tools is not None:
            digest = hashlib.sha256(repr((self.entities, self.market_tools, self.tools)).encode()).hexdigest()[:12]
            part = f" part={digest}"
        months = ""
        if self.history_from:
            months = " months=" + hashlib.sha256(repr(sorted(self.history_from)).encode()).hexdigest()[:12]
        return (f"livesearch-offline-web/{CORPUS_VERSION} market-seed={self.seed} clock={self.clock.isoformat()} "
                f"history={self.history_sessions}{part}{months}")


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
    # The records whose figures the page prints, as `record_key`s: what the evidence map matches
    # a question's selected records against (web/evidence.py). Provenance, never shown.
    records: tuple[str, ...] = ()
    # Whether the search engine has indexed the page. A page it has not crawled is still served at
    # its URL and linked from the entity's company page: found by browsing, not by searching.
    indexed: bool = True

    def __reduce__(self) -> tuple:
        # Pickled as its fields (from a worker process), not as a frozen dataclass' state dict.
        return type(self), tuple([getattr(self, name) for name in self.__slots__])


def record_key(tool: str, subject: str | None, time_key: Any, revision: Any = None) -> str:
    """The identity of one record (or one time key's records) of a tool for an entity or a
    market series: `tool|subject|time key`; a restated version of a period (issue 39: its
    `update_flag` "1", a later report's comparative) `tool|subject|time key|restated`, the
    first-reported one keeping the plain key."""
    key = f"{tool}|{subject or ''}|{'' if time_key is None else time_key}"
    return f"{key}|restated" if revision == RESTATED else key
