"""A small real pool for the Dagster tests: built once per test process, copied per test.

Built by the real construction pipeline (template verbalizer) against the embedded service at a
fixed clock, restricted to three data tools (A-share daily bars, CPI, SHIBOR) so that a build
takes seconds; every later date's gold re-dates the same programs, as in production.
"""

from __future__ import annotations

import atexit
import datetime as dt
import shutil
import tempfile
from pathlib import Path

import anyio

from livesearch_pipeline.construction.pipeline import BuildConfig, build_pool
from livesearch_pipeline.construction.pool import read_manifest
from livesearch_pipeline.core.models import PoolManifest
from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.market import DEFAULT_SEED
from livesearch_pipeline.dataservice.point_in_time import EmbeddedPointInTime
from livesearch_pipeline.dataservice.server import DataService

SMALL_POOL_TOOLS = frozenset({"daily", "cn_cpi", "shibor"})
SMALL_POOL_SERVICES = ("quotes_cn", "macro", "utility")

_built: dict[dt.date, Path] = {}


async def _build(root: Path, clock: dt.date) -> None:
    service = DataService(specs=collect_tool_specs(list(SMALL_POOL_SERVICES)), config=ServiceConfig(clock=clock))
    async with McpToolClient.in_process(service) as client:
        # Replays of the dynamics stage each run at their own day's cut-off, as in production.
        await build_pool(client, await client.list_tools(), root / "construction", root / "pool",
                         BuildConfig(as_of=clock, tools=tuple(sorted(SMALL_POOL_TOOLS))),
                         point_in_time=EmbeddedPointInTime(DEFAULT_SEED))


def _cached_build(clock: dt.date) -> Path:
    if clock not in _built:
        root = Path(tempfile.mkdtemp(prefix=f"livesearch-small-pool-{clock}-"))
        atexit.register(shutil.rmtree, root, True)
        anyio.run(_build, root, clock)
        _built[clock] = root
    return _built[clock]


def write_small_pool(root: Path, clock: dt.date) -> PoolManifest:
    """Write `root/pool` (questions.jsonl + manifest) and `root/construction` as built at `clock`."""
    source = _cached_build(clock)
    for part in ("pool", "construction"):
        target = Path(root) / part
        if target.exists():
            raise FileExistsError(f"{target} already exists; write_small_pool needs a fresh data root")
        shutil.copytree(source / part, target)
    return read_manifest(Path(root) / "pool")
