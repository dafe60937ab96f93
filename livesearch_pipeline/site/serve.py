"""Serve a built site folder over HTTP on the loopback address (any static host serves it too).

Files only, on the bounded server of `infra.http_server` (a worker pool with timeouts, a request
deadline, a bound on connections, a real backlog; a large download is sent a chunk at a time): a
path is a file of the folder (`/` and a folder's `/…/` its `index.html`; a folder named without its
slash is redirected to it), never a directory listing, never a file outside the folder (`..`, a
link leading out), and `GET` or `HEAD` only. No request logging beyond one line per request to
stderr when asked. The pages and small text files (HTML, CSS, JSON, Markdown, SVG) go
gzip-compressed to a client that accepts it (`Vary: Accept-Encoding`); data downloads as they are. The server never builds: `livesearch site serve` refuses a folder without
`index.html`, naming the command that builds it.
"""

from __future__ import annotations

import gzip
import mimetypes
import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from urllib.parse import quote

from livesearch_pipeline.infra.http_server import BoundedServer, Request, Response

TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json",
         ".jsonl": "application/jsonl; charset=utf-8", ".md": "text/markdown; charset=utf-8",
         ".parquet": "application/vnd.apache.parquet", ".svg": "image/svg+xml", ".png": "image/png"}


class SiteServeError(ValueError):
    """The folder is not a built site."""


def _content_type(path: Path) -> str:
    return TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _answer(root: Path, request: Request, quiet: bool) -> Response:
    response = _file(root, request)
    if not quiet:
        sys.stderr.write(f"{request.method} {request.path} {response.status}\n")
    return response


# The pages and small text files are sent gzip-compressed to a client that accepts it (the latest
# day's page: 2 MB of HTML, some 200 KB compressed); each compressed once per version of the file
# (path, size, mtime) and kept in memory, up to COMPRESSED_CACHE_BYTES of compressed bytes. The
# data downloads (JSONL, Parquet) go as they are, a chunk at a time, however large.
COMPRESSIBLE = (".html", ".css", ".json", ".md", ".svg")
MAX_COMPRESSED_SOURCE = 32 * 1024 * 1024
COMPRESSED_CACHE_BYTES = 64 * 1024 * 1024
_compressed: OrderedDict[tuple, bytes] = OrderedDict()
_compressed_lock = threading.Lock()


def _accepts_gzip(request: Request) -> bool:
    for part in request.headers.get("accept-encoding", "").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*") and params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
            return True
    return False


def _gzipped(path: Path, handle, size: int) -> bytes:
    info = os.fstat(handle.fileno())
    key = (str(path), size, info.st_mtime_ns, info.st_ino)
    with _compressed_lock:
        if key in _compressed:
            _compressed.move_to_end(key)
            return _compressed[key]
    data = gzip.compress(handle.read(), compresslevel=6, mtime=0)
    with _compressed_lock:
        _compressed[key] = data
        while sum(len(v) for v in _compressed.values()) > COMPRESSED_CACHE_BYTES and len(_compressed) > 1:
            _compressed.popitem(last=False)
    return data


def _file(root: Path, request: Request) -> Response:
    if request.method not in ("GET", "HEAD"):
        return Response.text(405, f"{request.method} is not served: this is a static site")
    relative = request.path.lstrip("/")
    target = Path(os.path.realpath(root / relative))
    if target != root and root not in target.parents:
        return Response.text(404, "no such page")
    if target.is_dir():
        if not request.path.endswith("/"):
            return Response(301, b"", headers=(("location", quote(request.path) + "/"),))
        target = target / "index.html"
    try:
        handle = open(target, "rb")  # noqa: SIM115 - closed by the server once sent
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return Response.text(404, "no such page")
    size = os.fstat(handle.fileno()).st_size
    if target.suffix.lower() in COMPRESSIBLE:
        vary = ("vary", "accept-encoding")
        if _accepts_gzip(request) and size <= MAX_COMPRESSED_SOURCE:
            with handle:
                body = _gzipped(target, handle, size)
            return Response(200, body, content_type=_content_type(target),
                            headers=(("content-encoding", "gzip"), vary))
        return Response(200, content_type=_content_type(target), file=handle, file_size=size, headers=(vary,))
    return Response(200, content_type=_content_type(target), file=handle, file_size=size)


def make_server(site_dir: Path, host: str = "127.0.0.1", port: int = 8900, *, quiet: bool = True) -> BoundedServer:
    """A server of `site_dir` bound to (host, port); port 0 picks a free one (`server.server_port`)."""
    site_dir = Path(site_dir)
    if not (site_dir / "index.html").is_file():
        raise SiteServeError(f"{site_dir} has no index.html: build the site first (livesearch site build)")
    root = Path(os.path.realpath(site_dir))
    return BoundedServer(lambda request: _answer(root, request, quiet), host, port, server_header="livesearch-site")
