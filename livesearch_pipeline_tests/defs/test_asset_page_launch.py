"""Issue 42: "Materialize…" on a daily asset's page opens the partition dialog, not the Launchpad.

Dagster 1.13's UI (LaunchAssetExecutionButton's `stateForLaunchingAssets`) takes the first job
every selected asset belongs to; for Dagster's hidden asset job (`__ASSET_JOB`, first for every
daily asset) it opens the Launchpad when an asset's config field (its op's) is required or a
required resource has required config, and the partition dialog otherwise. The assets' fields
are read here through the webserver's GraphQL schema, in process, exactly as the UI queries them.
The browser test (test_ui_backfill_browser.py) clicks through the real dialog.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import dagster as dg
from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql

REPO_ROOT = Path(__file__).resolve().parents[2]

DAILY_ASSETS = ["served_questions", "gold_answers", "web_corpus", "agent_runs", "leaderboard", "stale_gold_audit",
                "analytics_store", "public_site"]
LAUNCH_LOADER = """
query LaunchAssetLoaderQuery($assetKeys: [AssetKeyInput!]!) {
  assetNodes(assetKeys: $assetKeys) {
    assetKey { path } jobNames isExecutable isObservable
    configField { isRequired }
    requiredResources { resourceKey }
    partitionDefinition { type description }
  }
  assetNodeAdditionalRequiredKeys(assetKeys: $assetKeys) { path }
}
"""
RESOURCES = """
query Resources($pipelineName: String!, $repositoryName: String!, $repositoryLocationName: String!) {
  resourcesOrError(pipelineSelector: {pipelineName: $pipelineName, repositoryName: $repositoryName,
                                      repositoryLocationName: $repositoryLocationName}) {
    __typename
    ... on ResourceConnection { resources { name configField { isRequired } } }
  }
}
"""


@pytest.fixture(scope="module")
def ui_context():
    with dg.instance_for_test() as instance:
        with define_out_of_process_context(str(REPO_ROOT / "workspace.yaml"), None, instance) as context:
            yield context


def _dialog_or_launchpad(context, selected: list[str]) -> tuple[str, list[str]]:
    """What the UI opens for Materialize on `selected` (after its "Additional assets" confirmation),
    and the keys it added: the UI's own decision, step by step."""
    data = execute_dagster_graphql(context, LAUNCH_LOADER, {"assetKeys": [{"path": [n]} for n in selected]}).data
    added = sorted(k["path"][-1] for k in data["assetNodeAdditionalRequiredKeys"])
    keys = selected + added
    nodes = execute_dagster_graphql(context, LAUNCH_LOADER, {"assetKeys": [{"path": [n]} for n in keys]}).data["assetNodes"]
    assert all(n["isExecutable"] and not n["isObservable"] for n in nodes)
    common = [job for job in nodes[0]["jobNames"] if all(job in n["jobNames"] for n in nodes)]
    job = common[0]
    if not job.startswith("__ASSET_JOB"):
        return "partitions", added  # a user job: config assumed present
    if any(n["configField"] and n["configField"]["isRequired"] for n in nodes):
        return "launchpad: an asset's config is required", added
    location = context.code_locations[0]
    repository = next(iter(location.get_repositories().values()))
    needed = {r["resourceKey"] for n in nodes for r in n["requiredResources"]}
    resources = execute_dagster_graphql(context, RESOURCES, {
        "pipelineName": job, "repositoryName": repository.name,
        "repositoryLocationName": location.name}).data["resourcesOrError"]["resources"]
    if any(r["name"] in needed and r["configField"] and r["configField"]["isRequired"] for r in resources):
        return "launchpad: a resource's config is required", added
    return ("partitions" if all(n["partitionDefinition"] for n in nodes) else "single run"), added


@pytest.mark.slow
@pytest.mark.parametrize("asset", DAILY_ASSETS)
def test_materialize_on_a_daily_asset_opens_the_partition_dialog(ui_context, asset):
    opened, added = _dialog_or_launchpad(ui_context, [asset])
    assert opened == "partitions", (asset, opened)
    # The refresh is one multi-asset: its page names the other key before launching.
    expected = {"gold_answers": ["served_questions"], "served_questions": ["gold_answers"]}.get(asset, [])
    assert added == expected


@pytest.mark.slow
def test_no_op_of_the_refresh_requires_config(ui_context):
    """What forced the Launchpad before issue 42: `serve_questions` (the served questions' op) had a
    required `allow_open_sessions`; every op of the refresh now has the graph's defaults."""
    nodes = execute_dagster_graphql(ui_context, LAUNCH_LOADER, {"assetKeys": [
        {"path": ["served_questions"]}, {"path": ["gold_answers"]}]}).data["assetNodes"]
    assert [n["configField"]["isRequired"] for n in nodes if n["configField"]] == [False] * len(
        [n for n in nodes if n["configField"]])
