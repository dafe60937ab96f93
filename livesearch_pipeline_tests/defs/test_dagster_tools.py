"""Dagster's own tools work from a bare shell in the project root: no DAGSTER_HOME, no
LIVESEARCH_* variable, nothing but PATH and HOME (PYTHONPATH only pins this checkout's package,
which an editable install provides as well). `dagster dev` / `dg dev` are exercised by the
webserver tests' `livesearch ui`; these are the one-shot commands CI and a reviewer run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
TIMEOUT_S = 300


def bare_env(home: Path) -> dict[str, str]:
    return {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(REPO_ROOT)}


def run_tool(argv: list[str], home: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([str(VENV_BIN / argv[0]), *argv[1:]], cwd=REPO_ROOT, env=bare_env(home),
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def leftover_homes() -> set[Path]:
    """`dagster definitions validate` without DAGSTER_HOME uses a temporary instance under the cwd."""
    return set(REPO_ROOT.glob(".tmp_dagster_home_*"))


@pytest.mark.slow
def test_dg_check_defs_from_a_bare_shell(tmp_path: Path):
    done = run_tool(["dg", "check", "defs"], tmp_path)
    assert "All definitions loaded successfully." in done.stdout + done.stderr
    # pyproject's [tool.dg.cli] silences the warning about running dg with no venv activated.
    assert "active virtual environment does not match" not in done.stdout + done.stderr


@pytest.mark.slow
def test_dg_list_defs_from_a_bare_shell_shows_the_refresh(tmp_path: Path):
    listed = json.loads(run_tool(["dg", "list", "defs", "--json"], tmp_path).stdout)
    assets = {a["asset_key"]: a for a in listed["assets"]}
    assert set(assets["gold_answers"]["dependency_keys"]) == {"data_service", "question_pool", "served_questions"}
    assert assets["served_questions"]["group_name"] == assets["gold_answers"]["group_name"] == "daily_refresh"
    assert {c["name"] for c in listed["asset_checks"] if c["asset_key"] == "gold_answers"} >= {
        "gold_manifest_verifies", "gold_covers_served", "gold_unanswered_share", "gold_latest_is_last_session"}
    assert "daily_refresh" in {j["name"] for j in listed["jobs"]}
    assert "daily_refresh_schedule" in {s["name"] for s in listed["schedules"]}


@pytest.mark.slow
def test_dagster_definitions_validate_from_a_bare_shell(tmp_path: Path):
    before = leftover_homes()
    done = run_tool(["dagster", "definitions", "validate", "-w", "workspace.yaml"], tmp_path)
    assert "All code locations passed validation." in done.stdout + done.stderr
    assert leftover_homes() == before, "the temporary instance is removed on exit"
