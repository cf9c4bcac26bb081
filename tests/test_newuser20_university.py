"""The twentieth new user: an English university student services desk, from the docs alone.

``tests/newuser20_domain`` is the domain ("Northfield University", eight English pages):
document search (context, R2), a counselling booking that acts (a diary keyed by the call's
idempotency key that also counts every call, S5, Q6; students only, T4; asks which campus
and which day, Q1, T13), a coordinator that splits a two-part question (C1, S6) and a
replacement ID card form the browser fills (a client AI tool, W3). Then what a user does
next: LCEL and ``answer_chain``, an agent tool, typed stream events, a notebook's sync call
inside a running event loop, ``ainvoke``, a clarification resumed from InMemorySaver and
from SQLite, the CLI through a plugin entry point.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from newuser20_domain import university_domain_and_tools, university_store
from newuser20_domain.tools import DIARY, BookCounselling, FillIdCardForm, split_question

from toolweave import (
    AiToolRegistry,
    ClientToolRegistry,
    NothingPendingError,
    RunContext,
    as_chatbot_tools,
    build_graph,
    is_stream_event,
    pending_clarification,
    reply,
    run_with_client_tools,
)

STUDENT = RunContext(user_data={"student_id": "S-2001"})
BOOK = "Please book a counselling appointment at the Riverside campus on Tuesday."
STORE = university_store()


@pytest.fixture(autouse=True)
def fresh_diary() -> None:
    DIARY.calls.clear()
    DIARY.appointments.clear()


def desk(**kwargs: Any) -> Any:
    kwargs.setdefault("checkpointer", InMemorySaver())
    return build_graph(*university_domain_and_tools(STORE), **kwargs)


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def ask(graph: Any, thread: str, text: str | HumanMessage, context: Any = STUDENT) -> Any:
    message = text if isinstance(text, HumanMessage) else HumanMessage(text)
    return graph.invoke({"messages": [message]}, cfg(thread), context=context)


def question_of(graph: Any, thread: str) -> str | None:
    pending = pending_clarification(graph, cfg(thread))
    return None if pending is None else str(pending["question"])


# --- the documents -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "fact", "source"),
    [
        ("When does enrolment close?", "15 September", "Enrolment deadlines"),
        ("How much is tuition for international students?", "18,500 GBP", "Tuition fees"),
        ("When is the library open on Sunday?", "10:00 to 18:00", "Library opening hours"),
        ("How much is a replacement student ID card?", "15 GBP", "Student ID card"),
        ("When do applications for halls open?", "1 March", "Accommodation"),
        ("How do I reset my IT password?", "Student Portal", "IT account"),
        ("Is counselling free?", "free and confidential", "Counselling service"),
        ("When does re-sit registration close?", "31 July", "Exam re-sits"),
    ],
)
def test_R2_R9_each_page_answers_its_question_with_its_source(
    question: str, fact: str, source: str
) -> None:
    out = ask(desk(), "d", question)
    assert fact in out["answer"]
    assert source in [s.name for s in out["sources"]]
    assert "chat page" not in out["answer"]  # no form was asked for


@pytest.mark.xfail(
    strict=True,
    reason="offline model (A10): for 'How many times ...?' the extractive reading prefers "
    "sentences with digits ('40 GBP per module', '40 per cent') to the one that answers "
    "with a count word ('once'); a count word of each language is not a number to it",
)
def test_A10_how_many_times_is_answered_by_the_sentence_that_says_once() -> None:
    out = ask(desk(), "d", "How many times can I re-sit a module?")
    assert "once" in out["answer"]


# --- the booking that acts -----------------------------------------------------------------


def test_A9_S5_a_booking_that_says_everything_books_once() -> None:
    out = ask(desk(), "b", BOOK)
    assert out["answer"] == (
        "Booked: counselling appointment C-001 at the Riverside campus on Tuesday."
    )
    assert len(DIARY.calls) == 1


def test_A9_a_question_about_counselling_books_nothing() -> None:
    graph = desk()
    for question in ["How long is a counselling appointment?", "Is counselling free?"]:
        ask(graph, question, question)
    assert DIARY.calls == []


def test_T4_without_a_student_id_the_booking_is_not_offered() -> None:
    out = ask(desk(), "g", BOOK, context=None)
    assert DIARY.calls == []
    assert "Booked" not in out["answer"]


def test_Q1_T13_the_booking_asks_which_campus_then_which_day_and_books_once() -> None:
    graph = desk()
    ask(graph, "q", "Please book a counselling appointment for me.")
    assert question_of(graph, "q") == "Which campus?"
    assert pending_clarification(graph, cfg("q"))["choices"] == ["Riverside", "Hillcrest"]
    ask(graph, "q", "Hillcrest")
    assert question_of(graph, "q") == "Which day?"
    out = ask(graph, "q", "Thursday")
    assert "at the Hillcrest campus on Thursday" in out["answer"]
    assert len(DIARY.calls) == 1


def test_S5_counselling_booked_once_when_message_resent() -> None:
    graph = desk()
    message = HumanMessage(BOOK, id="m-1")
    first = ask(graph, "r", message)
    again = ask(graph, "r", HumanMessage(BOOK, id="m-1"))
    assert "C-001" in first["answer"]
    assert "C-001" in again["answer"] or "already" in again["answer"]
    assert len(DIARY.calls) == 1


def test_S5_counselling_booked_once_when_message_retyped() -> None:
    graph = desk()
    ask(graph, "t", BOOK)
    ask(graph, "t", BOOK.lower().rstrip("."))  # the same words retyped, a new message id
    assert len(DIARY.appointments) == 1


def test_A9_S5_a_follow_up_that_changes_the_day_books_nothing_more() -> None:
    graph = desk()
    ask(graph, "f", BOOK)
    out = ask(graph, "f", "and on Friday instead?")
    assert len(DIARY.appointments) == 1
    assert "Booked" not in out["answer"]


def test_S5_Q6_concurrent_invokes_of_one_message_book_once() -> None:
    graph = desk()
    results: list[Any] = []

    def send() -> None:
        results.append(ask(graph, "c", HumanMessage(BOOK, id="m-c")))

    threads = [threading.Thread(target=send) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3
    assert len(DIARY.appointments) == 1
    assert len(DIARY.calls) == 1


def test_S5_Q6_three_ainvokes_of_one_message_at_once_and_a_command_resume_book_once() -> None:
    from langgraph.types import Command

    graph = desk()

    async def together() -> list[Any]:
        sent = {"messages": [HumanMessage(BOOK, id="m-a")]}
        runs = [graph.ainvoke(sent, cfg("ag"), context=STUDENT) for _ in range(3)]
        return await asyncio.gather(*runs)

    answers = {out["answer"] for out in asyncio.run(together())}
    assert answers == {"Booked: counselling appointment C-001 at the Riverside campus on Tuesday."}
    asked = ask(graph, "cr", "Book a counselling appointment at Hillcrest.")
    assert asked["__interrupt__"][0].value["question"] == "Which day?"
    done = graph.invoke(Command(resume="Friday"), cfg("cr"), context=STUDENT)
    assert done["answer"].endswith("at the Hillcrest campus on Friday.")
    assert len(DIARY.calls) == 2


def test_Q2_S5_a_resumed_clarification_reply_sent_twice_books_once() -> None:
    graph = desk()
    ask(graph, "rc", "Please book a counselling appointment on Monday.")
    assert question_of(graph, "rc") == "Which campus?"
    out = reply(graph, cfg("rc"), "Riverside", context=STUDENT)
    assert "Riverside campus on Monday" in out["answer"]
    with pytest.raises(NothingPendingError, match="its last run finished"):
        reply(graph, cfg("rc"), "Riverside", context=STUDENT)  # the client sent it again
    ask(graph, "rc", "Riverside")  # or as the next message: no new booking
    assert len(DIARY.appointments) == 1
    assert len(DIARY.calls) == 1


def test_Q2_a_reply_naming_another_value_for_an_earlier_input_amends_it() -> None:
    graph = desk()
    ask(graph, "am", "Please book a counselling appointment for me.")
    ask(graph, "am", "Hillcrest")
    assert question_of(graph, "am") == "Which day?"
    ask(graph, "am", "sorry, make it Riverside")  # fills no day: the campus changes
    assert question_of(graph, "am") == "Which day?"
    out = ask(graph, "am", "Monday")
    assert "at the Riverside campus on Monday" in out["answer"]  # was Hillcrest
    assert len(DIARY.calls) == 1


def test_Q2_general_with_reply_amends_a_given_input_only_when_no_asked_one_is_filled() -> None:
    from typing import Literal

    from pydantic import BaseModel

    from toolweave import ChatbotTool
    from toolweave.llm.offline_extract import extract_request
    from toolweave.tools.required import with_reply

    class Visit(BaseModel):
        place: Literal["North", "South"] | None = None
        day: Literal["Monday", "Friday"] | None = None

    class Plan(ChatbotTool[Visit]):
        name = "plan_visit"
        request_model = Visit
        required_inputs = ("place", "day")

    tool, asked = Plan(), Visit(place="North")
    amended = with_reply(tool, asked, "sorry, make it South", read=extract_request)
    assert amended == Visit(place="South")
    filled = with_reply(tool, asked, "Friday", read=extract_request)
    assert filled == Visit(place="North", day="Friday")
    nothing = with_reply(tool, asked, "no idea", read=extract_request)
    assert nothing == asked


def test_A1_A9_a_follow_up_after_a_corrected_and_picked_booking_reads_the_booking() -> None:
    graph = desk()
    ask(graph, "fa", "Please book a counselling appointment on Tuesday.")
    ask(graph, "fa", "sorry, I mean Wednesday")  # amends the day; the campus is asked again
    out = ask(graph, "fa", "1")
    assert out["answer"].endswith("at the Riverside campus on Wednesday.")
    out = ask(graph, "fa", "and on Friday instead?")
    # before: the follow-up read "sorry, I mean Friday 1 instead", searched the documents
    # for "sorry", "mean" and "instead" (24 progress lines) and found nothing
    assert "Monday to Friday" in out["answer"]
    assert len(DIARY.appointments) == 1


def test_A1_general_a_reply_to_a_question_asked_back_is_read_as_the_graph_read_it() -> None:
    from langchain_core.messages import AIMessage

    from toolweave.llm.offline_followup import normalize_offline

    asked = {"toolweave_clarification": {"asker": "1:t", "choices": ["North", "South"]}}
    history = [
        HumanMessage("Please reserve a table on Tuesday."),
        AIMessage("Which room?", additional_kwargs=asked),
        HumanMessage("sorry, I mean Wednesday"),
        AIMessage("Which room?", additional_kwargs=asked),
        HumanMessage("2"),
        AIMessage("Reserved."),
    ]
    question = normalize_offline("and on Friday instead?", history).question
    assert question.startswith("Please reserve a table on Friday")
    assert "South" in question
    assert "sorry" not in question
    assert " 2" not in question


# --- the coordinator -----------------------------------------------------------------------


def test_C1_the_splitter_names_the_subject_of_it_in_the_second_part() -> None:
    assert split_question("When is the re-sit exam and how much does it cost?") == [
        "When is the re-sit exam?",
        "How much does the re-sit exam cost?",
    ]
    assert split_question("When does the library open?") is None


def test_S6_a_two_part_question_gets_both_facts() -> None:
    out = ask(desk(), "s", "When is the re-sit exam and how much does it cost?")
    assert "last two weeks of August" in out["answer"]
    assert "40 GBP" in out["answer"]
    assert out["activated"] == ["1.1:northfield_search", "1.2:northfield_search"]


# --- the form in the browser ---------------------------------------------------------------


def test_W3_the_form_is_filled_by_the_client_and_said_not_done_without_one() -> None:
    graph = desk()
    asked = "Please fill in the replacement ID card form for me, I lost my card."
    here = ask(graph, "w1", asked)
    assert "only be done in the chat page (Replacement ID card form)" in here["answer"]
    client = ClientToolRegistry()
    client.register("fill_form", lambda input: "The form is filled in (reason: lost).")
    out = run_with_client_tools(graph, {"messages": [("human", asked)]}, cfg("w2"), client)
    assert "The form is filled in" in out["answer"]
    assert "Replacement ID card form" in [s.name for s in out["sources"]]


def test_A9_W6_an_ai_tools_routing_examples_and_not_for_reach_its_chatbot_tool() -> None:
    (tool,) = as_chatbot_tools(AiToolRegistry([FillIdCardForm()]), domain="northfield")
    assert tool.routing_examples[0] == "Please fill in the form for me."
    assert tool.not_for == ("How much is a new card?", "Where do I collect my card?")
    out = ask(desk(), "w3", "How much is a replacement student ID card?")
    assert "chat page" not in out["answer"]


# --- embedding -----------------------------------------------------------------------------


def test_P2_the_stream_has_typed_versioned_events_and_the_answer() -> None:
    graph = desk()
    events = []
    for mode, chunk in graph.stream(
        {"messages": [HumanMessage(BOOK)]},
        cfg("p"),
        context=STUDENT,
        stream_mode=["custom", "messages"],
    ):
        if mode == "custom":
            assert is_stream_event(chunk)
            events.append(chunk)
    assert {e["version"] for e in events} == {1}
    assert "routed" in {e["type"] for e in events}
    assert "C-001" in graph.get_state(cfg("p")).values["answer"]


def test_X1_a_sync_call_inside_a_running_event_loop_and_ainvoke() -> None:
    graph = desk()

    async def notebook_cell() -> tuple[Any, Any]:
        sync = graph.invoke("When does enrolment close?", cfg("n1"))
        native = await graph.ainvoke("When does enrolment close?", cfg("n2"))
        return sync, native

    sync, native = asyncio.run(notebook_cell())
    assert "15 September" in sync["answer"]
    assert sync["answer"] == native["answer"]


def test_X1_answer_chain_and_the_agent_tool() -> None:
    from toolweave.adapters.langchain import STREAM_EVENT_NAME, answer_chain

    graph = desk(checkpointer=None)
    chain = answer_chain(graph)
    assert "15 September" in chain.invoke("When does enrolment close?")

    async def events() -> list[Any]:
        return [e async for e in chain.astream_events("Is counselling free?", version="v2")]

    seen = asyncio.run(events())
    assert any(e["event"] == "on_custom_event" and e["name"] == STREAM_EVENT_NAME for e in seen)
    tool = graph.as_tool(name="ask_northfield", description="Northfield student services")
    assert "10:00 to 18:00" in tool.invoke({"question": "When is the library open on Sunday?"})


def test_T4_T13_the_exported_booking_keeps_its_gate_and_its_required_inputs() -> None:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from toolweave.adapters.langchain import to_langchain_tool

    booking = to_langchain_tool(BookCounselling())
    outside = booking.invoke({"campus": "Riverside", "day": "Monday"})  # no user data
    assert outside.startswith("book_counselling was not called: its gate refused")

    class Turn(TypedDict, total=False):
        args: dict[str, str]
        said: str

    def call(state: Turn) -> Turn:
        return {"said": booking.invoke(state["args"])}

    builder = StateGraph(Turn, context_schema=RunContext)
    builder.add_node("call", call)
    builder.add_edge(START, "call")
    builder.add_edge("call", END)
    agent = builder.compile()
    half = agent.invoke({"args": {"campus": "Riverside"}}, context=STUDENT)
    assert "required input(s) not filled: day" in half["said"]
    full = agent.invoke({"args": {"campus": "Riverside", "day": "Monday"}}, context=STUDENT)
    assert (
        full["said"] == "Booked: counselling appointment C-001 at the Riverside campus on Monday."
    )
    assert DIARY.appointments[DIARY.calls[0]]["student"] == "S-2001"  # the context's user data
    assert len(DIARY.calls) == 1


def test_Q5_a_clarification_resumes_from_sqlite_in_a_new_graph(tmp_path: Any) -> None:
    from toolweave.persistence import open_checkpointer

    path = str(tmp_path / "threads.db")
    with open_checkpointer(path) as saver:
        ask(desk(checkpointer=saver), "sq", "Please book a counselling appointment on Friday.")
    with open_checkpointer(path) as saver:
        graph = desk(checkpointer=saver)  # another process would do the same
        assert question_of(graph, "sq") == "Which campus?"
        out = reply(graph, cfg("sq"), "2", context=STUDENT)
    assert "Hillcrest campus on Friday" in out["answer"]
    assert len(DIARY.calls) == 1


# --- served: langgraph dev over the domain's own langgraph.json ---------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``langgraph dev`` on 127.0.0.1 over ``newuser20_domain/langgraph.json``, offline."""
    import json
    from pathlib import Path

    from dev_server import langgraph_dev

    here = Path(__file__).resolve().parent
    config = json.loads((here / "newuser20_domain" / "langgraph.json").read_text())
    graph_file = here / "newuser20_domain" / "graph.py"
    web_file = here / "newuser20_domain" / "web.py"
    config.update(
        dependencies=[str(here.parent)],
        graphs={"northfield": f"{graph_file}:graph"},
        http={"app": f"{web_file}:app"},
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(here))  # the server imports the domain
        with langgraph_dev(tmp_path_factory.mktemp("served"), config) as server:
            yield server.url


@pytest.mark.network
def test_Q1_S5_served_the_campus_is_asked_and_a_resent_message_books_once(served: str) -> None:
    import urllib.request

    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=served, api_key=None)
    thread = client.threads.create()["thread_id"]
    me = {"user_data": {"student_id": "S-7"}}
    asking = {
        "messages": [{"role": "human", "content": "Book a counselling appointment on Monday."}]
    }
    asked = client.runs.wait(thread, "northfield", input=asking, context=me)
    assert "Which campus?" in str(asked["__interrupt__"])
    done = client.runs.wait(thread, "northfield", command={"resume": "2"}, context=me)
    assert (
        done["answer"] == "Booked: counselling appointment C-001 at the Hillcrest campus on Monday."
    )
    message = {"messages": [{"role": "human", "content": BOOK, "id": "m-s"}]}
    first = client.runs.wait(thread, "northfield", input=message, context=me)
    again = client.runs.wait(thread, "northfield", input=message, context=me)
    assert "C-002" in first["answer"]
    assert "C-002" in again["answer"]  # not C-003: the message sent again books nothing
    with urllib.request.urlopen(served + "/chat", timeout=10) as page:
        html = page.read().decode()
    assert "id-card-reason" in html
    assert "fill_form" in html  # the client tool's script is on the page


def test_N2_the_cli_finds_the_domain_by_its_entry_point_and_shows_progress_and_sources(
    tmp_path: Any,
) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    info = tmp_path / "site" / "toolweave_northfield-0.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolweave-northfield\nVersion: 0.0.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[toolweave.plugins]\nnorthfield = newuser20_domain:plugin\n"
    )
    tests = Path(__file__).resolve().parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TOOLWEAVE_"))}
    env["PYTHONPATH"] = f"{info.parent}{os.pathsep}{tests}"
    toolweave = str(Path(sys.executable).with_name("toolweave"))
    asked = "When is the re-sit exam and how much does it cost?"
    command = [toolweave, "ask", "--data-dir", str(tmp_path / "data"), "--domain", "northfield"]
    done = subprocess.run([*command, asked], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "· Split the question into 2 parts" in lines
    assert "Re-sit exams take place in the last two weeks of August." in lines
    assert "A re-sit exam costs 40 GBP per module." in lines
    assert "  [1] Exam re-sits — https://students.northfield.example.ac.uk/resits" in lines
