"""Q2 (issue 38 item 3) on the page and through the server: the graph reads the next message.

While a clarification question waits, what the person types is the thread's next
message, sent as a new run's input (``{"messages": [...]}``) or as a message resume
(``Command(resume={"type": "message", "content": ...})``, what the page sends: every
server runs a resume of a waiting thread): the graph decides whether it answers the
question, amends the request, asks something new or drops the question. A click on
an offered choice is a reply and resumes with it.

The page runs in headless Chromium against ``langgraph dev`` serving the repository's
``langgraph.json`` (the hospital graph, offline); the browser tests skip without a
browser (``bash scripts/chromium.sh``).
"""

from __future__ import annotations

from typing import Any

import pytest
from web_support import ask, check_state, open_page, server_state, thread_in_url, wait_answer

pytestmark = [pytest.mark.slow, pytest.mark.network]

CONSULTATION = "Mikor van rendelés?"
PARKING = "Mennyibe kerül óránként a parkolás?"


def _clarifications(values: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (entry["tool"], entry["verdict"])
        for entry in values["ledger"]
        if entry["kind"] == "clarification"
    ]


def _humans(values: dict[str, Any]) -> list[str]:
    return [m["content"] for m in values["messages"] if m["type"] == "human"]


def test_Q2_page_sends_a_new_question_typed_while_a_question_waits_as_a_new_turn(
    server_url: str, page: Any, request: pytest.FixtureRequest
) -> None:
    open_page(page, f"{server_url}/chat")
    ask(page, CONSULTATION)
    question = page.locator(".question")
    question.wait_for()
    check_state(page, request, "01-question-waits")

    ask(page, PARKING)  # typed, not a choice: the next message on the thread
    wait_answer(page, "500 Ft")
    check_state(page, request, "02-new-question-answered")
    assert question.locator("button.choice:enabled").count() == 0  # the question is closed
    assert page.locator(".question:not(.answered)").count() == 0
    state = server_state(server_url, thread_in_url(page))
    assert state["next"] == []
    assert not state.get("interrupts")
    values = state["values"]
    assert "500 Ft" in values["answer"]
    assert _humans(values) == [CONSULTATION, PARKING]
    assert _clarifications(values) == [("department_info", "closed")]  # not fed as a reply
    assert "1:department_info" not in values["activated"]


def test_Q2_page_typed_reply_while_a_question_waits_still_reaches_the_tool(
    server_url: str, page: Any, request: pytest.FixtureRequest
) -> None:
    open_page(page, f"{server_url}/chat")
    ask(page, CONSULTATION)
    page.locator(".question").wait_for()
    ask(page, "A neurológián.")
    wait_answer(page, "Neurológia")
    check_state(page, request, "03-typed-reply-answered")
    values = server_state(server_url, thread_in_url(page))["values"]
    assert _clarifications(values) == [("department_info", "asked"), ("department_info", "replied")]
    assert "9:00-13:00" in values["answer"]


# ------------------------------------------------- through the server, across processes

CONSULTATION_EN = "When are the consultation hours?"
PARKING_EN = "How much does parking cost per hour?"


def _client(url: str) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=url, api_key=None)


def _message(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "human", "content": text}]}


def _paused(client: Any) -> str:
    """A new thread paused on "Which department?" through ``client``; its id."""
    thread = str(client.threads.create()["thread_id"])
    paused = client.runs.wait(thread, "korhaz", input=_message(CONSULTATION_EN))
    assert paused["__interrupt__"][0]["value"]["type"] == "clarification"
    assert client.threads.get(thread)["status"] == "interrupted"
    return thread


def _answered_as_a_new_turn(client: Any, thread: str, done: dict[str, Any]) -> None:
    assert "__interrupt__" not in done
    assert "500 Ft" in done["answer"]
    assert client.threads.get(thread)["status"] == "idle"
    values = client.threads.get_state(thread)["values"]
    assert _clarifications(values) == [("department_info", "closed")]
    assert "1:department_info" not in values["activated"]  # its tool never saw the text
    assert _humans(values) == [CONSULTATION_EN, PARKING_EN]


def test_Q2_Q3_a_new_question_after_a_server_restart_is_a_new_turn_on_the_paused_thread(
    tmp_path: Any,
) -> None:
    """Process one pauses the thread; a new server process on the same store answers it.

    ``langgraph dev`` keeps its threads in its working folder across a restart, so the
    second server (a new process, a fresh client) finds the thread waiting.
    """
    from dev_server import langgraph_dev

    with langgraph_dev(tmp_path) as first:
        thread = _paused(_client(first.url))
    with langgraph_dev(tmp_path) as second:
        client = _client(second.url)
        assert client.threads.get(thread)["status"] == "interrupted"
        done = client.runs.wait(thread, "korhaz", input=_message(PARKING_EN))
        _answered_as_a_new_turn(client, thread, done)


def _deployment() -> list[str]:
    """The API processes of the multiworker deployment; skip locally without one, fail in CI."""
    import os

    from durable import in_ci

    urls = os.environ.get("TOOLWEAVE_MW_URLS", "").split()
    if len(urls) < 2:
        reason = 'TOOLWEAVE_MW_URLS is not set (eval "$(bash scripts/multiworker.sh start ...)")'
        if in_ci():
            pytest.fail(f"{reason}: .ci/run provides it, so the test must run in CI")
        pytest.skip(reason)
    return urls


@pytest.mark.postgres
def test_Q2_Y1_a_new_question_through_another_process_over_postgres_is_a_new_turn() -> None:
    """Asked through one API process, the new question sent through another (Y1).

    The deployment of ``scripts/multiworker.sh``: API processes and workers over one
    PostgreSQL database, which ``.ci/run`` starts; skipped locally without it.
    """
    urls = _deployment()
    first, second = _client(urls[0]), _client(urls[1])
    thread = _paused(first)
    # GraphHarbor runs nothing on a thread with an open interrupt but its resume: the
    # message goes as a message resume, which the graph reads as the next message
    message = {"type": "message", "content": PARKING_EN}
    done = second.runs.wait(thread, "korhaz", command={"resume": message})
    _answered_as_a_new_turn(first, thread, done)


@pytest.mark.postgres
def test_Q2_Y1_page_over_postgres_answers_a_new_question_typed_while_a_question_waits(
    page: Any, request: pytest.FixtureRequest
) -> None:
    """The page of one API process; the state read through the other."""
    urls = _deployment()
    open_page(page, f"{urls[0]}/chat")
    ask(page, CONSULTATION)
    page.locator(".question").wait_for()
    ask(page, PARKING)
    wait_answer(page, "500 Ft")
    check_state(page, request, "04-new-question-answered-over-postgres")
    values = server_state(urls[1], thread_in_url(page))["values"]
    assert _clarifications(values) == [("department_info", "closed")]
    assert _humans(values) == [CONSULTATION, PARKING]
