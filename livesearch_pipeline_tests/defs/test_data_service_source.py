"""Issue 42: the data service is an observable source asset upstream of the daily assets.

Its data version is the service's identity (provider, seed or endpoint, the service's own
version). A refresh records the service it ran on as an observation before any program runs, so
each day's gold names its service in its lineage (`dagster/input_data_version/data_service`):
here the gold of one day is frozen on the embedded market, the gold of the next on the same
market served over MCP by HTTP (another service: a URL, the server's name and version), and the
change shows as a second data version of `data_service` and on the gold frozen after it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.dataservice.catalog import SERVICE_NAME, SERVICE_VERSION, ServiceConfig
from livesearch_pipeline.dataservice.market import DEFAULT_SEED
from livesearch_pipeline.dataservice.server import DataService, http_server_thread
from livesearch_pipeline.defs.refresh.assets import daily_refresh_assets, gold_answers
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource
from livesearch_pipeline.defs.sources import DATA_SERVICE, identity_version, observe_data_service
from livesearch_pipeline_tests.defs.fixtures import write_small_pool

CLOCK = dt.date(2026, 3, 16)
BEFORE, AFTER = dt.date(2026, 3, 12), dt.date(2026, 3, 13)
EMBEDDED = f"embedded seed={DEFAULT_SEED} {SERVICE_NAME}/{SERVICE_VERSION}"
INPUT_VERSION = "dagster/input_data_version/data_service"


def test_the_data_service_is_an_observable_source_upstream_of_what_reads_it():
    from livesearch_pipeline.definitions import defs

    graph = defs.resolve_asset_graph()
    node = graph.get(DATA_SERVICE)
    assert node.is_observable and not node.is_materializable
    assert node.group_name == "data_service" and node.owners == ["team:ops"]
    children = {k.to_user_string() for k in node.child_keys}
    assert children == {"gold_answers", "web_corpus", "tool_catalog"}
    assert "synthetic_market" not in {k.to_user_string() for k in graph.get_all_asset_keys()}  # reconciled


def test_the_identity_is_provider_source_and_version_never_the_clock_or_a_secret():
    assert DataServiceResource(clock="2026-03-16").identity() == {
        "provider": "embedded", "source": f"seed={DEFAULT_SEED}", "version": f"{SERVICE_NAME}/{SERVICE_VERSION}"}
    assert identity_version(DataServiceResource(clock="2027-01-04").identity()) == EMBEDDED  # a day later: the same
    assert identity_version(DataServiceResource(seed=7).identity()).startswith("embedded seed=7 ")
    remote = DataServiceResource(kind="url", url="https://user:hunter2secret@data.example/mcp", token="tok-123456789")
    identity = remote.identity("acme-data/2.1")
    assert identity["provider"] == "url" and identity["version"] == "acme-data/2.1"
    assert "hunter2secret" not in identity["source"] and "data.example/mcp" in identity["source"]


def test_observing_records_the_identity_as_the_data_version():
    from dagster._core.definitions.observe import observe  # what the asset's Observe button runs

    instance = dg.DagsterInstance.ephemeral()
    result = observe([observe_data_service], instance=instance, resources={"data_service": DataServiceResource(seed=11)})
    assert result.success
    [record] = instance.fetch_observations(DATA_SERVICE, limit=5).records
    assert record.asset_observation.tags["dagster/data_version"] == f"embedded seed=11 {SERVICE_NAME}/{SERVICE_VERSION}"
    assert record.asset_observation.metadata["provider"].value == "embedded"


@pytest.mark.slow
def test_each_days_gold_names_its_service_and_a_change_of_service_shows_in_the_lineage(tmp_path: Path):
    write_small_pool(tmp_path, CLOCK)
    instance = dg.DagsterInstance.ephemeral()
    storage = StorageResource(root=str(tmp_path))

    def refresh(day: dt.date, service: DataServiceResource) -> None:
        result = dg.materialize([observe_data_service, daily_refresh_assets], selection=[daily_refresh_assets],
                                partition_key=day.isoformat(), instance=instance,
                                resources={"data_service": service, "storage": storage})
        assert result.success

    refresh(BEFORE, DataServiceResource(clock=CLOCK.isoformat()))
    with http_server_thread(DataService(config=ServiceConfig(clock=CLOCK))) as url:
        refresh(AFTER, DataServiceResource(kind="url", url=url))

    inputs = {r.partition_key: r.asset_materialization.tags[INPUT_VERSION]
              for r in instance.fetch_materializations(gold_answers, limit=10).records}
    assert inputs[BEFORE.isoformat()] == EMBEDDED
    assert inputs[AFTER.isoformat()].startswith(f"url {url} {SERVICE_NAME}/{SERVICE_VERSION}")
    versions = [r.asset_observation.tags["dagster/data_version"]
                for r in instance.fetch_observations(DATA_SERVICE, limit=10, ascending=True).records]
    assert versions[0] == EMBEDDED and versions[-1] == inputs[AFTER.isoformat()]
    # The observation of each refresh precedes the gold it ran: the gold's input pointer names it.
    for record in instance.fetch_materializations(gold_answers, limit=10).records:
        pointer = int(record.asset_materialization.tags["dagster/input_event_pointer/data_service"])
        assert pointer < record.storage_id
