"""Reading a file others may write: the one way to open a run folder's files (and any other
writable input: a leaderboard folder, the site's and the LLM's caches).

A run folder (`runs/<D>/<agent>/`) is the submitter's word: whoever may write it may plant a link
to the gold of a day not yet public, a FIFO that blocks a reader, a 1 GiB file without a line
break. Every reader of such a file goes through here:

- `open_untrusted(path, root=)`: the path is opened component by component without following a
  link (`O_NOFOLLOW`): every folder below `root` (without one, the file's own folder) and the file
  itself; the file must be a regular file with a single link (a hard link is another file's bytes
  under this name). Non-blocking open, so a FIFO never blocks; closed on exec.
- `read_untrusted(path, max_bytes=, what=)`: its bytes, at most `max_bytes`;
- `untrusted_lines(path, max_bytes=, max_line=, what=)`: its lines one at a time (the final line
  break ends the last line), none longer than `max_line`, the file no longer than `max_bytes`: a
  reader holds one bounded line at a time, never the file.

Every refusal is an `UntrustedFileError` (a `ValueError`) of one line naming the path and what is
wrong; an absent file is `UntrustedFileMissing` (a subclass), so a caller may treat absence apart.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20

MiB = 1 << 20


class UntrustedFileError(ValueError):
    """A writable input that cannot be read safely: a link, not a regular file, too large, a line too long."""


class UntrustedFileMissing(UntrustedFileError):
    """The file (or one of its folders) does not exist."""


def _refusal(path: Path, exc: OSError, what: str) -> UntrustedFileError:
    if exc.errno == errno.ENOENT:
        return UntrustedFileMissing(f"{what} {path} does not exist")
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return UntrustedFileError(f"{what} {path}: a symbolic link (on the path or the file itself) is never "
                                  "followed in a folder others may write; replace it by the file itself")
    if exc.errno == errno.ENOTDIR:
        return UntrustedFileError(f"{what} {path}: a component of the path is not a folder (or is a link to one)")
    return UntrustedFileError(f"{what} {path} cannot be opened: {exc.strerror or exc}")


def _folder_fd(folder: Path, root: Path | None, what: str, path: Path) -> int:
    """An fd of `folder`, every component below `root` (or `folder` itself without a root) opened
    without following a link; `root` itself is trusted (it may be a link: a data root's own)."""
    folder = Path(os.path.abspath(folder))
    if root is not None:
        root = Path(os.path.abspath(root))
        try:
            parts = folder.relative_to(root).parts
        except ValueError:
            raise UntrustedFileError(f"{what} {path} is not inside {root}") from None
        start = root
    else:
        start, parts = folder.parent, (folder.name,) if folder.name else ()
    try:
        fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _refusal(path, exc, what) from None
    try:
        for part in parts:
            if part in ("", ".", ".."):
                raise UntrustedFileError(f"{what} {path}: the path may not climb out of its folder ({part!r})")
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _refusal(path, exc, what) from None
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_untrusted(path: Path, *, root: Path | None = None, what: str = "file") -> tuple[int, os.stat_result]:
    """(an fd open for reading, its stat) of the regular file at `path`, opened as the module says;
    the caller closes the fd. `root`: the trusted folder the walk starts from (default: the file's
    folder's parent, so the folder and the file are checked)."""
    path = Path(path)
    if path.name in ("", ".", ".."):
        raise UntrustedFileError(f"{what} {path} is not a file name")
    folder_fd = _folder_fd(path.parent, root, what, path)
    try:
        fd = os.open(path.name, _FILE_FLAGS, dir_fd=folder_fd)
    except OSError as exc:
        raise _refusal(path, exc, what) from None
    finally:
        os.close(folder_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedFileError(f"{what} {path} is not a regular file")
        if info.st_nlink != 1:
            raise UntrustedFileError(f"{what} {path} has {info.st_nlink} hard links: a file of a folder others may "
                                     "write has exactly one (a hard link is another file's bytes under this name)")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def _size_refusal(path: Path, size: int, max_bytes: int, what: str) -> UntrustedFileError:
    return UntrustedFileError(f"{what} {path} holds {size:,} bytes, over the {max_bytes:,} read from a folder "
                              "others may write")


def read_untrusted(path: Path, *, max_bytes: int, root: Path | None = None, what: str = "file") -> bytes:
    """The bytes of the file at `path` (module doc), refused when over `max_bytes`."""
    fd, info = open_untrusted(path, root=root, what=what)
    try:
        if info.st_size > max_bytes:
            raise _size_refusal(Path(path), info.st_size, max_bytes, what)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # grew while read
                raise _size_refusal(Path(path), total, max_bytes, what)
        return b"".join(chunks)
    finally:
        os.close(fd)


def untrusted_lines(path: Path, *, max_bytes: int, max_line: int, root: Path | None = None,
                    what: str = "file") -> Iterator[tuple[int, bytes]]:
    """(line number, line without its line break) of the file at `path`, one at a time (module doc);
    UntrustedFileError as soon as the file is over `max_bytes` or a line over `max_line` bytes."""
    path = Path(path)
    fd, info = open_untrusted(path, root=root, what=what)
    with os.fdopen(fd, "rb", buffering=_CHUNK) as handle:
        if info.st_size > max_bytes:
            raise _size_refusal(path, info.st_size, max_bytes, what)
        total = 0
        number = 0
        while True:
            line = handle.readline(max_line + 2)  # room for the line break, and one byte to tell
            if not line:
                return
            number += 1
            total += len(line)
            if total > max_bytes:
                raise _size_refusal(path, total, max_bytes, what)
            body = line[:-1] if line.endswith(b"\n") else line
            if len(body) > max_line:
                raise UntrustedFileError(f"{what} {path}: line {number} is longer than {max_line:,} bytes")
            yield number, body
