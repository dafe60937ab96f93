"""Progress of a web build: a handful of ordered lines for the caller to show, and the same web
whether anyone listens or not."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.web import generate
from livesearch_pipeline.web.build import build_web
from livesearch_pipeline.web.corpus import CorpusConfig, Page
from livesearch_pipeline.core.progress import Progress
from livesearch_pipeline.web.generate import PROGRESS_STEPS, generate_pages
from livesearch_pipeline.web.index import INDEX_FILE
from livesearch_pipeline_tests.web.web_fixtures import CLOCK, MARKET_TOOLS, TOOLS, small_web

ENTITY_LINE = re.compile(r"pages: ([\d,]+) from ([\d,]+) of ([\d,]+) entities$")
WRAPS_LINE = re.compile(r"pages: ([\d,]+) in all, with ([\d,]+) market wraps and ([\d,]+) bulletin and archive "
                        r"pages \(([\d,]+) bulletin rows\)$")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _twelve_entities() -> CorpusConfig:
    """Twelve entities of every class, spread over the universe; few tools and sessions (fast)."""
    codes = tuple(sorted(e.code for e in shared_market(DEFAULT_SEED).universe.entities)[::60][:12])
    return CorpusConfig(clock=CLOCK, history_sessions=3, entities=codes, tools=TOOLS, market_tools=MARKET_TOOLS)


def _check_lines(lines: list[str], pages: list[Page], entities: int) -> None:
    """About one line per tenth of the entity batches, counts rising to the whole, then the total."""
    assert 2 <= len(lines) <= PROGRESS_STEPS + 1, lines
    *steps, last = lines
    parsed = [ENTITY_LINE.match(line) for line in steps]
    assert all(parsed), steps
    page_counts = [_number(m.group(1)) for m in parsed]
    entity_counts = [_number(m.group(2)) for m in parsed]
    assert {_number(m.group(3)) for m in parsed} == {entities}
    assert page_counts == sorted(page_counts) and entity_counts == sorted(set(entity_counts))
    assert entity_counts[-1] == entities
    final = WRAPS_LINE.match(last)
    assert final, last
    assert _number(final.group(1)) == len(pages)
    assert _number(final.group(2)) == sum(1 for p in pages if p.kind == "wrap")
    assert _number(final.group(3)) == sum(1 for p in pages if p.kind in ("bulletin", "archive"))


def test_progress_is_due_about_every_tenth_of_the_batches_and_after_the_last() -> None:
    for batches in range(1, 400):
        # The batches after which the build's Progress (core/progress.py) says a line.
        marks: set[int] = set()
        told = Progress(total=batches, what="pages", report=lambda _: None, steps=PROGRESS_STEPS,
                        line=lambda: marks.add(told.done) or "")
        for _ in range(batches):
            told.advance()
        assert batches in marks and min(marks) >= 1
        assert len(marks) == min(batches, PROGRESS_STEPS)


def test_progress_lines_are_ordered_bounded_and_change_no_page(monkeypatch: pytest.MonkeyPatch) -> None:
    # One entity a batch: twelve batches, more than the lines allowed, so the bound is exercised.
    monkeypatch.setattr(generate, "ENTITY_BATCH", 1)
    config = _twelve_entities()
    lines: list[str] = []
    reported = list(generate_pages(config, progress=lines.append))
    assert reported == list(generate_pages(config))
    _check_lines(lines, reported, entities=12)
    assert len(lines) == PROGRESS_STEPS + 1  # ten of the twelve batches, and the total


def test_a_build_reports_its_indexing_and_writes_the_same_web(tmp_path: Path) -> None:
    lines: list[str] = []
    quiet = build_web(small_web().config(), tmp_path / "quiet", workers=1)
    told = build_web(small_web().config(), tmp_path / "told", workers=1, progress=lines.append)
    *pages_lines, indexing, built = lines
    assert indexing == f"indexing {told.stats.pages:,} pages: merging the full-text index"
    assert built.startswith(f"web of {CLOCK}: {told.stats.pages:,} pages indexed")
    assert len(pages_lines) >= 2 and all(line.startswith("pages: ") for line in pages_lines)

    def content(directory: Path) -> tuple[list, list, dict]:
        with sqlite3.connect(directory / INDEX_FILE) as connection:
            pages = connection.execute("SELECT * FROM pages ORDER BY id").fetchall()
            records = connection.execute("SELECT key, page FROM records ORDER BY page, key").fetchall()
        manifest = json.loads((directory / "manifest.json").read_text())
        for timing in ("build_seconds", "history_needs_seconds"):
            manifest.pop(timing)
        return pages, records, manifest

    assert told.identity == quiet.identity
    assert content(told.directory) == content(quiet.directory)


@pytest.mark.slow
def test_worker_processes_report_the_same_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generate, "ENTITY_BATCH", 1)  # batches are cut in this process
    config = _twelve_entities()
    serial: list[str] = []
    parallel: list[str] = []
    pages = list(generate_pages(config, progress=serial.append))
    assert list(generate_pages(config, workers=2, progress=parallel.append)) == pages
    assert parallel == serial
    _check_lines(parallel, pages, entities=12)
