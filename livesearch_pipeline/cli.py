"""`livesearch`: the command line for work outside the Dagster UI.

Each area registers its own subcommands (a `register(subparsers)` function in the modules
listed below) so that the CLI stays a thin dispatcher over library functions.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

COMMAND_MODULES = (
    "livesearch_pipeline.core_commands",
    "livesearch_pipeline.dataservice.commands",
    "livesearch_pipeline.evaluation.commands",
    "livesearch_pipeline.web.commands",
    "livesearch_pipeline.site.commands",
    "livesearch_pipeline.pipeline_commands",
)


def _offline_llm_defaults() -> None:
    # litellm reads these at import time; set them before anything can import it.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="livesearch",
        description="LiveSearch: a live benchmark of financial search agents.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    _offline_llm_defaults()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BaseExceptionGroup as group:
        # The group's own message hides the cause; the last line names the innermost one.
        from livesearch_pipeline.core.errors import describe_exception

        print(f"livesearch {args.command}: error: {describe_exception(group)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
