"""The tools of the Acquedotto comunale di Valdiponte, written from the docs alone.

The back end (planned interruptions, the meter readings) is an HTTP server whose
address is ``ACQUEDOTTO_URL`` (or the ``base_url`` given to the tools): the tests start
one on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
import urllib.request
from typing import Any, ClassVar

import httpx
from pydantic import BaseModel, Field

from toolweave import (
    NO_CONTEXT,
    AiTool,
    AiToolBuilder,
    AiToolContext,
    AiToolScope,
    ChatbotTool,
    EmptyRequest,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    ai_tool_script,
)

DOMAIN = "acquedotto"
SITE = "https://acquedotto.valdiponte.example"


def backend_url(base_url: str | None = None) -> str:
    """Where the back end listens: the argument, else ``$ACQUEDOTTO_URL``."""
    url = base_url or os.environ.get("ACQUEDOTTO_URL")
    if not url:
        raise RuntimeError("ACQUEDOTTO_URL is not set: the back end's address is unknown")
    return url.rstrip("/")


# --- a context tool (R2): planned interruptions by street --------------------------------

STREET = re.compile(
    r"\b((?:via|viale|corso|piazza|vicolo|largo)\s+(?:[A-Z][\w'àèéìòù]*\s?){1,3})",
    re.IGNORECASE,
)


def street_in(text: str) -> str | None:
    """The street a question names ("in via Garibaldi" -> "via Garibaldi"), or None."""
    found = STREET.search(text)
    return found.group(1).strip() if found else None


class InterruzioniRequest(BaseModel):
    via: str | None = Field(
        default=None,
        title="via",
        description="La via di cui l'utente chiede le interruzioni, come l'ha scritta",
        examples=["via Garibaldi", "corso Italia"],
        json_schema_extra={"after_cues": ["in"]},
    )


class InterruzioniProgrammate(ChatbotTool[InterruzioniRequest]):
    name = "interruzioni_programmate"
    domain = DOMAIN
    priority = 20
    description = "Interruzioni programmate dell'acqua per lavori, via per via."
    executable_instruction = (
        "interruzioni_programmate: true when the user asks whether the water will be cut "
        "off, an interruption (interruzione, sospensione, manca l'acqua, lavori) is planned "
        "in a street (via, corso, piazza)."
    )
    routing_examples = (
        "Ci sono interruzioni dell'acqua in via Garibaldi?",
        "Manca l'acqua domani in corso Italia?",
        "Sono previsti lavori con sospensione dell'acqua in piazza Dante?",
    )
    request_model = InterruzioniRequest
    instruction = "Fill via with the street the user names, as written (e.g. 'via Roma')."
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "FETCHING_DATA": {
            "it": "Controllo le interruzioni programmate",
            "en": "Checking the planned interruptions",
        }
    }

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url

    def execute(self, request: InterruzioniRequest, ctx: ToolCallContext) -> ToolResult | None:
        via = request.via or street_in(ctx.text)
        if via is None:
            return None  # not mine: no street named (R1)
        ctx.progress("FETCHING_DATA")
        query = urllib.parse.urlencode({"via": via})
        url = f"{backend_url(self.base_url)}/interruzioni?{query}"
        with urllib.request.urlopen(url, timeout=10) as response:
            rows: list[dict[str, str]] = json.loads(response.read())
        if not rows:
            lines = [f"Non sono previste interruzioni programmate in {via}."]
        else:
            lines = [
                f"In {row['via']} l'acqua sarà interrotta il {row['giorno']} "
                f"dalle {row['dalle']} alle {row['alle']} ({row['motivo']})."
                for row in rows
            ]
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="interruzioni-programmate",
                    document_name="Interruzioni programmate",
                    document_url=f"{SITE}/interruzioni/programmate",
                    sentence_number=n,
                    text=line,
                )
                for n, line in enumerate(lines, start=1)
            ],
        )


# --- a tool that acts (Q6, S5, A9): the meter reading ------------------------------------


class AutoletturaRequest(BaseModel):
    codice_cliente: str | None = Field(
        default=None,
        title="codice cliente",
        description="Il codice cliente scritto sulla bolletta",
        pattern=r"^AC-\d{6}$",
        examples=["AC-123456"],
    )
    lettura: int | None = Field(
        default=None,
        title="lettura del contatore",
        description="Le cifre nere del contatore, in metri cubi",
        ge=0,
        json_schema_extra={"after_cues": ["lettura", "autolettura", "contatore", "segna"]},
    )


class Autolettura(ChatbotTool[AutoletturaRequest]):
    name = "autolettura"
    domain = DOMAIN
    priority = 10
    description = "Registra l'autolettura del contatore (comunicare la lettura) del cliente."
    executable_instruction = (
        "autolettura: true when the user wants to send (comunicare, inviare, registrare) "
        "their reading of the water counter (autolettura, lettura del contatore)."
    )
    routing_examples = (
        "Vorrei comunicare l'autolettura: il contatore segna 1234.",
        "Registra la mia lettura del contatore, codice cliente AC-123456.",
        "Invio l'autolettura 987 per il codice AC-654321.",
    )
    not_for = (
        "Come si legge il contatore?",
        "Quando si può comunicare l'autolettura?",
        "Dove si trova il contatore?",
        "Quanto costa l'acqua al metro cubo?",
    )
    returns_answer = True
    side_effects = True
    request_model = AutoletturaRequest
    instruction = (
        "Fill codice_cliente with the customer code (AC- and six digits) and lettura with "
        "the black digits of the meter, in cubic metres."
    )
    required_inputs = ("codice_cliente", "lettura")
    ask_for_missing_inputs = True
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "SENDING": {"it": "Invio l'autolettura", "en": "Sending the meter reading"}
    }

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url

    def _body(self, request: AutoletturaRequest) -> dict[str, Any]:
        return {"codice_cliente": request.codice_cliente, "lettura": request.lettura}

    def _answer(self, request: AutoletturaRequest, reply: dict[str, Any]) -> ToolResult:
        text = (
            f"Autolettura registrata: {request.lettura} metri cubi per il cliente "
            f"{request.codice_cliente} (protocollo {reply['protocollo']})."
        )
        return ToolResult.as_answer(self.name, text)

    def execute(self, request: AutoletturaRequest, ctx: ToolCallContext) -> ToolResult | None:
        ctx.progress("SENDING")
        post = urllib.request.Request(
            f"{backend_url(self.base_url)}/autoletture",
            data=json.dumps(self._body(request)).encode(),
            headers={"Content-Type": "application/json", "Idempotency-Key": ctx.idempotency_key},
            method="POST",
        )
        with urllib.request.urlopen(post, timeout=30) as response:
            return self._answer(request, json.loads(response.read()))

    async def aexecute(
        self, request: AutoletturaRequest, ctx: ToolCallContext
    ) -> ToolResult | None:
        ctx.progress("SENDING")
        async with httpx.AsyncClient(base_url=backend_url(self.base_url), timeout=30) as client:
            response = await client.post(
                "/autoletture",
                json=self._body(request),
                headers={"Idempotency-Key": ctx.idempotency_key},
            )
            response.raise_for_status()
            return self._answer(request, response.json())


# --- a gate on the person (T4): payment plans for logged-in customers ---------------------

BALANCES = {"AC-123456": 420.0, "AC-654321": 96.0}


def euro(amount: float) -> str:
    """An amount the Italian way: 1.234,50."""
    return f"{amount:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")


class Rateizzazione(ChatbotTool[EmptyRequest]):
    name = "rateizzazione"
    domain = DOMAIN
    description = "Piano di rateizzazione della bolletta del cliente registrato."
    executable_instruction = (
        "rateizzazione: true when the user asks to pay a bill in instalments (a rate, "
        "rateizzare, rateizzazione, piano di pagamento)."
    )
    routing_examples = (
        "Posso pagare la bolletta a rate?",
        "Vorrei rateizzare la mia bolletta.",
    )

    def is_eligible(self, user_data: dict[str, Any] | None) -> bool:
        return bool((user_data or {}).get("codice_cliente"))

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        code = str((ctx.user_data or {}).get("codice_cliente"))
        balance = BALANCES.get(code)
        if balance is None:
            return None
        if balance <= 150:
            text = (
                f"La sua bolletta aperta è di {euro(balance)} euro: sotto i 150 euro "
                "non si può rateizzare."
            )
        else:
            text = (
                f"La sua bolletta aperta è di {euro(balance)} euro: si può pagare in 3-12 rate "
                f"mensili, per esempio 12 rate da {euro(balance / 12)} euro."
            )
        return ToolResult.as_guaranteed_context(self.name, text)


# --- a finished answer (R3): the emergency number -----------------------------------------


class NumeroGuasti(ChatbotTool[EmptyRequest]):
    name = "numero_guasti"
    domain = DOMAIN
    priority = 5
    returns_answer = True
    description = "Il numero del pronto intervento per guasti e perdite d'acqua."
    executable_instruction = (
        "numero_guasti: true when the user reports a leak or a burst pipe (perdita, "
        "guasto, tubo rotto, allagamento) or asks for the emergency number (pronto "
        "intervento)."
    )
    routing_examples = (
        "C'è una perdita d'acqua in strada, chi chiamo?",
        "Si è rotto un tubo, qual è il numero del pronto intervento?",
        "Numero per i guasti dell'acquedotto?",
    )
    not_for = ("Come funziona il bonus perdite occulte?",)

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        text = "Pronto intervento guasti e perdite: 800 112 233, gratuito e attivo 24 ore su 24."
        source = UniqueTextDocument(
            document_id="pronto-intervento",
            document_name="Pronto intervento",
            document_url=f"{SITE}/pronto-intervento",
            sentence_number=1,
            text=text,
        )
        return ToolResult.as_answer(self.name, text, sources=[source])


# --- a tool the page runs (W3): the new-connection form -----------------------------------

MODULO_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "uso": {
                "type": "string",
                "enum": ["domestico", "commerciale"],
                "description": "L'uso dell'allacciamento",
            },
            "indirizzo": {"type": "string", "description": "L'indirizzo dell'immobile"},
        },
    }
)


@ai_tool_script("js/compila_modulo_allacciamento.js")
class CompilaModuloAllacciamento(AiTool):
    def define(self, builder: AiToolBuilder) -> None:
        (
            builder.id("compila_modulo_allacciamento")
            .name("Modulo A1 di allacciamento")
            .user_description("Compila il modulo A1 di nuovo allacciamento nella pagina.")
            .ai_description(
                "true when the user asks to fill in (compilare) the form (modulo A1) for a "
                "new connection (nuovo allacciamento)"
            )
            .input_json_schema(MODULO_SCHEMA)
            .scope(AiToolScope.CLIENT)
        )

    def execute(self, input: str, ctx: AiToolContext = NO_CONTEXT) -> str:
        raise RuntimeError("a CLIENT tool never runs on the server (W3)")


def acquedotto_tools(base_url: str | None = None) -> list[ChatbotTool[Any]]:
    """The utility's own chatbot tools (the page tool comes through ``as_chatbot_tools``)."""
    return [
        InterruzioniProgrammate(base_url),
        Autolettura(base_url),
        Rateizzazione(),
        NumeroGuasti(),
    ]
