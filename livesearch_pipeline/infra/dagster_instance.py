"""The Dagster instance the command line works against (`livesearch run`, `livesearch agent register`).

Shared infrastructure: the CLI's Dagster commands and the evaluation package's agent commands open
the same instance, so the rule for finding it lives here, below both.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import dagster as dg

# The repository's instance configuration, copied into a new DAGSTER_HOME.
INSTANCE_CONFIG = Path(__file__).resolve().parents[2] / "dagster.yaml"


def ensure_home(data_root: Path) -> Path:
    """`$DAGSTER_HOME`, which defaults to `<data_root>/dagster_home` (set in the environment, so
    that processes started from here use it too), created when missing; a new home gets the
    repository's `dagster.yaml`. Opens nothing (`livesearch ui` only needs the folder)."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(Path(data_root) / "dagster_home")))
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists() and INSTANCE_CONFIG.exists():
        config.write_bytes(INSTANCE_CONFIG.read_bytes())
    return home


def open_instance(data_root: Path) -> "dg.DagsterInstance":
    """The instance of `ensure_home(data_root)`."""
    import dagster as dg

    ensure_home(data_root)
    return dg.DagsterInstance.get()
