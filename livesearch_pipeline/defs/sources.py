"""The data service as an observable source asset: where every gold answer, page and agent answer comes from.

`data_service` sits upstream of the daily assets that read it: `gold_answers` (every program runs
against it), `web_corpus` (generated from the embedded market) and `agent_runs` (the oracle and the
tool-using agents call it). Nothing materialises it; it is *observed*, and its data version is the
service's identity (`DataServiceResource.identity`): the provider, the embedded market's seed or
the endpoint or command, and the service's own name/version, e.g.
`embedded seed=20240601 livesearch-synthetic-market/1`. Never the clock: the same service on another
day is the same source.

It is observed by its own Observe button in the UI (`observe_data_service`), and by every refresh,
which records the service it runs against before it executes anything (`gold_answers`' planning
step logs the observation). So each `gold_answers` materialisation carries, as its input data
version of `data_service`, the service that day's gold was computed from; after a change of service
(another seed, another endpoint, a new version) the lineage shows a new data version, the gold
frozen since records it, and the gold frozen before it is shown as computed from an older version
of an upstream asset.
"""

from __future__ import annotations

import warnings

import dagster as dg

from livesearch_pipeline.core import aio
from livesearch_pipeline.defs.owners import owners_of
from livesearch_pipeline.defs.resources import DataServiceResource

GROUP = "data_service"
DATA_SERVICE = dg.AssetKey("data_service")
# The tag a Dagster event carries its data version in (dagster._core.definitions.data_version.DATA_VERSION_TAG).
DATA_VERSION_TAG = "dagster/data_version"

# Built inside the decorator below: a module-level AssetSpec would be loaded as a second definition.
def _spec() -> dg.AssetSpec:
    return dg.AssetSpec(
    DATA_SERVICE, group_name=GROUP, kinds={"mcp"}, owners=owners_of(GROUP),
    description="The MCP data service every gold program, the offline web and the tool-using agents read "
                "(embedded synthetic market, an MCP server by URL or command, or Tushare Pro). Observed, never "
                "materialised: its data version is its identity (provider, seed or endpoint, version).",
    )


def identity_version(identity: dict[str, str]) -> str:
    """The data version of a service identity: one readable line."""
    return f"{identity['provider']} {identity['source']} {identity['version']}"


def observation(identity: dict[str, str]) -> dg.AssetObservation:
    """The observation a run records of the service it used (the refresh's planning step)."""
    return dg.AssetObservation(asset_key=DATA_SERVICE, metadata=dict(identity),
                               tags={DATA_VERSION_TAG: identity_version(identity)})


def current_identity(data_service: DataServiceResource) -> dict[str, str]:
    """The configured service's identity; a service other than the embedded one is connected to
    once, to read what it says of itself."""
    if data_service.point_in_time:
        return data_service.identity()

    async def served_by() -> str:
        async with data_service.open() as client:
            return client.identity

    return data_service.identity(aio.run(served_by()))


def _observe(data_service: DataServiceResource):
    """Observe the configured data service: its identity is its data version."""
    identity = current_identity(data_service)
    yield dg.ObserveResult(asset_key=DATA_SERVICE, data_version=dg.DataVersion(identity_version(identity)),
                           metadata=dict(identity))


# The one observable source asset API that takes an AssetSpec (owners, kinds) is a Dagster beta
# (1.13); its warning would be printed by every process that loads the definitions.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.BetaWarning)
    observe_data_service = dg.multi_observable_source_asset(specs=[_spec()], name="observe_data_service")(_observe)
