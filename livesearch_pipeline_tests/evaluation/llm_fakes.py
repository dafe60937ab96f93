"""A scripted OpenAI-compatible chat server on 127.0.0.1 (random free port) for LLM tests.

Each POST to /v1/chat/completions pops the next scripted reply: a string (assistant content), a
dict `{"tool_calls": [{"name": ..., "arguments": {...}}]}`, or an int HTTP status (an error such
as 429). Requests are recorded so tests can assert on what litellm actually sent.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | int | dict[str, Any]


class ScriptedChatServer:
    def __init__(self, replies: list[Reply] | None = None) -> None:
        self.replies: deque[Reply] = deque(replies or [])
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            if not self.replies:
                return 500
            return self.replies.popleft()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("content-length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                reply = server._next_reply(request)
                if isinstance(reply, int):
                    body = json.dumps({"error": {"message": f"scripted status {reply}", "type": "scripted"}})
                    self._send(reply, body)
                    return
                self._send(200, json.dumps(_completion(request, reply)))

            def _send(self, status: int, body: str) -> None:
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if status == 429:
                    self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def start(self) -> ScriptedChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _completion(request: dict[str, Any], reply: str | dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    finish_reason = "stop"
    if isinstance(reply, str):
        message["content"] = reply
    else:
        message["tool_calls"] = [
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))},
            }
            for index, call in enumerate(reply["tool_calls"])
        ]
        finish_reason = "tool_calls"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


@contextmanager
def scripted_chat_server(*replies: Reply) -> Iterator[ScriptedChatServer]:
    server = ScriptedChatServer(list(replies)).start()
    try:
        yield server
    finally:
        server.stop()
