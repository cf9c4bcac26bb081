"""A hotel group's assistant (three hotels), written from the README and the docs alone.

The tools:

- ``late_checkout`` books a late check-out: it acts (one row per ``ctx.idempotency_key``
  in a SQLite ``bookings`` table, every call counted in ``calls``), asks "Which hotel are
  you staying at?" and "Until when?" when the request does not say (Q1, Q2), answers
  itself (R3), and is for guests with a booking reference only (T4);
- ``late_checkout_fee`` is a fee calculator, a finished answer (R3) that acts on nothing;
- ``room_status`` is the front desk's view of a room, for the ``pms`` system (T3: also
  offered to a request that names no system), as guaranteed context (R5) with a progress
  event (P1).

The pages (``pages/*.md``) are ingested with ``toolweave ingest pages --domain
hotel-docs``; the plugin ``hotel`` builds on them with ``documents_domain``.
"""

from __future__ import annotations

import os
import re
import sqlite3
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    ChatbotTool,
    ClarifiableTool,
    DocumentStore,
    Domain,
    EmptyRequest,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    documents_domain,
)

DOMAIN = "hotel"
DOCS = "hotel-docs"
PAGES = Path(__file__).resolve().parent / "pages"
STOPWORDS = ("harbourside", "hotel", "hotels")
HOTELS = ("Quayside", "Old Town", "Airport")
UNTIL = ("13:00", "15:00", "18:00")
FEES = {"13:00": 20, "15:00": 40, "18:00": 70}
Hotel = Literal["Quayside", "Old Town", "Airport"]
Until = Literal["13:00", "15:00", "18:00"]
SYSTEM_PROMPT = (
    "You are the assistant of Harbourside Hotels (Quayside, Old Town, Airport). "
    "Answer from the given sources only, briefly, in the guest's language."
)
CHECKOUT_PAGE = "https://harbourside-hotels.example.com/stay/check-out"


def bookings_db() -> Path:
    """Where late check-outs are booked: ``$HOTEL_BOOKINGS_DB``, else a file in the temp dir."""
    default = Path(tempfile.gettempdir()) / "toolweave-hotel-bookings.sqlite"
    return Path(os.environ.get("HOTEL_BOOKINGS_DB", default))


def until_in(text: str) -> str | None:
    """The check-out time a text names: ``15:00``, ``3 pm``, ``3pm`` (one of ``UNTIL``)."""
    for value in UNTIL:
        if value in text:
            return value
    match = re.search(r"\b(1|3|6)\s*(?:pm|p\.m\.|o'clock)", text, re.IGNORECASE)
    if match:
        return f"{int(match.group(1)) + 12}:00"
    return None


def hotel_in(text: str) -> str | None:
    """The hotel a text names, by its name ("old town", "the airport hotel")."""
    folded = text.casefold()
    found = [hotel for hotel in HOTELS if hotel.casefold() in folded]
    return found[0] if len(found) == 1 else None


class LateCheckoutRequest(BaseModel):
    hotel: Hotel | None = Field(default=None, title="hotel", description="The guest's hotel")
    until: Until | None = Field(
        default=None, title="check-out time", description="The late check-out time"
    )


class LateCheckout(ClarifiableTool[LateCheckoutRequest]):
    """Books a late check-out for a guest: acts once per call key (Q6)."""

    name = "late_checkout"
    domain = DOMAIN
    priority = 20
    description = "Books a late check-out for the guest's stay."
    executable_instruction = (
        "late_checkout: true when the guest asks to book, request or arrange a late "
        "check-out for their own stay."
    )
    routing_examples = (
        "Please book a late check-out for me.",
        "Can you arrange a late check-out until 15:00 at Quayside?",
        "I want to check out late tomorrow, please book it.",
    )
    not_for = (
        "How much does a late check-out cost?",
        "When is check-out?",
    )
    returns_answer = True
    side_effects = True
    request_model = LateCheckoutRequest
    instruction = "Fill hotel with the hotel the guest names and until with the time."
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "BOOKING": {"en": "Booking the late check-out"}
    }

    def is_eligible(self, user_data: Mapping[str, Any] | None) -> bool:
        return bool(user_data and user_data.get("booking_ref"))

    def execute(self, request: LateCheckoutRequest, ctx: ToolCallContext) -> ToolResult | None:
        return self._book_or_ask(request.hotel, request.until, ctx.text, ctx)

    def execute_with_clarification(
        self, request: LateCheckoutRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        text = " ".join([ctx.text, *ctx.replies])
        return self._book_or_ask(request.hotel, request.until, text, ctx)

    def _book_or_ask(
        self, hotel: str | None, until: str | None, text: str, ctx: ToolCallContext
    ) -> ToolResult:
        hotel = hotel or hotel_in(text)
        until = until or until_in(text)
        if hotel is None:
            return ToolResult.clarification(
                self.name, "Which hotel are you staying at?", list(HOTELS)
            )
        if until is None:
            return ToolResult.clarification(
                self.name, "Until when would you like to stay?", list(UNTIL)
            )
        ctx.progress("BOOKING")
        number = book(hotel, until, ctx.idempotency_key)
        crash_once()
        return ToolResult.as_answer(
            self.name,
            f"Late check-out LC-{number} is booked at {hotel} until {until}; "
            f"it costs {FEES[until]} euros.",
        )


class Crash(BaseException):
    """The process dying right after the booking, before LangGraph saved the step."""


def crash_once() -> None:
    """With ``$HOTEL_CRASH_ONCE`` naming a file that does not exist yet: create it and die."""
    flag = os.environ.get("HOTEL_CRASH_ONCE")
    if flag and not Path(flag).exists():
        Path(flag).touch()
        raise Crash(flag)


def book(hotel: str, until: str, key: str) -> int:
    """One booking per key, in one transaction; every call is counted (``calls``)."""
    with sqlite3.connect(bookings_db(), timeout=30) as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS bookings "
            "(number INTEGER PRIMARY KEY, key TEXT UNIQUE, hotel TEXT, until TEXT)"
        )
        db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT)")
        db.execute("INSERT INTO calls VALUES (?)", (key,))
        db.execute(
            "INSERT OR IGNORE INTO bookings (key, hotel, until) VALUES (?, ?, ?)",
            (key, hotel, until),
        )
        (number,) = db.execute("SELECT number FROM bookings WHERE key = ?", (key,)).fetchone()
    return int(number)


class FeeRequest(BaseModel):
    until: Until | None = Field(default=None, title="check-out time")


class LateCheckoutFee(ChatbotTool[FeeRequest]):
    """What a late check-out costs, for a time (gold members: free until 13:00)."""

    name = "late_checkout_fee"
    domain = DOMAIN
    description = "Calculates the fee of a late check-out."
    executable_instruction = (
        "late_checkout_fee: true when the guest asks how much a late check-out costs "
        "or what its price or fee is."
    )
    routing_examples = (
        "How much is a late check-out until 15:00?",
        "What does checking out at 18:00 cost?",
    )
    not_for = (
        "Please book a late check-out for me.",
        "Please book a late check-out at Quayside until 15:00.",
    )
    returns_answer = True
    request_model = FeeRequest

    def execute(self, request: FeeRequest, ctx: ToolCallContext) -> ToolResult | None:
        until = request.until or until_in(ctx.text)
        if until is None:
            return None
        fee = FEES[until]
        if until == "13:00" and (ctx.user_data or {}).get("tier") == "gold":
            fee = 0
        text = f"A late check-out until {until} costs {fee} euros."
        return ToolResult.as_answer(self.name, text)


class RoomStatus(ChatbotTool[EmptyRequest]):
    """The front desk's view of one room (the ``pms`` system only)."""

    name = "room_status"
    domain = DOMAIN
    eligible_system = "pms"
    description = "Housekeeping status of a room for the front desk."
    executable_instruction = (
        "room_status: true when the user asks whether a room is ready, clean or what "
        "status a room number has."
    )
    routing_examples = ("Is room 214 ready?", "What is the status of room 305?")
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "LOOKING_UP": {"en": "Looking the room up"}
    }

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        match = re.search(r"\broom\s+(\d{3})\b", ctx.text, re.IGNORECASE)
        if match is None:
            return None
        ctx.progress("LOOKING_UP")
        room = match.group(1)
        state = "clean and inspected" if int(room) % 2 == 0 else "being cleaned"
        return ToolResult.as_guaranteed_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id=f"room-{room}",
                    document_name="Housekeeping board",
                    sentence_number=1,
                    text=f"Room {room} is {state}.",
                )
            ],
        )


def hotel_tools() -> list[ChatbotTool[Any]]:
    return [LateCheckout(), LateCheckoutFee(), RoomStatus()]


def hotel_domain(store: DocumentStore) -> tuple[Domain, list[Any]]:
    """The hotel domain over a store of its pages, with its own tools after the retrieval."""
    return documents_domain(
        DOMAIN, store, tools=hotel_tools(), system_prompt=SYSTEM_PROMPT, default_language="en"
    )
