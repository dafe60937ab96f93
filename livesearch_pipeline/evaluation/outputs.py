"""Writing and reading an evaluation's outputs (DESIGN §4.7): `verdicts.jsonl` and `summary.json`.

The two files are written in one directory as one unit (`write_evaluation`): the summary records
the verdicts' sha256, and a run counts as evaluated only when both exist and agree
(`load_evaluation`). Before anything is written the output directory is checked
(`check_output_paths`): an output never lands on an input (symlinks, relative paths and hard
links resolved), never inside the data root's gold, served, pool, cache or analytics folders, nor
beside a gold snapshot (`protected_directories`: write-once territory), never through a symlink,
never over another agent's run (`run_identity.check_run_folder`: a folder holds one agent's run),
and never while another process holds the folder's writer lock (`writers.run_folder_writer`). The
readers read a run folder's files as writable inputs (`core.untrusted`: no link followed, a regular
file, bounded size).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from livesearch_pipeline.core.jsonl import JsonlError, parse_jsonl
from livesearch_pipeline.core.models import Verdict
from livesearch_pipeline.core.snapshot import sha256_bytes, snapshot_date, write_atomic
from livesearch_pipeline.core.untrusted import UntrustedFileError, UntrustedFileMissing, read_untrusted
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.limits import MAX_SUMMARY_BYTES, MAX_VERDICTS_BYTES
from livesearch_pipeline.evaluation.run_identity import check_run_folder
from livesearch_pipeline.evaluation.summary import EvaluationResult, EvaluationSummary, render_verdicts
from livesearch_pipeline.evaluation.writers import WriterTargetError, check_writable, run_folder_writer
from livesearch_pipeline.evaluation.writers import protected_directories as protected_folders
from livesearch_pipeline.core.locks import LOCK_FILE, WriterLockedError

VERDICTS_FILE = "verdicts.jsonl"
SUMMARY_FILE = "summary.json"
# The files an evaluation writes beside its inputs; an output must never land on an input.
_OUTPUTS = (VERDICTS_FILE, SUMMARY_FILE)


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)  # hard links, bind mounts
    except OSError:
        return False


def check_output_paths(out_dir: Path, inputs: Sequence[Path]) -> None:
    """Refuse an output directory whose writes would land on an input, or that cannot be one.

    Symlinks and relative paths are resolved, and hard links compared by inode, so `--out .`
    beside a predictions file named `summary.json`, or a `verdicts.jsonl` symlinked to the
    gold, are caught before anything is evaluated or written.
    """
    out_dir = Path(out_dir)
    for ancestor in (out_dir, *out_dir.parents):
        if ancestor.exists() and not ancestor.is_dir():
            raise EvaluationError(f"output directory {out_dir}: {ancestor} is a file, not a directory")
    for name in _OUTPUTS:
        target = out_dir / name
        for source in inputs:
            if _same_file(target, Path(source)):
                raise EvaluationError(
                    f"output {target} is the input {source}: writing it would overwrite an input; "
                    "choose another --out directory"
                )
        if target.exists() and not target.is_file():
            raise EvaluationError(f"output {target} exists and is not a regular file")
    check_not_protected(out_dir, inputs)


def protected_directories(inputs: Sequence[Path] = ()) -> list[Path]:
    """Folders no evaluation output may land in: the data root's gold, served, pool and analytics
    folders (`writers.protected_directories`), and the folder of any gold snapshot among `inputs`."""
    return protected_folders([Path(p).parent for p in inputs if snapshot_date(Path(p)) is not None])


def check_not_protected(out_dir: Path, inputs: Sequence[Path] = ()) -> None:
    """EvaluationError when `out_dir` is inside a protected folder (`protected_directories`), is a
    symlink, or an output file in it is a symlink or not a regular file (`writers.check_writable`)."""
    try:
        check_writable(out_dir, what="evaluation output", files=(*_OUTPUTS, LOCK_FILE),
                       protected=protected_directories(inputs))
    except WriterTargetError as exc:
        raise EvaluationError(str(exc)) from None


def _render_summary(summary: EvaluationSummary) -> bytes:
    return (json.dumps(summary.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_evaluation(result: EvaluationResult, out_dir: Path, *, inputs: Sequence[Path] = ()) -> tuple[Path, Path]:
    """Write summary.json and verdicts.jsonl as one unit; never verdicts without their summary.

    Two files in a directory that also holds the run's predictions cannot be renamed together,
    so the unit is made by order and by hash: the old verdicts are removed first, the summary
    (which records the new verdicts' sha256) is written next, the verdicts last, each file
    atomically (temporary file, fsync, rename). A crash at any point leaves either the complete
    pair, or a summary whose verdicts are missing — which `load_evaluation` (and so the
    leaderboard) reports as an incomplete evaluation — and never verdicts without a summary,
    nor a summary beside another run's verdicts. `inputs` are checked first with
    `check_output_paths`.
    """
    out_dir = Path(out_dir)
    check_output_paths(out_dir, inputs)
    if result.summary.agent is not None:
        check_run_folder(out_dir, result.summary.agent, Path(result.summary.predictions_file))
    verdicts_path, summary_path = out_dir / VERDICTS_FILE, out_dir / SUMMARY_FILE
    verdicts_bytes = render_verdicts(result.verdicts)
    if sha256_bytes(verdicts_bytes) != result.summary.verdicts_sha256:
        raise EvaluationError("the verdicts differ from the ones the summary was made from")
    try:
        # The folder's writer lock (re-entrant: an agent run holding it evaluates its own folder).
        with run_folder_writer(out_dir, what="evaluation output", files=(*_OUTPUTS, LOCK_FILE),
                               protected=protected_directories(inputs)):
            if result.summary.agent is not None:  # again under the lock: a run written meanwhile is not replaced
                check_run_folder(out_dir, result.summary.agent, Path(result.summary.predictions_file))
            if verdicts_path.exists():
                verdicts_path.unlink()
            write_atomic(summary_path, _render_summary(result.summary))
            write_atomic(verdicts_path, verdicts_bytes)
    except (WriterTargetError, WriterLockedError) as exc:
        raise EvaluationError(str(exc)) from None
    return verdicts_path, summary_path


class IncompleteEvaluationError(EvaluationError):
    """A run directory whose summary.json and verdicts.jsonl do not form a complete evaluation."""


def _run_file(path: Path, max_bytes: int, what: str) -> bytes:
    """The bytes of a file of a run folder, read as every writable input is (`core.untrusted`: no
    link followed, a regular file, at most `max_bytes`); EvaluationError naming it otherwise."""
    try:
        return read_untrusted(path, max_bytes=max_bytes, what=what)
    except UntrustedFileMissing as exc:
        raise IncompleteEvaluationError(str(exc)) from None
    except UntrustedFileError as exc:
        raise EvaluationError(str(exc)) from None


def load_summary(path: Path) -> EvaluationSummary:
    data = _run_file(Path(path), MAX_SUMMARY_BYTES, "evaluation summary")
    try:
        return EvaluationSummary.model_validate_json(data)
    except ValidationError as exc:
        raise EvaluationError(f"{path} is not a readable evaluation summary: {exc}") from exc


def load_evaluation(run_dir: Path) -> tuple[EvaluationSummary, Path]:
    """The summary of a complete evaluation in `run_dir`, checked against its verdicts.jsonl.

    IncompleteEvaluationError when either file is missing or the verdicts' sha256 differs from
    the summary's record (an interrupted write, or files from two runs); EvaluationError when a file
    is a link, not a regular file, too large or unreadable.
    """
    summary, _ = load_evaluated_verdicts(run_dir)
    return summary, Path(run_dir) / VERDICTS_FILE


def load_evaluated_verdicts(run_dir: Path) -> tuple[EvaluationSummary, list[Verdict]]:
    """(summary, verdicts) of a complete evaluation in `run_dir` (see `load_evaluation`), each file read
    once."""
    run_dir = Path(run_dir)
    summary_path, verdicts_path = run_dir / SUMMARY_FILE, run_dir / VERDICTS_FILE
    try:
        summary = load_summary(summary_path)
    except IncompleteEvaluationError:
        raise IncompleteEvaluationError(f"{run_dir} has no {SUMMARY_FILE}: evaluate the run first") from None
    try:
        data = _run_file(verdicts_path, MAX_VERDICTS_BYTES, "verdicts")
    except IncompleteEvaluationError:
        raise IncompleteEvaluationError(
            f"{run_dir} has {SUMMARY_FILE} but no {VERDICTS_FILE}: the evaluation was interrupted; evaluate again"
        ) from None
    actual = sha256_bytes(data)
    if actual != summary.verdicts_sha256:
        raise IncompleteEvaluationError(
            f"{verdicts_path} has sha256 {actual} but {summary_path.name} records {summary.verdicts_sha256}: "
            "the pair is not one evaluation; evaluate again"
        )
    return summary, _parse_verdicts(verdicts_path, data)


def _parse_verdicts(path: Path, data: bytes) -> list[Verdict]:
    try:
        return parse_jsonl(path, data, Verdict, "verdict", skip_blank=True)
    except JsonlError as exc:
        raise EvaluationError(str(exc)) from None


def read_verdicts(path: Path) -> list[Verdict]:
    """The verdicts of a `verdicts.jsonl` (blank lines skipped), read as a writable input
    (`core.untrusted`); EvaluationError (a ValueError) names the file and the bad lines."""
    path = Path(path)
    return _parse_verdicts(path, _run_file(path, MAX_VERDICTS_BYTES, "verdicts"))
