"""``langgraph dev`` serves ``langgraph.json``'s graph; the SDK runs and streams it (offline).

Starts the real dev server on a free loopback port with no OpenAI key, so the
offline model answers, and always stops it (the whole process group).
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
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolweave.domains.korhaz.examples import EXAMPLE_QUESTIONS

pytestmark = [pytest.mark.slow, pytest.mark.network]

ROOT = Path(__file__).resolve().parents[1]
STARTUP_TIMEOUT = 90.0
PHASE_NODES = ("normalize", "route", "execute", "answer")


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


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path_factory.mktemp("langgraph_dev") / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                _langgraph_cli(),
                "dev",
                "--no-browser",
                "--no-reload",
                "--port",
                str(port),
                "--host",
                "127.0.0.1",
            ],
            cwd=ROOT,
            env=_server_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{_tail(log_path)}")
                try:
                    with urllib.request.urlopen(f"{url}/ok", timeout=2) as reply:
                        if json.load(reply).get("ok"):
                            break
                except (OSError, ValueError):
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"langgraph dev not up after {STARTUP_TIMEOUT}s:\n{_tail(log_path)}"
                    )
                time.sleep(0.5)
            yield url
        finally:
            _stop(proc)


def _tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def test_langgraph_json_points_at_a_checkpointer_free_graph() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    assert config["env"]["LANGSMITH_TRACING"] == "false"
    spec = config["graphs"]["korhaz"]
    assert (spec["path"] if isinstance(spec, dict) else spec) == "toolweave.studio:graph"
    from toolweave.studio import graph

    assert graph.checkpointer is None  # the dev server refuses a graph with its own


def test_server_answers_an_example_question_offline(server_url: str) -> None:
    from langgraph_sdk import get_sync_client

    example = EXAMPLE_QUESTIONS[0]
    client = get_sync_client(url=server_url, api_key=None)
    thread = client.threads.create()
    result = client.runs.wait(
        thread["thread_id"],
        "korhaz",
        input={"messages": [{"role": "human", "content": example.question}]},
    )
    assert isinstance(result, dict), result
    for expected in example.expected_substrings:
        assert expected in result["answer"]
    for tool in example.expected_tools:
        assert f"1:{tool}" in result["activated"]
    assert result["messages"][-1]["type"] == "ai"


def test_P2_server_streams_phase_steps_and_progress_events(server_url: str) -> None:
    from langgraph_sdk import get_sync_client

    example = next(q for q in EXAMPLE_QUESTIONS if "department_info" in q.expected_tools)
    client = get_sync_client(url=server_url, api_key=None)
    thread = client.threads.create()
    steps: list[str] = []
    custom: list[dict[str, object]] = []
    for part in client.runs.stream(
        thread["thread_id"],
        "korhaz",
        input={"messages": [{"role": "human", "content": example.question}]},
        stream_mode=["updates", "custom"],
    ):
        if part.event == "updates":
            steps.extend(part.data)
        elif part.event == "custom":
            custom.append(part.data)
        assert part.event != "error", part.data
    for node in PHASE_NODES:
        assert node in steps, steps
    assert steps.index("normalize") < steps.index("route") < steps.index("execute")
    assert steps[-1] == "answer"
    assert steps.count("execute") >= 2  # one tool per step: department_info, korhaz_search
    routed = [e for e in custom if e.get("type") == "routed" and e.get("task_no") == "1"]
    assert routed
    assert "department_info" in routed[0]["tools"]
    progress = [e["text"] for e in custom if e.get("type") == "tool_progress"]
    assert "TOOL_PROGRESS:DEPARTMENT_INFO:FETCHING_DATA" in progress
