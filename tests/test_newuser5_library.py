"""N1 (fifth round): a public library written from the README and the docs alone.

The domain is ``tests/newuser5_domain`` (six pages with a front matter, a catalogue,
opening hours, a room booking that acts and asks which day, a members-only renewal,
a coordinator for "renew my books and tell me the opening hours"). Each test proves
one thing the round found wrong and mended: it fails with the mend reverted. What
the round met is in ``docs/guides/new-user-notes.md`` ("A fifth domain").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from cli_support import run
from langgraph.checkpoint.memory import InMemorySaver
from newuser5_domain import library
from newuser5_domain.library import BOOKINGS, RENEWALS, BookRoom, library_domain
from pydantic import BaseModel, Field

from toolweave import (
    ChatbotTool,
    ConfigurationError,
    EmptyRequest,
    RunContext,
    SqliteDocumentStore,
    ToolCallContext,
    ToolResult,
    build_graph,
    ingest,
    pending_clarification,
    reply,
)
from toolweave.cli.render import tool_traits
from toolweave.tools.text import line_sentences

DOCS = Path(__file__).resolve().parents[1] / "docs"
MEMBER = RunContext(user_data={"member_id": "M-100"})


@pytest.fixture
def graph() -> Any:
    """The library's graph with a checkpointer, the stand-in systems emptied."""
    BOOKINGS.clear()
    RENEWALS.clear()
    domain, tools = library_domain()
    return build_graph(domain, tools, checkpointer=InMemorySaver())


def _ask(graph: Any, question: str, thread: str, context: RunContext | None = None) -> Any:
    config = {"configurable": {"thread_id": thread}}
    return graph.invoke({"messages": [("human", question)]}, config, context=context)


# --- A9, Q6: a tool that acts does not act on a word of its examples ----------------------


def test_A9_Q6_a_context_tool_that_acts_does_not_run_on_a_word_only_its_examples_have(
    graph: Any,
) -> None:
    """ "Is story time on Tuesday?" shares "Tuesday" with "Book a study room for Tuesday."."""
    out = _ask(graph, "Is story time on Tuesday?", "story")
    assert BOOKINGS == {}
    assert "1:book_room" not in out["activated"]
    assert "10:30" in out["answer"]
    entries = [e for e in out["ledger"] if e.verdict == "a9_acting_in_doubt"]
    assert [e.tools for e in entries] == [("book_room",)]
    assert "names nothing of what it does" in entries[0].reason


def test_A9_Q6_a_request_that_names_the_act_still_acts_once(graph: Any) -> None:
    out = _ask(graph, "Please book a study room for me on Tuesday.", "book")
    assert "1:book_room" in out["activated"]
    assert list(BOOKINGS.values()) == ["tuesday"]


def test_A9_Q6_the_parent_of_a_split_question_does_not_act_on_a_word_it_shares(
    graph: Any,
) -> None:
    """ "books" of "renew my books" is the booking tool's "book"; the parent books nothing."""
    question = "Renew my books and tell me the opening hours on Saturday"
    out = _ask(graph, question, "split", MEMBER)
    assert out["activated"][:2] == ["1.1:renew_loans", "1.2:opening_hours"]
    assert list(RENEWALS.values()) == ["M-100"]
    assert BOOKINGS == {}
    assert "Saturday: 10:00-16:00." in out["answer"]


# --- Q1, Q2, T13: the booking asks which day, and the reply books once --------------------


def test_Q1_Q2_the_booking_asks_which_day_and_the_reply_books_once(graph: Any) -> None:
    config = {"configurable": {"thread_id": "which-day"}}
    graph.invoke({"messages": [("human", "I want to book a study room")]}, config)
    asked = pending_clarification(graph, config)
    assert asked is not None
    assert (asked["question"], asked["choices"][4]) == ("Which day?", "friday")
    assert BOOKINGS == {}
    out = reply(graph, config, "5")
    assert out["answer"].startswith("A study room is booked for you on Friday")
    assert list(BOOKINGS.values()) == ["friday"]


def test_N1_the_asks_trait_names_a_tool_that_asks_for_a_required_input() -> None:
    """`toolweave tools` said ``effects`` only for the booking, which asks "Which day?"."""
    assert tool_traits(BookRoom()) == "asks,effects"


# --- T13, N1: a declaration the library would silently ignore ------------------------------


class DayRequest(BaseModel):
    day: str | None = Field(default=None, examples=["monday"])


def test_N1_T13_required_inputs_naming_no_field_is_refused_when_the_graph_is_built() -> None:
    """Before, the check never ran: the tool was called without its input."""

    class Booking(ChatbotTool[DayRequest]):
        name = "booking"
        request_model = DayRequest
        required_inputs = ("dya",)
        executable_instruction = "booking: true when the user asks to book a room."

        def execute(self, request: DayRequest, ctx: ToolCallContext) -> ToolResult | None:
            return ToolResult.as_answer(self.name, "booked")

    with pytest.raises(ConfigurationError) as raised:
        build_graph("rooms", [Booking()])
    message = str(raised.value)
    assert "'booking'" in message
    assert "'dya'" in message
    assert "did you mean 'day'?" in message
    assert "its fields: day" in message


class PlainBooking(ChatbotTool[EmptyRequest]):
    """A well-declared tool; each case below adds one misspelt attribute to it."""

    name = "booking"
    executable_instruction = "booking: true when the user asks to book a room."

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_answer(self.name, "booked")


@pytest.mark.parametrize(
    ("misspelt", "meant"),
    [
        ("executable_instructions", "executable_instruction"),
        ("side_effect", "side_effects"),
        ("returns_answers", "returns_answer"),
    ],
)
def test_N1_a_misspelt_tool_attribute_is_refused_when_the_graph_is_built(
    misspelt: str, meant: str
) -> None:
    """Python took the slip as a new attribute: the tool was never routed, or acted unsaid."""
    tool_class = type("Booking", (PlainBooking,), {misspelt: True})
    with pytest.raises(ConfigurationError) as raised:
        build_graph("rooms", [tool_class()])
    assert f"Booking.{misspelt} is no attribute toolweave reads" in str(raised.value)
    assert f"did you mean {meant!r}?" in str(raised.value)


def test_N1_attributes_of_the_tools_own_are_not_taken_for_misspellings() -> None:
    class Rooms(ChatbotTool[EmptyRequest]):
        name = "rooms"
        names: ClassVar[tuple[str, ...]] = ("Blue room", "Green room")  # not `name`
        store = None
        executable_instruction = "rooms: true when the user asks about the study rooms."

        def hours(self) -> str:
            return "9-17"

        def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
            return ToolResult.as_answer(self.name, f"{', '.join(self.names)}: {self.hours()}")

    out = build_graph("rooms", [Rooms()]).invoke("Which study rooms are there?")
    assert out["answer"] == "Blue room, Green room: 9-17"


def test_N1_T9_an_execute_that_cannot_take_its_arguments_is_refused_when_the_graph_is_built() -> (
    None
):
    """``def execute(self, request)`` raised inside the run, which R7 took for "no result":
    the answer said "no information" and a script saw nothing."""

    class Rooms(ChatbotTool[EmptyRequest]):
        name = "rooms"
        executable_instruction = "rooms: true when the user asks about the study rooms."

        def execute(self, request: EmptyRequest) -> ToolResult | None:  # type: ignore[override]
            return ToolResult.as_answer(self.name, "Four rooms.")

    with pytest.raises(ConfigurationError) as raised:
        build_graph("rooms", [Rooms()])
    assert "Rooms.execute(request) cannot take the arguments" in str(raised.value)
    assert "define execute(self, request, ctx)" in str(raised.value)


def test_N1_T6_a_request_model_that_is_no_pydantic_model_is_refused_by_name() -> None:
    """Before: ``AttributeError: type object 'dict' has no attribute 'model_fields'``."""

    class Rooms(ChatbotTool[EmptyRequest]):
        name = "rooms"
        request_model = dict  # type: ignore[assignment]
        executable_instruction = "rooms: true when the user asks about the study rooms."

        def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
            return None

    with pytest.raises(ConfigurationError, match="request_model is <class 'dict'>, not a pydantic"):
        build_graph("rooms", [Rooms()])


def test_N1_T2_a_graph_none_of_whose_tools_may_run_in_its_domain_is_refused() -> None:
    """``build_graph("libary", tools)`` (a typo) answered "no information" to everything."""
    domain, tools = library_domain()
    mine = [tool for tool in tools if tool.domain == "libr5"]
    with pytest.raises(ConfigurationError) as raised:
        build_graph("libr55", mine)
    assert "domain 'libr55': none of the" in str(raised.value)
    assert "they are of domain 'libr5' (T2)" in str(raised.value)
    build_graph(domain, tools)  # the right name builds


# --- B5, R1: a result built under another tool's name ------------------------------------


def test_B5_R1_a_result_under_another_name_counts_for_the_tool_that_returned_it() -> None:
    """The tools page said such a result raises; it never did, and B5 needs it not to."""
    tools_page = (DOCS / "concepts" / "tools.md").read_text(encoding="utf-8")
    assert "a tool name that is not\n`self.name`" not in tools_page
    assert "whatever name it was built under" in tools_page

    class Rooms(ChatbotTool[EmptyRequest]):
        name = "rooms"
        executable_instruction = "rooms: true when the user asks about the study rooms."

        def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
            return ToolResult.as_answer("room_desk", "Four rooms on the second floor.")

    out = build_graph("rooms", [Rooms()]).invoke("Which study rooms are there?")
    assert out["activated"] == ["1:rooms"]
    assert out["answer"] == "Four rooms on the second floor."


# --- N1: a plugin that failed to load is named where the domains are listed ----------------


class BrokenEntryPoint:
    """An entry point whose ``load()`` fails, as a misspelt ``module:attr`` does."""

    dist = None
    name = "libr5"
    value = "newuser5_domain.plugin:plugn"

    def load(self) -> Any:
        raise AttributeError("module 'newuser5_domain.plugin' has no attribute 'plugn'")


@pytest.mark.usefixtures("offline_cli")
def test_N1_toolweave_domains_names_a_plugin_that_failed_to_load(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the domain was simply missing from the list (the warning needed ``-v``)."""
    import toolweave.domains as domains

    monkeypatch.setattr(domains, "entry_points", lambda *, group: [BrokenEntryPoint()])
    code, out, err = run(capsys, "domains")
    assert code == 0
    assert "libr5" not in out
    assert "plugin libr5 = newuser5_domain.plugin:plugn failed to load" in err
    assert "its domains are not listed" in err
    code, _, verbose = run(capsys, "-v", "domains")
    assert "entry point in the group 'toolweave.plugins'" in verbose
    assert "-m pip install -e PATH" in verbose


# --- N1: ingesting the guide's pages ------------------------------------------------------


def test_N1_the_guides_page_layout_is_what_ingest_reads_title_and_address_from() -> None:
    """The guide showed ``# Title`` then ``url: ...``, which ingest read as the page's text.

    The pages put the title and address in a front matter, as the guide now shows;
    ingest names each document by it and leaves it out of the text.
    """
    guide = (DOCS / "guides" / "writing-a-domain.md").read_text(encoding="utf-8")
    assert "---\ntitle: Urlop wypoczynkowy\nurl: https://" in guide
    store = SqliteDocumentStore(":memory:")
    report = ingest([library.PAGES], store, domain="libr5")
    assert report.ok
    found = store.search("study rooms second floor", limit=3)
    top = found[0]
    assert (top.document_name, top.document_url) == (
        "Study rooms",
        "https://library.example.org/visit/study-rooms",
    )
    assert not any("url:" in passage.text for passage in found)


# --- R9: a run of initials in a quoted sentence ---------------------------------------------


def test_R9_a_run_of_initials_ends_no_sentence_and_a_single_letter_still_does() -> None:
    """The sources quoted "The Hobbit by J." and "Tolkien: 1 copy..." as two sentences."""
    line = "The Hobbit by J. R. R. Tolkien: 1 copy on the shelf. It is fiction."
    assert line_sentences(line) == [
        "The Hobbit by J. R. R. Tolkien: 1 copy on the shelf.",
        "It is fiction.",
    ]
    assert line_sentences("The centre is in Building C. Its hours are:") == [
        "The centre is in Building C.",
        "Its hours are:",
    ]
