"""Who may write where: the check every writer of a run folder or of the store passes before it
writes anything (agent run, import-inspect, evaluate, the analytical store).

A writer's target is refused, with one line naming the path and the fix, when
- it lies inside a protected folder (`protected_directories`): the data root's gold, served,
  pool and analytics folders (write-once or derived territory; the store writes the analytics
  folder itself, through its own check), its cache (the LLM's request cache and the site's: an
  entry planted there would be read back as an answer), and any folder a caller adds (the gold it
  scores against);
- it, or a file it would write, is a symlink (a write through it would land elsewhere: a
  truncated Parquet partition, a gold file) or exists and is not a regular file;
- another process holds the folder's writer lock (`core.locks`): `run_folder_writer` takes the
  lock after the checks, so a refused writer has created nothing, not even the lock file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from livesearch_pipeline.core.locks import LOCK_FILE, writer_lock
from livesearch_pipeline.settings import DataPaths

# Every file a run folder holds (agents/base.py, outputs.py name them; repeated here so that this
# check imports neither), and the lock.
RUN_FILES = ("predictions.jsonl", "predictions.meta.json", "trajectories.jsonl", "verdicts.jsonl",
             "summary.json", LOCK_FILE)
ANALYTICS_DIR = "analytics"


class WriterTargetError(ValueError):
    """A writer's target is protected, a symlink, or not a regular file; the message names the fix."""


def protected_directories(extra: Sequence[Path] = (), *, paths: DataPaths | None = None,
                          analytics: bool = True) -> list[Path]:
    """The data root's gold, served, pool and cache folders (and analytics unless `analytics` is False:
    the store's own writer), and `extra` (a gold folder a caller reads)."""
    paths = paths if paths is not None else DataPaths.from_env()
    folders = [paths.gold, paths.served, paths.pool, paths.cache]
    if analytics:
        folders.append(paths.root / ANALYTICS_DIR)
    return [*folders, *(Path(p) for p in extra)]


def inside(path: Path, folder: Path) -> bool:
    """Whether `path` (symlinks resolved) is `folder` or below it."""
    try:
        resolved, base = Path(path).resolve(), Path(folder).resolve()
    except OSError:
        return False
    return resolved == base or base in resolved.parents


def check_writable(out_dir: Path, *, what: str, files: Sequence[str] = RUN_FILES,
                   protected: Sequence[Path] | None = None) -> None:
    """WriterTargetError unless `out_dir` and each of `files` in it may be written (module doc).

    `protected`: the folders refused (default: `protected_directories()`)."""
    out_dir = Path(out_dir)
    if out_dir.is_symlink():
        raise WriterTargetError(f"{what}: {out_dir} is a symlink (to {out_dir.resolve()}); fix: write into a real "
                                "folder, not a link")
    for ancestor in (out_dir, *out_dir.parents):
        if ancestor.exists() and not ancestor.is_dir():
            raise WriterTargetError(f"{what}: {ancestor} is a file, not a directory; fix: choose another folder")
    for folder in protected_directories() if protected is None else protected:
        if inside(out_dir, folder):
            raise WriterTargetError(f"{what}: {out_dir} is inside {folder}, which holds the benchmark's gold, served "
                                    "questions, pool, caches or analytical store: nothing else is written there; "
                                    "fix: choose a folder under the data root's runs/")
    for name in files:
        target = out_dir / name
        if target.is_symlink():
            raise WriterTargetError(f"{what}: {target} is a symlink (to {target.resolve()}); writing it would write "
                                    "through the link; fix: remove the link")
        if target.exists() and not target.is_file():
            raise WriterTargetError(f"{what}: {target} exists and is not a regular file; fix: remove it")


@contextlib.contextmanager
def run_folder_writer(out_dir: Path, *, what: str, files: Sequence[str] = RUN_FILES,
                      protected: Sequence[Path] | None = None) -> Iterator[Path]:
    """Check `out_dir` (`check_writable`), then hold its writer lock for the block
    (core.locks.WriterLockedError naming the holder when another process writes it)."""
    check_writable(out_dir, what=what, files=files, protected=protected)
    with writer_lock(Path(out_dir) / LOCK_FILE, f"run folder {out_dir}"):
        # Checked again under the lock: a link planted between the check and the lock is refused too.
        check_writable(out_dir, what=what, files=files, protected=protected)
        yield Path(out_dir)
