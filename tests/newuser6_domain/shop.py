"""The bicycle repair shop's tools, written from the README and the docs only.

* ``parts_stock``: a search over the shop's parts shelf (context, R2);
* ``repair_quote``: a price from a pydantic request filled from the question (T6, R3);
* ``book_repair``: books a workshop slot (``side_effects``, one booking per
  ``ctx.idempotency_key``, Q6) and asks which day when the question names none (Q1).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    ChatbotTool,
    ClarifiableTool,
    Domain,
    EmptyRequest,
    SqliteDocumentStore,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    documents_domain,
    ingest,
    words,
)

DOMAIN = "bikeshop"
DOCS = "bikeshop-docs"
"""The name the pages are ingested under: `toolweave ingest pages/ --domain bikeshop-docs`."""
PAGES = Path(__file__).with_name("pages")
SYSTEM_PROMPT = "You answer questions about Chainline Cycles, a bicycle repair shop, briefly."

SHELF = {
    "inner tube": "Inner tube 700x28: 6 euros, 14 on the shelf.",
    "brake pads": "Disc brake pads: 18 euros a pair, 6 pairs on the shelf.",
    "chain": "11-speed chain: 32 euros, 3 on the shelf.",
    "tyre": "Road tyre 700x28: 39 euros, sold out until Friday.",
    "light": "Rechargeable front light: 25 euros, 8 on the shelf.",
}


class PartsStock(ChatbotTool[EmptyRequest]):
    """Searches the parts shelf for the parts the question names."""

    name = "parts_stock"
    domain = DOMAIN
    description = "Spare parts in stock (inner tubes, brake pads, chains, tyres, lights), prices."
    executable_instruction = (
        "parts_stock: true when the user asks whether a spare part is in stock or what it costs."
    )
    routing_examples = (
        "Do you have brake pads in stock?",
        "Is there an inner tube for my road bike?",
    )
    not_for = ("How much does a puncture repair cost?",)

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The shelf's lines whose part the question names; ``None`` when it names none."""
        asked = set(words(ctx.text))
        lines = [line for part, line in SHELF.items() if set(words(part)) <= asked]
        if not lines:
            return None
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="shelf",
                    document_name="Parts on the shelf",
                    document_url="https://chainline.example/shop/parts",
                    sentence_number=n,
                    text=line,
                )
                for n, line in enumerate(lines, start=1)
            ],
        )


Job = Literal[
    "puncture repair", "brake adjustment", "basic tune-up", "full service", "wheel truing"
]
PRICES: dict[str, int] = {
    "puncture repair": 12,
    "brake adjustment": 15,
    "basic tune-up": 49,
    "full service": 119,
    "wheel truing": 20,
}


class QuoteRequest(BaseModel):
    """What a quote needs: the job, and whether the bike is an e-bike."""

    job: Job | None = Field(default=None, description="The repair the user wants priced")
    bike: Literal["e-bike", "regular"] | None = Field(
        default=None, description="e-bike when the user's bike is an e-bike"
    )


class RepairQuote(ChatbotTool[QuoteRequest]):
    """A price for one repair job, with the e-bike surcharge."""

    name = "repair_quote"
    domain = DOMAIN
    description = (
        "A price quote for a repair job (puncture, brakes, tune-up, full service, wheel truing)."
    )
    executable_instruction = (
        "repair_quote: true when the user asks for a quote, i.e. what a repair or service "
        "on their bike would cost in total."
    )
    routing_examples = (
        "What would a full service on my e-bike cost?",
        "Give me a quote for wheel truing.",
    )
    returns_answer = True
    request_model = QuoteRequest
    instruction = (
        "Fill job with the repair named; fill bike with e-bike when the bike is an e-bike."
    )
    required_inputs = ("job",)
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "PRICING": {"en": "Working out the quote"}
    }

    def execute(self, request: QuoteRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The job's price, plus 10 euros on an e-bike."""
        ctx.progress("PRICING")
        if request.job is None:
            return None
        price = PRICES[request.job]
        if request.bike == "e-bike":
            text = (
                f"A {request.job} on an e-bike costs {price + 10} euros "
                f"({price} plus the 10 euro e-bike surcharge)."
            )
        else:
            text = f"A {request.job} costs {price} euros; parts are extra."
        return ToolResult.as_answer(self.name, text)


DAYS = ("tuesday", "wednesday", "thursday", "friday", "saturday")


class BookingRequest(BaseModel):
    """The day the bike is dropped off."""

    day: Literal["tuesday", "wednesday", "thursday", "friday", "saturday"] | None = Field(
        default=None, description="The weekday the user wants to drop the bike off"
    )


class Bookings:
    """Stands in for the shop's booking system: one slot per idempotency key (Q6).

    A SQLite table, as the guide's ticket tool: the key is looked up and the slot booked
    in one transaction. ``BIKESHOP_BOOKINGS`` names a file to keep bookings across
    ``toolweave ask`` processes; the default is in memory.
    """

    def __init__(self, path: str | None = None) -> None:
        self.db = sqlite3.connect(
            path or os.environ.get("BIKESHOP_BOOKINGS", ":memory:"), check_same_thread=False
        )
        self.db.execute("CREATE TABLE IF NOT EXISTS slots (key TEXT PRIMARY KEY, day TEXT)")
        self._lock = threading.Lock()

    def book(self, key: str, day: str) -> str:
        """Book ``day`` once per ``key``; a repeated key returns the first booking's reference."""
        with self._lock, self.db:
            row = self.db.execute("SELECT rowid FROM slots WHERE key = ?", (key,)).fetchone()
            if row is None:
                row = (self.db.execute("INSERT INTO slots VALUES (?, ?)", (key, day)).lastrowid,)
        return f"CL-{row[0]}"

    def count(self) -> int:
        """How many slots are booked."""
        return int(self.db.execute("SELECT COUNT(*) FROM slots").fetchone()[0])


BOOKINGS = Bookings()


def day_in(text: str) -> str | None:
    """The first shop day ``text`` names."""
    for word in words(text):
        if word in DAYS:
            return word
    return None


class BookRepair(ClarifiableTool[BookingRequest]):
    """Books a workshop slot for the bike; asks which day when none is named."""

    name = "book_repair"
    domain = DOMAIN
    description = "Books a repair slot in the workshop."
    executable_instruction = (
        "book_repair: true when the user asks to book a repair slot or an appointment "
        "in the workshop."
    )
    routing_examples = ("Please book a repair slot for Thursday.", "Book my bike in for a service.")
    not_for = ("When is the workshop open?", "How long does a full service take?")
    side_effects = True
    returns_answer = True
    request_model = BookingRequest
    instruction = "Fill day with the weekday the user wants to bring the bike."

    def execute(self, request: BookingRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Book the named day, or ask which day."""
        day = request.day or day_in(ctx.text)
        return self._ask() if day is None else self._book(day, ctx)

    def _ask(self) -> ToolResult:
        return ToolResult.clarification(
            self.name,
            "Which day would you like to bring the bike in?",
            [d.capitalize() for d in DAYS],
        )

    def execute_with_clarification(
        self, request: BookingRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        """Book the day the reply names; ask again when it names no day the shop opens."""
        day = day_in(reply)
        return self._ask() if day is None else self._book(day, ctx)

    def _book(self, day: str, ctx: ToolCallContext) -> ToolResult:
        reference = BOOKINGS.book(ctx.idempotency_key, day)
        return ToolResult.as_answer(
            self.name,
            f"Booked: a repair slot on {day.capitalize()} from 8:30, reference {reference}.",
        )


def shop_tools() -> list[ChatbotTool[object]]:
    """The shop's own tools."""
    return [PartsStock(), RepairQuote(), BookRepair()]  # type: ignore[list-item]


def shop_domain(
    store: SqliteDocumentStore | None = None,
) -> tuple[Domain, list[ChatbotTool[object]]]:
    """The domain over the shop's pages (ingested from ``pages/`` when no store is given)."""
    if store is None:
        store = SqliteDocumentStore(":memory:")
        ingest([PAGES], store, domain=DOMAIN)
    domain, tools = documents_domain(
        DOMAIN, store, tools=shop_tools(), system_prompt=SYSTEM_PROMPT, default_language="en"
    )
    return domain, list(tools)
