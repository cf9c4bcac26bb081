"""Koleje Podgórskie: a regional train operator's customer service, in Polish.

An eighth test domain, written from the README and the docs alone: a timetable lookup
whose request model the question fills (context, R2, T6), a ticket refund that acts
(``side_effects``, once per ``ctx.idempotency_key``, Q6) and asks for the ticket number
(Q1), lost property as a finished answer (R3), a bicycle reservation gated on the
person's ticket (T4) that asks for the train (T13), the operator's pages searched with
deep fallback (D1-D6), and a coordinator that splits a two-part question (S6).
"""

from __future__ import annotations

import os
import re
import sqlite3
import tempfile
from pathlib import Path
from typing import ClassVar, Literal

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

DOMAIN = "kolej"
DOCS = "kolej-docs"  # `toolweave ingest pages/ --domain kolej-docs`
PAGES = Path(__file__).with_name("pages")
SITE = "https://koleje-podgorskie.example.pl"
STOPWORDS = ["koleje", "kolei", "podgórskie", "podgórskich", "pociąg"]  # words every question holds

Station = Literal["Kraków", "Tarnów", "Rzeszów", "Nowy Sącz"]
Day = Literal["dzień roboczy", "sobota", "niedziela"]
Train = Literal["3101", "3102", "3103", "3105", "3201", "3301"]

# (train, from, departure, to, arrival, days)
TIMETABLE: list[tuple[str, str, str, str, str, tuple[str, ...]]] = [
    ("3101", "Kraków", "6:10", "Tarnów", "7:22", ("dzień roboczy",)),
    ("3103", "Kraków", "8:40", "Tarnów", "9:50", ("dzień roboczy", "sobota", "niedziela")),
    ("3105", "Kraków", "16:15", "Tarnów", "17:28", ("dzień roboczy", "sobota", "niedziela")),
    ("3102", "Tarnów", "7:40", "Kraków", "8:52", ("dzień roboczy", "sobota", "niedziela")),
    ("3201", "Kraków", "7:05", "Rzeszów", "9:12", ("dzień roboczy", "sobota", "niedziela")),
    ("3301", "Tarnów", "10:30", "Nowy Sącz", "12:41", ("sobota", "niedziela")),
]

DAY_WORDS = {"dzień roboczy": "w dni robocze", "sobota": "w soboty", "niedziela": "w niedziele"}
"""The day said in each line: the offline answer quotes a line only if it says the day."""

FOUND_ITEMS = {
    "parasol": "czarny parasol, znaleziony 2 grudnia w pociągu KP 3103",
    "plecak": "niebieski plecak, znaleziony 4 grudnia w pociągu KP 3201",
    "telefon": "telefon w czerwonym etui, znaleziony 5 grudnia w pociągu KP 3102",
}
LOST_WORDS = ("zgubi", "zostawi", "znalez", "znalaz", "zagubi", "lost", "forgot", "left")
TICKET = re.compile(r"\bKP-?\s?(\d{6})\b", re.IGNORECASE)
BIKE_PLACES = 6

SYSTEM_PROMPT = (
    "Jesteś asystentem obsługi klienta Kolei Podgórskich. Odpowiadaj po polsku, krótko, "
    "tylko na podstawie podanego kontekstu."
)


def database() -> sqlite3.Connection:
    """The operator's back office (refunds, bike places): a SQLite file, one per process."""
    path = os.environ.get("KOLEJ8_BACKOFFICE") or str(
        Path(tempfile.gettempdir()) / "kolej8-backoffice.sqlite"
    )
    db = sqlite3.connect(path, timeout=10)
    db.execute("CREATE TABLE IF NOT EXISTS refunds (key TEXT PRIMARY KEY, ticket TEXT UNIQUE)")
    db.execute("CREATE TABLE IF NOT EXISTS bikes (key TEXT PRIMARY KEY, train TEXT, ticket TEXT)")
    return db


def ticket_in(text: str) -> str | None:
    """The ticket number written in the text, as ``KP-123456``."""
    found = TICKET.search(text)
    return None if found is None else f"KP-{found.group(1)}"


class TimetableRequest(BaseModel):
    """Where from, where to and on what day the person travels."""

    skad: Station | None = Field(
        default=None,
        description="Stacja, z której jedzie pociąg.",
        json_schema_extra={"after_cues": ["z", "ze", "from"]},
    )
    dokad: Station | None = Field(
        default=None,
        description="Stacja, do której jedzie pociąg.",
        json_schema_extra={"after_cues": ["do", "to"]},
    )
    dzien: Day | None = Field(default=None, description="Dzień podróży.")


class Timetable(ChatbotTool[TimetableRequest]):
    """The departures between two stations (context, R2)."""

    name = "rozklad_jazdy"
    domain = DOMAIN
    request_model = TimetableRequest
    description = "Rozkład jazdy: godziny odjazdu i przyjazdu pociągów między stacjami."
    instruction = (
        "Fill skad with the station the train leaves from, dokad with the station it goes "
        "to, dzien with the day of the journey."
    )
    executable_instruction = (
        "rozklad_jazdy: true when the user asks when a train leaves or arrives between two "
        "stations (odjazd, przyjazd, rozkład jazdy, o której jedzie pociąg)."
    )
    routing_examples = (
        "Kiedy jedzie pociąg z Krakowa do Tarnowa?",
        "O której odjeżdża pociąg do Rzeszowa?",
    )
    not_for = ("Ile kosztuje bilet z Krakowa do Tarnowa?",)
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "FETCHING_DATA": {"pl": "Sprawdzam rozkład jazdy", "en": "Checking the timetable"}
    }

    def execute(self, request: TimetableRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The trains matching the filled request; ``None`` when it names no station."""
        if request.skad is None and request.dokad is None:
            return None
        ctx.progress("FETCHING_DATA")
        when = f" ({DAY_WORDS[request.dzien]})" if request.dzien else ""
        lines = [
            f"Pociąg KP {train}{when}: odjazd ze stacji {start} o {leaves}, "
            f"przyjazd do stacji {end} o {arrives}."
            for train, start, leaves, end, arrives, days in TIMETABLE
            if request.skad in (None, start)
            and request.dokad in (None, end)
            and (request.dzien is None or request.dzien in days)
        ]
        if not lines:
            route = f" ze stacji {request.skad or '?'} do stacji {request.dokad or '?'}"
            lines = [f"Nie ma bezpośredniego pociągu{route}{when}."]  # the asked values said
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="rozklad",
                    document_name="Rozkład jazdy",
                    document_url=f"{SITE}/rozklad",
                    sentence_number=n,
                    text=line,
                )
                for n, line in enumerate(lines, start=1)
            ],
        )


class RefundRequest(BaseModel):
    """The ticket to refund."""

    numer_biletu: str | None = Field(
        default=None, description="Numer biletu, np. KP-123456.", examples=["KP-482913"]
    )


class TicketRefund(ClarifiableTool[RefundRequest]):
    """Refunds a ticket: acts once per call key (Q6), asks for the number when missing."""

    name = "zwrot_biletu"
    domain = DOMAIN
    priority = 20
    side_effects = True
    returns_answer = True
    request_model = RefundRequest
    description = "Zwrot biletu: zleca zwrot pieniędzy za bilet o podanym numerze."
    executable_instruction = (
        "zwrot_biletu: true when the user asks to refund a ticket (zwróć bilet, zwrot "
        "biletu, oddać bilet, refund my ticket)."
    )
    routing_examples = ("Proszę o zwrot biletu KP-123456.", "Chcę zwrócić bilet.")
    not_for = (
        "Do kiedy można złożyć wniosek o zwrot biletu?",
        "Ile wynosi odstępne?",
        "Ile trwa zwrot pieniędzy za bilet?",
    )

    def execute(self, request: RefundRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Refunds the ticket the question names, or asks for its number."""
        number = ticket_in(request.numer_biletu or "") or ticket_in(ctx.text)
        if number is None:
            return self.ask()
        return self.refund(number, ctx)

    def execute_with_clarification(
        self, request: RefundRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        """The reply's ticket number, or the question again."""
        number = ticket_in(reply)
        return self.ask() if number is None else self.refund(number, ctx)

    def ask(self) -> ToolResult:
        """The question for the ticket number."""
        return ToolResult.clarification(
            self.name, "Podaj numer biletu, który chcesz zwrócić (np. KP-123456).", []
        )

    def refund(self, number: str, ctx: ToolCallContext) -> ToolResult:
        """One refund per call key, in one transaction (Q6)."""
        db = database()
        try:
            with db:
                row = db.execute(
                    "SELECT ticket FROM refunds WHERE key = ? OR ticket = ?",
                    (ctx.idempotency_key, number),
                ).fetchone()
                if row is None:
                    db.execute("INSERT INTO refunds VALUES (?, ?)", (ctx.idempotency_key, number))
        finally:
            db.close()
        if row is not None and row[0] == number:
            return ToolResult.as_answer(
                self.name, f"Zwrot za bilet {number} został już zlecony wcześniej."
            )
        return ToolResult.as_answer(
            self.name,
            f"Zleciłem zwrot za bilet {number}. Pieniądze wrócą na konto w ciągu 14 dni.",
        )


class LostProperty(ChatbotTool[EmptyRequest]):
    """What the lost property office holds (a finished answer, R3)."""

    name = "rzeczy_znalezione"
    domain = DOMAIN
    returns_answer = True
    description = "Biuro rzeczy znalezionych: czy ktoś znalazł rzecz zgubioną w pociągu."
    executable_instruction = (
        "rzeczy_znalezione: true when the user lost or left something on a train "
        "(zgubiłem, zostawiłam, rzeczy znalezione) and asks whether it was found."
    )
    routing_examples = ("Zgubiłem parasol w pociągu.", "Zostawiłam telefon w pociągu KP 3102.")
    not_for = ("Jak długo przechowujecie znalezione rzeczy?",)

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The found items the question names, or what to do when none is listed."""
        text = ctx.text.casefold()
        if not any(word in text for word in LOST_WORDS):
            return None
        found = [line for item, line in FOUND_ITEMS.items() if item[:5] in text]
        pickup = (
            "Odbiór w Biurze Rzeczy Znalezionych na dworcu Kraków Główny, "
            "pn-pt 7:00-19:00, z dowodem osobistym."
        )
        if not found:
            return ToolResult.as_answer(
                self.name, f"Takiej rzeczy nie ma w wykazie rzeczy znalezionych. {pickup}"
            )
        return ToolResult.as_answer(self.name, f"Mamy: {'; '.join(found)}. {pickup}")


class BikeRequest(BaseModel):
    """The train to reserve a bike place on."""

    pociag: Train | None = Field(
        default=None, title="numer pociągu", description="Numer pociągu, np. 3103."
    )


class BikeReservation(ChatbotTool[BikeRequest]):
    """Reserves a bike place for a ticket holder (acts, T4 gate, T13 asks for the train)."""

    name = "rezerwacja_roweru"
    domain = DOMAIN
    priority = 30
    side_effects = True
    returns_answer = True
    request_model = BikeRequest
    required_inputs = ("pociag",)
    ask_for_missing_inputs = True
    description = "Rezerwacja miejsca na rower w pociągu dla osoby z ważnym biletem."
    instruction = "Fill pociag with the train number the user names."
    executable_instruction = (
        "rezerwacja_roweru: true when the user asks to reserve (zarezerwować) a place "
        "for a bicycle on a train."
    )
    routing_examples = (
        "Zarezerwuj miejsce na rower w pociągu 3103.",
        "Chcę zarezerwować rower na pociąg 3201.",
    )
    not_for = ("Ile kosztuje przewóz roweru?", "Czy trzeba rezerwować miejsce na rower?")

    def is_eligible(self, user_data: object) -> bool:
        """Only for a person with a valid ticket (T4)."""
        return isinstance(user_data, dict) and bool(user_data.get("numer_biletu"))

    def execute(self, request: BikeRequest, ctx: ToolCallContext) -> ToolResult | None:
        """One place per call key, while the train has places (Q6)."""
        ticket = str((ctx.user_data or {}).get("numer_biletu"))
        db = database()
        try:
            with db:
                row = db.execute(
                    "SELECT train FROM bikes WHERE key = ?", (ctx.idempotency_key,)
                ).fetchone()
                taken = db.execute(
                    "SELECT COUNT(*) FROM bikes WHERE train = ?", (request.pociag,)
                ).fetchone()[0]
                if row is None and taken < BIKE_PLACES:
                    db.execute(
                        "INSERT INTO bikes VALUES (?, ?, ?)",
                        (ctx.idempotency_key, request.pociag, ticket),
                    )
        finally:
            db.close()
        if row is None and taken >= BIKE_PLACES:
            full = f"W pociągu KP {request.pociag} nie ma już miejsc na rower."
            return ToolResult.as_answer(self.name, full)
        done = f"Zarezerwowałem miejsce na rower w pociągu KP {request.pociag} (bilet {ticket})."
        return ToolResult.as_answer(self.name, done)


SPLIT = re.compile(
    r"[?,]?\s+(?:i|oraz|a także|and)\s+(?=(?:czy|ile|jak|gdzie|kiedy|co|how|what)\b)"
)


class JourneyPlanner(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Splits "when does the train leave ... and <another question>" in two (S6)."""

    name = "planer_podrozy"
    domain = DOMAIN
    executable_instruction = None  # runs as a coordinator on every task (C2)

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        """A timetable part, forced (F1), and the other part, routed; else unchanged."""
        if task.sub_tasks or task.required_tool_names or "." in task.task_no:
            return task
        parts = SPLIT.split(task.task_prompt.strip(), maxsplit=1)
        if len(parts) != 2:
            return task
        first, second = (part.strip().rstrip("?,.") + "?" for part in parts)
        second = second[0].upper() + second[1:]
        timetable = [part for part in (first, second) if "pociąg" in part.casefold()]
        if not timetable:
            return task
        other = second if timetable[0] == first else first
        task.sub_tasks = [
            TaskInfo(task_no="", task_prompt=timetable[0], required_tool_names=[Timetable.name]),
            TaskInfo(task_no="", task_prompt=other),
        ]
        return task


def own_tools() -> list[ChatbotTool]:  # type: ignore[type-arg]
    """The operator's tools beside the default retrieval."""
    return [Timetable(), TicketRefund(), LostProperty(), BikeReservation(), JourneyPlanner()]


def kolej_domain(store: DocumentStore) -> tuple[Domain, list[ChatbotTool]]:  # type: ignore[type-arg]
    """The domain over the operator's pages, with its own tools (guide, step 4)."""
    return documents_domain(
        DOMAIN, store, tools=own_tools(), system_prompt=SYSTEM_PROMPT, default_language="pl"
    )
