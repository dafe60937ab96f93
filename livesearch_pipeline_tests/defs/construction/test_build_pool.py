"""`materialize_pool` (the construction assets) end to end against the embedded service, with a fixed clock.

Restricted to a few data tools (run config) and three entities per class (the lowest, a middle
and the highest visibility level; the scorer's listing is trimmed by a thin client wrapper that a
data service resource hands to the assets) so that two full builds stay within seconds.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any, AsyncIterator, Optional

import pytest

from livesearch_pipeline.construction.pipeline import TABLES, read_catalog, read_table
from livesearch_pipeline.construction.pool import POOL_FILE, PoolPolicy, cap_key, signature_cap
from livesearch_pipeline.construction.models import ProbeRow
from livesearch_pipeline.construction.sampling import VISIBILITY_TOOL, restrict_catalog
from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.core.dategate import check_text
from livesearch_pipeline.core.models import Question
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline.defs.construction.materialize import materialize_pool
from livesearch_pipeline.defs.resources import DataServiceResource, StorageResource

pytestmark = pytest.mark.slow

CLOCK = dt.date(2026, 11, 27)
DATA_TOOLS = {"daily", "hk_daily", "us_daily", "cn_cpi", "shibor"}


class ThreeLevelsPerClass(ToolClient):
    """Delegates every call; trims the scorer's listing to one entity at each of three levels."""

    def __init__(self, inner: ToolClient) -> None:
        self._inner = inner

    @property
    def identity(self) -> str:
        return self._inner.identity

    async def list_tools(self) -> Catalog:
        return await self._inner.list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        response = await self._inner.call_tool(name, arguments)
        if name != VISIBILITY_TOOL:
            return response
        first_per_level: dict[int, dict[str, Any]] = {}
        for item in sorted(response["items"], key=lambda item: item["ts_code"]):
            first_per_level.setdefault(int(item["visibility"]), item)
        levels = sorted(first_per_level)
        kept = sorted({levels[0], levels[len(levels) // 2], levels[-1]})
        return {**response, "items": [first_per_level[level] for level in kept]}


class ThreeLevelsService(DataServiceResource):
    """The embedded service whose clients trim the scorer's listing (ThreeLevelsPerClass)."""

    @contextlib.asynccontextmanager
    async def open(self, as_of: Optional[dt.date] = None) -> AsyncIterator[ToolClient]:
        async with super().open(as_of) as client:
            yield ThreeLevelsPerClass(client)


def _restricted(catalog: Catalog) -> Catalog:
    restricted = restrict_catalog(catalog, sorted(DATA_TOOLS))
    assert {t.name for t in restricted.tools if t.defines_gold} == DATA_TOOLS
    return restricted


def _build(root: Path):
    build = materialize_pool(as_of=CLOCK, tools=sorted(DATA_TOOLS), resources={
        "data_service": ThreeLevelsService(kind="embedded", clock=CLOCK.isoformat()),
        "storage": StorageResource(root=str(root))})
    return _restricted(read_catalog(root / "construction" / TABLES["catalog"])), build


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    first_root, second_root = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    first = _build(first_root)
    second = _build(second_root)
    return first_root, first, second_root, second


def _pool(root: Path) -> list[Question]:
    return read_table(root / "pool" / POOL_FILE, Question)


def test_pool_questions_pass_the_date_gate_and_use_data_tools_only(builds):
    root, (catalog, build), _, _ = builds
    questions = _pool(root)
    assert len(questions) == build.metadata["question_pool"]["questions"] == build.manifest.questions > 0
    data_tools = {t.name for t in catalog.data_tools()}
    for q in questions:
        for text in (q.question, q.question_zh):
            if text is not None:
                assert check_text(text).passed, (q.qid, text)
        assert {c.tool for c in q.program.calls} <= data_tools, q.qid


def test_pool_qids_are_unique_and_are_the_content_hash(builds):
    root, _, _, _ = builds
    questions = _pool(root)
    assert len({q.qid for q in questions}) == len(questions)
    assert all(q.qid == compute_qid(q.program, q.entity) for q in questions)


def test_pool_has_all_three_tiers_and_respects_the_caps(builds):
    root, (_, build), _, _ = builds
    questions = _pool(root)
    assert {q.tier for q in questions} == {"T1", "T2", "T3"}
    policy = PoolPolicy()
    for signature, n in Counter(q.signature for q in questions).items():
        first = next(q for q in questions if q.signature == signature)
        assert n <= signature_cap(first, policy), signature
    # A multi-step program counts under its chain, not under its first tool.
    assert max(Counter(cap_key(q) for q in questions).values()) <= policy.max_per_tool
    assert any(cap_key(q) != q.program.calls[0].tool for q in questions)
    assert {q.provenance.verbalizer for q in questions} == {"template"}
    assert {q.provenance.pool_version for q in questions} == {build.manifest.version}


def test_probe_table_records_the_restricted_tools(builds):
    root, (_, build), _, _ = builds
    probe = read_table(root / "construction" / TABLES["probe"], ProbeRow)
    assert len(probe) == build.metadata["tool_probe"]["rows"]
    assert {row.tool for row in probe} == DATA_TOOLS
    assert all(row.usable for row in probe if row.tool in {"daily", "hk_daily", "us_daily"})


def test_second_build_into_a_fresh_directory_is_byte_identical(builds):
    first_root, (_, first), second_root, (_, second) = builds
    assert (first_root / "pool" / POOL_FILE).read_bytes() == (second_root / "pool" / POOL_FILE).read_bytes()
    assert first.manifest.version == second.manifest.version
    for table in ("candidates", "verbalized", "coverage"):
        assert (first_root / "construction" / TABLES[table]).read_bytes() == \
            (second_root / "construction" / TABLES[table]).read_bytes(), table


def test_a_failed_step_raises_naming_the_step_and_its_cause(tmp_path):
    from livesearch_pipeline.defs.construction.materialize import PoolBuildError

    with pytest.raises(PoolBuildError, match=r"pool build failed \(run .*\): tool_probe: .*no_such_tool"):
        materialize_pool(as_of=CLOCK, tools=["shibor", "no_such_tool"], resources={
            "data_service": DataServiceResource(kind="embedded", clock=CLOCK.isoformat()),
            "storage": StorageResource(root=str(tmp_path))})
    assert not (tmp_path / "pool" / POOL_FILE).exists()


def test_options_become_the_construction_assets_run_config():
    from livesearch_pipeline.defs.construction.materialize import construction_run_config

    assert construction_run_config() == {}
    config = construction_run_config(as_of=CLOCK, tools=["shibor", "daily", "shibor"], replay_days=5,
                                     policy=PoolPolicy(max_per_tool=90))
    sampling = {"as_of": CLOCK.isoformat(), "tools": ["daily", "shibor"]}
    assert config["ops"]["tool_probe"] == config["ops"]["candidates"] == {"config": sampling}
    assert config["ops"]["candidate_dynamics"] == {"config": {"replay_days": 5}}
    policy = {"max_per_signature": 3, "max_per_chain_signature": 24, "max_per_tool": 90, "max_slow_per_tool": 15,
              "max_per_chain": 90, "max_slow_per_chain": 30, "seed": 17}
    assert config["ops"]["verbalized_questions"] == config["ops"]["question_pool"] == {"config": policy}
