"""Issue 42: a 3-day backfill launched from `gold_answers`' asset page in a real browser, through to success.

`livesearch ui` runs on a free loopback port with a fresh Dagster home and a data root holding the
small test pool, at a fixed clock (LIVESEARCH_CLOCK). Debian's headless Chromium, driven by
playwright, opens the asset page of `gold_answers` and does what an analyst does: *Materialize…*,
confirms the dialogs the UI shows first ("Additional assets will be materialized" naming
served_questions, the multi-asset's other key; and, since this pool was copied rather than built in
this instance, "Are you sure?" naming question_pool), gets the partition dialog (never the
Launchpad), types a range of three trading days, and clicks *Launch backfill*. The daemon then
runs one run per day; the test waits for the backfill to succeed and checks the three snapshots.
Skips, naming the reason, without Chromium (`apt-get install chromium`; .ci/run installs it) or
playwright.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.dagster_processes import (
    LOOPBACK, SUCCESSFUL_BACKFILL_STATUSES, alive, graphql, stop_processes, ui_members, wait_for_backfill,
    wait_for_partition_set, wait_for_server_info,
)
from livesearch_pipeline_tests.defs.fixtures import write_small_pool
from livesearch_pipeline_tests.defs.refresh.test_webserver_backfill import (
    CLOCK, PARTITION_SET, STARTUP_TIMEOUT_S, start_livesearch_ui,
)
from livesearch_pipeline_tests.site.test_browser import _unavailable, browser

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process groups from /proc"),
    pytest.mark.skipif(_unavailable() is not None, reason=_unavailable() or ""),
]

DAYS = ("2025-06-25", "2025-06-26", "2025-06-27")  # Wednesday to Friday: every exchange trades
RANGE = f"[{DAYS[0]}...{DAYS[-1]}]"
# Bounds, not expectations: three runs one after another (one backfill run at a time), each a run
# worker's start and a small refresh, plus the backfill daemon's 30 s passes, on loaded shared cores.
BACKFILL_TIMEOUT_S = 600.0
BACKFILLS = "query { partitionBackfillsOrError(limit: 5) { ... on PartitionBackfills { results { id } } } }"


def _click_confirmations(page, seen: list[str]) -> None:
    """Confirm every confirmation dialog the UI shows before its partition dialog; record their text."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if page.locator("text=Launch runs to materialize").count():
            return
        confirm = page.get_by_role("button", name="Confirm")
        if confirm.count() and confirm.first.is_visible():
            seen.append(page.locator(".bp5-dialog, [role=dialog]").last.inner_text())
            confirm.first.click()
        launchpad = page.locator("text=Launchpad")
        assert not (launchpad.count() and launchpad.first.is_visible()), "Materialize… opened the Launchpad"
        time.sleep(0.3)
    raise AssertionError(f"the partition dialog never opened; dialogs seen: {seen}")


def test_a_three_day_backfill_from_the_gold_answers_page_succeeds(tmp_path: Path) -> None:
    ui, port, home = start_livesearch_ui(tmp_path)
    members: list[int] = []
    base_url = f"http://{LOOPBACK}:{port}"
    try:
        write_small_pool(tmp_path / "data", CLOCK)  # while the UI starts
        wait_for_server_info(base_url, [ui], STARTUP_TIMEOUT_S)
        wait_for_partition_set(base_url, PARTITION_SET, [ui], STARTUP_TIMEOUT_S)
        members = ui_members(ui)
        seen: list[str] = []
        with browser() as context:
            page = context.new_page()
            page.goto(f"{base_url}/assets/gold_answers", wait_until="load")
            materialize = page.get_by_role("button", name="Materialize…")
            materialize.wait_for(timeout=90_000)
            materialize.click()
            _click_confirmations(page, seen)
            dialog = page.locator(".bp5-dialog").filter(has_text="Launch runs to materialize 2 assets")
            dialog.wait_for(timeout=60_000)
            assert dialog.get_by_text("Partition selection").count() == 1
            # The dialog opens on the last 90 days; these days are older.
            show_all = dialog.get_by_text("Show all partitions")
            if show_all.count():
                show_all.click()
            range_input = dialog.locator("input[type=text]").first
            range_input.wait_for(timeout=60_000)
            range_input.fill(RANGE)
            range_input.press("Enter")
            dialog.get_by_text("3 partitions", exact=True).wait_for(timeout=30_000)
            launch = dialog.get_by_role("button", name="Launch backfill")
            launched = time.monotonic()
            launch.click()
            page.get_by_text("Created backfill").first.wait_for(timeout=60_000)
        assert any("served_questions" in text for text in seen), seen  # the multi-asset's other key is named

        [backfill] = graphql(base_url, BACKFILLS)["partitionBackfillsOrError"]["results"][:1]
        state = wait_for_backfill(base_url, backfill["id"], [ui], BACKFILL_TIMEOUT_S, poll_s=2.0)
        print(f"\n3-day backfill from the asset page: {state['status']} {time.monotonic() - launched:.0f} s after "
              f"Launch backfill")
        assert state["status"] in SUCCESSFUL_BACKFILL_STATUSES, state
        assert sorted(state["partitionNames"]) == list(DAYS)
        assert [r["status"] for r in state["runs"]] == ["SUCCESS"] * 3, state["runs"]
        store = SnapshotStore(DataPaths(tmp_path / "data").gold)
        assert [d.isoformat() for d in store.dates()] == list(DAYS)
        for day in DAYS:
            assert store.verify(dt.date.fromisoformat(day)).records > 0
    finally:
        stop_processes([ui])
        for pid in members:  # never leave a UI running, whatever the outcome
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
