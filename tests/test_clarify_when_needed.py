"""Q1 with A9: a tool asks the user back only when the question is about what it is for.

A neutral test domain, a city library: its documents in the in-memory store
(``library`` is the store's stop word, a word of nearly every question there),
searched by the default retrieval (A5), and ``branch_hours``, a lookup tool that
asks "Which branch?" whenever its branch is missing, as a new user writes it. A
question that shares a word with it but is about something else (a date that
concerns every branch, another organisation, a fee) gets the documents' answer,
not a question about something the person did not ask; a question about opening
hours that names no branch is still asked. The offline model, and a scripted
model that says yes to the tool whatever the question.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel, Field

from toolweave import ChatbotTool, ToolCallContext, ToolResult, UniqueTextDocument, build_graph
from toolweave.domains.documents import documents_domain
from toolweave.graph.candidates import ASKING_IN_DOUBT
from toolweave.llm.offline import OfflineAssistant
from toolweave.state.ledger import LedgerKind
from toolweave.state.results import ResultMode
from toolweave.state.task import TaskInfo
from toolweave.testing import FunctionAssistant
from toolweave.tools.consumers import ClarifiableTool
from toolweave.tools.search import SqliteDocumentStore

BRANCHES = ["Central", "Riverside", "Hillview"]
HOURS = {
    "Central": "Central branch: open Monday to Saturday 9:00-20:00.",
    "Riverside": "Riverside branch: open Tuesday to Saturday 10:00-18:00.",
    "Hillview": "Hillview branch: open Monday to Friday 12:00-19:00.",
}
DOCUMENTS = {
    "holidays": "The library is closed on New Year's Day at every branch.",
    "fees": "The late fee is 20 cents per day for each borrowed item.",
    "archive": "The city archive in the same building is open to the public on Wednesdays.",
}
WHICH_BRANCH = "Which branch?"


class BranchRequest(BaseModel):
    branch: str | None = Field(
        default=None,
        description="The library branch the user asks about.",
        json_schema_extra={"known_values": BRANCHES},
    )


class BranchHours(ClarifiableTool[BranchRequest]):
    """Asks which branch whenever none is named: the tool side of Q1 left out on purpose."""

    name = "branch_hours"
    domain = "citylib"
    priority = 50
    request_model = BranchRequest
    executable_instruction = (
        "branch_hours: true when the user asks when a library branch is open: its opening "
        "hours on a day, also when no branch is named (the tool then asks which one)."
    )
    description = "Opening hours of the library's branches (Central, Riverside, Hillview)."
    routing_examples = (
        "When does the Riverside branch open on Saturday?",
        "What are the opening hours of the Central branch?",
    )

    def execute(self, request: BranchRequest, ctx: ToolCallContext) -> ToolResult | None:
        branch = request.branch or next((b for b in BRANCHES if b in ctx.text), None)
        if branch is None:
            return ToolResult.clarification(self.name, WHICH_BRANCH, BRANCHES)
        return self.hours(branch)

    def execute_with_clarification(
        self, request: BranchRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        branch = next((b for b in BRANCHES if b.casefold() == reply.strip().casefold()), None)
        return None if branch is None else self.hours(branch)

    def hours(self, branch: str) -> ToolResult:
        doc = UniqueTextDocument(document_id=f"hours/{branch}", text=HOURS[branch])
        return ToolResult.as_context(self.name, [doc])


class RequiredBranch(BaseModel):
    branch: str | None = Field(default=None, description="The library branch.", examples=BRANCHES)


class BranchPhone(ChatbotTool[RequiredBranch]):
    """A plain tool with a required input the graph asks for (T13, Q1)."""

    name = "branch_phone"
    domain = "citylib"
    priority = 50
    request_model = RequiredBranch
    required_inputs = ("branch",)
    ask_for_missing_inputs = True
    executable_instruction = "branch_phone: true when the user asks for a branch's phone number."
    description = "Phone numbers of the library's branches."

    def execute(self, request: RequiredBranch, ctx: ToolCallContext) -> ToolResult | None:
        doc = UniqueTextDocument(document_id="phone", text=f"{request.branch}: 555-0100.")
        return ToolResult.as_context(self.name, [doc])


def graph(assistant: Any, extra: Sequence[ChatbotTool[Any]] = (), **options: Any) -> Any:
    store = SqliteDocumentStore(stopwords=("library",))
    for document_id, text in DOCUMENTS.items():
        store.add_document(document_id, text, name=document_id)
    domain, tools = documents_domain("citylib", store)
    return build_graph(domain, [*tools, BranchHours(), *extra], assistant=assistant, **options)


def says_yes(*names: str) -> FunctionAssistant:
    """A model that says yes to ``names`` for every question (and extracts nothing)."""
    return FunctionAssistant(route=lambda text, tools: [t.name for t in tools if t.name in names])


ASSISTANTS = [
    pytest.param(OfflineAssistant, id="offline"),
    pytest.param(lambda: says_yes("branch_hours"), id="model-says-yes"),
]
NOT_ABOUT_IT = [
    # a date that concerns every branch
    ("Is the library closed on New Year's Day?", "closed on New Year's Day at every branch"),
    # another organisation
    ("Is the city archive open to the public?", "city archive"),
    # a fee
    ("How much is the late fee?", "20 cents per day"),
]


def verdicts(out: dict[str, Any], kind: LedgerKind) -> list[str]:
    return [e.verdict for e in out["ledger"] if e.kind == kind]


@pytest.mark.parametrize("make", ASSISTANTS)
@pytest.mark.parametrize(("question", "fact"), NOT_ABOUT_IT)
def test_Q1_A9_a_question_about_something_else_gets_the_documents_answer_not_which_branch(
    make: Any, question: str, fact: str
) -> None:
    out = graph(make()).invoke({"messages": [HumanMessage(question)]})
    assert "__interrupt__" not in out, question
    assert fact in out["answer"], question
    assert WHICH_BRANCH not in out["answer"]
    assert "1:citylib_search" in out["activated"]  # the default retrieval ran (A5)


def test_Q1_A9_the_ledger_says_the_question_was_not_asked_and_why() -> None:
    out = graph(says_yes("branch_hours")).invoke(
        {"messages": [HumanMessage("Is the library closed on New Year's Day?")]}
    )
    (doubt,) = [e for e in out["ledger"] if e.verdict == ASKING_IN_DOUBT]
    assert set(doubt.details) == {"branch_hours"}
    assert "not asked" in verdicts(out, LedgerKind.CLARIFICATION)
    # it ran after the retrieval (A9: in doubt, the context path first) and gave nothing
    assert out["activated"] == ["1:citylib_search"]


@pytest.mark.parametrize("make", ASSISTANTS)
def test_Q1_a_question_about_opening_hours_without_a_branch_is_still_asked(make: Any) -> None:
    app = graph(make(), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "hours"}}
    out = app.invoke({"messages": [HumanMessage("When do you open?")]}, config)
    (interrupt,) = out["__interrupt__"]
    assert interrupt.value["question"] == WHICH_BRANCH
    assert ASKING_IN_DOUBT not in verdicts(out, LedgerKind.ROUTING)
    done = app.invoke(Command(resume="Riverside"), config)
    assert HOURS["Riverside"] in done["answer"]


def test_Q1_A9_the_async_run_does_not_ask_either() -> None:
    async def run() -> dict[str, Any]:
        app = graph(says_yes("branch_hours"))
        message = HumanMessage("Is the library closed on New Year's Day?")
        result: dict[str, Any] = await app.ainvoke({"messages": [message]})
        return result

    out = asyncio.run(run())
    assert "__interrupt__" not in out
    assert "closed on New Year's Day" in out["answer"]


def test_Q1_A9_an_input_the_graph_would_ask_for_is_not_asked_on_doubt_either() -> None:
    app = graph(says_yes("branch_phone"), extra=[BranchPhone()])
    out = app.invoke({"messages": [HumanMessage("How much is the late fee?")]})
    assert "__interrupt__" not in out
    assert "20 cents per day" in out["answer"]
    assert "not asked" in verdicts(out, LedgerKind.CLARIFICATION)
    asked = app.invoke({"messages": [HumanMessage("What is the branch phone number?")]})
    assert asked["__interrupt__"][0].value["question"] == "Which branch?"


def test_Q1_a_named_branch_in_doubt_still_gives_its_hours() -> None:
    # in doubt, the tool still runs (after the retrieval): only its question is not asked
    out = graph(says_yes("branch_hours")).invoke(
        {"messages": [HumanMessage("Is the Riverside library closed on New Year's Day?")]}
    )
    assert "__interrupt__" not in out
    assert "1:branch_hours" in out["activated"]
    assert HOURS["Riverside"] in out["answer"]


def test_Q1_A9_hospital_department_tool_asks_only_about_a_department() -> None:
    from toolweave_korhaz.plugin import load

    domain, tools = load()
    app = build_graph(domain, tools, assistant=says_yes("department_info"))
    for question in ("Is the hospital closed on Christmas Day?", "How much does parking cost?"):
        out = app.invoke({"messages": [HumanMessage(question)]})
        assert "__interrupt__" not in out, question
    asked = app.invoke({"messages": [HumanMessage("When are the consultation hours?")]})
    assert asked["__interrupt__"][0].value["question"].startswith("Which department?")


def documented_tool() -> ChatbotTool[Any]:
    """The ``BranchHours`` of the clarification page's pattern, run as the page writes it."""
    page = Path(__file__).parent.parent / "docs" / "concepts" / "clarification.md"
    (code,) = [
        block
        for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
        if "class BranchHours" in block
    ]
    namespace: dict[str, Any] = {}
    exec(compile(code, str(page), "exec"), namespace)  # the docs' own example
    tool: ChatbotTool[Any] = namespace["BranchHours"]()
    return tool


def test_Q1_R1_the_documented_tool_side_pattern_asks_only_about_its_subject() -> None:
    tool = documented_tool()

    def run(question: str) -> ToolResult | None:
        ctx = ToolCallContext(task=TaskInfo(task_no="1", task_prompt=question), text=question)
        return tool.execute(tool.request_model(), ctx)

    assert run("How much is the late fee?") is None  # not about its subject: not mine (R1)
    asked = run("When does the branch open?")
    assert asked is not None
    assert asked.mode is ResultMode.CLARIFICATION
    assert asked.text == WHICH_BRANCH
    named = run("When does the Riverside branch open?")
    assert named is not None
    assert named.mode is ResultMode.CONTEXT
    # and in a run: a question it asks about is asked, a question it is not for is answered
    store = SqliteDocumentStore()
    store.add_document("fees", DOCUMENTS["fees"], name="fees")
    domain, search = documents_domain("citylib", store)
    app = build_graph(domain, [*search, tool], assistant=says_yes("branch_hours"))
    out = app.invoke({"messages": [HumanMessage("When does the branch open?")]})
    assert out["__interrupt__"][0].value["question"] == WHICH_BRANCH
    out = app.invoke({"messages": [HumanMessage("How much is the late fee?")]})
    assert "20 cents per day" in out["answer"]


def test_Q1_A8_a_finished_answer_that_may_ask_is_weighed_by_A8_alone() -> None:
    # the hospital's callback tool asks which department and gives a finished answer; it
    # acts, so its answer never joins the context: the asking guard leaves it to A8
    from toolweave_korhaz.plugin import load

    domain, tools = load()
    app = build_graph(domain, tools, assistant=OfflineAssistant())
    out = app.invoke(
        {"messages": [HumanMessage("Visszahívást szeretnék kérni a belgyógyászattól.")]},
        context={"user_data": {"phone": "+36 30 123 4567"}},
    )
    assert ASKING_IN_DOUBT not in verdicts(out, LedgerKind.ROUTING)
    ended = [e.tool for e in out["ledger"] if e.kind == LedgerKind.ANSWER]
    assert ended == ["callback_request"]
    assert "terminal" in verdicts(out, LedgerKind.ANSWER)
