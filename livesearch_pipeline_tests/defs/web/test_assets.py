"""The web corpus of D as a Dagster asset: materialised for its partition, lineage to the data service,
files under the data root, and the search-and-read agent run of D reading it."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource
from livesearch_pipeline.defs.refresh.assets import gold_answers
from livesearch_pipeline.defs.sources import DATA_SERVICE, observe_data_service
from livesearch_pipeline.defs.web.assets import web_corpus
from livesearch_pipeline.web.index import WebIndex
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, MARKET_TOOLS, TOOLS, small_web


def test_web_corpus_materialises_the_web_of_its_partition(tmp_path: Path) -> None:
    chosen = small_web()
    config = {"history_sessions": 5, "workers": 1, "entities": [chosen.famous.code, chosen.obscure.code],
              "tools": list(TOOLS), "market_tools": list(MARKET_TOOLS)}
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [web_corpus, observe_data_service], partition_key=CLOCK.isoformat(), selection=[web_corpus],
        resources={"data_service": DataServiceResource(), "storage": StorageResource(root=str(tmp_path))},
        run_config={"ops": {"web_corpus": {"config": config}}}, instance=instance,
    )
    assert result.success
    # The build's progress is the step's own log (the command line prints it below the step line).
    progress = [entry.user_message for entry in instance.all_logs(result.run_id)
                if entry.dagster_event is None and entry.step_key == "web_corpus"]
    assert progress[0].startswith("pages: ") and progress[-1].startswith(f"web of {CLOCK}: ")
    assert any(line.startswith("indexing ") for line in progress) and len(progress) <= 13
    materialization = result.asset_materializations_for_node("web_corpus")[0]
    metadata = materialization.metadata
    assert "clock=2026-11-27" in metadata["market"].value and "clock=2026-11-27" in metadata["identity"].value
    directory = tmp_path / "web" / CLOCK.isoformat()
    manifest = json.loads((directory / "manifest.json").read_text())
    index = WebIndex(directory)
    assert manifest["pages"] == index.pages == metadata["pages"].value > 1
    assert manifest["clock"] == CLOCK.isoformat() and manifest["market"] == metadata["market"].value
    # Lineage: the corpus depends on the data service it was generated from, the pool whose questions
    # set its quote histories' reach, and the gold of its day (its evidence map).
    from livesearch_pipeline.definitions import defs

    graph = defs.resolve_asset_graph()
    assert graph.get(web_corpus.key).parent_keys == {DATA_SERVICE, dg.AssetKey("question_pool"), gold_answers}
    assert defs.resolve_job_def("daily_web").asset_layer.executable_asset_keys == {web_corpus.key}


def test_a_non_embedded_service_is_refused(tmp_path: Path) -> None:
    result = dg.materialize(
        [web_corpus], partition_key=CLOCK.isoformat(), raise_on_error=False,
        resources={"data_service": DataServiceResource(kind="url", url="http://127.0.0.1:9/mcp"),
                   "storage": StorageResource(root=str(tmp_path))},
    )
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    assert "embedded market" in failure.step_failure_data.error.message
    assert not (tmp_path / "web").exists()
