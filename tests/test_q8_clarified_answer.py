"""Q8: after a clarification reply, the answer sees the question asked and the reply as
part of the request, and never repeats the question that was just answered.

A neutral test domain, a public library with two branches: the catalogue search
(the domain's default retrieval) returns every branch's page with its opening
hours; ``branch_hours`` asks which branch is meant, then returns that branch's page.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from toolweave import (
    ChatbotTool,
    ClarifiableTool,
    Domain,
    EmptyRequest,
    OfflineAssistant,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    build_graph,
)
from toolweave.graph.answer import clarification_turn
from toolweave.llm import prompts
from toolweave.llm.answer_rules import repeats_clarification
from toolweave.llm.port import AnswerRequest, ClarificationExchange
from toolweave.testing import FunctionAssistant

ASKED = "Which branch do you mean?"
QUESTION = "When is the branch open?"
CENTRAL = "The Central branch is open from 9:00 to 18:00."
RIVERSIDE = "The Riverside branch is open from 11:00 to 19:00."
ASKER = "1:branch_hours"


def _page(branch: str, text: str) -> UniqueTextDocument:
    return UniqueTextDocument(
        document_id=f"{branch.casefold()}-branch",
        document_name=f"{branch} branch",
        page=1,
        sentence_number=1,
        text=text,
        sentence_score=1.0,
    )


BRANCHES = [_page("Central", CENTRAL), _page("Riverside", RIVERSIDE)]


class BranchHours(ClarifiableTool[EmptyRequest]):
    """Asks which branch, then returns that branch's page."""

    name: ClassVar[str] = "branch_hours"
    executable_instruction: ClassVar[str | None] = (
        "branch_hours: true when the question asks when a library branch is open"
    )
    request_model = EmptyRequest

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.clarification(self.name, ASKED, ["Central", "Riverside"])

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        chosen = [d for d in BRANCHES if reply.casefold() in d.text.casefold()]
        return ToolResult.as_context(self.name, chosen)


class CatalogueSearch(ChatbotTool[EmptyRequest]):
    """The domain's default retrieval: every branch's page."""

    name: ClassVar[str] = "catalogue_search"
    request_model = EmptyRequest

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.as_context(self.name, BRANCHES)


def _graph(assistant: Any) -> Any:
    domain = Domain(name="library", default_retrieval_tool="catalogue_search")
    tools = [BranchHours(), CatalogueSearch()]
    return build_graph(domain, tools, assistant=assistant, checkpointer=InMemorySaver())


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _clarified(graph: Any, path: str, thread: str = "q8") -> dict[str, Any]:
    """Ask :data:`QUESTION`, get :data:`ASKED` back, reply "Central" by ``path``."""
    out = graph.invoke({"messages": [HumanMessage(QUESTION)]}, _config(thread))
    (pending,) = out["__interrupt__"]
    assert pending.value["question"] == ASKED
    if path == "command":
        return graph.invoke(Command(resume="Central"), _config(thread))  # type: ignore[no-any-return]
    return graph.invoke({"messages": [HumanMessage("Central")]}, _config(thread))  # type: ignore[no-any-return]


PATHS = ["command", "next_message"]


def _when_open(text: str, tools: Any) -> list[str]:
    return ["branch_hours"] if "open" in text else []


@pytest.mark.parametrize("path", PATHS)
def test_Q8_offline_answer_reads_the_context_with_the_reply(path: str) -> None:
    """The reply is part of the question: the Central branch's hours, not every branch's."""
    out = _clarified(_graph(OfflineAssistant()), path)
    assert out["answer"] == CENTRAL
    assert ASKED not in out["answer"]
    assert {d.text for d in out["documents"]} == {CENTRAL, RIVERSIDE}  # both were there


@pytest.mark.parametrize("path", PATHS)
def test_Q8_the_request_carries_the_exchange_and_the_history_does_not_end_on_it(
    path: str,
) -> None:
    seen: list[AnswerRequest] = []

    def answer(request: AnswerRequest) -> str:
        seen.append(request)
        return "The Central branch opens at 9:00."

    route = FunctionAssistant(route=_when_open, answer=answer)
    graph = _graph(route)
    graph.invoke({"messages": [HumanMessage("Hello, is this the library?")]}, _config("h"))
    out = _clarified(graph, path, thread="h")
    (_, request) = seen
    assert list(request.clarifications) == [ClarificationExchange(ASKED, "Central", ASKER)]
    assert request.asked == f"{QUESTION} Central"
    assert [m.text for m in request.history][-2:] == [
        "Hello, is this the library?",
        "The Central branch opens at 9:00.",  # the earlier turn's answer
    ]
    assert not any(ASKED in m.text for m in request.history)
    assert out["answer"] == "The Central branch opens at 9:00."


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    "repeated",
    [ASKED, f"{ASKED} Central or Riverside?", "Could you tell me which branch you mean?"],
)
def test_Q8_an_answer_that_asks_again_is_replaced_by_the_offline_reading(
    path: str, repeated: str
) -> None:
    assistant = FunctionAssistant(
        route=lambda text, tools: ["branch_hours"], answer=lambda r: repeated
    )
    out = _clarified(_graph(assistant), path)
    assert out["answer"] == CENTRAL
    (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
    assert "asked again the clarification question" in entry.reason
    assert "Q8" in entry.reason
    assert [s.document_id for s in out["sources"]] == ["central-branch"]


@pytest.mark.parametrize("path", PATHS)
def test_Q8_llm_prompt_states_the_exchange_and_a_repeated_question_is_replaced(path: str) -> None:
    """A chat model that answers with the clarification question, as the 1.5B model did."""
    from toolweave.llm.chat_model import ChatModelAssistant
    from toolweave.testing import ScriptedChatModel

    model = ScriptedChatModel(script=[ASKED])
    chat = ChatModelAssistant(model, initial_backoff=0)
    routed = FunctionAssistant(
        route=lambda text, tools: ["branch_hours"], answer=lambda r: chat.answer(r).text
    )
    out = _clarified(_graph(routed), path)
    (call,) = model.calls
    assert f"- Asked: {ASKED} Reply: Central" in call.system
    assert "do not ask these\nquestions again" in call.system
    sent = call.messages[1:]
    assert [m.type for m in sent] == ["human"]  # no earlier turn; never the asked question
    assert sent[-1].text == f"{QUESTION} Central"
    assert out["answer"] == CENTRAL  # the model's repeat was replaced


def test_Q8_an_answer_is_kept_when_it_does_not_ask_again() -> None:
    answer = "The Central branch is open from 9:00. Do you need anything else?"
    assistant = FunctionAssistant(
        route=lambda text, tools: ["branch_hours"], answer=lambda r: answer
    )
    out = _clarified(_graph(assistant), "command")
    assert out["answer"] == answer


def test_Q8_repeats_clarification_reads_questions_not_shared_words() -> None:
    exchange = ClarificationExchange("Which department? Type its name or its number.", "2")
    request = AnswerRequest(
        "When are consultation hours?", "en", "", [], (), clarifications=[exchange]
    )
    assert repeats_clarification("Which department? Type its name or its number.", request)
    assert repeats_clarification("Which department do you mean?", request)
    assert repeats_clarification("which department", request)
    assert not repeats_clarification("Cardiology: Monday-Thursday 9:00-13:00.", request)
    assert not repeats_clarification("Cardiology is the department on floor 2.", request)
    no_exchange = AnswerRequest("When are consultation hours?", "en", "", [], ())
    assert not repeats_clarification("Which department?", no_exchange)


def test_Q8_the_turn_is_split_from_the_history_over_several_rounds() -> None:
    messages = [
        HumanMessage("Earlier question"),
        AIMessage("Earlier answer"),
        HumanMessage(QUESTION),
        AIMessage(ASKED),
        HumanMessage("the big one"),
        AIMessage("Which one, again?"),
        HumanMessage("Central"),
    ]
    earlier, exchanges = clarification_turn(messages, rounds=2)
    assert [m.text for m in earlier] == ["Earlier question", "Earlier answer"]
    assert exchanges == [
        ClarificationExchange(ASKED, "the big one"),
        ClarificationExchange("Which one, again?", "Central"),
    ]
    earlier, exchanges = clarification_turn(messages[:3], rounds=0)
    assert [m.text for m in earlier] == ["Earlier question", "Earlier answer"]
    assert exchanges == []


def test_Q8_exchanges_prompt_section_only_after_a_clarification() -> None:
    plain = prompts.answer_system(language="English", context="c", guaranteed="")
    assert "replied" not in plain
    asked = prompts.answer_system(
        language="English", context="c", guaranteed="", exchanges="- Asked: a? Reply: b"
    )
    assert asked.endswith("- Asked: a? Reply: b")


def test_Q8_bench_counts_an_answer_that_repeats_the_asked_question() -> None:
    from bench.clarification_repeats import Case, Outcome

    case = Case("c", QUESTION, "Central")
    assert Outcome(case, [ASKED], f"Sorry. {ASKED}").repeats
    assert Outcome(case, [ASKED], "which BRANCH do you mean").repeats  # folded
    assert not Outcome(case, [ASKED], CENTRAL).repeats
    assert not Outcome(case, [], ASKED).repeats  # nothing was asked in the run


def test_Q8_bench_hospital_examples_offline_repeat_nothing(capsys: Any) -> None:
    from bench.clarification_repeats import main

    main(["--offline", "--cases", "examples"])
    row = capsys.readouterr().out.splitlines()[-1].split("|")
    run, paused, repeats = (int(cell) for cell in row[3:6])
    assert paused == run > 0
    assert repeats == 0


def test_Q8_async_resume_replaces_an_answer_that_asks_again() -> None:
    import asyncio

    async def repeat(request: AnswerRequest) -> str:
        return ASKED

    graph = _graph(FunctionAssistant(route=_when_open, answer=repeat))

    async def run() -> dict[str, Any]:
        config = _config("q8-async")
        await graph.ainvoke({"messages": [HumanMessage(QUESTION)]}, config)
        return await graph.ainvoke(Command(resume="Central"), config)  # type: ignore[no-any-return]

    assert asyncio.run(run())["answer"] == CENTRAL


@pytest.mark.parametrize("path", PATHS)
def test_Q8_a_reply_by_choice_number_reaches_the_answer_as_the_choice(path: str) -> None:
    seen: list[AnswerRequest] = []

    def answer(request: AnswerRequest) -> str:
        seen.append(request)
        return "noted"

    graph = _graph(FunctionAssistant(route=_when_open, answer=answer))
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, _config("n"))
    if path == "command":
        graph.invoke(Command(resume="2"), _config("n"))
    else:
        graph.invoke({"messages": [HumanMessage("2")]}, _config("n"))
    (request,) = seen
    assert list(request.clarifications) == [ClarificationExchange(ASKED, "Riverside", ASKER)]
    offline = OfflineAssistant().answer(request).text
    assert offline == RIVERSIDE


def test_Q8_exchanges_template_placeholders_are_what_its_filler_passes() -> None:
    import string

    template = prompts.ANSWER_CLARIFIED_PROMPT
    assert {n for _, n, _, _ in string.Formatter().parse(template) if n} == {"exchanges"}
