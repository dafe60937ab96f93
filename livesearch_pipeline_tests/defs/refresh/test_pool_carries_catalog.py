"""Issue 23, finding 11: the pool folder carries the catalog it was built from (bound by the pool
manifest's sha256), so a pool copied alone into a fresh data folder refreshes; a catalog that
disagrees with the data service the refresh runs on is refused naming both."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
from pathlib import Path

import dagster as dg

from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.pool import CATALOG_FILE, catalog_disagreement, read_manifest, read_pool_catalog
from livesearch_pipeline.defs.construction.materialize import step_failures
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.fixtures import write_small_pool
from livesearch_pipeline_tests.defs.refresh.test_refresh_assets import POOL_CLOCK, refresh_definitions, run_refresh

DAY = dt.date(2026, 11, 25)


def _pool_alone(tmp_path: Path) -> Path:
    built = tmp_path / "built"
    write_small_pool(built, POOL_CLOCK)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copytree(built / "pool", fresh / "pool")  # the pool released alone: no construction folder
    return fresh


def test_the_pool_carries_its_catalog_bound_by_the_manifest(tmp_path: Path) -> None:
    fresh = _pool_alone(tmp_path)
    manifest = read_manifest(fresh / "pool")
    catalog_file = fresh / "pool" / CATALOG_FILE
    assert manifest.catalog_sha256 == hashlib.sha256(catalog_file.read_bytes()).hexdigest()
    assert not (fresh / "construction").exists()
    assert read_pool_catalog(fresh / "pool", fresh / "construction").get("daily") is not None


def test_a_pool_copied_alone_refreshes(tmp_path: Path) -> None:
    fresh = _pool_alone(tmp_path)
    result = run_refresh(refresh_definitions(fresh), DAY, dg.DagsterInstance.ephemeral())
    assert result.success, step_failures(result)
    assert (DataPaths(fresh).gold / f"gold_answers_{DAY}.manifest.json").is_file()


def test_an_edited_pool_catalog_is_refused_naming_it(tmp_path: Path) -> None:
    fresh = _pool_alone(tmp_path)
    catalog_file = fresh / "pool" / CATALOG_FILE
    catalog_file.write_text(catalog_file.read_text().replace('"role": "data"', '"role": "search"', 1))
    result = run_refresh(refresh_definitions(fresh), DAY, dg.DagsterInstance.ephemeral())
    assert not result.success
    cause = step_failures(result)[0]
    assert f"{catalog_file} has sha256" in cause and "modified after the pool was built" in cause


def test_a_catalog_that_disagrees_with_the_service_is_refused_naming_both(tmp_path: Path) -> None:
    fresh = _pool_alone(tmp_path)
    pool_catalog = read_pool_catalog(fresh / "pool", fresh / "construction")
    tools = read_manifest(fresh / "pool").counts["tool"]
    assert catalog_disagreement(pool_catalog, pool_catalog, tools) is None
    document = json.loads(pool_catalog.model_dump_json())
    for tool in document["tools"]:
        if tool["name"] == "daily":
            tool["fields"] = [f for f in tool["fields"] if f["name"] != "close"]
    drifted = Catalog.model_validate({**document, "service": "another-service/2 seed=9 clock=2026-11-25"})
    problem = catalog_disagreement(pool_catalog, drifted, tools)
    assert problem is not None and pool_catalog.service in problem and "another-service/2 seed=9" in problem
    assert "describes daily otherwise" in problem
    lacking = Catalog(service=drifted.service, tools=[t for t in pool_catalog.tools if t.name != "shibor"])
    assert "the service lacks shibor" in catalog_disagreement(pool_catalog, lacking, tools)
