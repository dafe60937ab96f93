"""`livesearch run | build-pool | refresh | ui`: the Dagster side of the command line.

Every command materialises the project's assets (the same jobs and asset selections the UI, the
schedule and the automation sensor run), in-process against the instance under DAGSTER_HOME, so
runs, materialisations and check results land in the same event log the UI shows. `build-pool`
is `materialize_pool`; `run` is the day's asset selection (`defs/evaluation/daily.py`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from livesearch_pipeline.cliargs import iso_date


def register(subparsers: argparse._SubParsersAction) -> None:
    # The commands that run the asset graph print one line per step; --verbose adds Dagster's event stream.
    console = argparse.ArgumentParser(add_help=False)
    console.add_argument("--verbose", action="store_true",
                         help="also print Dagster's event stream (DEBUG; always kept in the run's event log and the UI)")
    run = subparsers.add_parser("run", parents=[console],
                                help="build the pool, refresh the most recent completed day, evaluate baselines")
    run.add_argument("--date", type=iso_date, help="partition date (default: most recent completed day)")
    run.set_defaults(func=_run)
    build = subparsers.add_parser("build-pool", parents=[console], help="run the construction stages (probe … pool filter)")
    build.add_argument("--as-of", type=iso_date, help="construction date (default: the service clock or today)")
    build.add_argument("--tools", nargs="+", metavar="TOOL",
                       help="build only from these data tools (catalog names; default: every data tool)")
    build.set_defaults(func=_build_pool)
    refresh = subparsers.add_parser("refresh", parents=[console],
                                    help="materialise daily gold partitions (one run per date)")
    group = refresh.add_mutually_exclusive_group(required=True)
    group.add_argument("--date", type=iso_date)
    group.add_argument("--start", type=iso_date)
    refresh.add_argument("--end", type=iso_date, help="last date of --start (inclusive)")
    refresh.set_defaults(func=_refresh)
    ui = subparsers.add_parser("ui", help="start the Dagster UI (webserver + daemon) on 127.0.0.1")
    ui.add_argument("--port", type=int, default=3000)
    ui.set_defaults(func=_ui)


def _instance():
    from livesearch_pipeline.infra.dagster_instance import open_instance
    from livesearch_pipeline.settings import DataPaths

    return open_instance(DataPaths.from_env().root)


def _console(instance, run_config: dict | None, verbose: bool) -> dict:
    """The run id and run config that give a command-line run its console: one line per step, or
    with `verbose` Dagster's whole event stream (infra/run_console.py)."""
    from livesearch_pipeline.infra.run_console import console_run_config, watch_run

    return {"run_id": watch_run(instance, verbose=verbose), "run_config": console_run_config(run_config, verbose=verbose)}


def _execute(job_name: str | None, *, partition_key: str | None = None, run_config: dict | None = None,
             asset_keys=None, verbose: bool = False):
    """Execute a job (or, with `asset_keys`, that selection of the project's assets) in-process on
    the instance; on failure the LAST line printed names the cause."""
    from livesearch_pipeline.defs.construction.materialize import step_failures
    from livesearch_pipeline.defs.run_hygiene import WORKER_TAG, current_worker_tag, fail_orphaned_cli_runs
    from livesearch_pipeline.definitions import defs
    from livesearch_pipeline.infra.run_tags import KIND_TAG, run_kind

    instance = _instance()
    for run_id in fail_orphaned_cli_runs(instance):
        print(f"marked run {run_id} failed: its livesearch process was killed", file=sys.stderr)
    tags = {WORKER_TAG: current_worker_tag()}
    if asset_keys is None:
        job = defs.resolve_job_def(job_name)
        what = f"job {job_name}"
        selection = {}
    else:
        # An asset selection runs as Dagster's implicit asset job (`__ASSET_JOB` in the UI's run
        # list); the tag says which command launched it.
        job = defs.resolve_implicit_global_asset_job_def()
        what = ", ".join(k.to_user_string() for k in asset_keys)
        selection = {"asset_selection": list(asset_keys)}
        tags["livesearch/command"] = "run"
        # The tag the instance's limits key on, by the rule the run coordinator applies to UI runs.
        graph = defs.resolve_asset_graph()
        kind = run_kind(graph.get(key).group_name for key in asset_keys)
        if kind is not None:
            tags[KIND_TAG] = kind
    what = f"{what}{f' for {partition_key}' if partition_key else ''}"
    print(what, file=sys.stderr, flush=True)
    result = job.execute_in_process(instance=instance, partition_key=partition_key, raise_on_error=False, tags=tags,
                                    **_console(instance, run_config, verbose), **selection)
    if not result.success:
        causes = step_failures(result)
        detail = "".join(f"  {c}\n" for c in causes[1:5])
        raise SystemExit(f"{detail}{what} failed (run {result.run_id}): {causes[0]}")
    for event in result.all_events:
        if event.event_type_value == "ASSET_CHECK_EVALUATION":
            data = event.event_specific_data
            if data.passed:
                continue
            # A WARN check (the freshness deadline of a day refreshed late, as any backfill is) is
            # reported, not fatal: the day's gold is valid; only an ERROR check fails the command.
            if getattr(data.severity, "value", data.severity) == "WARN":
                message = data.metadata.get("message")
                print(f"{what}: warning: check {data.check_name}: "
                      f"{message.value if message is not None else 'did not pass'}", file=sys.stderr)
                continue
            raise SystemExit(f"{what}: check {data.check_name} failed: {data.metadata}")
    return result


def _materialized_flag(result, asset_name: str, key: str):
    """A metadata value of the run's materialisation of `asset_name` (None when absent)."""
    for event in result.all_events:
        if event.event_type_value == "ASSET_MATERIALIZATION":
            materialization = event.event_specific_data.materialization
            if materialization.asset_key.path[-1] == asset_name and key in materialization.metadata:
                return materialization.metadata[key].value
    return None


def _build(as_of: dt.date | None, tools: list[str] | None = None, *, verbose: bool = False):
    """`materialize_pool` on the instance under DAGSTER_HOME (the run shows in the UI)."""
    from livesearch_pipeline.defs.construction.materialize import PoolBuildError, materialize_pool
    from livesearch_pipeline.defs.run_hygiene import WORKER_TAG, current_worker_tag, fail_orphaned_cli_runs

    instance = _instance()
    for run_id in fail_orphaned_cli_runs(instance):
        print(f"marked run {run_id} failed: its livesearch process was killed", file=sys.stderr)
    print(f"job build_pool (construction){f' as of {as_of}' if as_of else ''}", file=sys.stderr, flush=True)
    try:
        return materialize_pool(as_of=as_of, tools=tools or (), instance=instance,
                                tags={WORKER_TAG: current_worker_tag()}, **_console(instance, None, verbose))
    except PoolBuildError as exc:
        raise SystemExit(str(exc)) from exc


def _build_pool(args: argparse.Namespace) -> int:
    manifest = _build(args.as_of, args.tools, verbose=args.verbose).manifest
    print(f"pool {manifest.version}: {manifest.questions} questions, "
          f"{len(manifest.counts.get('tool', {}))} tools, tiers {manifest.counts.get('tier')}")
    return 0


def _dates(args: argparse.Namespace) -> list[dt.date]:
    """The days to refresh: --date alone (refused unless it is a trading day), or every trading day
    from --start to --end (the daily partitions between them: weekends and holidays are not days of
    the benchmark, as in the UI's range picker)."""
    from livesearch_pipeline.core.calendars import next_trading_day, previous_trading_day
    from livesearch_pipeline.defs.partitions import not_a_partition, partition_days

    if args.date:
        return [args.date]
    end = args.end or args.start
    if end < args.start:
        raise SystemExit(f"--end {end} is before --start {args.start}")
    days = partition_days(args.start, end)
    if not days:
        outside = next((p for p in map(not_a_partition, (args.start, end)) if p and "no trading day" not in p), None)
        before, after = previous_trading_day(args.start), next_trading_day(end)
        raise SystemExit(f"livesearch refresh: error: {outside or f'no trading day from {args.start} to {end}'}"
                         + ("" if outside else f" (the previous trading day is {before}, the next {after})"))
    return days


def check_partitions_exist(dates: list[dt.date], command: str) -> None:
    """SystemExit in one line naming the fix when a date is not a daily partition: before the first
    one or past the trading calendars' end, a day without a session in Shanghai, Hong Kong or New
    York (naming the previous and the next trading day), or a day that has not begun in New York yet
    (a future day; its partition appears at midnight New York time and can be refreshed once its
    sessions close at 17:00)."""
    from livesearch_pipeline.defs.partitions import CLOSE_GUARD, PARTITION_TIMEZONE, daily_partitions, not_a_partition

    for day in dates:
        problem = not_a_partition(day)
        if problem is not None:
            raise SystemExit(f"livesearch {command}: error: {problem}")
    today = dt.datetime.now(ZoneInfo(PARTITION_TIMEZONE)).date()
    last = dt.date.fromisoformat(daily_partitions.get_last_partition_key())
    for day in dates:
        if day > min(last, today):
            raise SystemExit(f"livesearch {command}: error: {day} is in the future (today in {PARTITION_TIMEZONE} is "
                             f"{today}); refresh it after {CLOSE_GUARD:%H:%M} {PARTITION_TIMEZONE} on {day}, when its "
                             f"sessions have closed")


def refresh_dates(dates: list[dt.date], *, verbose: bool = False) -> None:
    check_partitions_exist(dates, "refresh")
    for day in dates:
        print_refresh(day, _execute("daily_refresh", partition_key=day.isoformat(), verbose=verbose))


def print_refresh(day: dt.date, result) -> None:
    """One line per frozen day: what this run's freeze did, not what the disk looked like before
    it (two concurrent refreshes of one day report "written" once and "verified" once)."""
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.settings import DataPaths

    manifest = SnapshotStore(DataPaths.from_env().gold).verify(day)
    created = _materialized_flag(result, "gold_answers", "created")
    state = "written" if created else "verified, identical to the frozen snapshot"
    timing = (f"cut-off {manifest.cutoff.isoformat()}" if manifest.cutoff else
              f"vintage {manifest.vintage.isoformat()}{' (LATE BACKFILL)' if manifest.late_backfill else ''}")
    print(f"{day}  {manifest.records} answers {dict(manifest.counts_by_status)}, {len(manifest.withdrawn)} withdrawn  "
          f"sha256 {manifest.sha256[:16]}…  {timing}  {state}")


def _refresh(args: argparse.Namespace) -> int:
    refresh_dates(_dates(args), verbose=args.verbose)
    return 0


def _run(args: argparse.Namespace) -> int:
    from livesearch_pipeline.core.benchmark_day import most_recent_completed_day
    from livesearch_pipeline.core.locks import WriterLockedError
    from livesearch_pipeline.settings import DataPaths

    paths = DataPaths.from_env()
    day = args.date or most_recent_completed_day()
    check_partitions_exist([day], "run")
    try:
        with day_run_lock(paths, day):
            return _run_day(args, paths, day)
    except WriterLockedError as exc:
        raise SystemExit(f"livesearch run: error: {exc}") from None


def day_run_lock(paths, day: dt.date):
    """One `livesearch run` per day and data folder: a second is refused at once, naming the first
    (two runs of one day would append to the same run folders and race on the same partitions)."""
    from livesearch_pipeline.core.locks import writer_lock

    return writer_lock(paths.runs / day.isoformat() / ".livesearch-run.lock", f"livesearch run of {day} in {paths.root}")


def _run_day(args: argparse.Namespace, paths, day: dt.date) -> int:
    from livesearch_pipeline.core.benchmark_day import previous_completed_day
    from livesearch_pipeline.core.pool import POOL_FILE, read_manifest
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.definitions import defs
    from livesearch_pipeline.defs.evaluation.daily import daily_loop_targets, plan_runs
    from livesearch_pipeline.evaluation.audits import StaleGoldAudit
    from livesearch_pipeline.evaluation.registry import AGENT_PARTITIONS_NAME, BASELINES, agents_without_partition
    from livesearch_pipeline.evaluation.leaderboard import CHART_PNG, LEADERBOARD_JSON, Leaderboard, render_markdown
    from livesearch_pipeline.evaluation.store import TABLES as STORE_TABLES
    from livesearch_pipeline.evaluation.store import partition_path, store_root
    from livesearch_pipeline.site.build import site_dir
    from livesearch_pipeline.site.commands import DEFAULT_PORT as SITE_PORT

    previous = previous_completed_day(day)
    print(f"LiveSearch daily job for {day} on the embedded synthetic market (data in {paths.root})")
    # Construction when there is no pool yet (the construction assets, as of D); an existing pool
    # is the one D serves, as for the schedule.
    if not (paths.pool / POOL_FILE).is_file():
        _build(day, verbose=args.verbose)
    manifest = read_manifest(paths.pool)
    print(f"pool {manifest.version}: {manifest.questions} questions over {len(manifest.counts['tool'])} tools, "
          f"tiers {manifest.counts['tier']}")
    # Every registered agent gets its partition (what the registry sensor does in the UI); the
    # baselines run here, agents needing a model or a search backend are launched by the user.
    instance = _instance()
    missing = agents_without_partition(paths, instance.get_dynamic_partitions(AGENT_PARTITIONS_NAME))
    if missing:
        instance.add_dynamic_partitions(AGENT_PARTITIONS_NAME, missing)
    # The day's selection (served + gold of D-1 and D, D's web, the baselines' runs of D, D's
    # leaderboard and stale-gold audit), materialised in the runs the asset graph orders.
    for planned in plan_runs(defs.resolve_asset_graph(), daily_loop_targets(day, previous, BASELINES), instance):
        result = _execute(None, partition_key=planned.partition_key, asset_keys=planned.asset_keys, verbose=args.verbose)
        if "gold_answers" in planned.asset_names:
            print_refresh(dt.date.fromisoformat(planned.partition_key), result)
    store = SnapshotStore(paths.gold)
    gold = store.verify(day)
    print(f"gold snapshot {store.path_for(day)}\n  sha256 {gold.sha256}\n  counts {dict(gold.counts_by_status)}")
    web_manifest = json.loads((paths.web / day.isoformat() / "manifest.json").read_text(encoding="utf-8"))
    print(f"offline web of {day}: {web_manifest.get('pages')} pages in {paths.web / day.isoformat()}")
    board_dir = paths.runs / day.isoformat() / "leaderboard"
    board = Leaderboard.model_validate_json((board_dir / LEADERBOARD_JSON).read_bytes())
    print(f"\nleaderboard for {day} ({board_dir / LEADERBOARD_JSON}):\n{render_markdown(board)}")
    print(f"chart of accuracy by visibility level and tier: {board_dir / CHART_PNG}")
    tables = [t for t in STORE_TABLES if partition_path(store_root(paths), t, day).is_file()]
    print(f"analytical store (Parquet): {store_root(paths)}/{{{','.join(tables)}}}/{day}/part-0.parquet")
    audit_path = paths.runs / day.isoformat() / "audits" / f"stale_gold_audit_{day.isoformat()}.json"
    audit = StaleGoldAudit.model_validate_json(audit_path.read_bytes())
    print(f"\nstale-gold audit: gold of {audit.previous_date} scored against the gold of {day}")
    for refresh_class in ("daily", "static"):
        stats = audit.by_refresh_class.get(refresh_class)
        rate = f"{stats.failure_rate:.1%} ({stats.failed}/{stats.n} questions)" if stats else "no served questions"
        print(f"  {refresh_class}-class stale-gold rate: {rate}")
    others = ", ".join(f"{k} {v.failure_rate:.1%} ({v.failed}/{v.n})"
                       for k, v in sorted(audit.by_refresh_class.items()) if k not in ("daily", "static"))
    print(f"  overall: {audit.failure_rate:.1%}{f'; other classes: {others}' if others else ''}")
    site_index = site_dir(paths) / "index.html"
    print(f"\npublic site of {day}: {site_index}\n  serve it: livesearch site serve  (http://127.0.0.1:{SITE_PORT}/)")
    return 0


def _ui(args: argparse.Namespace) -> int:
    """Dagster's webserver and daemon on 127.0.0.1 until SIGTERM or SIGINT (infra/ui.py)."""
    from livesearch_pipeline.infra.dagster_instance import ensure_home
    from livesearch_pipeline.infra.ui import run_ui
    from livesearch_pipeline.settings import DataPaths

    # This process only waits for a signal: it opens no instance and imports no Dagster, so it exits
    # as soon as the services have stopped.
    home = ensure_home(DataPaths.from_env().root)
    code = run_ui(args.port, home=home, workspace=Path(__file__).resolve().parent.parent / "workspace.yaml")
    # Every child is gone and nothing is left to release: leave without the interpreter's teardown
    # of the command line's imports (about a second on a loaded machine, part of the stop time).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
