"""The names of the synthetic market's companies over time (issue 40): one name per company on any
day, the same in every tool, page and question.

About a quarter of the A-share companies were listed under a plainer name ("篁瑭科技", "Huangtang
Technology") and renamed once, on a session between a year after listing and a fixed last date
(`RENAME_LATEST`, not the calendar's horizon, so extending the calendar moves no rename); the
universe holds each company's final name. A rename whose session the calendar does not reach yet
is not in the history: the listing name is still in effect. An H-share carries its A-share
company's names (the same company); every other instrument keeps one name.

Every surface asks `Names.on(code, day)` for the instrument as it was named that day: the tools
at their clock (`stock_basic`, `namechange`, `search`, the visibility list construction names
questions from, records that print a name), the web at each page's date ("formerly …" where
`namechange` records an earlier name). Before this module the universe's final name served
`search` while `stock_basic` and `namechange` served the listing name, so a company renamed after
the clock had two names at once (000007.SZ was 篁瑭电子 in `search` and 篁瑭科技 in `stock_basic`).
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
from dataclasses import dataclass
from typing import Any

from livesearch_pipeline.core.calendars import session_dates
from livesearch_pipeline.dataservice.market.reporting import announcement_day
from livesearch_pipeline.dataservice.market.rng import SIMULATION_END, generator

RENAME_LATEST = SIMULATION_END  # renames are drawn up to this fixed date, whatever the calendar's span
RENAME_SHARE = 0.25


@dataclass(frozen=True)
class Spell:
    """One name of a company and the first day it was used."""

    name: str  # the short name (Chinese for a Chinese company)
    name_en: str
    name_zh: str | None
    start: dt.date
    reason: str  # Tushare's change_reason: "其他" for the listing name, "改名" for a rename

    @property
    def ann_date(self) -> dt.date:
        """The day the rename was announced (three sessions before it took effect)."""
        return announcement_day("XSHG", self.start - dt.timedelta(days=3))


class Names:
    def __init__(self, market: Any) -> None:
        self.market = market
        self._histories: dict[str, tuple[Spell, ...]] = {}
        self._starts: dict[str, list[dt.date]] = {}
        self._named: dict[tuple[str, int], Any] = {}

    def history(self, code: str) -> tuple[Spell, ...]:
        """Every name of the instrument the calendar reaches, oldest first."""
        cached = self._histories.get(code)
        if cached is None:
            cached = self._histories[code] = self._build(code)
        return cached

    def _index_on(self, code: str, day: dt.date) -> int:
        starts = self._starts.get(code)
        if starts is None:
            starts = self._starts[code] = [s.start for s in self.history(code)]
        return max(0, bisect.bisect_right(starts, day) - 1)

    def spell_on(self, code: str, day: dt.date) -> Spell:
        """The name in effect on `day` (the listing name before the listing)."""
        return self.history(code)[self._index_on(code, day)]

    def on(self, code: str, day: dt.date):
        """The instrument as it was named on `day` (an `Entity` with that day's names)."""
        key = (code, self._index_on(code, day))
        named = self._named.get(key)
        if named is None:
            entity = self.market.universe.get(code)
            spell = self.history(code)[key[1]]
            named = entity if (spell.name, spell.name_en) == (entity.name, entity.name_en) else dataclasses.replace(
                entity, name=spell.name, name_en=spell.name_en, name_zh=spell.name_zh)
            self._named[key] = named
        return named

    def former(self, code: str, day: dt.date) -> tuple[Spell, ...]:
        """The names used before the one in effect on `day`, newest first."""
        history = self.history(code)
        current = self.spell_on(code, day)
        return tuple(reversed([s for s in history if s.start < current.start]))

    def search(self, text: str, day: dt.date) -> list[Any]:
        """Instruments whose code, current name or a former name (as of `day`) contains `text`,
        case-insensitive, named as on `day`: the exact code first, then code prefixes, then names."""
        needle = text.strip().lower()
        if not needle:
            return []
        hits = []
        for entity in self.market.universe.entities:
            spells = [s for s in self.history(entity.code) if s.start <= day] or [self.history(entity.code)[0]]
            keys = [entity.code.lower()] + [k.lower() for s in spells for k in (s.name_en, s.name_zh or "") if k]
            if any(needle in k for k in keys):
                hits.append(self.on(entity.code, day))

        def rank(e: Any) -> tuple[int, str]:
            code = e.code.lower()
            return (0 if code == needle else 1 if code.startswith(needle) else 2, e.code)

        return sorted(hits, key=rank)

    def _build(self, code: str) -> tuple[Spell, ...]:
        universe = self.market.universe
        company = universe.a_share_of(code)
        if company is not None:
            return self.history(company)  # an H-share: its company's names
        entity = universe.get(code)
        final = Spell(entity.name, entity.name_en, entity.name_zh, entity.list_date, "其他")
        if entity.asset_class != "cn_equity":
            return (final,)
        rng = generator(self.market.seed, "namechange", entity.code)
        if rng.uniform() >= RENAME_SHARE:
            return (final,)
        plainer = "实业" if entity.name.endswith("科技") else "科技"
        stem_en = entity.name_en.split(" ")[0]
        listing = Spell(entity.name[:2] + plainer, f"{stem_en} {'Industrial' if plainer == '实业' else 'Technology'}",
                        entity.name[:2] + plainer, entity.list_date, "其他")
        earliest = max(entity.list_date + dt.timedelta(days=400), dt.date(2015, 3, 1))
        span = max(0, (RENAME_LATEST - earliest).days)
        target = earliest + dt.timedelta(days=int(rng.integers(0, span + 1)))
        sessions = session_dates("XSHG")
        i = bisect.bisect_left(sessions, target)
        if i >= len(sessions):
            return (listing,)
        return (listing, dataclasses.replace(final, start=sessions[i], reason="改名"))
