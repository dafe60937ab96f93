"""The Dagster instance the command line opens (infra/dagster_instance.py)."""

from __future__ import annotations

from pathlib import Path

from livesearch_pipeline.infra.dagster_instance import INSTANCE_CONFIG, open_instance


def test_without_dagster_home_the_instance_lives_under_the_data_root(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    with open_instance(tmp_path) as instance:
        home = tmp_path / "dagster_home"
        assert Path(instance.root_directory) == home
        # A new home gets the repository's instance configuration.
        assert (home / "dagster.yaml").read_bytes() == INSTANCE_CONFIG.read_bytes()
        # The queued coordinator plus the run-tag policy (infra/run_tags.py).
        assert type(instance.run_coordinator).__name__ == "TaggingRunCoordinator"


def test_an_existing_dagster_home_and_its_configuration_are_kept(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "elsewhere"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with open_instance(tmp_path / "data") as instance:
        assert Path(instance.root_directory) == home
        assert (home / "dagster.yaml").read_text() == "telemetry:\n  enabled: false\n"
        assert not (tmp_path / "data").exists()
