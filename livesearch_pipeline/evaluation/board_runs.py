"""The runs a leaderboard ranks: each run folder read as the submitter's word, and every figure
recomputed from what can be verified.

`load_runs` reads each run's `summary.json` and `verdicts.jsonl` as writable inputs (`core.untrusted`
through `outputs`: no link followed, bounded size); a run that cannot be used — no summary, a linked
or oversized file, a non-finite number, verdicts that are not the summary's, no agent recorded — is
kept as *incomplete* with the reason, so the board lists it unranked instead of failing the day. A
run is named by the agent its summary records (its metadata), never by its folder's name.

`recompute_run` trusts the summary for nothing the board shows (`Sources`: the current gold
manifests and served files, read once each): its gold sha256 and qid-set hashes must be the
current ones, its predictions must still have the sha256 it binds, its verdicts must cover exactly
the scoring set and be what its predictions score again against the gold (`rescore`), and its
counts must agree with them.

`one_run_per_agent` keeps one run per agent name among the comparable ones: the registered agent's
own folder (`runs/<D>/<agent>`, written by the pipeline) first, otherwise the first written (its
summary's modification time, then its path); every other run of that name is listed unranked.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.snapshot import (
    SnapshotIntegrityError,
    SnapshotNotFoundError,
    SnapshotStore,
    scoring_qids,
    sha256_bytes,
)
from livesearch_pipeline.core.untrusted import UntrustedFileError, UntrustedFileMissing, read_untrusted
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.inputs import load_served
from livesearch_pipeline.evaluation.limits import MAX_PREDICTIONS_BYTES, MAX_SUMMARY_BYTES
from livesearch_pipeline.evaluation.outputs import (
    SUMMARY_FILE,
    VERDICTS_FILE,
    IncompleteEvaluationError,
    load_evaluation,
    load_summary,
    read_verdicts,
)
from livesearch_pipeline.evaluation.rescore import rescored_differences
from livesearch_pipeline.evaluation.summary import Bucket, EvaluationSummary


class LeaderboardError(ValueError):
    """The runs cannot form a leaderboard (none found, or a judge is not independent)."""


@dataclass(frozen=True)
class RunSummary:
    run_dir: Path
    summary: EvaluationSummary | None  # None: no summary could be read (`incomplete` says why)
    incomplete: str | None = None  # why the evaluation cannot be used (an interrupted write, an unreadable file)
    duplicate: str | None = None  # why another run of its agent name is ranked instead (`one_run_per_agent`)

    @property
    def agent(self) -> str | None:
        """The agent its summary records (the run's identity, never its folder's name)."""
        return self.summary.agent if self.summary is not None else None

    @property
    def group(self) -> tuple[str | None, str | None]:
        if self.summary is None:
            return None, None
        return self.summary.gold_date.isoformat(), self.summary.qid_set_hash


def _refuse_non_finite(name: str) -> float:
    raise LeaderboardError(f"non-finite number {name}")


def check_finite_summary(path: Path) -> None:
    """LeaderboardError when `summary.json` holds NaN or ±Infinity anywhere (never ranked as "nan")."""
    def finite(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise LeaderboardError(f"number {text[:40]} is not finite")
        return value

    try:
        data = read_untrusted(Path(path), max_bytes=MAX_SUMMARY_BYTES, what="evaluation summary")
        json.loads(data, parse_constant=_refuse_non_finite, parse_float=finite)
    except LeaderboardError as exc:
        raise LeaderboardError(f"{path}: {exc}; a summary holds finite numbers only: evaluate the run again") from None
    except ValueError:
        return  # unreadable or not JSON: load_summary names it


def _load_run(run_dir: Path) -> RunSummary:
    """One run as the board sees it: complete, or incomplete with the reason (an unreadable, linked,
    oversized or non-finite summary, verdicts that are not the summary's, no agent recorded)."""
    path = run_dir / SUMMARY_FILE
    try:
        check_finite_summary(path)
        summary = load_summary(path)
    except IncompleteEvaluationError:
        return RunSummary(run_dir, None, incomplete=f"{run_dir} has no {SUMMARY_FILE}: evaluate the run first")
    except (LeaderboardError, EvaluationError) as exc:
        return RunSummary(run_dir, None, incomplete=" ".join(str(exc).split()))
    try:
        load_evaluation(run_dir)
    except EvaluationError as exc:
        return RunSummary(run_dir, summary, incomplete=" ".join(str(exc).split()))
    if not summary.agent:
        return RunSummary(run_dir, summary, incomplete="its summary records no agent name (a run is named by its "
                                                       "metadata, never by its folder): evaluate it with --agent NAME")
    return RunSummary(run_dir, summary)


def load_runs(run_dirs: Sequence[Path]) -> list[RunSummary]:
    """Every run of `run_dirs`; one that cannot be used is kept as incomplete (listed unranked with
    the reason), never an error that would take the day's board down."""
    return [_load_run(Path(run_dir)) for run_dir in run_dirs]


class Sources:
    """The current gold manifests and served files the runs are checked against (read once each)."""

    def __init__(self, gold_dir: Path | None, served_dir: Path | None, *, llm_cache: Path | None = None,
                 judge_api_base: str | None = None) -> None:
        self.gold_dir, self.served_dir = gold_dir, served_dir
        self.llm_cache, self.judge_api_base = llm_cache, judge_api_base
        self._gold: dict[tuple[Path, str], object] = {}
        self._served: dict[Path, object] = {}

    def gold(self, summary: EvaluationSummary):
        folder = Path(self.gold_dir) if self.gold_dir is not None else Path(summary.gold_file).parent
        key = (folder, summary.gold_date.isoformat())
        if key not in self._gold:
            try:
                self._gold[key] = SnapshotStore(folder).read_verified(summary.gold_date)[0]
            except (SnapshotIntegrityError, SnapshotNotFoundError, OSError) as exc:
                self._gold[key] = f"the gold of {summary.gold_date} in {folder} cannot be trusted: {exc}"
        return self._gold[key]

    def gold_path(self, summary: EvaluationSummary) -> Path:
        folder = Path(self.gold_dir) if self.gold_dir is not None else Path(summary.gold_file).parent
        return SnapshotStore(folder).path_for(summary.gold_date)

    def served_path(self, summary: EvaluationSummary) -> Path:
        if self.served_dir is not None:
            return Path(self.served_dir) / f"served_questions_{summary.gold_date.isoformat()}.jsonl"
        return Path(summary.served_file)

    def served(self, summary: EvaluationSummary):
        path = self.served_path(summary)
        if path not in self._served:
            try:
                self._served[path] = load_served(path)
            except EvaluationError as exc:
                self._served[path] = f"the served questions cannot be read: {exc}"
        return self._served[path]


def _buckets(pairs) -> dict[str, Bucket]:
    counts: dict[str, list[int]] = {}
    for key, correct in pairs:
        tally = counts.setdefault(key, [0, 0, 0])
        tally[0] += 1
        tally[1] += correct is True
        tally[2] += correct is None
    return {k: Bucket(n=n, correct=c, judge_errors=e, accuracy=c / n) for k, (n, c, e) in sorted(counts.items())}


def _predictions_path(run: RunSummary) -> Path:
    beside = run.run_dir / "predictions.jsonl"
    return beside if os.path.lexists(beside) else Path(run.summary.predictions_file)


def _untrusted_sha256(path: Path) -> str:
    """sha256 of a run's predictions as every reader of a run folder reads them, or why it cannot be read."""
    try:
        return sha256_bytes(read_untrusted(path, max_bytes=MAX_PREDICTIONS_BYTES, what="predictions file"))
    except UntrustedFileMissing:
        return "missing"
    except UntrustedFileError as exc:
        return f"unreadable ({exc})"


def recompute_run(run: RunSummary, sources: Sources) -> RunSummary:
    """The run with every ranked figure recomputed from its sha-bound verdicts over the scoring set
    of the current gold manifest, or marked incomplete with the reason it cannot be ranked.

    The summary is trusted for nothing the leaderboard shows: its gold sha256 must be the current
    manifest's, its qid-set hashes those of the served file and scoring set, the verdicts must
    cover exactly the scoring set, the predictions must still have the sha256 it binds, and its
    own counts must agree with the verdicts. Other summary fields (usage, notes) stay informational.
    """
    if run.incomplete is not None:
        return run
    s = run.summary

    def unranked(reason: str) -> RunSummary:
        return RunSummary(run.run_dir, s, incomplete=f"{UNVERIFIED}{reason}")

    manifest = sources.gold(s)
    if isinstance(manifest, str):
        return unranked(manifest)
    if manifest.sha256 != s.gold_sha256:
        return unranked(f"its summary records gold sha256 {s.gold_sha256[:16]}…, the current gold manifest of "
                        f"{s.gold_date} has {manifest.sha256[:16]}…: evaluate it against the current gold")
    served = sources.served(s)
    if isinstance(served, str):
        return unranked(served)
    served_qids = [q.qid for q in served]
    if qid_set_hash(served_qids) != s.served_qid_set_hash:
        return unranked("its summary's served qid-set hash is not the served file's: evaluate again")
    scoring = set(scoring_qids(set(served_qids), manifest))
    if qid_set_hash(scoring) != s.qid_set_hash:
        return unranked("its summary's scoring-set hash is not the one of the current gold manifest: evaluate again")
    if s.predictions_sha256 is None:
        return unranked("its summary binds no predictions sha256 (written by an older evaluator): evaluate again")
    predictions = _predictions_path(run)
    actual = _untrusted_sha256(predictions)
    if actual != s.predictions_sha256:
        return unranked(f"{predictions} has sha256 {actual[:16]}… but the summary binds "
                        f"{s.predictions_sha256[:16]}…: the predictions changed after scoring; evaluate again")
    try:
        verdicts = read_verdicts(run.run_dir / VERDICTS_FILE)
    except ValueError as exc:
        return unranked(f"its verdicts cannot be read: {exc}")
    by_qid = {v.qid: v.correct for v in verdicts}
    if len(by_qid) != len(verdicts) or set(by_qid) != scoring:
        return unranked(f"its {len(verdicts)} verdicts do not cover exactly the scoring set of {len(scoring)} "
                        f"qid(s) of the current gold manifest: evaluate again")
    differing = _rescored_differences(run, sources, predictions, by_qid)
    if differing:
        return unranked(differing)
    rows = [(q, by_qid[q.qid]) for q in served if q.qid in scoring]
    correct = sum(1 for c in by_qid.values() if c is True)
    errors = sum(1 for c in by_qid.values() if c is None)
    n = len(scoring)
    claimed = (s.correct, s.n_scored, s.judge_errors, s.accuracy)
    actual_figures = (correct, n, errors, correct / n)
    if claimed != actual_figures:
        return unranked(f"its summary claims correct/n {s.correct}/{s.n_scored}, accuracy {s.accuracy!r}, "
                        f"{s.judge_errors} judge error(s); its verdicts give {correct}/{n}, {errors}: evaluate again")
    tier_vis = {tier: _buckets((str(q.visibility), c) for q, c in rows if q.tier == tier)
                for tier in sorted({q.tier for q, _ in rows})}
    recomputed = s.model_copy(update={
        "correct": correct, "n_scored": n, "judge_errors": errors, "accuracy": correct / n,
        "flagged": bool(errors), "n_withdrawn": len(set(served_qids) & manifest.withdrawn.keys()),
        "by_tier": _buckets((q.tier, c) for q, c in rows),
        "by_asset_class": _buckets((q.asset_class, c) for q, c in rows),
        "by_tier_and_visibility": tier_vis,
        "gold_late_backfill": manifest.late_backfill, "gold_vintage": manifest.vintage,
    })
    return RunSummary(run.run_dir, recomputed)


def _rescored_differences(run: RunSummary, sources: Sources, predictions: Path,
                          recorded: dict[str, bool | None]) -> str | None:
    """Why the run's recorded verdicts are not what its predictions score against the configured
    gold (`rescore`), or None: a rewritten verdicts.jsonl (its summary's hash and counts updated)
    never ranks."""
    s = run.summary
    return rescored_differences(sources.served_path(s), sources.gold_path(s), predictions, recorded,
                                judge_model=s.judge_model, llm_cache=sources.llm_cache,
                                api_base=sources.judge_api_base)


UNVERIFIED = "not verified against its verdicts and the current gold: "


def _first_written(run: RunSummary) -> tuple[int, str]:
    try:
        written = os.lstat(run.run_dir / SUMMARY_FILE).st_mtime_ns
    except OSError:
        written = 2**63
    return written, str(run.run_dir)


def _is_registered_run(run: RunSummary, registered: Collection[str], runs_root: Path | None) -> bool:
    """Whether `run` is a registered agent's own folder, `runs/<D>/<agent>` (the one the pipeline writes)."""
    if runs_root is None or run.agent not in registered or run.summary is None:
        return False
    own = Path(runs_root) / run.summary.gold_date.isoformat() / run.agent
    try:
        return os.path.samefile(run.run_dir, own) and not os.path.islink(run.run_dir)
    except OSError:
        return False


def one_run_per_agent(runs: Sequence[RunSummary], *, registered: Collection[str] = (),
                      runs_root: Path | None = None) -> list[RunSummary]:
    """`runs` (comparable, complete) with every run but one per agent name marked `duplicate`: the
    registered agent's own folder under `runs_root` is kept, otherwise the first written (module doc)."""
    by_agent: dict[str | None, list[RunSummary]] = {}
    for run in runs:
        by_agent.setdefault(run.agent, []).append(run)
    kept: dict[Path, str] = {}
    for agent, group in by_agent.items():
        if len(group) == 1:
            continue
        group = sorted(group, key=lambda r: (not _is_registered_run(r, registered, runs_root), _first_written(r)))
        why = "the registered run" if _is_registered_run(group[0], registered, runs_root) else "written first"
        for other in group[1:]:
            kept[other.run_dir] = (f"agent {agent!r} is ranked from {group[0].run_dir} ({why}); one agent name is "
                                   "one row: give this run its own name (evaluate --agent NAME)")
    return [RunSummary(r.run_dir, r.summary, r.incomplete, duplicate=kept[r.run_dir]) if r.run_dir in kept else r
            for r in runs]
