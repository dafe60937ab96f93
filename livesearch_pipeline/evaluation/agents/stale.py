"""Stale baseline: answers every question with the previous snapshot's gold answer.

Its score measures how much of day D a benchmark with frozen answers would still get right:
the stale-gold effect that a live benchmark exists to avoid. The previous snapshot is the
latest one dated before D (normally the previous trading day).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Sequence

from livesearch_pipeline.core.models import GoldAnswer, Prediction, ServedQuestion
from livesearch_pipeline.core.snapshot import SnapshotStore


class StaleGoldError(RuntimeError):
    """There is no earlier snapshot to answer from."""


@dataclass(frozen=True)
class StaleAgent:
    as_of: dt.date
    gold_date: dt.date
    gold: dict[str, GoldAnswer]
    name: str = "stale"
    model: str | None = None

    @classmethod
    def from_store(cls, store: SnapshotStore, as_of: dt.date) -> StaleAgent:
        """Read (and verify) the latest snapshot dated before `as_of`."""
        earlier = [day for day in store.dates() if day < as_of]
        if not earlier:
            raise StaleGoldError(f"no gold snapshot dated before {as_of} in {store.root}")
        gold_date = max(earlier)
        return cls(as_of=as_of, gold_date=gold_date, gold={a.qid: a for a in store.read(gold_date)})

    async def prepare(self, questions: Sequence[ServedQuestion]) -> None:
        """The previous snapshot was read when the agent was made."""

    async def answer(self, question: ServedQuestion) -> Prediction:
        trace: list[dict[str, object]] = [{"type": "stale", "gold_date": self.gold_date.isoformat()}]
        gold = self.gold.get(question.qid)
        if gold is None:
            return Prediction(qid=question.qid, error=f"not in the {self.gold_date} snapshot", trace=trace)
        if gold.status != "ok":
            return Prediction(qid=question.qid, trace=trace,
                              error=f"the {self.gold_date} snapshot holds status {gold.status}")
        return Prediction(qid=question.qid, answer=gold.answer, trace=trace)
