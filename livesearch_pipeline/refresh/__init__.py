"""The daily refresh's home (no Dagster here): `plan` (the shard plan, assembling the shards'
answers, the point-in-time fields) and `freeze` (served questions, the close guard, validate then
freeze, rejected days). `defs/refresh/` runs them as thin assets; the CLI and the benchmarks
import the same functions."""

from livesearch_pipeline.refresh.freeze import (  # noqa: F401 - the package's public names
    LatestObservations, ServedConflictError, ServedWrite, latest_observations, preview_markdown, render_served,
    served_from_pool, withdraw_stale_latest, write_rejected, write_served,
)
