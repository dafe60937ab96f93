"""deploy/dagster.yaml for real: a three-partition backfill whose runs and events land in PostgreSQL.

The server comes from LIVESEARCH_TEST_POSTGRES_URL (exported by .ci/run) or, when that is unset
and PostgreSQL's binaries are installed, from a throwaway cluster deploy/pg_throwaway.sh starts for
this module. Each test gets its own fresh database on that server, dropped afterwards.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Iterator, Mapping
from urllib.parse import unquote, urlsplit, urlunsplit

import pytest
import yaml

from livesearch_pipeline_tests.defs.fixtures import write_small_pool

REPO = Path(__file__).resolve().parents[3]
DEPLOY_CONFIG = REPO / "deploy" / "dagster.yaml"
PG_THROWAWAY = REPO / "deploy" / "pg_throwaway.sh"
SERVER_URL_ENV = "LIVESEARCH_TEST_POSTGRES_URL"
# Set by .ci/run when it tried and failed to install PostgreSQL, so the skip names the cause.
UNAVAILABLE_ENV = "LIVESEARCH_POSTGRES_UNAVAILABLE"
CONNECTION_FIELDS_ENV = {"hostname": "LIVESEARCH_PG_HOST", "port": "LIVESEARCH_PG_PORT",
                         "username": "LIVESEARCH_PG_USER", "password": "LIVESEARCH_PG_PASSWORD",
                         "db_name": "LIVESEARCH_PG_DB"}

CLOCK = dt.date(2025, 6, 13)
BACKFILL = [dt.date(2025, 6, 11), dt.date(2025, 6, 12), dt.date(2025, 6, 13)]


def _parse_assignments(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs}


@contextlib.contextmanager
def postgres_server(environ: Mapping[str, str]) -> Iterator[str]:
    """The server URL from `environ`, else a throwaway cluster for the block; pytest.skip saying why
    when neither is possible."""
    configured = environ.get(SERVER_URL_ENV)
    if configured:
        yield configured
        return
    script_env = dict(environ)
    bindir = subprocess.run(["bash", str(PG_THROWAWAY), "bindir"], capture_output=True, text=True, timeout=30, env=script_env)
    if bindir.returncode != 0:
        cause = environ.get(UNAVAILABLE_ENV) or bindir.stderr.strip()
        pytest.skip(f"PostgreSQL unavailable: {SERVER_URL_ENV} is unset and {cause}")
    started = subprocess.run(["bash", str(PG_THROWAWAY), "start"], capture_output=True, text=True, timeout=180, env=script_env)
    if started.returncode != 0:
        pytest.skip(f"PostgreSQL binaries found in {bindir.stdout.strip()} but a throwaway cluster did not "
                    f"start: {started.stderr.strip()[-2000:]}")
    values = _parse_assignments(started.stdout)
    try:
        yield values[SERVER_URL_ENV]
    finally:
        subprocess.run(["bash", str(PG_THROWAWAY), "stop", values["LIVESEARCH_PG_CLUSTER_DIR"]], check=True, timeout=120,
                       env=script_env)


@pytest.fixture(scope="module")
def postgres_server_url() -> Iterator[str]:
    with postgres_server(os.environ) as url:
        yield url


def _with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


@pytest.fixture
def postgres_database_url(postgres_server_url: str) -> Iterator[str]:
    """A database of its own, so reruns against a long-lived server never see earlier runs."""
    import psycopg2

    database = f"livesearch_test_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(postgres_server_url)
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{database}"')
        yield _with_database(postgres_server_url, database)
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE "{database}" WITH (FORCE)')
    finally:
        admin.close()


def _instance_env(database_url: str) -> dict[str, str]:
    """The variables deploy/dagster.yaml reads, from a libpq URL postgresql://user[:password]@host:port/db."""
    parts = urlsplit(database_url)
    if parts.scheme not in ("postgresql", "postgres") or not (parts.hostname and parts.port and parts.username):
        raise ValueError(f"{SERVER_URL_ENV} must look like postgresql://user[:password]@host:port/db, got {database_url!r}")
    values = {"hostname": parts.hostname, "port": str(parts.port), "username": unquote(parts.username),
              "password": unquote(parts.password or ""), "db_name": parts.path.lstrip("/")}
    return {CONNECTION_FIELDS_ENV[field]: value for field, value in values.items()}


def _refresh_env(home: Path, data: Path, database_url: str) -> dict[str, str]:
    # Nothing LiveSearch-specific leaks in from the caller's shell (a real data service, a data dir).
    env = {key: value for key, value in os.environ.items() if not key.startswith("LIVESEARCH_")}
    env.update({
        "DAGSTER_HOME": str(home),
        "LIVESEARCH_DATA_DIR": str(data),
        "LIVESEARCH_CLOCK": CLOCK.isoformat(),
        **_instance_env(database_url),
        "LITELLM_OFFLINE_MODE": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    })
    return env


def test_deploy_config_reads_its_secret_from_the_environment_and_queues_runs(tmp_path: Path, monkeypatch) -> None:
    from dagster._core.instance.config import dagster_instance_config

    raw = yaml.safe_load(DEPLOY_CONFIG.read_text())
    connection = raw["storage"]["postgres"]["postgres_db"]
    assert {field: connection[field] for field in CONNECTION_FIELDS_ENV} == {
        field: {"env": name} for field, name in CONNECTION_FIELDS_ENV.items()}
    assert connection["scheme"] == "postgresql+psycopg2"  # the driver that is installed
    shutil.copyfile(DEPLOY_CONFIG, tmp_path / "dagster.yaml")
    for name, value in _instance_env("postgresql://dagster:s%40cret@127.0.0.1:5432/dagster").items():
        monkeypatch.setenv(name, value)
    config, _ = dagster_instance_config(str(tmp_path))  # validates against Dagster's instance schema
    assert config["run_coordinator"]["class"] == "TaggingRunCoordinator"  # the queue plus the run-tag policy
    limits = {(limit["key"], limit.get("value")): limit["limit"]
              for limit in config["run_coordinator"]["config"]["tag_concurrency_limits"]}
    assert limits[("livesearch/kind", "refresh")] < config["run_coordinator"]["config"]["max_concurrent_runs"]
    assert limits[("livesearch/kind", "construction")] == 1
    assert limits[("dagster/backfill", None)] < config["run_coordinator"]["config"]["max_concurrent_runs"]
    assert config["telemetry"] == {"enabled": False}


def test_deploy_config_builds_the_psycopg2_url_from_the_environment(monkeypatch) -> None:
    from dagster._config import process_config
    from dagster._core.storage.config import pg_config
    from dagster_postgres.utils import pg_url_from_config

    for name, value in _instance_env("postgresql://dagster:s%40c%20ret@db.internal:5433/livesearch").items():
        monkeypatch.setenv(name, value)
    assert os.environ["LIVESEARCH_PG_PASSWORD"] == "s@c ret"
    resolved = process_config(pg_config(), yaml.safe_load(DEPLOY_CONFIG.read_text())["storage"]["postgres"])
    assert resolved.success, resolved.errors
    assert pg_url_from_config(resolved.value) == "postgresql+psycopg2://dagster:s%40c%20ret@db.internal:5433/livesearch"


def test_missing_postgres_skips_naming_the_cause() -> None:
    environ = {key: value for key, value in os.environ.items() if key not in (SERVER_URL_ENV, UNAVAILABLE_ENV)}
    environ["LIVESEARCH_PG_BINDIR"] = "/nonexistent/postgresql/bin"
    with pytest.raises(pytest.skip.Exception, match="LIVESEARCH_PG_BINDIR=/nonexistent/postgresql/bin holds no"):
        with postgres_server(environ):
            pytest.fail("a server was provided although no binaries exist")
    environ[UNAVAILABLE_ENV] = "installing it failed: E: Unable to locate package postgresql"
    with pytest.raises(pytest.skip.Exception, match="Unable to locate package postgresql"):
        with postgres_server(environ):
            pytest.fail("a server was provided although no binaries exist")


@pytest.mark.slow
def test_three_partition_backfill_is_stored_in_postgres(tmp_path: Path, postgres_database_url: str,
                                                        monkeypatch) -> None:
    import dagster as dg
    import psycopg2
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

    from livesearch_pipeline.core.snapshot import SnapshotStore

    data = tmp_path / "data"
    data.mkdir()
    write_small_pool(data, CLOCK)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(DEPLOY_CONFIG, home / "dagster.yaml")

    refresh = subprocess.run(
        [str(Path(sys.executable).parent / "livesearch"), "refresh",
         "--start", BACKFILL[0].isoformat(), "--end", BACKFILL[-1].isoformat()],
        env=_refresh_env(home, data, postgres_database_url), cwd=tmp_path,
        capture_output=True, text=True, timeout=600,
    )
    assert refresh.returncode == 0, f"livesearch refresh failed:\n{refresh.stdout}\n{refresh.stderr[-4000:]}"
    for day in BACKFILL:
        assert f"{day}  " in refresh.stdout and "written" in refresh.stdout

    dates = {day.isoformat() for day in BACKFILL}
    gold = SnapshotStore(data / "gold")
    for name, value in _instance_env(postgres_database_url).items():
        monkeypatch.setenv(name, value)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        runs = instance.get_runs(filters=dg.RunsFilter(job_name="daily_refresh"))
        assert [run.status for run in runs] == [dg.DagsterRunStatus.SUCCESS] * 3
        assert {run.tags["dagster/partition"] for run in runs} == dates
        assert {run.tags["livesearch/kind"] for run in runs} == {"refresh"}

        records = instance.fetch_materializations(dg.AssetKey("gold_answers"), limit=100).records
        assert sorted(record.partition_key for record in records) == sorted(dates)
        assert {record.run_id for record in records} == {run.run_id for run in runs}
        for record in records:
            stored_sha = record.asset_materialization.metadata["sha256"].value
            assert stored_sha == gold.verify(dt.date.fromisoformat(record.partition_key)).sha256

    # The same facts straight from PostgreSQL's tables, and nothing fell back to SQLite.
    with psycopg2.connect(postgres_database_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM runs WHERE pipeline_name = 'daily_refresh' AND status = 'SUCCESS'")
        assert cursor.fetchone()[0] == 3
        cursor.execute("SELECT partition FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION' "
                       "AND asset_key = %s", ('["gold_answers"]',))
        assert sorted(row[0] for row in cursor.fetchall()) == sorted(dates)
    connection.close()
    assert not list(home.rglob("*.db")), "the instance wrote SQLite files next to the Postgres config"
