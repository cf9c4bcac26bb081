"""Q2 (issue 38 item 3): the next message on a thread that waits on a question is read first.

A neutral domain (a city library): ``branch_hours`` asks "Which branch?" when the
question names none. The person may answer it, correct what they asked, ask something
else, or drop it; only an answer reaches the tool as its reply. An amended request is
the earlier request asked again with the amendment, a new question is answered as a
new turn, and either closes the open question in the ledger; a cancel ends the run
with no tool call.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel
from support import doc

from toolweave import ClarifiableTool, ToolCallContext, ToolResult, build_graph
from toolweave.llm.next_message import next_message_kind
from toolweave.llm.offline import normalize_offline
from toolweave.state.ledger import LedgerKind
from toolweave.testing import FunctionAssistant

BRANCHES = ("Central", "Riverside")
FEE = "The annual membership costs 20 euros."


class BranchHours(ClarifiableTool[BaseModel]):
    name = "branch_hours"
    executable_instruction = "branch_hours: true when the user asks when a branch is open"

    def __init__(self) -> None:
        self.replies: list[str] = []

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.clarification(self.name, "Which branch?", list(BRANCHES))

    def execute_with_clarification(
        self, request: Any, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        self.replies.append(reply)
        return ToolResult.as_context(self.name, [doc("hours", f"{reply}: open 9-18.")])


def _route(text: str, tools: Any) -> list[str]:
    return ["branch_hours"] if "open" in text.lower() else ["membership_fees"]


def _graph(**assistant: Any) -> tuple[Any, BranchHours]:
    from support import make_tool

    hours = BranchHours()
    fees = make_tool(
        "membership_fees", result=lambda n, c: ToolResult.as_context(n, [doc("fees", FEE)])
    )
    graph = build_graph(
        "library",
        [hours, fees],
        assistant=FunctionAssistant(route=_route, **assistant),
        checkpointer=InMemorySaver(),
    )
    return graph, hours


def _turns(graph: Any, *messages: str, thread: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    out: dict[str, Any] = {}
    for message in messages:
        out = graph.invoke({"messages": [HumanMessage(message)]}, config)
    return out


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Central", "reply"),
        ("2", "reply"),
        ("the Riverside one, please", "reply"),
        # names a choice, but asks something of its own ("closer"): no pick (Q2, A9, S5;
        # the nineteenth round: "Quanto custa o Max?" picked the plan it asked about)
        ("Which is closer, the Central branch?", "new_question"),
        ("The Central branch?", "reply"),  # the choice and the question's word alone
        ("How much is the annual membership?", "new_question"),
        ("Mennyibe kerül az éves tagság?", "new_question"),
        ("Ile kosztuje roczna karta?", "new_question"),
        ("Never mind.", "cancel"),
        ("mindegy", "cancel"),
        ("nieważne, dzięki", "cancel"),
        ("no idea", "reply"),  # short and no question: the tool decides what it means
        ("Sorry, I meant when you close on Sunday.", "amended"),
        ("Actually, what about the closing time?", "amended"),
        ("Bocsánat, a zárásra gondoltam.", "amended"),
        ("Úgy értem, mikor zárnak vasárnap?", "amended"),
        ("Przepraszam, chodziło mi o godzinę zamknięcia.", "amended"),
        ("I meant Riverside.", "reply"),  # a correction that only picks a choice answers
        ("No, sorry, I meant the Central one.", "reply"),
        ("Właściwie Riverside.", "reply"),
    ],
)
def test_Q2_next_message_kind_by_form_and_what_was_asked(message: str, kind: str):
    assert next_message_kind(message, "Which branch?", list(BRANCHES)) == kind


def test_Q2_a_reply_reaches_the_tool_that_asked():
    graph, hours = _graph()
    out = _turns(graph, "When are you open?", "Riverside", thread="reply")
    assert hours.replies == ["Riverside"]
    assert "Riverside: open 9-18." in out["answer"]


def test_Q2_a_new_question_is_a_new_turn_and_closes_the_open_question():
    graph, hours = _graph()
    question = "How much is the annual membership?"
    out = _turns(graph, "When are you open?", question, thread="new")
    assert hours.replies == []  # the tool was never fed the question as its reply
    assert FEE in out["answer"]
    assert out["activated"] == ["1:membership_fees"]
    closed = [e for e in out["ledger"] if e.kind is LedgerKind.CLARIFICATION]
    assert [(e.tool, e.verdict) for e in closed] == [("branch_hours", "closed")]
    assert question in closed[0].reason
    assert graph.get_state({"configurable": {"thread_id": "new"}}).values.get("pause") is None


def test_Q2_an_amended_request_is_the_earlier_request_asked_again_with_the_amendment():
    graph, hours = _graph()
    amended = "Sorry, I meant the annual membership fee."
    out = _turns(graph, "When are you open?", amended, thread="a")
    assert hours.replies == []  # the correction was not fed to the tool as its reply
    assert FEE in out["answer"]
    assert out["activated"] == ["1:membership_fees"]
    entries = [e for e in out["ledger"] if e.kind is LedgerKind.CLARIFICATION]
    assert [(e.tool, e.verdict) for e in entries] == [("branch_hours", "amended")]
    assert "the annual membership fee" in entries[0].reason
    values = graph.get_state({"configurable": {"thread_id": "a"}}).values
    assert values["message"].question == "the annual membership fee."  # the marker is gone
    assert values.get("pause") is None


def test_Q2_an_amendment_of_a_detail_reruns_the_earlier_request_which_may_ask_again():
    """ "Actually, on Sunday": the earlier request with the day, so the tool asks again.

    Normalization reads the amendment as a follow-up of the request it corrects (A1;
    here the offline rules, as a rules-first model assistant does).
    """
    graph, hours = _graph(normalize=normalize_offline)
    _turns(graph, "When are you open?", "Actually, on Sunday.", thread="d")
    state = graph.get_state({"configurable": {"thread_id": "d"}})
    assert state.values["message"].question == "When are you open on Sunday?"
    assert [i.value["question"] for i in state.interrupts] == ["Which branch?"]
    assert hours.replies == []
    out = _turns(graph, "Central", thread="d")
    assert hours.replies == ["Central"]
    assert "Central: open 9-18." in out["answer"]


def test_Q2_a_cancel_ends_the_run_with_no_tool_call_and_no_model_call():
    graph, hours = _graph()
    out = _turns(graph, "When are you open?", "Never mind.", thread="cancel")
    assert hours.replies == []
    assert out["answer"].startswith("All right, I have dropped that question.")
    assert out["sources"] == []
    verdicts = [(e.kind, e.verdict) for e in out["ledger"]]
    assert (LedgerKind.CLARIFICATION, "cancelled") in verdicts
    answer = next(e for e in out["ledger"] if e.kind is LedgerKind.ANSWER)
    assert "open question" in answer.reason
    state = graph.get_state({"configurable": {"thread_id": "cancel"}})
    assert state.values.get("pause") is None
    assert not state.interrupts
    again = _turns(graph, "How much is the annual membership?", thread="cancel")
    assert FEE in again["answer"]  # the thread goes on as usual


def test_Q2_a_new_question_is_read_the_same_under_ainvoke():
    graph, hours = _graph()
    config = {"configurable": {"thread_id": "async"}}

    async def run() -> dict[str, Any]:
        await graph.ainvoke({"messages": [HumanMessage("When are you open?")]}, config)
        message = HumanMessage("How much is the annual membership?")
        return await graph.ainvoke({"messages": [message]}, config)  # type: ignore[no-any-return]

    out = asyncio.run(run())
    assert hours.replies == []
    assert FEE in out["answer"]


@pytest.mark.parametrize(
    "message",
    ["How much is the annual membership?", "Sorry, I meant the annual membership fee."],
)
def test_Q2_the_cli_answers_a_new_question_asked_instead_of_the_reply(
    message: str, tmp_path, monkeypatch, capsys
):
    """The CLI sends the message as the next one on the thread; the graph reads it."""
    from test_cli import FakeEntryPoint

    import toolweave.domains as domains
    from toolweave import Plugin
    from toolweave.cli import main

    graph_tools = _graph_tools()
    plugin = Plugin(name="library", domains={"library": lambda: graph_tools})
    monkeypatch.setattr(
        domains, "entry_points", lambda *, group: [FakeEntryPoint("library", lambda: plugin)]
    )
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path))
    args = ["ask", "--domain", "library", "--thread", "t1"]
    assert main([*args, "When are you open?"]) == 0
    assert "Which branch?" in capsys.readouterr().out
    assert main([*args, message]) == 0
    assert FEE in capsys.readouterr().out


def _graph_tools() -> tuple[Any, list[Any]]:
    from support import make_tool

    from toolweave import Domain

    fees = make_tool(
        "membership_fees",
        result=lambda n, c: ToolResult.as_context(n, [doc("fees", FEE)]),
        routing="membership_fees: true when the user asks what the membership costs",
    )
    hours = BranchHours()
    hours.executable_instruction = (  # type: ignore[misc]
        "branch_hours: true when the user asks when a branch is open"
    )
    return Domain(name="library"), [hours, fees]


def _evaluated(*records: dict[str, Any]) -> Any:
    from toolweave import Domain
    from toolweave.evaluation import evaluate, parse_case

    _, tools = _graph_tools()
    cases = [parse_case(record, f"case {n}") for n, record in enumerate(records)]
    return evaluate(Domain(name="library"), tools, cases, assistant=FunctionAssistant(route=_route))


PENDING = {"history": ["When are you open?"]}


def test_Q2_eval_scores_what_the_next_message_was_read_as_by_split():
    """``expected_next`` cases: the graph's reading comes from the ledger, per split."""
    from toolweave.evaluation import split_table

    report = _evaluated(
        {"question": "Riverside", **PENDING, "expected_next": "reply",
         "expected_tools": ["branch_hours"], "split": "dev"},
        {"question": "How much is the annual membership?", **PENDING,
         "expected_next": "new_question", "expected_tools": ["membership_fees"],
         "expected_facts": ["20 euros"], "split": "heldout"},
        {"question": "Never mind.", **PENDING, "expected_next": "cancel",
         "expected_tools": "none", "split": "heldout"},
        {"question": "Sorry, I meant the annual membership fee.", **PENDING,
         "expected_next": "amended", "expected_tools": ["membership_fees"], "split": "dev"},
        {"question": "No idea.", **PENDING, "expected_next": "new_question",
         "expected_tools": ["branch_hours"], "split": "dev"},  # read as a reply: a miss
    )  # fmt: skip
    read = [(r.next_kind, r.next_ok) for r in report.results]
    assert read == [
        ("reply", True), ("new_question", True), ("cancel", True), ("amended", True),
        ("reply", False),
    ]  # fmt: skip
    assert [r.exact for r in report.results] == [True] * 5  # each turn's own routing
    assert not any(r.wrong_finished_answer for r in report.results)  # a cancel is no answer
    assert report.splits()["heldout"].next_message_accuracy == 1.0
    assert report.splits()["dev"].next_message_accuracy == 2 / 3
    header, _, dev, heldout = split_table(report)[1:]
    assert "next message right" in header
    assert "66.7 %" in dev
    assert "100.0 %" in heldout


def test_Q2_eval_a_history_that_leaves_nothing_open_is_a_miss_and_a_bad_kind_is_refused():
    from toolweave.evaluation import parse_case
    from toolweave.state.errors import InvalidRequestError

    report = _evaluated(
        {"question": "Never mind.", "history": ["How much is the annual membership?"],
         "expected_next": "cancel", "expected_tools": "none"},
        {"question": "How much is the annual membership?", "expected_tools": ["membership_fees"]},
    )  # fmt: skip
    assert [(r.next_kind, r.next_ok) for r in report.results] == [(None, False), (None, None)]
    with pytest.raises(InvalidRequestError, match="expected_next"):
        parse_case({"question": "x", "expected_tools": "none", "expected_next": "maybe"}, "l1")


@pytest.mark.parametrize(
    ("message", "verdict"),
    [
        ("Riverside", "replied"),
        ("How much is the annual membership?", "closed"),
        ("Sorry, I meant the annual membership fee.", "amended"),
        ("Never mind.", "cancelled"),
    ],
)
def test_Q2_a_message_sent_as_a_resume_is_read_as_the_next_message(message: str, verdict: str):
    """``Command(resume={"type": "message", ...})``: for servers that run nothing on a
    waiting thread but its resume, the message is read as one sent on the thread."""
    from langgraph.types import Command

    graph, hours = _graph()
    config = {"configurable": {"thread_id": "resumed"}}
    graph.invoke({"messages": [HumanMessage("When are you open?")]}, config)
    out = graph.invoke(Command(resume={"type": "message", "content": message}), config)
    verdicts = [e.verdict for e in out["ledger"] if e.kind is LedgerKind.CLARIFICATION]
    assert verdict in verdicts
    assert hours.replies == (["Riverside"] if verdict == "replied" else [])
    if verdict in ("closed", "amended"):
        assert FEE in out["answer"]
    humans = [m.text for m in out["messages"] if m.type == "human"]
    assert humans == ["When are you open?", message]
    assert not graph.get_state(config).interrupts


@pytest.mark.parametrize("cancel", ["never mind", "mégsem", "nieważne"])
def test_A1_D2_a_cancel_with_nothing_pending_follows_up_nothing_and_is_small_talk(
    cancel: str,
) -> None:
    history = [HumanMessage("When is the Central branch open on Sunday?")]
    normalized = normalize_offline(cancel, [*history, HumanMessage(cancel)])
    assert normalized.question == cancel  # not the earlier question with the word appended
    assert normalized.prompt_type == "smalltalk"  # D2: no deep search for it


def test_A1_a_short_follow_up_still_takes_the_earlier_question() -> None:
    history = [HumanMessage("When is the Central branch open on Sunday?")]
    normalized = normalize_offline("and Riverside?", [*history, HumanMessage("and Riverside?")])
    assert "Riverside" in normalized.question
    assert "open" in normalized.question
    assert normalized.prompt_type == "factual"
