"""The data service as the offline web reads it: every tool at the web's clock, and the dates of its records.

`Reader` calls the embedded `DataService` at the corpus clock (never the wall clock), so a page can
only show what the service would return that day; each call is checked (a failed call or a
window holding more than one response's records fails the build) and its records come back
newest first, grouped by time key (`Fetched`). A page's published date is the date of the data
it shows and is never after the clock: a record's announcement date when it has one, else the
last day its time key covers (`published_on`), plus the publication lag of an official
statistic (`release_date`).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from livesearch_pipeline.core.catalog import ToolMeta
from livesearch_pipeline.core.extract import REVISION_FIELD
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import shared_market
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline.web.corpus import CorpusConfig, WebCorpusError


# How far back each refresh class is fetched, in days (a lag of up to three updates must fit).
_WINDOW_DAYS = {"weekly": 60, "monthly": 200, "quarterly": 800, "annual": 1500}


@dataclass
class Fetched:
    """Records of one tool for one entity (or none), newest first, grouped by time key; a period
    a later report restated (issue 39) is two groups, the restated version first, each with its
    own announcement date."""

    meta: ToolMeta
    groups: list[list[dict[str, Any]]]


class Reader:
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

    def fetch(self, tool: str, entity: str | None, history_days: int, start: dt.date | None = None) -> Fetched:
        spec = self.specs[tool]
        meta = spec.meta
        args: dict[str, Any] = {}
        if entity is not None:
            args[meta.entity_param] = entity
        names = {p.name for p in spec.params}
        start = min(start, self.window_start(meta, history_days)) if start is not None else self.window_start(
            meta, history_days)
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
            return Fetched(meta, [[record] for record in result["items"]])
        # One group per time key (and version), newest first (records of several series may interleave).
        by_key: dict[Any, list[dict[str, Any]]] = {}
        for record in result["items"]:
            by_key.setdefault((record.get(key), record.get(REVISION_FIELD)), []).append(record)
        ordered = sorted(by_key, key=lambda k: (str(k[0]), str(k[1])), reverse=True)
        return Fetched(meta, [by_key[k] for k in ordered])


def key_date(value: Any, fmt: str | None) -> dt.date | None:
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


def month_start(day: dt.date, back: int = 0) -> dt.date:
    """The first day of the month `back` months before `day`'s."""
    index = day.year * 12 + day.month - 1 - back
    return dt.date(index // 12, index % 12 + 1, 1)


def month_of(key: Any) -> str | None:
    day = key_date(key, None)
    return f"{day.year:04d}-{day.month:02d}" if day is not None else None


def published_on(meta: ToolMeta, group: list[dict[str, Any]], clock: dt.date) -> dt.date:
    """When a page showing `group` went up: its announcement date when it has one, else its time key;
    never after the clock (the service shows nothing dated later)."""
    record = group[0]
    for name in ("ann_date", "f_ann_date"):
        day = key_date(record.get(name), None)
        if day is not None:
            return min(day, clock)
    day = key_date(record.get(meta.time_key), meta.time_key_fmt) if meta.time_key else None
    return min(day, clock) if day is not None else clock


# Official statistics are released some days after the period they cover (the day after the
# period end for PMI, about two weeks for prices and money, nearly three weeks for GDP).
RELEASE_LAG_DAYS = {"cn_cpi": 12, "cn_ppi": 12, "cn_m": 13, "sf_month": 14, "cn_gdp": 19, "cn_pmi": 0}


def release_date(meta: ToolMeta, group: list[dict[str, Any]], clock: dt.date) -> dt.date:
    """When an official statistic was released: its period's end plus the publication lag; never
    after the clock (the service only shows what was out by then)."""
    published = published_on(meta, group, clock)
    lag = RELEASE_LAG_DAYS.get(meta.name)
    if lag is None:
        return published
    return min(published + dt.timedelta(days=lag), clock)
