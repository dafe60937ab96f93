"""The bounded HTTP server under `livesearch serve-web` and `livesearch site serve`: uvicorn (the
ASGI server Dagster's webserver already runs on) in front of a fixed pool of worker threads.

`http.server`'s threading server gave every connection a thread of its own, forever: 3,000 idle
half-sent requests held 3,003 threads, and a listen backlog of 5 dropped the SYNs of the clients
behind them. Here one event loop holds every connection (a few KB each) and

- a request's head must arrive within `request_timeout_s` of the connection (or of the previous
  answer on a kept-alive connection): a client that trickles bytes or sends half a request is cut
  off then, whatever it sends meanwhile (uvicorn's own keep-alive timer is reset by any byte);
- at most `max_connections` are open: a new one over the bound closes the connection that has
  waited longest for its request's head, so idle clients can never lock others out;
- the listening socket has a real backlog (`backlog`, 1,024);
- a request's body is read only up to `max_body_bytes` (413 above, and the connection closes) and
  within `request_timeout_s`;
- the handler, a plain blocking function `Request -> Response`, runs on one of `workers` threads;
  at most `max_pending` requests wait for one (503 with Retry-After above), and an answer that
  takes over `handler_timeout_s` is a 503 naming the bound; a handler's exception is a 500 naming it
  in one line, never a dropped connection;
- `server_close` stops the workers and then calls `on_close` (the offline web closes each worker's
  SQLite connection there): nothing is left open.

`BoundedServer` keeps the interface of `socketserver` that the callers use (`serve_forever` in a
thread or the foreground, `shutdown`, `server_close`, `server_address`, `server_port`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import urllib.parse
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

REQUEST_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 5
HANDLER_TIMEOUT_S = 30.0
BACKLOG = 1024
MAX_CONNECTIONS = 2048
MAX_BODY_BYTES = 64 * 1024
WORKERS = 8
FILE_CHUNK = 256 * 1024


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # percent-decoded
    query: str  # the raw query string
    headers: dict[str, str]  # lower-case names
    body: bytes = b""

    def params(self) -> dict[str, list[str]]:
        return urllib.parse.parse_qs(self.query)


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    # A file sent as the body, `FILE_CHUNK` bytes at a time (a large download never sits in memory
    # whole): an open binary file of `file_size` bytes, closed once sent.
    file: BinaryIO | None = None
    file_size: int = 0

    @classmethod
    def text(cls, status: int, message: str) -> Response:
        return cls(status, message.encode("utf-8") + b"\n")


Handler = Callable[[Request], Response]


def _close_late_file(work: asyncio.Future) -> None:
    """A response that came after its request was answered 503: its file, if any, is closed."""
    if not work.cancelled() and work.exception() is None and work.result().file is not None:
        work.result().file.close()


class _Limits:
    """The bounds of one server (module doc), shared by its connections."""

    def __init__(self, request_timeout_s: float, max_connections: int) -> None:
        self.request_timeout_s = request_timeout_s
        self.max_connections = max_connections
        self.waiting: dict[_BoundedProtocol, float] = {}  # connection -> since when it waits for a head
        self.open = 0


class _BoundedProtocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol with a deadline on each request's head and a bound on connections."""

    limits: _Limits  # set on the subclass each server makes

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self.limits.open += 1
        if self.limits.open > self.limits.max_connections and self.limits.waiting:
            longest = min(self.limits.waiting, key=self.limits.waiting.__getitem__)
            longest._expire()
        self._await_head()

    def _await_head(self) -> None:
        self._cancel_deadline()
        self.limits.waiting[self] = self.loop.time()
        self._deadline = self.loop.call_later(self.limits.request_timeout_s, self._expire)

    def _cancel_deadline(self) -> None:
        self.limits.waiting.pop(self, None)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._cancel_deadline()
        if not self.transport.is_closing():
            self.transport.close()

    def on_headers_complete(self) -> None:
        self._cancel_deadline()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self.limits.open -= 1
        super().connection_lost(exc)


class BoundedServer:
    """`handler` served on (host, port) as the module doc says; port 0 picks a free port. The socket
    is bound and listening when this returns; `serve_forever` serves until `shutdown`."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0, *, workers: int = WORKERS,
                 backlog: int = BACKLOG, max_connections: int = MAX_CONNECTIONS,
                 request_timeout_s: float = REQUEST_TIMEOUT_S, idle_timeout_s: int = IDLE_TIMEOUT_S,
                 handler_timeout_s: float = HANDLER_TIMEOUT_S, max_body_bytes: int = MAX_BODY_BYTES,
                 max_pending: int | None = None, server_header: str = "livesearch",
                 on_close: Iterable[Callable[[], None]] = ()) -> None:
        self.handler = handler
        self.workers = workers
        self.handler_timeout_s = handler_timeout_s
        self.request_timeout_s = request_timeout_s
        self.max_body_bytes = max_body_bytes
        self.max_pending = max_pending if max_pending is not None else 16 * workers
        self.on_close = list(on_close)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind((host, port))
            self.socket.listen(backlog)
        except BaseException:
            self.socket.close()
            raise
        self.server_address = self.socket.getsockname()
        self.limits = _Limits(request_timeout_s, max_connections)
        protocol = type("BoundedProtocol", (_BoundedProtocol,), {"limits": self.limits})
        self.config = uvicorn.Config(
            self._app, http=protocol, loop="asyncio", lifespan="off", interface="asgi3", log_config=None,
            log_level="warning", access_log=False, proxy_headers=False, server_header=False, date_header=False,
            headers=[("server", server_header)], backlog=backlog, timeout_keep_alive=idle_timeout_s,
            timeout_graceful_shutdown=5, ws="none")
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="http-worker")
        self._uvicorn = uvicorn.Server(self.config)
        self._pending = 0
        self._stopped = threading.Event()
        self._stopped.set()
        self._closed = False

    @property
    def server_port(self) -> int:
        return self.server_address[1]

    @property
    def open_connections(self) -> int:
        return self.limits.open

    def serve_forever(self) -> None:
        """Serve until `shutdown` (or, in the main thread, SIGINT/SIGTERM: uvicorn re-raises them after
        its graceful shutdown, so Ctrl-C ends the command as a KeyboardInterrupt)."""
        self._stopped.clear()
        try:
            self._uvicorn.run(sockets=[self.socket])
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop `serve_forever` (from another thread) and wait until it has returned."""
        self._uvicorn.should_exit = True
        self._stopped.wait()

    def server_close(self) -> None:
        """Close the listening socket, stop the workers, then run `on_close` (once)."""
        if self._closed:
            return
        self._closed = True
        self.socket.close()
        self.pool.shutdown(wait=True, cancel_futures=True)
        for close in self.on_close:
            close()

    # --- the ASGI application

    async def _app(self, scope: dict[str, Any], receive, send) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        response, close = await self._answer(scope, headers, receive)
        size = response.file_size if response.file is not None else len(response.body)
        out = [(b"content-type", response.content_type.encode("latin-1")), (b"content-length", str(size).encode())]
        out += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers]
        if close:
            out.append((b"connection", b"close"))
        try:
            await send({"type": "http.response.start", "status": response.status, "headers": out})
            if scope["method"] == "HEAD":
                await send({"type": "http.response.body", "body": b""})
            elif response.file is not None:
                await self._send_file(response.file, size, send)
            else:
                await send({"type": "http.response.body", "body": response.body})
        finally:
            if response.file is not None:
                response.file.close()

    async def _send_file(self, handle: BinaryIO, size: int, send) -> None:
        loop = asyncio.get_running_loop()
        left = size
        while left > 0:
            chunk = await loop.run_in_executor(self.pool, handle.read, min(FILE_CHUNK, left))
            if not chunk:
                break  # the file shrank: the client sees a short body and the connection ends
            left -= len(chunk)
            await send({"type": "http.response.body", "body": chunk, "more_body": left > 0})
        if left > 0:
            raise OSError(f"file ended {left} bytes early")

    async def _answer(self, scope: dict[str, Any], headers: dict[str, str], receive) -> tuple[Response, bool]:
        """(the answer, whether the connection must close after it: a body left unread)."""
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            return Response.text(400, "content-length is not a number"), True
        if not 0 <= length <= self.max_body_bytes:
            return Response.text(413, f"request body over {self.max_body_bytes} bytes"), True
        body = b""
        if length:
            try:
                body = await asyncio.wait_for(self._body(receive, length), self.request_timeout_s)
            except asyncio.TimeoutError:
                return Response.text(408, f"request body not received within {self.request_timeout_s:g} s"), True
        request = Request(method=scope["method"], path=scope["path"],
                          query=scope["query_string"].decode("latin-1"), headers=headers, body=body)
        if self._pending >= self.max_pending:
            return Response(503, b"busy: try again\n", headers=(("retry-after", "1"),)), False
        self._pending += 1  # counted until the worker is done, answered in time or not
        work = asyncio.get_running_loop().run_in_executor(self.pool, self._handle, request)
        work.add_done_callback(self._done)
        done, _ = await asyncio.wait({work}, timeout=self.handler_timeout_s)
        if not done:  # the worker goes on until the handler returns; a file it opens is closed then
            work.add_done_callback(_close_late_file)
            return Response.text(503, f"no answer within {self.handler_timeout_s:g} s"), False
        return work.result(), False

    def _done(self, _work: asyncio.Future) -> None:
        self._pending -= 1

    async def _body(self, receive, length: int) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > length or not message.get("more_body"):
                break
        return b"".join(chunks)[:length]

    def _handle(self, request: Request) -> Response:
        try:
            return self.handler(request)
        except Exception as exc:  # one line naming it, never a dropped connection
            return Response.text(500, f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:500]}")

    def __enter__(self) -> BoundedServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with contextlib.suppress(Exception):
            if not self._stopped.is_set():
                self.shutdown()
        self.server_close()
