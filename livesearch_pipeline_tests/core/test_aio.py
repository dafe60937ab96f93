"""core.aio.run: asyncio.run without formatting the repr of a large result (CPython gh-112559)."""

from __future__ import annotations

import pytest

from livesearch_pipeline.core import aio


class _CountsRepr:
    reprs = 0

    def __repr__(self) -> str:
        type(self).reprs += 1
        return "<big>"


async def _result() -> _CountsRepr:
    return _CountsRepr()


def test_the_result_is_returned_and_its_repr_never_formatted() -> None:
    _CountsRepr.reprs = 0
    value = aio.run(_result())
    assert isinstance(value, _CountsRepr)
    assert _CountsRepr.reprs == 0


async def _fails() -> None:
    raise LookupError("the cause, unchanged")


def test_exceptions_propagate_as_from_asyncio_run() -> None:
    with pytest.raises(LookupError, match="the cause, unchanged"):
        aio.run(_fails())
