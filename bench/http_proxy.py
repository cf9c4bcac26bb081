"""A counting proxy in front of an OpenAI-compatible server: model calls measured on the wire.

Issue 37 item 3 asks for model calls and characters a question counted at the HTTP
boundary, not inside toolweave. :class:`CountingProxy` listens on 127.0.0.1, forwards
every request to the upstream base URL unchanged and streams every response back as
it arrives (server-sent events included, byte for byte). For each POST to a
``.../chat/completions`` path it counts one call, the characters of the request body
(what was sent: messages, schema, options) and the characters of the messages' text
alone. Other requests are forwarded and counted by path only.

Used by ``bench.generality --proxy``; on its own::

    python -m bench.http_proxy --upstream http://127.0.0.1:8011/v1 --port 8099
    # point the client at http://127.0.0.1:8099/v1; Ctrl-C prints the counts
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
"""Headers that describe one connection, never forwarded (RFC 9110 §7.6.1)."""
CHUNK = 65536


@dataclass(frozen=True)
class Counts:
    """What crossed the proxy: chat-completion calls and their request characters."""

    calls: int = 0
    body_chars: int = 0
    """Characters of the request bodies (JSON: messages, schema, options)."""
    message_chars: int = 0
    """Characters of the messages' text alone."""
    other: tuple[tuple[str, int], ...] = ()
    """Other requests, ``(path, count)``."""
    kinds: tuple[tuple[str, int], ...] = ()
    """Calls by kind, ``(kind, count)``: the structured reply's schema name, or ``stream``."""

    def __sub__(self, earlier: Counts) -> Counts:
        """The traffic between ``earlier`` and this snapshot (``other`` is not subtracted)."""
        kinds = Counter(dict(self.kinds))
        kinds.subtract(dict(earlier.kinds))
        return Counts(
            self.calls - earlier.calls,
            self.body_chars - earlier.body_chars,
            self.message_chars - earlier.message_chars,
            kinds=tuple(sorted((k, n) for k, n in kinds.items() if n)),
        )


def call_kind(body: Any) -> str:
    """What a chat-completion request asks for: its reply schema's name, a tool, or a stream."""
    if not isinstance(body, dict):
        return "?"
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        schema = fmt.get("json_schema")
        return str(schema.get("name")) if isinstance(schema, dict) else str(fmt.get("type"))
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], dict):
        return str((tools[0].get("function") or {}).get("name"))
    return "stream" if body.get("stream") else "plain"


def message_chars(body: Any) -> int:
    """Characters of the text of a chat-completion request's messages."""
    messages = body.get("messages") if isinstance(body, dict) else None
    total = 0
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):  # content parts
            total += sum(len(p.get("text") or "") for p in content if isinstance(p, dict))
    return total


DUMP_VARIABLE = "TOOLWEAVE_BENCH_PROXY_DUMP"
"""A JSONL file to which every chat-completion request is appended (kind, characters,
body), each followed by its reply (kind ``reply``), for reading where the characters go;
unset, nothing is written."""


def _dump(kind: str, chars: int, body: Any) -> None:
    path = os.environ.get(DUMP_VARIABLE)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"kind": kind, "chars": chars, "body": body}) + "\n")


def _dump_reply(path: str, data: bytes) -> None:
    """A chat completion's reply, appended after its request when dumping (kind ``reply``)."""
    if os.environ.get(DUMP_VARIABLE) and path.split("?")[0].rstrip("/").endswith(
        "/chat/completions"
    ):
        text = data.decode("utf-8", errors="replace")
        try:
            body: Any = json.loads(text)
        except ValueError:  # streamed: the raw event lines
            body = text
        _dump("reply", len(text), body)


@dataclass
class _Tally:
    calls: int = 0
    body_chars: int = 0
    message_chars: int = 0
    other: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, method: str, path: str, body: bytes) -> None:
        text = body.decode("utf-8", errors="replace")
        with self.lock:
            if method == "POST" and path.split("?")[0].rstrip("/").endswith("/chat/completions"):
                self.calls += 1
                self.body_chars += len(text)
                try:
                    parsed = json.loads(text)
                except ValueError:  # not JSON: its characters still count
                    parsed = None
                self.message_chars += message_chars(parsed)
                self.kinds[call_kind(parsed)] += 1
                _dump(call_kind(parsed), len(text), parsed)
            else:
                self.other[f"{method} {path}"] += 1

    def snapshot(self) -> Counts:
        with self.lock:
            return Counts(
                self.calls,
                self.body_chars,
                self.message_chars,
                tuple(sorted(self.other.items())),
                tuple(sorted(self.kinds.items())),
            )


class CountingProxy:
    """A forwarding, counting HTTP proxy on 127.0.0.1; a context manager.

    Args:
        upstream: The server's base URL, e.g. ``http://127.0.0.1:8011/v1``.
        port: The port to listen on (0: any free one).
        timeout: Seconds to wait on the upstream server.

    Example:
        >>> with CountingProxy("http://127.0.0.1:8011/v1") as proxy:  # doctest: +SKIP
        ...     ChatOpenAI(base_url=proxy.base_url, ...).invoke("hi")
        ...     proxy.counts().calls
        1
    """

    def __init__(self, upstream: str, *, port: int = 0, timeout: float = 600.0) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the upstream must be an http:// URL, got {upstream!r}")
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self._tally = _Tally()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The base URL a client uses instead of the upstream's (same path)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.prefix}"

    def counts(self) -> Counts:
        """The traffic so far."""
        return self._tally.snapshot()

    def start(self) -> CountingProxy:
        """Serve in a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> CountingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                self._forward()

            def do_GET(self) -> None:
                self._forward()

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                proxy._tally.add(self.command, self.path, body)
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in HOP_BY_HOP and k.lower() != "host"
                }
                upstream = http.client.HTTPConnection(
                    proxy.upstream_host, proxy.upstream_port, timeout=proxy.timeout
                )
                try:
                    upstream.request(self.command, self.path, body=body or None, headers=headers)
                    response = upstream.getresponse()
                except OSError as exc:
                    self._fail(exc)
                    return
                try:
                    self._relay(response)
                finally:
                    upstream.close()

            def _relay(self, response: http.client.HTTPResponse) -> None:
                """The upstream's status, headers and body, passed on as they arrive."""
                self.send_response(response.status, response.reason)
                sized = response.getheader("Content-Length") is not None
                for name, value in response.getheaders():
                    if name.lower() not in HOP_BY_HOP:
                        self.send_header(name, value)
                if not sized:  # chunked or close-delimited: ours ends with the connection
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                seen: list[bytes] = []
                try:
                    while data := response.read1(CHUNK):
                        self.wfile.write(data)
                        self.wfile.flush()
                        seen.append(data)
                except OSError:  # either side went away: nothing left to pass on
                    self.close_connection = True
                _dump_reply(self.path, b"".join(seen))

            def _fail(self, exc: OSError) -> None:
                payload = json.dumps(
                    {"error": {"message": f"proxy: upstream unreachable ({exc})"}}
                ).encode()
                self.send_response(502)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def main(argv: Sequence[str] | None = None) -> int:
    """Run the proxy until interrupted, then print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--upstream", required=True, help="e.g. http://127.0.0.1:8011/v1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    proxy = CountingProxy(args.upstream, port=args.port).start()
    print(f"listening: {proxy.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        proxy.stop()
        print(proxy.counts())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
