"""Issue 30, finding 22: every run of a daily partition carries the tags the run queue limits key on.

A one-partition *Materialize* from an asset page is a GraphQL `launchPipelineExecution` of the
implicit `__ASSET_JOB` with the partition tag and nothing else. Launched here exactly so (through
dagster_graphql's in-process client, against the project's code location loaded from
workspace.yaml) on an instance configured by the repository's `dagster.yaml`, the queued run must
carry `livesearch/kind` as the limits of `deploy/dagster.yaml` expect it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster_graphql.test.utils import define_out_of_process_context, materialize_assets

from livesearch_pipeline.infra.run_tags import DEFAULT_KINDS_BY_GROUP, KIND_TAG, TaggingRunCoordinator, run_kind

REPO_ROOT = Path(__file__).resolve().parents[3]
DAY = "2026-11-25"


@pytest.fixture(scope="module")
def ui_context(tmp_path_factory):
    home = tmp_path_factory.mktemp("dagster_home")
    shutil.copyfile(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert isinstance(instance.run_coordinator, TaggingRunCoordinator)
        with define_out_of_process_context(str(REPO_ROOT / "workspace.yaml"), None, instance) as context:
            yield instance, context


@pytest.mark.slow
@pytest.mark.parametrize(("assets", "kind"), [
    (["served_questions", "gold_answers"], "refresh"),
    (["stale_gold_audit"], "evaluation"),
    (["analytics_store"], "analytics"),
])
def test_an_asset_page_materialisation_of_one_partition_carries_the_limits_tags(ui_context, assets, kind):
    instance, context = ui_context
    [result] = materialize_assets(context, [dg.AssetKey(name) for name in assets], partition_keys=[DAY])
    launched = result.data["launchPipelineExecution"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run = instance.get_run_by_id(launched["run"]["runId"])
    assert run.job_name == "__ASSET_JOB" and run.status == dg.DagsterRunStatus.QUEUED
    assert run.tags["dagster/partition"] == DAY and run.tags[KIND_TAG] == kind


def test_every_group_of_the_project_has_a_kind_the_limits_know():
    from livesearch_pipeline.definitions import defs

    groups = {node.group_name for node in defs.resolve_asset_graph().asset_nodes}
    assert groups <= set(DEFAULT_KINDS_BY_GROUP), groups - set(DEFAULT_KINDS_BY_GROUP)
    limited = {limit.get("value") for limit in yaml.safe_load((REPO_ROOT / "deploy" / "dagster.yaml").read_text())
               ["run_coordinator"]["config"]["tag_concurrency_limits"] if limit["key"] == KIND_TAG}
    assert {"refresh", "construction", "evaluation"} <= limited <= set(DEFAULT_KINDS_BY_GROUP.values())


def test_a_run_over_several_groups_takes_the_scarcest_kind():
    assert run_kind(["evaluation", "daily_refresh"]) == "refresh"
    assert run_kind(["web", "construction"]) == "construction"
    assert run_kind(["unknown"]) is None and run_kind([]) is None
    assert run_kind(["mine"], {"mine": "special"}) == "special"
