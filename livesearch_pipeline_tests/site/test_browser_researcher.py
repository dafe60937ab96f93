"""The site a researcher can use (issue 41), in Debian's headless Chromium (test_browser.py's idiom):

- every page fits its viewport at 390 px (a phone) and 1,366 px (a laptop): no sideways scroll;
- every agent has a card, on its page and on the board; the reference rows (oracle, stale) are
  shown apart from the ranked agents, without a rank;
- the Run-it-yourself route, followed literally in a clean folder against the served site, scores
  a predictions file of the shown answers 100% on the published questions;
- no evidence page of a withheld gold is on any day's page;
- the latest day's page is served gzip-compressed under 300 KB; the headers sort by keyboard, a
  text column A→Z first; the day's questions filter by tier.

Skips, naming the reason, when Chromium or playwright is missing.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import urljoin

import pytest

from livesearch_pipeline.site.build import build_site, site_dir
from livesearch_pipeline_tests.site.conftest import DAYS
from livesearch_pipeline_tests.site.test_browser import _unavailable, browser, crawl, served

pytestmark = [pytest.mark.slow, pytest.mark.skipif(_unavailable() is not None, reason=_unavailable() or "")]

WIDTHS = (390, 1366)
LATEST_PAGE_LIMIT = 300_000  # bytes, gzip-compressed


def _overflowing(context, urls: list[str], width: int) -> dict[str, int]:
    """url -> document scroll width, for the pages wider than `width` at a viewport of `width` px."""
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 800})
    wide = {}
    for url in urls:
        page.goto(url, wait_until="load")
        scroll = page.evaluate("document.documentElement.scrollWidth")
        if scroll > width:
            wide[url] = scroll
    page.close()
    return wide


def _route_commands(page, step: str) -> str:
    return page.eval_on_selector(f"#{step}", "pre => pre.textContent")


def test_the_site_a_researcher_can_use(data_paths, tmp_path: Path) -> None:
    build_site(data_paths, DAYS[-1])
    site = site_dir(data_paths)
    with served(site) as base, browser() as context:
        pages = [url for url in crawl(context, base) if url.endswith(".html")]
        assert urljoin(base, "run-it-yourself.html") in pages
        for width in WIDTHS:
            assert _overflowing(context, pages, width) == {}, f"pages scroll sideways at {width} px"

        page = context.new_page()
        page.set_viewport_size({"width": 390, "height": 800})
        page.goto(urljoin(base, "history.html"))
        assert page.eval_on_selector("#history-chart", "svg => svg.getBoundingClientRect().width") <= 390

        # The board fits a laptop: its tables need no scrolling of their own at 1,366 px.
        page.set_viewport_size({"width": 1366, "height": 800})
        page.goto(urljoin(base, "index.html"))
        for table in ("#board", "#reference"):
            assert page.eval_on_selector(table, "t => t.scrollWidth <= t.parentElement.clientWidth"), table
        page.set_viewport_size({"width": 390, "height": 800})

        # Agent cards and reference rows; a day's competitors ranked from 1 without the references.
        page.goto(urljoin(base, f"days/{DAYS[-1]}.html"))
        ranks = page.eval_on_selector_all("#day-agents tbody tr", "rows => rows.map(r => r.cells[0].textContent)")
        assert sorted(ranks) == ["1", "reference", "reference"]
        page.goto(urljoin(base, "index.html"))
        ranked = page.eval_on_selector_all("#board tbody tr", "rows => rows.map(r => r.dataset.agent)")
        reference = page.eval_on_selector_all("#reference tbody tr", "rows => rows.map(r => r.dataset.agent)")
        assert sorted(reference) == ["oracle", "stale"] and "oracle" not in ranked and ranked
        assert page.locator("#reference td.rank").count() == 0
        assert page.eval_on_selector_all("#board td.rank", "cells => cells.map(c => c.textContent)")[0] == "1"
        carded = set(page.eval_on_selector_all("#agent-cards tbody tr", "rows => rows.map(r => r.dataset.agent)"))
        assert set(ranked) | set(reference) <= carded
        for agent in sorted(carded):
            page.goto(urljoin(base, f"agents/{agent}.html"))
            card = page.inner_text("#agent-card")
            assert "kind" in card and "read budget" in card and "code version" in card
        page.goto(urljoin(base, "agents/oracle.html"))
        assert page.get_attribute("#agent-card", "data-kind") == "oracle"
        assert "reference" in page.inner_text("#runs tbody")

        # Sorting by keyboard: a text column sorts A→Z first.
        page.goto(urljoin(base, "index.html"))
        header = page.locator("#reference th", has_text="agent").first
        header.focus()
        page.keyboard.press("Enter")
        assert header.get_attribute("aria-sort") == "ascending"
        assert page.eval_on_selector_all("#reference tbody tr", "rows => rows.map(r => r.dataset.agent)") == [
            "oracle", "stale"]

        # No evidence page beside a withheld gold, on any day's page; the filter keeps one tier.
        for day in DAYS:
            page.goto(urljoin(base, f"days/{day}.html"))
            leaks = page.eval_on_selector_all(
                "#questions tbody tr", "rows => rows.filter(r => r.querySelector('.hidden-gold') && "
                "r.lastElementChild.querySelector('code')).length")
            assert leaks == 0, day
        page.select_option("#question-filters select[data-dimension='tier']", "T2")
        tiers = page.eval_on_selector_all("#questions tbody tr", "rows => rows.filter(r => r.style.display !== 'none')"
                                          ".map(r => r.dataset.tier)")
        assert tiers and set(tiers) == {"T2"}
        assert page.inner_text("#pager-status").endswith(f"of {len(tiers)} (page 1 of 1)")

        # The latest day's page, served compressed; the dataset card with its charset.
        request = urllib.request.Request(urljoin(base, f"days/{DAYS[-1]}.html"), headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
            assert response.headers["Content-Encoding"] == "gzip"
        assert len(body) < LATEST_PAGE_LIMIT and b"<table" in gzip.decompress(body)
        with urllib.request.urlopen(urljoin(base, "downloads/README.md"), timeout=10) as response:
            assert response.headers["Content-Type"] == "text/markdown; charset=utf-8"

        # The outsider's route, followed literally in a clean folder.
        page.goto(urljoin(base, "run-it-yourself.html"))
        day = page.eval_on_selector("#scorable tbody a", "a => a.textContent")
        steps = [_route_commands(page, step) for step in ("step-download", "step-check", "step-score", "step-compare")]
        page.close()
        # The page's commands as written; only the site's address is the reader's own (the page says so).
        script = "\n".join(steps).replace("http://127.0.0.1:8900", base.rstrip("/"))
        clean = tmp_path / "outsider"
        clean.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("LIVESEARCH_")}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=clean, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    assert "published questions only" in done.stdout
    manifest = json.loads((clean / "gold.manifest.json").read_text())
    summary = json.loads((clean / "my-run" / "summary.json").read_text())
    assert summary["gold_date"] == day and summary["published_gold"] is True
    assert (summary["accuracy"], summary["n_scored"], summary["n_withheld"]) == (1.0, manifest["shown"],
                                                                                manifest["withheld"])
    assert summary["gold_sha256"] == manifest["snapshot"]["sha256"]
    assert "oracle" in done.stdout  # the comparison step lists the board's agents on the shown questions
