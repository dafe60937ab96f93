"""`livesearch` subcommands of the dataservice area: `serve-data` and `tools`."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from typing import Any

from livesearch_pipeline.cliargs import iso_date, positive_int
from livesearch_pipeline.core.catalog import Catalog


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names nothing; give comma-separated names")
    return names


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this area's subcommands to the `livesearch` parser."""
    from livesearch_pipeline.dataservice.market import DEFAULT_SEED

    serve = subparsers.add_parser(
        "serve-data",
        help="serve the embedded data service over MCP (stdio or HTTP)",
        description="Over HTTP, clients must send the bearer token in $LIVESEARCH_DATA_SERVICE_TOKEN when it is set; "
        "it must be set to bind an address other than loopback.",
    )
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765,
                       help="HTTP port (default 8765); MCP endpoint /mcp, Tushare's wire format at /dataapi/<api_name>")
    serve.add_argument("--clock", type=iso_date, default=None, help="fix the service date YYYY-MM-DD (default: today)")
    serve.add_argument("--tools", type=_names, default=[], metavar="A,B",
                       help="serve only these tools (comma-separated names; with --services: these plus theirs)")
    serve.add_argument("--services", type=_names, default=[], metavar="X,Y",
                       help="serve only the tools of these services (see `livesearch tools`)")
    serve.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"market seed (default {DEFAULT_SEED})")
    serve.add_argument(
        "--provider",
        choices=("synthetic", "tushare"),
        default="synthetic",
        help="synthetic market (default) or forward to Tushare Pro (needs TUSHARE_TOKEN)",
    )
    serve.add_argument("--tushare-url", default=None, help="Tushare Pro endpoint (default: the official one)")
    serve.add_argument(
        "--tushare-calls-per-minute",
        type=positive_int,
        default=None,
        help="your account's per-interface quota (default: $TUSHARE_CALLS_PER_MINUTE or 200); calls beyond it "
        "are answered 'retry after N s' instead of being sent",
    )
    serve.set_defaults(func=serve_data_command)

    tools = subparsers.add_parser("tools", help="list the data service's tools (services, roles, asset classes)")
    tools.add_argument("--json", action="store_true", help="print the catalog as JSON")
    tools.add_argument("--service", default=None, help="only tools of this service")
    tools.add_argument("--role", choices=("data", "search", "intraday", "utility"), default=None)
    tools.add_argument("--clock", type=iso_date, default=None)
    tools.add_argument("--seed", type=int, default=DEFAULT_SEED)
    tools.add_argument("--url", default=None, help="list an external MCP server (streamable HTTP URL) instead")
    tools.add_argument("--manifest", default=None, help="YAML service manifest for an external server's tools")
    tools.set_defaults(func=tools_command)


def _service(args: argparse.Namespace) -> Any:
    from livesearch_pipeline.dataservice.catalog import ServiceConfig, collect_tool_specs, select_specs
    from livesearch_pipeline.dataservice.server import DataService, ForwardingService

    specs = select_specs(collect_tool_specs(), tools=args.tools, services=args.services)
    if args.provider == "tushare":
        from livesearch_pipeline.dataservice.tushare import TUSHARE_URL, TushareClient

        local_only = [spec.name for spec in specs if not spec.meta.is_provider_tool and spec.name in args.tools]
        if local_only:
            raise ValueError(f"tool(s) {', '.join(local_only)} belong to the embedded market only; "
                             "--provider tushare forwards data tools and trading calendars")
        local = DataService(specs, config=ServiceConfig(seed=args.seed, clock=args.clock))
        # The server never holds a call to wait for quota (its callers' read timeouts would
        # expire): it answers "retry after N s" and the client waits (dataservice/quota.py).
        client = TushareClient(
            url=args.tushare_url or TUSHARE_URL, catalog=local.catalog,
            calls_per_minute=args.tushare_calls_per_minute, wait_for_quota=False,
        )
        return ForwardingService(client, local.specs)
    return DataService(specs, config=ServiceConfig(seed=args.seed, clock=args.clock))


def clock_line(args: argparse.Namespace, today: dt.date) -> str:
    """The first line `serve-data` prints (stderr): which clock it serves, and how to fix it."""
    if args.provider == "tushare":
        return ("livesearch serve-data: no service clock: Tushare Pro answers with its live data "
                "(point-in-time cut-offs apply to the synthetic market only)")
    if args.clock is not None:
        return f"livesearch serve-data: clock fixed at {args.clock.isoformat()} (nothing dated after it is served)"
    return (f"livesearch serve-data: clock = today ({today.isoformat()} now; it follows this machine's date, so "
            "'latest' rolls forward); pass --clock YYYY-MM-DD for a fixed, reproducible market")


def serve_data_command(args: argparse.Namespace) -> int:
    import anyio

    from livesearch_pipeline.dataservice.server import AUTH_TOKEN_ENV, bind_socket, check_http_auth, http_server, serve_stdio

    token = os.environ.get(AUTH_TOKEN_ENV) or None  # never a command-line flag: `ps` would show it
    try:
        if args.transport == "http":
            check_http_auth(args.host, token)
        # e.g. no TUSHARE_TOKEN, a malformed TUSHARE_CALLS_PER_MINUTE, an unknown tool or service
        service = _service(args)
    except ValueError as exc:
        print(f"livesearch serve-data: {exc}", file=sys.stderr)
        return 2
    print(clock_line(args, dt.date.today()), file=sys.stderr, flush=True)
    if args.transport == "stdio":
        anyio.run(serve_stdio, service)
        return 0
    sock = bind_socket(args.host, args.port)
    host, port = sock.getsockname()[:2]
    auth = f"bearer token required (${AUTH_TOKEN_ENV})" if token else "no authentication (loopback only)"
    print(f"serving {service.identity} ({len(service.mcp_tools)} tools) at http://{host}:{port}/mcp; Tushare's wire "
          f"format at http://{host}:{port}/dataapi/<api_name>; {auth}", file=sys.stderr, flush=True)
    http_server(service, host=args.host, port=port, log_level="info", token=token).run(sockets=[sock])
    return 0


async def _external_catalog(url: str, manifest_path: str | None) -> Catalog:
    from livesearch_pipeline.dataservice.client import McpToolClient
    from livesearch_pipeline.dataservice.manifest import load_manifest

    manifest = load_manifest(manifest_path) if manifest_path else None
    async with McpToolClient.url(url, manifest=manifest) as client:
        return await client.list_tools()


def tools_command(args: argparse.Namespace) -> int:
    if args.url:
        import anyio

        catalog = anyio.run(_external_catalog, args.url, args.manifest)
    else:
        from livesearch_pipeline.dataservice.catalog import ServiceConfig
        from livesearch_pipeline.dataservice.server import DataService

        catalog = DataService(config=ServiceConfig(seed=args.seed, clock=args.clock)).catalog
    tools = [
        t
        for t in catalog.tools
        if (args.service is None or t.service == args.service) and (args.role is None or t.role == args.role)
    ]
    if args.json:
        print(json.dumps({"service": catalog.service, "tools": [t.model_dump(mode="json") for t in tools]}, ensure_ascii=False, indent=2))
        return 0
    print(render_tool_table(catalog.service, tools))
    return 0


def render_tool_table(service: str, tools: list[Any]) -> str:
    rows = [("TOOL", "SERVICE", "ROLE", "ASSET CLASSES", "DATES", "TIME KEY", "REFRESH")]
    for t in tools:
        dates = ",".join(d.name for d in t.date_params) or "-"
        rows.append((t.name, t.service, t.role, ",".join(t.asset_classes), dates, t.time_key or "-", t.refresh_class))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    services = sorted({t.service for t in tools})
    data_count = sum(1 for t in tools if t.role == "data")
    lines.append(f"\n{len(tools)} tools ({data_count} data tools) in {len(services)} services: {', '.join(services)}")
    lines.append(f"service: {service}")
    return "\n".join(lines)
