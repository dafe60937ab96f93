"""`livesearch ui`: Dagster's webserver and daemon, started and stopped the way Dagster does it.

Start. The services run in a child process that calls the implementation of `dagster dev`
directly, as `dg dev` does (so no SupersessionWarning of the superseded `dagster dev` command),
with the Dagster home as its working directory (so no "Found a dagster instance configuration
value (dagster.yaml) in the current folder" warning) and the repository's `workspace.yaml`,
whose relative paths are the workspace file's. The child starts a session of its own: its
process group holds everything Dagster starts below it (the webserver, the daemon, their code
servers, and the runs they launch).

Stop. SIGTERM or SIGINT to `livesearch ui` (Ctrl-C, `kill <pid>`) writes Dagster's shutdown
message to the pipe `dagster dev` watches (its `--shutdown-pipe`): Dagster logs "Shutting down
Dagster services...", passes the message on to the webserver and the daemon, stops its code
servers and logs "Dagster services shut down.". Whatever is left of the group when `dagster dev`
has exited, or `STOP_S` after the signal, is terminated and then killed: a run the UI launched
still running, or a process a run left behind. `livesearch ui` exits once its group is empty.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# Dagster's own shutdown gets this long before the group is terminated; a process still alive
# STOP_KILL_S after the signal is killed. Measured (docs/benchmarks.md): the webserver and the daemon
# stop themselves in 2-3.5 s on the loaded 2-core reference machine.
STOP_S = 3.0
STOP_KILL_S = 4.0
# What is left once the webserver and the daemon are gone (code servers, a run) gets this long.
RELEASE_S = 0.75


def run_ui(port: int, *, home: Path, workspace: Path, host: str = "127.0.0.1") -> int:
    """Run Dagster's webserver and daemon until SIGTERM or SIGINT; stop them as described above.
    Returns the exit code of `dagster dev` (0 after a requested stop)."""
    from dagster_shared.ipc import get_ipc_shutdown_pipe, send_ipc_shutdown_message

    read_fd, write_fd = get_ipc_shutdown_pipe()
    child = subprocess.Popen(
        [sys.executable, "-m", "livesearch_pipeline.infra.ui", "--host", host, "--port", str(port),
         "--workspace", str(workspace), "--shutdown-pipe", str(read_fd)],
        cwd=home, pass_fds=[read_fd], start_new_session=True)
    os.close(read_fd)
    requested: list[float] = []

    def request_stop(_signum: int, _frame: object) -> None:
        if not requested:
            requested.append(time.monotonic())
            send_ipc_shutdown_message(write_fd)

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while child.poll() is None:
            if requested and (time.monotonic() - requested[0] > STOP_S or not services_running(child.pid)):
                break
            time.sleep(0.05)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if not requested:
            os.close(write_fd)
        deadline = (requested[0] if requested else time.monotonic()) + STOP_KILL_S
        # The webserver and the daemon have shut themselves down (or the grace is over): the code
        # servers, their helpers and any run they launched are terminated now (killed after a
        # second), while `dagster dev` finishes its own exit (its shutdown calls to the stopped
        # code servers then return at once).
        end_group(child.pid, deadline=min(deadline, time.monotonic() + RELEASE_S), spare=child.pid)
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        end_group(child.pid, deadline=deadline)
        child.poll()
    return 0 if requested else (child.returncode or 0)


SERVICES = ("dagster_webserver", "dagster._daemon")


def services_running(pgid: int) -> bool:
    """Whether the webserver or the daemon of the group is still alive."""
    for pid in group_members(pgid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(f"-m {service} " in f"{command} " for service in SERVICES):
            return True
    return False


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) members of a process group, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def end_group(pgid: int, deadline: float, spare: int | None = None) -> None:
    """SIGTERM the members of the group (but `spare`), SIGKILL those still there at `deadline`
    (monotonic); returns when they are gone."""
    members = [pid for pid in group_members(pgid) if pid != spare]
    if not members:
        return
    for pid in members:
        _kill(pid, signal.SIGTERM)
    while time.monotonic() < deadline and any(p in group_members(pgid) for p in members):
        time.sleep(0.05)
    left = [pid for pid in group_members(pgid) if pid in members]
    for pid in left:
        _kill(pid, signal.SIGKILL)
    while left and time.monotonic() < deadline + 2.0 and any(p in group_members(pgid) for p in left):
        time.sleep(0.05)


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def serve(argv: list[str]) -> None:
    """The child: `dagster dev`'s implementation, watching the shutdown pipe."""
    from dagster._cli.dev import dev_command_impl
    from dagster._cli.workspace.cli_target import WorkspaceOpts

    parser = argparse.ArgumentParser(prog="python -m livesearch_pipeline.infra.ui")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", required=True)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--shutdown-pipe", type=int, required=True)
    args = parser.parse_args(argv)
    dev_command_impl(
        code_server_log_level="warning", log_level="info", log_format="colored", port=args.port, host=args.host,
        use_legacy_code_server_behavior=False, shutdown_pipe=args.shutdown_pipe, verbose=False,
        workspace_opts=WorkspaceOpts(workspace=[args.workspace]),
    )


if __name__ == "__main__":
    serve(sys.argv[1:])
