"""One question's read budget, kept where a web agent's searches and pages are handed out.

A web agent's score is made at a declared budget (`ReadBudget`: pages it may open and searches it
may run per question). The `Ledger` of a question counts every search and every distinct page
opened (a page opened again for the same question is in front of the reader already: not counted
twice), refuses one beyond the budget (`BudgetRefused`, a `ToolFailure`: an LLM agent reads the
refusal as a tool error and must answer with what it has). The scripted agents also write each
search, read and refusal into the question's trace through it, as tool calls, so that
`trajectories.jsonl` shows the work: the query and the results it returned, the URL and what the
page showed, and what was refused (an LLM agent's tool loop records its calls itself: its ledger
keeps no trace).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, MutableMapping, Sequence

from livesearch_pipeline.core.models import Prediction, ReadBudget, Usage
from livesearch_pipeline.evaluation.agents.loop import ToolFailure

EXCERPT_CHARS = 300
UNLIMITED = ReadBudget()
# Where an Inspect sample keeps its ledger's counts (its store; evaluation/inspect_task.py), read
# back by `import-inspect` as the question's usage.
LEDGER_STORE_KEY = "livesearch_ledger"


class BudgetRefused(ToolFailure):
    """A search or a read beyond the question's declared budget: refused by the harness."""

    refused = True  # the tool loop marks the call as refused in its trace


@dataclass
class Ledger:
    """One question's searches and reads against its budget, recorded in `trace` as they happen
    (None: counted only, the caller records the calls)."""

    budget: ReadBudget = UNLIMITED
    trace: list[dict[str, Any]] | None = field(default_factory=list)
    searches: int = 0
    reads: int = 0
    refusals: int = 0
    opened: set[str] = field(default_factory=set)

    def reads_left(self) -> int | None:
        return None if self.budget.max_reads is None else self.budget.max_reads - self.reads

    def charge_search(self, query: str) -> None:
        """Count a search about to run; BudgetRefused (recorded) when none is left."""
        limit = self.budget.max_searches
        if limit is not None and self.searches >= limit:
            self._refuse("web_search", {"query": query}, f"search budget of {limit} searches spent")
        self.searches += 1

    def charge_read(self, url: str) -> bool:
        """Count a page about to be opened: False when this question opened it already (no new
        read); BudgetRefused (recorded) when it would be one read beyond the budget."""
        if url in self.opened:
            return False
        limit = self.budget.max_reads
        if limit is not None and self.reads >= limit:
            self._refuse("fetch_page", {"url": url}, f"read budget of {limit} pages spent")
        self.reads += 1
        self.opened.add(url)
        return True

    def searched(self, query: str, urls: Sequence[str], snippets: Sequence[str] = ()) -> None:
        """Record a search that ran and what came back."""
        if self.trace is not None:
            self.trace.append({"type": "tool", "tool": "web_search", "query": query, "urls": list(urls),
                               "excerpts": [s[:EXCERPT_CHARS] for s in snippets]})

    def read(self, url: str, *, title: str = "", excerpt: str = "", **found: Any) -> None:
        """Record a page read and what it showed (its title, the start of its text, what the
        reader took from it)."""
        if self.trace is not None:
            self.trace.append({"type": "tool", "tool": "fetch_page", "url": url, "title": title,
                               "excerpt": excerpt[:EXCERPT_CHARS], **found})

    def usage_counts(self) -> dict[str, int]:
        """The fields of `Usage` this ledger fills."""
        return {"searches": self.searches, "page_reads": self.reads, "budget_refusals": self.refusals}

    def _refuse(self, tool: str, arguments: dict[str, Any], reason: str) -> None:
        self.refusals += 1
        if self.trace is not None:
            self.trace.append({"type": "tool", "tool": tool, **arguments, "refused": reason})
        raise BudgetRefused(f"{reason} for this question ({self.budget.describe()}): answer with what you have read")


async def charged_search(ledger: Ledger, tools: Any, results: MutableMapping[str, Any], query: str
                         ) -> list[dict[str, Any]]:
    """A scripted agent's search: charged to the question's `ledger` (BudgetRefused beyond its
    budget), run through `tools.web_search` unless `results` (the run's cache: the web of a day
    does not change) holds it, and recorded with what came back; every result, in order."""
    ledger.charge_search(query)
    result = results.get(query)
    if result is None:
        result = results.setdefault(query, await tools.web_search({"query": query}))
    found = json.loads(result.content)["results"]
    ledger.searched(query, [str(r["url"]) for r in found], [str(r.get("snippet", "")) for r in found])
    return found


def counted(prediction: Prediction) -> Prediction:
    """A scripted agent's prediction with its usage counted from its trace: the searches run and
    the pages read (each recorded once, by its `Ledger`) and the refusals."""
    calls = [entry for entry in prediction.trace or () if entry.get("type") == "tool"]
    usage = Usage(tool_calls=sum(1 for e in calls if "refused" not in e),
                  searches=sum(1 for e in calls if e.get("tool") == "web_search" and "refused" not in e),
                  page_reads=sum(1 for e in calls if e.get("tool") == "fetch_page" and "refused" not in e),
                  budget_refusals=sum(1 for e in calls if "refused" in e))
    return prediction.model_copy(update={"usage": usage})
