"""The synthetic market never rewrites its past (issue 11, item 0).

Every data tool is called (prefix_probe.py) for a few entities of each asset class, with windows
ending on or before 2026-11-20, by services built in separate processes (no module-level cache
leaks between them) that differ in
- the calendars' span: ends 2026-12-31, the default 2027-12-31, and far ends (2030-12-31 for
  XHKG/XNYS; XSHG cannot go past its holiday supplement), set with LIVESEARCH_CALENDAR_ENDS;
- the wall clock: the day itself at 19:30 New York time, and a year later (time-machine).
The records must be byte-identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest

from livesearch_pipeline.core.calendars import HORIZON_ENV

pytestmark = pytest.mark.slow

VARIANTS = {
    # name: (LIVESEARCH_CALENDAR_ENDS, wall clock or None for the real one)
    "ends-2026-on-the-day": ("XSHG=2026-12-31,XHKG=2026-12-31,XNYS=2026-12-31", "2026-11-20T19:30:00-05:00"),
    "default-ends-real-clock": ("", None),
    "far-ends-a-year-later": ("XHKG=2030-12-31,XNYS=2030-12-31", "2027-11-20T19:30:00-05:00"),
}
EXPECTED_LAST_SESSIONS = {
    "ends-2026-on-the-day": {"XSHG": "2026-12-31", "XHKG": "2026-12-31", "XNYS": "2026-12-31"},
    "default-ends-real-clock": {"XSHG": "2027-12-31", "XHKG": "2027-12-31", "XNYS": "2027-12-31"},
    "far-ends-a-year-later": {"XSHG": "2027-12-31", "XHKG": "2030-12-31", "XNYS": "2030-12-31"},
}


@pytest.fixture(scope="module")
def probes(tmp_path_factory) -> dict[str, dict]:
    out_dir = tmp_path_factory.mktemp("prefix")
    procs = {}
    for name, (ends, wall_clock) in VARIANTS.items():
        env = {k: v for k, v in os.environ.items() if k != HORIZON_ENV}
        if ends:
            env[HORIZON_ENV] = ends
        cmd = [sys.executable, "-m", "livesearch_pipeline_tests.dataservice.prefix_probe", str(out_dir / f"{name}.json")]
        if wall_clock:
            cmd += ["--wall-clock", wall_clock]
        procs[name] = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = {}
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=1200)
        assert proc.returncode == 0, f"probe {name} failed:\n{err[-3000:]}"
        results[name] = json.loads((out_dir / f"{name}.json").read_text(encoding="utf-8"))
    return results


def test_the_variants_really_differ_in_span_and_wall_clock(probes):
    for name, payload in probes.items():
        assert payload["spans"] == EXPECTED_LAST_SESSIONS[name], name
    assert probes["ends-2026-on-the-day"]["wall_clock"].startswith("2026-11-21T00:30")  # 19:30 EST in UTC
    assert probes["far-ends-a-year-later"]["wall_clock"].startswith("2027-11-21T00:30")


def test_every_data_tool_is_probed_with_real_records(probes):
    from livesearch_pipeline.dataservice.server import collect_tool_specs

    data_tools = {s.name for s in collect_tool_specs() if s.meta.role == "data"}
    calls = probes["default-ends-real-clock"]["calls"]
    assert {c["tool"] for c in calls} == data_tools
    with_records = {c["tool"] for c in calls if c["result"].get("items")}
    assert data_tools - with_records == set(), "tools never returning a record would prove nothing"
    errors = [c for c in calls if "tool_error" in c["result"]]
    assert len(errors) <= len(calls) // 20, errors[:5]


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "default-ends-real-clock"])
def test_records_are_byte_identical_across_spans_and_wall_clocks(probes, variant):
    reference = probes["default-ends-real-clock"]["calls"]
    other = probes[variant]["calls"]
    assert [(c["tool"], c["args"]) for c in other] == [(c["tool"], c["args"]) for c in reference]
    differing: dict[str, list] = defaultdict(list)
    for ref, got in zip(reference, other):
        a = json.dumps(ref["result"], ensure_ascii=False, sort_keys=True)
        b = json.dumps(got["result"], ensure_ascii=False, sort_keys=True)
        if a != b:
            differing[ref["tool"]].append(ref["args"])
    assert not differing, f"{variant}: records differ for {len(differing)} tools: " + "; ".join(
        f"{tool} {args[0]}" for tool, args in sorted(differing.items())
    )
