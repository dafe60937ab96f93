"""Evaluation history for construction stage 2: which signatures did every evaluated agent solve?

Runs live in `<data>/runs/<D>/<agent>/verdicts.jsonl`. Calibration baselines (`oracle`, which
runs the gold programs, and `stale`, which replays yesterday's gold) are not evaluated models
and never count. `store_dir` reads the same verdicts from the Parquet store
(livesearch_pipeline/evaluation/store.py) in one scan.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Iterator, Sequence

from livesearch_pipeline.core.models import Question
from livesearch_pipeline.core.pool import SignatureHistory
from livesearch_pipeline.evaluation.outputs import read_verdicts
from livesearch_pipeline.settings import DataPaths

BASELINE_AGENTS = frozenset({"oracle", "stale", "search-read"})


def _verdicts_by_run(paths: DataPaths, store_dir: Path | None) -> Iterator[tuple[str, list[tuple[str, bool | None]]]]:
    """(agent, [(qid, correct)]) per evaluated run, in (date, agent) order: from every
    `verdicts.jsonl`, or from the Parquet store's verdict table (one scan) when `store_dir` is given."""
    if store_dir is None:
        for path in sorted(paths.runs.glob("*/*/verdicts.jsonl")):
            yield path.parent.name, [(v.qid, v.correct) for v in read_verdicts(path)]
        return
    from livesearch_pipeline.evaluation.store import read_table, verify_store

    # The store must hold every verdicts.jsonl as it is now: history is complete, or an error.
    verify_store(paths, store_dir, tables=("verdicts",))
    table = read_table(store_dir, "verdicts", columns=["date", "agent", "qid", "correct"])
    runs: dict[tuple[object, str], list[tuple[str, bool | None]]] = defaultdict(list)
    for row in table.to_pylist():
        runs[(row["date"], row["agent"])].append((row["qid"], row["correct"]))
    for (_, agent), verdicts in sorted(runs.items(), key=lambda item: (item[0][0], item[0][1])):
        yield agent, verdicts


def signature_history(paths: DataPaths, questions: Sequence[Question], *,
                      store_dir: Path | None = None) -> dict[str, SignatureHistory]:
    signature_of = {q.qid: q.signature for q in questions}
    # agent -> signature -> all verdicts correct so far?
    solved: dict[str, dict[str, bool]] = defaultdict(dict)
    served: dict[str, set[str]] = defaultdict(set)
    for agent, verdicts in _verdicts_by_run(paths, store_dir):
        if agent in BASELINE_AGENTS:
            continue
        for verdict_qid, correct in verdicts:
            signature = signature_of.get(verdict_qid)
            if signature is None:
                continue
            served[signature].add(verdict_qid)
            previous = solved[agent].get(signature, True)
            solved[agent][signature] = previous and correct is True
    history: dict[str, SignatureHistory] = {}
    for signature, qids in served.items():
        agents = [a for a in solved if signature in solved[a]]
        history[signature] = SignatureHistory(
            agents_evaluated=len(agents),
            agents_solved=sum(1 for a in agents if solved[a][signature]),
            served_qids=frozenset(qids),
        )
    return history
