"""Start and stop a private ``langgraph dev`` on a free loopback port (for the page tests).

The session's shared server is ``server_url`` in ``conftest.py``; tests that must
stop their server, or need another ``langgraph.json``, start their own here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STARTUP_TIMEOUT = 90.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def langgraph_cli() -> str:
    beside = Path(sys.executable).with_name("langgraph")
    found = str(beside) if beside.exists() else shutil.which("langgraph")
    if found is None:
        pytest.fail("the langgraph CLI is not installed (pip install 'langgraph-cli[inmem]')")
    return found


def server_env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_"))
    }
    env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false", PYTHONUNBUFFERED="1")
    env.update(LANGGRAPH_STRICT_MSGPACK="true")  # like the session server (conftest.py)
    return env


def tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def is_up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=2) as reply:
            return bool(json.load(reply).get("ok"))
    except (OSError, ValueError):
        return False


def repo_config() -> dict[str, object]:
    """The repo's ``langgraph.json``, usable from another folder."""
    config = dict(json.loads((ROOT / "langgraph.json").read_text()))
    config["dependencies"] = [str(ROOT / dep) for dep in config["dependencies"]]
    return config


@dataclass
class DevServer:
    """A running ``langgraph dev``: its URL, and how to stop it."""

    url: str
    proc: subprocess.Popen[bytes]
    log_path: Path

    def stop(self) -> None:
        """Stop the whole process group (SIGTERM, then SIGKILL); bounded waits."""
        if self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue


@contextmanager
def langgraph_dev(
    workdir: Path, config: dict[str, object] | None = None, *, port: int | None = None
) -> Iterator[DevServer]:
    """``langgraph dev`` for ``config`` (default: the repo's ``langgraph.json``), always stopped.

    The config is written to ``workdir/langgraph.json`` and the server runs there,
    so its ``.langgraph_api`` (threads persisted across a restart in the same
    ``workdir``) stays in the test's folder. ``port`` defaults to a free one.
    """
    if config is None:
        config = repo_config()
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = workdir / "server.log"
    command = [langgraph_cli(), "dev", "--no-browser", "--no-reload"]
    command += ["--port", str(port), "--host", "127.0.0.1"]
    (workdir / "langgraph.json").write_text(json.dumps(config, indent=2))
    command += ["--config", str(workdir / "langgraph.json")]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            command,
            cwd=workdir,
            env=server_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        server = DevServer(url, proc, log_path)
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while not is_up(url):
                if proc.poll() is not None:
                    pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{tail(log_path)}")
                if time.monotonic() > deadline:
                    pytest.fail(f"langgraph dev not up after {STARTUP_TIMEOUT}s:\n{tail(log_path)}")
                time.sleep(0.5)
            yield server
        finally:
            server.stop()
