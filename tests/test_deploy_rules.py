"""SPEC Y1: the whole product on several server processes over one PostgreSQL database.

``scripts/multiworker.sh start`` runs GraphHarbor (docs/deploy/servers.md): API
processes that serve the LangGraph API and the chat page at each address, and
run-executing worker processes with leases, over one PostgreSQL database and Redis.
``.ci/run`` starts one deployment of the repository's own ``langgraph.json``
(``TOOLWEAVE_MW_URLS``); the crash test starts its own, with a test graph beside the
hospital's. Without them the tests skip locally and fail under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from durable import in_ci, postgres_url
from side_effect_worker import PHONE, QUESTION, REPLY

pytestmark = [pytest.mark.slow, pytest.mark.network, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "multiworker.sh"
CHROMIUM = Path(os.environ.get("TOOLWEAVE_CHROMIUM", "/usr/bin/chromium"))
CONSULTATION = "When are consultation hours?"
WAIT_S = 120.0
"""Upper bound of every wait on the deployment (the machine is shared; steps take seconds)."""
CONVERSATIONS = 50


def _needed(reason: str) -> None:
    if in_ci():
        pytest.fail(f"{reason}: .ci/run provides it, so the test must run in CI")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def urls() -> list[str]:
    """The API processes of the deployment ``.ci/run`` started from ``langgraph.json``."""
    found = os.environ.get("TOOLWEAVE_MW_URLS", "").split()
    if len(found) < 2:
        _needed('TOOLWEAVE_MW_URLS is not set (eval "$(bash scripts/multiworker.sh start ...)")')
    return found


def _client(url: str) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=url, api_key=None)


def _exports(text: str) -> dict[str, str]:
    return dict(re.findall(r"^export (\w+)='([^']*)'$", text, flags=re.MULTILINE))


@pytest.fixture(scope="module")
def crash_deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A deployment of the hospital graph plus ``tests/y1_graph.py``, with 5 s leases."""
    postgres_url()
    if not (ROOT / ".venv-graphharbor" / "bin" / "graphharbor").exists():
        _needed(".venv-graphharbor is missing (bash scripts/multiworker.sh install)")
    folder = tmp_path_factory.mktemp("y1")
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    config["graphs"]["y1_callbacks"] = f"{ROOT / 'tests' / 'y1_graph.py'}:graph"
    (folder / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    files = {name: folder / name for name in ("ledger.db", "probe.txt", "pause.flag")}
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TOOLWEAVE_MW"))},
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
        "TOOLWEAVE_Y1_LEDGER": str(files["ledger.db"]),
        "TOOLWEAVE_Y1_PROBE": str(files["probe.txt"]),
        "TOOLWEAVE_Y1_PAUSE": str(files["pause.flag"]),
        "GRAPHHARBOR_LEASE_SECONDS": "5",
        "GRAPHHARBOR_REAPER_INTERVAL_SECONDS": "1",
    }
    command = ["bash", str(SCRIPT), "start", "--fresh-database", "--port", "0"]
    started = subprocess.run(
        [*command, "--config", str(folder / "langgraph.json")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert started.returncode == 0, started.stderr[-3000:]
    exports = _exports(started.stdout)
    pids = (Path(exports["TOOLWEAVE_MW_DIR"]) / "pids").read_text().split("\n")
    workers = [int(line.split()[1]) for line in pids if line.startswith("worker ")]
    try:
        yield {"urls": exports["TOOLWEAVE_MW_URLS"].split(), "workers": workers, **files}
    finally:
        subprocess.run(
            ["bash", str(SCRIPT), "stop", exports["TOOLWEAVE_MW_DIR"]], timeout=120, check=False
        )


def test_Y1_each_process_serves_the_api_and_the_page_at_one_address(urls: list[str]) -> None:
    import urllib.request

    for url in urls:
        with urllib.request.urlopen(f"{url}/ok", timeout=10) as response:
            assert json.load(response) == {"ok": True}
        with urllib.request.urlopen(f"{url}/chat", timeout=10) as response:
            assert response.status == 200
            assert "text/html" in response.headers["content-type"]
            assert "<textarea" in response.read().decode()
        assert _client(url).assistants.search(graph_id="korhaz")  # the API, same address


def test_Y1_clarification_asked_through_one_process_is_answered_through_another(
    urls: list[str],
) -> None:
    first, second = _client(urls[0]), _client(urls[1])
    thread = first.threads.create()["thread_id"]
    paused = first.runs.wait(
        thread, "korhaz", input={"messages": [{"role": "human", "content": CONSULTATION}]}
    )
    interrupts = paused["__interrupt__"]
    assert interrupts[0]["value"]["type"] == "clarification"
    assert "Cardiology" in interrupts[0]["value"]["choices"]
    assert second.threads.get(thread)["status"] == "interrupted"

    done = second.runs.wait(thread, "korhaz", command={"resume": "Cardiology"})
    assert "9:00-13:00" in done["answer"]
    assert first.threads.get(thread)["status"] == "idle"
    activated = first.threads.get_state(thread)["values"]["activated"]
    assert activated.count("1:department_info") == 1  # nothing ran twice (Q4)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium through Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _needed("playwright is not installed (pip install -e '.[dev]')")
    if not CHROMIUM.exists():
        _needed(f"{CHROMIUM} not found (apt-get install chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--headless", "--disable-gpu"]
        )
        try:
            yield launched
        finally:
            launched.close()


def test_Y1_browser_conversation_clarified_through_another_process(
    urls: list[str], browser: Any, tmp_path: Path
) -> None:
    """The page of process A asks; once the question shows, every API call goes to B.

    Playwright forwards the page's own API requests (``/threads/...``) to the second
    process, so the user's reply reaches the thread through another server.
    """
    first, second = urls[0], urls[1]
    forwarded: list[str] = []

    def to_second(route: Any) -> None:
        request = route.request
        forwarded.append(f"{request.method} {request.url}")
        response = route.fetch(url=second + request.url[len(first) :])
        route.fulfill(response=response)

    page = browser.new_page()
    try:
        page.goto(f"{first}/chat", wait_until="domcontentloaded")
        composer = page.locator("form:has(textarea)")
        composer.locator("textarea").fill(CONSULTATION)
        composer.locator("[type=submit]").click()
        page.get_by_text("Which department?").first.wait_for(timeout=WAIT_S * 1000)
        page.screenshot(path=str(tmp_path / "asked-through-first.png"))

        page.route(re.compile(re.escape(first) + r"/threads(/.*)?$"), to_second)
        composer.locator("textarea").fill("Cardiology")
        composer.locator("[type=submit]").click()
        page.get_by_text("9:00-13:00").first.wait_for(timeout=WAIT_S * 1000)
        page.screenshot(path=str(tmp_path / "answered-through-second.png"))
    finally:
        page.close()
    runs = [line for line in forwarded if line.startswith("POST ") and "/runs" in line]
    assert runs, forwarded  # the reply went through the second process
    thread = re.search(r"/threads/([0-9a-f-]{36})/", runs[0])
    assert thread is not None
    values = _client(first).threads.get_state(thread.group(1))["values"]
    assert "9:00-13:00" in values["answer"]
    assert values["activated"].count("1:department_info") == 1


def test_Y1_fifty_concurrent_conversations_across_processes_without_cross_talk(
    urls: list[str],
) -> None:
    """Each conversation asks on one process and picks its department on the other."""
    from langgraph_sdk import get_client

    clients = [get_client(url=url, api_key=None) for url in urls]
    probe = _client(urls[0])
    choices = probe.runs.wait(
        probe.threads.create()["thread_id"],
        "korhaz",
        input={"messages": [{"role": "human", "content": CONSULTATION}]},
    )["__interrupt__"][0]["value"]["choices"]

    async def conversation(n: int) -> tuple[str, str, str]:
        asking, answering = clients[n % len(clients)], clients[(n + 1) % len(clients)]
        department = choices[n % len(choices)]
        thread = (await asking.threads.create())["thread_id"]
        paused = await asking.runs.wait(
            thread, "korhaz", input={"messages": [{"role": "human", "content": CONSULTATION}]}
        )
        assert paused["__interrupt__"][0]["value"]["type"] == "clarification"
        done = await answering.runs.wait(thread, "korhaz", command={"resume": department})
        return thread, department, done["answer"]

    async def everything() -> list[tuple[str, str, str]]:
        return await asyncio.wait_for(
            asyncio.gather(*(conversation(n) for n in range(CONVERSATIONS))), timeout=600
        )

    with ThreadPoolExecutor(1) as pool:  # its own event loop: Playwright's runs in this thread
        results = pool.submit(asyncio.run, everything()).result()
    assert len({thread for thread, _, _ in results}) == CONVERSATIONS
    for thread, department, answer in results:
        assert department in answer, (thread, department, answer)
        for other in choices:
            if other != department and other not in department:
                assert other not in answer, (thread, department, answer)
        messages = _client(urls[0]).threads.get_state(thread)["values"]["messages"]
        said = [m["content"] for m in messages if m["type"] == "human"]
        assert said == [CONSULTATION, department]  # its own question and reply only


def _wait_for(check: Any, what: str) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    pytest.fail(f"timed out after {WAIT_S:.0f} s waiting for {what}")


def _masked(answer: str) -> str:
    """The answer without the callback request numbers (each thread gets new ones)."""
    return re.sub(r"\d+\. számú|request no\. \d+", "#", answer)


def _ledger_keys(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT idempotency_key FROM callback_requests")]


def test_Y1_worker_killed_mid_run_thread_finishes_elsewhere_with_effects_once(
    crash_deployment: dict[str, Any],
) -> None:
    first, second = (_client(url) for url in crash_deployment["urls"])
    ask = {"messages": [{"role": "human", "content": QUESTION}], "user_data": {"phone": PHONE}}

    calm = first.threads.create()["thread_id"]
    assert first.runs.wait(calm, "y1_callbacks", input=ask)["__interrupt__"]
    undisturbed = second.runs.wait(calm, "y1_callbacks", command={"resume": REPLY})["answer"]
    calm_keys = set(_ledger_keys(crash_deployment["ledger.db"]))
    assert len(calm_keys) == 2  # two callbacks recorded, one each

    crash_deployment["pause.flag"].write_text("pause once")
    thread = first.threads.create()["thread_id"]
    first.runs.create(thread, "y1_callbacks", input=ask)
    probe: Path = crash_deployment["probe.txt"]
    paused = _wait_for(
        lambda: [line.split() for line in probe.read_text().splitlines() if "paused" in line],
        "a worker to pause after its first side effect",
    )
    _, key, pid = paused[0]
    assert int(pid) in crash_deployment["workers"]
    os.kill(int(pid), signal.SIGKILL)

    _wait_for(
        lambda: second.threads.get(thread)["status"] == "interrupted",
        "the requeued run to reach the clarification on another worker",
    )
    finished = second.runs.wait(thread, "y1_callbacks", command={"resume": REPLY})["answer"]
    assert _masked(finished) == _masked(undisturbed)

    keys = [k for k in _ledger_keys(crash_deployment["ledger.db"]) if k not in calm_keys]
    assert len(keys) == 2
    assert key in keys
    attempts = [line.split() for line in probe.read_text().splitlines()]
    retried = {p for verb, k, p in attempts if verb == "attempt" and k == key}
    assert pid in retried
    assert len(retried) == 2


def test_Y1_the_readme_command_is_the_one_ci_runs() -> None:
    """The README's multi-process command, as written, is what ``.ci/run`` starts the tests on."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"bash scripts/multiworker\.sh start ([^)\"`]*)", readme)
    assert command is not None
    options = command.group(1).split()
    started = re.search(r"bash scripts/multiworker\.sh start ([^)\"`<]*)", ci)
    assert started is not None
    assert started.group(1).split() == [*options, "--port", "0"]  # free ports in CI only
    assert "scripts/postgres.sh start --install" in readme
    assert "langgraph.json" not in options
