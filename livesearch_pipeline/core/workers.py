"""Worker processes: `default_workers`, how many processes a stage that forks workers uses by
default, `forked_pool`/`inherited`, the one way those stages hand their workers what they work on,
and `worker_pool`, the one way any pool's workers end with the process that started them.

A worker must never outlive its owner: a site build or a Dagster step killed with SIGKILL cannot
stop its workers, and a `ProcessPoolExecutor` worker blocked on its call queue would wait forever
(reparented to pid 1, holding hundreds of MB; a forkserver waits for its last worker). So every
worker, from its first instruction (the pool's initializer, `_end_with_owner`):

- asks the kernel to kill it when its parent ends (`prctl(PR_SET_PDEATHSIG, SIGKILL)`, Linux; the
  parent is the owner for a fork pool, the forkserver for a forkserver pool);
- watches a pipe whose only writing end the owner holds: when the owner ends, killed or not, the
  kernel closes it, the read sees end-of-file and the worker exits at once. This also covers a
  forkserver pool, whose workers' parent is the forkserver, not the owner (and the forkserver ends
  by itself once its owner and its workers are gone).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

PR_SET_PDEATHSIG = 1  # linux/prctl.h

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
        with worker_pool(workers, "fork") as pool:
            yield pool
    finally:
        _INHERITED = _UNSET


@contextlib.contextmanager
def worker_pool(workers: int, start_method: str) -> Iterator[ProcessPoolExecutor]:
    """A `ProcessPoolExecutor` of `workers` processes started by `start_method` ("fork", "forkserver",
    "spawn") whose workers end with this process, however it ends (module doc)."""
    reader, writer = multiprocessing.Pipe(duplex=False)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(start_method),
                                 initializer=_end_with_owner, initargs=(reader, writer)) as pool:
            yield pool
    finally:
        writer.close()
        reader.close()


def end_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent ends (Linux `PR_SET_PDEATHSIG`; nothing
    elsewhere)."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _end_with_owner(owner_alive: Connection, owner_side: Connection) -> None:
    """A pool worker's initializer: end when the owner ends (module doc)."""
    parent = os.getppid()
    end_with_parent()
    owner_side.close()  # this worker's copy of the owner's end: the owner's alone keeps the pipe open
    if os.getppid() != parent:
        os._exit(1)  # the parent ended before the request took effect

    def watch() -> None:
        with contextlib.suppress(EOFError, OSError):
            owner_alive.recv_bytes()  # nothing is ever sent: this returns when the owner's end closes
        os._exit(1)

    threading.Thread(target=watch, name="end-with-owner", daemon=True).start()


def inherited() -> Any:
    """In a worker of `forked_pool`: what the pool was opened with."""
    if _INHERITED is _UNSET:
        raise RuntimeError("inherited(): not in a worker forked by forked_pool")
    return _INHERITED
