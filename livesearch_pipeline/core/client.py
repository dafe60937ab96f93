"""The abstract tool client the executor runs programs against.

Implementations: an MCP client session (dataservice), the Tushare forwarder, in-memory fakes.
A tool returns its structured content: a JSON object whose records list is usually `items`.
"""

from __future__ import annotations

import abc
import datetime as dt
from contextlib import AbstractAsyncContextManager
from typing import Any, Callable


class ToolCallError(Exception):
    """A tool call failed. `transient` failures (timeouts, overload) may be retried."""

    def __init__(self, tool: str, message: str, *, transient: bool = False) -> None:
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.message = message
        self.transient = transient


class ToolClient(abc.ABC):
    @abc.abstractmethod
    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call one tool; return its structured content or raise ToolCallError."""

    @property
    @abc.abstractmethod
    def identity(self) -> str:
        """A stable description of the service behind the client (recorded in manifests)."""


# A client of the data service whose clock is fixed at the given day (its point-in-time cut-off):
# what the replay, the candidates' second execution and the gold shards open a day with.
OpenAt = Callable[[dt.date], AbstractAsyncContextManager[ToolClient]]
