"""The construction assets materialised in-process through the `build_pool` job of the project's
definitions, against the embedded service at a fixed clock, restricted to a few data tools.

Two runs into two fresh data roots must write byte-identical pool files (the manifest differs
only in its creation time).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.construction.models import ProbeRow
from livesearch_pipeline.construction.pipeline import TABLES, read_table
from livesearch_pipeline.core.pool import MANIFEST_FILE, POOL_FILE, read_manifest
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.models import Question
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline.defs.construction.assets import verbalized_questions
from livesearch_pipeline.defs.resources import DataServiceResource, LLMResource, StorageResource
from livesearch_pipeline.settings import DataPaths

CLOCK = "2026-11-27"
# A macro and a daily rates series, an annual per-stock tool pinned to a completed period, and a
# weekly tool dated by a single day (which no relative date can serve every day).
TOOLS = ["cn_cpi", "pledge_stat", "shibor", "stk_rewards"]
BUILD_JOB = "build_pool"

# Two Dagster builds: about 10 s of CPU, several times that in wall time on shared cores.
pytestmark = pytest.mark.slow


def _run_config(tools: list[str]) -> dict:
    config = {"as_of": CLOCK, "tools": tools}
    return {"ops": {"tool_probe": {"config": config}, "candidates": {"config": config}}}


def _build(root: Path, tools: list[str]) -> dg.ExecuteInProcessResult:
    from livesearch_pipeline.definitions import defs

    job = defs.resolve_job_def(BUILD_JOB)
    return job.execute_in_process(
        run_config=_run_config(tools), instance=dg.DagsterInstance.ephemeral(), raise_on_error=False,
        resources={"data_service": DataServiceResource(kind="embedded", clock=CLOCK),
                   "storage": StorageResource(root=str(root)),
                   "llm": LLMResource(model="")},  # the template verbalizer, whatever the environment says
    )


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory):
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    results = _build(first, TOOLS), _build(second, TOOLS)
    for result in results:
        assert result.success, [e.message for e in result.all_events if e.is_failure]
    return (first, results[0]), (second, results[1])


def _pool(root: Path) -> list[Question]:
    return read_table(DataPaths(root).pool / POOL_FILE, Question)


def test_every_construction_asset_is_materialised_with_its_metadata(two_builds):
    (root, result), _ = two_builds
    materialized = {m.asset_key.to_user_string(): m.metadata
                    for m in (e.event_specific_data.materialization for e in result.get_asset_materialization_events())}
    assert set(materialized) == {"tool_catalog", "tool_probe", "coverage", "candidates", "candidate_dynamics",
                                 "verbalized_questions", "question_pool"}
    # The replay ends on the enumeration date, at point in time (the embedded service has a clock).
    assert materialized["candidate_dynamics"]["as_of"].value == CLOCK
    assert materialized["candidate_dynamics"]["point_in_time"].value is True
    manifest = read_manifest(DataPaths(root).pool)
    assert materialized["question_pool"]["questions"].value == manifest.questions == len(_pool(root))
    assert materialized["verbalized_questions"]["verbalizer"].value == "template"


def test_the_tool_restriction_limits_probe_and_pool(two_builds):
    (root, _), _ = two_builds
    construction = DataPaths(root).construction
    probe = {row.tool: row for row in read_table(construction / TABLES["probe"], ProbeRow)}
    assert sorted(probe) == TOOLS
    pooled_tools = {c.tool for q in _pool(root) for c in q.program.calls}
    assert pooled_tools <= set(TOOLS) - {"pledge_stat"}
    assert {"shibor", "cn_cpi"} <= pooled_tools
    # stk_rewards only lists managers by name and post: no question selects one (issue 28).
    assert "stk_rewards" not in pooled_tools
    weekly = probe["pledge_stat"]
    assert (weekly.usable, weekly.sampled) == (False, 0) and "single day" in (weekly.note or "")


def test_pool_questions_are_gated_hashed_tiered_and_labelled(two_builds):
    (root, _), _ = two_builds
    questions = _pool(root)
    assert len({q.qid for q in questions}) == len(questions) > 20
    for q in questions:
        assert q.qid == compute_qid(q.program, q.entity)
        for text in (q.question, q.question_zh):
            if text is not None:
                assert check_text(text).passed, (q.qid, text)
        assert q.provenance.verbalizer == "template"
    # No multi-step family starts from these tools: one aggregate of one call is time-sensitive or
    # historical as measured; only a statistic of a window's whole path (a volatility) is T3 (issue 28).
    assert {"T1", "T2"} <= {q.tier for q in questions} <= {"T1", "T2", "T3"}
    statistics = [q for q in questions if q.program.extract.aggregate is not None]
    assert statistics
    for q in questions:
        reason = q.provenance.dynamics.tier_reason
        if q.tier == "T3":
            assert q.program.extract.aggregate == "std" and "a path over a window: std" in reason, reason
        elif q.program.extract.aggregate is not None:
            assert "one aggregate of one call" in reason, reason
    assert {"macro", "rates_fx"} <= {q.asset_class for q in questions}  # cn_equity came only from stk_rewards


def test_a_manager_selected_by_name_and_post_is_dropped_with_its_reason(two_builds):
    """stk_rewards, pinned to a completed year, lists each manager by name and post; "the shares
    held for the name 暨舒桐 for the position 总经理" is no question (issue 28)."""
    (root, _), _ = two_builds
    filters = {row["filter"]: row["dropped"] for row in
               map(json.loads, (DataPaths(root).construction / TABLES["filters"]).read_text().splitlines())}
    assert filters.get("semantic_select_on_person_and_position", 0) >= 1, filters
    assert not [q for q in _pool(root) if q.program.calls[0].tool == "stk_rewards"]


def test_a_second_run_into_a_fresh_root_writes_byte_identical_pool_files(two_builds):
    (first, _), (second, _) = two_builds
    first_paths, second_paths = DataPaths(first), DataPaths(second)
    assert (first_paths.pool / POOL_FILE).read_bytes() == (second_paths.pool / POOL_FILE).read_bytes()
    manifests = [json.loads((p.pool / MANIFEST_FILE).read_text()) for p in (first_paths, second_paths)]
    for manifest in manifests:
        manifest.pop("created_at")
    assert manifests[0] == manifests[1]
    for table in ("catalog", "probe", "coverage", "candidates", "dynamics", "dynamics_filters", "profiled",
                  "verbalized", "rejects"):
        assert (first_paths.construction / TABLES[table]).read_bytes() == \
            (second_paths.construction / TABLES[table]).read_bytes(), table


def test_an_unknown_tool_in_the_restriction_fails_the_probe_loudly(tmp_path):
    result = _build(tmp_path, ["shibor", "no_such_tool"])
    assert not result.success
    failure = result.failure_data_for_node("tool_probe")
    assert failure is not None
    assert "tool restriction names tools the data service" in failure.error.to_string()
    assert "no_such_tool" in failure.error.to_string()
    assert not (DataPaths(tmp_path).pool / POOL_FILE).exists()


def test_the_verbalizer_asset_asks_the_model_of_the_llm_resource(two_builds, tmp_path):
    (root, _), _ = two_builds
    copy = tmp_path / "data"
    shutil.copytree(DataPaths(root).construction, DataPaths(copy).construction)
    model = "openai/verbalizer-test"
    reply = {"keep": False, "reason": "canned refusal"}
    result = dg.materialize([verbalized_questions], instance=dg.DagsterInstance.ephemeral(), resources={
        "storage": StorageResource(root=str(copy)), "llm": LLMResource(model=model, mock_response=json.dumps(reply))})
    assert result.success
    (meta,) = [m.metadata for m in (e.event_specific_data.materialization
                                   for e in result.get_asset_materialization_events())]
    assert meta["verbalizer"].value == model
    verbalized = meta["candidates_verbalized"].value
    # Every candidate was put to the model, which refused each one with the canned reason.
    assert verbalized > 20 and meta["rejects"].value == verbalized and meta["rows"].value == 0
    assert meta["rejects_by_stage"].value == {"llm_reject": verbalized}
    assert not DataPaths(copy).llm_cache.exists()  # canned replies are never cached
