"""Fixtures shared by the whole suite, and the test layers.

Layers (docs/design.md, "Tests"): pure functions (`core/`, `infra/`, most of `dataservice/`,
`construction/`, `evaluation/`, `web/`); assets materialised in process with an ephemeral
instance and the embedded data service (`defs/`, mirroring `livesearch_pipeline/defs/`); and
end-to-end runs of real processes (the CLI, the webserver and daemon, Celery workers, PostgreSQL),
marked `slow`. `make test-fast` runs the first layer's quick folders; `make test` runs everything.

Markers are declared in pyproject.toml ([tool.pytest.ini_options] markers; `--strict-markers`
refuses any other).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from livesearch_pipeline.dataservice.market import Market

# The LLM configuration a developer's shell may carry: no test may pick it up (tests never call a
# real model; those that need a model configure a scripted one themselves).
LLM_ENV = ("LIVESEARCH_LLM_MODEL", "LIVESEARCH_JUDGE_MODEL", "LIVESEARCH_LLM_API_BASE", "LIVESEARCH_LLM_API_KEY")


@pytest.fixture(autouse=True)
def no_llm_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def market() -> Market:
    """The synthetic market at its default seed (built once per test module: it is read-only)."""
    from livesearch_pipeline.dataservice.market import Market

    return Market()
