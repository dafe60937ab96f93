"""infra/http_server.py: the bounded server under `serve-web` and `site serve` (issue 38, finding 7):
a half-sent request is cut off at its deadline, connections over the bound evict the longest waiting,
a slow handler answers 503 and a failing one 500, the backlog is real, and the site's files are served
as files only. Outcomes are counted or waited for, never timed."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import httpx

from livesearch_pipeline.infra.http_server import BoundedServer, Request, Response

PARTIAL = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # the request never ends


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


def _echo(request: Request) -> Response:
    return Response(200, f"{request.method} {request.path} {len(request.body)}".encode())


def test_a_half_sent_request_is_cut_off_at_its_deadline() -> None:
    server = BoundedServer(_echo, request_timeout_s=0.5)
    thread = _serving(server)
    try:
        (s,) = _idle(server.server_port, 1)
        assert _wait_for_eof(s)  # closed by the server, not by the socket's 30 s timeout
        s.close()
        # Trickling a byte at a time does not hold it open either.
        trickle = socket.create_connection(("127.0.0.1", server.server_port), timeout=30)
        closed = False
        for byte in PARTIAL * 50:
            try:
                trickle.sendall(bytes([byte]))
                threading.Event().wait(0.05)
            except OSError:
                closed = True
                break
        assert closed or _wait_for_eof(trickle)
        trickle.close()
    finally:
        _stop(server, thread)


def test_connections_over_the_bound_evict_the_longest_waiting() -> None:
    server = BoundedServer(_echo, max_connections=10)
    thread = _serving(server)
    try:
        idle = _idle(server.server_port, 10)
        answer = httpx.get(f"http://127.0.0.1:{server.server_port}/x")
        assert answer.status_code == 200 and answer.text == "GET /x 0"
        assert _wait_for_eof(idle[0])  # the first idle one made room
        assert server.open_connections <= 10
        for s in idle:
            s.close()
    finally:
        _stop(server, thread)


def test_a_slow_handler_answers_503_and_a_failing_one_500() -> None:
    release = threading.Event()

    def slow(request: Request) -> Response:
        if request.path == "/slow":
            release.wait(60)
        if request.path == "/boom":
            raise ValueError("a handler bug")
        return _echo(request)

    server = BoundedServer(slow, handler_timeout_s=0.2, workers=2)
    thread = _serving(server)
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        late = httpx.get(f"{url}/slow", timeout=30)
        assert late.status_code == 503 and "no answer within 0.2 s" in late.text
        failed = httpx.get(f"{url}/boom", timeout=30)
        assert failed.status_code == 500 and "ValueError: a handler bug" in failed.text
        too_big = httpx.post(f"{url}/x", content=b"x" * (65 * 1024), timeout=30)
        assert too_big.status_code == 413
        assert httpx.post(f"{url}/x", content=b"abc", timeout=30).text == "POST /x 3"
    finally:
        release.set()
        _stop(server, thread)


def test_the_listen_backlog_is_real() -> None:
    server = BoundedServer(_echo)
    try:
        assert server.config.backlog >= 1024
        # The socket already listens: connections queue before serve_forever runs (5 once dropped SYNs).
        waiting = [socket.create_connection(("127.0.0.1", server.server_port), timeout=30) for _ in range(64)]
        for s in waiting:
            s.close()
    finally:
        server.server_close()


def test_the_site_server_serves_files_only(tmp_path: Path) -> None:
    from livesearch_pipeline.site.serve import make_server as site_server

    site = tmp_path / "site"
    (site / "days").mkdir(parents=True)
    (site / "index.html").write_text("<h1>Board</h1>", encoding="utf-8")
    (site / "days" / "index.html").write_text("days", encoding="utf-8")
    (site / "big.jsonl").write_bytes(b'{"qid": 1}\n' * 200_000)  # sent a chunk at a time
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    (site / "link.txt").symlink_to(tmp_path / "secret.txt")
    server = site_server(site, "127.0.0.1", 0)
    thread = _serving(server)
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        with httpx.Client() as client:
            assert b"Board" in client.get(f"{url}/").content
            assert client.get(f"{url}/days").status_code == 301
            assert client.get(f"{url}/days/").text == "days"
            big = client.get(f"{url}/big.jsonl")
            assert big.status_code == 200 and len(big.content) == 11 * 200_000
            head = client.head(f"{url}/big.jsonl")
            assert head.headers["content-length"] == str(11 * 200_000) and head.content == b""
            for path in ("/link.txt", "/../secret.txt", "/%2e%2e/secret.txt", "/nowhere.html"):
                answer = client.get(url + path)
                assert answer.status_code == 404 and b"outside" not in answer.content
            assert client.post(f"{url}/", content=b"x").status_code == 405
    finally:
        _stop(server, thread)
