"""A tiny OpenAI-compatible chat-completions server for tests (127.0.0.1 only).

    with FakeOpenAI(["Hello there.", {"run": True}]) as server:
        ChatOpenAI(base_url=server.base_url, api_key="test", ...)

Each POST to ``/v1/chat/completions`` takes the next scripted reply: a ``str`` is
the message content, a ``dict``/``list`` is sent as JSON content (what a
``json_schema`` response_format reply looks like; a call of the bound tool when
the request carries ``tools``), a :class:`FakeError` is answered with its HTTP
status (and headers, such as ``Retry-After``). ``stream: true`` requests get SSE
chunks, one per word. Every request body is recorded in ``requests``.

It misbehaves on command (X2/X5 fault tests):

- :class:`Malformed`: a 200 whose body is not JSON;
- :class:`Cut`: the answer breaks off after some words (streamed: no
  ``finish_reason``, no ``[DONE]``, connection closed);
- :class:`Silent`: nothing at all for some seconds, then the connection closes;
- :class:`Length`: the reply stops with ``finish_reason: "length"``;
- :class:`FakeToolCalls`: an assistant message calling the given tools;
- :class:`Endless`: a stream that never ends by itself ("szabad szabad ..."): it
  stops with ``finish_reason: "length"`` at the request's ``max_tokens`` (a word
  a token), else goes on until the client closes the connection;
- ``reject_modes``: structured-output modes (``json_schema``, ``json_object``,
  ``tools``) answered with a 400 naming ``response_format`` / ``tools``, without
  consuming the script, like a server that does not support them.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class FakeError:
    """A scripted HTTP error reply."""

    status: int
    message: str = "scripted error"
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FakeToolCalls:
    """A scripted assistant message that calls tools: ``[(call_id, name, args), ...]``."""

    calls: tuple[tuple[str, str, dict[str, Any]], ...]


@dataclass(frozen=True)
class Malformed:
    """A 200 reply whose body is not valid JSON (or an SSE event that is not)."""

    body: str = '{"id": "chatcmpl-fake", "choices": [ {"index": 0, "mess'


@dataclass(frozen=True)
class Cut:
    """An answer that breaks off after ``words`` words; the connection is then closed."""

    text: str
    words: int = 2


@dataclass(frozen=True)
class Silent:
    """No reply for ``seconds``, then the connection is closed."""

    seconds: float = 5.0


@dataclass(frozen=True)
class Length:
    """A reply cut by the token limit: ``finish_reason: "length"``."""

    content: str = '{"question": "aaaaaaaa'


@dataclass(frozen=True)
class Endless:
    """A streamed answer repeating ``word`` every ``interval`` seconds, up to ``max_tokens``.

    ``word`` may hold ``{n}``, the word's number: "szó{n} " never repeats itself.
    """

    word: str = "szabad "
    interval: float = 0.01
    seconds: float = 60.0
    """Safety stop of the fake itself, when the client neither limits nor closes it."""


@dataclass(frozen=True)
class Scored:
    """A JSON reply sent as ``tokens`` with their log-probabilities (``logprobs.content``).

    ``tokens``: ``(token, logprob, ((alternative, logprob), ...))``; the content is
    the tokens joined.
    """

    tokens: tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...]

    def logprobs(self) -> dict[str, Any]:
        """The choice's ``logprobs`` object, as OpenAI and llama.cpp's server send it."""
        return {
            "content": [
                {
                    "token": token,
                    "logprob": logprob,
                    "bytes": None,
                    "top_logprobs": [
                        {"token": t, "logprob": lp, "bytes": None} for t, lp in alternatives
                    ],
                }
                for token, logprob, alternatives in self.tokens
            ]
        }


Reply = (
    str
    | Scored
    | dict[str, Any]
    | list[Any]
    | FakeError
    | FakeToolCalls
    | Malformed
    | Cut
    | Silent
    | Length
    | Endless
)

_MODE_ERRORS = {
    "json_schema": "response_format type 'json_schema' is not supported by this server",
    "json_object": "response_format type 'json_object' is not supported by this server",
    "tools": "tools / tool_choice are not supported by this server",
}


def request_mode(body: Mapping[str, Any]) -> str | None:
    """The structured-output mode of a request body: json_schema, json_object, tools or None."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
        return str(fmt["type"])
    return "tools" if body.get("tools") else None


class FakeOpenAI:
    """The server; use as a context manager."""

    def __init__(self, replies: Iterable[Reply] = (), *, reject_modes: Iterable[str] = ()) -> None:
        self.replies: list[Reply] = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.reject_modes: set[str] = set(reject_modes)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
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

    def modes(self) -> list[str | None]:
        """The structured-output mode of every request received, in order."""
        return [request_mode(body) for body in self.requests]

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
            mode = request_mode(body)
            if mode in self.reject_modes:
                return FakeError(400, _MODE_ERRORS[str(mode)])
            if not self.replies:
                return FakeError(418, "fake server: script exhausted")
            return self.replies.pop(0)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = fake._next(body)
                stream = bool(body.get("stream"))
                match reply:
                    case FakeError():
                        error = {
                            "message": reply.message,
                            "type": "fake",
                            "code": str(reply.status),
                        }
                        self._json(reply.status, {"error": error}, reply.headers)
                    case FakeToolCalls():
                        self._json(200, _tool_calls(body, reply))
                    case Malformed():
                        self._raw(200, reply.body.encode(), "application/json")
                    case Silent():
                        time.sleep(reply.seconds)
                        self._close()
                    case Cut():
                        self._cut(body, reply, stream)
                    case Length():
                        self._send(body, reply.content, stream, finish="length")
                    case Endless():
                        self._endless(body, reply)
                    case Scored():
                        text = "".join(token for token, _, _ in reply.tokens)
                        completion = _completion(body, text, "stop", None)
                        completion["choices"][0]["logprobs"] = reply.logprobs()
                        self._json(200, completion)
                    case _:
                        self._send(body, reply, stream, finish="stop")

            def _send(self, body: dict[str, Any], reply: Any, stream: bool, finish: str) -> None:
                content = reply if isinstance(reply, str) else json.dumps(reply)
                tool = _tool_name(body) if not isinstance(reply, str) else None
                if stream:
                    self._sse(body, content, finish, tool)
                else:
                    self._json(200, _completion(body, content, finish, tool))

            def _json(
                self,
                status: int,
                payload: dict[str, Any],
                headers: Mapping[str, str] | None = None,
            ) -> None:
                self._raw(status, json.dumps(payload).encode(), "application/json", headers)

            def _raw(
                self,
                status: int,
                data: bytes,
                content_type: str,
                headers: Mapping[str, str] | None = None,
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _close(self) -> None:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    return

            def _start_sse(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

            def _sse(
                self, body: dict[str, Any], content: str, finish: str, tool: str | None
            ) -> None:
                self._start_sse()
                if tool is not None:
                    call = {
                        "index": 0,
                        "id": "call_fake",
                        "type": "function",
                        "function": {"name": tool, "arguments": content},
                    }
                    deltas = [{"role": "assistant", "content": None, "tool_calls": [call]}]
                else:
                    deltas = [{"role": "assistant", "content": ""}]
                    deltas += [{"content": piece} for piece in _words(content)]
                for delta in deltas:
                    self._event(_chunk(body, delta, None))
                self._event(_chunk(body, {}, finish))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _cut(self, body: dict[str, Any], reply: Cut, stream: bool) -> None:
                pieces = _words(reply.text)[: reply.words]
                if not stream:
                    whole = json.dumps(_completion(body, reply.text, "stop", None)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(whole)))
                    self.end_headers()
                    self.wfile.write(whole[: len(whole) // 2])
                    self.wfile.flush()
                    self._close()
                    return
                self._start_sse()
                self._event(_chunk(body, {"role": "assistant", "content": ""}, None))
                for piece in pieces:
                    self._event(_chunk(body, {"content": piece}, None))
                self._close()

            def _endless(self, body: dict[str, Any], reply: Endless) -> None:
                limit = body.get("max_completion_tokens") or body.get("max_tokens")
                words = int(limit) if limit else None
                self._start_sse()
                self._event(_chunk(body, {"role": "assistant", "content": ""}, None))
                stop = time.monotonic() + reply.seconds
                sent = 0
                try:
                    while (words is None or sent < words) and time.monotonic() < stop:
                        word = reply.word.format(n=sent)
                        self._event(_chunk(body, {"content": word}, None))
                        sent += 1
                        time.sleep(reply.interval)
                    self._event(_chunk(body, {}, "length"))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except OSError:  # the client closed the stream
                    return

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

        return Handler


def _words(content: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", content) or [""]


def _tool_name(body: Mapping[str, Any]) -> str | None:
    tools = body.get("tools") or []
    if not tools:
        return None
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and "function" in choice:
        return str(choice["function"]["name"])
    return str(tools[0]["function"]["name"])


def _completion(
    body: dict[str, Any], content: str, finish: str, tool: str | None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool is not None:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_fake",
                    "type": "function",
                    "function": {"name": tool, "arguments": content},
                }
            ],
        }
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool is not None and finish == "stop" else finish,
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
    completion = _completion(body, "", "tool_calls", None)
    choice = completion["choices"][0]
    choice["message"] = {"role": "assistant", "content": None, "tool_calls": calls}
    return completion


def _chunk(body: dict[str, Any], delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }
