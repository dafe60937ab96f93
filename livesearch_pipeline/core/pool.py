"""The question pool on disk, as every reader needs it: file names, the manifest, the checked load.

Construction writes the pool (`construction.pool.write_pool`); evaluation, the daily refresh and
the command line read it here, so that none of them depends on the construction package. Also the
record evaluation hands construction's next pool filter (`SignatureHistory`) and the one meaning
of a visibility level's band.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.models import PoolManifest, Question
from livesearch_pipeline.core.program import PoolLoadError, parse_pool_bytes

POOL_FILE = "questions.jsonl"
MANIFEST_FILE = "pool_manifest.json"
# The tool catalog the pool was built from, in the construction directory beside the pool.
CATALOG_FILE = "tool_catalog.json"


# Asset classes of instruments, which have a web-visibility level of their own (0 obscure .. 10
# household name). Every other class is a market-wide series (macro statistics, rates, FX,
# market totals): published by bureaus, central banks and exchanges, it is stored at level 10
# (what a search finds about it) but reported in a band of its own, MARKET_BAND (issue 20).
INSTRUMENT_CLASSES = ("cn_equity", "hk_equity", "us_equity", "index", "fund")
MARKET_BAND = "market"


def is_instrument(asset_class: str) -> bool:
    return asset_class in INSTRUMENT_CLASSES


def visibility_band(level: int, asset_class: str | None = None) -> str:
    """The band of a visibility level (0..10): low 0-3, mid 4-6, high 7-10; a market-wide series
    (an asset class that is not an instrument's, when given) is MARKET_BAND whatever its level."""
    if not 0 <= level <= 10:
        raise ValueError(f"visibility level {level} is outside 0..10")
    if asset_class is not None and not is_instrument(asset_class):
        return MARKET_BAND
    return "low" if level <= 3 else "mid" if level <= 6 else "high"


def visibility_label(level: int, asset_class: str) -> str:
    """How a report names a question's visibility: its level, or MARKET_BAND for a series."""
    return str(level) if is_instrument(asset_class) else MARKET_BAND


@dataclass(frozen=True)
class SignatureHistory:
    """What evaluation says about a signature: how many agents saw it and how many solved it all."""

    agents_evaluated: int
    agents_solved: int
    served_qids: frozenset[str]


def read_catalog(path: Path) -> Catalog:
    """A tool catalog written by construction (`tool_catalog.json`)."""
    return Catalog.model_validate_json(Path(path).read_bytes())


def read_manifest(root: Path) -> PoolManifest:
    path = Path(root) / MANIFEST_FILE
    if not path.exists():
        raise FileNotFoundError(f"no pool manifest at {path}; build the pool first (livesearch build-pool)")
    return PoolManifest.model_validate_json(path.read_bytes())


def _checked_manifest(manifest_path: Path) -> PoolManifest:
    """The pool manifest at `manifest_path`; PoolLoadError naming it when missing or invalid."""
    if not manifest_path.is_file():
        raise PoolLoadError(f"no pool manifest {manifest_path}; build the pool first (livesearch build-pool)")
    try:
        return PoolManifest.model_validate_json(manifest_path.read_bytes())
    except ValidationError as exc:
        raise PoolLoadError(f"{manifest_path} is not a valid pool manifest: {exc}") from None


def pool_catalog_path(root: Path, construction_dir: Path) -> Path:
    """Where the catalog the pool under `root` was built from lies: beside the pool when the pool
    carries it (`tool_catalog.json`, bound by the manifest's `catalog_sha256`), else (a pool
    written before pools carried it) in the construction folder."""
    beside = Path(root) / CATALOG_FILE
    return beside if beside.is_file() else Path(construction_dir) / CATALOG_FILE


def read_pool_catalog(root: Path, construction_dir: Path) -> Catalog:
    """The catalog the pool was built from, checked against the pool manifest; PoolLoadError naming
    the file when it is missing, unbound or modified."""
    root = Path(root)
    manifest_path = root / MANIFEST_FILE
    manifest = _checked_manifest(manifest_path)
    beside = root / CATALOG_FILE
    if manifest.catalog_sha256 is not None:
        if not beside.is_file():
            raise PoolLoadError(f"{beside} is missing although {manifest_path.name} binds catalog sha256 "
                                f"{manifest.catalog_sha256[:16]}…: copy the pool folder whole, or rebuild it")
        data = beside.read_bytes()
        actual = hashlib.sha256(data).hexdigest()
        if actual != manifest.catalog_sha256:
            raise PoolLoadError(f"{beside} has sha256 {actual} but {manifest_path.name} records "
                                f"{manifest.catalog_sha256}: the catalog was modified after the pool was built")
    elif beside.is_file():
        raise PoolLoadError(f"{beside} is not bound by {manifest_path.name} (no catalog_sha256): rebuild the pool")
    else:
        beside = Path(construction_dir) / CATALOG_FILE
        if not beside.is_file():
            raise PoolLoadError(f"the pool in {root} carries no catalog and there is none at {beside}: rebuild the "
                                "pool (livesearch build-pool); pools built now carry their catalog")
        data = beside.read_bytes()
    try:
        return Catalog.model_validate_json(data)
    except ValidationError as exc:
        raise PoolLoadError(f"{beside} is not a valid tool catalog: {exc}") from None


def catalog_disagreement(pool_catalog: Catalog, service_catalog: Catalog, tools: Iterable[str]) -> str | None:
    """Why the data service a pool runs on is not the one its catalog describes (None: it is): a
    tool the pool uses that the service lacks, or whose metadata differs. Names both services."""
    missing, differing = [], []
    for name in sorted(set(tools)):
        mine, theirs = pool_catalog.get(name), service_catalog.get(name)
        if mine is None:
            continue
        if theirs is None:
            missing.append(name)
        elif theirs.model_dump(mode="json", exclude={"description"}) != mine.model_dump(mode="json",
                                                                                   exclude={"description"}):
            differing.append(name)
    if not missing and not differing:
        return None
    parts = ([f"lacks {', '.join(missing[:5])}"] if missing else []) + (
        [f"describes {', '.join(differing[:5])} otherwise"] if differing else [])
    return (f"the pool's catalog (built on {pool_catalog.service}) disagrees with the data service it runs on "
            f"({service_catalog.service}): the service {' and '.join(parts)}; run the pool on the service it was "
            "built on, or rebuild the pool (livesearch build-pool) on this one")


def load_checked_pool(root: Path, catalog: Catalog) -> tuple[PoolManifest, list[Question]]:
    """The pool under `root`, verified before anything executes it; PoolLoadError otherwise.

    `questions.jsonl` must have the sha256 and question count its `pool_manifest.json` records
    (so the pool executed is the pool version a gold manifest names), and every program must
    pass `core.program.check_question` against `catalog`: known tool of role `data`, existing
    extractor paths and fields, matching formats, at most `MAX_CALLS_PER_PROGRAM` calls and
    windows within the look-back bounds. The error names the file, line and qid.

    The catalog to pass is the one the pool was built from (`construction/tool_catalog.json`,
    `read_catalog`): the programs were validated against it, and a later service whose catalog
    drifted must fail here by name instead of running programs it was never checked for.
    """
    root = Path(root)
    manifest_path, pool_path = root / MANIFEST_FILE, root / POOL_FILE
    manifest = _checked_manifest(manifest_path)
    if not pool_path.is_file():
        raise PoolLoadError(f"{pool_path} is missing although {manifest_path.name} records version {manifest.version}")
    data = pool_path.read_bytes()  # hashed and parsed from the same bytes: no swap in between
    actual = hashlib.sha256(data).hexdigest()
    if actual != manifest.sha256:
        raise PoolLoadError(
            f"{pool_path} has sha256 {actual} but {manifest_path.name} records {manifest.sha256}: "
            "the pool was modified after it was built; rebuild it (livesearch build-pool)"
        )
    questions = parse_pool_bytes(str(pool_path), data, catalog)
    if len(questions) != manifest.questions:
        raise PoolLoadError(f"{pool_path} holds {len(questions)} questions but {manifest_path.name} records "
                            f"{manifest.questions}")
    return manifest, questions

