"""Beyond one machine: two LangGraph server processes on PostgreSQL and Redis (issue 12).

The same ``langgraph.json`` that ``langgraph dev`` serves runs on the stock LangGraph
server with the MIT-licensed Postgres+Redis runtime (``langgraph-runtime-pg``, started with
its ``langhost`` CLI; ``scripts/multiworker.sh`` installs it in its own venv and starts
Redis). A thread paused for a clarification on one server is answered through the other.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from durable import in_ci, postgres_url

pytestmark = [pytest.mark.slow, pytest.mark.network, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[1]
STARTUP_TIMEOUT = 120.0
NEEDS = (
    "TOOLWEAVE_LANGHOST and TOOLWEAVE_TEST_REDIS_URL are not set "
    '(eval "$(bash scripts/multiworker.sh start)")'
)


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if value:
        return value
    if in_ci():
        pytest.fail(f"{NEEDS}; .ci/run starts them, so the test must run in CI")
    pytest.skip(NEEDS)


def _config_without_custom_routes(folder: Path) -> Path:
    """``langgraph.json`` without its ``http`` app (the chat page), next to the project.

    With the custom routes mounted, langgraph-api 0.11 under langgraph-runtime-pg
    started without running its lifespan (uvicorn: "ASGI 'lifespan' protocol appears
    unsupported") and answered every request, ``/ok`` included, with HTTP 500; the same
    lifespan runs fine in isolation. The graphs, the serde allowlist and the rest of
    the configuration are the project's own.
    """
    import json

    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    config.pop("http", None)
    config["dependencies"] = [str(ROOT / dep) for dep in config["dependencies"]]
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _database(url: str) -> str:
    """A fresh database on the test server for the LangGraph server's own tables."""
    import psycopg

    name = f"lgserver_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name


def _wait_ok(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    import urllib.request

    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langhost exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/ok", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"langhost did not answer /ok within {STARTUP_TIMEOUT:.0f} s")


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    langhost = _required("TOOLWEAVE_LANGHOST")
    redis = _required("TOOLWEAVE_TEST_REDIS_URL")
    database = _database(postgres_url())
    logs = tmp_path_factory.mktemp("langhost")
    config = _config_without_custom_routes(logs)
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "TOOLWEAVE_DATABASE"))
        },
        "LANGSMITH_TRACING": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    }
    procs: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    try:
        for n in range(2):
            port = _free_port()
            log = logs / f"server{n}.log"
            with log.open("wb") as out:
                procs.append(
                    subprocess.Popen(
                        [
                            langhost,
                            "serve",
                            "-c",
                            str(config),
                            "--port",
                            str(port),
                            "--database-uri",
                            database,
                            "--redis-uri",
                            redis,
                            "--no-browser",
                        ],
                        cwd=ROOT,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )
            _wait_ok(port, procs[-1], log)
            urls.append(f"http://127.0.0.1:{port}")
        yield urls[0], urls[1]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_Q3_clarification_paused_on_one_server_is_answered_through_the_other(two_servers):
    from langgraph_sdk import get_sync_client

    first, second = (get_sync_client(url=url, api_key=None) for url in two_servers)
    thread = first.threads.create()
    paused = first.runs.wait(
        thread["thread_id"],
        "korhaz",
        input={"messages": [{"role": "human", "content": "When are consultation hours?"}]},
    )
    interrupts = paused["__interrupt__"]
    assert interrupts[0]["value"]["type"] == "clarification"
    assert "Cardiology" in interrupts[0]["value"]["choices"]
    assert second.threads.get(thread["thread_id"])["status"] == "interrupted"

    done = second.runs.wait(thread["thread_id"], "korhaz", command={"resume": "Cardiology"})
    assert "9:00-13:00" in done["answer"]
    assert first.threads.get(thread["thread_id"])["status"] == "idle"
    activated = first.threads.get_state(thread["thread_id"])["values"]["activated"]
    assert activated.count("1:department_info") == 1  # nothing ran twice (Q4)
