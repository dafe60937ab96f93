"""The serve loop shared by `livesearch site serve` and `livesearch serve-web`."""

from __future__ import annotations

import http.server
import threading
import urllib.request

import pytest

from livesearch_pipeline.infra.serving import serve_until_interrupted


class _FakeServer:
    def __init__(self, raises: BaseException | None) -> None:
        self.raises = raises
        self.served = self.closed = False

    def serve_forever(self) -> None:
        self.served = True
        if self.raises is not None:
            raise self.raises

    def server_close(self) -> None:
        self.closed = True


def test_ctrl_c_stops_quietly_and_closes_the_socket():
    server = _FakeServer(KeyboardInterrupt())
    assert serve_until_interrupted(server) == 0
    assert server.served and server.closed


def test_an_error_propagates_after_closing_the_socket():
    server = _FakeServer(OSError("boom"))
    with pytest.raises(OSError, match="boom"):
        serve_until_interrupted(server)
    assert server.closed


def test_a_real_server_serves_until_shut_down_then_is_closed():
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    result: list[int] = []
    loop = threading.Thread(target=lambda: result.append(serve_until_interrupted(server)))
    loop.start()
    host, port = server.server_address[:2]
    with urllib.request.urlopen(f"http://{host}:{port}/", timeout=10) as response:
        assert response.read() == b"hello"
    server.shutdown()
    loop.join(timeout=10)
    assert result == [0]
    assert server.socket.fileno() == -1  # closed
