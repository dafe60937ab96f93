"""`livesearch site build | serve`: the public static site under data/site/, built and served on 127.0.0.1."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from livesearch_pipeline.cliargs import iso_date

DEFAULT_PORT = 8900


def register(subparsers: argparse._SubParsersAction) -> None:
    site = subparsers.add_parser("site", help="the benchmark's public static site (data/site/): build or serve it")
    actions = site.add_subparsers(dest="site_command", required=True, metavar="ACTION")
    build = actions.add_parser(
        "build", help="build or update the site from the frozen days (incremental: an unchanged day is not rebuilt)",
        description="Reads the gold, served sets, runs, leaderboards, stale-gold audits and evidence maps under the "
        "data root (LIVESEARCH_DATA_DIR) and writes data/site/. Gold that could still be tomorrow's answer is "
        "withheld (the live-answer rule, on the site's methodology page).")
    serve = actions.add_parser("serve", help="serve the built site over HTTP (127.0.0.1 by default)")
    for parser in (build, serve):
        parser.add_argument("--date", type=iso_date, default=None,
                            help="the site's latest day (default: the latest frozen day under the data root)")
        parser.add_argument("--out", type=Path, default=None, help="the site's folder (default: <data>/site)")
    for parser in (build, serve):
        parser.add_argument("--repository", default=None, metavar="URL",
                            help="the benchmark repository's public address, linked from the agent cards and the "
                            "Run-it-yourself page (default: $LIVESEARCH_SITE_REPOSITORY; none: named without a link)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    serve.add_argument("--build", action="store_true", help="build (or update) the site first")
    serve.add_argument("--verbose", action="store_true", help="log one line per request to stderr")
    build.set_defaults(func=build_command)
    serve.set_defaults(func=serve_command)


def _build(args: argparse.Namespace):
    import datetime as dt

    from livesearch_pipeline.settings import DataPaths
    from livesearch_pipeline.site.build import SiteBuildError, build_site
    from livesearch_pipeline.site.inputs import SiteInputError

    paths = DataPaths.from_env()
    try:
        return build_site(paths, args.date or dt.date.max, args.out,
                          progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True),
                          repository=args.repository)
    except (SiteBuildError, SiteInputError) as exc:
        raise SystemExit(f"livesearch site build: error: {exc}") from None
    except OSError as exc:  # a full disk, a read-only folder: one line, never a traceback
        where = f" ({exc.filename})" if exc.filename else ""
        raise SystemExit(f"livesearch site build: error: cannot write the site{where}: {exc.strerror or exc}; "
                         "fix: free space or choose a writable --out, then build again") from None


def build_command(args: argparse.Namespace) -> int:
    print(_build(args).line())
    return 0


def serve_command(args: argparse.Namespace) -> int:
    from livesearch_pipeline.infra.serving import serve_until_interrupted
    from livesearch_pipeline.settings import DataPaths
    from livesearch_pipeline.site.build import site_dir
    from livesearch_pipeline.site.serve import SiteServeError, make_server

    folder = args.out or site_dir(DataPaths.from_env())
    if args.build:
        print(_build(args).line())
    try:
        server = make_server(folder, args.host, args.port, quiet=not args.verbose)
    except SiteServeError as exc:
        raise SystemExit(f"livesearch site serve: error: {exc}") from None
    except OSError as exc:
        raise SystemExit(f"livesearch site serve: error: cannot listen on {args.host}:{args.port}: {exc}") from None
    host, port = server.server_address[:2]
    print(f"serving {folder} at http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    return serve_until_interrupted(server)
