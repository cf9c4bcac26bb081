"""The clinic's booking back end, an HTTP server on 127.0.0.1 (a test stand-in).

``GET /creneaux?jour=mardi`` lists the free slots; ``POST /rendez-vous`` and ``POST
/pension`` record a booking once per ``Idempotency-Key`` header (a second POST with the
same key gets the first record back, status 200). ``posts`` counts every POST received,
``gets`` every GET, ``records`` what was booked.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

SLOTS: list[dict[str, str]] = [
    {"jour": "lundi", "heure": "10h00", "veterinaire": "Dr Claire Martin"},
    {"jour": "mardi", "heure": "10h00", "veterinaire": "Dr Claire Martin"},
    {"jour": "mardi", "heure": "16h30", "veterinaire": "Dr Julien Dubois"},
    {"jour": "mercredi", "heure": "9h30", "veterinaire": "Dr Julien Dubois"},
    {"jour": "jeudi", "heure": "11h00", "veterinaire": "Dr Claire Martin"},
    {"jour": "jeudi", "heure": "14h00", "veterinaire": "Dr Julien Dubois"},
    {"jour": "vendredi", "heure": "9h00", "veterinaire": "Dr Claire Martin"},
    {"jour": "vendredi", "heure": "15h00", "veterinaire": "Dr Claire Martin"},
    {"jour": "samedi", "heure": "10h00", "veterinaire": "Dr Julien Dubois"},
]


class Backend:
    """The server, its counters and a delay a test may set for each POST."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        self.gets: list[str] = []
        self.records: dict[str, dict[str, Any]] = {}
        self.post_delay = 0.0
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

    def book(self, path: str, key: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.posts.append({"path": path, "key": key, **body})
        time.sleep(self.post_delay)
        with self.lock:
            if key in self.records:
                return 200, self.records[key]
            prefix = "RDV" if path == "/rendez-vous" else "PEN"
            record = {"numero": f"{prefix}-{len(self.records) + 1}", **body}
            self.records[key] = record
            return 201, record


def _handler(backend: Backend) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            backend.gets.append(self.path)
            jour = parse_qs(url.query).get("jour", [None])[0]
            self._send(200, [s for s in SLOTS if jour in (None, s["jour"])])

        def do_POST(self) -> None:
            key = self.headers.get("Idempotency-Key")
            if not key:
                self._send(400, {"error": "Idempotency-Key manquant"})
                return
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            status, record = backend.book(urlparse(self.path).path, key, body)
            self._send(status, record)

    return Handler


if __name__ == "__main__":  # python -m newuser17_domain.backend: serve until Ctrl-C
    running = Backend().start()
    print(running.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        running.stop()
