"""The web a run searched, recorded in its summary: the identity of D's offline web for the
deterministic web baselines (search-read, the navigator), the URL of an agent's own SearXNG
(unchecked), nothing for agents that search no web.
"""

from __future__ import annotations

from pathlib import Path

from livesearch_pipeline.core.redaction import redact
from livesearch_pipeline.evaluation.registry import AgentSpec

# The kinds that search D's offline web when the registry names no SearXNG URL.
OFFLINE_WEB_KINDS = ("search-read", "navigator")


def searched_web(spec: AgentSpec, web_dir: Path) -> dict[str, str] | None:
    """The identity of the offline web in `web_dir` (the day's, `AgentDay.web_dir`) a search-read run
    searched; for an agent pointed at its own SearXNG (web kinds), the URL, marked unchecked; None
    for agents that search no web."""
    if spec.searxng_url:
        # Recorded in summary.json (a run folder others read): never the URL's credentials.
        return {"searxng_url": redact(spec.searxng_url), "scope": "external search backend (identity not checked)"}
    if spec.kind not in OFFLINE_WEB_KINDS:
        return None
    from livesearch_pipeline.web.index import WebIndex
    from livesearch_pipeline.web.server import web_identity

    return web_identity(WebIndex(web_dir))
