"""Every rate the site shows carries its 95% Wilson interval in %, units are printed once, and a
withheld gold says why."""

from __future__ import annotations

import re

from livesearch_pipeline.core.models import MatchRule
from livesearch_pipeline.site.build import build_site, site_dir
from livesearch_pipeline.site.inputs import GoldRow
from livesearch_pipeline.site.pages import gold_html
from livesearch_pipeline_tests.site.conftest import DAYS

CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)
PERCENT = re.compile(r"\d+\.\d%")


def test_every_rate_in_a_table_has_its_interval_in_percent(data_paths) -> None:
    build_site(data_paths, DAYS[-1], workers=1)
    site = site_dir(data_paths)
    pages = [site / "index.html", site / "history.html", *sorted((site / "agents").glob("*.html")),
             *sorted((site / "days").glob("*.html"))]
    rates = 0
    for page in pages:
        for cell in CELL.findall(page.read_text(encoding="utf-8")):
            shown = PERCENT.findall(re.sub(r'<span class="ci".*?</span>', "", cell))
            if shown:
                rates += len(shown)
                assert len(shown) == 1 and re.search(r'class="ci"[^>]*>\[\d+\.\d%, \d+\.\d%\]', cell), (page, cell)
    assert rates > 100
    board = (site / "index.html").read_text(encoding="utf-8")
    assert re.search(r'id="stale-gold".*?class="ci"', board, re.S)


def test_units_once_and_withheld_gold_with_its_reason(data_paths) -> None:
    build_site(data_paths, DAYS[-1], workers=1)
    site = site_dir(data_paths)
    earlier = (site / "days" / f"{DAYS[0]}.html").read_text(encoding="utf-8")
    assert '</b> <span class="muted">(CNY)</span>' in earlier  # a bare number's unit, once
    rule = MatchRule(rule="approx", abs_tol=0.005, decimals=2, unit="CNY")
    said = GoldRow("ls-0", DAYS[0], "ok", "0.47 CNY", 0.47, "CNY", None, rule)
    assert gold_html(said, None) == "<b>0.47 CNY</b>"  # not "0.47 CNY (CNY)"
    latest = (site / "days" / f"{DAYS[-1]}.html").read_text(encoding="utf-8")
    assert "withheld (live)" not in latest and "withheld: latest day</span>" in latest
    assert 'title="the latest frozen day: tomorrow&#x27;s answer may be the same">withheld: latest day' in latest
