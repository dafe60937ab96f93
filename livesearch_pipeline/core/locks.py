"""One writer at a time: an advisory lock file per folder that must not have two writers.

`writer_lock(path, what)` takes an exclusive `flock` on `path` without waiting (or waiting up to
`wait_s`), and records the holder (pid, host, command line with any credential redacted, since when)
in the file, so that a second writer is refused with a message naming the first. The kernel drops the lock when the
holder's process ends, killed or not: a crashed run never leaves a lock behind to clean up.

The lock file is never opened through a symlink (refused, naming it).

A process that already holds a lock may take it again (nested sections of one run: the agent
runner inside the registered-agent run); the file is unlocked when the outermost one ends.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Iterator

from livesearch_pipeline.core.redaction import redact

LOCK_FILE = ".writer.lock"
_HELD: dict[Path, int] = {}  # lock path -> nesting depth, in this process


class WriterLockedError(RuntimeError):
    """Another process is writing the folder this lock guards; the message names it."""


def _holder_record() -> bytes:
    return (json.dumps({
        # The command line may name a URL with credentials (`--searxng-url http://user:secret@…`) or a
        # key: the lock file is readable by others, and its record is repeated in refusals.
        "pid": os.getpid(), "host": socket.gethostname(), "command": redact(" ".join(sys.argv))[:300],
        "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }, sort_keys=True) + "\n").encode("utf-8")


def describe_holder(path: Path) -> str:
    """Who holds the lock at `path`, as recorded in it ("another process" when unreadable), redacted
    (a lock written by an older release may hold a command line with credentials)."""
    try:
        holder = json.loads(Path(path).read_text(encoding="utf-8"))
        return redact(f"pid {holder['pid']} on {holder['host']} since {holder['since']} ({holder['command']})")
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


@contextlib.contextmanager
def writer_lock(path: Path, what: str, *, wait_s: float = 0.0) -> Iterator[Path]:
    """Hold the exclusive lock at `path` for the block; WriterLockedError (naming the holder) when
    another process holds it for longer than `wait_s` seconds. `what` names the guarded thing."""
    path = Path(path).absolute()
    if _HELD.get(path):
        _HELD[path] += 1
        try:
            yield path
        finally:
            _HELD[path] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # Never through a symlink: the holder record is written into the lock file.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError:
        if path.is_symlink():
            raise WriterLockedError(f"the lock {path} of {what} is a symlink; fix: remove the link") from None
        raise
    try:
        deadline = time.monotonic() + max(0.0, wait_s)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WriterLockedError(
                        f"{what} is already being written by {describe_holder(path)} (lock {path}); "
                        "wait for that run to finish, or stop it, then run again") from None
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, _holder_record(), 0)
        _HELD[path] = 1
        try:
            yield path
        finally:
            _HELD.pop(path, None)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
