"""`default_workers`: how many processes a stage that forks workers uses by default."""

from __future__ import annotations

import os


def default_workers() -> int:
    """One worker process per core, at most two: the stages that fork (the replay, the candidates'
    second execution, the web build, the site, the web baselines) are measured on 2 cores, and
    their output never depends on the number."""
    return min(2, os.cpu_count() or 1)
