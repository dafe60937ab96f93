"""D's served questions and D's gold are one non-subsettable multi-asset with one code version.

Selecting `gold_answers` alone (an asset page's Materialize, an asset backfill) must produce the
served file it executes in the same run; the UI and the backfill daemon add `served_questions`
because it is in gold's execution set. The webserver test runs that route for real
(test_webserver_backfill.py); this one pins the definitions it relies on and the one
`code_version` a materialisation shows.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.defs.refresh.assets import CODE_VERSION, daily_refresh_assets, gold_answers, served_questions
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource
from livesearch_pipeline.settings import DataPaths, code_version
from livesearch_pipeline_tests.defs.fixtures import write_small_pool

CLOCK = dt.date(2026, 3, 16)
DAY = dt.date(2026, 3, 13)


def test_served_questions_and_gold_answers_execute_together_and_show_lineage():
    from livesearch_pipeline.definitions import defs

    graph = defs.resolve_asset_graph()
    for key in (served_questions, gold_answers):
        node = graph.get(key)
        assert node.execution_set_asset_keys == {served_questions, gold_answers}, key
        assert node.code_version == CODE_VERSION == code_version(), key
    # The data service (an observable source asset, issue 42) is upstream of the gold: its identity in the lineage.
    assert graph.get(gold_answers).parent_keys == {dg.AssetKey("question_pool"), dg.AssetKey("data_service"),
                                                   served_questions}
    assert graph.get(served_questions).parent_keys == {dg.AssetKey("question_pool")}
    # The checks stay on gold_answers, partitioned like it.
    assert {key.name for key in graph.asset_check_keys if key.asset_key == gold_answers} >= {"gold_manifest_verifies"}


def test_selecting_gold_alone_in_python_is_refused_naming_served_questions(tmp_path: Path):
    with pytest.raises(dg.DagsterInvalidDefinitionError) as raised:
        dg.materialize([daily_refresh_assets], selection=[gold_answers], partition_key=DAY.isoformat(),
                       resources={"data_service": DataServiceResource(clock=CLOCK.isoformat()),
                                  "storage": StorageResource(root=str(tmp_path))})
    cause = raised.value.__cause__
    assert isinstance(cause, dg.DagsterInvalidSubsetError)
    assert "served_questions" in str(cause) and "does not support subsetting" in str(cause)
    assert not DataPaths(tmp_path).served_file(DAY).exists()


@pytest.mark.slow
def test_one_run_serves_freezes_and_shows_one_code_version(tmp_path: Path):
    write_small_pool(tmp_path, CLOCK)
    paths = DataPaths(tmp_path)
    assert not paths.served_file(DAY).exists()
    result = dg.materialize(
        [daily_refresh_assets], partition_key=DAY.isoformat(),
        resources={"data_service": DataServiceResource(clock=CLOCK.isoformat()),
                   "storage": StorageResource(root=str(tmp_path))})
    assert result.success
    events = {e.asset_key: e for e in (x.event_specific_data.materialization
                                       for x in result.get_asset_materialization_events())}
    assert set(events) == {served_questions, gold_answers}
    assert {e.partition for e in events.values()} == {DAY.isoformat()}
    manifest = SnapshotStore(paths.gold).verify(DAY)
    assert paths.served_file(DAY).is_file()
    # One value: the asset's code version (the event's tag) is the manifest's and its metadata's.
    assert {e.tags["dagster/code_version"] for e in events.values()} == {CODE_VERSION}
    assert manifest.code_version == CODE_VERSION
    assert events[gold_answers].metadata["code_version"].value == CODE_VERSION
    assert result.dagster_run.run_id not in CODE_VERSION
