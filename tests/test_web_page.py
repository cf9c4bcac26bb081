"""The web chat page in a real browser: headless Chromium (Debian's) driven by Playwright.

``langgraph dev`` serves the page at ``/chat`` beside its API (``langgraph.json``
``http.app``). Each test opens it, acts like a user and checks what the page
shows, and checks each state (a screenshot and an axe-core scan).

The browser, the checked tabs, the screenshots and the axe-core scan of every
state come from ``tests/web_support.py``; the rules the issue-19 observations
gave (P4, W7, the layout, the tabs) are in ``tests/test_web_page_rules.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from dev_server import ROOT, DevServer, langgraph_dev
from web_support import ask as _ask
from web_support import check_state, say
from web_support import open_page as _open
from web_support import server_state as _server_state
from web_support import thread_in_url as _thread_in_url
from web_support import wait_idle as _wait_idle

pytestmark = [pytest.mark.slow, pytest.mark.network]

# ------------------------------------------------------------------ against the repo's server


def _unlinked(text: str) -> str:
    """The answer's words without its source links ("[1]", R9), spacing folded."""
    return " ".join(re.sub(r"\s*\[\d+\]", "", text).split())


def test_langgraph_json_serves_the_page_as_a_custom_route() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["http"]["app"] == "toolweave_korhaz.app:app"
    from toolweave_korhaz.app import app

    assert {getattr(route, "path", None) for route in app.routes} >= {
        "/chat",
        "/chat/tools/{tool_id}.js",
    }


def test_P2_page_shows_progress_then_the_streamed_answer_and_its_sources(
    server_url: str, page: Any, request: pytest.FixtureRequest
) -> None:
    _open(page, f"{server_url}/chat")
    check_state(page, request, "01-empty")
    _ask(page, "Mikor van rendelés a kardiológián?")
    page.wait_for_selector(".msg.bot .sources .source")
    _wait_idle(page)
    check_state(page, request, "02-answer")

    seen: list[str] = page.evaluate("window.__seen")
    assert "progress" in seen
    assert "answer" in seen
    assert seen.index("progress") < seen.index("answer")  # progress first, then the answer
    assert seen.count("answer") >= 5  # token by token, not one block
    progress = page.locator(".msg.bot .progress").inner_text()
    assert "Az osztály adatait nézem" in progress  # P4: the domain's phrase, in Hungarian
    answer = page.locator(".msg.bot .answer").inner_text()
    assert "Kardiológia rendelési ideje" in answer

    thread_id = _thread_in_url(page)
    state = _server_state(server_url, thread_id)
    assert _unlinked(answer) == _unlinked(state["values"]["answer"])  # streamed == stored
    assert page.locator(".msg.bot .answer sup a.cite").count() >= 1  # R9: [n] is a link
    sources = page.locator(".msg.bot .sources .source")
    names = sources.locator(".doc").all_inner_texts()
    used = state["values"]["sources"]  # R9: the page shows the answer's sources, no other
    assert names == [s["name"] for s in used]
    assert "Osztályok: Kardiológia" in names
    shown = sources.all_inner_texts()
    for source, text in zip(used, shown, strict=True):
        for number in source["pages"]:
            assert say("pages", pages=str(number)) in text or f", {number}" in text


def test_Q1_clarification_choices_are_buttons_and_a_click_resumes_the_run(
    server_url: str, page: Any, request: pytest.FixtureRequest
) -> None:
    _open(page, f"{server_url}/chat")
    _ask(page, "Mikor van rendelés?")
    question = page.locator(".question")
    question.wait_for()
    _wait_idle(page)
    assert "Melyik osztály" in question.locator(".question-text").inner_text()
    choices = question.locator("button.choice").all_inner_texts()
    assert "Kardiológia" in choices
    assert "Neurológia" in choices
    check_state(page, request, "03-clarification")

    question.get_by_role("button", name="Neurológia").click()
    answer = page.locator(".msg.bot .answer").last
    page.wait_for_function(
        "() => [...document.querySelectorAll('.msg.bot .answer')].some("
        "a => a.textContent.includes('Neurológia'))"
    )
    _wait_idle(page)
    check_state(page, request, "04-clarification-answered")
    assert "Neurológia" in answer.inner_text()
    assert question.get_by_role("button", name="Neurológia").get_attribute("aria-pressed") == "true"
    assert question.locator("button.choice:enabled").count() == 0  # answered once only
    state = _server_state(server_url, _thread_in_url(page))
    assert state["next"] == []
    humans = [m["content"] for m in state["values"]["messages"] if m["type"] == "human"]
    assert humans == ["Mikor van rendelés?", "Neurológia"]


def test_Q5_reload_mid_pause_shows_the_question_again_and_resumes_the_same_thread(
    server_url: str, page: Any, request: pytest.FixtureRequest
) -> None:
    _open(page, f"{server_url}/chat")
    _ask(page, "Mikor van rendelés?")
    page.locator(".question").wait_for()
    _wait_idle(page)
    thread_id = _thread_in_url(page)

    page.reload()
    page.wait_for_selector("body[data-ready='true']")
    question = page.locator(".question")
    question.wait_for()
    check_state(page, request, "05-reloaded-mid-pause")
    assert _thread_in_url(page) == thread_id
    assert page.locator(".msg.user").first.inner_text().endswith("Mikor van rendelés?")

    # Without the URL parameter, the tab's sessionStorage brings its thread back too.
    _open(page, f"{server_url}/chat")
    page.locator(".question").wait_for()
    assert _thread_in_url(page) == thread_id

    page.locator(".question").get_by_role("button", name="Kardiológia").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.msg.bot .answer')].some("
        "a => a.textContent.includes('Kardiológia rendelési ideje'))"
    )
    _wait_idle(page)
    check_state(page, request, "06-resumed-after-reload")
    state = _server_state(server_url, thread_id)
    assert state["next"] == []
    assert "Kardiológia rendelési ideje" in state["values"]["answer"]


UNLABELLED = """
() => [...document.querySelectorAll('input, textarea, select, button')]
  .filter((el) => {
    const name = el.labels && el.labels.length ? el.labels[0].textContent
      : el.getAttribute('aria-label') || el.textContent;
    return !name || !name.trim();
  })
  .map((el) => el.outerHTML)
"""


def test_page_is_labelled_and_usable_from_the_keyboard(server_url: str, page: Any) -> None:
    _open(page, f"{server_url}/chat")
    assert page.get_attribute("html", "lang")
    assert page.evaluate(UNLABELLED) == []
    assert page.get_attribute("#log", "role") == "log"
    page.focus("#composer-input")
    page.keyboard.type("Mikor van rendelés?")
    page.keyboard.press("Enter")  # Enter sends, Shift+Enter would add a line
    page.locator(".question button.choice").first.wait_for()
    _wait_idle(page)
    assert page.evaluate(UNLABELLED) == []  # the choices too
    page.locator(".question button.choice", has_text="Sebészet").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.msg.bot .answer')].some("
        "a => a.textContent.includes('Sebészet'))"
    )
    _wait_idle(page)


def test_Q5_a_thread_the_server_does_not_know_is_dropped_with_a_note(
    server_url: str, page: Any
) -> None:
    _open(page, f"{server_url}/chat?thread=00000000-0000-4000-8000-000000000000")
    banner = page.locator("#banner")
    banner.wait_for(state="visible")
    assert banner.inner_text() == say("thread_dropped")  # in the browser's language
    assert "thread=" not in page.url
    _ask(page, "Mikor van rendelés a kardiológián?")
    page.wait_for_selector(".msg.bot .sources .source")
    _wait_idle(page)
    assert _thread_in_url(page) != "00000000-0000-4000-8000-000000000000"
    assert banner.is_hidden()  # the notice went once the new conversation worked


def test_page_new_conversation_starts_a_new_thread(server_url: str, page: Any) -> None:
    _open(page, f"{server_url}/chat")
    _ask(page, "Mikor van rendelés?")
    page.locator(".question").wait_for()
    _wait_idle(page)
    first = _thread_in_url(page)
    page.click("#new-thread")
    assert "thread=" not in page.url
    assert page.locator(".question").count() == 0
    _ask(page, "Mikor van rendelés a kardiológián?")
    page.wait_for_selector(".msg.bot .sources .source")
    _wait_idle(page)
    assert _thread_in_url(page) != first


SPLIT_SSE = """
async ([wire, cuts]) => {
  const bytes = new TextEncoder().encode(wire);
  const ends = [...cuts, bytes.length];
  const body = new ReadableStream({
    start(controller) {
      let start = 0;
      for (const end of ends) {
        controller.enqueue(bytes.slice(start, end));
        start = end;
      }
      controller.close();
    },
  });
  const seen = [];
  for await (const ev of window.toolweaveChat.readEvents(new Response(body))) seen.push(ev);
  return seen;
}
"""


def test_P2_event_stream_reader_joins_events_split_anywhere(server_url: str, page: Any) -> None:
    # sse-starlette ends lines with CRLF; a network chunk may end between CR and LF,
    # inside a multi-byte character or inside the JSON.
    wire = (
        'event: metadata\r\ndata: {"run_id": "r1"}\r\n\r\n'
        ": heartbeat\r\n\r\n"
        'event: custom|sub:1\r\ndata: {"type": "routed", "tools": ["Kardiológia"]}\r\n\r\n'
        'event: messages\ndata: [{"type": "AIMessageChunk",\ndata:  "content": "a"}, {}]\n\n'
    )
    expected = [
        {"event": "metadata", "data": {"run_id": "r1"}},
        {"event": "custom", "data": {"type": "routed", "tools": ["Kardiológia"]}},
        {"event": "messages", "data": [{"type": "AIMessageChunk", "content": "a"}, {}]},
    ]
    _open(page, f"{server_url}/chat")
    raw = wire.encode()
    between_cr_and_lf = raw.index(b"\r\n") + 1
    inside_o_acute = raw.index("ó".encode()) + 1
    inside_json = raw.index(b'"tools"') + 3
    cuts = sorted([between_cr_and_lf, inside_json, inside_o_acute])
    assert page.evaluate(SPLIT_SSE, [wire, cuts]) == expected
    assert page.evaluate(SPLIT_SSE, [wire, list(range(1, len(raw)))]) == expected  # byte by byte
    assert page.evaluate(SPLIT_SSE, [wire, []]) == expected


# ------------------------------------------------------------------ client tools (W3, W4)

APPOINTMENT_QUESTION = "Szeretnék időpontot kérni a kardiológiára hétfőre"


def test_W3_hospital_client_tool_fills_the_form_in_the_page_and_the_run_continues(
    server_url: str, page: Any, request: pytest.FixtureRequest
) -> None:
    _open(page, f"{server_url}/chat")
    assert page.evaluate("AiTools.ids()") == ["fill_appointment_form", "format_date"]
    assert page.input_value("#appointment-department") == ""
    _ask(page, APPOINTMENT_QUESTION)
    done = say("client_done", tool="Appointment form")
    page.wait_for_selector(f".progress .client:has-text('{done}')")  # P4
    page.wait_for_selector(".msg.bot .answer:not(:empty)")
    _wait_idle(page)
    check_state(page, request, "11-hospital-form-filled")
    assert page.input_value("#appointment-department") == "Kardiológia"
    assert page.input_value("#appointment-day") == "Monday"
    state = _server_state(server_url, _thread_in_url(page))
    assert state["next"] == []  # the run went on with the page's result and finished
    assert state["values"]["client_tools"] == ["fill_appointment_form", "format_date"]
    filled = state["values"]["context_buffer"]["1:fill_appointment_form"][0]["context"]
    assert json.loads(filled) == {"filled": True, "department": "Kardiológia", "day": "Monday"}
    answer = page.locator(".msg.bot .answer").last.inner_text()
    assert _unlinked(answer) == _unlinked(state["values"]["answer"])
    page.set_viewport_size({"width": 1180, "height": 1300})  # the whole turn, for the README
    check_state(page, request, "12-readme")


def _open_probe(page: Any, server: DevServer, query: str = "") -> None:
    _open(page, f"{server.url}/chat{query}")


def _probe_answer(page: Any) -> str:
    page.wait_for_function(
        "() => [...document.querySelectorAll('.msg.bot .answer')].some("
        "a => a.textContent.includes('announced:'))"
    )
    _wait_idle(page)
    return str(page.locator(".msg.bot .answer").last.inner_text())


def test_W4_client_tool_fills_the_form_in_the_page_and_the_run_continues_with_its_result(
    probe_server: DevServer, page: Any, request: pytest.FixtureRequest
) -> None:
    _open_probe(page, probe_server)
    assert page.input_value("#appointment-department") == ""
    _ask(page, "fill the form please")
    answer = _probe_answer(page)
    check_state(page, request, "07-client-tool-filled-form")
    assert page.input_value("#appointment-department") == "Kardiológia"
    assert page.input_value("#appointment-day") == "2026-12-08"
    assert "announced: fill_appointment_form,slow_echo,never_answers" in answer
    assert "call-fill_appointment_form output: form filled: Kardiológia, 2026-12-08" in answer
    progress = page.locator(".msg.bot .progress").last.inner_text()
    tool = "fill_appointment_form"  # a script without a title: its id
    assert say("client_working", tool=tool) in progress
    assert say("client_done", tool=tool) in progress
    state = _server_state(probe_server.url, _thread_in_url(page))
    assert state["next"] == []


def test_W4_promise_results_and_several_calls_of_one_pause_are_answered_by_call_id(
    probe_server: DevServer, page: Any
) -> None:
    _open_probe(page, probe_server)
    _ask(page, "form and async")
    answer = _probe_answer(page)
    assert "call-fill_appointment_form output: form filled" in answer
    assert 'call-slow_echo output: {"text":"echo me"}' in answer  # a Promise of an object


def test_W3_unregistered_and_timed_out_client_tools_get_error_results(
    probe_server: DevServer, page: Any, request: pytest.FixtureRequest
) -> None:
    _open_probe(page, probe_server, "?client_timeout_ms=400")
    _ask(page, "never and unknown")
    answer = _probe_answer(page)
    check_state(page, request, "08-client-tool-errors")
    timed_out = 'the client tool "never_answers" did not answer within 400 ms'
    assert f"call-never_answers error: {timed_out}" in answer
    assert "call-not_on_the_page error: no implementation of the client tool" in answer
    progress = page.locator(".msg.bot .progress .client.error").all_inner_texts()
    assert len(progress) == 2


def test_W3_results_the_server_refuses_are_not_sent_again_in_a_loop(
    probe_server: DevServer, tabs: Any, page: Any
) -> None:
    _open_probe(page, probe_server)
    _ask(page, "form refuse")
    note = page.locator(".msg.bot .note.error")
    note.wait_for()
    _wait_idle(page)
    assert say("results_refused") in note.inner_text()  # for the person; the detail: console
    console = "\n".join(tabs.console[page])
    assert "refused the page's client-tool results: the probe refused the results" in console
    working = say("client_working", tool="").strip(": ")
    assert page.locator(f".progress .client:has-text('{working}')").count() == 1
    state = _server_state(probe_server.url, _thread_in_url(page))
    assert state["next"] == ["ask_client"]  # still paused, as the server said


def test_W3_reload_during_a_client_tool_call_answers_it_after_the_reload(
    probe_server: DevServer, page: Any
) -> None:
    # The page goes away while its tool never answers: the thread stays paused on
    # the server; the reloaded page runs the pending call again and the run ends.
    _open_probe(page, probe_server, "?client_timeout_ms=20000")
    _ask(page, "never")
    page.wait_for_selector(".progress .client")
    thread_id = _thread_in_url(page)
    state = _server_state(probe_server.url, thread_id)
    assert state["next"] == ["ask_client"]
    page.goto(f"{probe_server.url}/chat?thread={thread_id}&client_timeout_ms=300")
    answer = _probe_answer(page)
    assert "call-never_answers error" in answer
    assert _server_state(probe_server.url, thread_id)["next"] == []


def test_reload_during_a_run_follows_the_run_to_its_answer(
    probe_server: DevServer, page: Any
) -> None:
    _open_probe(page, probe_server)
    _ask(page, "slow please")
    page.wait_for_selector(".msg.bot[data-run-id]")  # the run has started
    thread_id = _thread_in_url(page)
    page.reload()
    page.wait_for_selector(f"text={say('following_run')}")
    answer = _probe_answer(page)
    assert "slow done" in answer
    assert _thread_in_url(page) == thread_id
    assert _server_state(probe_server.url, thread_id)["next"] == []


def test_a_failed_run_is_reported_and_no_earlier_answer_is_shown_as_its_answer(
    probe_server: DevServer, tabs: Any, page: Any
) -> None:
    _open_probe(page, probe_server)
    _ask(page, "slow first")
    _probe_answer(page)
    _ask(page, "crash now")
    note = page.locator(".msg.bot").last.locator(".note.error")
    note.wait_for()
    _wait_idle(page)
    assert say("run_failed") in note.inner_text()  # said for the person chatting
    assert "the probe graph failed on purpose" not in note.inner_text()
    assert "the probe graph failed on purpose" in "\n".join(tabs.console[page])  # developers
    assert page.locator(".msg.bot").last.locator(".answer").inner_text() == ""


# ------------------------------------------------------------------ the server goes away


def test_page_says_clearly_when_the_server_is_stopped_and_when_it_is_back(
    tabs: Any, page: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with langgraph_dev(tmp_path) as server:
        _open(page, f"{server.url}/chat")
        _ask(page, "Mikor van rendelés?")
        page.locator(".question").wait_for()
        _wait_idle(page)
        thread_id = _thread_in_url(page)
        assert page.locator("#banner").is_hidden()
        server.stop()
        page.locator(".question").get_by_role("button", name="Kardiológia").click()
        banner = page.locator("#banner")
        banner.wait_for(state="visible")
        _wait_idle(page)
        check_state(page, request, "09-server-stopped")
        text = banner.inner_text()
        assert text == say("unreachable")
        # written for the person chatting; the address and the hint are for developers
        assert server.url not in text
        assert "langgraph" not in text.lower()
        console = "\n".join(tabs.console[page])
        assert server.url in console
        assert "langgraph dev" in console
        assert banner.get_attribute("role") == "alert"
        note = page.locator(".msg.bot .note.error").inner_text()
        assert say("not_finished_unreachable") in note
        port = int(server.url.rsplit(":", 1)[1])

    with langgraph_dev(tmp_path, port=port):  # same folder: the thread was persisted
        page.wait_for_function(
            "(text) => document.querySelector('#banner').textContent === text",
            arg=say("reconnected"),
        )
        check_state(page, request, "10-server-back")
        # Nothing was sent while the server was away: the question still waits.
        page.locator(".question").get_by_role("button", name="Kardiológia").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('.msg.bot .answer')].some("
            "a => a.textContent.includes('Kardiológia rendelési ideje'))"
        )
        _wait_idle(page)
        assert _thread_in_url(page) == thread_id
