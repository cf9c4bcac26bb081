"""The rental desk's reservation back end, an HTTP server on 127.0.0.1 (a test stand-in).

``POST /reservations`` makes a reservation once per ``Idempotency-Key`` header (a second
POST with the same key gets the first reservation back, status 200); ``GET
/reservations?customer=CU-1`` lists a customer's active reservations; ``POST
/reservations/<number>/cancel`` cancels one (once per key too). ``posts`` counts every
POST received, ``reservations`` holds what was made.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


class Backend:
    """The server, its counters and a delay a test may set for each POST."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        self.reservations: dict[str, dict[str, Any]] = {}  # number -> reservation
        self.by_key: dict[str, str] = {}  # idempotency key -> number
        self.post_delay = 0.0
        self.fail_after_post = False  # answer 504 although the reservation was made
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> Backend:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def active(self, customer: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.reservations.values()
            if r["status"] == "active" and customer in (None, r["customer"])
        ]

    def reserve(self, key: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.posts.append({"path": "/reservations", "key": key, **body})
        time.sleep(self.post_delay)
        with self.lock:
            if key in self.by_key:
                return 200, self.reservations[self.by_key[key]]
            number = f"R-{100 + len(self.reservations) + 1}"
            record = {"number": number, "status": "active", **body}
            self.reservations[number] = record
            self.by_key[key] = number
            return 201, record

    def cancel(self, key: str, number: str) -> tuple[int, dict[str, Any]]:
        self.posts.append({"path": f"/reservations/{number}/cancel", "key": key})
        with self.lock:
            record = self.reservations.get(number)
            if record is None:
                return 404, {"error": f"no reservation {number}"}
            record["status"] = "cancelled"
            return 200, record


def _handler(backend: Backend) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            customer = parse_qs(urlparse(self.path).query).get("customer", [None])[0]
            self._send(200, backend.active(customer))

        def do_POST(self) -> None:
            key = self.headers.get("Idempotency-Key")
            if not key:
                self._send(400, {"error": "Idempotency-Key missing"})
                return
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            path = urlparse(self.path).path
            if path == "/reservations":
                status, record = backend.reserve(key, body)
            else:
                status, record = backend.cancel(key, path.split("/")[2])
            if backend.fail_after_post:
                status, record = 504, {"error": "gateway timeout"}
            self._send(status, record)

    return Handler
