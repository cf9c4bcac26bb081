"""Resident memory of one LangGraph server with both example domains, beside a bare one's.

Two ``langgraph dev`` servers (``--no-reload``, in-memory runtime, the offline model:
no model key) are started one after the other on 127.0.0.1, each from a
``langgraph.json`` written to a temporary folder:

- **toolweave**: the ``korhaz`` and ``pomoc`` graphs of the example domains
  (``toolweave_korhaz.studio:graph``, ``toolweave_pomoc.studio:graph``), with the
  repository's msgpack allowlist;
- **bare**: one trivial LangGraph graph (one node appending an AI message), served
  the same way.

Each server answers one stateless run per graph (``POST /runs/wait``), so the
domains' data and indexes are loaded, then its resident memory is read from
``/proc/<pid>/status`` (``VmRSS``, and ``VmHWM``, the peak) for the server process
and, summed, for every process of its group. The difference is what the two
domains, toolweave and its imports cost in memory.

Run (from the repository root): ``python bench/server_memory.py``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import markdown_table

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 180.0
RUN_TIMEOUT_S = 300.0
QUESTIONS = {
    "korhaz": "Hol lehet parkolni?",
    "pomoc": "How many vacation days do I have left?",
    "bare": "hello",
}
USER_DATA = {"pomoc": {"employee_id": "E1001"}}
BARE_GRAPH = '''"""A trivial LangGraph graph: one node that answers."""

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


def answer(state: MessagesState) -> dict:
    return {"messages": [AIMessage(content="hi")]}


builder = StateGraph(MessagesState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
graph = builder.compile()
'''


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cli() -> str:
    beside = Path(sys.executable).with_name("langgraph")
    found = str(beside) if beside.exists() else shutil.which("langgraph")
    if found is None:
        raise SystemExit("the langgraph CLI is not installed (pip install 'langgraph-cli[inmem]')")
    return found


def _env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_"))
    }
    env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false", PYTHONUNBUFFERED="1")
    return env


def toolweave_config() -> dict[str, Any]:
    """Both example domains' graphs, with the repository's serde allowlist."""
    repo = json.loads((ROOT / "langgraph.json").read_text())
    return {
        "dependencies": [str(ROOT), str(ROOT / "examples/korhaz"), str(ROOT / "examples/pomoc")],
        "graphs": {
            "korhaz": "toolweave_korhaz.studio:graph",
            "pomoc": "toolweave_pomoc.studio:graph",
        },
        "env": repo.get("env", {}),
        "checkpointer": repo.get("checkpointer", {}),
    }


def bare_config(folder: Path) -> dict[str, Any]:
    """One trivial graph, written to ``folder``."""
    (folder / "bare_graph.py").write_text(BARE_GRAPH)
    return {
        "dependencies": [str(folder)],
        "graphs": {"bare": str(folder / "bare_graph.py") + ":graph"},
        "env": {"LANGSMITH_TRACING": "false"},
    }


def _is_up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=2) as reply:
            return bool(json.load(reply).get("ok"))
    except (OSError, ValueError):
        return False


@contextmanager
def served(config: Mapping[str, Any], folder: Path) -> Iterator[tuple[str, int]]:
    """``langgraph dev`` for ``config`` on a free loopback port; its URL and pid, then stopped."""
    port = _free_port()
    (folder / "langgraph.json").write_text(json.dumps(config, indent=2))
    command = [_cli(), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--config", str(folder / "langgraph.json")]
    log = (folder / "server.log").open("wb")
    proc = subprocess.Popen(
        command,
        cwd=folder,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _is_up(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (folder / "server.log").read_text(errors="replace")[-3000:]
                raise SystemExit(f"langgraph dev did not come up:\n{tail}")
            time.sleep(0.5)
        yield url, proc.pid
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if proc.poll() is not None:
                break
            os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                continue
        log.close()


def ask(url: str, graph: str) -> str:
    """One stateless run of ``graph``; the last message's text."""
    body: dict[str, Any] = {
        "assistant_id": graph,
        "input": {"messages": [{"role": "human", "content": QUESTIONS[graph]}]},
    }
    if graph in USER_DATA:
        body["input"]["user_data"] = USER_DATA[graph]
    request = urllib.request.Request(
        f"{url}/runs/wait",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=RUN_TIMEOUT_S) as reply:
        values = json.load(reply)
    messages = values.get("messages") or [{}]
    return str(messages[-1].get("content", ""))[:60]


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def _group(pid: int) -> list[int]:
    """Every live process of ``pid``'s process group (the server and any child)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pid:
                    members.append(int(entry.name))
            except (ProcessLookupError, PermissionError):
                continue
    return members


def measure(label: str, config_of: Any, settle_s: float) -> list[Any]:
    """Start the server, answer once per graph, read its resident memory."""
    with tempfile.TemporaryDirectory(prefix="toolweave-mem-") as name:
        folder = Path(name)
        config = config_of(folder)
        with served(config, folder) as (url, pid):
            answers = [f"{graph}: {ask(url, graph)!r}" for graph in config["graphs"]]
            time.sleep(settle_s)
            group = _group(pid)
            rss = _status_kb(pid, "VmRSS")
            peak = _status_kb(pid, "VmHWM")
            total = sum(_status_kb(member, "VmRSS") for member in group)
    print(f"  {label}: " + "; ".join(answers), file=sys.stderr, flush=True)
    return [label, ", ".join(config["graphs"]), rss / 1024, peak / 1024, len(group), total / 1024]


def main(argv: list[str] | None = None) -> None:
    """Measure both servers and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=2.0, help="seconds after the runs")
    args = parser.parse_args(argv)
    rows = [
        measure("bare LangGraph", bare_config, args.settle),
        measure("toolweave", lambda folder: toolweave_config(), args.settle),
    ]
    extra = rows[1][2] - rows[0][2]
    headers = [
        "server",
        "graphs",
        "server RSS MiB",
        "server peak RSS MiB",
        "processes in group",
        "group RSS MiB",
    ]
    print(markdown_table(headers, rows))
    print(
        f"\ntoolweave with both domains: {rows[1][2]:.0f} MiB resident, "
        f"{extra:+.0f} MiB ({rows[1][2] / rows[0][2]:.2f}x) beside the bare server, after one "
        "stateless run per graph (`langgraph dev --no-reload`, in-memory runtime, offline model)."
    )


if __name__ == "__main__":
    main()
