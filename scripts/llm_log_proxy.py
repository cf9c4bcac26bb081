"""A loopback proxy that logs each OpenAI-compatible request and reply (for reading a model).

Usage::

    python scripts/llm_log_proxy.py --listen 8021 --to 8011 --log /tmp/llm.jsonl
    OPENAI_BASE_URL=http://127.0.0.1:8021/v1 toolweave ask "..."

Each line of the log is one exchange: the request body and the reply body as the
server sent it (a streamed reply as its raw server-sent events). Only for reading
a local model's requests and replies by hand; nothing in the library uses it.
Authorization headers are not logged.
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_LOCK = threading.Lock()


def main() -> None:
    """Serve the proxy until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=int, default=8021)
    parser.add_argument("--to", type=int, default=8011)
    parser.add_argument("--log", type=Path, default=Path("llm-log.jsonl"))
    args = parser.parse_args()
    target: int = args.to
    log: Path = args.log

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._forward(b"")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._forward(self.rfile.read(length))

        def _forward(self, body: bytes) -> None:
            start = time.monotonic()
            upstream = http.client.HTTPConnection("127.0.0.1", target, timeout=3600)
            headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            reply = upstream.getresponse()
            self.send_response(reply.status)
            for key, value in reply.getheaders():
                if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                    self.send_header(key, value)
            self.send_header("Connection", "close")
            self.end_headers()
            chunks: list[bytes] = []
            while chunk := reply.read1(65536):
                chunks.append(chunk)
                try:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    break  # the client gave up (a timeout); keep reading to log the reply
            upstream.close()
            entry = {
                "path": self.path,
                "seconds": round(time.monotonic() - start, 1),
                "status": reply.status,
                "request": _json_or_text(body),
                "reply": b"".join(chunks).decode("utf-8", "replace"),
            }
            with _LOCK, log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the log file is the record."""

    ThreadingHTTPServer(("127.0.0.1", args.listen), Handler).serve_forever()


def _json_or_text(body: bytes) -> object:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return body.decode("utf-8", "replace")


if __name__ == "__main__":
    main()
