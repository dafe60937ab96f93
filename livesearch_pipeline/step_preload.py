"""Imported once by the refresh job's forkserver, so that every step process forks with it loaded.

The multiprocess executor starts each step of a run in its own process, forked from a
forkserver that imported `preload_modules` (defs/refresh/schedules.py). What the forkserver has
not imported, every step process imports again for itself. Measured on the reference machine
(2 cores), with only the code location preloaded a step process spent ~1.3 s starting: ~1.1 s
importing Dagster's storage layer (SQLAlchemy, Alembic; needed to open the instance) and
~0.9 s more in each shard step importing the data service's tool modules and MCP's JSON-schema
validation. Nothing here opens a file, a connection or a thread: it only imports, so forking
from it is safe.

Last, everything the forkserver holds is moved to the garbage collector's permanent generation
(`gc.freeze()`, the idiom the `gc` documentation gives for a process that forks without exec):
a step process's full collections then skip the ~300,000 objects it inherited instead of
walking them every time, and leave their pages shared with the forkserver.

A module listed in `preload_modules` that fails to import is skipped by the forkserver
without a word; this module imports everything directly, so a renamed module fails the test
that imports it (livesearch_pipeline_tests/defs/refresh/test_refresh_executor.py) instead.
"""

import gc

# Dagster: what a step process needs to open the instance and reconstruct the job.
import dagster._core.storage.base_storage  # noqa: F401  SQLAlchemy + Alembic, ~1.1 s
import dagster._core.storage.event_log.sqlite  # noqa: F401
import dagster._core.storage.runs.sqlite  # noqa: F401
import dagster._core.storage.schedules.sqlite  # noqa: F401
import dagster._core.secrets.env_file  # noqa: F401
import dagster._core.system_config.composite_descent  # noqa: F401
import dagster._core.workspace.autodiscovery  # noqa: F401
import dagster._utils.test.definitions  # noqa: F401  imported by every job reconstruction
import upath.core  # noqa: F401  the filesystem IO manager's paths
import upath.implementations.local  # noqa: F401

# MCP's transport and the JSON-schema validation of every tool result.
import anyio._core._sockets  # noqa: F401
import jsonschema  # noqa: F401

# The code location and the embedded data service: server, client, market and every tool module.
import livesearch_pipeline.dataservice.client  # noqa: F401
import livesearch_pipeline.dataservice.manifest  # noqa: F401
import livesearch_pipeline.dataservice.market.events  # noqa: F401
import livesearch_pipeline.dataservice.server  # noqa: F401
import livesearch_pipeline.definitions  # noqa: F401
from livesearch_pipeline.dataservice.catalog import collect_tool_specs

collect_tool_specs()  # imports each tool module (and the market models they use); pure
gc.collect()
gc.freeze()
