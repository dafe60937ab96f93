"""Issue 30, finding 20: `kill <pid of livesearch ui>` stops the UI, not just the wrapper.

`livesearch ui` runs `dagster dev` (webserver, daemon, code servers) in a process group of its own
and passes SIGTERM and SIGINT on to it. The test starts it on a free loopback port, waits for the
webserver to answer, signals the wrapper's pid alone (as `kill <pid>` or Ctrl-C to it would), and
requires the port to stop answering and every process of the UI to be gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from livesearch_pipeline_tests.defs.dagster_processes import (
    LOOPBACK, alive, stop_processes, ui_members, wait_for_server_info,
)
from livesearch_pipeline_tests.defs.refresh.test_webserver_backfill import STARTUP_TIMEOUT_S, start_livesearch_ui

STOP_TIMEOUT_S = 60.0


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2.0).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signalling_livesearch_ui_stops_the_webserver_and_the_daemon(tmp_path: Path, sig: signal.Signals) -> None:
    ui, port, _ = start_livesearch_ui(tmp_path)
    members: list[int] = []
    try:
        base_url = f"http://{LOOPBACK}:{port}"
        wait_for_server_info(base_url, [ui], STARTUP_TIMEOUT_S)
        members = [pid for pid in ui_members(ui) if pid != ui.popen.pid]
        assert len(members) >= 3, f"expected dagster dev, its webserver and daemon; got {members}"

        os.kill(ui.popen.pid, sig)  # the wrapper alone, as `kill <pid>` does
        try:
            code = ui.popen.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"livesearch ui did not exit within {STOP_TIMEOUT_S:.0f} s of {sig.name}\n{ui.tail()}")
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and (_answers(f"{base_url}/server_info") or any(map(alive, members))):
            time.sleep(0.2)
        assert not _answers(f"{base_url}/server_info"), "the webserver still answers after livesearch ui exited"
        survivors = [pid for pid in members if alive(pid)]
        assert not survivors, f"processes of the UI survived {sig.name} to the wrapper: {survivors}\n{ui.tail()}"
        assert code is not None
    finally:
        stop_processes([ui])
        for pid in members:  # never leave a UI running, whatever the outcome
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
