"""A small real pool for the Dagster tests: built once per test process, copied per test.

Built by the construction assets (`materialize_pool`, template verbalizer) against the embedded
service at a fixed clock, restricted by run config to three data tools (A-share daily bars, CPI,
SHIBOR) so that a build takes seconds; every later date's gold re-dates the same programs, as in
production.
"""

from __future__ import annotations

import atexit
import datetime as dt
import shutil
import tempfile
from pathlib import Path

from livesearch_pipeline.core.pool import read_manifest
from livesearch_pipeline.core.models import PoolManifest
from livesearch_pipeline.defs.construction.materialize import materialize_pool
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource

SMALL_POOL_TOOLS = frozenset({"daily", "cn_cpi", "shibor"})

_built: dict[dt.date, Path] = {}


def _build(root: Path, clock: dt.date) -> None:
    # The embedded service has a clock: the dynamics replay runs each day at its own cut-off.
    materialize_pool(as_of=clock, tools=sorted(SMALL_POOL_TOOLS),
                     resources={"data_service": DataServiceResource(kind="embedded", clock=clock.isoformat()),
                                "storage": StorageResource(root=str(root))})


def _cached_build(clock: dt.date) -> Path:
    if clock not in _built:
        root = Path(tempfile.mkdtemp(prefix=f"livesearch-small-pool-{clock}-"))
        atexit.register(shutil.rmtree, root, True)
        _build(root, clock)
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
