"""A9 for every tool that acts: a tool with ``side_effects`` never runs on a yes in doubt.

A finished answer in doubt has always been kept from acting; a tool that acts and
gives *context* ran on any yes of the routing ("How fast are tickets answered?" opened
a ticket, new-user notes gap 6). Now the evidence a finished answer's yes needs (its
``not_for`` questions, no better candidate left out, its declared intent or a word
only it has) is asked of every tool that acts, whatever its result, by the route
node's guards (``graph/candidates.py``) and by the offline rule itself. A neutral
helpdesk domain: ``open_ticket`` acts and gives context; ``ticket_progress`` and
``ask_floor`` do not act.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage
from support import OpenTicket, TicketProgress

from toolweave import (
    NO_CONTEXT,
    AiTool,
    AiToolBuilder,
    AiToolContext,
    AiToolDefinitionError,
    AiToolRegistry,
    AiToolScope,
    ChatbotTool,
    ClarifiableTool,
    EmptyRequest,
    LedgerKind,
    ToolCallContext,
    ToolResult,
    as_chatbot_tools,
    build_graph,
)
from toolweave.graph.candidates import ACTING_IN_DOUBT, ACTING_NOT_RUN
from toolweave.llm.offline_routing import RoutingRule, held_back, score_tools
from toolweave.testing import FunctionAssistant

HOW_FAST = "How fast are tickets answered?"
"""An information question that shares one word, a word another tool has too, with it."""
REQUESTS = (
    "Please open a ticket: the printer on floor 2 is jammed.",
    "My monitor is black, open a ticket",
    "Open a ticket for me",
)
"""Requests to act: a word only the acting tool has ("open") besides the shared one."""


class NoteTicket(OpenTicket):
    """The same tool, but it changes nothing outside the run (a draft it only shows)."""

    name = "open_ticket"
    side_effects: ClassVar[bool] = False


class OpenTicketNotFor(OpenTicket):
    """The acting tool, with the questions it is not for (the only other tool shares no word)."""

    routing_examples = ("Please open a ticket for me.",)
    not_for = ("How long does it take to answer a ticket?",)


class AskFloor(ClarifiableTool[EmptyRequest]):
    """Asks which floor (Q1)."""

    name = "ask_floor"
    domain = "desk"
    priority = 100
    executable_instruction = "ask_floor: true when the floor matters"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.clarification(self.name, "Which floor?", ["1", "2"])

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        return ToolResult.as_guaranteed_context(self.name, f"Floor {reply}.")


def _ask(tool: OpenTicket, question: str, *others: ChatbotTool[Any], routed: bool) -> Any:
    """Ask ``question``; ``routed``: a model that says yes to the ticket tool, else offline."""
    kwargs: dict[str, Any] = {}
    if routed:
        kwargs["assistant"] = FunctionAssistant(route=lambda text, tools: [tool.name])
    others = others or (TicketProgress(), AskFloor())
    graph = build_graph("desk", [tool, *others], **kwargs)
    return graph.invoke({"messages": [HumanMessage(question)]})


def _held(out: Any) -> list[Any]:
    return [e for e in out["ledger"] if e.verdict == ACTING_IN_DOUBT]


@pytest.mark.parametrize("routed", [True, False], ids=["model_says_yes", "offline"])
def test_A9_a_context_tool_that_acts_does_not_run_on_a_yes_in_doubt(routed: bool) -> None:
    """Its only word is one another tool has, and it does not explain the task: no ticket."""
    tool = OpenTicket()
    out = _ask(tool, HOW_FAST, routed=routed)
    assert tool.opened == []
    if routed:  # the model's yes is read and refused, with why, in one entry (L1)
        (entry,) = _held(out)
        assert entry.kind is LedgerKind.ROUTING
        assert entry.details == {"open_ticket": ACTING_NOT_RUN}
        assert "declared intent" in entry.reason
        assert "(A9)" in entry.reason


@pytest.mark.parametrize("routed", [True, False], ids=["model_says_yes", "offline"])
@pytest.mark.parametrize("question", REQUESTS)
def test_A9_a_context_tool_that_acts_runs_on_a_clear_request(question: str, routed: bool) -> None:
    """A word only it has ("open") is the clear margin a finished answer needs too: it acts."""
    tool = OpenTicket()
    out = _ask(tool, question, routed=routed)
    assert len(tool.opened) == 1
    assert _held(out) == []


def test_A9_the_same_yes_runs_a_context_tool_that_does_not_act() -> None:
    """The guard is for effects: the same doubtful yes still runs a tool that acts on nothing."""
    tool = NoteTicket()
    out = _ask(tool, HOW_FAST, routed=True)
    assert len(tool.opened) == 1
    assert _held(out) == []


def test_A9_not_for_questions_keep_a_context_tool_that_acts_from_running() -> None:
    """With no other tool sharing its word, its ``not_for`` questions speak against the yes."""
    tool = OpenTicketNotFor()
    out = _ask(tool, HOW_FAST, AskFloor(), routed=True)
    assert tool.opened == []
    (entry,) = _held(out)
    assert "what it is not for" in entry.reason
    asked = OpenTicketNotFor()
    _ask(asked, REQUESTS[0], AskFloor(), routed=True)
    assert len(asked.opened) == 1


class Other(ChatbotTool[EmptyRequest]):
    """A context tool of the desk, named by the test."""

    domain = "desk"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.as_guaranteed_context(self.name, f"{self.name} says hello.")


def _other(name: str) -> Other:
    cls = type(name, (Other,), {"name": name, "executable_instruction": f"{name}: true"})
    tool: Other = cls()
    return tool


def test_A9_a_context_tool_that_acts_does_not_run_when_most_candidates_are_routed() -> None:
    """Every candidate routed is no choice (A8): the others run, the tool that acts does not."""
    tool = OpenTicket()
    others = (_other("desk_hours"), _other("desk_map"))
    names = [tool.name, *(o.name for o in others)]
    graph = build_graph(
        "desk", [tool, *others], assistant=FunctionAssistant(route=lambda text, tools: names)
    )
    out = graph.invoke({"messages": [HumanMessage(REQUESTS[0])]})
    assert tool.opened == []
    (entry,) = _held(out)
    assert "3 of 3 candidates routed" in entry.reason
    ran = {e.tool for e in out["ledger"] if e.kind is LedgerKind.TOOL_RESULT}
    assert ran == {"desk_hours", "desk_map"}


def test_A9_the_offline_rule_holds_back_a_tool_that_acts_without_its_declared_intent() -> None:
    """The offline model's own routing asks the same evidence of a tool that acts."""
    tools = [OpenTicket(), TicketProgress(), AskFloor()]
    rule = RoutingRule()
    assert held_back(HOW_FAST, tools, score_tools(HOW_FAST, tools), rule) == {"open_ticket"}
    for question in REQUESTS:
        assert held_back(question, tools, score_tools(question, tools), rule) == set()
    plain = [NoteTicket(), TicketProgress(), AskFloor()]
    assert held_back(HOW_FAST, plain, score_tools(HOW_FAST, plain), rule) == set()


class OpenTicketAi(AiTool):
    """The ticket tool as an AI system tool that says it acts (``builder.side_effects()``)."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    def define(self, builder: AiToolBuilder) -> None:
        (
            builder.id("open-ticket")
            .user_description("Opens a ticket.")
            .ai_description("true when the user asks to open a ticket")
            .scope(AiToolScope.SERVER)
            .side_effects()
        )

    def execute(self, input: str, ctx: AiToolContext = NO_CONTEXT) -> str:
        self.opened.append(ctx.idempotency_key)
        return '{"ticket": "opened"}'


@pytest.mark.parametrize(("question", "opened"), [(HOW_FAST, 0), (REQUESTS[0], 1)])
def test_A9_an_ai_tool_that_acts_does_not_run_on_a_yes_in_doubt(question: str, opened: int) -> None:
    """An AI system tool declared to act is guarded as a chatbot tool that acts (W6)."""
    tool = OpenTicketAi()
    (adapted,) = as_chatbot_tools(AiToolRegistry([tool]), domain="desk")
    assert adapted.side_effects
    graph = build_graph(
        "desk",
        [adapted, TicketProgress(), AskFloor()],
        assistant=FunctionAssistant(route=lambda text, tools: [adapted.name]),
    )
    out = graph.invoke({"messages": [HumanMessage(question)]})
    assert len(tool.opened) == opened
    assert len(_held(out)) == 1 - opened


def test_W1_an_ai_tools_side_effects_must_be_a_bool() -> None:
    class Vague(OpenTicketAi):
        def define(self, builder: AiToolBuilder) -> None:
            super().define(builder)
            builder.side_effects("yes")  # type: ignore[arg-type]

    with pytest.raises(AiToolDefinitionError, match="side_effects must be True or False"):
        AiToolRegistry([Vague()])
    assert not as_chatbot_tools(AiToolRegistry([TicketForm()]))[0].side_effects


class TicketForm(AiTool):
    """An AI tool that does not say it acts: not one (the default)."""

    def define(self, builder: AiToolBuilder) -> None:
        builder.id("ticket-form").user_description("A form.").ai_description("a form")
        builder.scope(AiToolScope.CLIENT)


def test_A9_a_yes_with_no_word_behind_it_runs_a_tool_that_acts_only_without_examples() -> None:
    """A tie at zero: the examples, when declared, are the evidence the task lacks."""
    question = "The coffee machine in the kitchen leaks water everywhere"
    declared = OpenTicketNotFor()
    out = _ask(declared, question, TicketProgress(), AskFloor(), routed=True)
    assert declared.opened == []
    (entry,) = _held(out)
    assert "nor does any of its declared examples" in entry.reason
    plain = OpenTicket()  # no examples: the model's reason is all there is, and stands
    _ask(plain, question, routed=True)
    assert len(plain.opened) == 1


class _Booking(ChatbotTool[EmptyRequest]):
    """A tool that acts: it books, and records each booking."""

    domain = "desk"
    side_effects: ClassVar[bool] = True
    booked: ClassVar[list[str]] = []

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.booked.append(self.name)
        return ToolResult.as_guaranteed_context(self.name, f"Booked by {self.name}.")


class BookAppointment(_Booking):
    name = "book_appointment"
    executable_instruction = "book_appointment: true when the user wants to book an appointment"
    routing_examples = ("Book an appointment for Friday.",)


class BookBoarding(_Booking):
    name = "book_boarding"
    executable_instruction = (
        "book_boarding: true when the user wants to book boarding for a pet, for some nights"
    )
    routing_examples = ("Book boarding for my dog for two nights.",)

    def is_eligible(self, user_data: Any) -> bool:
        return bool(user_data and user_data.get("client"))


def test_A9_T4_a_tool_that_acts_never_acts_in_the_place_of_a_refused_tool_that_fits_better():
    """The model never sees the refused tool (T4); it says yes to the nearest it sees.

    "Book boarding for my cat" without a client's data must not book an appointment; with
    the data, the boarding tool runs, and the appointment tool's own requests still book.
    """
    _Booking.booked = []
    tools = [BookAppointment(), BookBoarding()]
    route = FunctionAssistant(route=lambda text, offered: ["book_appointment"])
    graph = build_graph("desk", tools, assistant=route)
    out = graph.invoke({"messages": [HumanMessage("Book boarding for my cat for 3 nights.")]})
    assert _Booking.booked == []  # not booked in the place of the refused boarding
    (held,) = [e for e in out["ledger"] if e.verdict == ACTING_IN_DOUBT]
    assert "book_boarding, which this request may not use, fits the task better" in held.reason
    appointment = graph.invoke({"messages": [HumanMessage("Book an appointment for Monday.")]})
    assert _Booking.booked == ["book_appointment"]
    assert "Booked by book_appointment." in appointment["answer"]
