"""Glue of the daily refresh shared by the Dagster assets and the CLI (no Dagster here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from livesearch_pipeline.core.models import GoldAnswer, Question, ServedQuestion
from livesearch_pipeline.core.snapshot import sha256_bytes, write_atomic
from livesearch_pipeline.evaluation.evaluator import qid_set_hash


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
    return "".join(s.model_dump_json() + "\n" for s in sorted(served, key=lambda s: s.qid)).encode("utf-8")


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


def preview_markdown(answers: Sequence[GoldAnswer], questions: Mapping[str, Question | ServedQuestion],
                     rows: int = 8) -> str:
    def cell(text: object) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| qid | question | status | answer | observed |", "|---|---|---|---|---|"]
    for a in list(answers)[:rows]:
        q = questions.get(a.qid)
        text = q.question if q else ""
        lines.append(f"| {a.qid} | {cell(text[:90])} | {a.status} | {cell(a.answer or a.error or '')} | "
                     f"{cell(a.observed_period or '')} |")
    return "\n".join(lines)
