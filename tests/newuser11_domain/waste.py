"""The waste service's tools, written from the README and the docs (SPEC N1).

Bookings go to a SQLite file (``WASTE_BOOKINGS_DB``, else ``bookings.sqlite`` in the
temp folder): one row per ``ctx.idempotency_key`` in ``bookings``, and one row per call,
deduped or not, in ``calls``.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    AgentCoordinator,
    ChatbotTool,
    ClarifiableTool,
    DocumentStore,
    Domain,
    EmptyRequest,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    documents_domain,
)

DOMAIN = "waste"
DOCS = "waste-docs"
STOPWORDS = ["waste"]
BOOKINGS_DB = "WASTE_BOOKINGS_DB"
CONFIRM_DELAY = "WASTE_CONFIRM_S"  # seconds the confirmation e-mail takes after booking
SITE = "https://waste.example-city.de/en"

District = Literal["Altstadt", "Nordend", "Südhafen"]
Bin = Literal["paper", "yellow", "organic", "residual"]
DISTRICTS: tuple[str, ...] = ("Altstadt", "Nordend", "Südhafen")
BOOKING_WORDS = ("book", "order", "arrange", "schedule", "abholen", "bestellen", "anmelden")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")

CALENDAR: dict[str, dict[str, str]] = {
    "Altstadt": {
        "residual": "every Monday",
        "paper": "every second Wednesday",
        "organic": "every Thursday",
        "yellow": "every second Friday",
    },
    "Nordend": {
        "residual": "every Tuesday",
        "paper": "every fourth Monday",
        "organic": "every Friday",
        "yellow": "every second Thursday",
    },
    "Südhafen": {
        "residual": "every Wednesday",
        "paper": "every second Tuesday",
        "organic": "every Monday",
        "yellow": "every second Wednesday",
    },
}
BIN_NAMES = {
    "paper": "paper bin (Papiertonne)",
    "yellow": "yellow bin (Gelbe Tonne)",
    "organic": "organic waste bin (Biotonne)",
    "residual": "residual waste bin (Restmüll)",
}
BIN_ITEMS = {
    "paper": "newspapers, cardboard boxes, paper bags, egg cartons",
    "yellow": "yoghurt pots, plastic bottles, tins, drink cartons, plastic film",
    "organic": "fruit and vegetable peel, coffee grounds, tea bags, garden cuttings",
    "residual": "nappies, vacuum cleaner bags, ash, broken crockery",
}
EXTRA_BIN_FEES = {"paper": 24, "organic": 36, "residual": 84}


def bookings_db() -> Path:
    return Path(os.environ.get(BOOKINGS_DB) or Path(tempfile.gettempdir()) / "bookings.sqlite")


def _connect() -> sqlite3.Connection:
    db = sqlite3.connect(bookings_db(), timeout=30)
    db.execute(
        "CREATE TABLE IF NOT EXISTS bookings (key TEXT PRIMARY KEY, number INTEGER,"
        " district TEXT, day TEXT, resident TEXT)"
    )
    db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT, district TEXT, day TEXT)")
    return db


def counts() -> tuple[int, int]:
    """(bookings, calls) made so far."""
    with _connect() as db:
        rows = db.execute("SELECT COUNT(*) FROM bookings").fetchone()[0]
        calls = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    return int(rows), int(calls)


def _named(text: str, names: tuple[str, ...]) -> str | None:
    folded = text.casefold()
    return next((name for name in names if name.casefold() in folded), None)


def _doc(doc_id: str, name: str, url: str, lines: list[str]) -> list[UniqueTextDocument]:
    return [
        UniqueTextDocument(
            document_id=doc_id, document_name=name, document_url=url, sentence_number=n, text=line
        )
        for n, line in enumerate(lines, start=1)
    ]


class PickupRequest(BaseModel):
    district: District | None = Field(default=None, description="The district of the address.")
    day: Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] | None = Field(
        default=None, title="pick-up day", description="The weekday of the pick-up."
    )


class BookBulkyPickup(ClarifiableTool[PickupRequest]):
    """Books a bulky-waste pick-up (Sperrmüll): one row per call's key."""

    name = "book_bulky_pickup"
    domain = DOMAIN
    priority = 20
    side_effects = True
    returns_answer = True
    description = "Books a bulky waste pick-up (Sperrmüll) for a resident's district and day."
    executable_instruction = (
        "book_bulky_pickup: true when the user asks to book, order or arrange a bulky waste "
        "pick-up (Sperrmüll abholen lassen) for furniture, a mattress or a sofa."
    )
    routing_examples = (
        "Please book a bulky waste pick-up in Nordend on Friday.",
        "I want to book a Sperrmüll pick-up for my old sofa.",
        "Book a pick-up for a mattress.",
    )
    not_for = ("How many bulky waste pick-ups are free each year?", "What counts as bulky waste?")
    request_model = PickupRequest
    instruction = "Fill district with the district named, day with the weekday named."

    def is_eligible(self, user_data: Any) -> bool:
        return bool(user_data and user_data.get("resident_id"))

    def execute(self, request: PickupRequest, ctx: ToolCallContext) -> ToolResult | None:
        text = ctx.task.task_prompt or ctx.text
        if not any(word in text.casefold() for word in BOOKING_WORDS):
            return None  # about pick-ups, not asking for one: the documents answer (R1)
        district = request.district or _named(text, DISTRICTS)
        day = request.day or _named(text, WEEKDAYS)
        return self._book_or_ask(district, day, ctx)

    def execute_with_clarification(
        self, request: PickupRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        text = " ".join([ctx.task.task_prompt or ctx.text, *ctx.replies])  # every round's reply
        district = request.district or _named(text, DISTRICTS)
        day = request.day or _named(text, WEEKDAYS)
        return self._book_or_ask(district, day, ctx)

    def _book_or_ask(
        self, district: str | None, day: str | None, ctx: ToolCallContext
    ) -> ToolResult:
        if district is None:
            return ToolResult.clarification(
                self.name, "Which district do you live in?", list(DISTRICTS)
            )
        if day is None:
            return ToolResult.clarification(
                self.name, "Which weekday should we come?", list(WEEKDAYS[:5])
            )
        booked = self._book(district, day, ctx)
        time.sleep(float(os.environ.get(CONFIRM_DELAY) or 0))  # sends the confirmation e-mail
        return booked

    def _book(self, district: str, day: str, ctx: ToolCallContext) -> ToolResult:
        resident = str((ctx.user_data or {}).get("resident_id", ""))
        with _connect() as db:  # one transaction: count the call, book once per key
            db.execute("INSERT INTO calls VALUES (?, ?, ?)", (ctx.idempotency_key, district, day))
            row = db.execute(
                "SELECT number FROM bookings WHERE key = ?", (ctx.idempotency_key,)
            ).fetchone()
            if row is None:
                number = 1 + db.execute("SELECT COUNT(*) FROM bookings").fetchone()[0]
                db.execute(
                    "INSERT INTO bookings VALUES (?, ?, ?, ?, ?)",
                    (ctx.idempotency_key, number, district, day, resident),
                )
            else:
                number = row[0]
        return ToolResult.as_answer(
            self.name,
            f"Bulky waste pick-up SP-{number} is booked in {district} on {day}. "
            "Put the items at the kerb by 6:00.",
        )


class BinRequest(BaseModel):
    bin: Bin | None = Field(default=None, description="The bin asked about.")


class BinGuide(ChatbotTool[BinRequest]):
    """Context: what goes in one bin, from a Literal field."""

    name = "bin_guide"
    domain = DOMAIN
    description = "What goes in the paper, yellow, organic or residual bin."
    executable_instruction = (
        "bin_guide: true when the user asks what goes in a bin or which bin an item goes in."
    )
    routing_examples = ("What goes in the yellow bin?", "What can I put in the paper bin?")
    request_model = BinRequest
    instruction = "Fill bin with the bin named: paper, yellow, organic or residual."

    def execute(self, request: BinRequest, ctx: ToolCallContext) -> ToolResult | None:
        if request.bin is None:
            return None
        line = f"The {BIN_NAMES[request.bin]} takes {BIN_ITEMS[request.bin]}."
        return ToolResult.as_context(
            self.name, _doc("bin-guide", "Bin guide", f"{SITE}/which-bin", [line])
        )


class DistrictRequest(BaseModel):
    district: District | None = Field(default=None, description="The district asked about.")
    bin: Bin | None = Field(default=None, description="The bin asked about.")


class CollectionDays(ChatbotTool[DistrictRequest]):
    """Guaranteed context: the collection days of the resident's district."""

    name = "collection_days"
    domain = DOMAIN
    description = "Collection days of each bin in a district (Abfuhrkalender)."
    executable_instruction = (
        "collection_days: true when the user asks when a bin is collected or emptied (Abholung)."
    )
    routing_examples = (
        "When is my paper bin collected?",
        "When is the yellow bin emptied in Altstadt?",
    )
    request_model = DistrictRequest

    def execute(self, request: DistrictRequest, ctx: ToolCallContext) -> ToolResult | None:
        district = request.district or (ctx.user_data or {}).get("district")
        if district not in CALENDAR:
            return None
        bins = [request.bin] if request.bin else list(BIN_NAMES)
        lines = [
            f"In {district} the {BIN_NAMES[b]} is collected {CALENDAR[district][b]}." for b in bins
        ]
        return ToolResult.as_guaranteed_context(
            self.name, _doc("calendar", "Collection calendar", f"{SITE}/collection-calendar", lines)
        )


class ExtraBinFee(ChatbotTool[BinRequest]):
    """A finished answer: the yearly price of an extra bin."""

    name = "extra_bin_fee"
    domain = DOMAIN
    returns_answer = True
    description = "The yearly price of an extra paper, organic or residual bin."
    executable_instruction = (
        "extra_bin_fee: true when the user asks how much an extra or second bin costs."
    )
    routing_examples = ("How much is an extra bin?", "What does a second paper bin cost?")
    not_for = ("How much is the basic waste fee?",)
    request_model = BinRequest

    def execute(self, request: BinRequest, ctx: ToolCallContext) -> ToolResult | None:
        bins = [request.bin] if request.bin in EXTRA_BIN_FEES else list(EXTRA_BIN_FEES)
        text = " ".join(
            f"An extra {BIN_NAMES[b]} costs {EXTRA_BIN_FEES[b]} euros a year." for b in bins
        )
        return ToolResult.as_answer(
            self.name, text, sources=_doc("fees", "Waste fees", f"{SITE}/fees", [text])
        )


class HazardousDropoff(ChatbotTool[EmptyRequest]):
    """A streamed answer: where hazardous waste goes."""

    name = "hazardous_dropoff"
    domain = DOMAIN
    returns_answer = True
    description = "Where to drop off paint, batteries and other hazardous waste (Schadstoffmobil)."
    executable_instruction = (
        "hazardous_dropoff: true when the user asks where to take paint, batteries, solvents "
        "or other hazardous waste (Schadstoffe)."
    )
    routing_examples = ("Where can I drop off old paint?", "Where do I take used batteries?")
    STEPS: ClassVar[tuple[str, ...]] = (
        "Hazardous waste never goes in a household bin. ",
        "Take it to the Schadstoffmobil, which stops in every district once a month, ",
        "or to recycling centre Nord on Saturday from 9:00 to 13:00 (up to 20 kg free).",
    )

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        ctx.stream_answer(self.STEPS)
        return ToolResult.as_answered(
            self.name,
            sources=_doc(
                "hazardous",
                "Hazardous waste drop-off",
                f"{SITE}/hazardous-waste",
                ["".join(self.STEPS)],
            ),
        )


class TwoPartHelper(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Splits 'when is my paper bin collected and how much is an extra bin?' in two."""

    name = "two_part_helper"
    domain = DOMAIN

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        prompt = task.task_prompt
        folded = prompt.casefold()
        if task.task_no != "1" or " and " not in folded:
            return task
        if "collected" not in folded or not any(w in folded for w in ("how much", "cost", "price")):
            return task
        first, second = prompt.split(" and ", 1)
        task.sub_tasks = [
            TaskInfo(
                task_no="",
                task_prompt=first.strip().rstrip("?") + "?",
                required_tool_names=["collection_days"],
            ),
            TaskInfo(
                task_no="",
                task_prompt=second.strip()[0].upper() + second.strip()[1:],
                required_tool_names=["extra_bin_fee"],
            ),
        ]
        return task


def waste_tools() -> list[ChatbotTool[Any]]:
    return [
        BookBulkyPickup(),
        BinGuide(),
        CollectionDays(),
        ExtraBinFee(),
        HazardousDropoff(),
        TwoPartHelper(),
    ]


def waste_domain(store: DocumentStore) -> tuple[Domain, list[ChatbotTool[Any]]]:
    return documents_domain(DOMAIN, store, tools=waste_tools(), default_language="en")
