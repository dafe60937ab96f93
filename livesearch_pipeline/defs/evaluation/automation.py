"""Declarative automation of the daily evaluation: after D's gold is frozen, D is evaluated.

The 18:30 schedule freezes D's gold (`daily_refresh`). The automation sensor below (on by
default, evaluated by the Dagster daemon every 30 s) then materialises, for the latest daily
partition only:

- `web_corpus` D once the 18:30 (America/New_York) tick has passed (the same tick as the refresh;
  its condition is in defs/web/assets.py);
- `agent_runs` (D, agent) for every agent partition (every registered agent: the registry sensor
  adds them) once D's gold, served questions and web are all there (`eager`: a new agent
  partition added later that day runs too);
- `leaderboard` D whenever agent runs of D land (and none is in progress): it ranks the runs that
  exist, so one failed agent never blocks the day's leaderboard;
- `stale_gold_audit` D when D's gold (or a previous snapshot it reads) is frozen, once D's served
  questions exist.

Only the latest time partition is ever requested (`in_latest_time_window`): the automation never
backfills the past, and a day that gets no gold (a non-session day that was not refreshed) is
simply never evaluated; nothing waits on it. Analysts backfill past days with explicit runs
(`livesearch run --date D`, or the jobs `daily_agent_runs` / `daily_evaluation` in the UI).
Each condition fires at most once per update of its inputs (`since_last_handled`), so a failed
run is not retried in a loop.
"""

import dagster as dg

from livesearch_pipeline.defs.refresh.assets import gold_answers

AC = dg.AutomationCondition

# Every agent partition of the latest day, once D's gold, served questions and web exist.
after_gold = AC.eager().with_label("eager: after D's gold, served questions and web")

# The leaderboard of D ranks whatever runs of D exist: re-ranked when one lands, never blocked
# by an agent that failed or was never run.
after_agent_runs = (
    AC.in_latest_time_window()
    & AC.any_deps_updated().since_last_handled()
    & ~AC.any_deps_in_progress()
    & ~AC.in_progress()
).with_label("when agent runs of D land")

# The audit of D depends on the gold of the window up to D (defs/evaluation/partitions.py): days
# of that window without gold must not block it, so only the served questions of D are required
# to exist; the run itself fails loudly if D's gold is missing.
after_gold_snapshots = (
    AC.in_latest_time_window()
    & AC.any_deps_updated().allow(dg.AssetSelection.assets(gold_answers)).since_last_handled()
    & ~AC.any_deps_missing().ignore(dg.AssetSelection.assets(gold_answers))
    & ~AC.any_deps_in_progress()
    & ~AC.in_progress()
).with_label("when D's gold (or an earlier snapshot it reads) is frozen")

AUTOMATED_ASSETS = ("web_corpus", "agent_runs", "leaderboard", "stale_gold_audit")

daily_evaluation_automation = dg.AutomationConditionSensorDefinition(
    "daily_evaluation_automation",
    target=dg.AssetSelection.assets(*AUTOMATED_ASSETS),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    # Several partitions of one tick (agent runs of D, then the leaderboard) become one backfill,
    # which runs them in dependency order.
    emit_backfills=True,
    run_tags={"livesearch/kind": "evaluation"},
    description="After D's gold is frozen: D's web, every registered agent's run of D, D's leaderboard and "
                "stale-gold audit (latest partition only; never backfills the past).",
)
