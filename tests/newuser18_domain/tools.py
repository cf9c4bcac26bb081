"""The rental desk's four tools: a reservation (acts), a cancellation (acts, asks which),
a price quote (a finished answer) and the branches' hours (context)."""

from __future__ import annotations

import datetime
import json
import os
import re
import urllib.request
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    ChatbotTool,
    ClarifiableTool,
    EmptyRequest,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
)

DOMAIN = "rentadesk"
Branch = Literal["Airport", "City", "Station"]
CarClass = Literal["economy", "compact", "SUV", "van"]
DAILY_RATE = {"economy": 39, "compact": 49, "SUV": 79, "van": 89}
WEEKLY_DISCOUNT = 0.10  # seven days or more
HOURS = {
    "Airport": "The Airport branch (Terminal 2, arrivals hall) is open every day "
    "from 6:00 to 23:00.",
    "City": "The City branch (14 Harbour Street) is open Monday to Friday from 8:00 to 18:00 "
    "and on Saturday from 9:00 to 13:00; it is closed on Sunday.",
    "Station": "The Station branch (platform 1, Central Station) is open Monday to Saturday "
    "from 7:00 to 20:00.",
}


def api_url() -> str:
    return os.environ.get("RENTAL_API_URL", "http://127.0.0.1:9")


def call(method: str, path: str, key: str | None = None, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(api_url() + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Idempotency-Key", key)
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def customer_of(user_data: dict[str, Any] | None) -> str | None:
    value = (user_data or {}).get("customer_id")
    return str(value) if value else None


class ReserveRequest(BaseModel):
    branch: Branch | None = Field(default=None, title="branch")
    pickup: datetime.date | None = Field(
        default=None, title="pick-up date", json_schema_extra={"after_cues": ["from"]}
    )
    return_date: datetime.date | None = Field(
        default=None, title="return date", json_schema_extra={"after_cues": ["to", "until"]}
    )
    car_class: CarClass | None = Field(default=None, title="car class")


class ReserveCar(ChatbotTool[ReserveRequest]):
    name = "reserve_car"
    domain = DOMAIN
    priority = 20
    description = "Reserves a rental car for the customer at a branch for given dates."
    executable_instruction = (
        "reserve_car: true when the user asks to reserve (book) a rental car for themselves."
    )
    routing_examples = (
        "Please reserve a car for me.",
        "I would like to reserve a rental car.",
        "Book me a car, please.",
    )
    not_for = (
        "How much is the deposit for a reservation?",
        "Can I cancel a reservation for free?",
        "How much does it cost to rent a car?",
        "Do I need to reserve in advance?",
    )
    returns_answer = True
    side_effects = True
    request_model = ReserveRequest
    instruction = (
        "Fill branch, the pick-up date, the return date and the car class as the user said them."
    )
    required_inputs = ("branch", "pickup", "return_date", "car_class")
    ask_for_missing_inputs = True

    def is_eligible(self, user_data: dict[str, Any] | None) -> bool:
        return customer_of(user_data) is not None  # customers with an account only (T4)

    def execute(self, request: ReserveRequest, ctx: ToolCallContext) -> ToolResult | None:
        refusal = self.refusal(request, ctx.user_data or {})
        if refusal:
            return ToolResult.as_answer(self.name, refusal)
        body = {
            "customer": customer_of(ctx.user_data),
            "branch": request.branch,
            "pickup": str(request.pickup),
            "return": str(request.return_date),
            "class": request.car_class,
        }
        record = call("POST", "/reservations", ctx.idempotency_key, body)
        return ToolResult.as_answer(
            self.name,
            f"Reserved: {record['number']}, a {request.car_class} car at the {request.branch} "
            f"branch from {request.pickup} to {request.return_date}.",
        )

    @staticmethod
    def refusal(request: ReserveRequest, user: dict[str, Any]) -> str | None:
        if not request.pickup or not request.return_date or request.return_date <= request.pickup:
            return "The return date must be after the pick-up date; nothing was reserved."
        age = int(user.get("age", 30))
        if age < 21:
            return "Drivers under 21 cannot rent a car from us; nothing was reserved."
        if age < 25 and request.car_class in ("SUV", "van"):
            return (
                "Drivers aged 21 to 24 may rent economy and compact cars only; "
                "nothing was reserved."
            )
        return None


def describe(record: dict[str, Any]) -> str:
    return (
        f"{record['number']}: {record['class']} at {record['branch']}, "
        f"{record['pickup']} to {record['return']}"
    )


class CancelReservation(ClarifiableTool[EmptyRequest]):
    name = "cancel_reservation"
    domain = DOMAIN
    priority = 20
    description = "Cancels one of the customer's bookings."
    executable_instruction = (
        "cancel_reservation: true when the user asks to cancel a booking they made."
    )
    routing_examples = ("Please cancel my booking.", "Cancel what I booked, please.")
    not_for = (
        "Can I cancel a reservation for free?",
        "How much does a late cancellation cost?",
    )
    returns_answer = True
    side_effects = True

    def is_eligible(self, user_data: dict[str, Any] | None) -> bool:
        return customer_of(user_data) is not None

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        mine = call("GET", f"/reservations?customer={customer_of(ctx.user_data)}")
        if not mine:
            return ToolResult.as_answer(self.name, "You have no active reservation to cancel.")
        chosen = self.pick(mine, ctx.text)
        if chosen is None and len(mine) > 1:
            return ToolResult.clarification(
                self.name, "Which reservation should I cancel?", [describe(r) for r in mine]
            )
        return self.cancel(chosen or mine[0], ctx)

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        mine = call("GET", f"/reservations?customer={customer_of(ctx.user_data)}")
        chosen = self.pick(mine, reply)
        if chosen is None:
            return ToolResult.clarification(
                self.name, "Which reservation should I cancel?", [describe(r) for r in mine]
            )
        return self.cancel(chosen, ctx)

    @staticmethod
    def pick(mine: list[dict[str, Any]], text: str) -> dict[str, Any] | None:
        for record in mine:
            if record["number"].lower() in text.lower() or describe(record) == text.strip():
                return record
        return None

    def cancel(self, record: dict[str, Any], ctx: ToolCallContext) -> ToolResult:
        call("POST", f"/reservations/{record['number']}/cancel", ctx.idempotency_key, {})
        return ToolResult.as_answer(self.name, f"Cancelled: {describe(record)}.")


class QuoteRequest(BaseModel):
    car_class: CarClass | None = Field(default=None, title="car class")
    days: int | None = Field(default=None, json_schema_extra={"after_cues": ["for"]})


def days_in(text: str, filled: int | None) -> int | None:
    weeks = re.search(r"\b(a|one|1|two|2)\s+weeks?\b", text.lower())
    if weeks:
        return 14 if weeks.group(1) in ("two", "2") else 7
    return filled


class PriceQuote(ChatbotTool[QuoteRequest]):
    name = "price_quote"
    domain = DOMAIN
    description = "Quotes the rental price of a car class for a number of days from the tariff."
    executable_instruction = (
        "price_quote: true when the user asks the rental price of a car class for a number of "
        "days (a quote)."
    )
    routing_examples = (
        "How much does it cost to rent a car for some days?",
        "What is the rental price of this car class?",
    )
    not_for = (
        "How much is the deposit?",
        "How much is the Full Cover insurance?",
        "How much does an extra driver cost?",
    )
    returns_answer = True
    request_model = QuoteRequest
    instruction = "Fill car_class and the number of rental days."
    required_inputs = ("car_class",)

    def execute(self, request: QuoteRequest, ctx: ToolCallContext) -> ToolResult | None:
        days = days_in(ctx.text, request.days)
        if request.car_class is None or not days:
            return None
        rate = DAILY_RATE[request.car_class]
        total = rate * days * (1 - WEEKLY_DISCOUNT if days >= 7 else 1)
        return ToolResult.as_answer(
            self.name,
            f"A {request.car_class} car for {days} days costs {total:.2f} EUR "
            f"({rate} EUR a day{', 10% weekly discount' if days >= 7 else ''}).",
        )


class HoursRequest(BaseModel):
    branch: Branch | None = None


class BranchHours(ChatbotTool[HoursRequest]):
    name = "branch_hours"
    domain = DOMAIN
    description = "Opening hours and address of each of our branches."
    executable_instruction = (
        "branch_hours: true when the user asks when a branch is open (opening hours) "
        "or where it is."
    )
    routing_examples = ("When is the branch open?", "What are your opening hours?")
    request_model = HoursRequest
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "FETCHING_DATA": {"en": "Looking up the branch hours"}
    }

    def execute(self, request: HoursRequest, ctx: ToolCallContext) -> ToolResult | None:
        ctx.progress("FETCHING_DATA")
        branches = [request.branch] if request.branch else list(HOURS)
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="branch-hours",
                    document_name="Branch hours",
                    document_url="https://rentadesk.example.com/branches",
                    sentence_number=n,
                    text=HOURS[b],
                )
                for n, b in enumerate(branches, start=1)
            ],
        )


def own_tools() -> list[ChatbotTool[Any]]:
    return [ReserveCar(), CancelReservation(), PriceQuote(), BranchHours()]
