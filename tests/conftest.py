"""Shared fixtures: the scripted OpenAI server and one ``langgraph dev`` server per session."""

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
from pathlib import Path

import pytest
from cli_support import OFFLINE_UNSET
from fake_openai import FakeOpenAI
from stores import STORE_KINDS, StoreFactory, store_factory
from web_support import SHOTS, browser, dark_page, page, probe_server, tabs  # noqa: F401

STARTED = pytest.StashKey[float]()

ROOT = Path(__file__).resolve().parents[1]
STARTUP_TIMEOUT = 90.0


@pytest.fixture(autouse=True)
def bundled_domain(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line's default domain is the bundled example, ``korhaz`` (N2, N4).

    With several domains installed nothing is picked silently (N2), so the tests name
    the one they ask, through ``TOOLWEAVE_DOMAIN``: the suite stays green with any
    other domain package installed beside the example (N4). Tests of the choice itself
    unset it.
    """
    monkeypatch.setenv("TOOLWEAVE_DOMAIN", "korhaz")


@pytest.fixture
def offline_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The CLI with no model key (the offline model answers) and a private data dir."""
    for name in OFFLINE_UNSET:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture(params=STORE_KINDS)
def make_store(request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    """A factory of empty document stores, once SQLite and once PostgreSQL (issue 12)."""
    yield from store_factory(request.param)


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (see ``tests/fake_openai.py``).

    Base-URL and proxy variables of the environment are cleared, so the client
    talks to this server and nothing else.
    """
    for name in ("OPENAI_API_BASE", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    with FakeOpenAI() as server:
        yield server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _langgraph_cli() -> str:
    beside = Path(sys.executable).with_name("langgraph")
    found = str(beside) if beside.exists() else shutil.which("langgraph")
    if found is None:
        pytest.fail("the langgraph CLI is not installed (pip install 'langgraph-cli[inmem]')")
    return found


def _server_env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_"))
    }
    env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false", PYTHONUNBUFFERED="1")
    # strict msgpack (the announced future default): toolweave's state types must be
    # read back by the server's own checkpointer without the unregistered-type fallback
    env.update(LANGGRAPH_STRICT_MSGPACK="true")
    return env


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _wait_until_up(proc: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{_tail(log_path)}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as reply:
                if json.load(reply).get("ok"):
                    return
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"langgraph dev not up after {STARTUP_TIMEOUT}s:\n{_tail(log_path)}")
        time.sleep(0.5)


@pytest.fixture(scope="session")
def server_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the session's ``langgraph dev`` writes its log."""
    return tmp_path_factory.mktemp("langgraph_dev") / "server.log"


@pytest.fixture(scope="session")
def server_url(server_log: Path) -> Iterator[str]:
    """``langgraph dev`` on a free loopback port with no OpenAI key (the offline model answers).

    Started once per test session for every module that asks for it, and
    always stopped (the whole process group).
    """
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = server_log
    command = [_langgraph_cli(), "dev", "--no-browser", "--no-reload"]
    command += ["--port", str(port), "--host", "127.0.0.1"]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=_server_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            _wait_until_up(proc, url, log_path)
            yield url
        finally:
            _stop(proc)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[STARTED] = time.time()
    config.addinivalue_line(
        "markers", "expected_page_errors(*texts): page errors a browser test expects (web_support)"
    )


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Say where the chat page's screenshots of this run are (``tests/web_support.py``)."""
    started = config.stash.get(STARTED, time.time())
    if SHOTS.is_dir() and any(p.stat().st_mtime >= started for p in SHOTS.glob("*.png")):
        terminalreporter.write_line(f"screenshots of the chat page's states: {SHOTS}")
