"""Build the offline web of one date: generate its pages and index them under `<web root>/<D>/`.

The directory holds `web.sqlite` (pages + full-text index, written atomically) and
`manifest.json` (the corpus identity, the market identity it was read from, page counts and
the build time), and, once D's gold exists, `evidence.json`: the evidence map (web/evidence.py),
which `attach_evidence` writes and summarises in the manifest. Rebuilding a date gives the same pages: the corpus is a pure function of the
market seed, the clock and the history window.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from livesearch_pipeline.core.workers import default_workers
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.web.corpus import CorpusConfig, WebCorpusError
from livesearch_pipeline.web.generate import generate_prepared
from livesearch_pipeline.web.index import INDEX_FILE, BuildStats, PreparedPage, Tokenizer, build_index

MANIFEST_FILE = "manifest.json"
# Processes used to generate pages: the reference machine has two cores.
DEFAULT_WORKERS = default_workers()


@dataclass(frozen=True)
class WebBuild:
    directory: Path
    identity: str
    market_identity: str
    stats: BuildStats
    generate_and_index_s: float


def corpus_directory(web_root: Path, day: dt.date) -> Path:
    return web_root / day.isoformat()


def build_web(config: CorpusConfig, web_root: Path, *, workers: int = DEFAULT_WORKERS,
              tokenizer: Tokenizer = "cjk", pool_file: Path | None = None, gold_file: Path | None = None,
              progress: Callable[[str], None] | None = None) -> WebBuild:
    """Generate and index the web of `config.clock` into `web_root/<clock>/`.

    With `pool_file`, the entities' monthly quote histories reach back as far as the pool's
    questions read at the clock (web/needs.py: from `gold_file`, D's gold, when it exists, else by
    executing the pool), unless `config.history_from` is already set. `progress` receives a
    handful of lines on the way (the pages generated so far, then the indexing; web/generate.py)."""
    directory = corpus_directory(web_root, config.clock)
    market_identity = ServiceConfig(seed=config.seed, clock=config.clock).identity
    started = time.monotonic()
    if pool_file is not None and pool_file.is_file() and not config.history_from:
        from livesearch_pipeline.web.needs import history_from_files

        config = dataclasses.replace(config, history_from=history_from_files(pool_file, gold_file, config.clock,
                                                                             config.seed))
        if progress is not None:
            progress(f"quote histories: {len(config.history_from):,} entities' reach back past the recent months "
                     f"(the pool's questions at the clock, {time.monotonic() - started:.1f} s)")
    needs_s = time.monotonic() - started
    # The workers prepare the index's rows of their pages (web/generate.py); this process inserts them.
    pages = generate_prepared(config, workers=workers, tokenizer=tokenizer, progress=progress)
    if progress is not None:
        pages = _then_report_indexing(pages, progress)
    stats = build_index(pages, directory, identity=config.identity,
                        tokenizer=tokenizer,
                        extra_meta={"market": market_identity, "clock": config.clock.isoformat(),
                                    "history_sessions": config.history_sessions})
    elapsed = time.monotonic() - started
    manifest = {
        "identity": config.identity, "market": market_identity, "clock": config.clock.isoformat(),
        "seed": config.seed, "history_sessions": config.history_sessions, "tokenizer": tokenizer,
        "pages": stats.pages, "by_kind": stats.by_kind, "index_file": INDEX_FILE, "index_bytes": stats.bytes,
        "build_seconds": round(elapsed, 2), "history_needs_seconds": round(needs_s, 2),
        "history_from": len(config.history_from),
    }
    temporary = directory / f".{MANIFEST_FILE}.tmp"
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, directory / MANIFEST_FILE)
    if progress is not None:
        progress(f"web of {config.clock}: {stats.pages:,} pages indexed ({stats.bytes / 1e6:.1f} MB) in {elapsed:.1f} s")
    return WebBuild(directory, config.identity, market_identity, stats, elapsed)


def _then_report_indexing(pages: Iterable[PreparedPage], progress: Callable[[str], None]) -> Iterator[PreparedPage]:
    """`pages`, then a line saying the index is being finished: merging the full-text index and
    counting its terms take some seconds after the last page."""
    count = 0
    for page in pages:
        count += 1
        yield page
    progress(f"indexing {count:,} pages: merging the full-text index")


def attach_evidence(directory: Path, pool_file: Path, gold_file: Path,
                    progress: Callable[[str], None] | None = None) -> dict:
    """Write (or reuse) the evidence map of the web in `directory` for the gold in `gold_file` and
    record its file and summary in the manifest; returns the map. `progress` receives a line
    before (the map replays each question's calls) and one with the summary after."""
    from livesearch_pipeline.web.evidence import EVIDENCE_FILE, ensure_evidence_map

    manifest_path = directory / MANIFEST_FILE
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise WebCorpusError(f"{manifest_path}: cannot read the web's manifest ({exc}); rebuild the web") from exc
    if progress is not None:
        progress(f"evidence map: the pages holding each question's evidence, for {gold_file.name}")
    evidence = ensure_evidence_map(directory, pool_file, gold_file, seed=int(manifest["seed"]))
    manifest.update(evidence_file=EVIDENCE_FILE, evidence_gold_sha256=evidence["gold_sha256"],
                    evidence_summary=evidence["summary"])
    temporary = directory / f".{MANIFEST_FILE}.tmp"
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, manifest_path)
    if progress is not None:
        summary = evidence["summary"]
        progress(f"evidence map: {summary['evidence']['present']:,} of {summary['evidence']['n']:,} web-answerable "
                 f"questions with evidence on the web ({summary['tools_only']:,} tools-only)")
    return evidence
