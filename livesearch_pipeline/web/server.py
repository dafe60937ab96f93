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

The server binds 127.0.0.1 by default: it is a benchmark sandbox, not a public site. It runs on the
bounded server of `infra.http_server` (a worker pool with timeouts, a request deadline, a bound on
connections, a real backlog): idle or slow clients cannot exhaust threads, memory or handles. Each
worker thread opens one connection to the index, closed with the server; the home page's per-site
counts are computed once. A page whose stored bytes are damaged answers 500 naming the rebuild
command.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import json
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Iterator
from urllib.parse import parse_qs

from livesearch_pipeline.infra.http_server import BoundedServer, Request, Response
from livesearch_pipeline.web.index import WebIndex, WebIndexError

log = logging.getLogger(__name__)

RESULTS_PER_PAGE = 10
MAX_PAGENO = 50
ENGINE = "web"
# SearXNG's time ranges, in days before the web's clock.
TIME_RANGES = {"day": 1, "week": 7, "month": 31, "year": 366}
# The longest query searched (characters): a query's cost grows with its phrases, and a
# 6,000-character Chinese query took 15 s of CPU. Longer queries get 400 naming the bound.
MAX_QUERY_CHARS = 500


class WebServer(BoundedServer):
    """The offline web on the bounded server (`infra.http_server`): a fixed pool of worker threads, each
    with one connection to the index (closed with the server), a request deadline, a real backlog."""

    index: WebIndex
    public_base: str  # result URLs start with it
    home_page: bytes  # the home page's per-site counts, computed once: the index never changes


def _answer(server: WebServer, request: Request) -> Response:
    """One request of the offline web (module doc)."""
    if request.method in ("GET", "HEAD"):
        params = parse_qs(request.query)
        if request.path == "/search":
            return _search(server, params)
        if request.path in ("/", "/index.html"):
            return _redirect_to_search(request.query) if "q" in params else _html(200, server.home_page)
        try:
            page = server.index.page(request.path)
        except WebIndexError as exc:
            log.error("%s", exc)
            return Response.text(500, str(exc))
        if page is None:
            return Response.text(404, f"no page at {request.path}")
        return _html(200, page.html.encode("utf-8"))
    if request.method == "POST":
        if request.path not in ("/search", "/"):
            return _refusal(405, f"POST is only served at /search, not {request.path}")
        form = _form(request)
        return form if isinstance(form, Response) else _search(server, form)
    return Response.text(405, f"{request.method} is not served")


def _html(status: int, body: bytes) -> Response:
    return Response(status, body, "text/html; charset=utf-8")


def _refusal(status: int, message: str) -> Response:
    """A refused POST leaves its body unread: the connection ends with the answer."""
    return Response(status, message.encode("utf-8") + b"\n", headers=(("connection", "close"),))


def _form(request: Request) -> dict[str, list[str]] | Response:
    """The form fields of a POST body (urlencoded), merged over the URL's query string."""
    kind = (request.headers.get("content-type") or "application/x-www-form-urlencoded").split(";")[0].strip()
    if kind != "application/x-www-form-urlencoded":
        return _refusal(415, f"POST /search takes form data (application/x-www-form-urlencoded), not {kind}")
    params = parse_qs(request.query)
    params.update(parse_qs(request.body.decode("utf-8", errors="replace")))
    return params


def _redirect_to_search(query: str) -> Response:
    """SearXNG sends `/?q=…` to `/search?q=…` (clients configured with the bare host rely on it)."""
    return Response(302, b"", headers=(("location", f"/search?{query}"),))


def _since(server: WebServer, params: dict[str, list[str]]) -> tuple[Response | None, dt.date | None]:
    """(a refusal, or None; the first day) of the `time_range` parameter; an empty one means no range."""
    value = (params.get("time_range") or [""])[0].strip()
    if not value:
        return None, None
    if value not in TIME_RANGES:
        return Response.text(400, f"time_range must be one of {', '.join(TIME_RANGES)}, got {value!r}"), None
    clock = server.index.clock
    if clock is None:
        return Response.text(400, "time_range needs the web's clock, which this index does not record"), None
    return None, clock - dt.timedelta(days=TIME_RANGES[value])


def _search(server: WebServer, params: dict[str, list[str]]) -> Response:
    query = (params.get("q") or [""])[0].strip()
    fmt = (params.get("format") or ["html"])[0]
    if fmt not in ("json", "html"):
        return Response.text(400, f"format {fmt!r} is not served; use format=json (or html)")
    try:
        pageno = int((params.get("pageno") or ["1"])[0])
    except ValueError:
        return Response.text(400, f"pageno must be an integer, got {params.get('pageno')!r}")
    if not query:
        return Response.text(400, "missing query: pass q=...")
    if len(query) > MAX_QUERY_CHARS:
        return Response.text(400, f"query of {len(query):,} characters; at most {MAX_QUERY_CHARS} are searched "
                                  f"(starts {query[:40]!r})")
    if not 1 <= pageno <= MAX_PAGENO:
        return Response.text(400, f"pageno must be between 1 and {MAX_PAGENO}, got {pageno}")
    refusal, since = _since(server, params)
    if refusal is not None:
        return refusal
    try:
        found = server.index.search_results(query, pageno=pageno, per_page=RESULTS_PER_PAGE, since=since)
    except WebIndexError as exc:
        return Response.text(400, str(exc))
    base = server.public_base  # the server's own configured base, never the request's Host header
    results = [{
        "title": h.title, "url": base + h.path, "content": h.snippet,
        "publishedDate": f"{h.published.isoformat()}T00:00:00", "engine": ENGINE, "engines": [ENGINE],
        "positions": [(pageno - 1) * RESULTS_PER_PAGE + i + 1], "score": round(h.score, 4),
        "category": "general", "parsed_url": ["http", base[7:], h.path, "", "", ""],
    } for i, h in enumerate(found.hits)]
    if fmt == "json":
        payload = {"query": query, "number_of_results": found.total, "results": results, "answers": [],
                   "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}
        return Response(200, json.dumps(payload, ensure_ascii=False).encode("utf-8"), "application/json")
    items = "".join(f'<li><a href="{html.escape(r["url"])}">{html.escape(r["title"])}</a> '
                    f'<small>{r["publishedDate"][:10]}</small><p>{html.escape(r["content"])}</p></li>'
                    for r in results)
    body = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(query)} - search</title>"
            f"</head><body><form action='/search'><input name='q' value='{html.escape(query)}'></form>"
            f"<ol>{items}</ol></body></html>")
    return _html(200, body.encode("utf-8"))


def _home_page(index: WebIndex) -> bytes:
    sites = "".join(f"<li>{html.escape(site)}: {count} pages</li>" for site, count in index.sites())
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Search</title></head>"
            f"<body><h1>Search</h1>"
            f"<form action='/search'><input name='q'><button>Search</button></form><ul>{sites}</ul></body></html>"
            ).encode("utf-8")


def make_server(directory: Path, host: str = "127.0.0.1", port: int = 0, *, clock: dt.date | None = None,
                allow_partial: bool = True, public_base: str | None = None) -> WebServer:
    """A server over the index in `directory` (bound, not yet serving); port 0 picks a free port.

    With `clock`, the web must be the full web of that clock (`check_web_identity`; a part of
    it only with `allow_partial`). Result URLs start with `public_base` (default: the bound
    address), never with a request's Host header."""
    index = WebIndex(directory)
    try:
        check_index_integrity(index, directory)
        if clock is not None:
            check_web_identity(index, clock, allow_partial=allow_partial)
        home = _home_page(index)
    except BaseException:
        index.close()
        raise
    holder: list[WebServer] = []
    try:
        server = WebServer(lambda request: _answer(holder[0], request), host, port,
                           server_header="livesearch-offline-web/1", on_close=[index.close])
    except BaseException:
        index.close()
        raise
    holder.append(server)
    server.index, server.home_page = index, home
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


def base_url(server: BoundedServer) -> str:
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
