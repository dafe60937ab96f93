"""An in-memory ToolClient and a tiny deterministic market for executor tests.

Tools are plain functions of their arguments. Failures are scripted per tool: each call pops
the next scripted step (an exception to raise, or a delay in seconds before answering), so a
test states exactly which attempt fails and how.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from typing import Any

from livesearch_pipeline.core.calendars import sessions_between
from livesearch_pipeline.core.client import ToolCallError, ToolClient

Handler = Callable[[dict[str, Any]], dict[str, Any]]
# An exception to raise, a delay before answering normally, or (delay, exception).
ScriptStep = BaseException | float | tuple[float, BaseException]


class FakeToolClient(ToolClient):
    def __init__(self, tools: Mapping[str, Handler], *, delay_s: float = 0.0, identity: str = "fake-service"):
        self._tools = dict(tools)
        self._delay_s = delay_s
        self._identity = identity
        self._script: dict[str, list[tuple[dict[str, Any], deque[ScriptStep]]]] = defaultdict(list)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def identity(self) -> str:
        return self._identity

    def script(self, tool: str, *steps: ScriptStep, when: Mapping[str, Any] | None = None) -> None:
        """Queue what the next calls of `tool` do: raise an exception, or wait n seconds first.

        With `when`, the steps apply only to calls whose arguments include those items.
        """
        self._script[tool].append((dict(when or {}), deque(steps)))

    def _next_step(self, name: str, arguments: dict[str, Any]) -> ScriptStep | None:
        for when, steps in self._script[name]:
            if steps and all(arguments.get(k) == v for k, v in when.items()):
                return steps.popleft()
        return None

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((name, dict(arguments)))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            delay = self._delay_s
            step = self._next_step(name, arguments)
            if isinstance(step, BaseException):
                step = (self._delay_s, step)
            if isinstance(step, tuple):
                await asyncio.sleep(step[0])
                raise step[1]
            if step is not None:
                delay = step
            await asyncio.sleep(delay)
            if name not in self._tools:
                raise ToolCallError(name, f"unknown tool {name!r}")
            return self._tools[name](arguments)
        finally:
            self.in_flight -= 1


# --------------------------------------------------------------------------- a tiny market


def _ymd(day: dt.date) -> str:
    return day.strftime("%Y%m%d")


def _parse(text: str) -> dt.date:
    return dt.datetime.strptime(text, "%Y%m%d").date()


def close_of(ts_code: str, day: dt.date) -> float:
    """The fake market's close: a fixed function of code and day, so tests can recompute it."""
    base = 10 + sum(map(ord, ts_code)) % 40
    return round(base + (day.toordinal() % 11) * 0.37, 2)


def daily(args: dict[str, Any]) -> dict[str, Any]:
    """Tushare-style `daily`: one record per XSHG session in the window, newest first."""
    if "trade_date" in args:
        start = end = _parse(args["trade_date"])
    else:
        start, end = _parse(args["start_date"]), _parse(args["end_date"])
    code = args["ts_code"]
    items = [
        {"ts_code": code, "trade_date": _ymd(day), "close": close_of(code, day), "vol": 1000 + day.day}
        for day in reversed(sessions_between("XSHG", start, end))
    ]
    return {"items": items}


INDEX_MEMBERS = {"000300.SH": [("600001.SH", 0.4), ("600002.SH", 2.5), ("600003.SH", 1.1)]}


def index_weight(args: dict[str, Any]) -> dict[str, Any]:
    members = INDEX_MEMBERS.get(args["index_code"], [])
    return {
        "items": [
            {"index_code": args["index_code"], "con_code": code, "trade_date": args["trade_date"], "weight": w}
            for code, w in members
        ]
    }


MARKET_TOOLS: dict[str, Handler] = {"daily": daily, "index_weight": index_weight}
