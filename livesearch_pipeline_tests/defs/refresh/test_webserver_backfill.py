"""End to end through the real services: `dagster-webserver` and `dagster-daemon` run headless on
127.0.0.1 against a temporary SQLite instance. Both backfill routes of the UI are launched
through the GraphQL API exactly as the UI launches them: a two-partition backfill of the
`daily_refresh` job (the job page), and a two-partition backfill of `gold_answers` alone (the
asset page's Materialize). The daemon submits and runs them; the frozen snapshots, the instance's
event log and each date's check results (as the asset's Checks tab reads them) are checked.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import dagster as dg
import pytest

from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.defs.refresh import checks as refresh_checks
from livesearch_pipeline.infra.ui import STOP_KILL_S
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.dagster_processes import (
    ui_members,
    LAUNCH_BACKFILL_MUTATION,
    LOOPBACK,
    SUCCESSFUL_BACKFILL_STATUSES,
    DagsterProcess,
    DagsterProcessError,
    asset_check_executions,
    asset_page_backfill_params,
    free_loopback_port,
    graphql_response,
    launch_backfill,
    launch_job_backfill,
    listening_tcp_addresses,
    process_group_members,
    start_process,
    stop_livesearch_ui,
    stop_processes,
    wait_for_backfill,
    wait_for_partition_set,
    wait_for_server_info,
)
from livesearch_pipeline_tests.defs.fixtures import write_small_pool

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads listening sockets and process groups from /proc"),
]

REPO_ROOT = Path(__file__).resolve().parents[3]
VENV_BIN = Path(sys.executable).parent
CLOCK = dt.date(2025, 6, 27)  # a Friday: every exchange has a session on both partitions
PARTITIONS = ("2025-06-26", "2025-06-27")
# The asset page's backfill freezes two other days of the same week, so it serves and freezes
# them itself rather than finding the job backfill's files.
ASSET_PARTITIONS = ("2025-06-24", "2025-06-25")
PARTITION_SET = "daily_refresh_partition_set"
WORKSPACE = str(REPO_ROOT / "workspace.yaml")
# Bounds, not expectations. Measured on 2 cores shared with other jobs (load ~10): ready in ~25 s,
# backfill done ~240 s after launch: two runs of ~100 s each, one after the other (dagster.yaml
# admits one backfill run at a time), plus the backfill daemon's fixed 30 s passes.
STARTUP_TIMEOUT_S = 150.0
BACKFILL_TIMEOUT_S = 480.0
GOLD = dg.AssetKey("gold_answers")
SERVED = dg.AssetKey("served_questions")
GOLD_CHECK_NAMES = frozenset(
    key.name
    for check in vars(refresh_checks).values()
    if isinstance(check, dg.AssetChecksDefinition)
    for key in check.check_keys
    if key.asset_key == GOLD
)


@dataclass
class Services:
    base_url: str
    port: int
    dagster_home: Path
    data: DataPaths
    env: dict[str, str]
    log_dir: Path
    processes: list[DagsterProcess]

    @property
    def webserver(self) -> DagsterProcess:
        return self.processes[0]

    def start_daemon(self) -> DagsterProcess:
        """The daemon, started once per module (each test may be run alone)."""
        for process in self.processes:
            if process.name == "daemon":
                process.ensure_running()
                return process
        daemon = start_process("daemon", [str(VENV_BIN / "dagster-daemon"), "run", "-w", WORKSPACE],
                               cwd=REPO_ROOT, env=self.env, log_dir=self.log_dir)
        self.processes.append(daemon)
        return daemon


def service_env(dagster_home: Path, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIVESEARCH_", "DAGSTER_"))}
    env.update({
        "DAGSTER_HOME": str(dagster_home),
        "LIVESEARCH_DATA_DIR": str(data_dir),
        "LIVESEARCH_CLOCK": CLOCK.isoformat(),
        "LITELLM_OFFLINE_MODE": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONUNBUFFERED": "1",
    })
    return env


def start_livesearch_ui(tmp_path: Path) -> tuple[DagsterProcess, int, Path]:
    """`livesearch ui` on a free loopback port with a fresh data root and Dagster home under
    `tmp_path`: (its process, its port, its Dagster home)."""
    data_dir, dagster_home, logs = tmp_path / "data", tmp_path / "dagster_home", tmp_path / "logs"
    for directory in (data_dir, logs):
        directory.mkdir()
    port = free_loopback_port()
    ui = start_process("livesearch-ui", [str(VENV_BIN / "livesearch"), "ui", "--port", str(port)],
                       cwd=tmp_path, env=service_env(dagster_home, data_dir), log_dir=logs)
    return ui, port, dagster_home


def stop_all(processes: list[DagsterProcess]) -> None:
    leftover = {name: pids for name, pids in stop_processes(processes).items() if pids}
    if leftover:
        raise AssertionError(f"processes survived SIGTERM and SIGKILL: {leftover}")


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    """The webserver, already starting; the test starts the daemon itself (see below)."""
    root = tmp_path_factory.mktemp("webserver-backfill")
    data_dir, dagster_home, logs = root / "data", root / "dagster_home", root / "logs"
    for directory in (data_dir, dagster_home, logs):
        directory.mkdir()
    shutil.copyfile(REPO_ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    env = service_env(dagster_home, data_dir)
    port = free_loopback_port()
    processes: list[DagsterProcess] = []
    try:
        processes.append(start_process(
            "webserver", [str(VENV_BIN / "dagster-webserver"), "-w", WORKSPACE, "-h", LOOPBACK, "-p", str(port)],
            cwd=REPO_ROOT, env=env, log_dir=logs))
        # The pool is built while the webserver loads its code location: neither needs the other.
        write_small_pool(data_dir, CLOCK)
        with mock.patch.dict(os.environ, {"DAGSTER_HOME": str(dagster_home)}):
            yield Services(base_url=f"http://{LOOPBACK}:{port}", port=port, dagster_home=dagster_home,
                           data=DataPaths(data_dir), env=env, log_dir=logs, processes=processes)
    finally:
        stop_all(processes)


def run_failure_messages(instance: dg.DagsterInstance, runs: list[dict[str, Any]]) -> str:
    failure_types = {dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.RUN_FAILURE}
    lines = []
    for run in runs:
        if run["status"] == "SUCCESS":
            continue
        lines.append(f"run {run['runId']} ({run['status']}):")
        for entry in instance.all_logs(run["runId"], of_type=failure_types):
            error = entry.dagster_event.event_specific_data.error if entry.dagster_event else None
            lines.append(f"  {entry.message}\n{error.to_string() if error else ''}")
    return "\n".join(lines)


def test_backfill_through_graphql_freezes_both_partitions(services: Services) -> None:
    started = time.monotonic()
    info = wait_for_server_info(services.base_url, services.processes, STARTUP_TIMEOUT_S)
    assert "dagster_webserver_version" in info
    handle = wait_for_partition_set(services.base_url, PARTITION_SET, services.processes, STARTUP_TIMEOUT_S)
    ready = time.monotonic()

    # The webserver's Dagster-managed code server talks over a Unix socket: the only TCP
    # listener in its process tree is the UI itself, on the loopback address.
    assert listening_tcp_addresses(process_group_members(services.webserver.pgid)) == {(LOOPBACK, services.port)}

    backfill_id = launch_job_backfill(services.base_url, handle, PARTITIONS, title="webserver backfill test")
    # The backfill daemon wakes every 30 s; started now, its first iteration finds the backfill
    # instead of the next one (the backfill is stored in the instance, so order is otherwise free).
    daemon = services.start_daemon()
    with dg.DagsterInstance.from_config(str(services.dagster_home)) as instance:
        try:
            state = wait_for_backfill(services.base_url, backfill_id, services.processes, BACKFILL_TIMEOUT_S)
        except DagsterProcessError as exc:
            tails = "\n".join(p.tail() for p in services.processes)
            runs = instance.get_runs(dg.RunsFilter.for_backfill(backfill_id))
            failures = run_failure_messages(instance, [{"runId": r.run_id, "status": r.status.value} for r in runs])
            pytest.fail(f"{exc}\n{failures}\n{tails}")
        finished = time.monotonic()
        print(f"\nwebserver ready {ready - started:.1f} s after the pool was built; backfill {state['status']} "
              f"{finished - ready:.1f} s after launch; total {finished - started:.1f} s")
        assert listening_tcp_addresses(process_group_members(daemon.pgid)) == set()
        if state["status"] not in SUCCESSFUL_BACKFILL_STATUSES:
            tails = "\n".join(p.tail() for p in services.processes)
            pytest.fail(f"backfill {backfill_id} ended {state['status']}: {state['error']}\n"
                        f"{run_failure_messages(instance, state['runs'])}\n{tails}")

        partition_of_run = {r["runId"]: next(t["value"] for t in r["tags"] if t["key"] == "dagster/partition")
                            for r in state["runs"]}
        assert sorted(partition_of_run.values()) == sorted(PARTITIONS), "one run per partition"
        assert {r["status"] for r in state["runs"]} == {"SUCCESS"}

        store = SnapshotStore(services.data.gold)
        manifests = {key: store.verify(dt.date.fromisoformat(key)) for key in PARTITIONS}
        for key, manifest in manifests.items():
            assert store.path_for(dt.date.fromisoformat(key)).is_file()
            assert manifest.records > 0
            assert services.data.served_file(dt.date.fromisoformat(key)).is_file()

        # Only this backfill's runs count: the RUNNING-by-default schedule may add a run of its own
        # if the test happens to straddle 18:30 New York time.
        records = [r for r in instance.fetch_materializations(GOLD, limit=50).records if r.run_id in partition_of_run]
        assert sorted(r.partition_key for r in records) == sorted(PARTITIONS), "one gold event per partition"
        for record in records:
            key = record.partition_key
            assert partition_of_run[record.run_id] == key
            metadata = record.asset_materialization.metadata
            assert metadata["sha256"].value == manifests[key].sha256, f"event of {key} names the frozen snapshot"

        evaluations = [
            (partition_of_run[run_id], entry.dagster_event.event_specific_data)
            for run_id in partition_of_run
            for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        ]
        passed = {(key, evaluation.check_name) for key, evaluation in evaluations if evaluation.passed}
        failed = [(key, evaluation.check_name, evaluation.metadata) for key, evaluation in evaluations
                  if not evaluation.passed]
        assert not failed
        assert GOLD_CHECK_NAMES, "the refresh checks module defines checks on gold_answers"
        assert passed == {(key, name) for key in PARTITIONS for name in GOLD_CHECK_NAMES}


def test_livesearch_ui_listens_on_loopback_only(tmp_path: Path) -> None:
    """`livesearch ui` (dagster dev: webserver, daemon, code server) opens no TCP port beyond 127.0.0.1."""
    ui, port, dagster_home = start_livesearch_ui(tmp_path)
    members: list[int] = []
    try:
        base_url = f"http://{LOOPBACK}:{port}"
        wait_for_server_info(base_url, [ui], STARTUP_TIMEOUT_S)
        wait_for_partition_set(base_url, PARTITION_SET, [ui], STARTUP_TIMEOUT_S)
        members = ui_members(ui)  # dagster dev runs in a group of its own (signals are forwarded to it)
        assert len(members) >= 3, f"expected dagster dev, its webserver, daemon and code server; got {members}"
        listeners = listening_tcp_addresses(members)
        assert (LOOPBACK, port) in listeners
        assert {address for address, _ in listeners} == {LOOPBACK}, f"listening beyond loopback: {listeners}"
        assert (dagster_home / "dagster.yaml").read_bytes() == (REPO_ROOT / "dagster.yaml").read_bytes()
    finally:
        survivors = stop_livesearch_ui(ui, members, grace_s=STOP_KILL_S + 15.0)
    assert not survivors, f"processes of the UI survived its stop: {survivors}\n{ui.tail()}"


def test_asset_page_backfill_of_gold_alone_serves_freezes_and_finds_checks_by_date(services: Services) -> None:
    """The README's first route: open `gold_answers`, Materialize, select two days."""
    wait_for_server_info(services.base_url, services.processes, STARTUP_TIMEOUT_S)
    wait_for_partition_set(services.base_url, PARTITION_SET, services.processes, STARTUP_TIMEOUT_S)
    for key in ASSET_PARTITIONS:
        assert not services.data.served_file(dt.date.fromisoformat(key)).exists()

    # Selected alone, gold_answers is refused by the server with a message naming its partner.
    status, body = graphql_response(services.base_url, LAUNCH_BACKFILL_MUTATION, {"backfillParams": {
        "assetSelection": [{"path": GOLD.path}], "partitionNames": list(ASSET_PARTITIONS), "fromFailure": False,
    }})
    refused = body["data"]["launchPartitionBackfill"]
    assert refused["__typename"] == "PythonError" and "served_questions" in refused["message"], (status, refused)

    # The UI never sends that: Materialize on gold_answers first adds served_questions (it names
    # it in "Additional assets will be materialized"), then the dialog launches the backfill.
    params, added = asset_page_backfill_params(services.base_url, [GOLD.path], ASSET_PARTITIONS)
    assert added == [SERVED.path]
    assert sorted(k["path"] for k in params["assetSelection"]) == sorted([GOLD.path, SERVED.path])
    print(f"\nthe asset page launches {'a job' if 'selector' in params else 'a pure asset'} backfill: {params}")
    backfill_id = launch_backfill(services.base_url, {**params, "title": "asset page backfill test"})
    services.start_daemon()
    with dg.DagsterInstance.from_config(str(services.dagster_home)) as instance:
        try:
            state = wait_for_backfill(services.base_url, backfill_id, services.processes, BACKFILL_TIMEOUT_S)
        except DagsterProcessError as exc:
            runs = instance.get_runs(dg.RunsFilter.for_backfill(backfill_id))
            failures = run_failure_messages(instance, [{"runId": r.run_id, "status": r.status.value} for r in runs])
            pytest.fail(f"{exc}\n{failures}\n" + "\n".join(p.tail() for p in services.processes))
        if state["status"] not in SUCCESSFUL_BACKFILL_STATUSES or {r["status"] for r in state["runs"]} != {"SUCCESS"}:
            pytest.fail(f"backfill {backfill_id} ended {state['status']}: {state['error']}\n"
                        f"{run_failure_messages(instance, state['runs'])}\n"
                        + "\n".join(p.tail() for p in services.processes))
        partition_of_run = {r["runId"]: next(t["value"] for t in r["tags"] if t["key"] == "dagster/partition")
                            for r in state["runs"]}
        assert sorted(partition_of_run.values()) == sorted(ASSET_PARTITIONS), "one run per partition"

        store = SnapshotStore(services.data.gold)
        manifests = {key: store.verify(dt.date.fromisoformat(key)) for key in ASSET_PARTITIONS}
        for key in ASSET_PARTITIONS:
            assert services.data.served_file(dt.date.fromisoformat(key)).is_file()
        for asset in (SERVED, GOLD):
            records = [r for r in instance.fetch_materializations(asset, limit=50).records
                       if r.run_id in partition_of_run]
            assert sorted(r.partition_key for r in records) == sorted(ASSET_PARTITIONS), asset
            for record in records:
                assert partition_of_run[record.run_id] == record.partition_key, "served and gold of D in D's run"
                materialization = record.asset_materialization
                # One code version: the asset's (the event's tag) is the one the manifest records.
                assert materialization.tags["dagster/code_version"] == manifests[record.partition_key].code_version
                assert materialization.tags["dagster/code_version"] != record.run_id

    # Each date's check results, as the asset's Checks tab finds them for that date.
    assert GOLD_CHECK_NAMES
    for key in ASSET_PARTITIONS:
        for name in sorted(GOLD_CHECK_NAMES):
            executions = [e for e in asset_check_executions(services.base_url, GOLD.path, name, partition=key)
                          if e["runId"] in partition_of_run]
            assert len(executions) == 1, (key, name, executions)
            (execution,) = executions
            assert execution["status"] == "SUCCEEDED", (key, name, execution)
            assert execution["partition"] == key and execution["runId"] != "", execution
            assert execution["evaluation"] == {"checkName": name, "partition": key, "success": True}
            assert partition_of_run[execution["runId"]] == key
        # Nothing of this backfill was recorded without a partition (the "Partition —" rows).
        for name in GOLD_CHECK_NAMES:
            unpartitioned = asset_check_executions(services.base_url, GOLD.path, name, partition="")
            assert not [e for e in unpartitioned if e["runId"] in partition_of_run], (name, unpartitioned)
