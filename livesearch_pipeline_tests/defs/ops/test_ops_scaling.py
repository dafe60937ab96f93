"""benchmarks/scaling.py: the refresh is measured on pools scaled by entity, and the report judges growth."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "scaling.py"


@pytest.fixture(scope="module")
def scaling():
    spec = importlib.util.spec_from_file_location("scaling_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_entities_grow_with_programs_and_avoid_shape_multiples(scaling):
    assert scaling.entities_for(1_000, 20) == 50
    assert scaling.entities_for(100_000, 20) == 5_000
    shapes = scaling.SHAPES
    # As many entities as shapes would align them: the count is nudged one past.
    assert scaling.entities_for(shapes * 20, 20) == shapes + 1
    assert all(scaling.entities_for(n, 20) % shapes for n in range(20, 5_000, 20))


def test_a_small_run_is_parsed_and_growth_is_judged(scaling):
    small = scaling.run_refresh(350, 20, 0.2)
    assert (small.programs, small.entities, small.not_ok) == (350, 18, 0)
    assert 0 < small.unique_per_program < 1 and small.wall_s > 0 and small.cpu_s > 0 and small.peak_rss_mib > 50

    linear = scaling.RefreshPoint(3_500, 180, small.wall_s * 10, small.cpu_s * 10, small.unique_per_program,
                                  small.peak_rss_mib * 2, 0)
    lines, ok = scaling.refresh_report([small, linear])
    assert ok and "10.0x / 10.0x for 10x programs" in lines[-2] and lines[-1].startswith("PASS")
    steep = scaling.RefreshPoint(3_500, 180, small.wall_s * 13, small.cpu_s * 13, small.unique_per_program,
                                 small.peak_rss_mib, 0)
    lines, ok = scaling.refresh_report([small, steep])
    assert not ok and lines[-1].startswith("FAIL  growth")
