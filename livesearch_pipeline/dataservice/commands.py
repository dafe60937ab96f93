"""`livesearch` subcommands of the dataservice area."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this area's subcommands to the `livesearch` parser."""
