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

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[ToolClient]:
        from livesearch_pipeline.dataservice.client import McpToolClient
        from livesearch_pipeline.dataservice.manifest import load_manifest

        manifest = load_manifest(self.manifest) if self.manifest else None
        if self.kind == "embedded":
            from livesearch_pipeline.dataservice.catalog import ServiceConfig
            from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
            from livesearch_pipeline.dataservice.server import DataService

            config = ServiceConfig(seed=self.seed if self.seed is not None else DEFAULT_SEED, clock=self.clock_date())
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
