"""The catalog table's row type: one `ToolSpec` per tool of the embedded service.

The MCP server is generated from these rows (input schema from `params`, output schema from
`meta.fields`, `_meta` from `meta`); nothing is written per tool but its handler.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Protocol

from livesearch_pipeline.core.catalog import ToolMeta

ParamType = Literal["str", "int", "float", "date", "month", "quarter"]


class ToolInputError(ValueError):
    """Bad arguments: the message is returned to the caller as an MCP tool error, so it says
    what is wrong and how to fix it (valid formats, ranges, an example code)."""


@dataclass(frozen=True)
class ParamSpec:
    name: str
    type: ParamType
    description: str
    required: bool = False
    # For type "date": the strftime format the tool accepts (Tushare: %Y%m%d).
    fmt: str | None = None
    enum: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ToolContext:
    """What a handler may use: the market model, the service clock and the seed."""

    market: Any  # livesearch_pipeline.dataservice.market.Market
    clock: dt.date
    seed: int


class Handler(Protocol):
    def __call__(self, ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
        """Return records newest first. `args` are parsed: dates as dt.date, ints as int.
        A window's end after the clock arrives cut to the clock; a call whose other dates lie
        after the clock is answered by the server with no rows and never reaches the handler.
        Paging, field selection and the final "nothing after the clock" filter on
        `meta.time_key` are applied by the server."""


@dataclass(frozen=True)
class ToolSpec:
    meta: ToolMeta
    params: tuple[ParamSpec, ...]
    handler: Handler
    # Fields a caller may pass in `fields` to narrow the records (default: all of meta.fields).
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.meta.name


HandlerFn = Callable[[ToolContext, dict[str, Any]], list[dict[str, Any]]]
