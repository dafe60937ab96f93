"""The daily refresh's pure logic: the plan of one partition's refresh, its shards, the
assembly of the shards' answers and the manifest's point-in-time fields. No Dagster here: the
thin assets in `defs/refresh/` run it as a graph of ops."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

from livesearch_pipeline.core.benchmark_day import partition_cutoff
from livesearch_pipeline.core.executor import ExecutionStats
from livesearch_pipeline.core.models import GoldAnswer, ServedQuestion


@dataclass(frozen=True)
class RefreshPlan:
    """What one partition's refresh executes: fixed once, before any shard starts."""

    day: dt.date
    pool_version: str
    pool_sha256: str  # of the questions.jsonl every shard executes
    qids: tuple[str, ...]  # the served qids, sorted
    shard_count: int
    max_withdrawn_share: float
    planned_at: float  # time.time() when planning finished: start of the fan-out's wall clock


@dataclass(frozen=True)
class GoldShard:
    """A shard names its programs by qid: steps re-read the pool (cheap, cached per process)
    instead of shipping every program through the IO manager."""

    day: dt.date
    index: int
    pool_version: str
    qids: tuple[str, ...]


@dataclass(frozen=True)
class ShardResult:
    index: int
    answers: tuple[GoldAnswer, ...]
    data_service: str
    stats: ExecutionStats
    # When the shard queried a provider without a point-in-time clock (None for one with a clock).
    retrieved_at: Optional[dt.datetime] = None

    # Shard results cross processes through the IO manager as pickles. Unpickling a day's pydantic
    # answers takes ~0.9 s; their JSON lines parse in a tenth of that, with the same validation.
    def __getstate__(self) -> dict:
        return {"index": self.index, "answers": [a.model_dump_json() for a in self.answers],
                "data_service": self.data_service, "stats": self.stats, "retrieved_at": self.retrieved_at}

    def __setstate__(self, state: dict) -> None:
        answers = tuple(GoldAnswer.model_validate_json(line) for line in state["answers"])
        for name, value in {**state, "answers": answers}.items():
            object.__setattr__(self, name, value)


def split_into_shards(questions: Sequence[ServedQuestion], shards: int) -> list[tuple[ServedQuestion, ...]]:
    """Contiguous slices of the questions ordered by (entity, qid), sizes differing by at most one.

    Ordering by entity keeps an entity's programs in one shard (at most `shards - 1` entities
    straddle a boundary), so the executor's per-shard de-duplication of identical tool calls
    loses almost nothing. Never more shards than questions, so no shard is empty; the split
    depends only on the questions and `shards`, so a re-run of D re-creates the same shards.
    """
    if shards < 1:
        raise ValueError(f"shards must be >= 1, got {shards}")
    ordered = sorted(questions, key=lambda q: (q.entity, q.qid))
    count = min(shards, len(ordered))
    return [tuple(ordered[i * len(ordered) // count:(i + 1) * len(ordered) // count]) for i in range(count)]


def assemble_answers(plan: RefreshPlan, results: Sequence[ShardResult]) -> tuple[list[GoldAnswer], str]:
    """Every shard's answers in qid order, and the one data-service identity they share.

    Fails loudly when a shard is missing or repeated, when an answer is missing, repeated or
    was not planned, or when shards talked to different data services.
    """
    indices = sorted(r.index for r in results)
    if indices != list(range(plan.shard_count)):
        raise ValueError(f"gold {plan.day}: expected results of shards 0..{plan.shard_count - 1}, got {indices}")
    identities = sorted({r.data_service for r in results})
    if len(identities) != 1:
        raise ValueError(f"gold {plan.day}: shards ran against different data services: {', '.join(identities)}")
    answers = sorted((a for r in results for a in r.answers), key=lambda a: a.qid)
    produced = Counter(a.qid for a in answers)
    planned = set(plan.qids)
    repeated = sorted(q for q, n in produced.items() if n > 1)
    missing = sorted(planned - produced.keys())
    unplanned = sorted(produced.keys() - planned)
    if repeated or missing or unplanned:
        raise ValueError(f"gold {plan.day}: shard answers do not match the plan: repeated {repeated[:5]}, "
                         f"missing {missing[:5]}, unplanned {unplanned[:5]}")
    return answers, identities[0]


def combined_stats(results: Sequence[ShardResult]) -> ExecutionStats:
    """Sum of the shards' stats; `wall_time_s` is the slowest shard's (they run side by side)."""
    return ExecutionStats(
        programs=sum(r.stats.programs for r in results),
        tool_calls_requested=sum(r.stats.tool_calls_requested for r in results),
        unique_calls=sum(r.stats.unique_calls for r in results),
        failed_calls=sum(r.stats.failed_calls for r in results),
        retries=sum(r.stats.retries for r in results),
        tool_time_s=sum(r.stats.tool_time_s for r in results),
        wall_time_s=max((r.stats.wall_time_s for r in results), default=0.0),
    )


def point_in_time_fields(day: dt.date, results: Sequence[ShardResult]) -> dict:
    """The manifest's point-in-time statement: D's cut-off, or the vintage of a provider without a clock."""
    retrieved = [r.retrieved_at for r in results if r.retrieved_at is not None]
    if not retrieved:
        return {"cutoff": partition_cutoff(day)}
    if len(retrieved) != len(results):
        raise ValueError(f"gold {day}: some shards ran as of D's cut-off and others without a clock")
    vintage = max(retrieved)  # the latest retrieval bounds what the snapshot may contain
    return {"vintage": vintage, "late_backfill": vintage > partition_cutoff(day)}
