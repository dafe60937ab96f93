"""The synthetic reference market: fictional entities on real exchange calendars.

Every number is a pure function of (seed, entity, date): sub-models are built lazily, and each
keeps per-entity series in memory once computed so that any date can be served directly.
"""

from __future__ import annotations

from functools import cached_property, lru_cache

DEFAULT_SEED = 20260101


class Market:
    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self.seed = seed

    @cached_property
    def universe(self):
        from livesearch_pipeline.dataservice.market.universe import build_universe

        return build_universe(self.seed)

    @cached_property
    def corporate(self):
        from livesearch_pipeline.dataservice.market.corporate import CorporateActions

        return CorporateActions(self)

    @cached_property
    def prices(self):
        from livesearch_pipeline.dataservice.market.prices import PriceModel

        return PriceModel(self)

    @cached_property
    def fundamentals(self):
        from livesearch_pipeline.dataservice.market.fundamentals import Fundamentals

        return Fundamentals(self)

    @cached_property
    def events(self):
        from livesearch_pipeline.dataservice.market.events import HolderEvents

        return HolderEvents(self)

    @cached_property
    def names(self):
        from livesearch_pipeline.dataservice.market.names import Names

        return Names(self)

    @cached_property
    def currencies(self):
        from livesearch_pipeline.dataservice.market.currency import Currencies

        return Currencies(self)

    @cached_property
    def macro(self):
        from livesearch_pipeline.dataservice.market.macro import MacroModel

        return MacroModel(self)


@lru_cache(maxsize=4)
def shared_market(seed: int = DEFAULT_SEED) -> Market:
    """One market per seed per process, shared by every service built on it.

    Every number is a pure function of (seed, entity, date), so sharing changes no answer; it only
    keeps the per-entity series computed by one run warm for the next shard or partition that the
    same process executes (the CLI and in-process jobs run many of them).
    """
    return Market(seed)
