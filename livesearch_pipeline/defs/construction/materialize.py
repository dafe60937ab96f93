"""The one way to build a pool: materialise the construction assets.

The CLI (`livesearch build-pool`, `livesearch run`), the tests and the benchmarks all call
`materialize_pool`, which executes the project's `build_pool` job (the construction assets) in
process: the same job, assets, resources and config schema as the UI, so a pool built anywhere
is the pool the asset graph builds, and the run is listed under `build_pool` in the UI. Options
become run config (`construction_run_config`), never a second code path.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Optional, Sequence

import dagster as dg

from livesearch_pipeline.construction.pool import PoolPolicy
from livesearch_pipeline.core.pool import read_manifest
from livesearch_pipeline.core.models import PoolManifest
from livesearch_pipeline.defs.construction.assets import (
    candidate_dynamics,
    candidates,
    coverage,
    question_pool,
    tool_catalog,
    tool_probe,
    verbalized_questions,
)
from livesearch_pipeline.defs.construction.jobs import build_pool_job
from livesearch_pipeline.defs import resources as resources_module
from livesearch_pipeline.defs.resources import StorageResource

BUILD_POOL_JOB = build_pool_job.name
# In graph order (the order the steps run in).
CONSTRUCTION_ASSETS = (tool_catalog, tool_probe, coverage, candidates, candidate_dynamics, verbalized_questions,
                       question_pool)


class PoolBuildError(RuntimeError):
    """A construction step failed; the message names the step and its cause."""


@dataclass(frozen=True)
class PoolBuild:
    manifest: PoolManifest
    run_id: str
    # Wall seconds of each construction asset's step, keyed by asset name, plus "total".
    step_seconds: dict[str, float]
    # Each asset's materialisation metadata (raw values), keyed by asset name.
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)


def construction_run_config(*, as_of: Optional[dt.date] = None, tools: Sequence[str] = (),
                            sample_size: Optional[int] = None, seed: Optional[int] = None,
                            replay_days: Optional[int] = None, policy: Optional[PoolPolicy] = None) -> dict:
    """Run config of the construction assets; unset options keep the assets' defaults."""
    ops: dict[str, dict] = {}
    sampling: dict[str, Any] = {}
    if as_of is not None:
        sampling["as_of"] = as_of.isoformat()
    if tools:
        sampling["tools"] = sorted(set(tools))
    if sample_size is not None:
        sampling["sample_size"] = sample_size
    if seed is not None:
        sampling["seed"] = seed
    if sampling:
        ops["tool_probe"] = {"config": dict(sampling)}
        ops["candidates"] = {"config": dict(sampling)}
    if replay_days is not None:
        ops["candidate_dynamics"] = {"config": {"replay_days": replay_days}}
    if policy is not None:
        ops["verbalized_questions"] = {"config": asdict(policy)}
        ops["question_pool"] = {"config": asdict(policy)}
    return {"ops": ops} if ops else {}


def step_failures(result: dg.ExecuteInProcessResult) -> list[str]:
    """`step: cause` for every failed step of a run (a `dg.Failure`'s description, else the error)."""
    causes = []
    for event in result.all_events:
        if event.event_type_value != "STEP_FAILURE":
            continue
        data = event.event_specific_data
        cause = getattr(getattr(data, "user_failure_data", None), "description", None)
        if not cause:
            error = getattr(data, "error", None)
            # The step error wraps the exception the asset raised: name that one.
            while error is not None and error.cause is not None:
                error = error.cause
            cause = error.message.strip() if error is not None else (event.message or "unknown failure")
        causes.append(f"{event.step_key}: {cause}")
    if not causes and not result.success:
        causes = [e.message or "run failed" for e in result.all_events if e.is_failure][-1:] or ["run failed"]
    return causes


def materialize_pool(*, as_of: Optional[dt.date] = None, tools: Sequence[str] = (),
                     sample_size: Optional[int] = None, seed: Optional[int] = None,
                     replay_days: Optional[int] = None, policy: Optional[PoolPolicy] = None,
                     resources: Optional[Mapping[str, Any]] = None,
                     instance: Optional[dg.DagsterInstance] = None,
                     tags: Optional[Mapping[str, str]] = None,
                     run_config: Optional[Mapping[str, Any]] = None,
                     run_id: Optional[str] = None) -> PoolBuild:
    """Materialise the construction assets (catalog … pool) in one run and return the pool built.

    `resources` overrides the project's (`data_service`, `storage`); `instance` defaults to an
    ephemeral one (the CLI passes the instance under DAGSTER_HOME, so the run shows in the UI).
    `run_config` adds run config beside the options' (the CLI's console loggers), `run_id` names the
    run (the CLI watches it). Raises PoolBuildError naming the failed step and its cause.
    """
    # The project's job and resources, assembled from the defs modules that declare them (the code
    # location `definitions` sits above this layer and is not imported here). The resources module
    # is imported as a module: a module-level name bound to its `@dg.definitions` function would be
    # loaded a second time by the defs folder and clash with the first.
    defs = dg.Definitions(assets=list(CONSTRUCTION_ASSETS), jobs=[build_pool_job],
                          resources=resources_module.resources().resources)
    job = defs.resolve_job_def(BUILD_POOL_JOB)
    if job.asset_layer.executable_asset_keys != {a.key for a in CONSTRUCTION_ASSETS}:
        raise RuntimeError(f"job {BUILD_POOL_JOB} does not select exactly the construction assets")
    options = construction_run_config(as_of=as_of, tools=tools, sample_size=sample_size, seed=seed,
                                      replay_days=replay_days, policy=policy)
    result = job.execute_in_process(
        run_config={**(run_config or {}), **options},
        run_id=run_id,
        resources=dict(resources) if resources else None,
        instance=instance if instance is not None else dg.DagsterInstance.ephemeral(),
        tags=dict(tags or {}),
        raise_on_error=False,
    )
    if not result.success:
        causes = step_failures(result)
        detail = "".join(f"\n  {c}" for c in causes[1:5])
        raise PoolBuildError(f"pool build failed (run {result.run_id}): {causes[0]}{detail}")
    seconds = {event.step_key: event.event_specific_data.duration_ms / 1000.0
               for event in result.all_events if event.event_type_value == "STEP_SUCCESS"}
    seconds["total"] = sum(seconds.values())
    metadata = {m.asset_key.to_user_string(): {k: v.value for k, v in m.metadata.items()}
                for m in (e.event_specific_data.materialization for e in result.get_asset_materialization_events())}
    storage = (resources or {}).get("storage") or defs.resources["storage"]
    if not isinstance(storage, StorageResource):
        raise TypeError(f"resource `storage` must be a StorageResource, got {type(storage).__name__}")
    return PoolBuild(manifest=read_manifest(storage.paths().pool), run_id=result.run_id, step_seconds=seconds,
                     metadata=metadata)
