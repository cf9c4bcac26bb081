"""S5, Q6, Q2, R7: a message sent again after its run acted, a plain tool that asks, ordinals.

A neutral office helpdesk (``tests/test_side_effects_once.py``'s ``open_ticket``, which
acts and does NOT dedupe on ``ctx.idempotency_key``), a desk that books a meeting room
and asks "Which day?" first (it acts on the reply, naively too), and the bicycle shop
of ``tests/newuser6_domain``. Each test fails without its rule:

- a message with the text of the thread's last one, sent when nothing waits and its run
  acted, is answered with that run's answer: no new run, nothing stored, the stream
  says it was sent again (S5, Q6), in Python and in ``toolweave ask --thread``;
- a clarification returned by a tool that cannot take the reply is a
  ``NotClarifiableError`` saying to subclass ``ClarifiableTool``, except for a tool
  that acts: no result, logged as an error (R7, S5);
- an ordinal ("the second one", "a második", "drugi", "the last") picks an offered
  choice as its number does (Q2), in English, Hungarian and Polish.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from test_side_effects_once import QUESTION, OpenTicket

from toolweave import (
    ChatbotTool,
    ClarifiableTool,
    EmptyRequest,
    InvalidToolResultError,
    LedgerKind,
    ThreadStatusKind,
    ToolCallContext,
    ToolResult,
    build_graph,
    pending_clarification,
    reply,
    thread_status,
)
from toolweave.graph.langgraph_private import CHECKPOINTER_CONFIG_KEY
from toolweave.llm.next_message import choice_number, next_message_kind
from toolweave.persistence import open_checkpointer
from toolweave.state.errors import NotClarifiableError
from toolweave.testing import FunctionAssistant

DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


class BookRoom(ClarifiableTool[EmptyRequest]):
    """Asks which day, then books a meeting room on the reply: one booking per call."""

    name = "book_room"
    domain = "desk"
    side_effects: ClassVar[bool] = True
    returns_answer: ClassVar[bool] = True
    executable_instruction = "book_room: true when the user asks to book a meeting room"

    def __init__(self) -> None:
        self.bookings: list[tuple[str, str]] = []
        """(day, idempotency key) of every booking made."""

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.clarification(self.name, "Which day?", DAYS)

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        self.bookings.append((reply, ctx.idempotency_key))
        return ToolResult.as_answer(self.name, f"Room booked for {reply}, B-{len(self.bookings)}.")


class FloorPlan(ChatbotTool[EmptyRequest]):
    """Looks up the floor plan: acts on nothing; counts its calls."""

    name = "floor_plan"
    domain = "desk"
    executable_instruction = "floor_plan: true when the user asks where something is"

    def __init__(self) -> None:
        self.calls = 0

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.calls += 1
        return ToolResult.as_answer(self.name, f"The printer is on floor 2 ({self.calls}).")


def _graph(tool: Any, checkpointer: Any = None, **kwargs: Any) -> Any:
    assistant = FunctionAssistant(route=lambda text, tools: [tool.name])
    saver = InMemorySaver() if checkpointer is None else checkpointer
    return build_graph("desk", [tool], assistant=assistant, checkpointer=saver, **kwargs)


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _ask(graph: Any, config: dict[str, Any], text: str) -> dict[str, Any]:
    return dict(graph.invoke({"messages": [("human", text)]}, config))


# --- 1. a message sent again after its run acted (S5, Q6) ----------------------------------


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_S5_Q6_the_same_text_sent_again_after_its_run_acted_gets_its_answer_and_no_new_run(
    saver: str, tmp_path: Path
) -> None:
    """Before: read as a new question, a second ticket under a new key."""
    with contextlib.ExitStack() as stack:
        checkpointer = (
            InMemorySaver()
            if saver == "memory"
            else stack.enter_context(open_checkpointer(tmp_path / "t.db"))
        )
        _sends_the_ticket_request_twice(saver, checkpointer)


def _sends_the_ticket_request_twice(saver: str, checkpointer: Any) -> None:
    ticket = OpenTicket()
    graph = _graph(ticket, checkpointer)
    config = _config(f"again-{saver}")
    first = _ask(graph, config, QUESTION)
    stored = graph.get_state(config)
    again = _ask(graph, config, QUESTION)
    assert again["answer"] == first["answer"] == "Ticket HD-1 opened."
    assert len(ticket.tickets) == 1
    assert graph.get_state(config).config == stored.config  # nothing new stored
    assert len(again["messages"]) == 2
    assert thread_status(graph, config).kind is ThreadStatusKind.FINISHED
    other = _ask(graph, config, "Please open one more ticket, for the scanner.")
    assert other["answer"] == "Ticket HD-2 opened."  # another message is a new run
    assert len({key for _, key in ticket.tickets}) == 2


@pytest.mark.parametrize("replied_by", ["next_message", "reply"])
def test_S5_Q2_a_reply_sent_again_after_its_run_acted_does_not_act_again(replied_by: str) -> None:
    """The sixth domain's gap 7: "Saturday" sent twice after "Which day?" booked twice."""
    room = BookRoom()
    graph = _graph(room)
    config = _config(f"reply-again-{replied_by}")
    _ask(graph, config, "Please book a meeting room.")
    assert pending_clarification(graph, config) is not None
    if replied_by == "reply":
        first = reply(graph, config, "Friday")
    else:
        first = _ask(graph, config, "Friday")
    again = _ask(graph, config, "Friday")
    assert again["answer"] == first["answer"] == "Room booked for Friday, B-1."
    assert len(room.bookings) == 1
    assert pending_clarification(graph, config) is None


def test_S5_a_repeated_message_whose_run_did_not_act_is_asked_anew() -> None:
    """Nothing acted: people do ask twice, and the question is answered anew."""
    plan = FloorPlan()
    graph = _graph(plan)
    config = _config("again-no-effect")
    _ask(graph, config, "Where is the printer?")
    again = _ask(graph, config, "Where is the printer?")
    assert plan.calls == 2
    assert again["answer"] == "The printer is on floor 2 (2)."
    assert len(again["messages"]) == 4


@pytest.mark.parametrize(
    ("stream_mode", "version", "shape"),
    [
        (["custom", "values"], "v1", "pair"),
        ("custom", "v1", "data"),
        (["custom", "values"], "v2", "part"),
    ],
)
def test_S5_Q6_the_stream_says_the_message_was_sent_again(
    stream_mode: Any, version: str, shape: str
) -> None:
    ticket = OpenTicket()
    graph = _graph(ticket)
    config = _config(f"again-stream-{shape}")
    _ask(graph, config, QUESTION)
    message = {"messages": [("human", QUESTION)]}
    chunks = list(graph.stream(message, config, stream_mode=stream_mode, version=version))
    first = chunks[0]
    event = {"pair": lambda: first[1], "data": lambda: first, "part": lambda: first["data"]}[
        shape
    ]()
    assert event["type"] == "sent_again"
    assert event["tools"] == ["open_ticket"]
    assert "Nothing was done a second time." in event["phrase"]
    assert len(ticket.tickets) == 1


def test_S5_Q6_a_message_sent_again_starts_no_new_run_under_ainvoke_either() -> None:
    ticket = OpenTicket()
    graph = _graph(ticket)
    config = _config("again-async")

    async def twice() -> tuple[dict[str, Any], dict[str, Any]]:
        first = await graph.ainvoke({"messages": [("human", QUESTION)]}, config)
        return first, await graph.ainvoke({"messages": [("human", QUESTION)]}, config)

    first, again = asyncio.run(twice())
    assert again["answer"] == first["answer"]
    assert len(ticket.tickets) == 1


def test_S5_Q6_a_graph_given_its_checkpointer_by_the_run_answers_a_repeat_the_same_way() -> None:
    """A graph built without a checkpointer, as ``langgraph dev`` runs it: the run brings one."""
    ticket = OpenTicket()
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name])
    graph = build_graph("desk", [ticket], assistant=assistant)
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "platform", CHECKPOINTER_CONFIG_KEY: saver}}
    first = _ask(graph, config, QUESTION)
    again = _ask(graph, config, QUESTION)
    assert again["answer"] == first["answer"]
    assert len(ticket.tickets) == 1


def test_S5_Q6_toolweave_ask_sent_again_after_its_run_acted_acts_once_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`toolweave ask --thread T "Friday"` (the reply to "Which day?") run a second time."""
    from test_cli import FakeEntryPoint

    import toolweave.cli.session as cli_session
    import toolweave.domains as domains
    from toolweave import Domain, Plugin
    from toolweave.cli import main

    room = BookRoom()
    plugin = Plugin(name="desk", domains={"desk": lambda: (Domain(name="desk"), [room])})
    monkeypatch.setattr(
        domains, "entry_points", lambda *, group: [FakeEntryPoint("desk", lambda: plugin)]
    )
    assistant = FunctionAssistant(route=lambda text, tools: [room.name])
    monkeypatch.setattr(cli_session, "default_assistant", lambda: assistant)
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path))
    ask = ["ask", "--domain", "desk", "--thread", "t1"]
    assert main([*ask, "Please book a meeting room."]) == 0
    assert "Which day?" in capsys.readouterr().out
    assert main([*ask, "Friday"]) == 0
    assert "Room booked for Friday, B-1." in capsys.readouterr().out
    assert main([*ask, "Friday"]) == 0
    out = capsys.readouterr().out
    assert "Room booked for Friday, B-1." in out
    assert "Nothing was done a second time." in out
    assert len(room.bookings) == 1


def test_S5_Q6_the_shops_booking_replied_twice_books_one_slot() -> None:
    """The sixth domain as its new user ran it: "Saturday" sent again books no second slot."""
    from newuser6_domain.shop import BOOKINGS, shop_domain

    before = BOOKINGS.count()
    graph = build_graph(*shop_domain(), checkpointer=InMemorySaver())
    config = _config("shop-again")
    _ask(graph, config, "Please book a repair slot for my bike.")
    first = _ask(graph, config, "Saturday")
    again = _ask(graph, config, "Saturday")
    assert first["answer"].startswith("Booked: a repair slot on Saturday")
    assert again["answer"] == first["answer"]
    assert BOOKINGS.count() == before + 1


# --- 2. a clarification from a tool that cannot take the reply (R7, Q1) --------------------


class AsksWithoutClarifying(ChatbotTool[EmptyRequest]):
    """A plain tool that returns a question: a bug, its reply could never reach it."""

    name = "ask_badly"
    domain = "desk"
    executable_instruction = "ask_badly: true when the user asks for a ticket"

    def __init__(self) -> None:
        self.calls = 0

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.calls += 1
        return ToolResult.clarification(self.name, "Which floor?", ["1", "2"])


def test_R7_Q1_a_clarification_from_a_plain_tool_fails_the_run_saying_to_subclass() -> None:
    """Before: "no information" and a WARNING a script without logging never shows."""
    graph = _graph(AsksWithoutClarifying())
    with pytest.raises(NotClarifiableError, match="subclass ClarifiableTool") as raised:
        _ask(graph, _config("plain-asks"), QUESTION)
    assert isinstance(raised.value, InvalidToolResultError)  # a refused result, as the others
    assert "'ask_badly'" in str(raised.value)


def test_S5_R7_a_clarification_from_a_plain_tool_that_acts_is_no_result_logged_as_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Raising would drop the step's writes, and every retry would act again."""

    class ActsThenAsks(AsksWithoutClarifying):
        side_effects: ClassVar[bool] = True

    tool = ActsThenAsks()
    graph = _graph(tool)
    config = _config("plain-acts-asks")
    with caplog.at_level(logging.ERROR, logger="toolweave"):
        out = _ask(graph, config, QUESTION)
    assert thread_status(graph, config).kind is ThreadStatusKind.FINISHED
    [failed] = [e for e in out["ledger"] if e.kind is LedgerKind.TOOL_ERROR]
    assert "NotClarifiableError" in failed.reason
    assert failed.key  # the call ran: its key, so the same message sent again acts no more
    assert any(r.levelno == logging.ERROR and "ask_badly" in r.getMessage() for r in caplog.records)
    _ask(graph, config, QUESTION)
    assert tool.calls == 1


# --- 3. an ordinal picks an offered choice (Q2) ---------------------------------------------


ORDINAL_REPLIES = [
    ("the second one", "Tuesday"),
    ("second", "Tuesday"),
    ("The 2nd, please", "Tuesday"),
    ("the last one", "Friday"),
    ("third", "Wednesday"),
    ("a második", "Tuesday"),
    ("a másodikat kérem", "Tuesday"),
    ("az utolsót", "Friday"),
    ("harmadik", "Wednesday"),
    ("drugi", "Tuesday"),
    ("poproszę drugą", "Tuesday"),
    ("ostatni", "Friday"),
    ("trzecia opcja", "Wednesday"),
    ("pierwszy", "Monday"),
]


@pytest.mark.parametrize(("said", "day"), ORDINAL_REPLIES)
@pytest.mark.parametrize("replied_by", ["next_message", "command"])
def test_Q2_an_ordinal_reply_picks_the_offered_choice_in_each_language(
    said: str, day: str, replied_by: str
) -> None:
    """Before: "the second one" reached the tool as text; only "2" was the second choice."""
    room = BookRoom()
    graph = _graph(room)
    config = _config(f"ordinal-{said}-{replied_by}")
    _ask(graph, config, "Please book a meeting room.")
    if replied_by == "command":
        out = graph.invoke(Command(resume=said), config)
    else:
        out = _ask(graph, config, said)
    assert out["answer"] == f"Room booked for {day}, B-1."
    assert [booked for booked, _ in room.bookings] == [day]


@pytest.mark.parametrize(
    "said",
    [
        "second floor",  # more than a pick: the tool reads it
        "the second one and the third",
        "a második emeleten",
        "drugie piętro",
        "the sixth",  # no sixth choice
        "just a second",
    ],
)
def test_Q2_a_reply_saying_more_than_a_place_is_no_pick(said: str) -> None:
    assert choice_number(said, DAYS) is None


def test_Q2_an_ordinal_is_no_pick_when_no_choices_were_offered() -> None:
    assert choice_number("the second one", []) is None
    assert next_message_kind("the second one", "Which day?", DAYS) == "reply"
    assert choice_number("Sorry, I meant the second one", DAYS) is None  # the marker first
    assert next_message_kind("Sorry, I meant the second one", "Which day?", DAYS) == "reply"


def test_Q2_a_correction_that_picks_by_place_books_that_choice() -> None:
    room = BookRoom()
    graph = _graph(room)
    config = _config("ordinal-correction")
    _ask(graph, config, "Please book a meeting room.")
    out = _ask(graph, config, "Sorry, I meant the second one")
    assert out["answer"] == "Room booked for Tuesday, B-1."


def test_Q2_the_shops_second_day_is_booked_for_the_second_one() -> None:
    """The sixth domain's gap 9: "the second one" among five days."""
    from newuser6_domain.shop import shop_domain

    graph = build_graph(*shop_domain(), checkpointer=InMemorySaver())
    config = _config("shop-ordinal")
    _ask(graph, config, "Please book a repair slot for my bike.")
    out = _ask(graph, config, "the second one")
    assert out["answer"].startswith("Booked: a repair slot on Wednesday")


def test_S5_Q5_the_same_text_after_its_acting_run_was_abandoned_is_asked_anew() -> None:
    """An abandoned run gave no answer to send again: the message is a new request."""
    from test_side_effects_once import FlakyAnswer

    from toolweave import LlmUnavailableError, abandon_interrupted

    ticket = OpenTicket()
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name], answer=FlakyAnswer())
    graph = build_graph("desk", [ticket], assistant=assistant, checkpointer=InMemorySaver())
    config = _config("abandoned")
    with pytest.raises(LlmUnavailableError):
        _ask(graph, config, QUESTION)
    abandon_interrupted(graph, config)
    out = _ask(graph, config, QUESTION)
    assert out["answer"] == "Ticket HD-2 opened."
    assert len(ticket.tickets) == 2


def test_S5_Q6_the_same_text_under_a_new_id_after_its_run_acted_does_not_act_again() -> None:
    """A client giving every send a fresh id (a double submit of one text): still once."""
    from langchain_core.messages import HumanMessage

    ticket = OpenTicket()
    graph = _graph(ticket)
    config = _config("again-new-id")
    first = graph.invoke({"messages": [HumanMessage(QUESTION, id="m1")]}, config)
    again = graph.invoke({"messages": [HumanMessage(QUESTION, id="m2")]}, config)
    assert again["answer"] == first["answer"]
    assert len(ticket.tickets) == 1


def test_X4_S5_the_state_keeps_a_digest_of_the_message_acted_on_not_its_text() -> None:
    ticket = OpenTicket()
    graph = _graph(ticket)
    config = _config("digest")
    _ask(graph, config, QUESTION)
    kept = graph.get_state(config).values["acted_on"]
    assert kept
    assert "printer" not in kept  # only a digest, to tell a repeat cheaply


def test_S5_the_text_acted_on_sent_after_another_message_is_a_new_request() -> None:
    """Only the thread's last message is sent again; an earlier one asked later is new."""
    ticket, plan = OpenTicket(), FloorPlan()

    def route(text: str, tools: Any) -> list[str]:
        return [ticket.name] if "ticket" in text else [plan.name]

    assistant = FunctionAssistant(route=route)
    graph = build_graph("desk", [ticket, plan], assistant=assistant, checkpointer=InMemorySaver())
    config = _config("not-last")
    _ask(graph, config, QUESTION)
    _ask(graph, config, "Where is the printer?")
    out = _ask(graph, config, QUESTION)
    assert out["answer"] == "Ticket HD-2 opened."
    assert len({key for _, key in ticket.tickets}) == 2
