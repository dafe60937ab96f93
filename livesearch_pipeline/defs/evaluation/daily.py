"""A day's loop as one asset selection, and the runs that materialise it in dependency order.

`livesearch run --date D` materialises `daily_loop_targets(D, D-1, agents)`: the served questions
and gold of D-1 and D, D's web, every given agent's run of D, D's leaderboard and stale-gold
audit, the Parquet store (`analytics_store`) of D-1 and D, and the public site of D (`public_site`): the partitions the schedule, the
automation sensor and the store's run-status sensor materialise for D (defs/evaluation/
automation.py, defs/ops/analytics.py), requested at once. A Dagster run has one partition key, so `plan_runs` splits the
selection into runs: the order comes from the asset graph (partition mappings included), and
assets sharing a partition key at the same depth share a run. Nothing about the order is
hand-written: a new dependency in the graph changes the plan.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Optional, Sequence

import dagster as dg

from livesearch_pipeline.defs.evaluation.assets import agent_runs, leaderboard, stale_gold_audit
from livesearch_pipeline.defs.evaluation.partitions import AGENT_DIMENSION, DATE_DIMENSION
from livesearch_pipeline.defs.refresh.assets import gold_answers, served_questions
from livesearch_pipeline.defs.web.assets import web_corpus


ANALYTICS_STORE = dg.AssetKey("analytics_store")
PUBLIC_SITE = dg.AssetKey("public_site")
# (asset key, partition key): compares equal to Dagster's own asset-partition pairs.
AssetPartition = tuple[dg.AssetKey, Optional[str]]


@dataclass(frozen=True)
class PlannedRun:
    partition_key: str | None
    asset_keys: tuple[dg.AssetKey, ...]

    @property
    def asset_names(self) -> tuple[str, ...]:
        return tuple(k.to_user_string() for k in self.asset_keys)


def daily_loop_targets(day: dt.date, previous: dt.date, agents: Sequence[str]) -> list[AssetPartition]:
    """The asset partitions of D's loop: D-1's gold is there because the stale baseline and the
    stale-gold audit of D read it (the D-1 dependency of `stale_gold_audit`)."""
    d = day.isoformat()
    targets = [(key, p.isoformat()) for p in (previous, day) for key in (served_questions, gold_answers)]
    targets.append((web_corpus.key, d))
    targets += [(agent_runs.key, dg.MultiPartitionKey({DATE_DIMENSION: d, AGENT_DIMENSION: a}))
                for a in agents]
    targets += [(leaderboard.key, d), (stale_gold_audit.key, d)]
    # The Parquet store of both frozen days (defs/ops/analytics.py; referenced by key, as defs/ops
    # depends on this package): D's after its agent runs, whose verdicts it holds.
    targets += [(ANALYTICS_STORE, p.isoformat()) for p in (previous, day)]
    # The public site of D (defs/site/assets.py, by key for the same reason), after D's board and audit.
    targets.append((PUBLIC_SITE, d))
    return targets


def plan_runs(graph, targets: Sequence[AssetPartition], instance: dg.DagsterInstance,
              effective_dt: Optional[dt.datetime] = None) -> list[PlannedRun]:
    """Runs that materialise `targets`, upstream first, as few as the partition keys allow.

    A target's depth is the longest chain of planned upstream partitions (per the graph's
    partition mappings) that must finish in an EARLIER run; parents with the same partition key
    and partitions definition join the child's run. Runs are ordered by depth, then key. The
    instance holds the dynamic (agent) partitions; `effective_dt` (default now) is the time the
    daily partitions are read at.
    """
    planned = set(targets)
    if len(planned) != len(targets):
        raise ValueError("plan_runs: duplicate asset partitions in the targets")
    order = {key: i for i, key in enumerate(graph.toposorted_asset_keys)}
    unknown = sorted(t[0].to_user_string() for t in planned if t[0] not in order)
    if unknown:
        raise ValueError(f"plan_runs: assets not in the graph: {unknown}")

    def group(target: AssetPartition) -> tuple:
        return id(graph.get(target[0]).partitions_def), str(target[1])

    depth: dict[AssetPartition, int] = {}
    with dg.partition_loading_context(effective_dt=effective_dt, dynamic_partitions_store=instance):
        for target in sorted(planned, key=lambda t: (order[t[0]], str(t[1]))):
            parents = graph.get_parents_partitions(target[0], target[1]).parent_partitions
            depth[target] = max((depth[p] + (group(p) != group(target)) for p in parents if p in planned),
                                default=0)
    runs: dict[tuple, list[AssetPartition]] = {}
    for target, level in depth.items():
        runs.setdefault((level, str(target[1]), group(target)[0]), []).append(target)
    plan = []
    for (_, _, _), members in sorted(runs.items(), key=lambda item: (item[0][0], item[0][1])):
        keys = tuple(sorted((m[0] for m in members), key=lambda k: order[k]))
        plan.append(PlannedRun(partition_key=members[0][1], asset_keys=keys))
    return plan
