"""The offline web over HTTP: a SearXNG-compatible search API and the pages at their URLs.

`GET /search?q=…&format=json[&pageno=N][&time_range=day|week|month|year]` answers like SearXNG's
JSON API (`query`, `number_of_results` (every distinct result the query matches, not just this
page), `results` with `title`, `url`, `content`, `publishedDate`, `engine`, `score`, `category`,
plus the empty `answers`/`suggestions`/... lists SearXNG sends), so any SearXNG client works
against it unchanged; without `format` (or `format=html`) it answers a plain HTML result list for
people. As SearXNG does, `POST /search` takes the same parameters as form data, `GET /?q=…`
redirects to `/search` with the same query string, `time_range` keeps pages published within a
day, week, month or year of the web's clock, and parameters it has no use for (`categories`,
`engines`, `language`, `safesearch`, ...) are ignored. Every other path is a page of the
corpus, or 404.

The server binds 127.0.0.1 by default: it is a benchmark sandbox, not a public site.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import json
import logging
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator
from urllib.parse import parse_qs, urlsplit

from livesearch_pipeline.web.index import WebIndex, WebIndexError

log = logging.getLogger(__name__)

RESULTS_PER_PAGE = 10
MAX_PAGENO = 50
ENGINE = "web"
# SearXNG's time ranges, in days before the web's clock.
TIME_RANGES = {"day": 1, "week": 7, "month": 31, "year": 366}
MAX_FORM_BYTES = 64 * 1024
# The longest query searched (characters): a query's cost grows with its phrases, and a
# 6,000-character Chinese query took 15 s of CPU. Longer queries get 400 naming the bound.
MAX_QUERY_CHARS = 500


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    index: WebIndex
    public_base: str  # result URLs start with it


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "livesearch-offline-web/1"
    # Keep-alive: an agent's client sends its many requests over a few connections, each served by
    # one thread with one index connection, instead of a thread and an index connection per request.
    protocol_version = "HTTP/1.1"
    # A response goes out as two writes (headers, then body): without TCP_NODELAY the body waits for
    # the client's delayed ACK of the headers on a kept-alive connection (tens of ms per request).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        if self.command == "POST":
            # A refused POST leaves its body unread: the connection ends with the answer.
            self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        self._send(status, message.encode("utf-8") + b"\n", "text/plain; charset=utf-8")

    def _base_url(self) -> str:
        # The server's own configured base, never the request's Host header (which the client chooses).
        return self.server.public_base

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        parts = urlsplit(self.path)
        if parts.path == "/search":
            self._search(parse_qs(parts.query))
        elif parts.path in ("/", "/index.html") and "q" in parse_qs(parts.query):
            self._redirect_to_search(parts.query)
        elif parts.path in ("/", "/index.html"):
            self._home()
        else:
            page = self.server.index.page(parts.path)
            if page is None:
                self._error(404, f"no page at {parts.path}")
            else:
                self._send(200, page.html.encode("utf-8"), "text/html; charset=utf-8")

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        parts = urlsplit(self.path)
        if parts.path not in ("/search", "/"):
            self._error(405, f"POST is only served at /search, not {parts.path}")
            return
        form = self._form()
        if form is not None:
            self._search(form)

    def _form(self) -> dict[str, list[str]] | None:
        """The form fields of a POST body (urlencoded), merged over the URL's query string."""
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            self._error(400, "content-length is not a number")
            return None
        if not 0 <= length <= MAX_FORM_BYTES:
            self._error(413, f"form data over {MAX_FORM_BYTES} bytes")
            return None
        kind = (self.headers.get("content-type") or "application/x-www-form-urlencoded").split(";")[0].strip()
        if kind != "application/x-www-form-urlencoded":
            self._error(415, f"POST /search takes form data (application/x-www-form-urlencoded), not {kind}")
            return None
        body = self.rfile.read(length).decode("utf-8", errors="replace")
        params = parse_qs(urlsplit(self.path).query)
        params.update(parse_qs(body))
        return params

    def _redirect_to_search(self, query: str) -> None:
        """SearXNG sends `/?q=…` to `/search?q=…` (clients configured with the bare host rely on it)."""
        self.send_response(302)
        self.send_header("location", f"/search?{query}")
        self.send_header("content-length", "0")
        self.end_headers()

    def _since(self, params: dict[str, list[str]]) -> tuple[bool, dt.date | None]:
        """(ok, first day) of the `time_range` parameter; an empty one means no range."""
        value = (params.get("time_range") or [""])[0].strip()
        if not value:
            return True, None
        if value not in TIME_RANGES:
            self._error(400, f"time_range must be one of {', '.join(TIME_RANGES)}, got {value!r}")
            return False, None
        clock = self.server.index.clock
        if clock is None:
            self._error(400, "time_range needs the web's clock, which this index does not record")
            return False, None
        return True, clock - dt.timedelta(days=TIME_RANGES[value])

    def _search(self, params: dict[str, list[str]]) -> None:
        query = (params.get("q") or [""])[0].strip()
        fmt = (params.get("format") or ["html"])[0]
        if fmt not in ("json", "html"):
            self._error(400, f"format {fmt!r} is not served; use format=json (or html)")
            return
        try:
            pageno = int((params.get("pageno") or ["1"])[0])
        except ValueError:
            self._error(400, f"pageno must be an integer, got {params.get('pageno')!r}")
            return
        if not query:
            self._error(400, "missing query: pass q=...")
            return
        if len(query) > MAX_QUERY_CHARS:
            self._error(400, f"query of {len(query):,} characters; at most {MAX_QUERY_CHARS} are searched "
                             f"(starts {query[:40]!r})")
            return
        if not 1 <= pageno <= MAX_PAGENO:
            self._error(400, f"pageno must be between 1 and {MAX_PAGENO}, got {pageno}")
            return
        ok, since = self._since(params)
        if not ok:
            return
        try:
            found = self.server.index.search_results(query, pageno=pageno, per_page=RESULTS_PER_PAGE, since=since)
        except WebIndexError as exc:
            self._error(400, str(exc))
            return
        hits = found.hits
        base = self._base_url()
        results = [{
            "title": h.title, "url": base + h.path, "content": h.snippet,
            "publishedDate": f"{h.published.isoformat()}T00:00:00", "engine": ENGINE, "engines": [ENGINE],
            "positions": [(pageno - 1) * RESULTS_PER_PAGE + i + 1], "score": round(h.score, 4),
            "category": "general", "parsed_url": ["http", base[7:], h.path, "", "", ""],
        } for i, h in enumerate(hits)]
        if fmt == "json":
            payload = {"query": query, "number_of_results": found.total, "results": results, "answers": [],
                       "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}
            self._send(200, json.dumps(payload, ensure_ascii=False).encode("utf-8"), "application/json")
            return
        items = "".join(f'<li><a href="{html.escape(r["url"])}">{html.escape(r["title"])}</a> '
                        f'<small>{r["publishedDate"][:10]}</small><p>{html.escape(r["content"])}</p></li>'
                        for r in results)
        body = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(query)} - search</title>"
                f"</head><body><form action='/search'><input name='q' value='{html.escape(query)}'></form>"
                f"<ol>{items}</ol></body></html>")
        self._send(200, body.encode("utf-8"), "text/html; charset=utf-8")

    def _home(self) -> None:
        sites = "".join(f"<li>{html.escape(site)}: {count} pages</li>" for site, count in self.server.index.sites())
        body = (f"<!doctype html><html><head><meta charset='utf-8'><title>Search</title></head>"
                f"<body><h1>Search</h1>"
                f"<form action='/search'><input name='q'><button>Search</button></form><ul>{sites}</ul></body></html>")
        self._send(200, body.encode("utf-8"), "text/html; charset=utf-8")


def make_server(directory: Path, host: str = "127.0.0.1", port: int = 0, *, clock: dt.date | None = None,
                allow_partial: bool = True, public_base: str | None = None) -> _Server:
    """A server over the index in `directory` (not yet serving); port 0 picks a free port.

    With `clock`, the web must be the full web of that clock (`check_web_identity`; a part of
    it only with `allow_partial`). Result URLs start with `public_base` (default: the bound
    address), never with a request's Host header."""
    index = WebIndex(directory)
    check_index_integrity(index, directory)
    if clock is not None:
        check_web_identity(index, clock, allow_partial=allow_partial)
    server = _Server((host, port), _Handler)
    server.index = index
    server.public_base = (public_base or base_url(server)).rstrip("/")
    return server


def rebuild_hint(directory: Path) -> str:
    return f"rebuild it: livesearch build-web --date {Path(directory).name} (or materialise web_corpus of that day)"


def check_index_integrity(index: WebIndex, directory: Path) -> None:
    """WebIndexError naming the rebuild command when the index file is damaged (truncated, overwritten)."""
    try:
        row = index._connection().execute("PRAGMA quick_check(1)").fetchone()
    except sqlite3.DatabaseError as exc:
        raise WebIndexError(f"the web index {index.path} is damaged ({exc}); {rebuild_hint(directory)}") from None
    if row is None or row[0] != "ok":
        raise WebIndexError(f"the web index {index.path} is damaged ({row[0] if row else 'no check result'}); "
                            f"{rebuild_hint(directory)}")


def web_identity(index: WebIndex) -> dict[str, str]:
    """What a run summary records of the web it searched: identity, clock and scope."""
    part = index.identity.partition(" part=")[2].split(" ", 1)[0]  # the identity may go on (" months=…")
    return {"identity": index.identity, "clock": str(index.meta.get("clock", "")),
            "scope": f"part={part}" if part else "full", "pages": str(index.pages)}


def check_web_identity(index: WebIndex, clock: dt.date, *, allow_partial: bool = False) -> dict[str, str]:
    """The web's identity when it is the web of `clock` (and full, unless `allow_partial`); WebIndexError
    naming both clocks otherwise: pages published after D must never reach an agent of D."""
    identity = web_identity(index)
    if identity["clock"] != clock.isoformat():
        raise WebIndexError(f"the web at {index.path} is the web of {identity['clock'] or 'an unknown clock'} "
                            f"({index.identity}), not of {clock.isoformat()}: it may hold pages published after "
                            f"{clock.isoformat()}; build the web of {clock.isoformat()} (livesearch build-web --date "
                            f"{clock.isoformat()})")
    if identity["scope"] != "full" and not allow_partial:
        raise WebIndexError(f"the web at {index.path} is a part of the web of {clock.isoformat()} ({identity['scope']}: "
                            "some entities or tools only); agents are ranked on the full web: build it without "
                            "entities/tools subsets")
    return identity


def base_url(server: _Server) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}"


@contextlib.contextmanager
def running_web(directory: Path, host: str = "127.0.0.1", port: int = 0, *, clock: dt.date | None = None,
                allow_partial: bool = True) -> Iterator[str]:
    """Serve the index in `directory` from a background thread; yields the base URL (see `make_server`)."""
    server = make_server(directory, host, port, clock=clock, allow_partial=allow_partial)
    thread = threading.Thread(target=server.serve_forever, name="offline-web", daemon=True)
    thread.start()
    try:
        yield base_url(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
