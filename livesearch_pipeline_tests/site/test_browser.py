"""The built site in a real browser: Debian's headless Chromium driven by playwright.

Every page reachable by links from the board loads with no console error, no failed request and
no broken link; sorting the board by accuracy works; the history chart and a question's gold per
day are there; no request leaves the site's own host. Skips, naming the reason, when Chromium
(/usr/bin/chromium, `apt-get install chromium`; .ci/run installs it) or playwright is missing.

Also a script, for the README's screenshots of a built site (e.g. `make run`'s):

    python -m livesearch_pipeline_tests.site.test_browser data/site docs [QID]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest

from livesearch_pipeline.site.build import build_site, site_dir
from livesearch_pipeline.site.serve import make_server

CHROMIUM = Path(os.environ.get("LIVESEARCH_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _unavailable() -> str | None:
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} is missing: apt-get install chromium (Debian's package; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -r requirements.lock)"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_unavailable() is not None, reason=_unavailable() or "")]


@contextmanager
def served(folder: Path) -> Iterator[str]:
    server = make_server(folder, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextmanager
def browser() -> Iterator[object]:
    """A fresh Chromium profile per use (its own --user-data-dir), deleted afterwards."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="livesearch-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(profile, executable_path=str(CHROMIUM), headless=True,
                                                           args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 900})
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def crawl(context, base: str) -> dict[str, list[str]]:
    """Every page reachable from the board: url -> problems (console errors, failed or foreign requests,
    broken links). Non-HTML links (downloads) are fetched, not opened."""
    origin = urlsplit(base).netloc
    problems: dict[str, list[str]] = {}
    queue, seen, checked_files = [urljoin(base, "index.html")], set(), set()
    page = context.new_page()
    current: list[str] = []
    page.on("console", lambda m: current.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: current.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: current.append(f"request failed: {r.url}"))
    page.on("request", lambda r: current.append(f"request to another host: {r.url}")
            if urlsplit(r.url).scheme in ("http", "https") and urlsplit(r.url).netloc != origin else None)
    page.on("response", lambda r: current.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    while queue:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        current.clear()
        page.goto(url, wait_until="load")
        links = page.eval_on_selector_all("a[href]", "nodes => nodes.map(n => n.href)")
        for link in links:
            target = urldefrag(link).url
            if urlsplit(target).netloc != origin:
                current.append(f"link to another host: {link}")
            elif target.endswith(".html") or target.endswith("/"):
                queue.append(target)
            elif target not in checked_files:
                checked_files.add(target)
                with urllib.request.urlopen(target, timeout=10) as response:  # 404 raises
                    if response.status != 200:
                        current.append(f"broken link {link}: HTTP {response.status}")
        problems[url] = list(current)
    page.close()
    return problems


def screenshots(context, base: str, out_dir: Path, qid: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    page = context.new_page()
    shots = []
    for name, url in (("site_board.png", "index.html"), ("site_question.png", f"questions/{qid}.html")):
        page.goto(urljoin(base, url), wait_until="load")
        path = out_dir / name
        page.screenshot(path=str(path), full_page=False)
        shots.append(path)
    page.close()
    return shots


def test_the_site_in_headless_chromium(data_paths, tmp_path: Path) -> None:
    from livesearch_pipeline_tests.site.conftest import DAYS, N_QUESTIONS

    build_site(data_paths, DAYS[-1])
    with served(site_dir(data_paths)) as base, browser() as context:
        problems = crawl(context, base)
        assert len(problems) >= N_QUESTIONS + len(DAYS) + 6  # questions, days, board, history, agents, ...
        assert {url: p for url, p in problems.items() if p} == {}

        page = context.new_page()
        page.goto(urljoin(base, "index.html"))

        # The synthetic board ranks one agent; the reference rows (oracle, stale) have two to sort.
        def accuracies() -> list[float]:
            return [float(v) for v in page.eval_on_selector_all("#reference tbody td.accuracy",
                                                                "cells => cells.map(c => c.dataset.value)")]
        header = page.locator("#reference th", has_text="accuracy").first
        header.click()
        descending = accuracies()
        assert descending == sorted(descending, reverse=True)
        header.click()
        ascending = accuracies()
        assert ascending == sorted(ascending) and ascending != descending
        assert header.get_attribute("aria-sort") == "ascending"
        page.click("#sort-accuracy")  # the ranked table sorts too
        assert page.get_attribute("#sort-accuracy", "aria-sort") == "descending"

        page.goto(urljoin(base, "history.html"))
        assert page.locator("#history-chart g.series").count() == 3
        assert page.locator("#history-chart circle").count() >= 3 * len(DAYS) - 1

        qid = page.eval_on_selector("#history-table a[href^='days/']", "a => a.getAttribute('href')")
        page.goto(urljoin(base, qid))
        first_question = page.eval_on_selector("#questions tbody a", "a => a.getAttribute('href')")
        page.goto(urljoin(urljoin(base, qid), first_question))
        rows = page.locator("#gold-by-day tbody tr")
        assert rows.count() == len(DAYS)
        assert "withheld" in rows.nth(0).inner_text()  # the latest day comes first, its gold withheld
        page.close()

        shots = screenshots(context, base, tmp_path / "shots", first_question.split("/")[-1][:-len(".html")])
        assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in shots)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: python -m livesearch_pipeline_tests.site.test_browser SITE_DIR OUT_DIR [QID]")
    site, out = Path(sys.argv[1]), Path(sys.argv[2])
    chosen = sys.argv[3] if len(sys.argv) == 4 else sorted(p.stem for p in (site / "questions").glob("ls-*.html"))[0]
    with served(site) as base_url, browser() as ctx:
        for shot in screenshots(ctx, base_url, out, chosen):
            print(shot)
