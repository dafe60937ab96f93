"""The catalog table of the embedded data service: every tool's `ToolSpec`, checked once.

Tool modules (one per area, written independently) each export `TOOLS: list[ToolSpec]`; this
module collects them into one table, checks that the table is coherent (unique names, metadata
that points at real parameters and fields) and turns it into the core `Catalog` the pipeline
reads. The MCP server is generated from the same table (dataservice/server.py).
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from livesearch_pipeline.core.catalog import HELPER_SERVICE, Catalog, ToolMeta, role_problems
from livesearch_pipeline.dataservice.market import DEFAULT_SEED
from livesearch_pipeline.dataservice.spec import ToolSpec

SERVICE_NAME = "livesearch-synthetic-market"
SERVICE_VERSION = "1"

# The nine data services of the paper; non-data tools (search/intraday/utility) live in "utility".
DATA_SERVICES = (
    "reference",
    "cn_quotes",
    "hk_us",
    "indices",
    "funds",
    "statements",
    "corporate",
    "microstructure",
    "macro",
)
UTILITY_SERVICE = HELPER_SERVICE  # one name for the helpers' service (core.catalog)

TOOL_MODULES = (
    "quotes_cn",
    "hk_us",
    "indices",
    "funds",
    "micro",
    "reference",
    "statements",
    "events",
    "macro",
    "utility",
)
TOOLS_PACKAGE = "livesearch_pipeline.dataservice.tools"

# Parameters the server adds to every tool; a tool may not declare them itself.
COMMON_PARAMS = ("limit", "offset", "fields")
DATE_PARAM_TYPES = ("date", "month", "quarter")


class CatalogError(ValueError):
    """The catalog table is inconsistent (a programming error in a tool module)."""


@dataclass(frozen=True)
class ServiceConfig:
    """How the embedded service runs: its seed and its clock.

    `clock=None` means the real date, read again on every call so that "latest" rolls forward
    with the calendar; a fixed clock serves tests and reproducible backfills.
    """

    seed: int = DEFAULT_SEED
    clock: dt.date | None = None

    def today(self) -> dt.date:
        return self.clock if self.clock is not None else dt.date.today()

    @property
    def identity(self) -> str:
        clock = self.clock.isoformat() if self.clock is not None else "today"
        return f"{SERVICE_NAME}/{SERVICE_VERSION} seed={self.seed} clock={clock}"


def collect_tool_specs(modules: Sequence[str] = TOOL_MODULES) -> tuple[ToolSpec, ...]:
    """Import each tool module of `dataservice/tools` and return its TOOLS, checked."""
    specs: list[ToolSpec] = []
    for module_name in modules:
        module = importlib.import_module(f"{TOOLS_PACKAGE}.{module_name}")
        tools = getattr(module, "TOOLS", None)
        if not isinstance(tools, list) or not all(isinstance(t, ToolSpec) for t in tools):
            raise CatalogError(f"{TOOLS_PACKAGE}.{module_name} must export TOOLS: list[ToolSpec]")
        specs.extend(tools)
    check_tool_specs(specs)
    return tuple(specs)


def check_tool_specs(specs: Iterable[ToolSpec]) -> None:
    """Raise CatalogError naming every inconsistency found in the table."""
    problems: list[str] = []
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            problems.append(f"tool name {spec.name!r} is defined more than once")
        seen.add(spec.name)
        problems.extend(_spec_problems(spec))
    if problems:
        raise CatalogError("inconsistent tool catalog:\n  " + "\n  ".join(problems))


def _spec_problems(spec: ToolSpec) -> list[str]:
    meta, where = spec.meta, f"tool {spec.name!r}"
    params = {p.name: p for p in spec.params}
    field_names = {f.name for f in meta.fields}
    problems: list[str] = []
    if len(params) != len(spec.params):
        problems.append(f"{where}: a parameter name is declared twice")
    problems.extend(
        f"{where}: parameter {name!r} is reserved (the server adds it to every tool)"
        for name in COMMON_PARAMS
        if name in params
    )
    if meta.role == "data" and meta.service not in DATA_SERVICES:
        problems.append(f"{where}: data service {meta.service!r} is not one of {', '.join(DATA_SERVICES)}")
    # A trading calendar is a utility of the reference service (the paper's reference/calendar
    # service): it answers "is D a session", never a question; search and intraday tools are not
    # part of any data service.
    if meta.role == "utility" and meta.service not in (UTILITY_SERVICE, *DATA_SERVICES):
        problems.append(f"{where}: utility service {meta.service!r} is neither {UTILITY_SERVICE!r} nor a data service")
    if meta.role in ("search", "intraday") and meta.service != UTILITY_SERVICE:
        problems.append(f"{where}: role {meta.role!r} tools belong to service {UTILITY_SERVICE!r}")
    if not meta.asset_classes:
        problems.append(f"{where}: no asset classes")
    if not meta.fields:
        problems.append(f"{where}: no record fields declared")
    if len(field_names) != len(meta.fields):
        problems.append(f"{where}: a record field is declared twice")
    if meta.entity_param is not None and meta.entity_param not in params:
        problems.append(f"{where}: entity_param {meta.entity_param!r} is not a parameter")
    for date_param in meta.date_params:
        param = params.get(date_param.name)
        if param is None:
            problems.append(f"{where}: date parameter {date_param.name!r} is not a parameter")
        elif param.type not in DATE_PARAM_TYPES:
            problems.append(f"{where}: date parameter {date_param.name!r} has type {param.type!r}")
    for param in spec.params:
        if param.type == "date" and not param.fmt:
            problems.append(f"{where}: date parameter {param.name!r} has no fmt")
    problems.extend(f"{where}: {problem}" for problem in role_problems(meta))
    if meta.time_key is not None:
        if meta.time_key not in field_names:
            problems.append(f"{where}: time_key {meta.time_key!r} is not a record field")
        if not meta.time_key_fmt:
            problems.append(f"{where}: time_key {meta.time_key!r} has no time_key_fmt")
    return problems


def select_specs(
    specs: Sequence[ToolSpec], *, tools: Sequence[str] = (), services: Sequence[str] = (),
) -> tuple[ToolSpec, ...]:
    """The tools named in `tools` plus every tool of the `services`, in catalog order; with
    neither, all of `specs`. Raises ValueError naming the unknown names and listing valid ones."""
    if not tools and not services:
        return tuple(specs)
    names = [spec.name for spec in specs]
    known_services = sorted({spec.meta.service for spec in specs})
    problems = []
    unknown_tools = [t for t in tools if t not in names]
    if unknown_tools:
        problems.append(f"unknown tool(s) {', '.join(unknown_tools)}; valid tools: {', '.join(names)}")
    unknown_services = [s for s in services if s not in known_services]
    if unknown_services:
        problems.append(f"unknown service(s) {', '.join(unknown_services)}; valid services: {', '.join(known_services)}")
    if problems:
        raise ValueError("; ".join(problems))
    return tuple(spec for spec in specs if spec.name in tools or spec.meta.service in services)


def build_catalog(specs: Iterable[ToolSpec], config: ServiceConfig) -> Catalog:
    """The core Catalog of the table: tool metadata plus the service identity."""
    metas: list[ToolMeta] = [spec.meta for spec in specs]
    return Catalog(service=config.identity, tools=metas)


def data_tool_services(catalog: Catalog) -> dict[str, int]:
    """Number of data tools per service (how the paper counts its 96 tools over 9 services)."""
    counts: dict[str, int] = {}
    for tool in catalog.data_tools():
        counts[tool.service] = counts.get(tool.service, 0) + 1
    return dict(sorted(counts.items()))
