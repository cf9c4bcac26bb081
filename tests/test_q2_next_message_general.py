"""Q2 (issue 38 item 3) in any language: a question word is a question word whatever its ending.

Hungarian question words take case endings ("hánytól hányig", from what to what;
"mennyibe", into how much; "meddig", until when). Such a word says how the person asks,
never what about: it is no evidence for a tool (so a question about opening hours that
names no branch is still asked "Melyik fiók?", Q1), and a message opening with one asks
something of its own (so, while a question waits, it is a new question, answered as a new
turn, Q2). A neutral test domain: a city library in Hungarian, offline (no model), whose
``fiok_nyitvatartas`` tool asks which branch when none is named.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from toolweave import ClarifiableTool, ToolCallContext, ToolResult, UniqueTextDocument, build_graph
from toolweave.cli.eval import _failure_reasons
from toolweave.domains.documents import documents_domain
from toolweave.evaluation import CaseResult, GoldenCase
from toolweave.llm.next_message import next_message_kind
from toolweave.llm.offline import OfflineAssistant
from toolweave.state.ledger import LedgerKind
from toolweave.tools.search import SqliteDocumentStore

BRANCHES = ["Központi", "Folyóparti"]
WHICH_BRANCH = "Melyik fiók?"
FEE = "Az éves tagság díja 20 euró, diákoknak 10 euró."
DOCUMENTS = {
    "dijak": FEE,
    "szabalyok": "A kikölcsönzött könyveket három héten belül kell visszahozni.",
}


class BranchRequest(BaseModel):
    branch: str | None = Field(default=None, description="A fiók, amelyről kérdez.")


class BranchHours(ClarifiableTool[BranchRequest]):
    """Opening hours of a branch; asks which branch when none is named."""

    name = "fiok_nyitvatartas"
    domain = "varosikonyvtar"
    request_model = BranchRequest
    executable_instruction = (
        "fiok_nyitvatartas: igaz, ha a felhasználó egy fiók nyitvatartását kérdezi, "
        "akkor is, ha nem nevez meg fiókot (az eszköz ekkor megkérdezi, melyiket)."
    )
    description = "A könyvtár fiókjainak nyitvatartása (Központi, Folyóparti)."
    routing_examples = ("Mikor van nyitva a Központi fiók szombaton?",)

    def __init__(self) -> None:
        self.replies: list[str] = []

    def execute(self, request: BranchRequest, ctx: ToolCallContext) -> ToolResult | None:
        branch = next((b for b in BRANCHES if b in ctx.text), None)
        if branch is None:
            return ToolResult.clarification(self.name, WHICH_BRANCH, BRANCHES)
        return self.hours(branch)

    def execute_with_clarification(
        self, request: BranchRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        self.replies.append(reply)
        branch = next((b for b in BRANCHES if b.casefold() == reply.strip().casefold()), None)
        return None if branch is None else self.hours(branch)

    def hours(self, branch: str) -> ToolResult:
        text = f"A {branch} fiók nyitvatartása: hétfőtől szombatig 9:00-18:00."
        doc = UniqueTextDocument(document_id=f"nyitva/{branch}", text=text)
        return ToolResult.as_context(self.name, [doc])


def library() -> tuple[Any, BranchHours]:
    store = SqliteDocumentStore()
    for document_id, text in DOCUMENTS.items():
        store.add_document(document_id, text, name=document_id)
    hours = BranchHours()
    domain, tools = documents_domain("varosikonyvtar", store, tools=[hours], default_language="hu")
    graph = build_graph(domain, tools, assistant=OfflineAssistant(), checkpointer=InMemorySaver())
    return graph, hours


def ask(graph: Any, message: str, thread: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    out: dict[str, Any] = graph.invoke({"messages": [HumanMessage(message)]}, config)
    return out


ASKED_WITH_ENDINGS = [
    "Hánytól hányig tart a nyitvatartás?",  # from what (hour) to what
    "Hánykor nyit a fiók?",  # at what (hour)
    "Meddig tart ma a nyitvatartás?",  # until when
]


@pytest.mark.parametrize("question", ASKED_WITH_ENDINGS)
def test_Q1_a_hungarian_question_word_with_a_case_ending_is_no_evidence_so_the_question_is_asked(
    question: str,
) -> None:
    graph, _ = library()
    out = ask(graph, question, "hours")
    (interrupt,) = out["__interrupt__"]
    assert interrupt.value["question"] == WHICH_BRANCH


def test_Q2_a_new_question_while_a_question_waits_is_answered_as_a_new_turn_in_hungarian() -> None:
    graph, hours = library()
    asked = ask(graph, "Hánytól hányig tart a nyitvatartás?", "new")
    assert asked["__interrupt__"][0].value["question"] == WHICH_BRANCH
    question = "Mennyibe kerül az éves tagság?"
    out = ask(graph, question, "new")
    assert hours.replies == []  # the tool that asked never got the new question as its reply
    assert "20 euró" in out["answer"]
    closed = [e for e in out["ledger"] if e.kind is LedgerKind.CLARIFICATION]
    assert [(e.tool, e.verdict) for e in closed][-1] == ("fiok_nyitvatartas", "closed")
    assert question in closed[-1].reason
    assert graph.get_state({"configurable": {"thread_id": "new"}}).values.get("pause") is None


@pytest.mark.parametrize(
    "message",
    [
        "Mennyibe kerül az éves tagság",  # no question mark: its first word asks
        "Hánykor nyit holnap az uszoda",
        "Melyikben lehet kávét inni a közelben",
        "Kitől kérhetek olvasójegyet a földszinten",
    ],
)
def test_Q2_a_message_opening_with_an_inflected_question_word_is_a_new_question(
    message: str,
) -> None:
    assert next_message_kind(message, WHICH_BRANCH, BRANCHES) == "new_question"


@pytest.mark.parametrize(
    ("read", "said"),
    [
        (None, "read as nothing (the history left no question open)"),
        ("reply", "read as reply"),
    ],
)
def test_Q2_eval_failures_name_a_next_message_case_read_otherwise(
    read: str | None, said: str
) -> None:
    case = GoldenCase(
        id="n1",
        question="Mennyibe kerül az éves tagság?",
        expected_tools=frozenset(),
        history=("Hánytól hányig tart a nyitvatartás?",),
        expected_next="new_question",
    )
    missed = CaseResult(case=case, next_kind=read)
    assert _failure_reasons(missed) == [f"next message expected new_question, {said}"]
    assert _failure_reasons(CaseResult(case=case, next_kind="new_question")) == []
