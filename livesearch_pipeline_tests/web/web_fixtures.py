"""A small offline web for tests: a handful of entities at chosen visibility levels, a few tools.

The full web of the default market (100,000+ pages) is built only by `benchmarks/web.py`; the
rules tested here (point in time, visibility, noise, the search API) are the same for any part.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline.web.corpus import CorpusConfig

CLOCK = dt.date(2026, 11, 27)
TOOLS = ("daily", "daily_basic", "income", "stock_basic", "dividend", "fund_nav")
MARKET_TOOLS = ("shibor",)


def pick(asset_class: str, visibility: int) -> Entity:
    """The first entity (by code) of a class at a visibility level."""
    return next(e for e in sorted(shared_market(DEFAULT_SEED).universe.entities, key=lambda e: e.code)
                if e.asset_class == asset_class and e.visibility == visibility)


@dataclass(frozen=True)
class SmallWeb:
    obscure: Entity  # visibility 0
    middling: Entity  # visibility 3
    famous: Entity  # visibility 10
    fund: Entity  # visibility 7

    @property
    def codes(self) -> tuple[str, ...]:
        return (self.obscure.code, self.middling.code, self.famous.code, self.fund.code)

    def config(self, clock: dt.date = CLOCK, history_sessions: int = 10) -> CorpusConfig:
        return CorpusConfig(clock=clock, history_sessions=history_sessions, entities=self.codes, tools=TOOLS,
                            market_tools=MARKET_TOOLS)


def small_web() -> SmallWeb:
    return SmallWeb(pick("cn_equity", 0), pick("cn_equity", 3), pick("cn_equity", 10), pick("fund", 7))


def service(clock: dt.date = CLOCK) -> DataService:
    return DataService(config=ServiceConfig(clock=clock), market=shared_market(DEFAULT_SEED))


def latest_daily(code: str, clock: dt.date = CLOCK) -> dict:
    return service(clock).call("daily", {"ts_code": code, "end_date": clock.strftime("%Y%m%d"),
                                         "start_date": (clock - dt.timedelta(days=20)).strftime("%Y%m%d")})["items"][0]


def build_small_web(root: Path) -> Path:
    from livesearch_pipeline.web.build import build_web

    return build_web(small_web().config(), root, workers=1).directory


def gold_of(questions: list, clock: dt.date = CLOCK) -> list:
    """The gold of `questions` at `clock`: the executor's answers over the in-process MCP service."""
    import asyncio

    from livesearch_pipeline.core.executor import execute_programs
    from livesearch_pipeline.dataservice.client import McpToolClient

    async def run():
        async with McpToolClient.in_process(service(clock)) as client:
            return (await execute_programs(questions, clock, client))[0]
    return asyncio.run(run())
