"""The sports centre's own tools: a booking that acts, a price and the court hours."""

from __future__ import annotations

import os
import re
from typing import Literal

import httpx
from pydantic import BaseModel, Field

from toolweave import (
    ChatbotTool,
    ClarifiableTool,
    EmptyRequest,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    fold,
)

DOMAIN = "polideportivo"
DEPORTES = ("pádel", "tenis", "baloncesto", "fútbol sala")
PRECIO_HORA = {"pádel": 12.0, "tenis": 10.0, "baloncesto": 20.0, "fútbol sala": 30.0}
DESCUENTO_SOCIO = 0.40
# where the booking backend listens; the tests start it on 127.0.0.1 and set it here
BACKEND: dict[str, str] = {}

Deporte = Literal["pádel", "tenis", "baloncesto", "fútbol sala"]


def deporte_en(text: str) -> str | None:
    """The sport a text names, or None."""
    folded = fold(text)
    if "padel" in folded:
        return "pádel"
    if "tenis" in folded:
        return "tenis"
    if "baloncesto" in folded or "basket" in folded:
        return "baloncesto"
    if "futbol" in folded or "futsal" in folded:
        return "fútbol sala"
    return None


def horas_en(text: str) -> int:
    match = re.search(r"(\d+)\s*horas?", fold(text))
    return int(match.group(1)) if match else 1


def euros(amount: float) -> str:
    return f"{amount:.2f}".replace(".", ",") + " €"


def backend_url() -> str:
    url = BACKEND.get("url") or os.environ.get("POLIDEPORTIVO_RESERVAS_URL")
    if not url:
        raise RuntimeError("no booking backend configured")
    return url


class ReservaRequest(BaseModel):
    deporte: Deporte | None = Field(default=None, title="deporte")


class ReservarPista(ClarifiableTool[ReservaRequest]):
    name = "reservar_pista"
    domain = DOMAIN
    priority = 20
    side_effects = True
    returns_answer = True
    request_model = ReservaRequest
    description = "Reserva una pista (pádel, tenis, baloncesto, fútbol sala) para un socio."
    instruction = "Fill deporte with the sport the user wants to book a court for."
    executable_instruction = (
        "reservar_pista: true when the user asks to book a court: reservar una pista, "
        "reserva de pista de pádel, tenis, baloncesto o fútbol sala."
    )
    routing_examples = (
        "Quiero reservar una pista de pádel.",
        "Resérvame una pista de tenis para el sábado.",
        "Reservar pista de baloncesto.",
    )
    not_for = (
        "¿Cuánto cuesta reservar una pista de pádel?",
        "¿Se pueden anular las reservas?",
    )

    def is_eligible(self, user_data: dict[str, object] | None) -> bool:  # socios only (T4)
        return bool((user_data or {}).get("socio_id"))

    async def aexecute(self, request: ReservaRequest, ctx: ToolCallContext) -> ToolResult | None:
        deporte = request.deporte or deporte_en(ctx.text)
        if deporte is None:
            return ToolResult.clarification(
                self.name, "¿Para qué deporte quiere reservar la pista?", list(DEPORTES)
            )
        return await self._reservar(deporte, ctx)

    async def aexecute_with_clarification(
        self, request: ReservaRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        deporte = deporte_en(reply) or request.deporte
        if deporte is None:
            return ToolResult.clarification(
                self.name, "¿Para qué deporte quiere reservar la pista?", list(DEPORTES)
            )
        return await self._reservar(deporte, ctx)

    async def _reservar(self, deporte: str, ctx: ToolCallContext) -> ToolResult:
        ctx.progress("RESERVANDO")
        socio = str((ctx.user_data or {}).get("socio_id", ""))
        async with httpx.AsyncClient(base_url=backend_url(), timeout=10) as client:
            response = await client.post(
                "/reservas",
                json={"socio": socio, "deporte": deporte},
                headers={"Idempotency-Key": ctx.idempotency_key},
            )
            response.raise_for_status()
            numero = response.json()["numero"]
        return ToolResult.as_answer(
            self.name, f"Reserva confirmada: pista de {deporte}, número R-{numero}."
        )


class Tarifas(ChatbotTool[EmptyRequest]):
    name = "tarifas"
    domain = DOMAIN
    priority = 30
    returns_answer = True
    description = "Calcula el precio de alquilar una pista: por horas, tarifa de socio."
    executable_instruction = (
        "tarifas: true when the user asks how much a court costs (cuánto cuesta, precio, "
        "tarifa) for pádel, tenis, baloncesto o fútbol sala."
    )
    routing_examples = (
        "¿Cuánto cuesta una hora de pádel?",
        "Precio de la pista de tenis para socios.",
        "Tarifa de dos horas de fútbol sala.",
    )
    not_for = ("¿Cuánto cuesta la cuota de socio?",)

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        deporte = deporte_en(ctx.text)
        if deporte is None:
            return None
        ctx.progress("CALCULANDO")
        horas = horas_en(ctx.text)
        socio = "socio" in fold(ctx.text) or bool((ctx.user_data or {}).get("socio_id"))
        total = PRECIO_HORA[deporte] * horas * ((1 - DESCUENTO_SOCIO) if socio else 1)
        tarifa = "tarifa de socio" if socio else "tarifa general"
        plural = "hora" if horas == 1 else "horas"
        return ToolResult.as_answer(
            self.name, f"Precio: {deporte}, {horas} {plural}, {tarifa}: {euros(total)}."
        )


HORARIO_PISTAS = (
    "Las pistas de pádel y tenis se pueden usar de 8:00 a 22:00.",
    "Las pistas del pabellón se pueden usar de 9:00 a 21:00.",
    "Los domingos las pistas cierran a las 14:00.",
)


class Horarios(ChatbotTool[EmptyRequest]):
    name = "horarios"
    domain = DOMAIN
    priority = 40
    description = "Horario de uso de las pistas del polideportivo."
    executable_instruction = (
        "horarios: true when the user asks at what time the courts can be used "
        "(horario de las pistas, a qué hora)."
    )
    routing_examples = ("¿Cuál es el horario de las pistas?", "¿A qué hora cierran las pistas?")

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="horario-pistas",
                    document_name="Horario de pistas",
                    document_url="https://deportes.villaejemplo.example/pistas",
                    sentence_number=n,
                    text=line,
                )
                for n, line in enumerate(HORARIO_PISTAS, start=1)
            ],
        )


def own_tools() -> list[ChatbotTool[object]]:
    return [ReservarPista(), Tarifas(), Horarios()]  # type: ignore[list-item]
