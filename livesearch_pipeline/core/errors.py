"""The cause a person needs from an exception: the innermost one of an exception group.

`asyncio.TaskGroup` and anyio wrap a failure inside `async with` blocks (the MCP client's
session) in an ExceptionGroup whose own message, "unhandled errors in a TaskGroup (1
sub-exception)", hides the cause. `innermost_exception` walks down to the first leaf.
"""

from __future__ import annotations


def innermost_exception(exc: BaseException) -> BaseException:
    """The first leaf of nested exception groups (`exc` itself when it is not a group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def leaf_count(exc: BaseException) -> int:
    if isinstance(exc, BaseExceptionGroup):
        return sum(leaf_count(e) for e in exc.exceptions)
    return 1


def describe_exception(exc: BaseException) -> str:
    """`Type: message` of the innermost cause, noting the other failures of a group."""
    leaf = innermost_exception(exc)
    text = f"{type(leaf).__name__}: {leaf}"
    others = leaf_count(exc) - 1
    return text + (f" (and {others} other failure(s) in the same task group)" if others > 0 else "")
