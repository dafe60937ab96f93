"""What the site reads, one frozen day at a time, fingerprinted so an unchanged day is not re-read.

A day D of the site is a day with a gold snapshot (`SnapshotStore.read_verified`, the one gold
reader) and a served file (`core.served.read_served`) on or before the site's day. Beside them,
when they exist: D's leaderboard (`leaderboard.json`, the `Leaderboard` model) and retrieval
report, every run it names (`summary.json` and `verdicts.jsonl`, read as one evaluation by
`evaluation.outputs.load_evaluation`), the stale-gold audit of D and the evidence map of D's web.

A day's *fingerprint* is the sha256 of those files' bytes (the trajectories, which can be large
and are only copied, by size and modification time). The parsed day is kept in
`<cache>/site/day-<D>.pickle` under its fingerprint: a later build reads an unchanged day from
there instead of parsing its files again. Its thousands of records are kept as plain tuples with
the models' field names (`ServedRow`, `GoldRow`, `VerdictRow`), read and validated through the
models first: unpickling a pydantic model costs ten times more. Bad input raises SiteInputError
naming the file.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from livesearch_pipeline.core.models import GoldAnswer, MatchRule, ServedQuestion, SnapshotManifest
from livesearch_pipeline.core.served import ServedFileError, read_served
from livesearch_pipeline.core.snapshot import SnapshotIntegrityError, SnapshotStore, write_atomic
from livesearch_pipeline.core.jsonl import JsonlError
from livesearch_pipeline.evaluation.audits import StaleGoldAudit
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.leaderboard import LEADERBOARD_JSON, Leaderboard
from livesearch_pipeline.evaluation.outputs import SUMMARY_FILE, VERDICTS_FILE, load_evaluation, read_verdicts
from livesearch_pipeline.evaluation.retrieval import RETRIEVAL_JSON
from livesearch_pipeline.evaluation.summary import EvaluationSummary
from livesearch_pipeline.settings import DataPaths

# Bumped when SiteDay's shape changes, so an old cache entry is never unpickled into new code.
CACHE_VERSION = 3
TRAJECTORIES_FILE = "trajectories.jsonl"
EVIDENCE_FILE = "evidence.json"  # web/evidence.py's EVIDENCE_FILE, read as plain JSON


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
    """One agent's evaluated run of D as the leaderboard of D placed it."""

    agent: str
    folder: str  # the run's folder name under runs/<D>/
    ranked: bool
    rank: int | None
    unranked_reason: str | None
    summary: EvaluationSummary
    wilson_low: float | None
    wilson_high: float | None
    verdicts: dict[str, VerdictRow]
    trajectories: Path | None


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

    @property
    def qid_set_hash(self) -> str | None:
        return self.board.qid_set_hash if self.board else None


def site_days(paths: DataPaths, as_of: dt.date) -> list[dt.date]:
    """The days the site of `as_of` shows: frozen gold and a served file, on or before `as_of`."""
    store = SnapshotStore(paths.gold)
    return [d for d in store.dates() if d <= as_of and paths.served_file(d).is_file()]


def _board_dir(paths: DataPaths, day: dt.date) -> Path:
    return paths.runs / day.isoformat() / "leaderboard"


def _stale_path(paths: DataPaths, day: dt.date) -> Path:
    return paths.runs / day.isoformat() / "audits" / f"stale_gold_audit_{day.isoformat()}.json"


def _evidence_path(paths: DataPaths, day: dt.date) -> Path:
    return paths.web / day.isoformat() / EVIDENCE_FILE


def _run_folders(paths: DataPaths, day: dt.date) -> list[Path]:
    day_dir = paths.runs / day.isoformat()
    if not day_dir.is_dir():
        return []
    return sorted(p for p in day_dir.iterdir() if (p / SUMMARY_FILE).is_file())


def fingerprint(paths: DataPaths, day: dt.date) -> str:
    """sha256 over every input file of D (bytes; trajectories by size and mtime)."""
    digest = hashlib.sha256(f"site-day-v{CACHE_VERSION}|{day.isoformat()}".encode())
    store = SnapshotStore(paths.gold)
    files = [store.manifest_path_for(day), store.path_for(day), paths.served_file(day),
             _board_dir(paths, day) / LEADERBOARD_JSON, _board_dir(paths, day) / RETRIEVAL_JSON,
             _stale_path(paths, day), _evidence_path(paths, day)]
    for run in _run_folders(paths, day):
        files += [run / SUMMARY_FILE, run / VERDICTS_FILE]
    for path in files:
        digest.update(str(path.relative_to(paths.root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest() if path.is_file() else b"absent")
    for run in _run_folders(paths, day):
        trajectories = run / TRAJECTORIES_FILE
        if trajectories.is_file():
            stat = trajectories.stat()
            digest.update(f"{run.name}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def _json_model(path: Path, model):
    try:
        return model.model_validate_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise SiteInputError(f"{path}: not a readable {model.__name__}: {str(exc).splitlines()[0]}") from exc


def _plain_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SiteInputError(f"{path}: not readable JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SiteInputError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def _runs(paths: DataPaths, day: dt.date, board: Leaderboard) -> list[RunDay]:
    """The runs the board names (ranked first, in rank order, then the unranked ones)."""
    day_dir = paths.runs / day.isoformat()
    placed = [(Path(r.run_dir).name, r.agent, r.rank, None, r.wilson_low, r.wilson_high) for r in board.rows]
    placed += [(Path(u.run_dir).name, u.agent, None, u.reason, None, None) for u in board.unranked]
    runs = []
    for folder, agent, rank, reason, low, high in placed:
        run_dir = day_dir / folder
        try:
            summary, verdicts_path = load_evaluation(run_dir)
            verdicts = {v.qid: VerdictRow(v.qid, v.correct, v.rule, v.judge, v.reason)
                        for v in read_verdicts(verdicts_path)}
        except (EvaluationError, JsonlError, OSError) as exc:
            if rank is None:
                continue  # an unranked run may be incomplete: the board already says why
            raise SiteInputError(f"{run_dir}: the leaderboard of {day} ranks this run but it cannot be read: "
                                 f"{exc}") from exc
        trajectories = run_dir / TRAJECTORIES_FILE
        runs.append(RunDay(agent=agent, folder=folder, ranked=rank is not None, rank=rank, unranked_reason=reason,
                           summary=summary, wilson_low=low, wilson_high=high, verdicts=verdicts,
                           trajectories=trajectories if trajectories.is_file() else None))
    return runs


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
    board = _json_model(board_path, Leaderboard) if board_path.is_file() else None
    if board is not None and board.gold_date != day.isoformat():
        raise SiteInputError(f"{board_path}: a leaderboard of gold date {board.gold_date} under the runs of {day}")
    retrieval_path = _board_dir(paths, day) / RETRIEVAL_JSON
    stale_path = _stale_path(paths, day)
    evidence_path = _evidence_path(paths, day)
    evidence: dict[str, list[str]] = {}
    families: dict[str, str] = {}
    if evidence_path.is_file():
        data = _plain_json(evidence_path)
        questions = data.get("questions")
        if not isinstance(questions, dict):
            raise SiteInputError(f"{evidence_path}: an evidence map without its 'questions' object")
        evidence = {qid: list(entry.get("pages") or []) for qid, entry in questions.items()}
        families = {qid: entry["family"] for qid, entry in questions.items() if isinstance(entry.get("family"), str)}
    return SiteDay(
        date=day, fingerprint=print_fingerprint, manifest=manifest, served=[served_row(q) for q in served],
        gold=gold_rows(answers), board=board,
        retrieval=_plain_json(retrieval_path) if retrieval_path.is_file() else None,
        # The audit's rows quote both days' gold: only its rates are shown, so only they are kept.
        stale=_json_model(stale_path, StaleGoldAudit).model_copy(update={"rows": []}) if stale_path.is_file() else None,
        runs=_runs(paths, day, board) if board is not None else [], evidence=evidence, families=families,
    )


def from_cache(paths: DataPaths, day: dt.date, cache_dir: Path) -> tuple[SiteDay | None, str]:
    """(D's inputs from the cache, or None when its fingerprint moved; the fingerprint)."""
    print_ = fingerprint(paths, day)
    cache_file = cache_dir / f"day-{day.isoformat()}.pickle"
    if cache_file.is_file():
        try:
            version, stored_print, stored = pickle.loads(cache_file.read_bytes())
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
            # An entry written by other code or cut short: parsed again from the source files.
            version, stored_print, stored = None, None, None
        if version == CACHE_VERSION and stored_print == print_ and isinstance(stored, SiteDay):
            return stored, print_
    return None, print_


def parse_and_cache(paths: DataPaths, day: dt.date, print_: str, cache_dir: Path) -> SiteDay:
    """Parse every input of D and keep it in the cache under its fingerprint."""
    parsed = load_day(paths, day, print_)
    cache_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(cache_dir / f"day-{day.isoformat()}.pickle",
                 pickle.dumps((CACHE_VERSION, print_, parsed), protocol=pickle.HIGHEST_PROTOCOL))
    return parsed


def cached_day(paths: DataPaths, day: dt.date, cache_dir: Path) -> tuple[SiteDay, bool]:
    """(D's inputs, whether they came from the cache): parsed again only when the fingerprint moved."""
    stored, print_ = from_cache(paths, day, cache_dir)
    if stored is not None:
        return stored, True
    return parse_and_cache(paths, day, print_, cache_dir), False
