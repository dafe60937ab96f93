"""`livesearch` subcommands of the evaluation area."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from livesearch_pipeline.cliargs import iso_date

EXIT_FAIL_LOUD = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this area's subcommands to the `livesearch` parser."""
    _register_evaluate(subparsers)
    _register_leaderboard(subparsers)
    _register_audits(subparsers)
    # `livesearch agent run` lives with the agents (evaluation/agents/cli.py).
    from livesearch_pipeline.evaluation.agents.cli import register_agent_commands

    actions = register_agent_commands(subparsers)
    _register_agent_registry(actions)
    _register_inspect_import(actions)


def default_llm_cache_dir() -> Path:
    """The one LLM cache, `<data root>/cache/llm`: the same folder the Dagster LLM resource uses."""
    from livesearch_pipeline.settings import DataPaths

    return DataPaths.from_env().llm_cache


def _fail(command: str, message: str) -> int:
    # One line: validation errors quote pydantic's multi-line reports, and scripts read stderr's last line.
    one_line = " ".join(line.strip() for line in message.splitlines() if line.strip())
    print(f"livesearch {command}: error: {one_line}", file=sys.stderr)
    return EXIT_FAIL_LOUD


# --------------------------------------------------------------------------- evaluate


def _register_evaluate(subparsers: argparse._SubParsersAction) -> None:
    from livesearch_pipeline.evaluation.limits import MAX_ANSWER_CHARS

    parser = subparsers.add_parser(
        "evaluate",
        help="score a predictions file against the gold of its day (writes verdicts.jsonl, summary.json)",
        description="Strict evaluation (docs/design.md §4.7). Scores the day's scoring set: the served questions "
        "minus those the gold manifest withdraws (their programs returned empty or error on the day); "
        "a prediction for a withdrawn question is ignored. An answer longer than "
        f"{MAX_ANSWER_CHARS:,} characters scores wrong unread (reason \"answer longer than "
        f"{MAX_ANSWER_CHARS} characters\"). Exit 2 with a one-line message and nothing written when any "
        "fail-loud rule is violated: missing or mismatched gold manifest, empty scoring set, a line "
        "that is not exactly one JSON object, unknown or duplicate predicted qids, --out colliding "
        "with an input, --out holding another agent's run, an agent name that another run of the day (or a "
        "registered agent) already has.",
    )
    parser.add_argument("--served", type=Path, required=True, help="served_questions_<D>.jsonl")
    parser.add_argument("--gold", type=Path, required=True,
                        help="gold_answers_<D>.jsonl, its manifest gold_answers_<D>.manifest.json beside it; or a site's "
                        "gold download, downloads/<D>/gold.jsonl with its gold.manifest.json beside it (the published "
                        "golds only are scored; the summary says how many were withheld)")
    parser.add_argument("--predictions", type=Path, required=True,
                        help="predictions.jsonl: one {\"qid\", \"answer\", \"lang\"} per line (+ predictions.meta.json "
                        "beside it, or --agent)")
    parser.add_argument("--agent", default=None,
                        help="score predictions made elsewhere: write their missing run metadata "
                        "(<predictions>.meta.json: this agent name, the gold's date, the served file's qid-set hash, "
                        "started_at = the predictions file's modification time) once the evaluation succeeds")
    parser.add_argument("--model", default=None, help="with --agent: the model that answered (recorded in the metadata)")
    parser.add_argument("--out", type=Path, required=True,
                        help="directory for verdicts.jsonl and summary.json (may hold the predictions; "
                        "never an input's own name)")
    parser.add_argument(
        "--judge-model", default=None,
        help="LLM judge for semantic answers and final-answer extraction "
        "(default: $LIVESEARCH_JUDGE_MODEL; none: deterministic only)",
    )
    parser.add_argument("--cache-dir", type=Path, default=None, help="LLM cache (default: $LIVESEARCH_DATA_DIR/cache/llm)")
    parser.add_argument("--judge-concurrency", type=int, default=8)
    parser.set_defaults(func=_evaluate)


def _evaluate(args: argparse.Namespace) -> int:
    from livesearch_pipeline.core.snapshot import write_atomic
    from livesearch_pipeline.evaluation.errors import EvaluationError
    from livesearch_pipeline.evaluation.evaluator import evaluate
    from livesearch_pipeline.evaluation.inputs import evaluation_inputs, meta_path_beside
    from livesearch_pipeline.evaluation.outputs import check_output_paths, write_evaluation
    from livesearch_pipeline.evaluation.judge import judge_from_settings
    from livesearch_pipeline.evaluation.own_run import metadata_for
    from livesearch_pipeline.evaluation.registry import registered_names
    from livesearch_pipeline.evaluation.run_identity import check_name_free, check_run_folder
    from livesearch_pipeline.infra.llm import LLMSettings
    from livesearch_pipeline.settings import DataPaths

    paths = DataPaths.from_env()

    if args.model is not None and args.agent is None:
        return _fail("evaluate", "--model names the model of --agent's run; give --agent too (nothing written)")
    inputs = evaluation_inputs(args.served, args.gold, args.predictions)
    try:
        check_output_paths(args.out, inputs)
        run_meta = (metadata_for(args.served, args.gold, args.predictions, agent=args.agent, model=args.model)
                    if args.agent is not None else None)
    except EvaluationError as exc:
        return _fail("evaluate", f"{exc} (nothing written)")
    settings = LLMSettings.from_env()
    judge = judge_from_settings(
        args.judge_model or settings.judge_model,
        cache_dir=args.cache_dir or default_llm_cache_dir(),
        api_base=settings.api_base,
        api_key=settings.api_key,
    )
    try:
        result = evaluate(
            args.served, args.gold, args.predictions, judge=judge, judge_concurrency=args.judge_concurrency,
            run_meta=run_meta,
        )
    except EvaluationError as exc:
        return _fail("evaluate", f"{exc} (nothing written)")
    try:
        # A folder holds one agent's run, and a name of the day one folder (evaluation/run_identity.py).
        check_run_folder(args.out, result.summary.agent or "", args.predictions)
        check_name_free(args.out, result.summary.agent or "", result.summary.gold_date, runs_root=paths.runs,
                        registered=registered_names(paths))
    except EvaluationError as exc:
        return _fail("evaluate", f"{exc} (nothing written)")
    meta_path = meta_path_beside(args.predictions)
    try:
        if run_meta is not None:
            write_atomic(meta_path, run_meta.model_dump_json(indent=2).encode("utf-8") + b"\n", exclusive=True)
    except OSError as exc:
        return _fail("evaluate", f"cannot write the run metadata {meta_path}: {exc} (nothing written)")
    try:
        verdicts_path, summary_path = write_evaluation(result, args.out, inputs=inputs)
    except (EvaluationError, OSError) as exc:
        if run_meta is not None:
            meta_path.unlink()  # written above for this evaluation only: nothing is left behind
        if isinstance(exc, EvaluationError):
            return _fail("evaluate", f"{exc} (nothing written)")
        return _fail("evaluate", f"cannot write the evaluation to {args.out}: {exc}")
    s = result.summary
    published = (f" on the published questions only, {s.n_withheld} withheld gold(s) not scored"
                 if s.published_gold else "")
    print(
        f"{s.agent or 'predictions'} on {s.gold_date}: accuracy {s.accuracy:.1%} "
        f"({s.correct}/{s.n_scored} scored{published}; {s.n_withdrawn} withdrawn of {s.n_served} served; "
        f"scoring set {s.qid_set_hash[:12]}), {s.llm_verdicts} verdict(s) needed the LLM, "
        f"{s.judge_errors} judge error(s)"
    )
    for warning in s.warnings:
        print(f"warning: {warning}")
    if run_meta is not None:
        print(f"wrote {meta_path} (agent {run_meta.agent}, started_at = the predictions file's modification time)")
    print(f"wrote {verdicts_path} and {summary_path}")
    return 0


# --------------------------------------------------------------------------- leaderboard


def _register_leaderboard(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard", help="rank evaluated runs that share a qid set and gold date",
        description="Ranks what each run's predictions score again against the configured gold (judge verdicts "
        "only from the LLM cache), never its verdicts file alone. Without --date the runs must share one gold "
        "date (runs of several days are refused, naming the newest). Exit 2 with a one-line message naming the "
        "fix otherwise.",
    )
    parser.add_argument("--runs", type=Path, nargs="+", required=True, help="evaluation output directories")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--date", type=iso_date, default=None, help="rank only runs scored against this gold date")
    parser.add_argument("--gold-dir", type=Path, default=None,
                        help="the gold snapshots (manifests verified) every run's predictions are scored again "
                        "against (default: $LIVESEARCH_DATA_DIR/gold; never a folder a summary names)")
    parser.add_argument("--served-dir", type=Path, default=None,
                        help="served_questions_<D>.jsonl files (default: $LIVESEARCH_DATA_DIR/served)")
    parser.set_defaults(func=_leaderboard)


def _leaderboard(args: argparse.Namespace) -> int:
    from livesearch_pipeline.evaluation.errors import EvaluationError
    from livesearch_pipeline.evaluation.leaderboard import (
        LeaderboardError,
        build_leaderboard,
        render_markdown,
        write_leaderboard,
    )

    from livesearch_pipeline.evaluation.registry import registered_names
    from livesearch_pipeline.evaluation.writers import WriterTargetError, check_writable
    from livesearch_pipeline.settings import DataPaths

    paths = DataPaths.from_env()
    try:
        check_writable(args.out, what="leaderboard --out", files=())
        board = build_leaderboard(args.runs, date=args.date.isoformat() if args.date else None,
                                  gold_dir=args.gold_dir or paths.gold, served_dir=args.served_dir or paths.served,
                                  llm_cache=paths.llm_cache, registered=registered_names(paths), runs_root=paths.runs)
    except (LeaderboardError, EvaluationError, WriterTargetError) as exc:
        return _fail("leaderboard", str(exc))
    try:
        paths = write_leaderboard(board, args.out)
    except OSError as exc:
        return _fail("leaderboard", f"cannot write the leaderboard to {args.out}: {exc}; fix: choose a writable --out")
    print(render_markdown(board), end="")
    print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0


# --------------------------------------------------------------------------- audits


def _register_audits(subparsers: argparse._SubParsersAction) -> None:
    stale = subparsers.add_parser(
        "audit-stale", help="score the previous snapshot's gold against the gold of D (stale-gold rate)"
    )
    stale.add_argument("--gold-dir", type=Path, required=True)
    stale.add_argument("--date", type=iso_date, required=True)
    stale.add_argument("--served", type=Path, default=None, help="default: <gold-dir>/../served/served_questions_<D>.jsonl")
    stale.add_argument("--out", type=Path, default=None, help="also write stale_gold_audit_<D>.json here")
    stale.set_defaults(func=_audit_stale)

    longitudinal = subparsers.add_parser(
        "audit-longitudinal", help="the frozen answer of each qid on each snapshot date in a range"
    )
    longitudinal.add_argument("--gold-dir", type=Path, required=True)
    group = longitudinal.add_mutually_exclusive_group(required=True)
    group.add_argument("--qids", nargs="+")
    group.add_argument("--qids-file", type=Path, help="one qid per line")
    longitudinal.add_argument("--start", type=iso_date, required=True)
    longitudinal.add_argument("--end", type=iso_date, required=True)
    longitudinal.add_argument("--out", type=Path, default=None, help="write the JSON and CSV tables here")
    longitudinal.set_defaults(func=_audit_longitudinal)


def _audit_stale(args: argparse.Namespace) -> int:
    from livesearch_pipeline.evaluation.audits import AuditError, render_stale_report, stale_gold_audit, write_stale_audit

    try:
        audit = stale_gold_audit(args.gold_dir, args.date, served_path=args.served)
    except AuditError as exc:
        return _fail("audit-stale", str(exc))
    print(render_stale_report(audit), end="")
    if args.out is not None:
        print(f"wrote {write_stale_audit(audit, args.out)}")
    return 0


def _audit_longitudinal(args: argparse.Namespace) -> int:
    from livesearch_pipeline.evaluation.audits import (
        AuditError,
        longitudinal_audit,
        render_longitudinal_csv,
        write_longitudinal_audit,
    )

    if args.qids_file is not None:
        if not args.qids_file.is_file():
            return _fail("audit-longitudinal", f"qids file {args.qids_file} does not exist")
        qids = [line.strip() for line in args.qids_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        qids = args.qids
    try:
        audit = longitudinal_audit(args.gold_dir, qids, args.start, args.end)
    except AuditError as exc:
        return _fail("audit-longitudinal", str(exc))
    print(render_longitudinal_csv(audit), end="")
    if args.out is not None:
        json_path, csv_path = write_longitudinal_audit(audit, args.out)
        print(f"wrote {json_path} and {csv_path}")
    return 0


# --------------------------------------------------------------------------- agent registry


def _register_agent_registry(actions: argparse._SubParsersAction) -> None:
    from livesearch_pipeline.evaluation.registry import AgentSpec

    kinds = AgentSpec.model_fields["kind"].annotation.__args__
    register = actions.add_parser(
        "register", help="add an agent to the daily evaluation (a partition of the Dagster `agent` dimension)",
        description="Writes the agent to $LIVESEARCH_DATA_DIR/agents.json and adds NAME to the `agents` "
        "partitions of the Dagster instance under $DAGSTER_HOME, so `agent_runs` can be launched for "
        "(D, NAME) from the UI. The baselines oracle, stale, search-read, navigator-6 and navigator-20 are always registered.",
    )
    register.add_argument("name", help="partition key: lower-case letters, digits, '.', '_', '-'")
    register.add_argument("--kind", required=True, choices=kinds)
    register.add_argument("--model", default=None, help="litellm model (LLM kinds; default: $LIVESEARCH_LLM_MODEL)")
    register.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint of this agent's own "
                          "(needs --api-key-env; default: $LIVESEARCH_LLM_API_BASE with $LIVESEARCH_LLM_API_KEY)")
    register.add_argument("--api-key-env", default=None,
                          help="with --api-base: the LIVESEARCH_AGENT_<NAME>_KEY variable holding that endpoint's "
                          "key (never another variable, such as LIVESEARCH_LLM_API_KEY, the operator's key)")
    register.add_argument("--searxng-url", default=None, help="web: SearXNG base URL")
    register.add_argument("--services", default=None, help="plugin: comma-separated services to offer (default: all)")
    register.add_argument("--concurrency", type=int, default=4, help="questions in flight (default 4)")
    register.add_argument("--max-steps", type=int, default=None)
    register.add_argument("--max-tokens", type=int, default=None)
    register.add_argument("--time-limit", type=float, default=None, help="seconds per question")
    register.add_argument("--read-budget", type=int, default=None,
                          help="navigator, web: distinct pages read per question, refused beyond (default: no limit; "
                               "the built-in navigator-6 and navigator-20 have 6 and 20)")
    register.add_argument("--search-budget", type=int, default=None,
                          help="navigator, web: searches per question, refused beyond (default: no limit)")
    register.set_defaults(func=_agent_register)
    listing = actions.add_parser("list", help="the registered agents (baselines included)")
    listing.set_defaults(func=_agent_list)


def _agent_register(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from livesearch_pipeline.evaluation.registry import (
        AGENT_PARTITIONS_NAME, AgentRegistryError, AgentSpec, register_agent, registry_path,
    )
    from livesearch_pipeline.settings import DataPaths

    services = tuple(s.strip() for s in args.services.split(",") if s.strip()) if args.services else None
    try:
        spec = AgentSpec(name=args.name, kind=args.kind, model=args.model, api_base=args.api_base,
                         api_key_env=args.api_key_env, searxng_url=args.searxng_url, services=services, concurrency=args.concurrency,
                         max_steps=args.max_steps, max_tokens=args.max_tokens, time_limit_s=args.time_limit,
                         read_budget=args.read_budget, search_budget=args.search_budget)
    except ValidationError as exc:
        return _fail("agent register", f"invalid agent {args.name!r}: {exc}")
    if spec.kind == "web" and not spec.searxng_url:
        return _fail("agent register", "a web agent needs --searxng-url")
    path = registry_path(DataPaths.from_env())
    try:
        added = register_agent(path, spec)
    except AgentRegistryError as exc:
        return _fail("agent register", str(exc))
    # Imported here so that other commands do not load Dagster.
    from livesearch_pipeline.infra.dagster_instance import open_instance

    instance = open_instance(DataPaths.from_env().root)
    new_partition = not instance.has_dynamic_partition(AGENT_PARTITIONS_NAME, spec.name)
    if new_partition:
        instance.add_dynamic_partitions(AGENT_PARTITIONS_NAME, [spec.name])
    print(f"agent {spec.name} ({spec.kind}) {'registered in' if added else 'already in'} {path}; "
          f"Dagster partition {spec.name!r} {'added' if new_partition else 'already present'}")
    return 0


def _agent_list(args: argparse.Namespace) -> int:
    from livesearch_pipeline.core.redaction import redact
    from livesearch_pipeline.evaluation.registry import AgentRegistryError, load_agents, registry_path
    from livesearch_pipeline.settings import DataPaths

    path = registry_path(DataPaths.from_env())
    try:
        specs = load_agents(path)
    except AgentRegistryError as exc:
        return _fail("agent list", str(exc))
    for spec in specs:
        options = spec.model_dump(exclude={"name", "kind"}, exclude_defaults=True)
        print(redact(f"{spec.name}\t{spec.kind}\t{options or ''}"))  # a URL's credentials stay in the registry
    return 0


# --------------------------------------------------------------------------- Inspect AI runs


def _register_inspect_import(actions: argparse._SubParsersAction) -> None:
    parser = actions.add_parser(
        "import-inspect", help="turn an Inspect AI log of livesearch_pipeline/livesearch into an evaluated run",
        description="Writes predictions.jsonl (with lang and usage), predictions.meta.json and trajectories.jsonl "
        "from the log's samples into --out, then evaluates them as `livesearch evaluate` does (verdicts.jsonl, "
        "summary.json), so the run ranks on the day's leaderboard. A -T lang=both log writes a second run, "
        "<out>-zh, for its Chinese samples. The day's served questions and gold are those of $LIVESEARCH_DATA_DIR "
        "(never a folder the log names). Exit 2, nothing written, when the log is not a run of the task, is "
        "larger than its limits (256 MiB uncompressed, 8 MiB per sample, two samples per served question, 1,000 "
        "messages per sample), or --out is protected (gold, served, pool, analytics), a symlink, or held by "
        "another writer.",
    )
    parser.add_argument("log", type=Path, help="an Inspect log (.eval or .json) of the livesearch task")
    parser.add_argument("--out", type=Path, required=True, help="run folder, e.g. data/runs/<D>/<agent>")
    parser.add_argument("--agent", default=None, help="agent name (default: inspect-<tools>-<model>)")
    parser.add_argument("--judge-model", default=None, help="LLM judge (default: $LIVESEARCH_JUDGE_MODEL; none: "
                        "deterministic only)")
    parser.set_defaults(func=_import_inspect)


def _import_inspect(args: argparse.Namespace) -> int:
    from livesearch_pipeline.evaluation.inspect_import import InspectImportError, import_inspect_log
    from livesearch_pipeline.evaluation.judge import judge_from_settings
    from livesearch_pipeline.infra.llm import LLMSettings

    settings = LLMSettings.from_env()
    judge = judge_from_settings(args.judge_model or settings.judge_model, cache_dir=default_llm_cache_dir(),
                                api_base=settings.api_base, api_key=settings.api_key)
    from livesearch_pipeline.settings import DataPaths

    try:
        # The day's served questions and gold come from the configured data root, never from the log.
        runs = import_inspect_log(args.log, args.out, data_root=DataPaths.from_env().root, agent=args.agent,
                                  judge=judge)
    except (InspectImportError, ValueError, OSError) as exc:
        return _fail("agent import-inspect", f"{exc} (nothing written)")
    for run in runs:
        s = run.result.summary
        usage = s.usage
        cost = "unknown" if usage is None or usage.cost_usd is None else f"${usage.cost_usd:.4f}"
        print(f"{s.agent} on {s.gold_date}: accuracy {s.accuracy:.1%} ({s.correct}/{s.n_scored}), "
              f"{run.predictions} predictions, cost {cost} -> {run.out_dir}")
    return 0
