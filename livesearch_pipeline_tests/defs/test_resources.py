"""Settings reach the pipeline through resources: nothing is read from the environment when the
definitions load; unset fields are read when a run uses the resource; one LLM resource, one cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from livesearch_pipeline.defs.resources import DataServiceResource, LLMResource, StorageResource
from livesearch_pipeline.settings import DataPaths

ROOT = Path(__file__).resolve().parents[2]
JUNK = "junk-4c1f-setting"
# Every variable the pipeline's resources read, set to junk: loading must not notice any of them.
JUNK_ENV = {name: JUNK for name in (
    "LIVESEARCH_DATA_SERVICE", "LIVESEARCH_DATA_SERVICE_URL", "LIVESEARCH_DATA_SERVICE_COMMAND",
    "LIVESEARCH_DATA_SERVICE_MANIFEST", "LIVESEARCH_DATA_SERVICE_TOKEN", "LIVESEARCH_CLOCK", "LIVESEARCH_DATA_DIR",
    "LIVESEARCH_LLM_MODEL", "LIVESEARCH_JUDGE_MODEL", "LIVESEARCH_LLM_API_BASE", "LIVESEARCH_LLM_API_KEY",
    "TUSHARE_TOKEN", "TUSHARE_CALLS_PER_MINUTE", "LIVESEARCH_CALENDAR_ENDS", "LIVESEARCH_ALERT_WEBHOOK_URL",
    "LIVESEARCH_ALERT_WEBHOOK_TOKEN")}

# Loads the definitions with os.environ replaced by a recorder of reads made by our own code (a
# read by Dagster or the standard library, e.g. platform copying the environment, is not ours),
# then prints what the UI would see of them: resources and their configured values, assets,
# checks, sensors, schedules, and the variables Dagster resolves at run launch (dg.EnvVar).
PROBE = r'''
import hashlib, json, os, sys
from dagster._core.remote_representation.external_data import RepositorySnap
from dagster._serdes import serialize_value

OURS = os.sep + "livesearch_pipeline" + os.sep
reads = []
recording_on = True

def caller():
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.endswith(("os.py", "_collections_abc.py", "field_utils.py")) or name.startswith("<frozen")):
            return name
        frame = frame.f_back
    return ""

class Recording(type(os.environ)):
    def __getitem__(self, key):
        if recording_on and OURS in caller():
            reads.append(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        if recording_on and OURS in caller():
            reads.append(key)
        return super().__contains__(key)

recording = Recording.__new__(Recording)
recording.__dict__.update(os.environ.__dict__)
os.environ = recording
from livesearch_pipeline.definitions import defs
recording_on = False

snap = RepositorySnap.from_def(defs.get_repository_def())
resources = {r.name: [r.resource_type, serialize_value(r.configured_values), serialize_value(r.config_field_snaps),
                      sorted(k.to_user_string() for k in r.asset_keys_using)] for r in snap.resources or ()}
parts = {name: serialize_value(getattr(snap, name))
         for name in ("schedules", "partition_sets", "sensors", "asset_nodes", "asset_check_nodes")}
print(json.dumps({"reads": sorted(set(reads)), "resources": resources,
                  "parts": {k: hashlib.sha256(v.encode()).hexdigest() for k, v in parts.items()},
                  "run_launch_variables": sorted(snap.utilized_env_vars or {}),
                  "text": json.dumps(resources) + "".join(parts.values())}))
'''


def _load_definitions(extra_env: dict[str, str], tmp_path: Path) -> dict:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
           **extra_env}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_definitions_read_no_environment_when_they_load(tmp_path: Path):
    bare = _load_definitions({}, tmp_path)
    junk = _load_definitions(JUNK_ENV, tmp_path)
    # Our code read nothing while loading, in either environment...
    assert bare["reads"] == [] and junk["reads"] == []
    # ...so what Dagster (and the UI) sees of the definitions does not depend on it.
    assert junk["resources"] == bare["resources"]
    assert junk["parts"] == bare["parts"]
    assert JUNK not in junk["text"]
    assert set(bare["resources"]) >= {"data_service", "storage", "llm", "alert_webhook"}
    # Nothing is a dg.EnvVar Dagster resolves at launch: since issue 23 the alert webhook names its
    # variables and reads them when it sends (unset: alerting is off, the sensors skip naming them).
    assert bare["run_launch_variables"] == []


# --------------------------------------------------------------------------- values resolved at run time


def _settings_seen(resources: dict) -> dict:
    """Materialise a probe asset with `resources`; what the resources resolved to inside the run."""
    seen: dict = {}

    @dg.asset
    def probe(data_service: DataServiceResource, storage: StorageResource, llm: LLMResource) -> None:
        settings = llm.settings()
        seen.update(kind=data_service.service_kind, clock=data_service.clock_date(), root=storage.paths().root,
                    model=settings.model, judge=settings.judge_model, api_base=settings.api_base,
                    api_key=settings.api_key, cache=llm.cache_path(storage.paths()),
                    verbalizer=llm.verbalizer(storage.paths()))

    result = dg.materialize([probe], resources=resources, instance=dg.DagsterInstance.ephemeral(),
                            raise_on_error=False)
    if not result.success:
        failure = next(e for e in result.all_events if e.is_failure)
        raise AssertionError(failure.event_specific_data.error.message)
    return seen


def _clear(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in JUNK_ENV:
        monkeypatch.delenv(name, raising=False)


def test_the_loaded_resources_follow_the_environment_of_each_run_without_a_reload(tmp_path, monkeypatch):
    from livesearch_pipeline.definitions import defs

    resources = {key: defs.resources[key] for key in ("data_service", "storage", "llm")}
    _clear(monkeypatch)
    monkeypatch.chdir(tmp_path)
    bare = _settings_seen(resources)
    assert bare == {"kind": "embedded", "clock": None, "root": (tmp_path / "data").resolve(), "model": None,
                    "judge": None, "api_base": None, "api_key": None,
                    "cache": (tmp_path / "data" / "cache" / "llm").resolve(), "verbalizer": None}

    root = tmp_path / "elsewhere"
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(root))
    monkeypatch.setenv("LIVESEARCH_CLOCK", "2026-11-24")
    monkeypatch.setenv("LIVESEARCH_LLM_MODEL", " openai/verbalizer-test ")
    monkeypatch.setenv("LIVESEARCH_JUDGE_MODEL", "anthropic/judge-test")
    monkeypatch.setenv("LIVESEARCH_LLM_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LIVESEARCH_LLM_API_KEY", "sk-from-the-environment")
    seen = _settings_seen(resources)  # the same resource objects: nothing was reloaded
    assert seen["clock"].isoformat() == "2026-11-24" and seen["root"] == root.resolve()
    assert (seen["model"], seen["judge"], seen["api_base"], seen["api_key"]) == (
        "openai/verbalizer-test", "anthropic/judge-test", "http://127.0.0.1:9/v1", "sk-from-the-environment")
    assert seen["cache"] == DataPaths(root).llm_cache == root.resolve() / "cache" / "llm"
    verbalizer = seen["verbalizer"]
    assert (verbalizer.model, verbalizer.cache_dir, verbalizer.api_key) == (
        "openai/verbalizer-test", root.resolve() / "cache" / "llm", "sk-from-the-environment")


def test_explicit_fields_win_over_the_environment(tmp_path, monkeypatch):
    _clear(monkeypatch)
    monkeypatch.setenv("LIVESEARCH_CLOCK", "2026-11-24")
    monkeypatch.setenv("LIVESEARCH_LLM_MODEL", "openai/from-env")
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(tmp_path / "env-root"))
    seen = _settings_seen({"data_service": DataServiceResource(clock="2026-11-20"),
                           "storage": StorageResource(root=str(tmp_path / "explicit")),
                           "llm": LLMResource(model="openai/explicit", cache_dir=str(tmp_path / "c"))})
    assert seen["clock"].isoformat() == "2026-11-20" and seen["root"] == (tmp_path / "explicit").resolve()
    assert seen["model"] == "openai/explicit" and seen["cache"] == (tmp_path / "c").resolve()
    # An explicit empty clock means "the real date" even when the environment sets one.
    assert DataServiceResource(clock="").clock_date() is None


def test_bad_settings_fail_the_run_naming_where_they_came_from(monkeypatch):
    _clear(monkeypatch)
    monkeypatch.setenv("LIVESEARCH_DATA_SERVICE", "ftp")
    with pytest.raises(ValueError, match=r"unknown data service kind 'ftp' \(\$LIVESEARCH_DATA_SERVICE\)"):
        DataServiceResource().service_kind
    with pytest.raises(ValueError, match=r"unknown data service kind 'ftp' \(DataServiceResource.kind\)"):
        DataServiceResource(kind="ftp").service_kind
    monkeypatch.setenv("LIVESEARCH_CLOCK", "24/11/2026")
    with pytest.raises(ValueError, match=r"\$LIVESEARCH_CLOCK is not a YYYY-MM-DD date: '24/11/2026'"):
        DataServiceResource().clock_date()
    monkeypatch.setenv("LIVESEARCH_DATA_SERVICE", "tushare")
    with pytest.raises(ValueError, match=r"kind 'tushare' needs a token: set \$TUSHARE_TOKEN"):
        _open(DataServiceResource())


def _open(resource: DataServiceResource) -> None:
    import anyio

    async def run():
        async with resource.open():
            pass

    anyio.run(run)


def test_secrets_stay_out_of_reprs():
    llm = LLMResource(model="openai/m", api_key="sk-never-shown-1234")
    service = DataServiceResource(kind="url", url="http://127.0.0.1:9/mcp", token="tok-never-shown-1234")
    assert "sk-never-shown-1234" not in repr(llm) and "sk-never-shown-1234" not in repr(llm.settings())
    assert "tok-never-shown-1234" not in repr(service)


def test_the_tushare_token_reaches_the_client_through_the_resource(monkeypatch):
    from livesearch_pipeline.dataservice import tushare

    _clear(monkeypatch)
    monkeypatch.setenv("TUSHARE_TOKEN", "tushare-token-from-env")
    built: list[str] = []

    class Recorder:
        def __init__(self, token=None, *, url):
            built.append(token)

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return None

    monkeypatch.setattr(tushare, "TushareClient", Recorder)
    _open(DataServiceResource(kind="tushare"))
    _open(DataServiceResource(kind="tushare", token="explicit-token"))
    assert built == ["tushare-token-from-env", "explicit-token"]
