"""The tenth new user: a registrar's LangGraph app with toolweave's graph inside it.

A parent ``StateGraph`` of the developer's own (triage, toolweave, post-processing), with
the toolweave graph as a subgraph node and called from inside a node, a checkpointer on
the parent only. The enrolment tool writes a row; every path must write it once (S5, Q6).
The domain is ``tests/newuser10_domain``; the findings are in
``docs/guides/new-user-notes.md`` (the tenth domain).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command

from tests.newuser10_domain import registrar as reg
from tests.newuser10_domain.parent import (
    Crash,
    RegistrarState,
    as_subgraph_node,
    called_from_a_node,
    triage,
)
from toolweave import (
    ChatbotTool,
    EmptyRequest,
    InvalidContextError,
    InvalidRequestError,
    RunContext,
    ToolCallContext,
    ToolResult,
    anext_input,
    build_graph,
    checkpoint_serde,
    explain,
    next_input,
    pending_clarification,
    thread_status,
)
from toolweave.llm.offline_followup import resolve_followup
from toolweave.testing import FunctionAssistant

STUDENT = RunContext(user_data={"student_id": "S100", "status": "enrolled"})
APPLICANT = RunContext(user_data={"student_id": "S200", "status": "applicant"})
MAKERS = {"subgraph_node": as_subgraph_node, "called_from_a_node": called_from_a_node}


def registrar(
    crash: Crash | None = None, make: str = "subgraph_node"
) -> tuple[Any, reg.Enrolments]:
    """The parent graph over the registrar's toolweave graph, and its enrolments table."""
    domain, tools, table = reg.registrar_domain()
    parent = MAKERS[make](
        build_graph(domain, tools), InMemorySaver(serde=checkpoint_serde()), crash
    )
    return parent, table


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def run(parent: Any, value: Any, cfg: dict[str, Any], *, asynchronous: bool, **kw: Any) -> Any:
    if asynchronous:
        return asyncio.run(parent.ainvoke(value, cfg, **kw))
    return parent.invoke(value, cfg, **kw)


MODES = pytest.mark.parametrize("asynchronous", [False, True], ids=["invoke", "ainvoke"])
EMBEDDINGS = pytest.mark.parametrize("make", list(MAKERS))


# ---- the side effect, once on every path (S5, Q6) ----


@EMBEDDINGS
@MODES
def test_Q1_Q2_S5_the_question_surfaces_through_the_parent_and_a_resume_sent_twice_enrols_once(
    make: str, asynchronous: bool
) -> None:
    parent, table = registrar(make=make)
    cfg = config("ask")
    asked = {"messages": [HumanMessage("I want to enrol on a course.", id="m1")]}
    out = run(parent, asked, cfg, asynchronous=asynchronous, context=STUDENT)
    (interrupt,) = out["__interrupt__"]
    print(interrupt.value)
    assert interrupt.value["question"] == "Which course would you like to enrol on?"
    assert interrupt.value["choices"] == list(reg.COURSES.values())
    assert pending_clarification(parent, cfg) == interrupt.value  # read on the parent's thread
    assert table.keys == []
    for _ in range(2):  # the resume, then the same resume sent again
        out = run(parent, Command(resume="2"), cfg, asynchronous=asynchronous, context=STUDENT)
        print(out["reply_text"])
        assert out["reply_text"] == (
            "[enrolment] You are enrolled on MATH120 Linear Algebra (enrolment E-1)."
        )
    assert table.rows() == [("S100", "MATH120", 1)]
    assert len(table.keys) == 1  # called once, not deduped by the table


@EMBEDDINGS
@MODES
def test_S5_Q6_the_same_message_sent_again_on_the_parent_thread_enrols_once(
    make: str, asynchronous: bool
) -> None:
    """Fixed: the subgraph node refused the message sent again; called in a node, it acted again."""
    parent, table = registrar(make=make)
    cfg = config("again")
    asked = {"messages": [HumanMessage("Please enrol me on COMP101.", id="m1")]}
    for _ in range(3):
        out = run(parent, asked, cfg, asynchronous=asynchronous, context=STUDENT)
        assert out["reply_text"].endswith("COMP101 Introduction to Programming (enrolment E-1).")
    assert table.rows() == [("S100", "COMP101", 1)]
    if make == "subgraph_node":  # the answer is not added again to the parent's messages
        assert [m.type for m in out["messages"]] == ["human", "ai"]
    assert len(table.keys) == 1


@EMBEDDINGS
@MODES
def test_S5_Q6_a_crash_after_the_enrolment_then_a_retry_enrols_once(
    make: str, asynchronous: bool
) -> None:
    """The parent's post-processing fails after toolweave acted; retried with None and again."""
    crash = Crash(times=2)
    parent, table = registrar(crash, make=make)
    cfg = config("crash")
    asked = {"messages": [HumanMessage("Please enrol me on HIST210.", id="m1")]}
    with pytest.raises(RuntimeError, match="injected"):
        run(parent, asked, cfg, asynchronous=asynchronous, context=STUDENT)
    with pytest.raises(RuntimeError, match="injected"):
        run(parent, None, cfg, asynchronous=asynchronous, context=STUDENT)  # finishes the run
    out = run(parent, asked, cfg, asynchronous=asynchronous, context=STUDENT)  # the same input
    assert out["reply_text"].endswith("HIST210 Modern European History (enrolment E-1).")
    assert table.rows() == [("S100", "HIST210", 1)]
    assert len(table.keys) == 1


class ContextEnrol(reg.EnrolCourse):
    """The enrolment as context, so that an answer step runs after it acted."""

    returns_answer = False

    def enrol(self, course: str, ctx: ToolCallContext) -> ToolResult:
        number = self.table.enrol(ctx.idempotency_key, "S100", course)
        return ToolResult.as_guaranteed_context(self.name, f"Enrolled on {course} as E-{number}.")


@EMBEDDINGS
@pytest.mark.parametrize("retry", ["none", "same_input"])
def test_S5_a_crash_inside_toolweave_after_the_tool_acted_is_retried_without_a_second_call(
    make: str, retry: str
) -> None:
    table = reg.Enrolments()
    domain, tools, _ = reg.registrar_domain(table)
    tools = [ContextEnrol(table) if t.name == "enrol_course" else t for t in tools]
    failures = [RuntimeError("the answer model is down (injected)")]

    def answer(request: Any) -> str:
        if failures:
            raise failures.pop()
        return "\n".join(request.guaranteed)

    assistant = FunctionAssistant(
        route=lambda text, names: ["enrol_course"],
        extract=lambda text, tool: {"course": "HIST210"} if tool.name == "enrol_course" else None,
        answer=answer,
    )
    parent = MAKERS[make](build_graph(domain, tools, assistant=assistant), InMemorySaver(), None)
    cfg = config("inner-crash")
    asked = {"messages": [HumanMessage("Please enrol me on HIST210.", id="m1")]}
    with pytest.raises(RuntimeError, match="injected"):
        parent.invoke(asked, cfg, context=STUDENT)
    assert table.acted == 1
    out = parent.invoke(None if retry == "none" else asked, cfg, context=STUDENT)
    assert "Enrolled on HIST210 as E-1." in out["reply_text"]
    assert table.acted == 1
    assert len(table.keys) == 1


def test_X1_a_note_the_parent_adds_after_the_question_is_not_taken_for_the_question() -> None:
    """Fixed: a triage node's own AI message after the question made toolweave refuse the run."""
    domain, tools, _ = reg.registrar_domain()

    def triage_with_a_note(state: RegistrarState) -> dict[str, Any]:
        return {**triage(state), "messages": [AIMessage("Let me check with the registrar.")]}

    builder = StateGraph(RegistrarState)
    builder.add_node("triage", triage_with_a_note)
    builder.add_node("registrar", build_graph(domain, tools))
    builder.add_edge(START, "triage")
    builder.add_edge("triage", "registrar")
    builder.add_edge("registrar", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    out = parent.invoke({"messages": [("human", "When is the COMP101 exam?")]}, config("note"))
    print(out["answer"])
    assert out["answer"].startswith(
        "COMP101 Introduction to Programming: written exam on 12 January"
    )
    assert [m.type for m in out["messages"]] == ["human", "ai", "ai"]


# ---- what the developer and the person see ----


def test_P2_streaming_the_parent_with_subgraphs_shows_progress_the_question_and_the_answer() -> (
    None
):
    parent, table = registrar()
    cfg = config("stream")
    modes = ["updates", "messages", "custom"]
    asked = {"messages": [HumanMessage("I want to enrol on a course.", id="m1")]}
    first = list(parent.stream(asked, cfg, context=STUDENT, stream_mode=modes, subgraphs=True))
    interrupts = [
        d["__interrupt__"] for ns, mode, d in first if mode == "updates" and "__interrupt__" in d
    ]
    assert [ns for ns, mode, d in first if mode == "updates" and "__interrupt__" in d][-1] == ()
    assert interrupts[-1][0].value["tool"] == "enrol_course"  # the parent's own stream has it
    routed = [d for ns, mode, d in first if mode == "custom" and d["type"] == "routed"]
    assert routed[0]["tools"][0] == "enrol_course"
    assert all(ns[0].startswith("registrar:") for ns, mode, d in first if mode == "custom")
    second = list(
        parent.stream(
            Command(resume="Linear Algebra"),
            cfg,
            context=STUDENT,
            stream_mode=modes,
            subgraphs=True,
        )
    )
    phrases = [
        d["phrase"] for ns, mode, d in second if mode == "custom" and d["type"] == "tool_progress"
    ]
    assert phrases == ["Writing your enrolment"]
    said = [d[0].content for ns, mode, d in second if mode == "messages" and ns]
    print(said)
    assert "You are enrolled on MATH120 Linear Algebra (enrolment E-1)." in said
    top = [d for ns, mode, d in second if mode == "updates" and ns == ()]
    assert top[-1]["post_process"]["reply_text"].startswith("[enrolment] You are enrolled")
    assert table.acted == 1


def test_L1_Q5_the_parent_thread_shows_the_paused_toolweave_run_and_explains_it() -> None:
    """Fixed: explain() on the parent's thread returned [] without a word."""
    parent, _ = registrar()
    cfg = config("studio")
    parent.invoke({"messages": [("human", "I want to enrol on a course.")]}, cfg, context=STUDENT)
    snapshot = parent.get_state(cfg, subgraphs=True)
    assert snapshot.next == ("registrar",)
    inner = snapshot.tasks[0].state
    assert inner.next == ("ask_user",)
    assert set(inner.values["tasks"]) == {"1"}  # the flat task tree
    assert thread_status(parent, cfg).kind.value == "waiting_for_reply"
    verdicts = [(e.tool, e.verdict) for e in explain(parent, cfg)]  # the paused node's ledger
    print(verdicts)
    assert ("enrol_course", "asked") in verdicts
    parent.invoke(Command(resume="1"), cfg, context=STUDENT)
    done = [(e.tool, e.verdict) for e in explain(parent, cfg, tool="enrol_course")]
    assert ("enrol_course", "answer") in done  # the parent's state keeps the ledger
    history = list(parent.get_state_history(cfg))
    assert [h.next for h in history][:3] == [(), ("post_process",), ("registrar",)]


def test_L1_explain_on_a_parent_without_a_ledger_says_how_to_keep_it() -> None:
    domain, tools, _ = reg.registrar_domain()
    parent = _parent_without_ledger(build_graph(domain, tools))
    cfg = config("no-ledger")
    parent.invoke({"messages": [("human", "When is the MATH120 exam?")]}, cfg)
    with pytest.raises(InvalidRequestError, match="ledger: list\\[LedgerEntry\\]") as raised:
        explain(parent, cfg)
    print(raised.value)


class Slim(TypedDict, total=False):
    """A parent's state that keeps the messages and the answer only, no ledger."""

    messages: Annotated[list[AnyMessage], add_messages]
    answer: str


def _parent_without_ledger(toolweave_graph: Any) -> Any:
    builder = StateGraph(Slim)
    builder.add_node("registrar", toolweave_graph)
    builder.add_edge(START, "registrar")
    builder.add_edge("registrar", END)
    return builder.compile(checkpointer=InMemorySaver())


@EMBEDDINGS
def test_T3_T4_R9_gates_and_sources_through_the_parent(make: str) -> None:
    parent, _ = registrar(make=make)
    cases: list[tuple[str, list[str], RunContext, Callable[[str], bool]]] = [
        (
            "What are my grades?",
            [],
            STUDENT,
            lambda t: "COMP101 Introduction to Programming: 72" in t,
        ),
        ("What are my grades?", [], APPLICANT, lambda t: "72" not in t),  # T4: not offered
        ("Do I owe the library anything?", ["library"], STUDENT, lambda t: "3.20 pounds" in t),
        ("Do I owe the library anything?", ["exams"], STUDENT, lambda t: "3.20" not in t),  # T3
        (
            "What is the late payment charge?",
            [],
            STUDENT,
            lambda t: (
                "charge of 75 pounds" in t
                and "Late payment of fees <https://registrar.example.edu/fees/late-payment>" in t
            ),
        ),
    ]
    for n, (question, systems, who, holds) in enumerate(cases):
        cfg = config(f"gate{n}")
        out = parent.invoke(
            {"messages": [("human", question)], "systems": systems}, cfg, context=who
        )
        print(question, systems, "->", out["reply_text"])
        assert holds(out["reply_text"]), out["reply_text"]
    refused = [
        (e.tool, e.verdict) for e in explain(parent, config("gate1")) if e.kind.value == "gate"
    ]
    assert refused == [("view_grades", "refused: eligibility")]


@dataclass
class AppContext:
    """A parent graph's own run context: the person's data beside fields of its own."""

    user_data: dict[str, Any] = field(default_factory=dict)
    campus: str = "main"
    assistant: str = "the registrar's front desk"  # a field of the same name, not toolweave's


@pytest.mark.parametrize("given", ["dataclass", "dict"])
def test_T4_X4_a_parent_graphs_own_context_schema_gives_its_user_data_to_the_gates(
    given: str,
) -> None:
    """Fixed: a parent with a context_schema of its own failed every run with AttributeError."""
    domain, tools, _ = reg.registrar_domain()
    builder = StateGraph(RegistrarState, context_schema=AppContext)
    builder.add_node("triage", triage)
    builder.add_node("registrar", build_graph(domain, tools))
    builder.add_edge(START, "triage")
    builder.add_edge("triage", "registrar")
    builder.add_edge("registrar", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    data = {"student_id": "S100", "status": "enrolled"}
    context: Any = AppContext(user_data=data) if given == "dataclass" else {"user_data": data}
    out = parent.invoke(
        {"messages": [("human", "What are my grades?")]}, config("ctx"), context=context
    )
    assert out["answer"].startswith("COMP101 Introduction to Programming: 72")
    assert "S100" not in str(parent.get_state(config("ctx")).values)  # never stored (X4)
    out = parent.invoke(
        {"messages": [("human", "What are my grades?")]}, config("ctx2"), context=AppContext()
    )
    assert "72" not in out["answer"]  # no student: the gate holds (T4)


def test_X5_a_parent_context_whose_user_data_is_no_mapping_is_refused_saying_what_it_must_be() -> (
    None
):
    domain, tools, _ = reg.registrar_domain()
    builder = StateGraph(RegistrarState, context_schema=AppContext)
    builder.add_node("registrar", build_graph(domain, tools))
    builder.add_edge(START, "registrar")
    builder.add_edge("registrar", END)
    parent = builder.compile()
    with pytest.raises(InvalidContextError, match=r"\(AppContext\) must be a mapping") as raised:
        parent.invoke(
            {"messages": [("human", "What are my grades?")]},
            context=AppContext(user_data="S100"),  # type: ignore[arg-type]
        )  # type: ignore[arg-type]
    print(raised.value)


class QuestionOnly(TypedDict, total=False):
    """A parent's state with a question of its own and no messages."""

    question: str
    answer: str


def test_X1_a_parent_state_without_messages_is_told_how_to_give_the_question() -> None:
    domain, tools, _ = reg.registrar_domain()
    builder = StateGraph(QuestionOnly)
    builder.add_node("registrar", build_graph(domain, tools))
    builder.add_edge(START, "registrar")
    builder.add_edge("registrar", END)
    with pytest.raises(InvalidRequestError, match="a node of a graph whose state has no") as raised:
        builder.compile().invoke({"question": "When is the MATH120 exam?"})
    print(raised.value)
    assert "call the graph from a node of your own" in str(raised.value)


@EMBEDDINGS
@pytest.mark.parametrize(
    ("text", "said", "verdict"),
    [
        ("Modern European History", "enrolled on HIST210 Modern European History", "replied"),
        ("How much does a resit exam cost?", "A resit examination costs 45 pounds", "closed"),
        ("never mind", "I have dropped that question", "cancelled"),
    ],
)
def test_Q2_the_next_message_on_the_parent_thread_reaches_the_waiting_question(
    make: str, text: str, said: str, verdict: str
) -> None:
    """Fixed: a new input on the parent thread started over and the question was lost.

    ``next_input`` makes the person's next message a message resume while a question waits,
    so the paused run reads it as a reply, a new question or a cancel.
    """
    parent, table = registrar(make=make)
    cfg = config("next")
    parent.invoke({"messages": [("human", "I want to enrol on a course.")]}, cfg, context=STUDENT)
    out = parent.invoke(next_input(parent, cfg, text), cfg, context=STUDENT)
    print(text, "->", out["reply_text"])
    assert said in out["reply_text"]
    kinds = [e.verdict for e in explain(parent, cfg) if e.kind.value == "clarification"]
    assert kinds[-1] == verdict
    assert table.acted == (1 if verdict == "replied" else 0)
    after = next_input(parent, cfg, "What are my grades?")  # nothing waits: a new message
    assert after["messages"][0].content == "What are my grades?"


def test_Q2_anext_input_under_ainvoke() -> None:
    parent, table = registrar()
    cfg = config("anext")

    async def chat() -> Any:
        await parent.ainvoke(
            {"messages": [("human", "I want to enrol on a course.")]}, cfg, context=STUDENT
        )
        step = await anext_input(parent, cfg, "the third one")
        return await parent.ainvoke(step, cfg, context=STUDENT)

    out = asyncio.run(chat())
    assert "HIST210 Modern European History (enrolment E-1)" in out["reply_text"]
    assert table.acted == 1


@EMBEDDINGS
@MODES
def test_S5_Q6_the_question_sent_again_after_its_clarification_round_enrols_once(
    make: str, asynchronous: bool
) -> None:
    """Fixed: the reply, last human message of the parent's thread, was taken for a question.

    The first question (same id) sent again after the round that enrolled: the parent's
    ``add_messages`` puts it back in place, so the conversation ends with the answer.
    """
    parent, table = registrar(make=make)
    cfg = config("round-again")
    asked = {"messages": [HumanMessage("I want to enrol on a course.", id="m1")]}
    run(parent, asked, cfg, asynchronous=asynchronous, context=STUDENT)
    run(parent, Command(resume="2"), cfg, asynchronous=asynchronous, context=STUDENT)
    out = run(parent, asked, cfg, asynchronous=asynchronous, context=STUDENT)
    if "__interrupt__" in out:  # called in a node: the node passes the question alone
        out = run(parent, Command(resume="2"), cfg, asynchronous=asynchronous, context=STUDENT)
    print(out["reply_text"])
    assert out["reply_text"].endswith("MATH120 Linear Algebra (enrolment E-1).")
    assert table.rows() == [("S100", "MATH120", 1)]
    assert len(table.keys) == 1


def test_S5_the_answered_turn_is_not_run_again_when_the_parent_adds_its_own_reply() -> None:
    """The parent's post-processing adds its reply to the messages; the same state runs again."""
    domain, tools, table = reg.registrar_domain()

    def post_with_a_message(state: RegistrarState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"[{state['category']}] {state['answer']}")]}

    builder = StateGraph(RegistrarState)
    builder.add_node("triage", triage)
    builder.add_node("registrar", build_graph(domain, tools))
    builder.add_node("post_process", post_with_a_message)
    builder.add_edge(START, "triage")
    builder.add_edge("triage", "registrar")
    builder.add_edge("registrar", "post_process")
    builder.add_edge("post_process", END)
    parent = builder.compile(checkpointer=InMemorySaver(serde=checkpoint_serde()))
    cfg = config("own-reply")
    asked = {"messages": [HumanMessage("Please enrol me on COMP101.", id="m1")]}
    for _ in range(2):
        out = parent.invoke(asked, cfg, context=STUDENT)
    print([(m.type, m.text) for m in out["messages"]])
    ours = [m for m in out["messages"] if "toolweave_sources" in m.response_metadata]
    assert len(ours) == 1  # toolweave's answer is not added again (the parent's reply is)
    assert out["answer"].startswith("You are enrolled on COMP101")
    assert [source.name for source in out["sources"]] == []
    assert len(table.keys) == 1


class SavingMeanwhile(InMemorySaver):
    """An in-memory saver whose first listing meets a save made meanwhile (as under load)."""

    listings = 0

    def list(self, *args: Any, **kwargs: Any) -> Any:
        SavingMeanwhile.listings += 1
        if SavingMeanwhile.listings == 1:
            raise RuntimeError("dictionary changed size during iteration")
        return super().list(*args, **kwargs)


def test_S5_a_listing_that_meets_the_parents_own_save_is_made_again() -> None:
    """Fixed: under load, the parent's background save broke the node's lookup (a failed run)."""
    domain, tools, table = reg.registrar_domain()
    SavingMeanwhile.listings = 0
    parent = as_subgraph_node(build_graph(domain, tools), SavingMeanwhile(serde=checkpoint_serde()))
    out = parent.invoke(
        {"messages": [("human", "Please enrol me on COMP101.")]}, config("race"), context=STUDENT
    )
    assert out["answer"].startswith("You are enrolled on COMP101")
    assert SavingMeanwhile.listings == 2
    assert table.acted == 1


# ---- A1: what the person's next message is read as, with a tool that acts ----


@pytest.mark.parametrize(
    ("message", "previous", "standalone"),
    [
        ("I want to enrol on a course.", "Please enrol me on COMP101.", None),  # its own
        ("I would like to book a room.", "Book room A for Friday.", None),
        ("the second one", "Please enrol me on COMP101.", None),  # picks nothing offered
        ("On Friday?", "When is the gym open on Saturday?", "When is the gym open on Friday?"),
        (
            "Cardiology, please.",
            "When are consultation hours?",
            "When are consultation hours? Cardiology",
        ),
    ],
)
def test_A1_a_sentence_of_its_own_or_a_pick_of_nothing_is_no_follow_up(
    message: str, previous: str, standalone: str | None
) -> None:
    """Fixed: a request of few content words was the earlier request with a word added.

    ``None``: the message stands alone; fragments ("On Friday?") still follow up.
    """
    assert resolve_followup(message, previous) == (standalone or message)


@EMBEDDINGS
def test_A1_S5_a_new_request_after_an_enrolment_asks_instead_of_enrolling_again(make: str) -> None:
    """Fixed: "I want to enrol on a course." after an enrolment enrolled on the same course again.

    And the reply sent a second time, when nothing waits any more, enrolled once more.
    """
    parent, table = registrar(make=make)
    cfg = config("follow")
    for text in ("Please enrol me on COMP101.", "I want to enrol on a course."):
        out = parent.invoke(next_input(parent, cfg, text), cfg, context=STUDENT)
    assert out["__interrupt__"][0].value["question"] == "Which course would you like to enrol on?"
    out = parent.invoke(next_input(parent, cfg, "the second one"), cfg, context=STUDENT)
    assert out["reply_text"].endswith("MATH120 Linear Algebra (enrolment E-2).")
    out = parent.invoke(next_input(parent, cfg, "the second one"), cfg, context=STUDENT)  # again
    print(out["reply_text"])
    assert "enrolled" not in out["reply_text"]
    assert table.rows() == [("S100", "COMP101", 1), ("S100", "MATH120", 2)]


class ShuttleTimes(ChatbotTool[EmptyRequest]):
    """A second domain's tool: the campus shuttle."""

    name = "shuttle_times"
    domain = "campus"
    returns_answer = True
    executable_instruction = "shuttle_times: true when the user asks about the campus shuttle."
    routing_examples = ("When does the campus shuttle run?",)

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_answer(self.name, "The campus shuttle runs every 20 minutes.")


def test_S5_a_second_domains_node_on_the_same_question_is_not_answered_by_the_first() -> None:
    """Two toolweave nodes in a row: the second is not "answered already" by the first's answer."""
    domain, tools, _ = reg.registrar_domain()
    builder = StateGraph(RegistrarState)
    builder.add_node("registrar", build_graph(domain, tools))
    builder.add_node("campus", build_graph("campus", [ShuttleTimes()]))
    builder.add_edge(START, "registrar")
    builder.add_edge("registrar", "campus")
    builder.add_edge("campus", END)
    parent = builder.compile(checkpointer=InMemorySaver(serde=checkpoint_serde()))
    out = parent.invoke(
        {"messages": [("human", "When does the campus shuttle run?")]}, config("two")
    )
    assert out["answer"] == "The campus shuttle runs every 20 minutes."
    domains = [m.response_metadata.get("toolweave_domain") for m in out["messages"][1:]]
    assert domains == ["registrar", "campus"]
