"""S6: after subtasks, the answer addresses each part, from that part's own results.

A neutral test domain, a public library: an opening-hours document and a
membership-fees document, one tool for each (forced only, no routing question), a
coordinator that splits "When is the library open on Sunday and how much is the
annual membership?" into two subtasks forcing one tool each, and a catalogue search
that a question routed without a coordinator gets its context from.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage

from toolweave import (
    AgentCoordinator,
    ChatbotTool,
    Domain,
    EmptyRequest,
    OfflineAssistant,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    build_graph,
)
from toolweave.graph.answer import user_parts
from toolweave.llm import prompts
from toolweave.llm.offline_reading import question_parts
from toolweave.llm.port import AnswerPart, AnswerRequest
from toolweave.testing import FunctionAssistant

QUESTION = "When is the library open on Sunday and how much is the annual membership?"
SUNDAY_PART = "When is the library open on Sunday?"
FEE_PART = "How much is the annual membership?"
SUNDAY_FACT = "12:00 to 17:00"
FEE_FACT = "30 euros"


def _page(doc_id: str, name: str, sentences: list[str]) -> list[UniqueTextDocument]:
    return [
        UniqueTextDocument(
            document_id=doc_id,
            document_name=name,
            page=1,
            sentence_number=number,
            text=text,
            sentence_score=1.0,
        )
        for number, text in enumerate(sentences, start=1)
    ]


HOURS = _page(
    "opening-hours",
    "Opening hours",
    [
        "The library is open Monday to Friday from 9:00 to 20:00.",
        "On Saturday the library is open from 10:00 to 16:00.",
        f"On Sunday the library is open from {SUNDAY_FACT}.",
    ],
)
FEES = _page(
    "membership-fees",
    "Membership fees",
    [
        f"The annual membership costs {FEE_FACT}.",
        "Students pay 15 euros for the annual membership.",
        "A replacement card costs 3 euros.",
    ],
)


class OpeningHours(ChatbotTool[EmptyRequest]):
    """Returns the opening-hours page as context (R2)."""

    name: ClassVar[str] = "opening_hours"
    request_model = EmptyRequest

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.as_context(self.name, HOURS)


class MembershipFees(ChatbotTool[EmptyRequest]):
    """Returns the fees page as context, or as guaranteed context (R5)."""

    name: ClassVar[str] = "membership_fees"
    request_model = EmptyRequest

    def __init__(self, *, guaranteed: bool = False) -> None:
        self.guaranteed = guaranteed

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        if self.guaranteed:
            return ToolResult.as_guaranteed_context(self.name, FEES)
        return ToolResult.as_context(self.name, FEES)


class VisitPlanner(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Splits a question about opening hours and the membership into two forced subtasks."""

    name: ClassVar[str] = "visit_planner"
    request_model = EmptyRequest

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        if task.task_no != "1" or "membership" not in task.task_prompt:
            return task
        task.sub_tasks = [
            TaskInfo(task_no="", task_prompt=SUNDAY_PART, required_tool_names=["opening_hours"]),
            TaskInfo(task_no="", task_prompt=FEE_PART, required_tool_names=["membership_fees"]),
        ]
        return task


def _split_graph(assistant: Any, *, guaranteed: bool = False) -> Any:
    tools = [VisitPlanner(), OpeningHours(), MembershipFees(guaranteed=guaranteed)]
    return build_graph("library", tools, assistant=assistant)


def _ask(graph: Any, question: str = QUESTION) -> dict[str, Any]:
    config = {"configurable": {"thread_id": "s6"}}
    return graph.invoke({"messages": [HumanMessage(question)]}, config)  # type: ignore[no-any-return]


@pytest.mark.parametrize("guaranteed", [False, True], ids=["context", "guaranteed"])
def test_S6_offline_answer_gives_both_parts_facts_after_a_split(guaranteed: bool) -> None:
    out = _ask(_split_graph(OfflineAssistant(), guaranteed=guaranteed))
    assert [t.task_prompt for t in out["task"].sub_tasks] == [SUNDAY_PART, FEE_PART]
    answer = out["answer"]
    assert SUNDAY_FACT in answer, answer
    assert FEE_FACT in answer, answer
    assert prompts.no_information_answer("en") not in answer
    assert "Saturday" not in answer  # each part is answered, not the whole page quoted
    assert {s.document_id for s in out["sources"]} == {"opening-hours", "membership-fees"}


def test_S6_the_answer_request_carries_each_part_with_its_own_results() -> None:
    seen: list[AnswerRequest] = []

    def answer(request: AnswerRequest) -> str:
        seen.append(request)
        return "noted"

    _ask(_split_graph(FunctionAssistant(answer=answer), guaranteed=True))
    (request,) = seen
    sunday, fee = request.parts
    assert sunday.prompt == SUNDAY_PART
    assert list(sunday.documents) == HOURS
    assert list(sunday.guaranteed) == []
    assert fee.prompt == FEE_PART
    assert list(fee.documents) == []
    assert [FEE_FACT in text for text in fee.guaranteed] == [True]


def test_S6_the_llm_prompt_lists_both_parts_and_the_answer_keeps_both_facts() -> None:
    from toolweave.llm.chat_model import ChatModelAssistant
    from toolweave.testing import ScriptedChatModel

    reply = f"On Sunday the library is open from {SUNDAY_FACT} [3]. It costs {FEE_FACT} [4]."
    model = ScriptedChatModel(script=[reply])
    out = _ask(_split_graph(ChatModelAssistant(model, initial_backoff=0)))
    (call,) = model.calls  # the first message is read by rules, the tools are forced
    system = call.system
    assert "The question has 2 parts" in system
    assert f"1. {SUNDAY_PART} (passages [1], [2], [3])" in system
    assert f"2. {FEE_PART} (passages [4], [5], [6])" in system
    assert out["answer"] == reply.replace(" [3]", "").replace(" [4]", "")  # markers: data (R9)
    assert {s.document_id for s in out["sources"]} == {"opening-hours", "membership-fees"}


def test_S6_the_llm_prompt_names_a_parts_guaranteed_context() -> None:
    from toolweave.llm.chat_model import ChatModelAssistant
    from toolweave.testing import ScriptedChatModel

    model = ScriptedChatModel(script=[f"{SUNDAY_FACT}; {FEE_FACT}."])
    _ask(_split_graph(ChatModelAssistant(model, initial_backoff=0), guaranteed=True))
    system = model.calls[0].system
    assert f"2. {FEE_PART} (guaranteed context: The annual membership costs" in system


class CatalogueSearch(ChatbotTool[EmptyRequest]):
    """The domain's default retrieval: both pages, whatever the question."""

    name: ClassVar[str] = "catalogue_search"
    request_model = EmptyRequest

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.as_context(self.name, [*HOURS, *FEES])


def _routed_graph() -> Any:
    domain = Domain(name="library", default_retrieval_tool="catalogue_search")
    return build_graph(domain, [CatalogueSearch()], assistant=OfflineAssistant())


def test_S6_a_routed_two_part_question_gets_both_facts_offline() -> None:
    out = _ask(_routed_graph())
    assert out["task"].sub_tasks == []  # no coordinator: one task, one context
    assert SUNDAY_FACT in out["answer"], out["answer"]
    assert FEE_FACT in out["answer"], out["answer"]
    assert {s.document_id for s in out["sources"]} == {"opening-hours", "membership-fees"}


class RoutedHours(OpeningHours):
    executable_instruction: ClassVar[str | None] = (
        "opening_hours: true when the question asks when the library is open"
    )


class RoutedFees(MembershipFees):
    executable_instruction: ClassVar[str | None] = (
        "membership_fees: true when the question asks how much the membership or a card costs"
    )


def test_S6_a_two_part_question_routed_to_two_tools_gets_both_facts_offline() -> None:
    graph = build_graph("library", [RoutedHours(), RoutedFees()], assistant=OfflineAssistant())
    out = _ask(graph)
    assert out["activated"] == ["1:opening_hours", "1:membership_fees"]
    assert SUNDAY_FACT in out["answer"], out["answer"]
    assert FEE_FACT in out["answer"], out["answer"]


def test_S6_a_routed_one_part_question_is_answered_as_before() -> None:
    out = _ask(_routed_graph(), SUNDAY_PART)
    assert SUNDAY_FACT in out["answer"]
    assert FEE_FACT not in out["answer"]


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (QUESTION, ["When is the library open on Sunday", FEE_PART.lower()]),
        (
            "Mikor van nyitva a könyvtár vasárnap, és mennyibe kerül az éves tagság?",
            ["Mikor van nyitva a könyvtár vasárnap", "mennyibe kerül az éves tagság?"],
        ),
        (
            "When is the gym open? How much is a day pass?",
            ["When is the gym open?", "How much is a day pass?"],
        ),
        ("Where can I park and do I have to pay?", ["Where can I park", "do I have to pay?"]),
        # one question: "and" between two nouns, a piece naming nothing, a pronoun
        ("What do cats and dogs eat?", None),
        ("When is it open and how much?", None),
        ("Who is the head of the archive, and what is her phone number?", None),
    ],
)
def test_S6_question_parts_are_questions_joined_by_a_conjunction(
    question: str, parts: list[str] | None
) -> None:
    assert question_parts(question) == (parts or [question])


def test_S6_no_information_only_when_no_part_is_covered() -> None:
    from toolweave.llm.answer_rules import uncovered_subject

    rooms = _page("rooms", "Rooms", ["The reading room is on the first floor."])
    context = [*HOURS, *FEES, *rooms]
    # "Is there a cafe…?" names nothing the context has: alone it is not covered
    alone = AnswerRequest("Is there a cafe in the library?", "en", "", context, ())
    assert uncovered_subject(alone) == "cafe"
    # as one part of two, the other part is covered: the sources speak to the question
    both = "Is there a cafe in the library, and when is the library open on Sunday?"
    assert uncovered_subject(AnswerRequest(both, "en", "", context, ())) is None
    parts = [AnswerPart("Is there a cafe in the library?", rooms), AnswerPart(SUNDAY_PART, HOURS)]
    split = AnswerRequest(QUESTION, "en", "", context, (), parts=parts)
    assert uncovered_subject(split) is None


def test_S6_deep_search_subtasks_are_not_parts() -> None:
    from toolweave.coordinators.deep_search import DeepSearchCoordinator
    from toolweave.state.task import TaskNode
    from toolweave.tools.registry import ToolRegistry

    def node(task_no: str, owner: str | None) -> TaskNode:
        task = TaskInfo(task_no=task_no, task_prompt=task_no, owner_coordinator_name=owner)
        return TaskNode(task=task, parent=None if task_no == "1" else "1")

    root = node("1", None).model_copy(update={"children": ["1.1", "1.2", "1.3"]})
    tasks = {
        "1": root,
        "1.1": node("1.1", "visit_planner"),
        "1.2": node("1.2", "deep_search"),  # the deep search's missing piece (D3)
        "1.3": node("1.3", "deep_search"),
    }
    registry = ToolRegistry([VisitPlanner(), DeepSearchCoordinator()])
    state: Any = {"tasks": tasks, "deep_fallback_owner": None}
    assert [n.task_no for n in user_parts(state, registry)] == ["1.1"]
    state["deep_fallback_owner"] = "visit_planner"  # whoever the run's deep search is
    assert user_parts(state, registry) == []


def test_S6_parts_prompt_template_has_what_its_filler_passes() -> None:
    text = prompts.answer_system(
        language="English", context="c", guaranteed="", parts=["a?", "b?"], exchanges=""
    )
    assert "The question has 2 parts" in text
    assert "1. a?\n2. b?" in text
    one = prompts.answer_system(language="English", context="c", guaranteed="", parts=["a?"])
    assert "parts" not in one  # one subtask is no split


def test_S6_async_run_answers_both_parts() -> None:
    import asyncio

    graph = _split_graph(OfflineAssistant())
    config = {"configurable": {"thread_id": "s6-async"}}
    out = asyncio.run(graph.ainvoke({"messages": [HumanMessage(QUESTION)]}, config))
    assert SUNDAY_FACT in out["answer"]
    assert FEE_FACT in out["answer"]


def test_S6_parts_template_placeholders_are_what_its_filler_passes() -> None:
    import string

    names = {n for _, n, _, _ in string.Formatter().parse(prompts.ANSWER_PARTS_PROMPT) if n}
    assert names == {"count", "parts"}
    filled = prompts.answer_parts_system(["a?", "b?"])
    assert "{" not in filled
    assert "}" not in filled
