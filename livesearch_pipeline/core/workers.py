"""Worker processes: `default_workers`, how many processes a stage that forks workers uses by
default, and `forked_pool`/`inherited`, the one way those stages hand their workers what they
work on."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

_UNSET = object()
# What the workers of the open `forked_pool` inherit by fork instead of receiving it pickled.
_INHERITED: Any = _UNSET


def default_workers() -> int:
    """One worker process per core, at most two: the stages that fork (the replay, the candidates'
    second execution, the web build, the site, the web baselines) are measured on 2 cores, and
    their output never depends on the number."""
    return min(2, os.cpu_count() or 1)


@contextlib.contextmanager
def forked_pool(workers: int, inherit: Any) -> Iterator[ProcessPoolExecutor]:
    """A pool of `workers` forked processes whose tasks read `inherit` with `inherited()`.

    The state is inherited by fork, never pickled: the replay's programs of every day, an agent
    with its opened web, a web generator with its market. A fork pool forks all its workers at
    its first submit, inside this block, so they all see `inherit`; the parent forgets it when
    the block ends (also on an error). One pool at a time: a second one opened inside the first
    is refused rather than handing the first one's workers the wrong state.
    """
    global _INHERITED
    if _INHERITED is not _UNSET:
        raise RuntimeError("forked_pool: a pool of forked workers is already open in this process")
    _INHERITED = inherit
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            yield pool
    finally:
        _INHERITED = _UNSET


def inherited() -> Any:
    """In a worker of `forked_pool`: what the pool was opened with."""
    if _INHERITED is _UNSET:
        raise RuntimeError("inherited(): not in a worker forked by forked_pool")
    return _INHERITED
