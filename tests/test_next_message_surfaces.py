"""Q2 (issue 38 item 3) on the page and through the server: the graph reads the next message.

While a clarification question waits, what the person types is sent as the next
message on the thread (``{"messages": [...]}``), not as ``Command(resume=...)``: the
graph decides whether it answers the question, amends the request, asks something
new or drops the question. A click on an offered choice is a reply and resumes.

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
