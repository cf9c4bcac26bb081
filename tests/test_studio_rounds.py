"""Clarification rounds through ``langgraph dev`` and its SDK (Q1, Q2), offline.

Uses the session's one dev server (``server_url`` in ``conftest.py``). A run
paused on a question returns ``"__interrupt__"`` with toolweave's payload, the
thread's status is ``"interrupted"``, and the reply resumes it either as
``command={"resume": reply}`` or as the next message on the thread.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolweave_korhaz.departments import departments

pytestmark = [pytest.mark.slow, pytest.mark.network]

GRAPH = "korhaz"
QUESTION = "Mikor van rendelés?"
PAYLOAD = {
    "type": "clarification",
    "question": "Melyik osztály? Írja be az osztály nevét vagy a sorszámát.",
    "choices": [d.name_hu for d in departments()],
    "tool": "department_info",
    "task_no": "1",
}
HOURS = "A Kardiológia rendelési ideje: hétfő-csütörtök 9:00-13:00."


@pytest.fixture(scope="module")
def client(server_url: str) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server_url, api_key=None)


def _message(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "human", "content": text}]}


def _ask_department(client: Any) -> str:
    """A new thread paused on "which department?"; its id."""
    thread = client.threads.create()["thread_id"]
    result = client.runs.wait(thread, GRAPH, input=_message(QUESTION))
    assert isinstance(result, dict), result
    (pending,) = result["__interrupt__"]
    assert pending["value"] == PAYLOAD
    assert "answer" not in result or not result["answer"]
    assert client.threads.get(thread)["status"] == "interrupted"
    state = client.threads.get_state(thread)
    assert state["next"] == ["ask_user"]
    assert [i["value"] for i in state["interrupts"]] == [PAYLOAD]
    return str(thread)


def _assert_answered(client: Any, thread: str, result: Any) -> None:
    assert isinstance(result, dict), result
    assert "__interrupt__" not in result
    assert HOURS in result["answer"]
    assert result["activated"] == ["1:department_info", "1:korhaz_search"]
    assert result["messages"][-1]["type"] == "ai"
    assert client.threads.get(thread)["status"] == "idle"


def test_Q2_sdk_resume_with_a_command_finishes_the_answer(client: Any) -> None:
    thread = _ask_department(client)
    result = client.runs.wait(thread, GRAPH, command={"resume": "kardiológia"})
    _assert_answered(client, thread, result)
    replies = [e for e in result["ledger"] if e["kind"] == "clarification"]
    assert [e["verdict"] for e in replies] == ["asked", "replied"]
    assert replies[1]["reason"] == "resumed with Command(resume=...)"


def test_Q2_sdk_next_message_on_the_thread_is_the_reply(client: Any) -> None:
    thread = _ask_department(client)
    result = client.runs.wait(thread, GRAPH, input=_message("a kardiológián"))
    _assert_answered(client, thread, result)
    replies = [e for e in result["ledger"] if e["kind"] == "clarification"]
    assert replies[1]["reason"] == "the next message on the thread"


def test_Q2_sdk_unknown_reply_asks_again_then_the_choice_number_answers(client: Any) -> None:
    thread = _ask_department(client)
    result = client.runs.wait(thread, GRAPH, command={"resume": "fogászat"})
    (pending,) = result["__interrupt__"]
    assert "„fogászat”" in pending["value"]["question"]
    assert client.threads.get(thread)["status"] == "interrupted"
    result = client.runs.wait(thread, GRAPH, command={"resume": "2"})
    _assert_answered(client, thread, result)
