"""Write-once gold snapshots (DESIGN §4.6) and the atomic file helpers other stores reuse.

A snapshot of partition date D is two files under the store root (``data/gold``):

- ``gold_answers_<D>.jsonl``: one canonical ``GoldAnswer`` line per question, sorted by qid;
- ``gold_answers_<D>.manifest.json``: its sha256, record counts and provenance.

The manifest is written *after* the JSONL, so a snapshot is complete exactly when its manifest
exists. Both files are written atomically (temporary file in the same directory, fsync, then a
rename) and exclusively (a hard link that fails when the target exists), so neither a crash nor
two concurrent materialisations of D can leave a half or overwritten snapshot.

Crash between the two renames: the JSONL exists without a manifest (an *orphan*). The next
``write`` of D resolves it explicitly: when the orphan's bytes equal the new render, the run
completes the snapshot by writing the manifest; when they differ, it raises
``SnapshotConflictError`` and touches nothing, because the orphan may be the only record of what
was computed for D — an operator inspects it and deletes it deliberately. ``verify``/``read``
treat an orphan as an integrity error, and ``dates``/``exists`` do not count it as a snapshot.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from livesearch_pipeline.core.models import AnswerStatus, GoldAnswer, SnapshotManifest

SNAPSHOT_PREFIX = "gold_answers_"
_SNAPSHOT_NAME = re.compile(r"^gold_answers_(\d{4}-\d{2}-\d{2})\.jsonl$")
_STATUSES: tuple[AnswerStatus, ...] = ("ok", "empty", "error")


class SnapshotConflictError(RuntimeError):
    """A snapshot of the date already exists (or an orphan of it) with different bytes."""


class SnapshotIntegrityError(RuntimeError):
    """A snapshot on disk does not match its manifest, is malformed, or has no manifest."""


class SnapshotNotFoundError(FileNotFoundError):
    """No snapshot (neither JSONL nor manifest) exists for the date."""


class SnapshotRejectedError(ValueError):
    """The computed answers of a day fail a blocking condition: nothing may be frozen."""


def snapshot_date(path: Path) -> dt.date | None:
    """The date of a snapshot file named `gold_answers_<YYYY-MM-DD>.jsonl`, else None."""
    match = _SNAPSHOT_NAME.match(Path(path).name)
    return dt.date.fromisoformat(match.group(1)) if match else None


def withdrawn_answers(answers: Sequence[GoldAnswer]) -> dict[str, str]:
    """qid -> reason for every answer whose program returned `empty` or `error` on the day."""
    reasons: dict[str, str] = {}
    for answer in sorted(answers, key=lambda a: a.qid):
        if answer.status == "empty":
            reasons[answer.qid] = f"empty: {answer.error or 'the program ran and selected no record'}"
        elif answer.status == "error":
            reasons[answer.qid] = f"error: {answer.error}"
    return reasons


def judge_answers(date: dt.date, answers: Sequence[GoldAnswer], max_withdrawn_share: float) -> dict[str, str]:
    """The withdrawn questions of `date`, or SnapshotRejectedError when too many are withdrawn."""
    if not answers:
        raise SnapshotRejectedError(f"gold {date.isoformat()}: no answer was computed; nothing to freeze")
    withdrawn = withdrawn_answers(answers)
    share = len(withdrawn) / len(answers)
    if share > max_withdrawn_share:
        first = "; ".join(f"{qid} {reason}" for qid, reason in list(withdrawn.items())[:3])
        raise SnapshotRejectedError(
            f"gold {date.isoformat()}: {len(withdrawn)} of {len(answers)} answers ({share:.1%}) are empty, stale "
            f"or errors, above the cap of {max_withdrawn_share:.1%}; nothing was frozen. First: {first}"
        )
    return withdrawn


def scoring_qids(served_qids: Iterable[str], manifest: SnapshotManifest) -> list[str]:
    """D's scoring set: the served qids minus the ones D's manifest withdraws, sorted."""
    return sorted(set(served_qids) - manifest.withdrawn.keys())


@dataclass(frozen=True)
class SnapshotWrite:
    path: Path
    manifest_path: Path
    manifest: SnapshotManifest
    created: bool  # False: identical bytes were already there and nothing was written


# --------------------------------------------------------------------------- file helpers


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in chunks (files may be larger than memory allows)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; without it a power loss may forget the new name.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def process_umask() -> int:
    """The process's umask, read without changing it where the kernel reports it (Linux
    /proc/self/status); elsewhere set and restored at once."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes, *, exclusive: bool = False) -> None:
    """Write `data` to `path` so that readers see either the old file or the whole new one.

    The bytes go to a temporary file in the same directory, are fsynced, and then take the
    target name. With ``exclusive=False`` the target is replaced (``os.replace``). With
    ``exclusive=True`` the target is created only if it does not exist (a hard link, which is
    atomic and refuses to overwrite) and ``FileExistsError`` is raised otherwise, leaving the
    existing file untouched; this is what makes write-once stores safe under concurrent writers.
    Parent directories are created. The file gets the mode of any file the process creates
    (0666 less its umask: 0644 under the usual 0022, so an auditor's account can read it), not
    the 0600 of a temporary file. The temporary file never survives a failure. Exclusive
    mode needs hard links (any local POSIX filesystem); where they are unsupported the link
    raises OSError and the write fails loudly rather than degrading to a racy check-then-write.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp_path = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~process_umask())
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            os.link(temp_path, path)
        else:
            os.replace(temp_path, path)
        _fsync_directory(path.parent)
    finally:
        # After os.replace the temp name is gone; after os.link (or a failure) it still exists.
        temp_path.unlink(missing_ok=True)


# --------------------------------------------------------------------------- rendering


def _canonical_answer(answer: GoldAnswer) -> GoldAnswer:
    """The answer with its free-form `args` mapping in sorted key order (order is not content)."""
    args = answer.args
    if list(args) == sorted(args) and all(list(a) == sorted(a) for a in args.values()):
        return answer
    sorted_args = {call_id: dict(sorted(args[call_id].items())) for call_id in sorted(args)}
    return answer.model_copy(update={"args": sorted_args})


def render_answers(answers: Sequence[GoldAnswer]) -> bytes:
    """Canonical snapshot bytes: sorted by qid, one ``model_dump_json()`` line each, "\\n" ends.

    Field order is the model's; dict keys inside `args` are sorted; floats are written in their
    shortest round-tripping form, so parsing and re-rendering reproduces the bytes exactly.
    Non-finite values are refused: JSON would write them as null and break that round trip.
    """
    qids = [a.qid for a in answers]
    duplicates = sorted(q for q, n in Counter(qids).items() if n > 1)
    if duplicates:
        raise ValueError(f"duplicate qids in gold answers: {', '.join(duplicates[:10])}")
    lines: list[str] = []
    for answer in sorted(answers, key=lambda a: a.qid):
        if isinstance(answer.value, float) and not math.isfinite(answer.value):
            raise ValueError(f"{answer.qid}: value {answer.value!r} is not a finite number")
        lines.append(_canonical_answer(answer).model_dump_json())
    return "".join(line + "\n" for line in lines).encode("utf-8")


# --------------------------------------------------------------------------- store


class SnapshotStore:
    """Write-once store of gold snapshots under `root` (usually ``data/gold``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path_for(self, date: dt.date) -> Path:
        return self.root / f"{SNAPSHOT_PREFIX}{date.isoformat()}.jsonl"

    def manifest_path_for(self, date: dt.date) -> Path:
        return self.root / f"{SNAPSHOT_PREFIX}{date.isoformat()}.manifest.json"

    @staticmethod
    def render(answers: Sequence[GoldAnswer]) -> bytes:
        return render_answers(answers)

    # ------------------------------------------------------------------ queries

    def exists(self, date: dt.date) -> bool:
        """True when the snapshot of `date` is complete (its manifest exists)."""
        return self.manifest_path_for(date).is_file()

    def dates(self) -> list[dt.date]:
        """Dates with a complete snapshot (JSONL and manifest), ascending."""
        if not self.root.is_dir():
            return []
        found: list[dt.date] = []
        for entry in self.root.iterdir():
            date = snapshot_date(entry)
            if date is None:
                continue
            if self.exists(date):
                found.append(date)
        return sorted(found)

    def verify(self, date: dt.date) -> SnapshotManifest:
        """Check the snapshot of `date` against its manifest; return the manifest.

        Raises SnapshotNotFoundError when neither file exists, SnapshotIntegrityError when the
        manifest is missing or malformed, the bytes' sha256 or record counts differ from it, or
        a line is not a GoldAnswer of `date` in strictly ascending qid order.
        """
        manifest, _ = self._load_verified(date)
        return manifest

    def read(self, date: dt.date) -> list[GoldAnswer]:
        """The verified answers of `date`, sorted by qid."""
        _, answers = self._load_verified(date)
        return answers

    def read_verified(self, date: dt.date) -> tuple[SnapshotManifest, list[GoldAnswer]]:
        """`verify` and `read` in one pass over the file: the manifest and the answers."""
        return self._load_verified(date)

    # ------------------------------------------------------------------ write

    def write(
        self,
        date: dt.date,
        answers: Sequence[GoldAnswer],
        *,
        pool_version: str,
        pool_sha256: str,
        data_service: str,
        code_version: str,
        max_withdrawn_share: float,
        cutoff: dt.datetime | None = None,
        vintage: dt.datetime | None = None,
        late_backfill: bool = False,
        created_at: dt.datetime | None = None,
    ) -> SnapshotWrite:
        """Write the snapshot of `date` once (see the module docstring for every case).

        Validate, then freeze: the answers are judged first (`judge_answers`); a day whose
        withdrawn share exceeds `max_withdrawn_share` raises SnapshotRejectedError and writes
        nothing. Identical bytes already on disk: a no-op returning the existing manifest
        (``created=False``). Different bytes: SnapshotConflictError, nothing changed.
        """
        withdrawn = judge_answers(date, answers, max_withdrawn_share)
        wrong_dates = [a.qid for a in answers if a.date != date]
        if wrong_dates:
            raise ValueError(
                f"{len(wrong_dates)} gold answer(s) are not dated {date.isoformat()}, "
                f"e.g. {', '.join(wrong_dates[:5])}"
            )
        data = render_answers(answers)
        new_sha = sha256_bytes(data)
        manifest = SnapshotManifest(
            date=date,
            file=self.path_for(date).name,
            sha256=new_sha,
            records=len(answers),
            counts_by_status=_count_statuses(answers),
            pool_version=pool_version,
            pool_sha256=pool_sha256,
            data_service=data_service,
            cutoff=cutoff,
            vintage=vintage,
            late_backfill=late_backfill,
            withdrawn=withdrawn,
            max_withdrawn_share=max_withdrawn_share,
            code_version=code_version,
            created_at=created_at or dt.datetime.now(dt.timezone.utc),
        )
        path, manifest_path = self.path_for(date), self.manifest_path_for(date)

        if manifest_path.exists():
            return self._existing_outcome(date, new_sha)

        try:
            write_atomic(path, data, exclusive=True)
        except FileExistsError:
            orphan_sha = sha256_file(path)
            if orphan_sha != new_sha:
                if manifest_path.exists():  # a concurrent writer completed D meanwhile
                    return self._existing_outcome(date, new_sha)
                raise SnapshotConflictError(
                    f"gold snapshot {date.isoformat()}: {path} exists without a manifest "
                    f"(an interrupted earlier write) and holds sha256 {orphan_sha}, but this run "
                    f"renders sha256 {new_sha}; inspect the orphan and delete it deliberately "
                    "before re-materialising"
                ) from None

        try:
            write_atomic(manifest_path, _render_manifest(manifest), exclusive=True)
        except FileExistsError:
            # A concurrent writer of the same bytes finished first; its manifest stands.
            return self._existing_outcome(date, new_sha)
        return SnapshotWrite(path=path, manifest_path=manifest_path, manifest=manifest, created=True)

    # ------------------------------------------------------------------ internals

    def _existing_outcome(self, date: dt.date, new_sha: str) -> SnapshotWrite:
        existing = self.verify(date)
        if existing.sha256 != new_sha:
            raise SnapshotConflictError(
                f"gold snapshot {date.isoformat()} already exists with sha256 {existing.sha256}; "
                f"this run renders sha256 {new_sha}. Snapshots are write-once: the existing one "
                "was left unchanged"
            )
        return SnapshotWrite(
            path=self.path_for(date),
            manifest_path=self.manifest_path_for(date),
            manifest=existing,
            created=False,
        )

    def _load_manifest(self, date: dt.date) -> SnapshotManifest:
        path, manifest_path = self.path_for(date), self.manifest_path_for(date)
        if not manifest_path.is_file():
            if path.exists():
                raise SnapshotIntegrityError(
                    f"{path} has no manifest {manifest_path.name}: the snapshot of "
                    f"{date.isoformat()} is incomplete (an interrupted write) and cannot be trusted"
                )
            raise SnapshotNotFoundError(f"no gold snapshot for {date.isoformat()} under {self.root}")
        try:
            manifest = SnapshotManifest.model_validate_json(manifest_path.read_bytes())
        except ValidationError as exc:
            raise SnapshotIntegrityError(f"{manifest_path} is not a valid snapshot manifest: {exc}") from exc
        if manifest.date != date or manifest.file != path.name:
            raise SnapshotIntegrityError(
                f"{manifest_path} describes {manifest.file} of {manifest.date.isoformat()}, "
                f"expected {path.name} of {date.isoformat()}"
            )
        return manifest

    def _load_verified(self, date: dt.date) -> tuple[SnapshotManifest, list[GoldAnswer]]:
        manifest = self._load_manifest(date)
        path = self.path_for(date)
        if not path.is_file():
            raise SnapshotIntegrityError(
                f"{path} is missing although its manifest records sha256 {manifest.sha256}"
            )
        data = path.read_bytes()
        actual_sha = sha256_bytes(data)
        if actual_sha != manifest.sha256:
            raise SnapshotIntegrityError(
                f"{path} has sha256 {actual_sha} but its manifest records {manifest.sha256}: "
                "the snapshot was modified or truncated"
            )
        answers = _parse_lines(path, data, date)
        counts = _count_statuses(answers)
        if len(answers) != manifest.records or counts != manifest.counts_by_status:
            raise SnapshotIntegrityError(
                f"{path} holds {len(answers)} records {counts} but its manifest records "
                f"{manifest.records} {manifest.counts_by_status}"
            )
        unanswered = {a.qid for a in answers if a.status != "ok"}
        if unanswered != manifest.withdrawn.keys():
            raise SnapshotIntegrityError(
                f"{path}: the manifest withdraws {len(manifest.withdrawn)} qid(s) but {len(unanswered)} answer(s) "
                f"are empty or errors; not withdrawn: {sorted(unanswered - manifest.withdrawn.keys())[:5]}, "
                f"withdrawn although answered: {sorted(manifest.withdrawn.keys() - unanswered)[:5]}"
            )
        return manifest, answers


def _parse_lines(path: Path, data: bytes, date: dt.date) -> list[GoldAnswer]:
    if data and not data.endswith(b"\n"):
        raise SnapshotIntegrityError(f"{path} does not end with a newline: truncated")
    answers: list[GoldAnswer] = []
    previous_qid = ""
    for number, line in enumerate(data.splitlines(), start=1):
        try:
            answer = GoldAnswer.model_validate_json(line)
        except ValidationError as exc:
            raise SnapshotIntegrityError(f"{path}:{number} is not a valid gold answer: {exc}") from exc
        if answer.date != date:
            raise SnapshotIntegrityError(
                f"{path}:{number} ({answer.qid}) is dated {answer.date.isoformat()}, not {date.isoformat()}"
            )
        if answer.qid <= previous_qid:
            raise SnapshotIntegrityError(
                f"{path}:{number} ({answer.qid}) breaks the strictly ascending qid order"
            )
        previous_qid = answer.qid
        answers.append(answer)
    return answers


def _count_statuses(answers: Sequence[GoldAnswer]) -> dict[AnswerStatus, int]:
    counts = Counter(a.status for a in answers)
    return {status: counts.get(status, 0) for status in _STATUSES}


def _render_manifest(manifest: SnapshotManifest) -> bytes:
    return (manifest.model_dump_json(indent=2) + "\n").encode("utf-8")
