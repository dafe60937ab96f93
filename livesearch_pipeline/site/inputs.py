"""What the site reads, one frozen day at a time, fingerprinted so an unchanged day is not re-read.

A day D of the site is a day with a gold snapshot (`SnapshotStore.read_verified`, the one gold
reader) and a served file (`core.served.read_served`). Beside them, when they exist: D's
leaderboard (`leaderboard.json`, the `Leaderboard` model) and retrieval report, every run it
names, the stale-gold audit of D and the evidence map of D's web.

Everything under `runs/<D>/` is the submitters' word and is read as a writable input
(`core.untrusted`: no link followed, a regular file, bounded size and line length). A run the board
names is bound by its recorded identity, never by its folder's name alone: the folder of that name
in `runs/<D>/` is the board's run only when its summary names the board's agent and (on boards that
record it) holds the verdicts the board ranked; a folder elsewhere that shares a day folder's name
publishes nothing of that day folder's run. A run that cannot be bound or read is skipped and named on the
day's pages (`SiteDay.skipped`) instead of failing the day; a run's trajectories are checked line
by line when they are published (`published_trajectories`), and a bad file is named on the
agent's page instead of copied.

A day's *fingerprint* is the sha256 of those files' bytes (the trajectories, which can be large
and are only copied, by their `lstat`: size, modification time, inode). The parsed day is kept in
the site's cache as JSON (`day_cache.py`) under its fingerprint. Its thousands of records are kept
as plain tuples with the models' field names (`ServedRow`, `GoldRow`, `VerdictRow`), read and
validated through the models first. Bad input raises SiteInputError naming the file.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from livesearch_pipeline.core.jsonl import JsonlError
from livesearch_pipeline.core.models import GoldAnswer, MatchRule, ServedQuestion, SnapshotManifest, TrajectoryLine
from livesearch_pipeline.core.served import ServedFileError, read_served
from livesearch_pipeline.core.snapshot import SnapshotIntegrityError, SnapshotStore
from livesearch_pipeline.core.untrusted import (
    UntrustedFileError,
    UntrustedFileMissing,
    read_untrusted,
    untrusted_lines,
)
from livesearch_pipeline.evaluation.audits import StaleGoldAudit
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.leaderboard import LEADERBOARD_JSON, Leaderboard
from livesearch_pipeline.evaluation.limits import MAX_TRAJECTORIES_BYTES, MAX_TRAJECTORY_LINE_BYTES
from livesearch_pipeline.evaluation.outputs import SUMMARY_FILE, VERDICTS_FILE, load_evaluated_verdicts
from livesearch_pipeline.evaluation.retrieval import RETRIEVAL_JSON
from livesearch_pipeline.evaluation.summary import EvaluationSummary
from livesearch_pipeline.settings import DataPaths

TRAJECTORIES_FILE = "trajectories.jsonl"
EVIDENCE_FILE = "evidence.json"  # web/evidence.py's EVIDENCE_FILE, read as plain JSON
# A day's board, retrieval report and audit are written by the pipeline into runs/<D>/, a folder
# submitters write: read with the same care, up to this size.
MAX_REPORT_BYTES = 64 * 1024 * 1024
FINGERPRINT_VERSION = 4


class SiteInputError(ValueError):
    """A file the site is built from cannot be read or does not agree with the others."""


class ServedRow(NamedTuple):
    """A `ServedQuestion`, as a tuple."""

    qid: str
    question: str
    question_zh: str | None
    tier: str
    asset_class: str
    refresh_class: str
    visibility: int
    entity: str


class GoldRow(NamedTuple):
    """A `GoldAnswer` (the fields the site reads), as a tuple; `match` is shared between equal rules."""

    qid: str
    date: dt.date
    status: str
    answer: str | None
    value: float | int | str | None
    unit: str | None
    observed_period: str | None
    match: MatchRule


class VerdictRow(NamedTuple):
    """A `Verdict`, as a tuple."""

    qid: str
    correct: bool | None
    rule: str
    judge: str
    reason: str


def served_row(q: ServedQuestion) -> ServedRow:
    return ServedRow(q.qid, q.question, q.question_zh, q.tier, q.asset_class, q.refresh_class, q.visibility, q.entity)


def gold_rows(answers: list[GoldAnswer]) -> dict[str, GoldRow]:
    rules: dict[tuple, MatchRule] = {}
    rows = {}
    for a in answers:
        m = a.match
        rule = rules.setdefault((m.rule, m.abs_tol, m.rel_tol, m.unit, m.decimals), m)
        rows[a.qid] = GoldRow(a.qid, a.date, a.status, a.answer, a.value, a.unit, a.observed_period, rule)
    return rows


@dataclass(frozen=True)
class RunDay:
    """One agent's evaluated run of D as the leaderboard of D placed it, bound to its folder."""

    agent: str
    folder: str  # the run's folder name under runs/<D>/
    ranked: bool
    rank: int | None
    unranked_reason: str | None
    summary: EvaluationSummary
    wilson_low: float | None
    wilson_high: float | None
    verdicts: dict[str, VerdictRow]
    trajectories: Path | None  # runs/<D>/<folder>/trajectories.jsonl when an entry of that name exists


@dataclass(frozen=True)
class SkippedRun:
    """A run the board of D names that the site does not publish, and why."""

    agent: str | None
    run_dir: str
    reason: str


@dataclass(frozen=True)
class SiteDay:
    date: dt.date
    fingerprint: str
    manifest: SnapshotManifest
    served: list[ServedRow]
    gold: dict[str, GoldRow]
    board: Leaderboard | None
    retrieval: dict | None
    stale: StaleGoldAudit | None
    runs: list[RunDay] = field(default_factory=list)
    evidence: dict[str, list[str]] = field(default_factory=dict)  # qid -> evidence page paths on D's web
    families: dict[str, str] = field(default_factory=dict)  # qid -> program shape (the evidence map's `family`)
    skipped: list[SkippedRun] = field(default_factory=list)

    @property
    def qid_set_hash(self) -> str | None:
        return self.board.qid_set_hash if self.board else None


def site_days(paths: DataPaths, as_of: dt.date) -> list[dt.date]:
    """The days the site of `as_of` shows: frozen gold and a served file, on or before `as_of`."""
    store = SnapshotStore(paths.gold)
    return [d for d in store.dates() if d <= as_of and paths.served_file(d).is_file()]


def newest_frozen_day(paths: DataPaths) -> dt.date | None:
    """The newest day on disk with frozen gold and a served file: the day the live-answer rule protects,
    whatever day a site is built as of."""
    days = site_days(paths, dt.date.max)
    return days[-1] if days else None


def _board_dir(paths: DataPaths, day: dt.date) -> Path:
    return paths.runs / day.isoformat() / "leaderboard"


def _stale_path(paths: DataPaths, day: dt.date) -> Path:
    return paths.runs / day.isoformat() / "audits" / f"stale_gold_audit_{day.isoformat()}.json"


def _evidence_path(paths: DataPaths, day: dt.date) -> Path:
    return paths.web / day.isoformat() / EVIDENCE_FILE


def _run_folders(paths: DataPaths, day: dt.date) -> list[Path]:
    """The folders of runs/<D>/ holding a summary entry: real folders only, never a link to one."""
    day_dir = paths.runs / day.isoformat()
    try:
        entries = list(os.scandir(day_dir))
    except OSError:
        return []
    return sorted(Path(e.path) for e in entries
                  if e.is_dir(follow_symlinks=False) and os.path.lexists(Path(e.path) / SUMMARY_FILE))


def _digest_of(path: Path, max_bytes: int) -> bytes:
    """What a file contributes to a fingerprint: its bytes' sha256, "absent", or why it cannot be read."""
    try:
        return hashlib.sha256(read_untrusted(path, max_bytes=max_bytes)).digest()
    except UntrustedFileMissing:
        return b"absent"
    except UntrustedFileError as exc:
        return f"unreadable: {exc}".encode()


def _lstat_digest(path: Path) -> bytes:
    try:
        info = os.lstat(path)
    except OSError:
        return b"absent"
    return f"{info.st_mode}|{info.st_size}|{info.st_mtime_ns}|{info.st_ino}|{info.st_nlink}".encode()


def fingerprint(paths: DataPaths, day: dt.date) -> str:
    """sha256 over every input of D (bytes; trajectories by their lstat)."""
    digest = hashlib.sha256(f"site-day-v{FINGERPRINT_VERSION}|{day.isoformat()}".encode())
    store = SnapshotStore(paths.gold)
    trusted = [store.manifest_path_for(day), store.path_for(day), paths.served_file(day), _evidence_path(paths, day)]
    for path in trusted:
        digest.update(str(path.relative_to(paths.root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest() if path.is_file() else b"absent")
    writable = [_board_dir(paths, day) / LEADERBOARD_JSON, _board_dir(paths, day) / RETRIEVAL_JSON,
                _stale_path(paths, day)]
    for run in _run_folders(paths, day):
        writable += [run / SUMMARY_FILE, run / VERDICTS_FILE]
    for path in writable:
        digest.update(str(path.relative_to(paths.root)).encode() + b"\0" + _digest_of(path, MAX_REPORT_BYTES))
    for run in _run_folders(paths, day):
        digest.update(f"{run.name}|".encode() + _lstat_digest(run / TRAJECTORIES_FILE))
    return digest.hexdigest()


def _report(path: Path, model):
    """A report of runs/<D>/ (the board, the audit) as `model`, or None when absent."""
    try:
        data = read_untrusted(path, max_bytes=MAX_REPORT_BYTES, what=model.__name__)
    except UntrustedFileMissing:
        return None
    except UntrustedFileError as exc:
        raise SiteInputError(str(exc)) from None
    try:
        return model.model_validate_json(data)
    except ValueError as exc:
        raise SiteInputError(f"{path}: not a readable {model.__name__}: {str(exc).splitlines()[0]}") from exc


def _plain_json(path: Path, *, writable: bool = False) -> dict | None:
    try:
        data = read_untrusted(path, max_bytes=MAX_REPORT_BYTES) if writable else path.read_bytes()
        parsed = json.loads(data)
    except (UntrustedFileMissing, FileNotFoundError):
        return None
    except (OSError, ValueError) as exc:
        raise SiteInputError(f"{path}: not readable JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise SiteInputError(f"{path}: expected a JSON object, found {type(parsed).__name__}")
    return parsed


def _bind(day_dir: Path, run_dir: str, agent: str | None, verdicts_sha256: str | None):
    """(folder, summary, verdicts) of the run the board names, or the reason it cannot be published.

    The candidate is the folder of `run_dir`'s name in runs/<D>/ (a board records the path its command
    was given, relative or of a data root since moved); it is the board's run only when its summary
    names the board's agent and, on boards that record it, has the verdicts the board ranked."""
    folder = Path(run_dir).name
    if folder in ("", ".", ".."):
        return f"its folder {run_dir} is not a run folder"
    try:
        summary, verdicts = load_evaluated_verdicts(day_dir / folder)
    except (EvaluationError, JsonlError) as exc:
        return f"its run cannot be read: {' '.join(str(exc).split())[:300]}"
    if agent is None or summary.agent != agent:
        return (f"the run in {day_dir / folder} is of agent {summary.agent!r}, not of {agent!r}: a run is bound by "
                "its recorded name, never by its folder's")
    if verdicts_sha256 is not None and summary.verdicts_sha256 != verdicts_sha256:
        return (f"the run in {day_dir / folder} is not the one the board placed (its verdicts changed since): "
                "build the leaderboard again")
    return folder, summary, {v.qid: VerdictRow(v.qid, v.correct, v.rule, v.judge, v.reason) for v in verdicts}


def _runs(paths: DataPaths, day: dt.date, board: Leaderboard) -> tuple[list[RunDay], list[SkippedRun]]:
    """The runs the board names (ranked first, in rank order, then the unranked ones), each bound to its
    folder by its identity; those that cannot be bound or read, with the reason."""
    day_dir = paths.runs / day.isoformat()
    placed = [(r.run_dir, r.agent, r.rank, None, r.wilson_low, r.wilson_high, r.verdicts_sha256) for r in board.rows]
    placed += [(u.run_dir, u.agent, None, u.reason, None, None, u.verdicts_sha256) for u in board.unranked]
    runs: list[RunDay] = []
    skipped: list[SkippedRun] = []
    for run_dir, agent, rank, reason, low, high, verdicts_sha256 in placed:
        if agent is not None and any(run.agent == agent for run in runs):
            # One agent name is one run of the day on the site (its pages and downloads are keyed by it):
            # the board's first placement of the name (the ranked one) keeps it.
            skipped.append(SkippedRun(agent=agent, run_dir=run_dir, reason=reason or "another run of this agent "
                                      "name is published for the day"))
            continue
        bound = _bind(day_dir, run_dir, agent, verdicts_sha256)
        if isinstance(bound, str):
            if rank is not None or agent is not None:
                skipped.append(SkippedRun(agent=agent, run_dir=run_dir, reason=bound))
            continue
        folder, summary, verdicts = bound
        trajectories = day_dir / folder / TRAJECTORIES_FILE
        runs.append(RunDay(agent=agent, folder=folder, ranked=rank is not None, rank=rank, unranked_reason=reason,
                           summary=summary, wilson_low=low, wilson_high=high, verdicts=verdicts,
                           trajectories=trajectories if os.path.lexists(trajectories) else None))
    return runs, skipped


def load_day(paths: DataPaths, day: dt.date, print_fingerprint: str) -> SiteDay:
    """Parse every input of D (no cache)."""
    try:
        manifest, answers = SnapshotStore(paths.gold).read_verified(day)
    except (SnapshotIntegrityError, FileNotFoundError, ValueError) as exc:
        raise SiteInputError(f"the gold of {day} cannot be trusted: {exc}") from exc
    try:
        served = read_served(paths.served_file(day))
    except (ServedFileError, JsonlError, ValueError) as exc:
        raise SiteInputError(f"{paths.served_file(day)}: {exc}") from exc
    board_path = _board_dir(paths, day) / LEADERBOARD_JSON
    board = _report(board_path, Leaderboard)
    if board is not None and board.gold_date != day.isoformat():
        raise SiteInputError(f"{board_path}: a leaderboard of gold date {board.gold_date} under the runs of {day}")
    evidence_path = _evidence_path(paths, day)
    evidence: dict[str, list[str]] = {}
    families: dict[str, str] = {}
    data = _plain_json(evidence_path)
    if data is not None:
        questions = data.get("questions")
        if not isinstance(questions, dict):
            raise SiteInputError(f"{evidence_path}: an evidence map without its 'questions' object")
        evidence = {qid: list(entry.get("pages") or []) for qid, entry in questions.items()}
        families = {qid: entry["family"] for qid, entry in questions.items() if isinstance(entry.get("family"), str)}
    stale = _report(_stale_path(paths, day), StaleGoldAudit)
    runs, skipped = _runs(paths, day, board) if board is not None else ([], [])
    return SiteDay(
        date=day, fingerprint=print_fingerprint, manifest=manifest, served=[served_row(q) for q in served],
        gold=gold_rows(answers), board=board,
        retrieval=_plain_json(_board_dir(paths, day) / RETRIEVAL_JSON, writable=True),
        # The audit's rows quote both days' gold: only its rates are shown, so only they are kept.
        stale=stale.model_copy(update={"rows": []}) if stale is not None else None,
        runs=runs, evidence=evidence, families=families, skipped=skipped,
    )


def published_trajectories(path: Path, hidden: dict[str, str] | set[str], served: set[str]) -> tuple[bytes, int]:
    """The run's trajectory lines of questions whose gold is shown (bytes as recorded), and how many
    were withheld: an agent's answer to a live question may be that live gold.

    The file is read as a writable input (`core.untrusted`: not a link, a regular file, bounded size
    and line length) and every line must be a `TrajectoryLine` of a question D served, each qid once:
    SiteInputError names the file and the first bad line, and nothing of the file is published."""
    kept: list[bytes] = []
    withheld = 0
    seen: set[str] = set()
    try:
        for number, line in untrusted_lines(path, max_bytes=MAX_TRAJECTORIES_BYTES,
                                            max_line=MAX_TRAJECTORY_LINE_BYTES, what="trajectories"):
            if not line.strip():
                continue
            try:
                qid = TrajectoryLine.model_validate_json(line).qid
            except ValidationError as exc:
                first = exc.errors()[0]
                raise SiteInputError(f"{path}:{number}: not a trajectory line "
                                     f"({'.'.join(map(str, first['loc'])) or 'line'}: {first['msg']})") from None
            if qid not in served:
                raise SiteInputError(f"{path}:{number}: {qid} is not a question served on the run's day")
            if qid in seen:
                raise SiteInputError(f"{path}:{number}: {qid} appears twice")
            seen.add(qid)
            if qid in hidden:
                withheld += 1
            else:
                kept.append(line + b"\n")
    except UntrustedFileError as exc:
        raise SiteInputError(str(exc)) from None
    return b"".join(kept), withheld
