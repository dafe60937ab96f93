"""JSON Lines, the one reader and writer: one record of a pydantic model a line.

Reading is strict: every line must be exactly one JSON object of the record type (pydantic's
JSON parser refuses trailing data, so two objects on a line, half an object or an array fail on
their own line), and every malformed line is counted and the first few are named with their line
numbers in one `JsonlError` (a `ValueError`) that names the file. A blank line is malformed
unless the caller allows blank lines. The final newline ends the last line; it does not start
an empty one.

Writing renders `model_dump_json()` plus a newline per record, in the order given, and replaces
the file atomically (`core.snapshot.write_atomic`): a reader sees the old file or the new one,
never a part.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from livesearch_pipeline.core.snapshot import write_atomic

Record = TypeVar("Record", bound=BaseModel)

# Malformed lines named in an error message (all of them are counted).
SHOWN_PROBLEMS = 5


class JsonlError(ValueError):
    """A JSON Lines file is missing, unreadable, or holds lines that are not records of its type."""


def parse_jsonl_numbered(where: str | Path, data: bytes, model: type[Record], what: str, *,
                         skip_blank: bool = False) -> list[tuple[int, Record]]:
    """(line number, record) for every line of `data`; JsonlError naming `where` and the bad lines."""
    records: list[tuple[int, Record]] = []
    problems: list[str] = []
    bad_lines = 0
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the final newline ends the last line; it does not start an empty one
    for number, line in enumerate(lines, start=1):
        problem: str | None = None
        if not line.strip():
            if skip_blank:
                continue
            problem = "blank line (one JSON object per line)"
        else:
            try:
                records.append((number, model.model_validate_json(line)))
            except ValidationError as exc:
                first = exc.errors()[0]
                problem = f"{'.'.join(str(p) for p in first['loc']) or 'line'}: {first['msg']}"
        if problem is not None:
            bad_lines += 1
            if len(problems) < SHOWN_PROBLEMS:
                problems.append(f"line {number}: {problem}")
    if bad_lines:
        raise JsonlError(f"{where}: {bad_lines} malformed {what} line(s) — " + "; ".join(problems))
    return records


def parse_jsonl(where: str | Path, data: bytes, model: type[Record], what: str, *,
                skip_blank: bool = False) -> list[Record]:
    """Every line of `data` as `model` (see the module doc); `where` names the source in errors."""
    return [record for _, record in parse_jsonl_numbered(where, data, model, what, skip_blank=skip_blank)]


def read_jsonl_bytes(path: Path, what: str) -> bytes:
    """The bytes of a JSONL file; JsonlError when it is missing or cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise JsonlError(f"{what} file {path} does not exist")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise JsonlError(f"{what} file {path} cannot be read: {exc}") from exc


def read_jsonl(path: Path, model: type[Record], what: str, *, skip_blank: bool = False) -> list[Record]:
    """Every record of the file at `path` (`what` names a record in messages: "verdict")."""
    return parse_jsonl(path, read_jsonl_bytes(path, what), model, what, skip_blank=skip_blank)


def render_jsonl(records: Iterable[BaseModel]) -> bytes:
    """One `model_dump_json()` line per record, in the order given; b"" for none."""
    return "".join(r.model_dump_json() + "\n" for r in records).encode("utf-8")


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> bytes:
    """Render `records` and replace `path` atomically (its directory is created); returns the bytes."""
    data = render_jsonl(records)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)
    return data
