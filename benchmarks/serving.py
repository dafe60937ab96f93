"""Benchmark of the command-line HTTP servers under load (issue 38): `livesearch serve-web` (or
`livesearch site serve`) on 127.0.0.1, held by idle connections and loaded by parallel clients.

    python benchmarks/serving.py [--server serve-web|site] [--date 2026-12-04] [--idle 3000]
                                 [--requests 9000] [--parallel 20] [--hold-s 3]

The server runs as its own process (the real command, `python -m livesearch_pipeline.cli ...`, data
root from LIVESEARCH_DATA_DIR), so its resident memory, threads and open handles are read from
/proc/<pid> alone. Loopback only; every loop is bounded and every socket has a timeout: the script
stops by itself.

1. Idle: `--idle` connections each send a partial request (`GET / HTTP/1.1`, a Host line, no blank
   line: the request never ends) and stay open for `--hold-s` seconds.
2. Load, with the idle connections still open: `--requests` requests from `--parallel` client
   threads, a new connection each (what drops on a short listen backlog): the home page, searches
   made from the served questions' entities, and the pages those searches return (for the site:
   its pages). Latency per request (connect to last byte), p50/p99/max, errors, requests/s.
3. Release: every idle connection that the server still holds gets its blank line, so each becomes
   a complete `GET /` (the home page); their answers are read (bounded).
4. After: all client connections closed, the server's threads and open handles again.

Reported: the server's RSS before (after a warm-up of 20 requests per client, so that every worker
has started), at its peak (sampled every 50 ms) and after; threads; open handles (file descriptors)
before and after — a handle leaked is after minus before; p50/p99 under the idle connections; how
many idle connections the server itself closed.
Targets (issue 38): RSS < 400 MiB, p99 < 200 ms, no handle leaked.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEADLINE_S = 900  # the whole run, whatever happens


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _proc(pid: int) -> dict[str, int]:
    """RSS (KiB), threads, open file descriptors and CPU time (clock ticks) of a process."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return {"rss_kib": int(fields["VmRSS"].split()[0]), "threads": int(fields["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd")), "cpu_ticks": int(stat[11]) + int(stat[12])}


class Sampler(threading.Thread):
    """The server's peak RSS and threads, sampled every 50 ms until stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.stop, self.peak_rss, self.peak_threads = pid, threading.Event(), 0, 0

    def run(self) -> None:
        while not self.stop.wait(0.05):
            with contextlib.suppress(OSError, KeyError, ValueError):
                now = _proc(self.pid)
                self.peak_rss, self.peak_threads = max(self.peak_rss, now["rss_kib"]), max(self.peak_threads, now["threads"])


def _get(port: int, path: str, timeout: float = 30.0) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Connection": "close"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _start(args: argparse.Namespace, port: int) -> subprocess.Popen:
    if args.server == "serve-web":
        command = ["serve-web", "--date", args.date, "--port", str(port)]
    else:
        command = ["site", "serve", "--port", str(port)]
    server = subprocess.Popen([sys.executable, "-m", "livesearch_pipeline.cli", *command], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server ended: {server.stderr.read()[-2000:]}")
        with contextlib.suppress(OSError):
            if _get(port, "/", timeout=5)[0] == 200:
                return server
        time.sleep(0.5)
    server.kill()
    raise SystemExit("the server did not answer within 300 s")


def _paths(args: argparse.Namespace, port: int) -> list[str]:
    """The request mix: the home page, searches for the served entities, the pages they return."""
    rng = random.Random(38)
    if args.server == "site":
        site = Path(os.environ.get("LIVESEARCH_DATA_DIR", ROOT / "data")) / "site"
        pages = sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))
        return ["/"] + ["/" + p for p in rng.sample(pages, min(400, len(pages)))]
    served = Path(os.environ.get("LIVESEARCH_DATA_DIR", ROOT / "data")) / "served" / f"served_questions_{args.date}.jsonl"
    entities = sorted({json.loads(line)["entity"] for line in served.read_text(encoding="utf-8").splitlines()})
    searches = [f"/search?q={urllib.parse.quote(e + ' ' + w)}&format=json"
                for e in rng.sample(entities, min(150, len(entities))) for w in ("close", "history")]
    pages: list[str] = []
    for path in searches[:60]:
        status, body = _get(port, path)
        if status == 200:
            pages += [urllib.parse.urlsplit(r["url"]).path for r in json.loads(body)["results"][:3]]
    return ["/"] + searches + pages


def _hold_idle(port: int, count: int) -> list[socket.socket]:
    idle = []
    for _ in range(count):
        s = socket.socket()
        s.settimeout(10)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        except OSError:
            s.close()
            continue
        idle.append(s)
    return idle


def _release(idle: list[socket.socket], deadline_s: float = 60.0) -> dict[str, int]:
    """Complete each idle connection's request and read the first bytes of each answer, for at most
    `deadline_s` in all: how many were answered, closed by the server, or still unanswered."""
    import selectors

    counts = {"answered": 0, "closed_by_server": 0, "unanswered": 0}
    waiting = selectors.DefaultSelector()
    for s in idle:
        try:
            s.sendall(b"\r\n")
            s.setblocking(False)
            waiting.register(s, selectors.EVENT_READ)
        except OSError:
            counts["closed_by_server"] += 1
            s.close()
    deadline = time.monotonic() + deadline_s
    while waiting.get_map() and time.monotonic() < deadline:
        for key, _ in waiting.select(timeout=max(0.0, min(1.0, deadline - time.monotonic()))):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            counts["answered" if data.startswith((b"HTTP/1.1 200", b"HTTP/1.0 200")) else "closed_by_server"] += 1
            waiting.unregister(s)
            s.close()
    for key in list(waiting.get_map().values()):
        counts["unanswered"] += 1
        key.fileobj.close()
    return counts


def _load(port: int, paths: list[str], requests: int, parallel: int) -> dict:
    rng = random.Random(9000)
    plan = [rng.choice(paths) for _ in range(requests)]
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def one(path: str) -> None:
        started = time.perf_counter()
        try:
            status, _ = _get(port, path)
            problem = None if status in (200, 302, 404) else f"HTTP {status}"
        except OSError as exc:
            problem = type(exc).__name__
        elapsed = time.perf_counter() - started
        with lock:
            latencies.append(elapsed)
            if problem:
                errors.append(problem)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        list(pool.map(one, plan))
    wall = time.perf_counter() - started
    ordered = sorted(latencies)
    return {"requests": len(latencies), "errors": len(errors), "error_kinds": sorted(set(errors))[:5],
            "p50_ms": round(1000 * statistics.median(ordered), 1),
            "p99_ms": round(1000 * ordered[int(0.99 * (len(ordered) - 1))], 1),
            "max_ms": round(1000 * ordered[-1], 1), "per_s": round(len(ordered) / wall, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", choices=("serve-web", "site"), default="serve-web")
    parser.add_argument("--date", default=None, help="the web's day (default: the newest under data/web)")
    parser.add_argument("--idle", type=int, default=3000)
    parser.add_argument("--requests", type=int, default=9000)
    parser.add_argument("--parallel", type=int, default=20)
    parser.add_argument("--hold-s", type=float, default=3.0)
    args = parser.parse_args()
    if args.date is None and args.server == "serve-web":
        webs = sorted((Path(os.environ.get("LIVESEARCH_DATA_DIR", ROOT / "data")) / "web").glob("20*-*-*"))
        args.date = webs[-1].name
    threading.Timer(DEADLINE_S, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
    port = _free_port()
    server = _start(args, port)
    try:
        paths = _paths(args, port)
        # Warm: every worker has answered (and opened its one index connection) before anything is counted.
        _load(port, paths, 20 * args.parallel, args.parallel)
        before = _proc(server.pid)
        sampler = Sampler(server.pid)
        sampler.start()
        idle = _hold_idle(port, args.idle)
        held = _proc(server.pid)
        time.sleep(args.hold_s)
        busy = _proc(server.pid)["cpu_ticks"]
        load = _load(port, paths, args.requests, args.parallel)
        during = _proc(server.pid)
        load["server_cpu_ms_per_request"] = round(1000 * (during["cpu_ticks"] - busy) / os.sysconf("SC_CLK_TCK")
                                                  / max(1, load["requests"]), 2)
        load["load_average_1m"] = os.getloadavg()[0]  # the machine's load: latencies depend on it
        released = _release(idle)
        time.sleep(2)  # the server's last answers written, its connections closed
        after = _proc(server.pid)
        sampler.stop.set()
    finally:
        server.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=30)
        if server.poll() is None:
            server.kill()
    mib = 1024
    report = {
        "server": args.server, "date": args.date, "idle_connections": len(idle), "hold_s": args.hold_s,
        "rss_mib": {"before": round(before["rss_kib"] / mib), "holding_idle": round(held["rss_kib"] / mib),
                    "peak": round(sampler.peak_rss / mib), "after": round(after["rss_kib"] / mib)},
        "threads": {"before": before["threads"], "holding_idle": held["threads"], "peak": sampler.peak_threads,
                    "after": after["threads"]},
        "open_handles": {"before": before["fds"], "holding_idle": held["fds"], "during_load": during["fds"],
                         "after": after["fds"], "leaked": after["fds"] - before["fds"]},
        "load_under_idle": load,
        "idle_released": released,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
