"""Issue 38, findings 7 and 13: `serve-web` (and `site serve`) stay bounded — threads, connections,
SQLite handles, the home page's work — whatever idle or slow clients do, and a damaged page answers a
500 naming the rebuild command. Every check counts or waits for an outcome; none measures time (the
benchmark, benchmarks/serving.py, does)."""

from __future__ import annotations

import shutil
import socket
import sqlite3
import threading
from pathlib import Path

import httpx
import pytest

from livesearch_pipeline.web.index import INDEX_FILE
from livesearch_pipeline.web.server import make_server
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, build_small_web, small_web

PARTIAL = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # the request never ends
WORKER_THREADS = 8  # infra.http_server.WORKERS


@pytest.fixture(scope="module")
def web_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_small_web(tmp_path_factory.mktemp("web"))


def _serving(server) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread


def _stop(server, thread: threading.Thread) -> None:
    server.shutdown()
    server.server_close()
    thread.join(timeout=30)
    assert not thread.is_alive()


def _idle(port: int, count: int) -> list[socket.socket]:
    idle = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(PARTIAL)
        idle.append(s)
    return idle


def _wait_for_eof(s: socket.socket) -> bool:
    """Whether the server closed `s` (the read returns end-of-file) within the socket's timeout."""
    try:
        return s.recv(1024) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def test_idle_connections_hold_no_thread_and_the_server_answers_beside_them(web_dir: Path) -> None:
    server = make_server(web_dir)
    thread = _serving(server)
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        assert httpx.get(f"{url}/").status_code == 200
        threads_before = threading.active_count()
        idle = _idle(server.server_port, 300)
        answers = [httpx.get(f"{url}/search", params={"q": small_web().famous.name, "format": "json"})
                   for _ in range(20)]
        assert all(a.status_code == 200 and a.json()["results"] for a in answers)
        # A fixed pool of worker threads (8), however many connections wait: 300 held no thread each.
        assert threading.active_count() - threads_before <= WORKER_THREADS
        assert server.open_connections >= 300
        for s in idle:
            s.close()
    finally:
        _stop(server, thread)


def test_each_worker_holds_one_index_connection_closed_with_the_server(web_dir: Path) -> None:
    server = make_server(web_dir)
    thread = _serving(server)
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        with httpx.Client() as client:
            for i in range(200):
                assert client.get(f"{url}/search", params={"q": f"close {i}", "format": "json"}).status_code == 200
        opened = list(server.index._opened)
        assert 1 <= len(opened) <= WORKER_THREADS + 1  # the workers' and the opening thread's
    finally:
        _stop(server, thread)
    assert server.index.open_connections == 0
    for connection in opened:
        with pytest.raises(sqlite3.ProgrammingError):
            connection.execute("SELECT 1")


def test_the_home_page_counts_pages_once(web_dir: Path, monkeypatch) -> None:
    from livesearch_pipeline.web.index import WebIndex

    calls = []
    real = WebIndex.sites
    monkeypatch.setattr(WebIndex, "sites", lambda self: calls.append(1) or real(self))
    server = make_server(web_dir)
    thread = _serving(server)
    try:
        with httpx.Client() as client:
            pages = [client.get(f"http://127.0.0.1:{server.server_port}/") for _ in range(50)]
        assert all(p.status_code == 200 and b"pages</li>" in p.content for p in pages)
        assert len(calls) == 1
    finally:
        _stop(server, thread)


def test_a_damaged_page_answers_500_naming_the_rebuild_command(web_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / CLOCK.isoformat()
    shutil.copytree(web_dir, copy)
    with sqlite3.connect(copy / INDEX_FILE) as db:
        path = db.execute("SELECT path FROM pages ORDER BY id LIMIT 1").fetchone()[0]
        db.execute("UPDATE pages SET html = ? WHERE path = ?", (b"\x78\x9c not zlib at all", path))
    server = make_server(copy)
    thread = _serving(server)
    try:
        with httpx.Client() as client:
            answer = client.get(f"http://127.0.0.1:{server.server_port}{path}")
            assert answer.status_code == 500
            assert "is damaged" in answer.text and f"livesearch build-web --date {CLOCK}" in answer.text
            assert client.get(f"http://127.0.0.1:{server.server_port}/").status_code == 200  # the server goes on
    finally:
        _stop(server, thread)
