"""Issue 30, findings 10, 16 and 19: the close guard of a refresh, whatever the provider and clock.

10: with the Tushare provider and LIVESEARCH_CLOCK set, a refresh at 10:00 New York time on D is
    refused by the close guard (a fixed clock changes nothing a provider without a clock returns).
19: the guard runs before anything of D is written: a refused day has no served file, no
    `served_questions` materialisation, one failed run with one clear message, and the automation
    requests nothing of D afterwards (no stale-gold audit of a day without gold).
16: `refresh --date` of a future day is one line naming the fix, not a Dagster traceback.

Every test fixes the wall clock (time_machine) and runs the CLI in-process, as a user would.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import dagster as dg
import pytest
import time_machine

from livesearch_pipeline.cli import main
from livesearch_pipeline.defs.evaluation.assets import agent_runs, leaderboard, stale_gold_audit
from livesearch_pipeline.defs.evaluation.automation import daily_evaluation_automation
from livesearch_pipeline.defs.refresh.assets import daily_refresh_assets
from livesearch_pipeline.defs.resources import DataServiceResource, LLMResource, StorageResource
from livesearch_pipeline.defs.sources import observe_data_service
from livesearch_pipeline.defs.web.assets import web_corpus
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline_tests.defs.refresh.test_refresh_assets import write_trimmed_pool

NY = ZoneInfo("America/New_York")
DAY = dt.date(2026, 11, 25)  # a Wednesday: Shanghai, Hong Kong and New York all trade
MORNING = dt.datetime(2026, 11, 25, 10, 0, tzinfo=NY)


def use_root(root: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> None:
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(root))
    monkeypatch.setenv("DAGSTER_HOME", str(root / "dagster_home"))
    for name in ("LIVESEARCH_DATA_SERVICE", "LIVESEARCH_CLOCK", "LIVESEARCH_DATA_SERVICE_URL", "TUSHARE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def refused(argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert isinstance(exit_info.value.code, str), exit_info.value.code
    return exit_info.value.code


def runs_of(root: Path) -> list[dg.DagsterRun]:
    with dg.DagsterInstance.from_config(str(root / "dagster_home")) as instance:
        return list(instance.get_runs())


def assert_nothing_of_day_written(root: Path) -> None:
    paths = DataPaths(root)
    assert not paths.served_file(DAY).exists()
    assert not paths.gold.exists() or not any(paths.gold.iterdir())
    with dg.DagsterInstance.from_config(str(root / "dagster_home")) as instance:
        for name in ("served_questions", "gold_answers"):
            assert not instance.fetch_materializations(dg.AssetKey(name), limit=1).records, name


@pytest.mark.parametrize(("env", "why"), [
    # The Tushare forwarder with a fixed clock (its URL points nowhere: nothing may be sent).
    ({"LIVESEARCH_DATA_SERVICE": "tushare", "LIVESEARCH_CLOCK": DAY.isoformat(), "TUSHARE_TOKEN": "ts-test-token-0001",
      "LIVESEARCH_DATA_SERVICE_URL": "http://127.0.0.1:9"}, "the tushare data service answers with what it holds now"),
    # The embedded market on the real date.
    ({}, "the data service runs on the real date"),
])
def test_a_refresh_before_the_close_is_refused_before_anything_is_served(tmp_path, monkeypatch, env, why):
    write_trimmed_pool(tmp_path, per_group=1)
    use_root(tmp_path, monkeypatch, **env)
    with time_machine.travel(MORNING, tick=True):
        message = refused(["refresh", "--date", DAY.isoformat()])
    assert f"partition {DAY} is not complete yet at 2026-11-25 10:00 America/New_York ({why})" in message
    assert "close before 17:00 America/New_York; refresh it after that" in message
    assert_nothing_of_day_written(tmp_path)
    runs = runs_of(tmp_path)
    assert [run.status for run in runs] == [dg.DagsterRunStatus.FAILURE]


def test_a_fixed_clock_of_the_embedded_market_still_refreshes_a_closed_day_early(tmp_path, monkeypatch):
    """The embedded market answers as of its clock's cut-off: D with the clock at D is complete."""
    write_trimmed_pool(tmp_path, per_group=1)
    use_root(tmp_path, monkeypatch, LIVESEARCH_CLOCK=DAY.isoformat())
    with time_machine.travel(MORNING, tick=True):
        assert main(["refresh", "--date", DAY.isoformat()]) == 0
    assert DataPaths(tmp_path).served_file(DAY).is_file()


def test_the_automation_requests_nothing_of_a_refused_day(tmp_path, monkeypatch):
    write_trimmed_pool(tmp_path, per_group=1)
    use_root(tmp_path, monkeypatch)
    with time_machine.travel(MORNING, tick=True):
        refused(["refresh", "--date", DAY.isoformat()])
    definitions = dg.Definitions(
        assets=[observe_data_service, daily_refresh_assets, web_corpus, agent_runs, leaderboard, stale_gold_audit],
        sensors=[daily_evaluation_automation],
        resources={"data_service": DataServiceResource(), "storage": StorageResource(root=str(tmp_path)),
                   "llm": LLMResource(model="")})
    with dg.DagsterInstance.from_config(str(tmp_path / "dagster_home")) as instance:
        for hour in (10, 19):
            result = dg.evaluate_automation_conditions(
                defs=definitions, instance=instance, evaluation_time=MORNING.replace(hour=hour, minute=5))
            assert result.get_num_requested(stale_gold_audit.key) == 0 and result.get_num_requested(web_corpus.key) == 0
            assert result.get_num_requested(agent_runs.key) == 0 and result.get_num_requested(leaderboard.key) == 0


@pytest.mark.parametrize(("argv", "future"), [
    (["refresh", "--date", "2026-12-09"], "2026-12-09"),
    (["refresh", "--start", "2026-11-24", "--end", "2026-12-09"], "2026-11-26"),  # the first future day of the range
    (["run", "--date", "2026-12-09"], "2026-12-09"),
])
def test_a_future_day_is_one_line_naming_the_fix(tmp_path, monkeypatch, capsys, argv, future):
    use_root(tmp_path, monkeypatch)
    with time_machine.travel(MORNING, tick=True):
        message = refused(argv)
    assert message == (f"livesearch {argv[0]}: error: {future} is in the future (today in America/New_York is {DAY}); "
                       f"refresh it after 17:00 America/New_York on {future}, when its sessions have closed")
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert not (tmp_path / "dagster_home").exists() or not runs_of(tmp_path)
