"""Smoke test of benchmarks/construction.py: a tiny tool-restricted build through its CLI entry."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from livesearch_pipeline.construction.pool import MANIFEST_FILE, POOL_FILE

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "construction.py"


def _benchmark_module():
    spec = importlib.util.spec_from_file_location("construction_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_restricted_benchmark_prints_every_figure_and_passes_the_invariants(tmp_path, capsys):
    benchmark = _benchmark_module()
    code = benchmark.main(["--clock", "2026-11-27", "--out", str(tmp_path), "--tools", "shibor,cn_cpi"])
    out = capsys.readouterr().out
    assert code == 0, out
    for name in ("questions", "tools", "data services", "asset classes", "visibility levels", "tiers",
                 "refresh classes", "date gate failures", "non-data tools in programs", "build time"):
        assert name in out, name
    assert "PASS  date gate failures" in out and "PASS  non-data tools in programs" in out
    assert "n/a   questions" in out, "size targets do not apply to a restricted build"
    assert "stage timings (s, wall, Dagster steps): probe" in out and "peak RSS" in out
    assert (tmp_path / "pool" / POOL_FILE).stat().st_size > 0 and (tmp_path / "pool" / MANIFEST_FILE).exists()


def test_size_targets_fail_loudly_on_a_pool_that_misses_them():
    benchmark = _benchmark_module()
    from livesearch_pipeline.core.catalog import Catalog

    figures = benchmark.pool_figures([], Catalog(service="empty", tools=[]), 1.0, full_catalog=True)
    verdicts = {f.name: f.passed for f in figures}
    assert verdicts["questions"] is False and verdicts["tools"] is False and verdicts["tiers"] is False
    assert verdicts["date gate failures"] is True
