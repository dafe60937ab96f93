"""Where the pipeline keeps its files: one root (LIVESEARCH_DATA_DIR, default ./data).

The environment is read when `DataPaths.from_env()` is called (at run time), never at import.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

DATA_DIR_ENV = "LIVESEARCH_DATA_DIR"


@dataclass(frozen=True)
class DataPaths:
    root: Path

    @classmethod
    def from_env(cls) -> DataPaths:
        return cls(Path(os.environ.get(DATA_DIR_ENV) or Path.cwd() / "data").resolve())

    @property
    def pool(self) -> Path:
        return self.root / "pool"

    def checked_pool(self):
        """The pool under `pool/`, checked before anything executes it (`core.pool.load_checked_pool`:
        its bytes against its manifest's sha256, every program against the catalog it was built from,
        which the pool carries, with bounds): (manifest, questions). PoolLoadError names what is wrong."""
        from livesearch_pipeline.core.pool import load_checked_pool, read_pool_catalog

        return load_checked_pool(self.pool, read_pool_catalog(self.pool, self.construction))

    @property
    def construction(self) -> Path:
        return self.root / "construction"

    @property
    def gold(self) -> Path:
        return self.root / "gold"

    @property
    def rejected(self) -> Path:
        """Answers of refresh attempts that failed a blocking condition (never gold)."""
        return self.root / "rejected"

    @property
    def served(self) -> Path:
        return self.root / "served"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def llm_cache(self) -> Path:
        """The one LLM request cache (verbalizer, judge, agents; Dagster and command line alike)."""
        return self.cache / "llm"

    @property
    def web(self) -> Path:  # the offline web: one corpus (index + pages) per date, web/<D>/web.sqlite
        return self.root / "web"

    def served_file(self, day: dt.date) -> Path:
        return self.served / f"served_questions_{day.isoformat()}.jsonl"

    def run_dir(self, day: dt.date, agent: str) -> Path:
        return self.runs / day.isoformat() / agent


def code_version() -> str:
    """The package version plus the git commit when run from a checkout (recorded in manifests)."""
    from importlib.metadata import PackageNotFoundError, version
    import subprocess

    try:
        base = version("livesearch_pipeline")
    except PackageNotFoundError:
        base = "0+unknown"
    repo = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"],
                                capture_output=True, text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return base
    return f"{base}+g{commit}{'.dirty' if dirty else ''}"
