"""The readers of an evaluation's inputs (DESIGN §4.7): served questions, gold snapshot, predictions.

Each reader refuses what it cannot trust with one `EvaluationError` naming the file and the lines
or qids: a missing file, a line that is not exactly one JSON object of its record type (blank
lines, two objects on a line, an object split over two lines, a non-object), a gold snapshot
whose manifest is missing or disagrees (read only through `SnapshotStore.read_verified`, the one
gold reader), predictions that repeat a qid or come without their run metadata, and, in the
predictions and their metadata, what pydantic's parser would let through (a key given twice,
NaN/Infinity: `check_strict_json_lines`). What the files say about each other is checked by
`consistency`.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from livesearch_pipeline.core.jsonl import JsonlError, parse_jsonl
from livesearch_pipeline.core.models import GoldAnswer, Prediction, PredictionRunMeta, ServedQuestion, SnapshotManifest
from livesearch_pipeline.core.served import ServedFileError, read_served
from livesearch_pipeline.core.snapshot import (
    SnapshotIntegrityError,
    SnapshotNotFoundError,
    SnapshotStore,
    snapshot_date,
)
from livesearch_pipeline.core.untrusted import UntrustedFileError, read_untrusted
from livesearch_pipeline.evaluation.errors import SHOWN_QIDS, EvaluationError, name_qids
from livesearch_pipeline.evaluation.limits import MAX_PREDICTIONS_BYTES, MAX_RUN_META_BYTES
from livesearch_pipeline.evaluation.published_gold import (
    is_published_gold,
    load_published_gold,
    published_manifest_path,
    read_published_manifest,
)
from livesearch_pipeline.evaluation.run_identity import checked_agent_name

Record = TypeVar("Record", bound=BaseModel)


def _duplicates(qids: Iterable[str]) -> list[str]:
    return sorted(q for q, n in Counter(qids).items() if n > 1)


def meta_path_beside(predictions_path: Path) -> Path:
    return predictions_path.with_name(predictions_path.name.removesuffix(".jsonl") + ".meta.json")


@dataclass(frozen=True)
class GoldDay:
    date: dt.date
    answers: dict[str, GoldAnswer]
    manifest: SnapshotManifest
    # A site's gold download (`published_gold`): the qids whose gold the live-answer rule withheld,
    # not scored; empty for the operator's snapshot, which holds every gold.
    withheld: frozenset[str] = frozenset()
    published: bool = False

    @property
    def sha256(self) -> str:
        return self.manifest.sha256

    @property
    def withdrawn(self) -> dict[str, str]:
        return self.manifest.withdrawn


def load_served(path: Path) -> list[ServedQuestion]:
    """The served file (core.served), its faults as EvaluationError."""
    try:
        return read_served(path)
    except (JsonlError, ServedFileError) as exc:
        raise EvaluationError(str(exc)) from exc


def gold_file_date(path: Path) -> dt.date | None:
    """The day of a gold file: a snapshot's by its name, a site's gold download by its manifest."""
    date = snapshot_date(Path(path))
    if date is None and is_published_gold(Path(path)):
        return read_published_manifest(Path(path)).date
    return date


def gold_manifest_path(path: Path) -> Path | None:
    """The manifest `load_gold` reads beside `path` (None when `path` is neither kind of gold file)."""
    path = Path(path)
    date = snapshot_date(path)
    if date is not None:
        return SnapshotStore(path.parent).manifest_path_for(date)
    return published_manifest_path(path) if is_published_gold(path) else None


def load_gold(path: Path) -> GoldDay:
    """The gold of one date: the operator's snapshot, read and verified by the snapshot store (the
    one gold reader), or a site's gold download (`published_gold`: the shown golds only).

    `path` is a snapshot's JSONL, `gold_answers_<D>.jsonl`, its manifest beside it; or the site's
    `downloads/<D>/gold.jsonl` with `gold.manifest.json` beside it.
    """
    path = Path(path)
    date = snapshot_date(path)
    if date is None and is_published_gold(path):
        manifest, answers, withheld = load_published_gold(path)
        return GoldDay(date=manifest.date, answers=answers, manifest=manifest.snapshot, withheld=withheld,
                       published=True)
    if date is None:
        raise EvaluationError(f"{path}: a gold snapshot is named gold_answers_<YYYY-MM-DD>.jsonl (its manifest "
                              f"beside it), and a site's gold download is gold.jsonl with gold.manifest.json beside it")
    try:
        manifest, answers = SnapshotStore(path.parent).read_verified(date)
    except (SnapshotIntegrityError, SnapshotNotFoundError) as exc:
        raise EvaluationError(f"gold snapshot {path} cannot be trusted: {exc}") from exc
    except OSError as exc:
        raise EvaluationError(f"gold snapshot {path} cannot be read: {exc}") from exc
    return GoldDay(date=date, answers={a.qid: a for a in answers}, manifest=manifest)


class _StrictJsonError(ValueError):
    pass


def _refuse_constant(name: str) -> float:
    raise _StrictJsonError(f"non-finite number {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _StrictJsonError(f"number {text[:40]} is not finite")
    return value


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise _StrictJsonError(f"key {key[:40]!r} appears twice in one object")
        seen[key] = value
    return seen


def check_strict_json_lines(path: Path, data: bytes, what: str) -> None:
    """Refuse what pydantic's parser lets through: a key given twice in one object (the last would
    win: `"answer":"wrong","answer":"<gold>"`) and NaN/Infinity (or a literal overflowing to
    infinity) anywhere in a line, `trace` included. EvaluationError names the file and lines."""
    problems: list[str] = []
    bad = 0
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_refuse_constant,
                       parse_float=_finite_float)
        except _StrictJsonError as exc:
            bad += 1
            if len(problems) < SHOWN_QIDS:
                problems.append(f"line {number}: {exc}")
        except ValueError:
            continue  # not JSON at all: the record parser names it
    if bad:
        raise EvaluationError(f"{path}: {bad} {what} line(s) are not strict JSON — " + "; ".join(problems))


def load_predictions(path: Path, meta: PredictionRunMeta | None = None) -> tuple[list[Prediction], PredictionRunMeta | None]:
    """The predictions and their run metadata (`predictions.meta.json` beside them, required:
    without it the day and qid-set checks could not run). `meta`, when given, is metadata about
    to be written for predictions that have none (`evaluate --agent`, `own_run`): it stands in
    for the file, which must then not exist."""
    path = Path(path)
    data = _untrusted_bytes(path, MAX_PREDICTIONS_BYTES, "predictions file")
    check_strict_json_lines(path, data, "prediction")
    try:
        predictions = parse_jsonl(path, data, Prediction, "prediction")
    except JsonlError as exc:
        raise EvaluationError(str(exc)) from exc
    duplicates = _duplicates(p.qid for p in predictions)
    if duplicates:
        raise EvaluationError(f"{path}: predictions repeat {name_qids(duplicates)}")
    meta_path = meta_path_beside(path)
    if meta is not None:
        if meta_path.exists():
            raise EvaluationError(f"{meta_path} exists: the run metadata given for {path} would replace it")
        return predictions, meta
    if not os.path.lexists(meta_path):
        raise EvaluationError(
            f"{meta_path} is missing: predictions are scored only with their run metadata (agent, date, "
            "qid-set hash), which the agent runner writes beside predictions.jsonl; for predictions made "
            "elsewhere, add --agent NAME (and --model) to write it"
        )
    return predictions, read_run_meta(meta_path)


def read_run_meta(meta_path: Path) -> PredictionRunMeta:
    """`predictions.meta.json`, read as a writable input (`core.untrusted`) and strictly (no key given
    twice, no NaN); EvaluationError naming the file otherwise."""
    meta_bytes = _untrusted_bytes(Path(meta_path), MAX_RUN_META_BYTES, "run metadata")
    check_strict_json_lines(meta_path, meta_bytes.replace(b"\n", b" "), "run metadata")
    try:
        meta = PredictionRunMeta.model_validate_json(meta_bytes)
    except ValidationError as exc:
        raise EvaluationError(f"{meta_path} is not valid predictions run metadata: {exc}") from exc
    checked_agent_name(meta.agent, what=f"{meta_path}: agent")
    return meta


def _untrusted_bytes(path: Path, max_bytes: int, what: str) -> bytes:
    try:
        return read_untrusted(path, max_bytes=max_bytes, what=what)
    except UntrustedFileError as exc:
        raise EvaluationError(str(exc)) from None


def evaluation_inputs(served_path: Path, gold_path: Path, predictions_path: Path) -> list[Path]:
    """Every file `evaluate` reads for these inputs (the gold manifest and run metadata included)."""
    gold_path = Path(gold_path)
    manifest = gold_manifest_path(gold_path)  # a gold file of neither kind is refused by `load_gold`
    gold_manifest = [manifest] if manifest is not None else []
    return [Path(served_path), gold_path, *gold_manifest, Path(predictions_path), meta_path_beside(Path(predictions_path))]
