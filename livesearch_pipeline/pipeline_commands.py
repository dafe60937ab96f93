"""`livesearch run` / `ui`: the Dagster side of the command line."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser("run", help="validate the Dagster definitions and run the daily job")
    run.set_defaults(func=_run)
    ui = subparsers.add_parser("ui", help="start the Dagster UI (webserver + daemon) on 127.0.0.1")
    ui.add_argument("--port", type=int, default=3000)
    ui.set_defaults(func=_ui)


def _run(args: argparse.Namespace) -> int:
    from livesearch_pipeline.definitions import defs

    defs.validate_loadable(defs)
    repo = defs.get_repository_def()
    assets = sorted(k.to_user_string() for k in repo.asset_graph.get_all_asset_keys())
    print(f"Dagster definitions load: {len(assets)} assets, {len(list(repo.get_all_jobs()))} jobs")
    return 0


def _ui(args: argparse.Namespace) -> int:
    root = Path(__file__).resolve().parent.parent
    os.environ.setdefault("DAGSTER_HOME", str(root / "data" / "dagster_home"))
    Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "dagster", "dev", "-w", str(root / "workspace.yaml"),
           "--host", "127.0.0.1", "--port", str(args.port)]
    return subprocess.call(cmd, cwd=root)
