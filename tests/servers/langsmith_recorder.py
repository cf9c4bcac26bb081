"""A loopback stand-in for the LangSmith API that records every run the real client sends.

It answers ``GET /info`` (batch ingestion on, multipart off, so runs arrive as JSON on
``POST /runs/batch``) and accepts ``POST``/``PATCH`` on ``/runs/...``. Bodies are kept
raw, so a test can also check that a secret appears nowhere in what was sent.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

INFO = {
    "version": "0.10.0",
    "batch_ingest_config": {
        "use_multipart_endpoint": False,
        "size_limit": 100,
        "size_limit_bytes": 20_000_000,
        "scale_up_qsize_trigger": 1000,
        "scale_up_nthreads_limit": 16,
        "scale_down_nempty_trigger": 4,
    },
}


@dataclass
class Recorder:
    """What arrived: ``(method, path, body)`` per request."""

    requests: list[tuple[str, str, bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def raw(self) -> bytes:
        with self.lock:
            return b"\n".join(body for _, _, body in self.requests)

    def runs(self) -> list[dict[str, Any]]:
        """Every run posted or patched, merged by id (the client batches post and patch)."""
        merged: dict[str, dict[str, Any]] = {}
        with self.lock:
            requests = list(self.requests)
        for _method, path, body in requests:
            if not path.startswith("/runs") or not body:
                continue
            data = json.loads(body)
            batches = [data] if "id" in data else [*data.get("post", []), *data.get("patch", [])]
            for run in batches:
                merged.setdefault(str(run.get("id")), {}).update(run)
        return list(merged.values())


def serve() -> Iterator[tuple[str, Recorder]]:
    """Start the recorder on 127.0.0.1 (a free port); yields ``(url, recorder)``."""
    recorder = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def _reply(self, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _record(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(size)
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            with recorder.lock:
                recorder.requests.append((self.command, self.path, body))

        def do_GET(self) -> None:
            with recorder.lock:
                recorder.requests.append(("GET", self.path, b""))
            self._reply(INFO if self.path.startswith("/info") else {})

        def do_POST(self) -> None:
            self._record()
            self._reply({})

        do_PATCH = do_POST

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", recorder
    finally:
        server.shutdown()
        server.server_close()
