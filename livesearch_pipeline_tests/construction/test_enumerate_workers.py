"""Enumeration's second execution in a forked process (issue 29): the same candidates and filters
as both executions in this process, and the fork really happens."""

from __future__ import annotations

import datetime as dt
import os
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from livesearch_pipeline.construction.enumerate import enumerate_candidates
from livesearch_pipeline.construction.models import CoverageRow
from livesearch_pipeline.construction.sampling import load_entities, restrict_catalog
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.point_in_time import EmbeddedPointInTime
from livesearch_pipeline.dataservice.server import DataService

CLOCK = dt.date(2026, 11, 27)
TOOLS = ["daily", "adj_factor", "fx_daily", "margin", "stk_limit"]


def _enumerate(workers: int, pids: Path):
    source = EmbeddedPointInTime()

    @asynccontextmanager
    async def open_at(day: dt.date):
        with pids.open("a") as out:  # which process opened the service (a forked child appends its own pid)
            out.write(f"{os.getpid()}\n")
        async with source(day) as client:
            yield client

    async def go():
        async with open_at(CLOCK) as client:
            catalog = restrict_catalog(DataService(config=ServiceConfig(clock=CLOCK)).catalog, TOOLS)
            entities = await load_entities(client, catalog)
            stocks = [e for e in entities["cn_equity"] if e.visibility in (3, 10)][:2]
            coverage = [CoverageRow(tool=tool, asset_class="cn_equity", visibility=e.visibility, entity=e.code,
                                    entity_name=e.name) for e in stocks for tool in ("daily", "adj_factor", "stk_limit")]
            coverage += [CoverageRow(tool=tool, asset_class=cls, visibility=10, entity=None, entity_name=None)
                         for tool, cls in (("fx_daily", "rates_fx"), ("margin", "market"))]
            return await enumerate_candidates(client, catalog, coverage, entities, CLOCK, open_at=open_at,
                                              workers=workers)

    return anyio.run(go)


def test_the_forked_second_execution_gives_the_same_candidates_and_filters(tmp_path):
    alone_pids, forked_pids = tmp_path / "alone", tmp_path / "forked"
    alone = _enumerate(1, alone_pids)
    forked = _enumerate(2, forked_pids)
    assert alone.candidates and alone.drafts == forked.drafts
    assert [c.model_dump(mode="json") for c in forked.candidates] == [c.model_dump(mode="json") for c in alone.candidates]
    assert [f.model_dump() for f in forked.filters] == [f.model_dump() for f in alone.filters]
    # One process alone; with two workers a second one opened the service for the second execution.
    assert set(alone_pids.read_text().split()) == {str(os.getpid())}
    assert set(forked_pids.read_text().split()) - {str(os.getpid())}


def test_enumeration_refuses_zero_workers():
    with pytest.raises(ValueError, match="workers must be >= 1"):
        anyio.run(lambda: enumerate_candidates(None, None, [], {}, CLOCK, workers=0))  # type: ignore[arg-type]
