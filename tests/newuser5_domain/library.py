"""A public library, written by a new user from the README and the docs alone (N1).

Pages in ``pages/`` (six short Markdown files), a catalogue tool, opening hours,
a room booking that acts and asks which day, a members-only renewal and a
coordinator that splits "renew my books and tell me the opening hours".
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    AgentCoordinator,
    ChatbotTool,
    Domain,
    EmptyRequest,
    SqliteDocumentStore,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    documents_domain,
    ingest,
)

PAGES = Path(__file__).with_name("pages")
DOMAIN = "libr5"

CATALOGUE = {
    "dune": "Dune by Frank Herbert: 2 copies on the shelf, fiction F HER.",
    "middlemarch": "Middlemarch by George Eliot: on loan, due back on 14 December.",
    "the hobbit": "The Hobbit by J. R. R. Tolkien: 1 copy on the shelf, fiction F TOL.",
}

HOURS = {
    "monday": "9:00-20:00",
    "tuesday": "9:00-20:00",
    "wednesday": "9:00-20:00",
    "thursday": "9:00-20:00",
    "friday": "9:00-20:00",
    "saturday": "10:00-16:00",
    "sunday": "closed",
}

LOANS = {"M-100": ["Dune", "The Hobbit"], "M-200": ["Middlemarch"]}

BOOKINGS: dict[str, str] = {}  # idempotency key -> day: stands in for the room system
RENEWALS: dict[str, str] = {}  # idempotency key -> member id: stands in for the loans system

Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]


class CatalogueSearch(ChatbotTool[EmptyRequest]):
    """Whether a book is in the catalogue, and where."""

    name = "catalogue_search"
    domain = DOMAIN
    description = "Looks a book up in the catalogue: copies on the shelf, loans, shelf marks."
    executable_instruction = (
        "catalogue_search: true when the user asks whether the library has a book, "
        "or whether a book is available."
    )
    routing_examples = ("Do you have Dune?", "Is The Hobbit available?")
    not_for = ("How many books can I borrow?",)

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Give the catalogue lines of the books the question names."""
        text = ctx.text.casefold()
        found = [line for title, line in CATALOGUE.items() if title in text]
        if not found:
            return None
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="catalogue",
                    document_name="Catalogue",
                    document_url="https://library.example.org/catalogue",
                    sentence_number=n,
                    text=line,
                )
                for n, line in enumerate(found, start=1)
            ],
        )


class DayRequest(BaseModel):
    """The weekday the question is about."""

    day: Day | None = Field(default=None, description="The weekday asked about.")


class OpeningHours(ChatbotTool[DayRequest]):
    """The opening hours of one day, or of the week."""

    name = "opening_hours"
    domain = DOMAIN
    description = "Opening hours of the library, day by day."
    executable_instruction = (
        "opening_hours: true when the user asks when the library is open or closes."
    )
    routing_examples = ("When are you open on Saturday?", "What are the opening hours?")
    request_model = DayRequest
    instruction = "Fill day with the weekday the user asks about."
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "FETCHING_DATA": {"en": "Looking at the opening hours"}
    }

    def execute(self, request: DayRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Give the hours of the day asked, or of every day."""
        ctx.progress("FETCHING_DATA")
        days = [request.day] if request.day else list(HOURS)
        lines = [f"{day.capitalize()}: {HOURS[day]}." for day in days]
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="hours-table",
                    document_name="Opening hours table",
                    sentence_number=n,
                    text=line,
                )
                for n, line in enumerate(lines, start=1)
            ],
        )


class BookRoom(ChatbotTool[DayRequest]):
    """Books a study room; asks which day when the question names none."""

    name = "book_room"
    domain = DOMAIN
    description = "Books a study room for a member on a weekday."
    executable_instruction = "book_room: true when the user asks to book or reserve a study room."
    routing_examples = ("Book a study room for Tuesday.", "Can I reserve a room?")
    not_for = ("How many study rooms are there?", "Is a study room free on Friday?")
    side_effects = True
    request_model = DayRequest
    instruction = "Fill day with the weekday the user wants the room for."
    required_inputs = ("day",)
    ask_for_missing_inputs = True

    def execute(self, request: DayRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Book the room once per idempotency key."""
        day = BOOKINGS.setdefault(ctx.idempotency_key, request.day or "")
        return ToolResult.as_guaranteed_context(
            self.name, f"A study room is booked for you on {day.capitalize()}, 10:00-13:00."
        )


class RenewLoans(ChatbotTool[EmptyRequest]):
    """Renews every loan of the member who asks."""

    name = "renew_loans"
    domain = DOMAIN
    description = "Renews the loans of the member who asks."
    executable_instruction = "renew_loans: true when the user asks to renew their loans or books."
    routing_examples = ("Renew my books, please.", "Can you renew my loans?")
    not_for = ("How many times can a loan be renewed?",)
    side_effects = True

    def is_eligible(self, user_data: object) -> bool:
        """Members only: the user data names a member id."""
        return isinstance(user_data, dict) and bool(user_data.get("member_id"))

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Renew the member's loans once per idempotency key."""
        member = str((ctx.user_data or {}).get("member_id", ""))
        titles = LOANS.get(member, [])
        if not titles:
            return ToolResult.as_guaranteed_context(self.name, "You have no loans to renew.")
        RENEWALS.setdefault(ctx.idempotency_key, member)
        return ToolResult.as_guaranteed_context(
            self.name, f"Renewed for three more weeks: {', '.join(titles)}."
        )


class VisitHelper(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Splits "renew my books and tell me the opening hours" into its two parts."""

    name = "visit_helper"
    domain = DOMAIN
    executable_instruction = None

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        """Two forced subtasks when the question asks both things."""
        text = task.task_prompt.casefold()
        if "renew" not in text or "open" not in text or task.sub_tasks:
            return task
        task.sub_tasks = [
            TaskInfo(
                task_no="", task_prompt="Renew my loans.", required_tool_names=["renew_loans"]
            ),
            TaskInfo(
                task_no="",
                task_prompt="What are the opening hours?",
                required_tool_names=["opening_hours"],
            ),
        ]
        return task


def own_tools() -> list[ChatbotTool[object]]:
    """The domain's own tools, after the document tools."""
    return [CatalogueSearch(), OpeningHours(), BookRoom(), RenewLoans(), VisitHelper()]


def library_domain() -> tuple[Domain, list[ChatbotTool[object]]]:
    """The domain over the six pages, with its own tools."""
    store = SqliteDocumentStore(":memory:", stopwords=["library"])
    ingest([PAGES], store, domain=DOMAIN)
    return documents_domain(
        DOMAIN,
        store,
        tools=own_tools(),
        system_prompt="You answer questions about the public library, briefly.",
        default_language="en",
    )
