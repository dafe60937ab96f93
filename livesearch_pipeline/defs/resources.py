"""Resources shared by every asset: the data service, the storage root and the LLM.

Settings reach assets, checks and sensors only through resources. Nothing here reads the
environment when the definitions load: every field a deployment may set from the environment
is either a `dg.EnvVar` (resolved by Dagster when a run starts; an unset variable fails the
run naming it — used where there is no sane default, e.g. the alert webhook) or an optional
field whose unset value is read from its variable when a run uses the resource (`from_env`),
with the default below when the variable is unset or blank. Explicit values (tests, run
config in the UI) always win over the environment. Dagster's `EnvVar` has no default for an
unset variable, so a bare shell (no variables at all) could not run anything if every field
were an `EnvVar`.

| resource       | field        | variable                                         | unset          |
|----------------|--------------|--------------------------------------------------|----------------|
| data_service   | kind         | LIVESEARCH_DATA_SERVICE                          | embedded       |
|                | url          | LIVESEARCH_DATA_SERVICE_URL                      | -              |
|                | command      | LIVESEARCH_DATA_SERVICE_COMMAND                  | -              |
|                | manifest     | LIVESEARCH_DATA_SERVICE_MANIFEST                 | -              |
|                | clock        | LIVESEARCH_CLOCK                                 | the real date  |
|                | token        | LIVESEARCH_DATA_SERVICE_TOKEN (url), TUSHARE_TOKEN (tushare) | none |
| storage        | root         | LIVESEARCH_DATA_DIR                              | ./data         |
| llm            | model        | LIVESEARCH_LLM_MODEL                             | no LLM (template verbalizer) |
|                | judge_model  | LIVESEARCH_JUDGE_MODEL                           | no judge       |
|                | api_base     | LIVESEARCH_LLM_API_BASE                          | the provider's |
|                | api_key      | LIVESEARCH_LLM_API_KEY                           | none           |
|                | cache_dir    | -                                                | <root>/cache/llm |

Secrets (`token`, `api_key`) are never put in metadata or logs; their `repr` hides them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, AsyncIterator, Optional

import dagster as dg
from pydantic import Field

from livesearch_pipeline.core.client import OpenAt, ToolClient
from livesearch_pipeline.settings import DataPaths

if TYPE_CHECKING:
    from livesearch_pipeline.construction.verbalize import LLMVerbalizerConfig
    from livesearch_pipeline.infra.llm import LLMSettings

DATA_SERVICE_ENV = "LIVESEARCH_DATA_SERVICE"
DATA_SERVICE_URL_ENV = "LIVESEARCH_DATA_SERVICE_URL"
DATA_SERVICE_COMMAND_ENV = "LIVESEARCH_DATA_SERVICE_COMMAND"
DATA_SERVICE_MANIFEST_ENV = "LIVESEARCH_DATA_SERVICE_MANIFEST"
CLOCK_ENV = "LIVESEARCH_CLOCK"
DATA_SERVICE_KINDS = ("embedded", "url", "stdio", "tushare")


def from_env(value: Optional[str], variable: str, default: Optional[str] = None) -> Optional[str]:
    """`value` when configured (even blank); else `variable` read now, when a run uses the
    resource (blank counts as unset); else `default`."""
    if value is not None:
        return value
    found = (dg.EnvVar(variable).get_value() or "").strip()
    return found or default


class DataServiceResource(dg.ConfigurableResource):
    """The MCP data service the gold programs run against.

    kind `embedded` (default): the synthetic reference market, in-process. `url`: any MCP server
    over streamable HTTP. `stdio`: an MCP server started as a command. `tushare`: the Tushare Pro
    HTTP API. `manifest` describes tools without LiveSearch `_meta`. Fields left unset are read
    from their LIVESEARCH_* variable when a run uses the resource (module docstring).
    """

    kind: Optional[str] = Field(None, description=f"embedded, url, stdio or tushare; unset: ${DATA_SERVICE_ENV}, "
                                                  "else embedded")
    seed: Optional[int] = Field(None, description="seed of the embedded market; unset: its default seed")
    clock: Optional[str] = Field(None, description=f"YYYY-MM-DD; unset: ${CLOCK_ENV}, else the real date")
    url: Optional[str] = Field(None, description=f"MCP server URL (kind url) or Tushare endpoint; unset: "
                                                 f"${DATA_SERVICE_URL_ENV}")
    command: Optional[str] = Field(None, description=f"MCP server command (kind stdio); unset: "
                                                     f"${DATA_SERVICE_COMMAND_ENV}")
    manifest: Optional[str] = Field(None, description=f"tool manifest file; unset: ${DATA_SERVICE_MANIFEST_ENV}")
    token: Optional[str] = Field(None, repr=False, description="secret: bearer token (kind url, unset: "
                                 "$LIVESEARCH_DATA_SERVICE_TOKEN) or Tushare token (kind tushare, unset: $TUSHARE_TOKEN); "
                                 "set it through the environment, not here")

    @property
    def service_kind(self) -> str:
        kind = from_env(self.kind, DATA_SERVICE_ENV, "embedded")
        if kind not in DATA_SERVICE_KINDS:
            where = "DataServiceResource.kind" if self.kind is not None else f"${DATA_SERVICE_ENV}"
            raise ValueError(f"unknown data service kind {kind!r} ({where}); expected {', '.join(DATA_SERVICE_KINDS)}")
        return kind

    def clock_date(self) -> Optional[dt.date]:
        text = from_env(self.clock, CLOCK_ENV)
        if not text:
            return None
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            where = "DataServiceResource.clock" if self.clock is not None else f"${CLOCK_ENV}"
            raise ValueError(f"{where} is not a YYYY-MM-DD date: {text!r}") from None

    @property
    def point_in_time(self) -> bool:
        """True when the service can be queried as of a past date (its clock is ours to set).

        Only the embedded market has such a clock. Tushare and external MCP servers answer with
        whatever they hold when asked: their gold records a retrieval time (vintage) instead.
        """
        return self.service_kind == "embedded"

    def point_in_time_source(self) -> Optional[OpenAt]:
        """The embedded service at a day's cut-off, called directly (no MCP session); None for a
        service without a clock.

        For the bulk callers of our own embedded service (construction's enumeration and replay,
        the gold shards): the in-process MCP session re-validates every result against the
        tool's JSON schema, ~75 % of a gold shard's CPU. The results are the bytes the MCP server
        sends (dataservice/point_in_time.ServiceClient); a real service (url, stdio, tushare) is
        always called through `open`, whose session validates what it returns.
        """
        if not self.point_in_time:
            return None
        from livesearch_pipeline.dataservice.market import DEFAULT_SEED
        from livesearch_pipeline.dataservice.point_in_time import EmbeddedPointInTime

        return EmbeddedPointInTime(self.seed if self.seed is not None else DEFAULT_SEED)

    def identity(self, served_by: Optional[str] = None) -> dict[str, str]:
        """What identifies the service the gold comes from, for lineage (the `data_service` source
        asset's data version, defs/sources.py): `provider` (the kind), `source` (the embedded
        market's seed, or the endpoint or command, credentials removed) and `version` (the
        embedded market's declared name/version; for any other service what it says of itself
        when a client connects, `served_by`). Never the clock, never a secret."""
        from livesearch_pipeline.core.redaction import redact
        from livesearch_pipeline.dataservice.catalog import SERVICE_NAME, SERVICE_VERSION
        from livesearch_pipeline.dataservice.market import DEFAULT_SEED

        kind = self.service_kind
        if kind == "embedded":
            source = f"seed={self.seed if self.seed is not None else DEFAULT_SEED}"
            version = f"{SERVICE_NAME}/{SERVICE_VERSION}"
        else:
            if kind == "stdio":
                source = from_env(self.command, DATA_SERVICE_COMMAND_ENV) or "-"
            elif kind == "url":
                source = from_env(self.url, DATA_SERVICE_URL_ENV) or "-"
            else:
                from livesearch_pipeline.dataservice.tushare import TUSHARE_URL

                source = from_env(self.url, DATA_SERVICE_URL_ENV) or TUSHARE_URL
            version = served_by or "unknown (not connected)"
        secrets = [v for v in (from_env(self.token, "LIVESEARCH_DATA_SERVICE_TOKEN"), from_env(self.token, "TUSHARE_TOKEN"))
                   if v]
        return {"provider": kind, "source": redact(source, secrets), "version": redact(version, secrets)}

    @contextlib.asynccontextmanager
    async def open(self, as_of: Optional[dt.date] = None) -> AsyncIterator[ToolClient]:
        """A client of the service; `as_of` sets a point-in-time service's clock to that date.

        Refreshes and agent runs of partition D pass `as_of=D`, so they see the market as it was at
        D's cut-off whatever the wall clock. `as_of` on a service without a clock is refused: the
        caller must record a vintage instead of pretending to a point in time.
        """
        from livesearch_pipeline.dataservice.client import AUTH_TOKEN_ENV, McpToolClient
        from livesearch_pipeline.dataservice.manifest import load_manifest

        kind = self.service_kind
        if as_of is not None and kind != "embedded":
            raise ValueError(f"data service kind {kind!r} has no point-in-time clock; it cannot be queried "
                             f"as of {as_of.isoformat()}")
        manifest_path = from_env(self.manifest, DATA_SERVICE_MANIFEST_ENV)
        manifest = load_manifest(manifest_path) if manifest_path else None
        url = from_env(self.url, DATA_SERVICE_URL_ENV)
        if kind == "embedded":
            from livesearch_pipeline.dataservice.catalog import ServiceConfig
            from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
            from livesearch_pipeline.dataservice.server import DataService

            clock = as_of if as_of is not None else self.clock_date()
            config = ServiceConfig(seed=self.seed if self.seed is not None else DEFAULT_SEED, clock=clock)
            client = McpToolClient.in_process(DataService(config=config, market=shared_market(config.seed)))
        elif kind == "url":
            if not url:
                raise ValueError(f"data service kind 'url' needs `url` (or ${DATA_SERVICE_URL_ENV})")
            client = McpToolClient.url(url, manifest=manifest, token=from_env(self.token, AUTH_TOKEN_ENV))
        elif kind == "stdio":
            command = from_env(self.command, DATA_SERVICE_COMMAND_ENV)
            if not command:
                raise ValueError(f"data service kind 'stdio' needs `command` (or ${DATA_SERVICE_COMMAND_ENV})")
            program, *args = shlex.split(command)
            client = McpToolClient.stdio(program, args, manifest=manifest)
        else:
            from livesearch_pipeline.dataservice.tushare import TOKEN_ENV, TUSHARE_URL, TushareClient

            token = from_env(self.token, TOKEN_ENV)
            if not token:
                raise ValueError(f"data service kind 'tushare' needs a token: set ${TOKEN_ENV}")
            client = TushareClient(url=url or TUSHARE_URL, token=token)
        try:
            async with client as entered:
                yield entered
        except BaseExceptionGroup as group:
            # The client's task group wraps a failure of the caller's block in "unhandled errors
            # in a TaskGroup": re-raise the innermost cause, so the step error and the CLI name it.
            from livesearch_pipeline.core.errors import innermost_exception

            raise innermost_exception(group)


class StorageResource(dg.ConfigurableResource):
    """The data root (pool, construction tables, gold snapshots, served files, agent runs, caches)."""

    root: Optional[str] = Field(None, description="data root; unset: $LIVESEARCH_DATA_DIR, else ./data")

    def paths(self) -> DataPaths:
        return DataPaths(Path(self.root).resolve()) if self.root else DataPaths.from_env()


class LLMResource(dg.ConfigurableResource):
    """The one LLM endpoint of the pipeline (verbalizer, judge, LLM agents) and its one cache.

    Calls go through `livesearch_pipeline.infra.llm` (temperature 0, request-hash disk cache,
    retries). Without a model (field or $LIVESEARCH_LLM_MODEL) the pipeline uses no LLM: the
    verbalizer falls back to its templates.
    """

    model: Optional[str] = Field(None, description="litellm model; unset: $LIVESEARCH_LLM_MODEL, else no LLM; "
                                 "empty: no LLM whatever the environment")
    judge_model: Optional[str] = Field(None, description="judge model; unset: $LIVESEARCH_JUDGE_MODEL, else no judge")
    api_base: Optional[str] = Field(None, description="OpenAI-compatible endpoint; unset: $LIVESEARCH_LLM_API_BASE")
    api_key: Optional[str] = Field(None, repr=False, description="secret; unset: $LIVESEARCH_LLM_API_KEY; set it "
                                   "through the environment, not here")
    cache_dir: Optional[str] = Field(None, description="request-hash cache; unset: <data root>/cache/llm")
    mock_response: Optional[str] = Field(None, description="canned reply for every call (tests and offline dry "
                                         "runs; bypasses the cache)")

    def settings(self) -> LLMSettings:
        """The effective model, judge model, endpoint and key: fields first, then the environment."""
        from livesearch_pipeline.infra.llm import LLMSettings

        env = LLMSettings.from_env()

        def pick(configured: Optional[str], from_environment: Optional[str]) -> Optional[str]:
            return (configured if configured is not None else from_environment) or None

        return LLMSettings(model=pick(self.model, env.model), judge_model=pick(self.judge_model, env.judge_model),
                           api_base=pick(self.api_base, env.api_base), api_key=pick(self.api_key, env.api_key))

    def cache_path(self, paths: DataPaths) -> Path:
        return Path(self.cache_dir).resolve() if self.cache_dir else paths.llm_cache

    def verbalizer(self, paths: DataPaths) -> Optional[LLMVerbalizerConfig]:
        """The construction verbalizer's LLM, None (templates) when no model is configured."""
        from livesearch_pipeline.construction.verbalize import LLMVerbalizerConfig

        settings = self.settings()
        if not settings.model:
            return None
        return LLMVerbalizerConfig(model=settings.model, api_base=settings.api_base, api_key=settings.api_key,
                                   cache_dir=self.cache_path(paths), mock_response=self.mock_response)


@dg.definitions
def resources() -> dg.Definitions:
    # Nothing is read from the environment here: unset fields are read when a run uses them.
    return dg.Definitions(resources={"data_service": DataServiceResource(), "storage": StorageResource(),
                                     "llm": LLMResource()})
