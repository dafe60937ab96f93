"""benchmarks/refresh.py runs (a) core, (b) in-process job, (c) a backfill over trading days on a tiny pool.

Timings are not asserted (shared CI cores); the phases' outputs are.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.fixtures import write_small_pool

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "refresh.py"
CLOCK = dt.date(2026, 3, 16)
DAY = dt.date(2026, 3, 13)
ENV = ("DAGSTER_HOME", "LIVESEARCH_DATA_DIR", "LIVESEARCH_CLOCK", "LIVESEARCH_DATA_SERVICE")


@pytest.fixture
def bench():
    spec = importlib.util.spec_from_file_location("refresh_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    saved = {name: os.environ.get(name) for name in ENV}
    yield module
    del sys.modules[spec.name]
    for name, value in saved.items():  # the benchmark points the job's resources at its scratch roots
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.mark.slow
def test_benchmark_runs_every_phase_on_a_tiny_pool(bench, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    manifest = write_small_pool(tmp_path / "source", CLOCK)
    work = tmp_path / "work"
    exit_code = bench.main(["--pool", str(tmp_path / "source" / "pool"), "--clock", CLOCK.isoformat(),
                            "--date", DAY.isoformat(), "--partitions", "1", "--repeat", "2",
                            "--work", str(work)])
    out = capsys.readouterr().out
    for label in ("(a) core refresh s", "(b) dagster job s", "dagster overhead", "(d) machinery s", "(c) backfill partitions  1",
                  "programs/s", "peak RSS MiB"):
        assert label in out, out
    assert f"pool programs            {manifest.questions} (date" in out, out
    assert out.count("(a) core      ") == 2 and out.count("(b) dagster   ") == 2  # alternating repeats
    assert out.count(f"(d) machinery {DAY}") == 2  # after one untimed recording pair
    assert out.count("PASS") + out.count("FAIL") == 3
    rss = re.search(r"peak RSS MiB +(\d+) \(\(a\)-\(d\), one process\)", out)
    assert rss is not None and int(rss.group(1)) > 50, out
    assert out.count("(a') cold     ") == 1 and "backfill overhead" in out  # one backfill date, run cold
    assert exit_code == (0 if "FAIL" not in out else 1)

    # Each phase froze its own snapshot; all agree byte for byte (the service answers point-in-time).
    cores = [SnapshotStore(work / f"core_{n}" / "gold") for n in range(2)]
    jobs = [SnapshotStore(work / f"jobs_{n}" / "gold") for n in range(2)]
    frozen = {store.path_for(DAY).read_bytes() for store in cores + jobs}
    assert len(frozen) == 1
    served = {DataPaths(work / name).served_file(DAY).read_bytes() for name in ("core_0", "core_1", "jobs_0", "jobs_1")}
    assert len(served) == 1  # (a) writes the same served file as the job
    assert jobs[0].dates() == jobs[1].dates() == [DAY]
    machinery = [SnapshotStore(work / f"machinery_{kind}_{n}" / "gold") for kind in ("core", "jobs") for n in range(3)]
    assert {store.path_for(DAY).read_bytes() for store in machinery} == frozen  # replayed answers, same bytes
    # The backfilled day (its own root) and the same day refreshed cold by a standalone process agree.
    previous = DAY - dt.timedelta(days=1)  # the trading day before (a Thursday)
    backfilled, cold = SnapshotStore(work / "backfill" / "gold"), SnapshotStore(work / "cold_0" / "gold")
    assert backfilled.dates() == cold.dates() == [previous]
    assert backfilled.path_for(previous).read_bytes() == cold.path_for(previous).read_bytes()
    assert (work / "dagster_home" / "dagster.yaml").read_bytes() == (SCRIPT.parents[1] / "dagster.yaml").read_bytes()


def test_benchmark_rejects_a_date_after_the_clock_and_a_missing_pool(bench, tmp_path: Path):
    with pytest.raises(SystemExit, match="after the service clock"):
        bench.run_benchmark(tmp_path, pool=tmp_path, clock=CLOCK, day=CLOCK + dt.timedelta(days=1),
                            partitions=1, shards=1)
    with pytest.raises(SystemExit, match="no questions.jsonl"):
        bench.prepare_pool(tmp_path, tmp_path, CLOCK)


@pytest.mark.slow
def test_the_ui_and_the_command_line_refresh_the_same_day_and_are_compared(bench, tmp_path: Path, capsys):
    """(e): one day from `livesearch refresh` and from a real `livesearch ui` (the asset page's launch)."""
    write_small_pool(tmp_path / "source", CLOCK)
    work = tmp_path / "work"
    exit_code = bench.main(["--ui-vs-cli", "--pool", str(tmp_path / "source" / "pool"), "--clock", CLOCK.isoformat(),
                            "--date", DAY.isoformat(), "--repeat", "1", "--work", str(work)])
    out = capsys.readouterr().out
    for route in ("cli", "ui "):
        assert re.search(rf"\(e\) {route} {DAY}: refresh \d+\.\d\d s \([\d,]+ programs/s, 1 shard\), run", out), out
    assert "(e) refresh (median)" in out and "UI/CLI" in out
    assert out.count("PASS") + out.count("FAIL") == 1 and exit_code == (0 if "PASS" in out else 1)
    # The two routes froze the same day with the same bytes, each in its own data root and instance.
    cli, ui = SnapshotStore(work / "cli" / "gold"), SnapshotStore(work / "ui" / "gold")
    assert cli.dates() == ui.dates() == [DAY]
    assert cli.path_for(DAY).read_bytes() == ui.path_for(DAY).read_bytes()
