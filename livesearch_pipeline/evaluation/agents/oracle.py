"""Oracle baseline: answers by running the gold programs itself for the day (the gold self-test).

Run against the same data service and date as the refresh, it must score 100% against that
day's snapshot; anything less means the snapshot, the executor or the evaluator disagree.
All pending questions are executed together in `prepare`, so tool calls shared between
programs are made once, exactly as in the refresh. The pool it is given must come from
`core.pool.load_checked_pool` (as `livesearch agent run` and the `agent_runs` asset
do): its bytes checked against the pool manifest, every program against the catalog and bounds.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Sequence

from livesearch_pipeline.core.client import ToolClient
from livesearch_pipeline.core.executor import ExecutionStats, ExecutorConfig, execute_programs
from livesearch_pipeline.core.models import GoldAnswer, Prediction, Question, ServedQuestion


class OracleError(RuntimeError):
    """The oracle cannot answer a served question (not in the pool, or not the pool's text)."""


@dataclass
class OracleAgent:
    pool: Sequence[Question]
    client: ToolClient
    as_of: dt.date
    executor_config: ExecutorConfig = field(default_factory=ExecutorConfig)
    name: str = "oracle"
    model: str | None = None
    stats: ExecutionStats | None = None
    _gold: dict[str, GoldAnswer] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._pool_by_qid = {q.qid: q for q in self.pool}

    async def prepare(self, questions: Sequence[ServedQuestion]) -> None:
        known = [self._pool_by_qid[q.qid] for q in questions if q.qid in self._pool_by_qid]
        answers, self.stats = await execute_programs(known, self.as_of, self.client, self.executor_config)
        self._gold = {a.qid: a for a in answers}

    async def answer(self, question: ServedQuestion) -> Prediction:
        pooled = self._pool_by_qid.get(question.qid)
        if pooled is None:
            raise OracleError(f"{question.qid} is served but not in the pool the oracle was given")
        if pooled.question != question.question:
            raise OracleError(f"{question.qid}: the served text differs from the pool's; "
                              "the served file was built from another pool")
        gold = self._gold.get(question.qid)
        if gold is None:
            raise OracleError(f"{question.qid}: prepare() did not run its program")
        trace: list[dict[str, object]] = [{
            "type": "oracle", "as_of": self.as_of.isoformat(), "status": gold.status,
            "observed_period": gold.observed_period,
            "args": {call: dict(args) for call, args in gold.args.items()},
        }]
        if gold.status != "ok":
            detail = f": {gold.error}" if gold.error else ""
            return Prediction(qid=question.qid, error=f"gold program ended {gold.status}{detail}", trace=trace)
        return Prediction(qid=question.qid, answer=gold.answer, trace=trace)
