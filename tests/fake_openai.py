"""A tiny OpenAI-compatible chat-completions server for tests (127.0.0.1 only).

    with FakeOpenAI(["Hello there.", {"run": True}]) as server:
        ChatOpenAI(base_url=server.base_url, api_key="test", ...)

Each POST to ``/v1/chat/completions`` takes the next scripted reply: a ``str`` is
the message content, a ``dict``/``list`` is sent as JSON content (what a
``json_schema`` response_format reply looks like), a :class:`FakeError` is
answered with its HTTP status. ``stream: true`` requests get SSE chunks, one per
word. Every request body is recorded in ``requests``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class FakeError:
    """A scripted HTTP error reply."""

    status: int
    message: str = "scripted error"


@dataclass(frozen=True)
class FakeToolCalls:
    """A scripted assistant message that calls tools: ``[(call_id, name, args), ...]``."""

    calls: tuple[tuple[str, str, dict[str, Any]], ...]


Reply = str | dict[str, Any] | list[Any] | FakeError | FakeToolCalls


class FakeOpenAI:
    """The server; use as a context manager."""

    def __init__(self, replies: Iterable[Reply] = ()) -> None:
        self.replies: list[Reply] = list(replies)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The ``base_url`` for ``ChatOpenAI``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            self.replies.extend(replies)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if not self.replies:
                return FakeError(418, "fake server: script exhausted")
            return self.replies.pop(0)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = fake._next(body)
                if isinstance(reply, FakeError):
                    error = {"message": reply.message, "type": "fake", "code": str(reply.status)}
                    self._json(reply.status, {"error": error})
                    return
                if isinstance(reply, FakeToolCalls):
                    self._json(200, _tool_calls(body, reply))
                    return
                content = reply if isinstance(reply, str) else json.dumps(reply)
                if body.get("stream"):
                    self._sse(body, content)
                else:
                    self._json(200, _completion(body, content))

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, body: dict[str, Any], content: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                pieces = re.findall(r"\S+\s*|\s+", content) or [""]
                deltas = [{"role": "assistant", "content": ""}]
                deltas += [{"content": piece} for piece in pieces]
                for delta in deltas:
                    self._event(_chunk(body, delta, None))
                self._event(_chunk(body, {}, "stop"))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

        return Handler


def _completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _tool_calls(body: dict[str, Any], reply: FakeToolCalls) -> dict[str, Any]:
    calls = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(a)}}
        for call_id, name, a in reply.calls
    ]
    completion = _completion(body, "")
    choice = completion["choices"][0]
    choice["message"] = {"role": "assistant", "content": None, "tool_calls": calls}
    choice["finish_reason"] = "tool_calls"
    return completion


def _chunk(body: dict[str, Any], delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }
