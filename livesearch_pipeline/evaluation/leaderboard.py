"""The leaderboard: rank evaluation runs that answered the same questions against the same gold.

Runs are comparable only when their qid-set hash AND gold date are equal — the hash of the
scoring set (the served qids minus the ones the gold manifest withdraws), so runs scored on
different sets never rank together; the ranked group is
the largest comparable group (optionally restricted to one gold date; ties go to the later date,
then to the smaller hash, so the choice is deterministic). Every other run is listed as
unranked with the reason. A judge whose model family equals a ranked agent's family is refused
(DESIGN §4.7), since a model grading its own family's answers is not an independent judge.

Intervals are 95% Wilson score intervals on correct / n_scored (judge errors count as not
correct, as in the summary; such rows are flagged). A run counts only when its summary and
verdicts form a complete evaluation (`load_evaluation`); an interrupted one is listed as
unranked. Gold recomputed after its day's cut-off (a provider without a point-in-time clock,
backfilled late) is marked in the board's notes.

Each row also carries the run's declared read budget per question (a web agent's score is made at
a budget: `budget`), accuracy by language — of the question (`by_language`: a Chinese text was
served) and of the text answered (`by_answer_language`) — and the run's usage from its summary
(tool calls, a web agent's searches, page reads, reads per correct answer and budget refusals,
tokens, cost in USD and cost per correct answer, wall time); the markdown lists them in a second
table. A cost is "-" when it is unknown (a local or unpriced model) and a baseline that reads
nothing (oracle, stale) has no usage.

The chart of accuracy by visibility level and tier is written twice: as a table (CSV) and as a
PNG (one panel per tier, one line per ranked agent), drawn with matplotlib's Agg backend under
its default style with no timestamp or software tag, so the same leaderboard gives the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.snapshot import (
    SnapshotIntegrityError,
    SnapshotNotFoundError,
    SnapshotStore,
    scoring_qids,
    sha256_file,
    write_atomic,
)
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.inputs import load_served
from livesearch_pipeline.evaluation.rescore import rescored_differences
from livesearch_pipeline.evaluation.outputs import (
    SUMMARY_FILE,
    VERDICTS_FILE,
    IncompleteEvaluationError,
    load_evaluation,
    load_summary,
    read_verdicts,
)
from livesearch_pipeline.evaluation.summary import Bucket, EvaluationSummary, RunUsage
from livesearch_pipeline.evaluation.judge import ensure_judge_independent

Z_95 = 1.959963984540054


class LeaderboardError(ValueError):
    """The runs cannot form a leaderboard (none found, or a judge is not independent)."""


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when there are no trials."""
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"invalid binomial counts: {successes} successes of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half_width = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half_width), min(1.0, centre + half_width)


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LeaderboardRow(_Row):
    rank: int
    agent: str
    model: str | None
    accuracy: float
    correct: int
    n: int  # the scoring set's size
    withdrawn: int
    wilson_low: float
    wilson_high: float
    judge_errors: int
    flagged: bool
    by_tier: dict[str, float]
    by_asset_class: dict[str, float]
    run_dir: str
    by_language: dict[str, float] = {}
    by_answer_language: dict[str, float] = {}
    usage: RunUsage | None = None
    # The run's declared read budget per question (`ReadBudget.describe()`; None: not declared).
    budget: str | None = None


class UnrankedRun(_Row):
    agent: str
    model: str | None
    gold_date: str
    qid_set_hash: str
    reason: str
    run_dir: str


class ChartPoint(_Row):
    agent: str
    tier: str
    visibility: int
    n: int
    correct: int
    accuracy: float


class Leaderboard(_Row):
    gold_date: str
    qid_set_hash: str  # of the scoring set
    scored: int
    withdrawn: int
    gold_late_backfill: bool
    judge_models: list[str]
    rows: list[LeaderboardRow]
    unranked: list[UnrankedRun]
    chart: list[ChartPoint]
    notes: list[str]


@dataclass(frozen=True)
class RunSummary:
    run_dir: Path
    summary: EvaluationSummary
    incomplete: str | None = None  # why the evaluation cannot be used (an interrupted write)

    @property
    def agent(self) -> str:
        return self.summary.agent or self.run_dir.name

    @property
    def group(self) -> tuple[str, str]:
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
        json.loads(Path(path).read_bytes(), parse_constant=_refuse_non_finite, parse_float=finite)
    except LeaderboardError as exc:
        raise LeaderboardError(f"{path}: {exc}; a summary holds finite numbers only: evaluate the run again") from None
    except (OSError, ValueError):
        return  # unreadable or not JSON: load_summary names it


def load_runs(run_dirs: Sequence[Path]) -> list[RunSummary]:
    runs: list[RunSummary] = []
    for run_dir in run_dirs:
        path = Path(run_dir) / SUMMARY_FILE
        if not path.is_file():
            raise LeaderboardError(f"{run_dir} has no {SUMMARY_FILE}: evaluate the run first")
        check_finite_summary(path)
        try:
            summary, _ = load_evaluation(Path(run_dir))
        except IncompleteEvaluationError as exc:
            runs.append(RunSummary(Path(run_dir), load_summary(path), incomplete=str(exc)))
        else:
            runs.append(RunSummary(Path(run_dir), summary))
    return runs


class _Sources:
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
    return beside if beside.is_file() else Path(run.summary.predictions_file)


def recompute_run(run: RunSummary, sources: _Sources) -> RunSummary:
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
    actual = sha256_file(predictions) if predictions.is_file() else "missing"
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


def _rescored_differences(run: RunSummary, sources: _Sources, predictions: Path,
                          recorded: dict[str, bool | None]) -> str | None:
    """Why the run's recorded verdicts are not what its predictions score against the configured
    gold (`rescore`), or None: a rewritten verdicts.jsonl (its summary's hash and counts updated)
    never ranks."""
    s = run.summary
    return rescored_differences(sources.served_path(s), sources.gold_path(s), predictions, recorded,
                                judge_model=s.judge_model, llm_cache=sources.llm_cache,
                                api_base=sources.judge_api_base)


def _refuse_duplicate_agents(runs: Sequence[RunSummary]) -> None:
    seen: dict[str, Path] = {}
    for run in runs:
        if run.agent in seen:
            raise LeaderboardError(
                f"agent {run.agent!r} has two runs to rank, {seen[run.agent]} and {run.run_dir}: one agent is one "
                "row; remove or rename the copy")
        seen[run.agent] = run.run_dir


def _choose_group(runs: Sequence[RunSummary], date: str | None) -> tuple[str, str]:
    """The ranked (gold date, scoring-set hash): the largest group of complete runs of `date`, or,
    without a date, of the one day the complete runs share. Runs of several days are refused
    (one leaderboard ranks one day: an older day's runs copied into a newest day's folder must
    not outnumber and so displace that day's runs)."""
    if date is None:
        days = sorted({r.group[0] for r in runs if r.incomplete is None})
        if len(days) > 1:
            listed = ", ".join(f"{d} ({', '.join(str(r.run_dir) for r in runs if r.group[0] == d)[:200]})"
                               for d in days)
            raise LeaderboardError(f"the runs were scored against the gold of {len(days)} days: {listed}; fix: pass "
                                   f"--date {days[-1]} (the newest) or give only one day's runs")
    sizes: dict[tuple[str, str], int] = {}
    for run in runs:
        if run.incomplete is None and (date is None or run.group[0] == date):
            sizes[run.group] = sizes.get(run.group, 0) + 1
    if not sizes:
        incomplete = [str(r.run_dir) for r in runs if r.incomplete is not None]
        raise LeaderboardError(
            "no complete evaluation run" + (f" has gold date {date}" if date else "")
            + (f" (incomplete: {', '.join(incomplete)})" if incomplete else "")
            + "; fix: evaluate the runs again against the current gold"
        )
    # Largest group, then the later date, then the smaller hash: deterministic.
    return min(sizes, key=lambda g: (-sizes[g], _negated_date(g[0]), g[1]))


def _negated_date(iso: str) -> tuple[int, ...]:
    return tuple(-int(part) for part in iso.split("-"))


UNVERIFIED = "not verified against its verdicts and the current gold: "


def _unranked_reason(run: RunSummary, group: tuple[str, str]) -> str:
    if run.incomplete is not None and run.incomplete.startswith(UNVERIFIED):
        return run.incomplete
    if run.incomplete is not None:
        return f"incomplete evaluation: {run.incomplete}"
    date, qid_hash = group
    reasons = []
    if run.group[0] != date:
        reasons.append(f"gold date {run.group[0]} differs from the ranked {date}")
    if run.group[1] != qid_hash:
        reasons.append(f"qid-set hash {run.group[1][:12]}… differs from the ranked {qid_hash[:12]}…")
    return "; ".join(reasons)


def _rank(rows: list[LeaderboardRow]) -> list[LeaderboardRow]:
    ordered = sorted(rows, key=lambda r: (-r.accuracy, -r.wilson_low, r.agent, r.model or "", r.run_dir))
    ranked: list[LeaderboardRow] = []
    for index, row in enumerate(ordered):
        tied = index > 0 and row.correct == ordered[index - 1].correct and row.n == ordered[index - 1].n
        rank = ranked[-1].rank if tied else index + 1
        ranked.append(row.model_copy(update={"rank": rank}))
    return ranked


def build_leaderboard(run_dirs: Sequence[Path], *, date: str | None = None, gold_dir: Path | None = None,
                      served_dir: Path | None = None, llm_cache: Path | None = None,
                      judge_api_base: str | None = None) -> Leaderboard:
    """Rank the comparable runs among `run_dirs` (each holding a summary.json).

    Every figure is recomputed (`recompute_run`) against the gold manifests in `gold_dir` and the
    served files in `served_dir` (the command line and the asset pass the data root's; None: the
    files each summary names, for a caller that placed them), and each run's predictions are
    scored again against that gold, judge verdicts read only from the LLM cache `llm_cache`
    (default: the data root's) under `judge_api_base` (default: $LIVESEARCH_LLM_API_BASE)."""
    if llm_cache is None:
        from livesearch_pipeline.settings import DataPaths

        llm_cache = DataPaths.from_env().llm_cache
    if judge_api_base is None:
        from livesearch_pipeline.infra.llm import LLMSettings

        judge_api_base = LLMSettings.from_env().api_base
    sources = _Sources(gold_dir, served_dir, llm_cache=llm_cache, judge_api_base=judge_api_base)
    # A folder named twice is one run (a copy elsewhere is another run: refused below if ranked).
    unique = list({Path(d).resolve(): Path(d) for d in reversed(list(run_dirs))}.values())[::-1]
    runs = [recompute_run(run, sources) for run in load_runs(unique)]
    if not runs:
        raise LeaderboardError("no evaluation runs given")
    group = _choose_group(runs, date)
    ranked = [r for r in runs if r.group == group and r.incomplete is None]
    _refuse_duplicate_agents(ranked)
    judge_models = sorted({r.summary.judge_model for r in ranked if r.summary.judge_model})
    agent_models = {f"{r.agent} [{r.run_dir.name}]": r.summary.model for r in ranked}
    for judge_model in judge_models:
        try:
            ensure_judge_independent(judge_model, agent_models)
        except ValueError as exc:
            raise LeaderboardError(str(exc)) from exc
    notes = []
    if len(judge_models) > 1:
        notes.append(f"ranked runs were judged by different models: {', '.join(judge_models)}")
    rows = []
    for run in ranked:
        s = run.summary
        low, high = wilson_interval(s.correct, s.n_scored)
        rows.append(
            LeaderboardRow(
                rank=0, agent=run.agent, model=s.model, accuracy=s.accuracy, correct=s.correct,
                n=s.n_scored, withdrawn=s.n_withdrawn, wilson_low=low, wilson_high=high, judge_errors=s.judge_errors,
                flagged=s.flagged,
                by_tier={k: b.accuracy for k, b in s.by_tier.items()},
                by_asset_class={k: b.accuracy for k, b in s.by_asset_class.items()},
                run_dir=str(run.run_dir),
                by_language={k: b.accuracy for k, b in s.by_language.items()},
                by_answer_language={k: b.accuracy for k, b in (s.by_answer_language or {}).items()},
                usage=s.usage,
                budget=s.budget.describe() if s.budget is not None else None,
            )
        )
    chart = [
        ChartPoint(agent=run.agent, tier=tier, visibility=int(level), n=b.n, correct=b.correct, accuracy=b.accuracy)
        for run in ranked
        for tier, levels in sorted(run.summary.by_tier_and_visibility.items())
        for level, b in sorted(levels.items(), key=lambda item: int(item[0]))
    ]
    unranked = [
        UnrankedRun(
            agent=r.agent, model=r.summary.model, gold_date=r.group[0], qid_set_hash=r.group[1],
            reason=_unranked_reason(r, group), run_dir=str(r.run_dir),
        )
        for r in runs
        if r.group != group or r.incomplete is not None
    ]
    first = ranked[0].summary
    late = any(r.summary.gold_late_backfill for r in ranked)
    if late:
        notes.append(f"the gold of {group[0]} was recomputed after the day's cut-off (late backfill, "
                     f"retrieved {first.gold_vintage}); it may hold figures published after that day")
    return Leaderboard(
        gold_date=group[0], qid_set_hash=group[1], scored=first.n_scored, withdrawn=first.n_withdrawn,
        gold_late_backfill=late, judge_models=judge_models,
        rows=_rank(rows), unranked=unranked, chart=chart, notes=notes,
    )


def render_markdown(board: Leaderboard) -> str:
    tiers = sorted({t for row in board.rows for t in row.by_tier})
    header = ["rank", "agent", "model", "budget", "accuracy", "95% CI", "correct/n", *tiers, "flags"]
    lines = [
        f"# Leaderboard — gold {board.gold_date}{' (late backfill)' if board.gold_late_backfill else ''}, "
        f"scoring set {board.qid_set_hash[:12]}… ({board.scored} scored, {board.withdrawn} withdrawn)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for row in board.rows:
        flags = f"{row.judge_errors} judge error(s)" if row.flagged else ""
        cells = [
            str(row.rank), row.agent, row.model or "-", row.budget or "-", f"{row.accuracy:.1%}",
            f"[{row.wilson_low:.1%}, {row.wilson_high:.1%}]", f"{row.correct}/{row.n}",
            *(f"{row.by_tier[t]:.1%}" if t in row.by_tier else "-" for t in tiers), flags,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += _usage_table(board)
    if board.judge_models:
        lines += ["", f"Judge: {', '.join(board.judge_models)}"]
    if board.unranked:
        lines += ["", "## Not ranked (not comparable)", ""]
        lines += [f"- {u.agent} ({u.run_dir}): {u.reason}" for u in board.unranked]
    if board.notes:
        lines += ["", *(f"Note: {n}" for n in board.notes)]
    return "\n".join(lines) + "\n"


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _usage_table(board: Leaderboard) -> list[str]:
    """Accuracy by the language answered, and what each run cost (tokens, tools, USD, time)."""
    header = ["rank", "agent", "answered en", "answered zh", "tool calls", "searches", "page reads",
              "reads per correct", "refused", "input tokens", "output tokens", "cost", "cost per correct", "wall s"]
    lines = ["", "## Languages and usage", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in board.rows:
        u = row.usage
        by_lang = row.by_answer_language
        cells = [str(row.rank), row.agent,
                 *(f"{by_lang[k]:.1%}" if k in by_lang else "-" for k in ("en", "zh"))]
        if u is None:
            cells += ["-"] * 10
        else:
            cells += [str(u.tool_calls), str(u.searches), str(u.page_reads),
                      "-" if u.reads_per_correct is None else f"{u.reads_per_correct:.2f}", str(u.budget_refusals),
                      str(u.input_tokens), str(u.output_tokens), _usd(u.cost_usd),
                      _usd(u.cost_per_correct_usd), f"{u.wall_s:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_chart_csv(board: Leaderboard) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["agent", "tier", "visibility", "n", "correct", "accuracy"])
    for point in board.chart:
        writer.writerow([point.agent, point.tier, point.visibility, point.n, point.correct, f"{point.accuracy:.6f}"])
    return buffer.getvalue()


CHART_SIZE_INCHES = (4.2, 3.6)  # per tier panel
CHART_DPI = 100


def render_chart_png(board: Leaderboard) -> bytes:
    """Accuracy by visibility level (x) per tier (panel) and agent (line), as PNG bytes."""
    from matplotlib import style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    tiers = sorted({p.tier for p in board.chart}) or ["(no questions)"]
    agents = [row.agent for row in board.rows]
    # The default style, not the user's matplotlibrc: the bytes must not depend on the machine.
    with style.context("default"):
        width, height = CHART_SIZE_INCHES
        figure = Figure(figsize=(width * len(tiers), height + 0.6), dpi=CHART_DPI, layout="constrained")
        FigureCanvasAgg(figure)
        axes = figure.subplots(1, len(tiers), sharey=True, squeeze=False)[0]
        for ax, tier in zip(axes, tiers):
            for agent in agents:
                points = sorted((p for p in board.chart if p.agent == agent and p.tier == tier),
                                key=lambda p: p.visibility)
                if points:
                    ax.plot([p.visibility for p in points], [p.accuracy for p in points], marker="o", label=agent)
            ax.set_title(f"tier {tier}")
            ax.set_xlabel("visibility level")
            ax.set_ylim(-0.05, 1.05)
            # Visibility levels are the integers 0..10: a fixed axis keeps panels and days comparable.
            ax.set_xlim(-0.5, 10.5)
            ax.set_xticks(range(11))
            ax.grid(True, alpha=0.3)
        axes[0].set_ylabel("accuracy")
        if board.chart:
            axes[-1].legend(loc="best", fontsize="small")
        figure.suptitle(f"Accuracy by visibility and tier: gold {board.gold_date}, qid set {board.qid_set_hash[:12]}")
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


LEADERBOARD_JSON = "leaderboard.json"
LEADERBOARD_MD = "leaderboard.md"
CHART_CSV = "accuracy_by_visibility_tier.csv"
CHART_PNG = "accuracy_by_visibility_tier.png"


def write_leaderboard(board: Leaderboard, out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    outputs = {
        out_dir / LEADERBOARD_JSON: json.dumps(board.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n",
        out_dir / LEADERBOARD_MD: render_markdown(board),
        out_dir / CHART_CSV: render_chart_csv(board),
    }
    for path, text in outputs.items():
        write_atomic(path, text.encode("utf-8"))
    write_atomic(out_dir / CHART_PNG, render_chart_png(board))
    return [*outputs, out_dir / CHART_PNG]
