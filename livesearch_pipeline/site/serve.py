"""Serve a built site folder over HTTP on the loopback address (any static host serves it too).

Plain `http.server` over the folder: files only, no directory listings, no request logging to
stderr beyond one line per request when asked. The server never builds: `livesearch site serve`
refuses a folder without `index.html`, naming the command that builds it.
"""

from __future__ import annotations

import functools
import http.server
import sys
from pathlib import Path


class SiteServeError(ValueError):
    """The folder is not a built site."""


class _Handler(http.server.SimpleHTTPRequestHandler):
    quiet = True

    def list_directory(self, path):  # a folder without index.html is not a page of the site
        self.send_error(404, "no such page")
        return None

    def log_message(self, format: str, *args) -> None:
        if not self.quiet:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")


def make_server(site_dir: Path, host: str = "127.0.0.1", port: int = 8900, *,
                quiet: bool = True) -> http.server.ThreadingHTTPServer:
    """A server of `site_dir` bound to (host, port); port 0 picks a free one (`server.server_port`)."""
    site_dir = Path(site_dir)
    if not (site_dir / "index.html").is_file():
        raise SiteServeError(f"{site_dir} has no index.html: build the site first (livesearch site build)")
    handler = functools.partial(type("SiteHandler", (_Handler,), {"quiet": quiet}), directory=str(site_dir))
    return http.server.ThreadingHTTPServer((host, port), handler)
