"""Fakes for the agent tests: a scripted OpenAI-compatible model keyed by question, a fake
SearXNG with pages on 127.0.0.1, served-question builders, and a scripted in-process agent.

The scripted model serves many questions at once (agents run concurrently): each request is
routed by the text of its first user message, and the step is the number of assistant turns
already in the conversation, so every question follows its own script whatever the interleaving.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from livesearch_pipeline.core.models import Prediction, ServedQuestion

# A reply: assistant text, or {"tool_calls": [{"name": ..., "arguments": {...} or raw JSON text}]}.
Reply = str | dict[str, Any]


def qid_for(text: str) -> str:
    return "ls-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def served_question(text: str, **overrides: Any) -> ServedQuestion:
    fields: dict[str, Any] = {
        "qid": qid_for(text), "question": text, "tier": "T1", "asset_class": "cn_equity",
        "refresh_class": "daily", "visibility": 5, "entity": "600001.SH",
    }
    fields.update(overrides)
    return ServedQuestion(**fields)


def write_served(path: Any, questions: list[ServedQuestion]) -> None:
    path.write_text("".join(q.model_dump_json() + "\n" for q in questions), encoding="utf-8")


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 (free port) in a daemon thread."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str) -> None:
    handler.send_response(status)
    handler.send_header("content-type", content_type)
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class ScriptedModel:
    """Scripts per question text; `requests` records every chat request received."""

    def __init__(self, scripts: dict[str, list[Reply]], *, tokens_per_reply: int = 18) -> None:
        self.scripts = scripts
        self.tokens_per_reply = tokens_per_reply
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                request = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                status, payload = model._reply(request)
                _send(self, status, json.dumps(payload).encode("utf-8"), "application/json")

        self._server = _Server(Handler)

    @property
    def api_base(self) -> str:
        return self._server.base_url + "/v1"

    def requests_for(self, question: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if _question_of(r) == question]

    def _reply(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(request)
        question = _question_of(request)
        script = self.scripts.get(question)
        step = sum(1 for m in request["messages"] if m["role"] == "assistant")
        if script is None or step >= len(script):
            return 400, {"error": {"message": f"no scripted reply for step {step} of {question!r}",
                                   "type": "invalid_request_error"}}
        return 200, _completion(request, script[step], self.tokens_per_reply)


def _question_of(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def _completion(request: dict[str, Any], reply: Reply, tokens: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(reply, str):
        message["content"] = reply
    else:
        message["tool_calls"] = [
            {"id": f"call_{index}", "type": "function",
             "function": {"name": call["name"],
                          "arguments": call["arguments"] if isinstance(call["arguments"], str)
                          else json.dumps(call["arguments"])}}
            for index, call in enumerate(reply["tool_calls"])
        ]
    return {
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
        "model": request.get("model", "scripted"),
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "stop" if isinstance(reply, str) else "tool_calls"}],
        "usage": {"prompt_tokens": tokens - tokens // 3, "completion_tokens": tokens // 3, "total_tokens": tokens},
    }


@contextmanager
def scripted_model(scripts: dict[str, list[Reply]], **options: Any) -> Iterator[ScriptedModel]:
    model = ScriptedModel(scripts, **options)
    model._server.start()
    try:
        yield model
    finally:
        model._server.stop()


class FakeWeb:
    """A SearXNG JSON endpoint (`/search`) and pages (`/page/<name>`) on one local server.

    `results` maps a query to its (title, path, snippet) results; `pages` maps a page name to
    (content type, body). Anything else is a 404. `searxng_status` forces an HTTP status on search.
    """

    def __init__(self, results: dict[str, list[tuple[str, str, str]]], pages: dict[str, tuple[str, str]]) -> None:
        self.results = results
        self.pages = pages
        self.queries: list[dict[str, list[str]]] = []
        self.searxng_status = 200
        web = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return None

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                parts = urlsplit(self.path)
                if parts.path == "/search":
                    query = parse_qs(parts.query)
                    web.queries.append(query)
                    if web.searxng_status != 200:
                        _send(self, web.searxng_status, b"forbidden", "text/plain")
                        return
                    found = [{"title": t, "url": web.base_url + p, "content": s}
                             for t, p, s in web.results.get(query["q"][0], [])]
                    _send(self, 200, json.dumps({"query": query["q"][0], "results": found}).encode(),
                          "application/json")
                elif parts.path.startswith("/page/") and parts.path[6:] in web.pages:
                    content_type, body = web.pages[parts.path[6:]]
                    _send(self, 200, body.encode("utf-8"), content_type)
                else:
                    _send(self, 404, b"not found", "text/plain")

        self._server = _Server(Handler)

    @property
    def base_url(self) -> str:
        return self._server.base_url


@contextmanager
def fake_web(results: dict[str, list[tuple[str, str, str]]], pages: dict[str, tuple[str, str]]) -> Iterator[FakeWeb]:
    web = FakeWeb(results, pages)
    web._server.start()
    try:
        yield web
    finally:
        web._server.stop()


class ScriptedAgent:
    """An in-process agent: `answer_for(question)` gives the answer, or raises to fail it."""

    def __init__(self, answer_for: Callable[[ServedQuestion], str], *, delay_s: float = 0.0,
                 name: str = "scripted", model: str | None = "none") -> None:
        self.answer_for = answer_for
        self.delay_s = delay_s
        self.name = name
        self.model = model
        self.asked: list[str] = []
        self.prepared: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def prepare(self, questions: list[ServedQuestion]) -> None:
        self.prepared = [q.qid for q in questions]

    async def answer(self, question: ServedQuestion) -> Prediction:
        self.asked.append(question.qid)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
            return Prediction(qid=question.qid, answer=self.answer_for(question), trace=[{"type": "scripted"}])
        finally:
            self.in_flight -= 1
