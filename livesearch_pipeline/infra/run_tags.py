"""The run-tag policy of the instance: every run carries the `livesearch/kind` tag its limits key on.

The instance's run queue limits runs by tag (`deploy/dagster.yaml`: at most 4 `livesearch/kind:
refresh`, 1 `construction`, 4 `evaluation`). Jobs, schedules and the automation sensor set the
tag themselves, but a run Dagster builds on its own has only what the launcher gave it: a
one-partition *Materialize* from an asset page, a backfill launched from an asset page, a run
selecting checks alone all run as the implicit `__ASSET_JOB` without it, so those limits never
applied to them. `TaggingRunCoordinator` (named in `dagster.yaml` and `deploy/dagster.yaml`) is the
queued run coordinator plus one rule applied at submission, however the run was launched: a run
without the tag gets the kind of the asset groups it selects (`kinds_by_group`, overridable in the
instance config). The command line executes in-process (no queue) and tags its runs with the same
rule (`run_kind`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional

import dagster as dg
from dagster._config import Field, Map
from dagster._core.run_coordinator import QueuedRunCoordinator, SubmitRunContext

KIND_TAG = "livesearch/kind"
# The asset groups as the UI shows them, and the kind of run that materialises each.
DEFAULT_KINDS_BY_GROUP: Mapping[str, str] = {
    "construction": "construction",
    "daily_refresh": "refresh",
    "evaluation": "evaluation",
    "web": "web",
    "operations": "analytics",
    "publication": "publication",
    # The data service's observation (its Observe button): no limit applies to it in deploy/dagster.yaml.
    "data_service": "observation",
}
# A run over several groups takes the first of its kinds in this order: the scarcest slot first.
KIND_PRIORITY = ("construction", "refresh", "evaluation", "web", "analytics", "publication", "observation")


def run_kind(groups: Iterable[Optional[str]], kinds_by_group: Mapping[str, str] = DEFAULT_KINDS_BY_GROUP) -> Optional[str]:
    """The `livesearch/kind` of a run that selects assets of `groups`; None when none is known."""
    kinds = {kinds_by_group[g] for g in groups if g in kinds_by_group}
    ranked = [k for k in KIND_PRIORITY if k in kinds] + sorted(kinds - set(KIND_PRIORITY))
    return ranked[0] if ranked else None


def _selected_groups(run: dg.DagsterRun, workspace: Any) -> set[Optional[str]]:
    """The groups of the assets (and of the assets of the checks) a run selects, read from the
    code location the run was launched from; empty for a run without a selection."""
    keys = set(run.asset_selection or ()) | {check.asset_key for check in (run.asset_check_selection or ())}
    origin = run.remote_job_origin
    if not keys or origin is None or workspace is None:
        return set()
    repository_origin = origin.repository_origin
    location = workspace.get_code_location(repository_origin.code_location_origin.location_name)
    repository = location.get_repository(repository_origin.repository_name)
    return {node.group_name for node in repository.get_asset_node_snaps() if node.asset_key in keys}


class TaggingRunCoordinator(QueuedRunCoordinator):
    """`QueuedRunCoordinator` that tags each submitted run with its `livesearch/kind` first."""

    def __init__(self, kinds_by_group: Optional[Mapping[str, str]] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kinds_by_group = dict(kinds_by_group or DEFAULT_KINDS_BY_GROUP)

    @classmethod
    def config_type(cls) -> Any:
        return {**QueuedRunCoordinator.config_type(),
                "kinds_by_group": Field(Map(str, str), is_required=False,
                                        description="asset group -> livesearch/kind of the runs that select it")}

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Mapping[str, Any]) -> "TaggingRunCoordinator":
        return cls(
            inst_data=inst_data,
            kinds_by_group=config_value.get("kinds_by_group"),
            max_concurrent_runs=config_value.get("max_concurrent_runs"),
            tag_concurrency_limits=config_value.get("tag_concurrency_limits"),
            dequeue_interval_seconds=config_value.get("dequeue_interval_seconds"),
            dequeue_use_threads=config_value.get("dequeue_use_threads"),
            dequeue_num_workers=config_value.get("dequeue_num_workers"),
            max_user_code_failure_retries=config_value.get("max_user_code_failure_retries"),
            user_code_failure_retry_delay=config_value.get("user_code_failure_retry_delay"),
            block_op_concurrency_limited_runs=config_value.get("block_op_concurrency_limited_runs"),
        )

    def submit_run(self, context: SubmitRunContext) -> dg.DagsterRun:
        run = context.dagster_run
        if KIND_TAG not in run.tags:
            kind = run_kind(_selected_groups(run, context.workspace), self._kinds_by_group)
            if kind is not None:
                self._instance.add_run_tags(run.run_id, {KIND_TAG: kind})
                run = self._instance.get_run_by_id(run.run_id) or run
                context = SubmitRunContext(run, context.workspace)
        return super().submit_run(context)
