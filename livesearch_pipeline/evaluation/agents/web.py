"""The web agent: an LLM with `web_search` (a SearXNG instance's JSON API) and `fetch_page`.

Search goes to `GET {searxng_url}/search?q=...&format=json`; pages are fetched with httpx and
turned into plain text with the standard library's HTML parser. Each tool result the model
reads is bounded in size; the trace keeps every query, the URLs it returned, each fetched URL
with an excerpt of what the model read, and the final answer.

The agent answers within a declared budget per question (`budget`: distinct pages it may open,
searches it may run; agents/budget.py): a search or read beyond it is refused, the refusal is
shown to the model as a tool error and marked `refused` in the trace, and the question's usage
counts its searches, reads and refusals.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Sequence
from urllib.parse import urlsplit

import httpx

from livesearch_pipeline.core.models import Prediction, ReadBudget, ServedQuestion, Usage
from livesearch_pipeline.evaluation.agents.budget import UNLIMITED, Ledger
from livesearch_pipeline.evaluation.agents.chat import ChatModel
from livesearch_pipeline.evaluation.agents.loop import (
    FINAL_ANSWER_INSTRUCTION,
    AgentTool,
    LoopLimits,
    ToolFailure,
    ToolResult,
    run_tool_loop,
)

WEB_SYSTEM_PROMPT = (
    "You are a financial research agent. Today's date is {today}. Answer the user's question "
    "with current, precise figures found on the web: search with `web_search`, read sources with "
    "`fetch_page`, and prefer official exchange, company and data-provider pages. Relative times "
    "such as 'the most recent trading day' are relative to today's date. " + FINAL_ANSWER_INSTRUCTION
)

EXCERPT_CHARS = 300

_SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_BLOCK_TAGS = frozenset({
    "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header", "footer",
    "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "dd", "dt", "title", "main", "nav",
})
_CELL_TAGS = frozenset({"td", "th"})
_TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/json", "text/csv")


class _TextExtractor(HTMLParser):
    """Visible text of an HTML page: scripts and styles dropped, blocks on their own lines,
    table cells separated by ' | ' so that rows of figures stay readable."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._parts: list[str] = []
        self._skip_depth = 0
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in _SKIPPED_TAGS:
            self._skip_depth += 1
        elif tag in _BLOCK_TAGS:
            self._parts.append("\n")
        elif tag in _CELL_TAGS:
            self._parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _SKIPPED_TAGS and self._skip_depth:
            self._skip_depth -= 1
        elif tag in _BLOCK_TAGS:
            self._parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if not self._skip_depth:
            self._parts.append(data)

    def text(self) -> str:
        lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip(" |") for line in "".join(self._parts).split("\n"))
        return "\n".join(line.strip() for line in lines if line.strip())


def html_to_text(html: str) -> tuple[str, str]:
    """(title, visible text) of an HTML document."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return parser.title.strip(), parser.text()


@dataclass(frozen=True)
class WebToolsConfig:
    searxng_url: str
    max_results: int = 8
    page_chars: int = 8000
    max_page_bytes: int = 3_000_000
    http_timeout_s: float = 20.0
    user_agent: str = "livesearch-agent/1 (+benchmark)"

    def __post_init__(self) -> None:
        if urlsplit(self.searxng_url).scheme not in ("http", "https"):
            raise ValueError(f"searxng_url must be an http(s) URL, got {self.searxng_url!r}")


class WebTools:
    """`web_search` and `fetch_page` over one shared httpx client (owned by the caller)."""

    def __init__(self, config: WebToolsConfig, http: httpx.AsyncClient) -> None:
        self.config = config
        self.http = http

    def tools(self, ledger: Ledger | None = None) -> list[AgentTool]:
        """The two tools, charging `ledger` (one question's budget) for each search and read."""
        ledger = ledger if ledger is not None else Ledger(trace=None)
        return [
            AgentTool(
                name="web_search",
                description="Search the web. Returns result titles, URLs and snippets.",
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "the search query"},
                        "page": {"type": "integer", "minimum": 1, "description": "result page, default 1"},
                    },
                    "required": ["query"],
                },
                handler=lambda arguments: self.web_search(arguments, ledger),
            ),
            AgentTool(
                name="fetch_page",
                description=(f"Fetch a web page and return its text, {self.config.page_chars} characters "
                             "at a time; pass `start` to read further into a long page."),
                parameters={
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "description": "an http(s) URL"},
                        "start": {"type": "integer", "minimum": 0, "description": "character offset, default 0"},
                    },
                    "required": ["url"],
                },
                handler=lambda arguments: self.fetch_page(arguments, ledger),
            ),
        ]

    async def web_search(self, arguments: dict[str, Any], ledger: Ledger | None = None) -> ToolResult:
        """One search (charged to `ledger` when given; refused beyond its budget)."""
        query = arguments.get("query")
        page = arguments.get("page", 1)
        if not isinstance(query, str) or not query.strip():
            raise ToolFailure("web_search needs a non-empty string `query`")
        if not isinstance(page, int) or page < 1:
            raise ToolFailure("`page` must be a positive integer")
        if ledger is not None:
            ledger.charge_search(query)
        endpoint = self.config.searxng_url.rstrip("/") + "/search"
        try:
            response = await self.http.get(
                endpoint, params={"q": query, "format": "json", "pageno": page},
                timeout=self.config.http_timeout_s,
            )
        except httpx.HTTPError as exc:
            raise ToolFailure(f"search backend unreachable: {type(exc).__name__}: {exc}") from exc
        if response.status_code == 403:
            raise ToolFailure("search backend refused the JSON API (403): enable `json` in SearXNG "
                              "settings.yml under search.formats")
        if response.status_code != 200:
            raise ToolFailure(f"search backend answered HTTP {response.status_code}")
        try:
            raw_results = response.json().get("results", [])
        except (json.JSONDecodeError, AttributeError) as exc:
            raise ToolFailure(f"search backend returned no JSON object: {exc}") from exc
        results = [
            {"title": str(r.get("title", "")), "url": str(r.get("url", "")),
             "snippet": str(r.get("content", ""))}
            for r in raw_results[: self.config.max_results]
            if isinstance(r, dict) and r.get("url")
        ]
        return ToolResult(
            content=json.dumps({"query": query, "results": results}, ensure_ascii=False),
            trace={"query": query, "urls": [r["url"] for r in results],
                   "excerpts": [r["snippet"][:EXCERPT_CHARS] for r in results]},
        )

    async def fetch_page(self, arguments: dict[str, Any], ledger: Ledger | None = None) -> ToolResult:
        """One page (a read charged to `ledger` when given, refused beyond its budget; reading on
        into a page this question opened already is no new read)."""
        url = arguments.get("url")
        start = arguments.get("start", 0)
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
            raise ToolFailure(f"fetch_page needs an http(s) `url`, got {url!r}")
        if not isinstance(start, int) or start < 0:
            raise ToolFailure("`start` must be a non-negative integer")
        if ledger is not None:
            ledger.charge_read(url)
        status, final_url, content_type, body, cut = await self._download(url)
        if status != 200:
            raise ToolFailure(f"{url} answered HTTP {status}")
        if not content_type.startswith(_TEXT_TYPES):
            raise ToolFailure(f"{url} is {content_type or 'of unknown type'}, not a text page")
        if content_type.startswith(("text/html", "application/xhtml+xml")):
            title, text = html_to_text(body)
        else:
            title, text = "", body.strip()
        window = text[start : start + self.config.page_chars]
        more = start + len(window) < len(text)
        header = f"URL: {final_url}\nTitle: {title}\nCharacters {start}-{start + len(window)} of {len(text)}"
        footer = f"\n[more: call fetch_page with start={start + len(window)}]" if more else ""
        return ToolResult(
            content=f"{header}\n\n{window}{footer}",
            trace={"url": url, "final_url": final_url, "status": status, "title": title, "chars": len(text),
                   "start": start, "cut_at_max_bytes": cut, "excerpt": window[:EXCERPT_CHARS]},
        )

    async def _download(self, url: str) -> tuple[int, str, str, str, bool]:
        """(status, final URL, content type, body text, whether the body was cut at max_page_bytes)."""
        try:
            async with self.http.stream(
                "GET", url, timeout=self.config.http_timeout_s, follow_redirects=True,
                headers={"User-Agent": self.config.user_agent},
            ) as response:
                chunks: list[bytes] = []
                size = 0
                cut = False
                async for chunk in response.aiter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > self.config.max_page_bytes:
                        cut = True  # a page larger than this is read in part; the model sees its start
                        break
                content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
                encoding = response.charset_encoding or "utf-8"
                body = b"".join(chunks)[: self.config.max_page_bytes].decode(encoding, errors="replace")
                return response.status_code, str(response.url), content_type, body, cut
        except httpx.HTTPError as exc:
            raise ToolFailure(f"cannot fetch {url}: {type(exc).__name__}: {exc}") from exc


@dataclass
class WebAgent:
    chat_model: ChatModel
    tools: WebTools
    as_of: dt.date
    limits: LoopLimits = field(default_factory=LoopLimits)
    system_prompt: str = WEB_SYSTEM_PROMPT
    name: str = "web"
    budget: ReadBudget = UNLIMITED

    @property
    def model(self) -> str:
        return self.chat_model.name

    async def prepare(self, questions: Sequence[ServedQuestion]) -> None:
        """Nothing is shared between questions."""

    async def answer(self, question: ServedQuestion) -> Prediction:
        ledger = Ledger(self.budget, trace=None)  # the tool loop records the calls
        prediction = await run_tool_loop(
            question,
            model=self.chat_model,
            system_prompt=self.system_prompt.format(today=self.as_of.isoformat()),
            tools=self.tools.tools(ledger),
            limits=self.limits,
        )
        return with_ledger(prediction, ledger)


def with_ledger(prediction: Prediction, ledger: Ledger) -> Prediction:
    """`prediction` with its question's searches, reads and refusals in its usage."""
    usage = prediction.usage.model_copy(update=ledger.usage_counts()) if prediction.usage is not None \
        else Usage(**ledger.usage_counts())
    counted = prediction.model_copy(update={"usage": usage})
    return counted.with_messages(prediction.messages) if prediction.messages is not None else counted
