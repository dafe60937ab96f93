"""`run`: `asyncio.run` for coroutines whose result is large.

On Python 3.11, `asyncio.run` in the main thread formats the repr of its finished main task
twice while it restores the SIGINT handler (CPython gh-112559: `signal.getsignal` tries
`Handlers(handler)`, whose ValueError message embeds the repr of the handler's partial, which
holds the task, whose repr holds `result=` in full before reprlib cuts it). For a stage that
returns 27,000 candidates or a day of 30,000 replayed answers, that repr costs seconds of
pure waste (measured: 24 s of a 176 s profile of the dynamics replay). Keeping the result out
of the task (it returns None; the value travels in a closure) removes the cost and changes
nothing else: exceptions propagate as they do from `asyncio.run`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Coroutine, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, returning `main`'s result without ever formatting its repr."""
    box: list[T] = []

    async def keep() -> None:
        box.append(await main)

    asyncio.run(keep())
    return box[0]
