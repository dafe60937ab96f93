"""The served file of a day (DESIGN §4.7), `served/served_questions_<D>.jsonl`: made from the
pool, written once (identical bytes are a no-op, different bytes fail), and read back strictly.
The one module that writes and reads it: the refresh writes it, the evaluator, the refresh's
checks and the agents read it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from livesearch_pipeline.core.jsonl import parse_jsonl, read_jsonl_bytes, render_jsonl
from livesearch_pipeline.core.models import Question, ServedQuestion
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.snapshot import sha256_bytes, write_atomic


class ServedFileError(ValueError):
    """A served file that cannot be trusted; the message names the file (and line)."""


class ServedConflictError(RuntimeError):
    """A served-questions file for D already exists with different content."""


@dataclass(frozen=True)
class ServedWrite:
    path: Path
    qid_set_hash: str
    created: bool


def served_from_pool(pool: Sequence[Question]) -> list[ServedQuestion]:
    """Every pool question is served each day; the served record never carries an answer."""
    return sorted(
        (ServedQuestion(qid=q.qid, question=q.question, question_zh=q.question_zh, tier=q.tier,
                        asset_class=q.asset_class, refresh_class=q.refresh_class, visibility=q.visibility,
                        entity=q.entity) for q in pool),
        key=lambda s: s.qid,
    )


def render_served(served: Sequence[ServedQuestion]) -> bytes:
    return render_jsonl(sorted(served, key=lambda s: s.qid))


def write_served(path: Path, served: Sequence[ServedQuestion]) -> ServedWrite:
    """Write-once, like the gold snapshot: identical bytes are a no-op, different bytes fail."""
    data = render_served(served)
    digest = qid_set_hash(s.qid for s in served)
    if path.exists():
        existing = path.read_bytes()
        if existing == data:
            return ServedWrite(path, digest, created=False)
        raise ServedConflictError(
            f"{path} already exists with different content (sha256 {sha256_bytes(existing)} vs new "
            f"{sha256_bytes(data)}); served questions of a day are frozen once"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)
    return ServedWrite(path, digest, created=True)


def read_served(path: Path) -> list[ServedQuestion]:
    """The served questions of a file, every line a valid `ServedQuestion` and no qid twice
    (core.jsonl's strict reading: a malformed line is counted and the first one named)."""
    served = parse_jsonl(path, read_jsonl_bytes(path, "served questions"), ServedQuestion, "served question")
    repeated = sorted(q for q, n in Counter(s.qid for s in served).items() if n > 1)
    if repeated:
        shown = ", ".join(repeated[:5]) + (f" and {len(repeated) - 5} more" if len(repeated) > 5 else "")
        raise ServedFileError(f"{path}: served questions repeat {len(repeated)} qid(s): {shown}")
    return served
