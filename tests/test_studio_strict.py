"""Strict msgpack under ``langgraph dev``: the server's own checkpointer reads toolweave's types.

The session's dev server runs with ``LANGGRAPH_STRICT_MSGPACK=true`` (``conftest.py``),
the announced future default, in which unregistered types come back as plain dicts
(a clarification resume used to fail with "'dict' object has no attribute 'payload'").
``langgraph.json`` lists the state's types for the server's serde, checked here
against :func:`toolweave.state.serde.checkpoint_allowlist` so the list cannot drift.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolweave.state.serde import checkpoint_allowlist

ROOT = Path(__file__).resolve().parents[1]
GRAPH = "korhaz"
HOURS = "A Kardiológia rendelési ideje: hétfő-csütörtök 9:00-13:00."
SERDE_WARNINGS = ("unregistered type", "Blocked deserialization", "has no attribute")


def test_langgraph_json_allows_exactly_the_state_types() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    listed = config["checkpointer"]["serde"]["allowed_msgpack_modules"]
    assert [tuple(pair) for pair in listed] == checkpoint_allowlist()


def test_graph_copies_keep_the_state_types_on_the_msgpack_allowlist() -> None:
    from toolweave_korhaz.studio import graph

    expected = set(checkpoint_allowlist())
    # with_config/copy (used by build_graph and the server) lose LangGraph's own list
    assert expected <= graph._serde_allowlist
    assert expected <= graph.with_config(tags=["x"]).copy()._serde_allowlist


def _message(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "human", "content": text}]}


@pytest.mark.slow
@pytest.mark.network
def test_X5_strict_msgpack_resume_through_the_sdk(server_url: str, server_log: Path) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server_url, api_key=None)
    thread = client.threads.create()["thread_id"]
    paused = client.runs.wait(thread, GRAPH, input=_message("Mikor van rendelés?"))
    assert paused["__interrupt__"][0]["value"]["tool"] == "department_info"
    done = client.runs.wait(thread, GRAPH, command={"resume": "kardiológia"})
    assert isinstance(done, dict), done
    assert "__error__" not in done, done
    assert HOURS in done["answer"]
    assert client.threads.get(thread)["status"] == "idle"
    state = client.threads.get_state(thread)
    assert state["values"]["task"]["task_no"] == "1"
    log = server_log.read_text(errors="replace")
    assert not [line for line in log.splitlines() if any(w in line for w in SERDE_WARNINGS)]


@pytest.mark.slow
@pytest.mark.network
def test_X5_server_rejects_a_bad_message_and_the_thread_still_resumes(server_url: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server_url, api_key=None)
    thread = client.threads.create()["thread_id"]
    client.runs.wait(thread, GRAPH, input=_message("Mikor van rendelés?"))
    before = client.threads.get_state(thread)
    bad = client.runs.wait(thread, GRAPH, input=_message("   "), raise_error=False)
    assert "the message is empty" in json.dumps(bad), bad
    after = client.threads.get_state(thread)
    assert after["checkpoint"] == before["checkpoint"]
    assert after["values"]["messages"] == before["values"]["messages"]
    done = client.runs.wait(thread, GRAPH, command={"resume": "kardiológia"})
    assert HOURS in done["answer"]


def test_X5_every_served_run_has_an_overall_deadline() -> None:
    """The page and Studio run the served graph: a model that stalls ends in an error."""
    from toolweave_korhaz.studio import RUN_DEADLINE_S, graph

    assert graph.input_limits.run_deadline_s == RUN_DEADLINE_S
    assert graph.copy().input_limits.run_deadline_s == RUN_DEADLINE_S  # the server copies it
    scope = graph._run_scope([], frozenset(), None)
    assert scope.deadline is not None
    assert 0 < scope.deadline.remaining() <= RUN_DEADLINE_S
