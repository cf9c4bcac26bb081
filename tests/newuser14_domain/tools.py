"""Die Werkzeuge des Bürgeramts Musterstadt, geschrieben nach README und docs/."""

from __future__ import annotations

import asyncio
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    AgentCoordinator,
    ChatbotTool,
    ClarifiableTool,
    EmptyRequest,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
)

DOMAIN = "buergeramt"
Dienst = Literal["Reisepass", "Personalausweis", "Anmeldung", "Führungszeugnis"]
DIENSTE: list[str] = ["Reisepass", "Personalausweis", "Anmeldung", "Führungszeugnis"]

# stands in for the booking backend; deliberately naive: no dedupe on the idempotency key
BOOKINGS: list[dict[str, str]] = []
# how long the "HTTP call" of a booking takes (a test may raise it to cut a stream inside it)
BOOKING_DELAY_S: list[float] = [0.05]


def dienst_in(text: str) -> str | None:
    low = text.casefold()
    for dienst in DIENSTE:
        if dienst.casefold() in low:
            return dienst
    if "pass" in low and "ausweis" not in low:
        return "Reisepass"
    if "ausweis" in low:
        return "Personalausweis"
    if "ummelden" in low or "anmelden" in low or "umzug" in low:
        return "Anmeldung"
    return None


class DienstRequest(BaseModel):
    dienst: Dienst | None = Field(
        default=None, title="Dienstleistung", description="Die Dienstleistung des Bürgeramts."
    )


class TerminBuchen(ClarifiableTool[DienstRequest]):
    name = "termin_buchen"
    domain = DOMAIN
    priority = 20
    side_effects = True
    request_model = DienstRequest
    description = "Bucht einen Termin im Bürgeramt (Termin buchen, vereinbaren, reservieren)."
    instruction = "Fill dienst with the service the user wants an appointment for."
    executable_instruction = (
        "termin_buchen: true when the user asks to book an appointment (Termin buchen, "
        "Termin vereinbaren) at the citizens' office, also when no service is named."
    )
    routing_examples = (
        "Bitte buchen Sie mir einen Termin für einen Reisepass.",
        "Ich möchte einen Termin für die Anmeldung buchen.",
        "Buche einen Termin.",
    )
    not_for = ("Wie kann ich einen Termin absagen?", "Wer darf Termine buchen?")
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "BOOKING": {"de": "Ich buche Ihren Termin", "en": "Booking your appointment"},
        "BOOKED": {"de": "Termin gebucht", "en": "Appointment booked"},
    }

    def is_eligible(self, user_data):  # type: ignore[no-untyped-def]
        return bool(user_data and user_data.get("einwohner_id"))

    async def _book(self, dienst: str, ctx: ToolCallContext) -> ToolResult:
        ctx.progress("BOOKING")
        await asyncio.sleep(BOOKING_DELAY_S[0])  # the HTTP call to the booking system
        BOOKINGS.append({"dienst": dienst, "key": ctx.idempotency_key})
        number = len(BOOKINGS)
        ctx.progress("BOOKED")
        return ToolResult.as_guaranteed_context(
            self.name,
            f"Ihr Termin für {dienst} ist gebucht: Buchungsnummer MS-{number:04d}, "
            "Dienstag 10:30 Uhr, Rathaus Marktplatz 1.",
        )

    def _ask(self) -> ToolResult:
        return ToolResult.clarification(
            self.name, "Für welche Dienstleistung möchten Sie einen Termin?", list(DIENSTE)
        )

    async def aexecute(self, request: DienstRequest, ctx: ToolCallContext) -> ToolResult | None:
        dienst = request.dienst or dienst_in(ctx.task.task_prompt or ctx.text)
        if dienst is None:
            if "termin" not in ctx.text.casefold():
                return None
            return self._ask()
        return await self._book(dienst, ctx)

    async def aexecute_with_clarification(
        self, request: DienstRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        dienst = dienst_in(reply)
        if dienst is None:
            return self._ask()
        return await self._book(dienst, ctx)


FEES = {"Reisepass": 70.0, "Personalausweis": 37.0, "Führungszeugnis": 13.0, "Anmeldung": 0.0}


def euro(amount: float) -> str:
    return f"{amount:.2f}".replace(".", ",") + " €"


class GebuehrenRechner(ChatbotTool[DienstRequest]):
    name = "gebuehren_rechner"
    domain = DOMAIN
    returns_answer = True
    request_model = DienstRequest
    description = "Berechnet die Gebühr (Kosten, Preis) einer Dienstleistung des Bürgeramts."
    executable_instruction = (
        "gebuehren_rechner: true when the user asks what a service costs "
        "(Gebühr, Kosten, kostet, Preis)."
    )
    routing_examples = (
        "Was kostet ein Reisepass?",
        "Wie hoch ist die Gebühr für einen Personalausweis?",
        "Was kostet ein Express-Reisepass für mich mit 20 Jahren?",
    )
    not_for = ("Kann ich mit Kreditkarte bezahlen?",)

    def execute(self, request: DienstRequest, ctx: ToolCallContext) -> ToolResult | None:
        text = ctx.task.task_prompt or ctx.text
        dienst = request.dienst or dienst_in(text)
        low = text.casefold()
        if dienst is None or not any(w in low for w in ("kost", "gebühr", "preis", "teuer")):
            return None  # not about a fee: not mine (R1)
        fee = FEES[dienst]
        parts = [f"{dienst}: {euro(fee)}"]
        if dienst == "Reisepass" and ("unter 24" in low or "jung" in low):
            fee = 37.5
            parts = [f"{dienst} (unter 24 Jahren): {euro(fee)}"]
        if dienst == "Reisepass" and "express" in low:
            fee += 32.0
            parts.append(f"Expressgebühr: {euro(32.0)}")
        return ToolResult.as_answer(
            self.name, "Gebühr: " + "; ".join(parts) + f". Zusammen: {euro(fee)}."
        )


UNTERLAGEN = {
    "Reisepass": [
        "Ein aktuelles biometrisches Passfoto (35 x 45 mm).",
        "Der bisherige Reisepass oder Personalausweis.",
        "Bei Namensänderung die Heiratsurkunde.",
    ],
    "Personalausweis": [
        "Ein aktuelles biometrisches Passfoto (35 x 45 mm).",
        "Der bisherige Personalausweis.",
    ],
    "Anmeldung": [
        "Die Wohnungsgeberbestätigung des Vermieters.",
        "Ein gültiger Personalausweis oder Reisepass.",
    ],
    "Führungszeugnis": ["Ein gültiger Personalausweis oder Reisepass."],
}


class Unterlagen(ChatbotTool[DienstRequest]):
    name = "unterlagen"
    domain = DOMAIN
    request_model = DienstRequest
    description = "Welche Unterlagen (Dokumente, mitbringen) eine Dienstleistung braucht."
    executable_instruction = (
        "unterlagen: true when the user asks which documents (Unterlagen) to bring "
        "(mitbringen) for a service."
    )
    routing_examples = (
        "Welche Unterlagen brauche ich für einen Reisepass?",
        "Was muss ich zur Anmeldung mitbringen?",
    )

    def execute(self, request: DienstRequest, ctx: ToolCallContext) -> ToolResult | None:
        dienst = request.dienst or dienst_in(ctx.task.task_prompt or ctx.text)
        if dienst is None:
            return None
        ctx.progress("LOOKING_UP")
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id=f"unterlagen-{dienst.casefold()}",
                    document_name=f"Unterlagen: {dienst}",
                    document_url="https://www.musterstadt.example/buergeramt/unterlagen",
                    sentence_number=n,
                    text=f"Unterlagen für {dienst} (mitbringen): {line}",
                )
                for n, line in enumerate(UNTERLAGEN[dienst], start=1)
            ],
        )


class TerminUndGebuehr(ChatbotTool[EmptyRequest], AgentCoordinator):
    """Splits "buche einen Termin und sag mir, was er kostet" into booking, then fee."""

    name = "termin_und_gebuehr"
    domain = DOMAIN
    priority = 10
    executable_instruction = None

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        text = task.task_prompt.casefold()
        dienst = dienst_in(task.task_prompt)
        wants_booking = "termin" in text and ("buch" in text or "vereinbar" in text)
        wants_fee = any(w in text for w in ("kostet", "kosten", "gebühr", "preis"))
        if task.sub_tasks or task.required_tool_names or dienst is None:
            return task
        if not (wants_booking and wants_fee):
            return task
        task.sub_tasks = [
            TaskInfo(
                task_no="",
                task_prompt=f"Buche einen Termin für {dienst}.",
                required_tool_names=[TerminBuchen.name],
            ),
            TaskInfo(  # the finished answer last (S3, S6)
                task_no="",
                task_prompt=f"Was kostet {dienst}?",
                required_tool_names=[GebuehrenRechner.name],
            ),
        ]
        return task


def own_tools() -> list[ChatbotTool]:  # type: ignore[type-arg]
    return [TerminUndGebuehr(), TerminBuchen(), GebuehrenRechner(), Unterlagen()]
