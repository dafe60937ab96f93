"""Run `dagster-webserver` and `dagster-daemon` as real subprocesses and talk GraphQL to them.

Every process starts in its own session, so stopping it signals the whole group: the managed
code servers, run workers and step processes Dagster spawns below it go with it. Listening
sockets are read from /proc so a test can prove that nothing binds beyond the loopback address.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import httpx

LOOPBACK = "127.0.0.1"
TERMINAL_BACKFILL_STATUSES = frozenset({"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED"})
SUCCESSFUL_BACKFILL_STATUSES = frozenset({"COMPLETED", "COMPLETED_SUCCESS"})
FINISHED_RUN_STATUSES = frozenset({"SUCCESS", "FAILURE", "CANCELED"})


class DagsterProcessError(RuntimeError):
    """A Dagster service died, answered with an error, or did not get there in time."""


@dataclass
class DagsterProcess:
    name: str
    popen: subprocess.Popen
    log_path: Path

    @property
    def pgid(self) -> int:
        # start_new_session makes the child the leader of a group whose id is its pid.
        return self.popen.pid

    def tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return f"[{self.name}: no log at {self.log_path}]"
        text = self.log_path.read_text(errors="replace").splitlines()
        return f"--- last {min(lines, len(text))} lines of {self.name} ({self.log_path}) ---\n" + "\n".join(text[-lines:])

    def ensure_running(self) -> None:
        code = self.popen.poll()
        if code is not None:
            raise DagsterProcessError(f"{self.name} exited with code {code}\n{self.tail()}")


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def start_process(name: str, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], log_dir: Path) -> DagsterProcess:
    """Start `argv` in a new session with stdout and stderr going to `log_dir/<name>.log`."""
    log_path = Path(log_dir) / f"{name}.log"
    with open(log_path, "wb") as log:
        popen = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    return DagsterProcess(name=name, popen=popen, log_path=log_path)


def _live_processes() -> list[tuple[int, int, int]]:
    """(pid, parent pid, process group) of every live (non-zombie) process, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited while we looked
        # The command name (field 2) may hold spaces; the fields after its closing ')' do not.
        state, ppid, group = stat.rsplit(")", 1)[1].split()[:3]
        if state != "Z":
            found.append((int(entry.name), int(ppid), int(group)))
    return found


def process_group_members(pgid: int) -> list[int]:
    """Pids of live (non-zombie) processes whose process group is `pgid`."""
    return [pid for pid, _, group in _live_processes() if group == pgid]


def child_pids(pid: int) -> list[int]:
    """Pids of the live direct children of `pid`."""
    return [child for child, ppid, _ in _live_processes() if ppid == pid]


def ui_members(process: "DagsterProcess") -> list[int]:
    """The processes of `livesearch ui`: the wrapper's group and the group of the `dagster dev` it
    runs in a session of its own (webserver, daemon, code servers)."""
    members = set(process_group_members(process.pgid))
    for child in child_pids(process.popen.pid):
        members |= set(process_group_members(child))
    return sorted(members)


def _signal_groups(processes: Sequence[DagsterProcess], sig: signal.Signals) -> None:
    for process in processes:
        try:
            os.killpg(process.pgid, sig)
        except ProcessLookupError:
            pass  # the whole group is already gone


def _wait_until_groups_gone(processes: Sequence[DagsterProcess], wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while True:
        for process in processes:
            process.popen.poll()  # reap the leader so it does not linger as a zombie
        if not any(process_group_members(p.pgid) for p in processes):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)


def stop_processes(processes: Sequence[DagsterProcess], grace_s: float = 15.0) -> dict[str, list[int]]:
    """SIGTERM every process group at once, SIGKILL what is left after `grace_s`.

    Returns, per process name, the pids of its group that survived both (empty when clean).
    """
    _signal_groups(processes, signal.SIGTERM)
    if not _wait_until_groups_gone(processes, grace_s):
        _signal_groups(processes, signal.SIGKILL)
        _wait_until_groups_gone(processes, 5.0)
    return {p.name: process_group_members(p.pgid) for p in processes}


def stop_livesearch_ui(process: DagsterProcess, members: Sequence[int], grace_s: float) -> list[int]:
    """Stop `livesearch ui` and return the pids of its processes that outlived the stop.

    SIGTERM goes to the wrapper's group; the wrapper asks `dagster dev` (in a session of its own) to
    shut down and ends what is left of that group `STOP_KILL_S` (infra/ui.py) after the signal at
    the latest. So `grace_s` must exceed that: a wrapper killed sooner (stop_processes' SIGKILL)
    could leave `dagster dev` and its webserver running. Every pid of `members` (`ui_members`,
    taken while the UI ran) still alive afterwards is killed here, and returned so the test can fail."""
    stop_processes([process], grace_s=grace_s)
    survivors = [pid for pid in members if alive(pid)]
    for pid in survivors:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return survivors


def alive(pid: int) -> bool:
    """Whether `pid` is a live (non-zombie) process."""
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in (Path("/proc") / str(pid) / "fd").iterdir():
            try:
                target = os.readlink(fd)
            except FileNotFoundError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
    except (FileNotFoundError, PermissionError):
        pass  # the process exited (or is not ours): it holds no socket we could be asked about
    return inodes


def _decode_address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    # /proc prints an IPv6 address as four host-order 32-bit words.
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def listening_tcp_addresses(pids: Sequence[int]) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket in LISTEN state held by one of `pids`."""
    inodes = set().union(*(_socket_inodes(pid) for pid in pids)) if pids else set()
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # 0A = TCP_LISTEN
                address, port = local.rsplit(":", 1)
                found.add((_decode_address(address), int(port, 16)))
    return found


def wait_for_server_info(base_url: str, processes: Sequence[DagsterProcess], timeout_s: float) -> dict[str, Any]:
    """Poll `base_url/server_info` until it answers, failing early when a process dies."""
    deadline = time.monotonic() + timeout_s
    last_error = "no attempt"
    while time.monotonic() < deadline:
        for process in processes:
            process.ensure_running()
        try:
            response = httpx.get(f"{base_url}/server_info", timeout=5.0)
            if response.status_code == 200:
                return response.json()
            last_error = f"HTTP {response.status_code}"
        except httpx.TransportError as exc:
            last_error = repr(exc)
        time.sleep(0.5)
    tails = "\n".join(p.tail() for p in processes)
    raise DagsterProcessError(f"{base_url}/server_info did not answer within {timeout_s:.0f} s ({last_error})\n{tails}")


def graphql_response(base_url: str, query: str, variables: Mapping[str, Any] | None = None) -> tuple[int, dict]:
    """POST one GraphQL operation; return the HTTP status and the JSON body, whatever they are
    (the webserver answers an operation that raised with HTTP 500 and a `PythonError`)."""
    response = httpx.post(f"{base_url}/graphql", json={"query": query, "variables": dict(variables or {})}, timeout=60.0)
    return response.status_code, response.json()


def graphql(base_url: str, query: str, variables: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """POST one GraphQL operation; return its `data`, raising on transport or GraphQL errors."""
    response = httpx.post(f"{base_url}/graphql", json={"query": query, "variables": dict(variables or {})}, timeout=60.0)
    if response.is_error:
        raise DagsterProcessError(f"GraphQL request to {base_url} failed with HTTP {response.status_code}: "
                                  f"{response.text[:2000]}")
    body = response.json()
    if body.get("errors"):
        raise DagsterProcessError(f"GraphQL errors from {base_url}: {body['errors']}")
    return body["data"]


WORKSPACE_QUERY = """
query Workspace {
  workspaceOrError {
    __typename
    ... on PythonError { message stack }
    ... on Workspace {
      locationEntries {
        name
        loadStatus
        locationOrLoadError {
          __typename
          ... on PythonError { message stack }
          ... on RepositoryLocation { name repositories { name partitionSets { name } } }
        }
      }
    }
  }
}
"""

LAUNCH_BACKFILL_MUTATION = """
mutation LaunchBackfill($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message stack }
    ... on Error { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}
"""

BACKFILL_QUERY = """
query Backfill($backfillId: String!) {
  partitionBackfillOrError(backfillId: $backfillId) {
    __typename
    ... on PythonError { message stack }
    ... on BackfillNotFoundError { message }
    ... on PartitionBackfill {
      id
      status
      partitionNames
      error { message stack }
      runs { runId status tags { key value } }
    }
  }
}
"""


@dataclass(frozen=True)
class PartitionSetHandle:
    location: str
    repository: str
    partition_set: str


def wait_for_partition_set(base_url: str, partition_set: str, processes: Sequence[DagsterProcess],
                           timeout_s: float) -> PartitionSetHandle:
    """Wait until the webserver has loaded a code location that serves `partition_set`."""
    deadline = time.monotonic() + timeout_s
    seen = "no location loaded"
    while time.monotonic() < deadline:
        for process in processes:
            process.ensure_running()
        workspace = graphql(base_url, WORKSPACE_QUERY)["workspaceOrError"]
        if workspace["__typename"] != "Workspace":
            raise DagsterProcessError(f"workspace failed to load: {workspace.get('message')}\n{workspace.get('stack')}")
        for entry in workspace["locationEntries"]:
            location = entry["locationOrLoadError"]
            if entry["loadStatus"] != "LOADED" or location is None:
                seen = f"{entry['name']} is {entry['loadStatus']}"
                continue
            if location["__typename"] == "PythonError":
                raise DagsterProcessError(f"code location {entry['name']} failed to load: {location['message']}\n"
                                          f"{''.join(location['stack'])}")
            for repository in location["repositories"]:
                if any(s["name"] == partition_set for s in repository["partitionSets"]):
                    return PartitionSetHandle(entry["name"], repository["name"], partition_set)
            seen = f"{entry['name']} loaded without partition set {partition_set!r}"
        time.sleep(0.5)
    raise DagsterProcessError(f"no code location served {partition_set!r} within {timeout_s:.0f} s ({seen})")


def launch_job_backfill(base_url: str, handle: PartitionSetHandle, partition_names: Sequence[str],
                        run_config: Mapping[str, Any] | None = None, title: str | None = None) -> str:
    """Launch a job backfill (one run per partition) the way the UI does; return its backfill id."""
    params: dict[str, Any] = {
        "selector": {
            "partitionSetName": handle.partition_set,
            "repositorySelector": {"repositoryLocationName": handle.location, "repositoryName": handle.repository},
        },
        "partitionNames": list(partition_names),
    }
    if run_config is not None:
        params["runConfigData"] = dict(run_config)
    if title is not None:
        params["title"] = title
    result = graphql(base_url, LAUNCH_BACKFILL_MUTATION, {"backfillParams": params})["launchPartitionBackfill"]
    if result["__typename"] != "LaunchBackfillSuccess":
        raise DagsterProcessError(f"launchPartitionBackfill returned {result['__typename']}: {result}")
    return result["backfillId"]


def wait_for_backfill(base_url: str, backfill_id: str, processes: Sequence[DagsterProcess], timeout_s: float,
                      poll_s: float = 1.0) -> dict[str, Any]:
    """Poll the backfill until it reaches a terminal status; return its last GraphQL state.

    A backfill counts as done only when its status is terminal AND none of its runs is still
    going, so a caller can inspect every run's final status.
    """
    deadline = time.monotonic() + timeout_s
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        for process in processes:
            process.ensure_running()
        state = graphql(base_url, BACKFILL_QUERY, {"backfillId": backfill_id})["partitionBackfillOrError"]
        if state["__typename"] != "PartitionBackfill":
            raise DagsterProcessError(f"backfill {backfill_id}: {state['__typename']}: {state.get('message')}")
        if state["status"] in TERMINAL_BACKFILL_STATUSES and all(r["status"] in FINISHED_RUN_STATUSES for r in state["runs"]):
            return state
        time.sleep(poll_s)
    raise DagsterProcessError(f"backfill {backfill_id} not finished within {timeout_s:.0f} s; last state: "
                              f"{state.get('status')}, runs {[(r['runId'], r['status']) for r in state.get('runs', [])]}")


ASSET_LAUNCH_QUERY = """
query AssetLaunch($assetKeys: [AssetKeyInput!]!) {
  assetNodeAdditionalRequiredKeys(assetKeys: $assetKeys) { path }
  assetNodes(assetKeys: $assetKeys) { assetKey { path } jobNames partitionDefinition { description } }
}
"""


def is_hidden_asset_job(job_name: str) -> bool:
    """The UI's isHiddenAssetGroupJob: Dagster's implicit asset jobs (`__ASSET_JOB...`)."""
    return job_name.startswith("__ASSET_JOB")


def asset_page_backfill_params(base_url: str, selected: Sequence[Sequence[str]],
                               partition_names: Sequence[str]) -> tuple[dict[str, Any], list[list[str]]]:
    """The `launchPartitionBackfill` parameters the UI sends when assets are selected, Materialize
    is clicked and several partitions are chosen (Dagster 1.13's LaunchAssetExecutionButton and
    LaunchAssetChoosePartitionsDialog), and the keys the UI added on its own.

    The UI first adds the rest of each selected asset's non-subsettable multi-asset (after its
    "Additional assets will be materialized" confirmation), then picks the first job every
    selected asset belongs to: a user job gives a job backfill with an asset selection, Dagster's
    hidden asset job a pure asset backfill.
    """
    keys = [list(key) for key in selected]
    added = sorted(k["path"] for k in graphql(base_url, ASSET_LAUNCH_QUERY, {"assetKeys": [
        {"path": key} for key in keys]})["assetNodeAdditionalRequiredKeys"])
    keys += added
    nodes = graphql(base_url, ASSET_LAUNCH_QUERY, {"assetKeys": [{"path": key} for key in keys]})["assetNodes"]
    if sorted(n["assetKey"]["path"] for n in nodes) != sorted(keys):
        raise DagsterProcessError(f"the webserver does not know every asset of {keys}: {nodes}")
    if any(n["partitionDefinition"] is None for n in nodes):
        raise DagsterProcessError(f"not every asset of {keys} is partitioned: {nodes}")
    common = [job for job in nodes[0]["jobNames"] if all(job in n["jobNames"] for n in nodes)]
    if not common:
        raise DagsterProcessError(f"the assets {keys} share no job; the UI would launch a pure backfill "
                                  f"anchored on one of them, which this helper does not model")
    params: dict[str, Any] = {"tags": [], "assetSelection": [{"path": key} for key in keys],
                              "partitionNames": list(partition_names), "fromFailure": False}
    location = None
    if not is_hidden_asset_job(common[0]):
        location = graphql(base_url, WORKSPACE_QUERY)["workspaceOrError"]["locationEntries"][0]["locationOrLoadError"]
        params["selector"] = {
            "partitionSetName": f"{common[0]}_partition_set",
            "repositorySelector": {"repositoryLocationName": location["name"],
                                   "repositoryName": location["repositories"][0]["name"]},
        }
    return params, added


def launch_backfill(base_url: str, params: Mapping[str, Any]) -> str:
    """Send `launchPartitionBackfill` with `params`; return the backfill id."""
    result = graphql(base_url, LAUNCH_BACKFILL_MUTATION, {"backfillParams": dict(params)})["launchPartitionBackfill"]
    if result["__typename"] != "LaunchBackfillSuccess":
        raise DagsterProcessError(f"launchPartitionBackfill returned {result['__typename']}: {result}")
    return result["backfillId"]


ASSET_CHECK_EXECUTIONS_QUERY = """
query AssetCheckExecutions($assetKey: AssetKeyInput!, $checkName: String!, $partition: String, $limit: Int!) {
  assetCheckExecutions(assetKey: $assetKey, checkName: $checkName, partition: $partition, limit: $limit) {
    id
    runId
    status
    partition
    evaluation { checkName partition success }
  }
}
"""


def asset_check_executions(base_url: str, asset_key: Sequence[str], check_name: str, partition: str | None,
                           limit: int = 20) -> list[dict[str, Any]]:
    """The executions of one asset check as the asset's Checks tab lists them, filtered to one
    partition (None: every partition; "": unpartitioned executions only)."""
    variables = {"assetKey": {"path": list(asset_key)}, "checkName": check_name, "partition": partition,
                 "limit": limit}
    return graphql(base_url, ASSET_CHECK_EXECUTIONS_QUERY, variables)["assetCheckExecutions"]
