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
from collections.abc import Collection, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from livesearch_pipeline.core.markdown import md_text
from livesearch_pipeline.core.snapshot import write_atomic
from livesearch_pipeline.evaluation.board_runs import (
    UNVERIFIED,
    LeaderboardError,
    RunSummary,
    Sources,
    load_runs,
    one_run_per_agent,
    recompute_run,
)
from livesearch_pipeline.evaluation.judge import ensure_judge_independent
from livesearch_pipeline.evaluation.summary import RunUsage

__all__ = ["LeaderboardError", "Leaderboard", "build_leaderboard", "render_markdown", "write_leaderboard",
           "wilson_interval"]

Z_95 = 1.959963984540054


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
    # The run's identity beside its folder: what the site binds a row to (None in boards written before).
    verdicts_sha256: str | None = None


class UnrankedRun(_Row):
    agent: str | None  # None: no summary could be read
    model: str | None
    gold_date: str | None
    qid_set_hash: str | None
    reason: str
    run_dir: str
    verdicts_sha256: str | None = None


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
        incomplete = [f"{r.run_dir}: {r.incomplete}"[:300] for r in runs if r.incomplete is not None]
        raise LeaderboardError(
            "no complete evaluation run" + (f" has gold date {date}" if date else "")
            + (f" (incomplete: {'; '.join(incomplete)})" if incomplete else "")
            + "; fix: evaluate the runs again against the current gold"
        )
    # Largest group, then the later date, then the smaller hash: deterministic.
    return min(sizes, key=lambda g: (-sizes[g], _negated_date(g[0]), g[1]))


def _negated_date(iso: str) -> tuple[int, ...]:
    return tuple(-int(part) for part in iso.split("-"))


def _unranked_reason(run: RunSummary, group: tuple[str, str]) -> str:
    if run.duplicate is not None:
        return run.duplicate
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
                      judge_api_base: str | None = None, registered: Collection[str] = (),
                      runs_root: Path | None = None) -> Leaderboard:
    """Rank the comparable runs among `run_dirs` (each holding a summary.json).

    Every figure is recomputed (`recompute_run`) against the gold manifests in `gold_dir` and the
    served files in `served_dir` (the command line and the asset pass the data root's; None: the
    files each summary names, for a caller that placed them), and each run's predictions are
    scored again against that gold, judge verdicts read only from the LLM cache `llm_cache`
    (default: the data root's) under `judge_api_base` (default: $LIVESEARCH_LLM_API_BASE).
    A run that cannot be used is listed unranked with the reason; of two comparable runs under one
    agent name the `registered` agent's own folder under `runs_root` (`runs/<D>/<agent>`) ranks, else
    the first written (`board_runs.one_run_per_agent`), and the other is listed unranked."""
    if llm_cache is None:
        from livesearch_pipeline.settings import DataPaths

        llm_cache = DataPaths.from_env().llm_cache
    if judge_api_base is None:
        from livesearch_pipeline.infra.llm import LLMSettings

        judge_api_base = LLMSettings.from_env().api_base
    sources = Sources(gold_dir, served_dir, llm_cache=llm_cache, judge_api_base=judge_api_base)
    # A folder named twice is one run (a copy elsewhere is another run: refused below if ranked).
    unique = list({Path(d).resolve(): Path(d) for d in reversed(list(run_dirs))}.values())[::-1]
    runs = [recompute_run(run, sources) for run in load_runs(unique)]
    if not runs:
        raise LeaderboardError("no evaluation runs given")
    group = _choose_group(runs, date)
    comparable = one_run_per_agent([r for r in runs if r.group == group and r.incomplete is None],
                                   registered=registered, runs_root=runs_root)
    duplicates = {r.run_dir: r for r in comparable if r.duplicate is not None}
    runs = [duplicates.get(r.run_dir, r) for r in runs]
    ranked = [r for r in comparable if r.duplicate is None]
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
                usage=s.usage, verdicts_sha256=s.verdicts_sha256,
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
            agent=r.agent, model=r.summary.model if r.summary else None, gold_date=r.group[0],
            qid_set_hash=r.group[1], reason=_unranked_reason(r, group), run_dir=str(r.run_dir),
            verdicts_sha256=r.summary.verdicts_sha256 if r.summary else None,
        )
        for r in runs
        if r.group != group or r.incomplete is not None or r.duplicate is not None
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
            str(row.rank), md_text(row.agent), md_text(row.model or "-"), row.budget or "-", f"{row.accuracy:.1%}",
            f"[{row.wilson_low:.1%}, {row.wilson_high:.1%}]", f"{row.correct}/{row.n}",
            *(f"{row.by_tier[t]:.1%}" if t in row.by_tier else "-" for t in tiers), flags,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += _usage_table(board)
    if board.judge_models:
        lines += ["", f"Judge: {', '.join(md_text(m) for m in board.judge_models)}"]
    if board.unranked:
        lines += ["", "## Not ranked (not comparable)", ""]
        lines += [f"- {md_text(u.agent or '(unreadable run)')} ({md_text(u.run_dir)}): {md_text(u.reason)}"
                  for u in board.unranked]
    if board.notes:
        lines += ["", *(f"Note: {md_text(n)}" for n in board.notes)]
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
        cells = [str(row.rank), md_text(row.agent),
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
