"""What an agent is, on the site: its card (kind, what the kind does, model, read budget, the code
that ran it, where its code or registry entry is), and which agents are references.

A card is made from the agent's registry entry (the baselines and `<data>/agents.json`, read by
the caller) and its newest published run's summary (model, declared budget, code version,
harness). The oracle and stale baselines are *references*: the oracle runs the gold programs
itself (a self-test of the gold, not an agent that searches) and stale answers with the previous
day's gold (what a stale answer scores); the site shows them apart from the ranked agents, as
calibration, never with a rank.
"""

from __future__ import annotations

from dataclasses import dataclass

from livesearch_pipeline.evaluation.registry import AgentSpec

REFERENCE_KINDS = ("oracle", "stale")
SOURCE = "livesearch_pipeline/evaluation/agents/"
KINDS = {
    "oracle": ("reference: runs each question's gold program itself on the data service, the gold's self-test "
               "(a score under 100% points at the gold or the service, not at search)", "oracle.py"),
    "stale": ("reference: answers each question with the previous frozen day's gold, what a stale answer scores "
              "(the stale-gold rate)", "stale.py"),
    "search-read": ("scripted web baseline: searches the day's offline web with the question and reads the answer "
                    "from the top pages (no model)", "search_read.py"),
    "navigator": ("scripted web navigator: searches and follows the offline web's links within its read budget "
                  "(no model)", "navigator.py"),
    "closed-book": ("an LLM answering from its weights, without tools", "closed_book.py"),
    "web": ("an LLM agent searching and reading the day's offline web within its read budget", "web.py"),
    "plugin": ("an LLM agent calling the data service's tools over MCP", "plugin.py"),
}
UNREGISTERED = ("a run scored from its predictions (not in this pipeline's registry): the card holds what its "
                "metadata records")


@dataclass(frozen=True)
class AgentCard:
    agent: str
    kind: str  # a registry kind, or "unregistered"
    what: str
    reference: bool
    model: str | None
    budget: str  # "6 reads, 6 searches", "unlimited", "not declared (no web reads)"
    code_version: str
    harness: str | None
    source: str | None  # the kind's module in the repository
    registry: dict | None  # the registry entry (the options it runs with), never an API key


def is_reference(spec: AgentSpec | None) -> bool:
    return spec is not None and spec.kind in REFERENCE_KINDS


def agent_card(agent: str, spec: AgentSpec | None, summary) -> AgentCard:
    """The card of `agent`: `spec` its registry entry (None: not registered), `summary` its newest
    published run's `EvaluationSummary` (None: no run published)."""
    kind = spec.kind if spec is not None else "unregistered"
    what, module = KINDS.get(kind, (UNREGISTERED, None))
    model = (summary.model if summary is not None else None) or (spec.model if spec is not None else None)
    declared = summary.budget if summary is not None and summary.budget is not None else None
    if declared is None and spec is not None and (spec.read_budget or spec.search_budget):
        declared = spec.budget()
    if declared is not None:
        budget = declared.describe()
    elif kind in ("oracle", "stale", "closed-book", "plugin"):
        budget = "none: it reads no web page"
    else:
        budget = "not declared"
    code_version = (summary.code_version if summary is not None else None) or "not recorded by its run"
    registry = None
    if spec is not None:
        registry = spec.model_dump(mode="json", exclude_none=True, exclude={"api_key_env"})
        registry.pop("concurrency", None)
    return AgentCard(agent=agent, kind=kind, what=what, reference=is_reference(spec), model=model, budget=budget,
                     code_version=code_version, harness=summary.harness if summary is not None else None,
                     source=SOURCE + module if module else None, registry=registry)
