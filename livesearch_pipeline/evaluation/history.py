"""Evaluation history for construction stage 2: which signatures did every evaluated agent solve?

Runs live in `<data>/runs/<D>/<agent>/verdicts.jsonl`. Calibration baselines (`oracle`, which
runs the gold programs, and `stale`, which replays yesterday's gold) are not evaluated models
and never count.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Sequence

from livesearch_pipeline.construction.pool import SignatureHistory
from livesearch_pipeline.core.models import Question, Verdict
from livesearch_pipeline.settings import DataPaths

BASELINE_AGENTS = frozenset({"oracle", "stale"})


def read_verdicts(path: Path) -> list[Verdict]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(Verdict.model_validate_json(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: not a valid verdict: {exc}") from exc
    return rows


def signature_history(paths: DataPaths, questions: Sequence[Question]) -> dict[str, SignatureHistory]:
    signature_of = {q.qid: q.signature for q in questions}
    # agent -> signature -> all verdicts correct so far?
    solved: dict[str, dict[str, bool]] = defaultdict(dict)
    served: dict[str, set[str]] = defaultdict(set)
    for path in sorted(paths.runs.glob("*/*/verdicts.jsonl")):
        agent = path.parent.name
        if agent in BASELINE_AGENTS:
            continue
        for verdict in read_verdicts(path):
            signature = signature_of.get(verdict.qid)
            if signature is None:
                continue
            served[signature].add(verdict.qid)
            previous = solved[agent].get(signature, True)
            solved[agent][signature] = previous and verdict.correct is True
    history: dict[str, SignatureHistory] = {}
    for signature, qids in served.items():
        agents = [a for a in solved if signature in solved[a]]
        history[signature] = SignatureHistory(
            agents_evaluated=len(agents),
            agents_solved=sum(1 for a in agents if solved[a][signature]),
            served_qids=frozenset(qids),
        )
    return history
