"""Resources shared by every asset: the data service and the storage root."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shlex
from pathlib import Path
from typing import AsyncIterator, Optional

import dagster as dg

from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.settings import DataPaths


class DataServiceResource(dg.ConfigurableResource):
    """The MCP data service the gold programs run against.

    kind `embedded` (default): the synthetic reference market, in-process. `url`: any MCP server
    over streamable HTTP. `stdio`: an MCP server started as a command. `tushare`: the Tushare Pro
    HTTP API (token from TUSHARE_TOKEN). `manifest` describes tools without LiveSearch `_meta`.
    """

    kind: str = "embedded"
    seed: Optional[int] = None
    clock: Optional[str] = None  # YYYY-MM-DD; unset = the real date
    url: Optional[str] = None
    command: Optional[str] = None
    manifest: Optional[str] = None

    def clock_date(self) -> Optional[dt.date]:
        return dt.date.fromisoformat(self.clock) if self.clock else None

    @property
    def point_in_time(self) -> bool:
        """True when the service can be queried as of a past date (its clock is ours to set).

        Only the embedded market has such a clock. Tushare and external MCP servers answer with
        whatever they hold when asked: their gold records a retrieval time (vintage) instead.
        """
        return self.kind == "embedded"

    @contextlib.asynccontextmanager
    async def open(self, as_of: Optional[dt.date] = None) -> AsyncIterator[ToolClient]:
        """A client of the service; `as_of` sets a point-in-time service's clock to that date.

        Refreshes and agent runs of partition D pass `as_of=D`, so they see the market as it was at
        D's cut-off whatever the wall clock. `as_of` on a service without a clock is refused: the
        caller must record a vintage instead of pretending to a point in time.
        """
        from livesearch_pipeline.dataservice.client import McpToolClient
        from livesearch_pipeline.dataservice.manifest import load_manifest

        if as_of is not None and not self.point_in_time:
            raise ValueError(f"data service kind {self.kind!r} has no point-in-time clock; it cannot be queried "
                             f"as of {as_of.isoformat()}")
        manifest = load_manifest(self.manifest) if self.manifest else None
        if self.kind == "embedded":
            from livesearch_pipeline.dataservice.catalog import ServiceConfig
            from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
            from livesearch_pipeline.dataservice.server import DataService

            clock = as_of if as_of is not None else self.clock_date()
            config = ServiceConfig(seed=self.seed if self.seed is not None else DEFAULT_SEED, clock=clock)
            client = McpToolClient.in_process(DataService(config=config, market=shared_market(config.seed)))
        elif self.kind == "url":
            if not self.url:
                raise ValueError("data service kind 'url' needs `url`")
            client = McpToolClient.url(self.url, manifest=manifest)
        elif self.kind == "stdio":
            if not self.command:
                raise ValueError("data service kind 'stdio' needs `command`")
            program, *args = shlex.split(self.command)
            client = McpToolClient.stdio(program, args, manifest=manifest)
        elif self.kind == "tushare":
            from livesearch_pipeline.dataservice.tushare import TUSHARE_URL, TushareClient

            client = TushareClient(url=self.url or TUSHARE_URL)
        else:
            raise ValueError(f"unknown data service kind {self.kind!r}; expected embedded, url, stdio or tushare")
        async with client as entered:
            yield entered


class StorageResource(dg.ConfigurableResource):
    """The data root (pool, construction tables, gold snapshots, served files, agent runs)."""

    root: Optional[str] = None

    def paths(self) -> DataPaths:
        return DataPaths(Path(self.root).resolve()) if self.root else DataPaths.from_env()


def default_resources() -> dict[str, dg.ConfigurableResource]:
    return {
        "data_service": DataServiceResource(
            kind=os.environ.get("LIVESEARCH_DATA_SERVICE", "embedded"),
            url=os.environ.get("LIVESEARCH_DATA_SERVICE_URL") or None,
            command=os.environ.get("LIVESEARCH_DATA_SERVICE_COMMAND") or None,
            manifest=os.environ.get("LIVESEARCH_DATA_SERVICE_MANIFEST") or None,
            clock=os.environ.get("LIVESEARCH_CLOCK") or None,
        ),
        "storage": StorageResource(root=os.environ.get("LIVESEARCH_DATA_DIR") or None),
    }


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources=default_resources())
