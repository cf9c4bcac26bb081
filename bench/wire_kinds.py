"""What each kind of model call sends, counted on the wire with no model (issue 37 item 3).

Both example domains' graphs run a few golden cases against a fake OpenAI-compatible
server on 127.0.0.1 that answers every ``json_schema`` request with the smallest reply
its schema allows (``false``, ``null``, ``[]``, the first enum value) and every other
request with one sentence. Every request body the server receives is split by call
kind (the reply schema's name, ``stream`` for the answer) into its messages' text, its
structured-output schema (``response_format`` or ``tools``, as sent) and the rest
(JSON punctuation, options). The fake's replies are not the model's: which calls run
differs from a real run (all tools answer no, so documents are read); the size of each
call of a kind is what this bench is for.

Usage (from the repository root)::

    python -m bench.wire_kinds                         # dev half, 3 cases a domain, seed 2
    python -m bench.wire_kinds --half heldout --sample 5 --seed 1
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from collections import defaultdict
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.generality import DOMAINS, _chosen
from bench.http_proxy import call_kind, message_chars
from toolweave.domains import golden_file, load_domain
from toolweave.evaluation import evaluate, load_golden
from toolweave.graph.context import Limits
from toolweave.llm.env import default_assistant


def smallest(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """The smallest value ``schema`` allows (``null`` where it may be null)."""
    if "$ref" in schema:
        return smallest(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    options = schema.get("anyOf")
    if options:
        if any(option.get("type") == "null" for option in options):
            return None
        return smallest(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: smallest(v, defs) for k, v in schema.get("properties", {}).items()}
    empty: dict[Any, Any] = {"array": [], "boolean": False, "integer": 0, "number": 0}
    return empty.get(kind, "x")


class Recorder(BaseHTTPRequestHandler):
    """Answers chat completions with :func:`smallest` replies; keeps every request body."""

    protocol_version = "HTTP/1.1"
    bodies: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        """Log nothing."""
        return

    def do_POST(self) -> None:
        """Record the body; reply with the smallest structured reply, or one sentence."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        Recorder.bodies.append(raw)
        body = json.loads(raw)
        fmt = body.get("response_format")
        content = "There is no information about it."
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            schema = fmt["json_schema"]["schema"]
            content = json.dumps(smallest(schema, schema.get("$defs", {})))
        if body.get("stream"):
            self._stream(content)
            return
        message = {"role": "assistant", "content": content}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        out = json.dumps({**_head("chat.completion"), "choices": [choice], "usage": usage})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out.encode())))
        self.end_headers()
        self.wfile.write(out.encode())

    def _stream(self, content: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for delta, finish in (({"role": "assistant", "content": content}, None), ({}, "stop")):
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            chunk = {**_head("chat.completion.chunk"), "choices": [choice]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def _head(kind: str) -> dict[str, Any]:
    return {"id": "fake", "object": kind, "created": 0, "model": "fake"}


def split(raw: str) -> tuple[str, int, int, int]:
    """(kind, message characters, schema characters, body characters) of one request body."""
    body = json.loads(raw)
    fmt = body.get("response_format") or body.get("tools")
    schema = len(json.dumps(fmt, ensure_ascii=False, separators=(",", ":"))) if fmt else 0
    return call_kind(body), message_chars(body), schema, len(raw)


def rows(domain: str, base_url: str, half: str, sample: int, seed: int) -> list[str]:
    """One table row per call kind of ``domain``'s chosen cases."""
    path = golden_file(domain)
    if path is None:
        return []
    cases = _chosen(load_golden(path), half, sample, seed)
    dom, tools = load_domain(domain)
    assistant = default_assistant(base_url=base_url, api_key="fake", model="fake", env={})
    Recorder.bodies.clear()
    evaluate(dom, tools, cases, assistant=assistant, limits=Limits(run_deadline_s=600.0))
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for raw in Recorder.bodies:
        kind, messages, schema, size = split(raw)
        total = totals[kind]
        for at, value in enumerate((1, messages, schema, size)):
            total[at] += value
    out = []
    for kind, (calls, messages, schema, size) in sorted(totals.items()):
        other = size - messages - schema
        out.append(
            f"| {domain} | {kind} | {calls} | {size / calls:,.0f} | {messages / calls:,.0f} "
            f"| {schema / calls:,.0f} | {other / calls:,.0f} |"
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table: per domain and call kind, characters a call."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", default="dev")
    parser.add_argument("--sample", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    lines = [
        "| domain | call kind | calls | body chars/call | message chars/call "
        "| schema chars/call | other chars/call |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    try:
        for domain in DOMAINS:
            lines += rows(domain, base_url, args.half, args.sample, args.seed)
    finally:
        server.shutdown()
        server.server_close()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
