"""A run's identity: who a run folder belongs to, and which agent names a day already has.

A run is named by its metadata (`predictions.meta.json`'s agent, copied into `summary.json`), never
by its folder's name; the writers keep the two from drifting apart:

- `checked_agent_name`: an agent name is one line of printable text (no control or format
  characters, no line breaks, no surrounding blanks, at most `MAX_AGENT_NAME` characters): it ends
  up in Markdown tables, HTML pages, file names and log lines.
- `check_run_folder`: a folder holds one agent's run. An output folder that already holds a run —
  a summary or run metadata naming another agent, or predictions that are not the ones being
  scored — is refused before anything is written: `evaluate --out data/runs/D/navigator-6` can no
  longer overwrite navigator-6's verdicts with someone else's.
- `check_name_free`: within the data root's `runs/<D>/`, an agent name belongs to one folder: a
  registered agent's name (baselines included) to the folder the pipeline writes, `runs/<D>/<name>`,
  and any other name to the first folder that holds a run of it. A second run under a taken name
  is refused when it is written (the leaderboard, which may be handed folders from anywhere, lists
  such a run unranked instead of failing: `board_runs.one_run_per_agent`).

Every refusal is an EvaluationError of one line naming the folder, the agent and the fix.
"""

from __future__ import annotations

import datetime as dt
import os
import unicodedata
from collections.abc import Collection
from pathlib import Path

from livesearch_pipeline.core.untrusted import UntrustedFileError, read_untrusted
from livesearch_pipeline.evaluation.errors import EvaluationError

MAX_AGENT_NAME = 100
SUMMARY_FILE = "summary.json"  # outputs.SUMMARY_FILE, named here so that outputs may import this module
META_FILE = "predictions.meta.json"
PREDICTIONS_FILE = "predictions.jsonl"
_NAME_BYTES = 16 * 1024 * 1024


def checked_agent_name(name: str, *, what: str = "agent name") -> str:
    """`name` when it is a usable agent name (module doc); EvaluationError naming it otherwise."""
    problem = None
    if not name or not name.strip():
        problem = "is empty"
    elif name != name.strip():
        problem = "has blanks around it"
    elif len(name) > MAX_AGENT_NAME:
        problem = f"is longer than {MAX_AGENT_NAME} characters"
    elif any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn") for ch in name):
        problem = "holds a line break or another control character"
    if problem is not None:
        raise EvaluationError(f"{what} {name[:120]!r} {problem}: an agent name is one line of printable text")
    return name


def _recorded_agent(path: Path) -> str | None:
    """The `agent` a summary or run metadata file records; None when absent or unreadable (the
    folder's own readers name an unreadable file)."""
    import json

    try:
        data = json.loads(read_untrusted(path, max_bytes=_NAME_BYTES))
    except (UntrustedFileError, ValueError):
        return None
    agent = data.get("agent") if isinstance(data, dict) else None
    return agent if isinstance(agent, str) else None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_run_folder(out_dir: Path, agent: str, predictions: Path) -> None:
    """EvaluationError when `out_dir` holds the run of another agent, or predictions other than
    `predictions` (the file being scored): a folder holds one agent's run (module doc)."""
    out_dir = Path(out_dir)
    for name in (SUMMARY_FILE, META_FILE):
        recorded = _recorded_agent(out_dir / name)
        if recorded is not None and recorded != agent:
            raise EvaluationError(f"{out_dir} holds the run of agent {recorded!r} ({name}), not of {agent!r}: a folder "
                                  "holds one agent's run; fix: choose another --out (e.g. data/runs/<D>/<your agent>)")
    held = out_dir / PREDICTIONS_FILE
    if os.path.lexists(held) and not _same_file(held, predictions):
        raise EvaluationError(f"{out_dir} holds a run's own predictions ({held}), not the predictions scored "
                              f"({predictions}): its verdicts are that run's; fix: choose another --out")


def check_name_free(out_dir: Path, agent: str, day: dt.date, *, runs_root: Path,
                    registered: Collection[str]) -> None:
    """EvaluationError when writing the run of `agent` on `day` into `out_dir` would give a name of the
    day to a second folder under `runs_root` (module doc). Folders outside `runs_root` are not the
    day's runs: nothing to check."""
    runs_root = Path(os.path.realpath(runs_root))
    out = Path(os.path.realpath(out_dir))
    if runs_root not in out.parents:
        return
    day_dir = runs_root / day.isoformat()
    own = day_dir / agent
    if agent in registered and out == own:
        return  # the registered agent's own folder: its name is its own there
    if agent in registered:
        raise EvaluationError(f"agent {agent!r} is registered: its run of {day} is the pipeline's, {own}; a run "
                              f"under its name in {out_dir} would compete with it; fix: evaluate under your own "
                              "name (--agent NAME, or the agent in predictions.meta.json)")
    try:
        entries = sorted(os.scandir(day_dir), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        folder = Path(entry.path)
        if folder == out or not entry.is_dir(follow_symlinks=False):
            continue
        for name in (SUMMARY_FILE, META_FILE):
            if _recorded_agent(folder / name) == agent:
                raise EvaluationError(f"agent {agent!r} already has a run of {day} in {folder} ({name}): one agent "
                                      f"name is one run a day; fix: evaluate under another name, or into {folder}")
