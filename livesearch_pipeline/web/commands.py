"""`livesearch build-web | serve-web`: the offline web of a date, built and served on 127.0.0.1."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from livesearch_pipeline.cliargs import iso_date


def _sessions(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 400:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of sessions from 1 to 400")
    return int(text)


def register(subparsers: argparse._SubParsersAction) -> None:
    from livesearch_pipeline.dataservice.market import DEFAULT_SEED
    from livesearch_pipeline.web.build import DEFAULT_WORKERS
    from livesearch_pipeline.web.corpus import CorpusConfig

    default_history = CorpusConfig(clock=dt.date(2000, 1, 1)).history_sessions
    build = subparsers.add_parser("build-web", help="generate and index the offline web of a date (data/web/<D>/)")
    serve = subparsers.add_parser(
        "serve-web", help="serve the offline web of a date: SearXNG JSON API at /search, pages at their URLs",
        description="Point a web agent at it with --searxng-url http://HOST:PORT (the agent appends /search).")
    for parser in (build, serve):
        parser.add_argument("--date", type=iso_date, required=True, help="the web's clock YYYY-MM-DD: no page is later")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"market seed (default {DEFAULT_SEED})")
        parser.add_argument("--history-sessions", type=_sessions, default=default_history,
                            help=f"sessions of dated pages (news, wraps) before the clock (default {default_history})")
        parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                            help=f"processes generating pages (default {DEFAULT_WORKERS})")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8890, help="port (default 8890)")
    serve.add_argument("--build", action="store_true", help="build the web of --date first when it is missing")
    serve.add_argument("--base-url", default=None,
                       help="the base of result URLs (default http://HOST:PORT; never taken from a request's Host header)")
    serve.add_argument("--allow-partial", action="store_true",
                       help="serve a part of the web of --date (built with entity or tool subsets); refused by default")
    build.set_defaults(func=build_web_command)
    serve.set_defaults(func=serve_web_command)


def _config(args: argparse.Namespace):
    from livesearch_pipeline.web.corpus import CorpusConfig

    return CorpusConfig(clock=args.date, seed=args.seed, history_sessions=args.history_sessions)


def build_web_command(args: argparse.Namespace) -> int:
    from livesearch_pipeline.settings import DataPaths
    from livesearch_pipeline.web.build import build_web

    from livesearch_pipeline.core.pool import POOL_FILE
    from livesearch_pipeline.core.snapshot import SnapshotStore

    paths = DataPaths.from_env()
    # About a minute for the whole web: its progress goes to stderr, the result line to stdout.
    built = build_web(_config(args), paths.web, workers=args.workers, pool_file=paths.pool / POOL_FILE,
                      gold_file=SnapshotStore(paths.gold).path_for(args.date), progress=_progress)
    print(f"{built.identity}: {built.stats.pages} pages {built.stats.by_kind} in {built.generate_and_index_s:.1f} s, "
          f"{built.stats.bytes / 1e6:.1f} MB at {built.directory}")
    _evidence(paths, args.date, built.directory)
    return 0


def _progress(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


def _evidence(paths, day, directory) -> None:
    """The evidence map of the web when D's gold and the pool are there (else a note)."""
    from livesearch_pipeline.core.pool import POOL_FILE
    from livesearch_pipeline.core.snapshot import SnapshotStore
    from livesearch_pipeline.web.build import attach_evidence

    gold = SnapshotStore(paths.gold)
    if not gold.exists(day) or not (paths.pool / POOL_FILE).is_file():
        print(f"note: no gold of {day} (or no pool) yet: the evidence map is written once it exists", file=sys.stderr)
        return
    summary = attach_evidence(directory, paths.pool / POOL_FILE, gold.path_for(day))["summary"]
    print(f"evidence map: {summary['evidence']['present']}/{summary['evidence']['n']} questions with evidence "
          f"({summary['tools_only']} tools-only); by band "
          + ", ".join(f"{b} {v['share']}" for b, v in summary["by_band"].items()))


def serve_web_command(args: argparse.Namespace) -> int:
    from livesearch_pipeline.infra.serving import serve_until_interrupted
    from livesearch_pipeline.settings import DataPaths
    from livesearch_pipeline.web.build import corpus_directory
    from livesearch_pipeline.web.index import INDEX_FILE, WebIndex, WebIndexError
    from livesearch_pipeline.web.server import base_url, check_web_identity, make_server

    root = DataPaths.from_env().web
    directory = corpus_directory(root, args.date)
    if not (directory / INDEX_FILE).exists():
        if not args.build:
            raise SystemExit(f"no offline web for {args.date} at {directory}: run `livesearch build-web --date "
                             f"{args.date}` (or pass --build)")
        build_web_command(args)
    try:
        index = WebIndex(directory)
        # The web of --date and no other: a web of a later clock holds pages published after it.
        check_web_identity(index, args.date, allow_partial=args.allow_partial)
        if index.meta.get("history_sessions") != args.history_sessions:
            print(f"note: serving the web as built ({index.identity}); rebuild with build-web to change it",
                  file=sys.stderr)
        server = make_server(directory, args.host, args.port, clock=args.date, allow_partial=args.allow_partial,
                             public_base=args.base_url)
    except WebIndexError as exc:
        raise SystemExit(f"livesearch serve-web: error: {exc}") from None
    print(f"serving {index.identity} ({index.pages} pages) at {base_url(server)}  "
          f"(search: {base_url(server)}/search?q=...&format=json)", file=sys.stderr, flush=True)
    return serve_until_interrupted(server)
