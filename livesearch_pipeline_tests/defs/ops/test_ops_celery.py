"""One day's refresh on Celery: the gold shards run on two Celery worker processes and freeze the
same snapshot bytes as the in-process run.

The broker is Redis: LIVESEARCH_TEST_REDIS_URL when set (.ci/run starts a throwaway server),
else a throwaway server this module starts with deploy/redis_throwaway.sh. When neither is
possible the test skips naming the reason (LIVESEARCH_REDIS_UNAVAILABLE, set by .ci/run when
installing or starting Redis failed); it never passes without having run.

The workers are started the way deploy/celery/README.md documents, with
`dagster-celery worker start -A dagster_celery.app -y deploy/celery/celery.yaml`, one process
each (`--concurrency 1`), sharing DAGSTER_HOME (the instance and the IO manager's files) and the
data root with the process that launches the run, as workers on other machines share them
through PostgreSQL and a network filesystem.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterator

import dagster as dg
import pytest

from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.dagster_processes import start_process, stop_processes
from livesearch_pipeline_tests.defs.refresh.test_refresh_assets import (
    DAY, SERVICE_CLOCK, refresh_definitions, run_refresh, write_trimmed_pool,
)

REPO = Path(__file__).resolve().parents[3]
REDIS_THROWAWAY = REPO / "deploy" / "redis_throwaway.sh"
CELERY_YAML = REPO / "deploy" / "celery" / "celery.yaml"
REDIS_URL_ENV, UNAVAILABLE_ENV = "LIVESEARCH_TEST_REDIS_URL", "LIVESEARCH_REDIS_UNAVAILABLE"
WORKERS = ("shard-worker-1", "shard-worker-2")
RUN_TIMEOUT_S = 300

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    configured = os.environ.get(REDIS_URL_ENV)
    if configured:
        yield configured
        return
    if shutil.which("redis-server") is None:
        cause = os.environ.get(UNAVAILABLE_ENV) or "redis-server is not installed (apt-get install redis-server)"
        pytest.skip(f"Redis unavailable: {REDIS_URL_ENV} is unset and {cause}")
    started = subprocess.run(["bash", str(REDIS_THROWAWAY), "start"], capture_output=True, text=True, timeout=60)
    if started.returncode != 0:
        pytest.skip(f"Redis unavailable: a throwaway server did not start: {started.stderr.strip()[-2000:]}")
    values = dict(line.split("=", 1) for line in started.stdout.splitlines() if "=" in line)
    try:
        yield values[REDIS_URL_ENV]
    finally:
        subprocess.run(["bash", str(REDIS_THROWAWAY), "stop", values["LIVESEARCH_REDIS_DIR"]], check=True, timeout=60)


def celery_env(home: Path, data: Path, redis_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIVESEARCH_", "DAGSTER_"))}
    env.update({
        "DAGSTER_HOME": str(home), "LIVESEARCH_DATA_DIR": str(data), "LIVESEARCH_CLOCK": SERVICE_CLOCK,
        # Broker and results on two databases of one server, as deploy/celery/README.md shows.
        "LIVESEARCH_CELERY_BROKER": f"{redis_url}/0", "LIVESEARCH_CELERY_BACKEND": f"{redis_url}/1",
        "LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    })
    return env


def wait_until_ready(workers, timeout_s: float = 120.0) -> None:
    """Both workers listening before the run starts, so each can take a shard (prefetch 1, acks late:
    a busy worker reserves nothing more)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for worker in workers:
            worker.ensure_running()
        if all(" ready." in worker.log_path.read_text(errors="replace") for worker in workers):
            return
        time.sleep(0.5)
    raise AssertionError("Celery workers not ready in time\n" + "\n".join(w.tail(30) for w in workers))


LAUNCH = textwrap.dedent("""
    import sys
    import dagster as dg
    from dagster._core.definitions.reconstruct import ReconstructableRepository

    job = ReconstructableRepository.for_module("livesearch_pipeline.definitions", "defs").get_reconstructable_job(
        "daily_refresh_celery")
    with dg.DagsterInstance.get() as instance:
        result = dg.execute_job(job, instance=instance, tags={"dagster/partition": sys.argv[1]}, raise_on_error=False)
        print(f"RUN {result.run_id} {result.success}")
""")


def test_a_refresh_on_two_celery_workers_freezes_the_in_process_bytes(tmp_path: Path):
    # The reference: the same pool refreshed in process.
    local_root, celery_root = tmp_path / "local", tmp_path / "celery"
    write_trimmed_pool(local_root)
    shutil.copytree(local_root / "pool", celery_root / "pool")
    shutil.copytree(local_root / "construction", celery_root / "construction")
    local = run_refresh(refresh_definitions(local_root), DAY, dg.DagsterInstance.ephemeral())
    assert local.success
    reference = SnapshotStore(DataPaths(local_root).gold).path_for(DAY).read_bytes()

    home, logs = tmp_path / "dagster_home", tmp_path / "logs"
    home.mkdir()
    logs.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    # Create the instance's SQLite storage once, before two workers race to create it.
    dg.DagsterInstance.from_config(str(home)).dispose()
    with redis_server() as redis_url:
        env = celery_env(home, celery_root, redis_url)
        workers = [start_process(name, [sys.executable, "-m", "dagster_celery.cli", "worker", "start",
                                        "-A", "dagster_celery.app", "-y", str(CELERY_YAML), "-q", "dagster",
                                        "-n", name, "--", "--concurrency", "1"],
                                 cwd=REPO, env=env, log_dir=logs) for name in WORKERS]
        try:
            wait_until_ready(workers)
            launched = subprocess.run([sys.executable, "-c", LAUNCH, DAY.isoformat()], cwd=REPO, env=env,
                                      capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
            for worker in workers:
                worker.ensure_running()
        finally:
            survivors = stop_processes(workers)
        worker_logs = "\n".join(w.tail(30) for w in workers)
        assert launched.returncode == 0, f"{launched.stderr[-4000:]}\n{worker_logs}"
        assert not any(survivors.values()), f"worker processes survived: {survivors}"

    run_id, success = launched.stdout.split("RUN ", 1)[1].split()
    assert success == "True", f"{launched.stdout[-4000:]}\n{worker_logs}"
    snapshot = SnapshotStore(DataPaths(celery_root).gold).path_for(DAY)
    assert snapshot.read_bytes() == reference

    # Every step ran in a Celery worker, and the two shards on two different workers.
    with dg.DagsterInstance.from_config(str(home)) as instance:
        hosts: dict[str, str] = {}
        for record in instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT).records:
            event = record.event_log_entry.dagster_event
            if event and event.step_key and "Celery worker" in event.event_specific_data.metadata:
                hosts[event.step_key] = event.event_specific_data.metadata["Celery worker"].value
    shard_steps = {step: host for step, host in hosts.items() if "execute_gold_shard" in step}
    assert len(shard_steps) == 2, hosts
    assert {host.split("@")[0] for host in shard_steps.values()} == set(WORKERS), shard_steps
    assert any("plan_gold_shards" in step for step in hosts) and any("freeze_gold_snapshot" in step for step in hosts)
