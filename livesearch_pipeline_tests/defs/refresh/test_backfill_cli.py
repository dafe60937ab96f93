"""`livesearch refresh --date D` / `--start D1 --end D2`, run in-process as a user would run the CLI."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.refresh.test_refresh_assets import SERVICE_CLOCK, file_states, write_trimmed_pool

REFRESH_JOB = "daily_refresh"
FIRST, SECOND = dt.date(2026, 11, 24), dt.date(2026, 11, 25)


def use_data_root(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the CLI at `root` the way a shell would: by the environment alone.

    The resources read LIVESEARCH_DATA_DIR and LIVESEARCH_CLOCK when a run uses them, so the
    definitions another test of this process loaded earlier serve this root too: nothing is reloaded.
    """
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(root))
    monkeypatch.setenv("DAGSTER_HOME", str(root / "dagster_home"))
    monkeypatch.setenv("LIVESEARCH_CLOCK", SERVICE_CLOCK)
    monkeypatch.delenv("LIVESEARCH_DATA_SERVICE", raising=False)


def refresh_runs(root: Path) -> list[dg.DagsterRun]:
    with dg.DagsterInstance.from_config(str(root / "dagster_home")) as instance:
        return instance.get_runs(filters=dg.RunsFilter(job_name=REFRESH_JOB))


def frozen_paths(root: Path, days: list[dt.date]) -> list[Path]:
    store, paths = SnapshotStore(DataPaths(root).gold), DataPaths(root)
    return [p for day in days for p in (store.path_for(day), store.manifest_path_for(day), paths.served_file(day))]


@pytest.mark.slow
def test_backfill_writes_one_snapshot_per_date_equal_to_the_day_alone_and_a_rerun_changes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    alone, backfill = tmp_path / "alone", tmp_path / "backfill"
    write_trimmed_pool(alone, per_group=1)
    write_trimmed_pool(backfill, per_group=1)

    use_data_root(alone, monkeypatch)
    assert main(["refresh", "--date", SECOND.isoformat()]) == 0
    assert SnapshotStore(DataPaths(alone).gold).dates() == [SECOND]
    capsys.readouterr()

    use_data_root(backfill, monkeypatch)
    assert main(["refresh", "--start", FIRST.isoformat(), "--end", SECOND.isoformat()]) == 0
    first_output = capsys.readouterr().out
    store = SnapshotStore(DataPaths(backfill).gold)
    assert store.dates() == [FIRST, SECOND]
    runs = refresh_runs(backfill)
    assert sorted(run.tags["dagster/partition"] for run in runs) == [FIRST.isoformat(), SECOND.isoformat()]
    assert all(run.is_success for run in runs)
    assert first_output.count("written") == 2 and "verified" not in first_output
    # Point-in-time service: a backfilled day has the bytes the day itself would have had.
    assert store.path_for(SECOND).read_bytes() == SnapshotStore(DataPaths(alone).gold).path_for(SECOND).read_bytes()
    assert store.path_for(FIRST).read_bytes() != store.path_for(SECOND).read_bytes()

    before = file_states(*frozen_paths(backfill, [FIRST, SECOND]))
    assert main(["refresh", "--start", FIRST.isoformat(), "--end", SECOND.isoformat()]) == 0
    second_output = capsys.readouterr().out
    assert file_states(*frozen_paths(backfill, [FIRST, SECOND])) == before
    assert second_output.count("verified, identical to the frozen snapshot") == 2
    assert len(refresh_runs(backfill)) == 4  # one run per partition per backfill


def test_end_before_start_is_refused_before_anything_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    with pytest.raises(SystemExit, match=f"--end {FIRST} is before --start {SECOND}"):
        main(["refresh", "--start", SECOND.isoformat(), "--end", FIRST.isoformat()])
    assert not any(tmp_path.iterdir())


def test_refresh_needs_a_date_or_a_start(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exit_info:
        main(["refresh"])
    assert exit_info.value.code == 2
    assert "one of the arguments --date --start is required" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "line"), [
    (["refresh", "--date", "2026-11-28"], "livesearch refresh: error: 2026-11-28 is no trading day (no session in XSHG, "
                                          "XHKG or XNYS): the previous trading day is 2026-11-27, the next is 2026-11-30"),
    (["run", "--date", "2026-01-01"], "livesearch run: error: 2026-01-01 is no trading day (no session in XSHG, XHKG or "
                                      "XNYS): the previous trading day is 2025-12-31, the next is 2026-01-02"),
    (["refresh", "--start", "2026-11-28", "--end", "2026-11-29"],
     "livesearch refresh: error: no trading day from 2026-11-28 to 2026-11-29 (the previous trading day is "
     "2026-11-27, the next 2026-11-30)"),
    (["refresh", "--date", "2028-01-03"], "livesearch refresh: error: 2028-01-03 is after the last daily partition "
                                          "2027-12-31 (the end of the pinned trading calendars: extend them by a year, "
                                          "docs/operations.md, Trading calendars)"),
])
def test_a_day_that_is_no_partition_is_refused_in_one_line_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], line: str):
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == line
    assert not (tmp_path / "dagster_home").exists() and not (tmp_path / "gold").exists()


def test_a_range_refreshes_the_trading_days_between_its_ends():
    from livesearch_pipeline.pipeline_commands import _dates

    days = _dates(argparse.Namespace(date=None, start=dt.date(2026, 12, 24), end=dt.date(2027, 1, 4)))
    # Christmas trades in Shanghai; the weekends and New Year's Day do not trade anywhere.
    assert [d.isoformat() for d in days] == ["2026-12-24", "2026-12-25", "2026-12-28", "2026-12-29", "2026-12-30",
                                             "2026-12-31", "2027-01-04"]
