"""The inputs of one day's agent runs, looked up once: `AgentDay`.

Every agent run of D reads the same things: D's served questions, D's gold snapshot (and, for
the stale agent, the snapshots before it), D's offline web (the search-read baseline), the
checked pool (the oracle), the LLM cache (the LLM kinds and their judge); each writes its own run
folder under `runs/<D>/`. `AgentDay.build` resolves them once, from the data root and D, so that
every stop of a run (opening the agent, running it, scoring it, recording the web it searched)
reads the same files, spelled in one place: one lookup. And it is the one error: when D's served
file or gold snapshot is not there it refuses at once, naming the missing file, before an agent
is opened or a run folder is touched (not after the whole run, when the scoring first reads the
gold).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from livesearch_pipeline.core.models import Question, ServedQuestion
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.evaluation.errors import EvaluationError
from livesearch_pipeline.evaluation.inputs import load_served
from livesearch_pipeline.settings import DataPaths


@dataclass(frozen=True)
class AgentDay:
    """What an agent run of `day` reads and where it writes, resolved once by `build`."""

    day: dt.date
    served_path: Path  # served/served_questions_<D>.jsonl
    served: tuple[ServedQuestion, ...]  # its questions, read once as the evaluator reads them
    gold_dir: Path  # the snapshot store: D's gold, and the snapshots before D the stale agent answers with
    gold_path: Path  # D's snapshot, gold_answers_<D>.jsonl (its manifest beside it)
    web_dir: Path  # D's offline web, web/<D> (its index and clock are checked when search-read opens it)
    runs_dir: Path  # runs/<D>: one run folder per agent (`run_dir`)
    llm_cache: Path  # the one LLM request cache of the LLM kinds and their judge
    # The oracle's programs: the pool checked before anything executes it. A loader, not the
    # pool, because only the oracle needs it and checking it reads the whole pool and catalog.
    load_pool: Callable[[], Sequence[Question]] = field(repr=False, compare=False)

    @classmethod
    def build(cls, paths: DataPaths, day: dt.date, *, llm_cache: Path | None = None,
              load_pool: Callable[[], Sequence[Question]] | None = None) -> AgentDay:
        """The inputs of `day` under `paths`; EvaluationError naming the file when D's served file
        or gold snapshot (its JSONL or its manifest) is missing.

        `llm_cache` defaults to `<data>/cache/llm`; `load_pool` to `paths.checked_pool()` (the
        Dagster asset passes its own, which reports a bad pool as the asset's failure)."""
        served_path = paths.served_file(day)
        if not served_path.is_file():
            raise EvaluationError(f"no served file for {day}: {served_path} does not exist "
                                  f"(the refresh of {day} writes it with the gold)")
        store = SnapshotStore(paths.gold)
        gold_path = store.path_for(day)
        for required in (gold_path, store.manifest_path_for(day)):
            if not required.is_file():
                raise EvaluationError(f"no gold snapshot for {day}: {required} does not exist "
                                      f"(freeze the gold of {day} before its agent runs: they are scored on it)")
        return cls(
            day=day, served_path=served_path, served=tuple(load_served(served_path)), gold_dir=paths.gold,
            gold_path=gold_path, web_dir=paths.web / day.isoformat(), runs_dir=paths.runs / day.isoformat(),
            llm_cache=llm_cache if llm_cache is not None else paths.llm_cache,
            load_pool=load_pool if load_pool is not None else (lambda: paths.checked_pool()[1]),
        )

    def run_dir(self, agent: str) -> Path:
        """The run folder of `agent` on this day: predictions, run metadata, verdicts, summary."""
        return self.runs_dir / agent
