"""Synthetic frozen days for the site tests, written once per session and copied per test."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.site.synthetic import sessions, write_days

DAYS = sessions(dt.date(2026, 11, 2), 4)  # Mon 2 .. Thu 5 November 2026
N_QUESTIONS = 40


@pytest.fixture(scope="session")
def synthetic_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("site-data")
    write_days(root, N_QUESTIONS, DAYS, pool_change_at=2)
    return root


@pytest.fixture
def data_paths(synthetic_root: Path, tmp_path: Path) -> DataPaths:
    """A private copy of the synthetic data root (a test may change or build into it)."""
    root = tmp_path / "data"
    shutil.copytree(synthetic_root, root)
    return DataPaths(root)
