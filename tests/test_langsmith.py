"""LangSmith traces read like the ledger; tracing is the user's switch; no secrets (issue 12).

The real langsmith client sends to a loopback recorder of the test's own
(``tests/servers/langsmith_recorder.py``), never to the internet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tracers.langchain import LangChainTracer, wait_for_all_tracers
from langsmith import Client
from servers.langsmith_recorder import Recorder, serve

from toolweave import RunContext, build_graph
from toolweave.domains import load_domain
from toolweave.llm.offline import OfflineAssistant

pytestmark = pytest.mark.network

INTERACTION = "Can I take ibuprofen with warfarin?"
SECRET = "987-65-4321"


@pytest.fixture
def recorder() -> Iterator[tuple[str, Recorder]]:
    yield from serve()


def traced_run(url: str, question: str, **invoke: Any) -> None:
    client = Client(api_url=url, api_key="ls-test-key", auto_batch_tracing=True)
    tracer = LangChainTracer(client=client, project_name="toolweave-tests")
    graph = build_graph(*load_domain("korhaz"), assistant=OfflineAssistant())
    graph.invoke({"messages": [HumanMessage(question)]}, {"callbacks": [tracer]}, **invoke)
    wait_for_all_tracers()
    client.flush()


def test_L1_trace_names_every_phase_run_after_its_phase_and_task(recorder) -> None:
    url, seen = recorder
    traced_run(url, INTERACTION)
    runs = seen.runs()
    phase_runs = [r for r in runs if "toolweave" in (r.get("tags") or [])]
    names = [r["name"] for r in phase_runs]
    for expected in (
        "normalize 1",
        "coordinate 1",
        "route 1.1",
        "execute 1.1",
        "route 1.2",
        "route 1",
        "execute 1",
        "answer 1",
    ):
        assert expected in names, names
    route = next(r for r in phase_runs if r["name"] == "route 1.1")
    metadata = route["extra"]["metadata"]
    assert metadata["task_no"] == "1.1"
    assert metadata["phase"] == "route"
    assert metadata["tools"] == ["substance_lookup"]
    execute = next(r for r in phase_runs if r["name"] == "execute 1")
    assert execute["extra"]["metadata"]["tools"] == ["drug_interaction"]


def test_X4_run_context_user_data_never_reaches_a_trace(recorder) -> None:
    url, seen = recorder
    traced_run(url, INTERACTION, context=RunContext(user_data={"ssn": SECRET}))
    assert seen.runs(), "the trace arrived"
    assert SECRET.encode() not in seen.raw()


SCRIPT = """
import sys
from langchain_core.messages import HumanMessage
from langchain_core.tracers.langchain import wait_for_all_tracers
from toolweave import build_graph
from toolweave.domains import load_domain
from toolweave.llm.offline import OfflineAssistant
graph = build_graph(*load_domain("korhaz"), assistant=OfflineAssistant())
graph.invoke({"messages": [HumanMessage("Mi a sürgősségi telefonszám?")]})
wait_for_all_tracers()
"""


def run_script(url: str, **env: str) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    clean.update(LANGSMITH_ENDPOINT=url, LANGSMITH_API_KEY="ls-test-key", **env)
    subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=clean,
        check=True,
        timeout=120,
        cwd=Path(__file__).parent,
    )


def test_tracing_stays_off_unless_the_environment_turns_it_on(recorder) -> None:
    url, seen = recorder
    run_script(url)
    assert seen.requests == []
    run_script(url, LANGSMITH_TRACING="true")
    names = [r["name"] for r in seen.runs()]
    assert "route 1" in names
    body = json.dumps(seen.runs())
    assert "ls-test-key" not in body
