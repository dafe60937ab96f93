"""`livesearch agent run`: put a day's served questions to one agent and write its predictions.

    livesearch agent run --agent oracle|stale|closed-book|web|plugin \
        --served data/served/served_questions_<D>.jsonl --out DIR [--date D] [--model M] ...

Writes DIR/predictions.jsonl and DIR/predictions.meta.json; rerunning the same command resumes
an interrupted run. Exit 0 when every question has a line (errors included), 2 on bad inputs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import sys
from pathlib import Path
from typing import AsyncIterator

from typing import TYPE_CHECKING

from livesearch_pipeline.cliargs import iso_date, positive_int
from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.core.models import ReadBudget
from livesearch_pipeline.evaluation.agents.loop import LoopLimits
from livesearch_pipeline.settings import DataPaths

if TYPE_CHECKING:
    from livesearch_pipeline.evaluation.agents.base import Agent, RunReport

AGENT_KINDS = ("oracle", "stale", "closed-book", "web", "plugin")
ENV_SEARXNG_URL = "LIVESEARCH_SEARXNG_URL"


def register_agent_commands(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add `livesearch agent run` to the `livesearch` parser; returns the `agent` actions for more."""
    agent = subparsers.add_parser("agent", help="run an agent on a day's served questions")
    actions = agent.add_subparsers(dest="agent_command", required=True, metavar="ACTION")
    run = actions.add_parser("run", help="answer every served question; resumes an interrupted run")
    run.add_argument("--agent", required=True, choices=AGENT_KINDS)
    run.add_argument("--served", required=True, type=Path, help="served_questions_<D>.jsonl")
    run.add_argument("--out", required=True, type=Path, help="run folder for predictions.jsonl + .meta.json")
    run.add_argument("--date", type=iso_date, default=None,
                     help="partition date D (default: from the served file's name)")
    run.add_argument("--concurrency", type=positive_int, default=4, help="questions in flight (default 4)")
    run.add_argument("--retry-errors", action="store_true",
                     help="on resume, ask again the questions whose line recorded an error")
    llm = run.add_argument_group("LLM agents (closed-book, web, plugin)")
    llm.add_argument("--model", default=None, help="litellm model (default: $LIVESEARCH_LLM_MODEL)")
    llm.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint (default: $LIVESEARCH_LLM_API_BASE); "
                     "another endpoint gets the key in --api-key-env, never $LIVESEARCH_LLM_API_KEY")
    llm.add_argument("--api-key-env", default=None, help="with --api-base: the LIVESEARCH_AGENT_<NAME>_KEY variable "
                     "holding its key (no other variable is ever read for an agent's endpoint)")
    llm.add_argument("--max-steps", type=positive_int, default=LoopLimits.max_steps, help="model calls per question")
    llm.add_argument("--max-tokens", type=positive_int, default=LoopLimits.max_tokens,
                     help="total tokens per question")
    llm.add_argument("--time-limit", type=float, default=LoopLimits.time_limit_s, help="seconds per question")
    llm.add_argument("--lang", choices=("en", "zh"), default="en",
                     help="closed-book, plugin: the text to ask, 'zh' = the Chinese text where a question has one "
                          "(each prediction records the text answered; default en)")
    llm.add_argument("--llm-cache", type=Path, default=None,
                     help="request-hash cache folder for model calls (default: $LIVESEARCH_DATA_DIR/cache/llm)")
    web = run.add_argument_group("web agent")
    web.add_argument("--searxng-url", default=None, help=f"SearXNG base URL (default: ${ENV_SEARXNG_URL})")
    web.add_argument("--max-reads", type=positive_int, default=None,
                     help="distinct pages the agent may read per question; a read beyond is refused and recorded "
                          "(default: no limit; the run's metadata declares the budget)")
    web.add_argument("--max-searches", type=positive_int, default=None,
                     help="searches the agent may run per question, refused beyond (default: no limit)")
    data = run.add_argument_group("oracle, stale and plugin agents")
    data.add_argument("--pool", type=Path, default=None, help="oracle: questions.jsonl of a built pool, checked before it runs against the "
                      "pool_manifest.json beside it and ../construction/tool_catalog.json "
                      "(default: $LIVESEARCH_DATA_DIR/pool/questions.jsonl)")
    data.add_argument("--gold-dir", type=Path, default=None, help="gold snapshots (default: $LIVESEARCH_DATA_DIR/gold)")
    data.add_argument("--mcp-url", default=None,
                      help="data service MCP URL (default: the embedded service in-process, clock = D)")
    data.add_argument("--seed", type=int, default=None, help="embedded service seed (default: its default)")
    data.add_argument("--services", default=None, help="plugin: comma-separated services to offer (default: all)")
    run.set_defaults(func=agent_run_command)
    return actions


@contextlib.asynccontextmanager
async def _data_client(args: argparse.Namespace, as_of: dt.date) -> AsyncIterator[object]:
    from livesearch_pipeline.dataservice.client import McpToolClient

    if args.mcp_url:
        client = McpToolClient.url(args.mcp_url)
    else:
        from livesearch_pipeline.dataservice.catalog import ServiceConfig
        from livesearch_pipeline.dataservice.server import DataService

        config = ServiceConfig(clock=as_of) if args.seed is None else ServiceConfig(seed=args.seed, clock=as_of)
        client = McpToolClient.in_process(DataService(config=config))
    async with client:
        yield client


def _chat_model(args: argparse.Namespace) -> object:
    from livesearch_pipeline.evaluation.agents.chat import LitellmChatModel
    from livesearch_pipeline.infra.llm import LLMSettings, agent_key_from_env

    from livesearch_pipeline.settings import DataPaths

    key_env = getattr(args, "api_key_env", None)
    # Only a LIVESEARCH_AGENT_<NAME>_KEY variable, set and non-empty: never another secret of the project.
    key = agent_key_from_env(key_env, owner=f"--api-key-env for {args.api_base}") if key_env else None
    return LitellmChatModel.from_settings(LLMSettings.from_env(), model=args.model, api_base=args.api_base, api_key=key,
                                          cache_dir=args.llm_cache or DataPaths.from_env().llm_cache)


def _limits(args: argparse.Namespace) -> LoopLimits:
    return LoopLimits(max_steps=args.max_steps, max_tokens=args.max_tokens, time_limit_s=args.time_limit)


@contextlib.asynccontextmanager
async def build_agent(args: argparse.Namespace, as_of: dt.date) -> AsyncIterator[Agent]:
    """The agent `args` ask for, with its resources open for the length of the run."""
    if args.agent == "stale":
        from livesearch_pipeline.core.snapshot import SnapshotStore
        from livesearch_pipeline.evaluation.agents.stale import StaleAgent

        yield StaleAgent.from_store(SnapshotStore(args.gold_dir or DataPaths.from_env().gold), as_of)
    elif args.agent == "oracle":
        from livesearch_pipeline.core.pool import load_checked_pool, read_pool_catalog
        from livesearch_pipeline.evaluation.agents.oracle import OracleAgent

        # The pool is checked before it runs: its manifest's sha256, and every program against the
        # catalog it was built from (the one the pool carries; for an older pool, the construction
        # directory beside it) with the bounds.
        pool_dir = args.pool.parent if args.pool else DataPaths.from_env().pool
        _, pool = load_checked_pool(pool_dir, read_pool_catalog(pool_dir, pool_dir.parent / "construction"))
        async with _data_client(args, as_of) as client:
            yield OracleAgent(pool=pool, client=client, as_of=as_of)
    elif args.agent == "closed-book":
        from livesearch_pipeline.evaluation.agents.closed_book import ClosedBookAgent

        yield ClosedBookAgent(chat_model=_chat_model(args), as_of=as_of, lang=args.lang)
    elif args.agent == "web":
        import httpx

        from livesearch_pipeline.evaluation.agents.web import WebAgent, WebTools, WebToolsConfig

        searxng_url = args.searxng_url or os.environ.get(ENV_SEARXNG_URL)
        if not searxng_url:
            from livesearch_pipeline.evaluation.agents.base import AgentRunError

            raise AgentRunError(f"the web agent needs --searxng-url or ${ENV_SEARXNG_URL}")
        async with httpx.AsyncClient() as http:
            tools = WebTools(WebToolsConfig(searxng_url=searxng_url), http)
            yield WebAgent(chat_model=_chat_model(args), tools=tools, as_of=as_of, limits=_limits(args),
                           budget=ReadBudget(max_reads=args.max_reads, max_searches=args.max_searches))
    else:
        from livesearch_pipeline.evaluation.agents.plugin import PluginAgent

        services = frozenset(s.strip() for s in args.services.split(",") if s.strip()) if args.services else None
        async with _data_client(args, as_of) as client:
            yield PluginAgent(chat_model=_chat_model(args), source=client, as_of=as_of,
                              limits=_limits(args), services=services, lang=args.lang)


async def _run(args: argparse.Namespace, as_of: dt.date) -> RunReport:
    from livesearch_pipeline.evaluation.agents.base import load_served, run_agent
    from livesearch_pipeline.evaluation.writers import run_folder_writer

    served = load_served(args.served)
    # Before anything is written: not a protected folder, no symlinked file (a write through it would
    # land elsewhere), and one writer per run folder (a second writer is refused, naming the first).
    with run_folder_writer(Path(args.out), what="agent run --out"):
        async with build_agent(args, as_of) as agent:
            return await run_agent(agent, served, args.out, date=as_of, concurrency=args.concurrency,
                                   retry_errors=args.retry_errors)


def _first_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def agent_run_command(args: argparse.Namespace) -> int:
    # The runner pulls in the evaluator (to read served files its way); only commands that run pay.
    from livesearch_pipeline.evaluation.agents.base import AgentRunError, date_from_served_path

    named = date_from_served_path(args.served)
    as_of = args.date or named
    if as_of is None:
        print(f"error: pass --date: {args.served.name} is not named served_questions_<YYYY-MM-DD>.jsonl",
              file=sys.stderr)
        return 2
    if named is not None and named != as_of:
        print(f"error: --date {as_of} contradicts the served file {args.served.name}", file=sys.stderr)
        return 2
    expected = (AgentRunError, ToolCallError, OSError, ValueError, RuntimeError)
    try:
        report = asyncio.run(_run(args, as_of))
    except expected as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except BaseExceptionGroup as group:  # the MCP client's task group wraps what the run raised inside it
        leaf = _first_leaf(group)
        if not isinstance(leaf, expected):
            raise
        print(f"error: {type(leaf).__name__}: {leaf}", file=sys.stderr)
        return 2
    print(f"{args.agent} on {as_of}: {report.served} served, {report.already_answered} already answered, "
          f"{report.asked} asked, {report.errors} errors, {report.wall_s:.1f} s -> {report.predictions_path}")
    return 0
