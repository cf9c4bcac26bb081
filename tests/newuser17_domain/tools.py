"""The clinic's own tools: the vets' planning (context), the emergency number (a finished
answer), an appointment (acts, asks which slot) and boarding (registered clients, acts)."""

from __future__ import annotations

import json
import os
from typing import Any, ClassVar, Literal
from urllib.parse import quote
from urllib.request import Request, urlopen

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

DOMAIN = "clinique"
Jour = Literal["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi"]
PRICE_A_NIGHT = {"chat": 18, "lapin": 12, "furet": 12}
URGENCES_URL = "https://clinique-des-tilleuls.example.fr/urgences"


def api_url() -> str:
    """Where the booking back end listens (``CLINIQUE_API_URL``)."""
    return os.environ.get("CLINIQUE_API_URL", "http://127.0.0.1:8765")


def get_json(path: str) -> Any:
    with urlopen(api_url() + path, timeout=10) as response:
        return json.loads(response.read())


def post_json(path: str, body: dict[str, Any], key: str) -> dict[str, Any]:
    request = Request(
        api_url() + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Idempotency-Key": key},
        method="POST",
    )
    with urlopen(request, timeout=10) as response:
        record: dict[str, Any] = json.loads(response.read())
        return record


def slot_label(slot: dict[str, str]) -> str:
    return f"{slot['jour']} {slot['heure']} avec {slot['veterinaire']}"


class JourRequest(BaseModel):
    jour: Jour | None = Field(default=None, title="jour")


class Disponibilites(ChatbotTool[JourRequest]):
    """Context (R2): which vet consults on a day, from the back end's planning."""

    name = "disponibilites"
    domain = DOMAIN
    description = "Le planning des vétérinaires : qui consulte quel jour, créneaux libres."
    executable_instruction = (
        "disponibilites: vrai quand l'utilisateur demande quels vétérinaires sont présents, "
        "qui consulte un jour donné, le planning ou les créneaux libres."
    )
    routing_examples = (  # no weekday: a day is the question's argument, not its subject
        "Quels vétérinaires sont présents ce jour-là ?",
        "Qui consulte à la clinique ?",
        "Quels créneaux sont libres ?",
    )
    request_model = JourRequest
    instruction = "Remplir jour avec le jour de la semaine demandé."
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "FETCHING_DATA": {"fr": "Je consulte le planning des vétérinaires"}
    }

    def execute(self, request: JourRequest, ctx: ToolCallContext) -> ToolResult | None:
        if request.jour is None:
            return None
        ctx.progress("FETCHING_DATA")
        slots = get_json(f"/creneaux?jour={quote(request.jour)}")
        lines = [
            f"Le {s['jour']}, {s['veterinaire']} est présent et consulte à {s['heure']}."
            for s in slots
        ]
        if not lines:
            lines = [f"Aucun vétérinaire ne consulte le {request.jour}."]
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="planning",
                    document_name="Planning des vétérinaires",
                    document_url=api_url() + "/creneaux",
                    sentence_number=n,
                    text=line,
                )
                for n, line in enumerate(lines, start=1)
            ],
        )


URGENCE_TEXT = (
    "En dehors des heures d'ouverture, appelez le vétérinaire de garde au 04 78 99 00 11. "
    "Pendant les heures d'ouverture, appelez la clinique au 04 78 12 34 56. "
    "Appelez avant de venir."
)


class NumeroUrgence(ChatbotTool[EmptyRequest]):
    """A finished answer (R3): the emergency numbers."""

    name = "numero_urgence"
    domain = DOMAIN
    returns_answer = True
    description = "Le numéro du vétérinaire de garde pour une urgence."
    executable_instruction = (
        "numero_urgence: vrai quand l'utilisateur demande quel numéro appeler en urgence "
        "ou le numéro du vétérinaire de garde."
    )
    routing_examples = (
        "Quel est le numéro du vétérinaire de garde ?",
        "Mon animal s'est fait renverser, qui appeler en urgence ?",
        "Quel numéro appeler la nuit pour une urgence ?",
    )
    not_for = ("Combien coûte une consultation d'urgence ?",)

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        source = UniqueTextDocument(
            document_id="urgences",
            document_name="Urgences vétérinaires",
            document_url=URGENCES_URL,
            sentence_number=1,
            text=URGENCE_TEXT,
        )
        return ToolResult.as_answer(self.name, URGENCE_TEXT, sources=[source])


class RendezVousRequest(BaseModel):
    jour: Jour | None = Field(default=None, title="jour")
    veterinaire: Literal["Martin", "Dubois"] | None = Field(default=None, title="vétérinaire")


class PrendreRendezVous(ClarifiableTool[RendezVousRequest]):
    """Acts (Q6, S5): books a slot under the call's key; asks which one when several fit."""

    name = "prendre_rendez_vous"
    domain = DOMAIN
    priority = 20
    returns_answer = True
    side_effects = True
    description = "Prend un rendez-vous avec un vétérinaire de la clinique."
    executable_instruction = (
        "prendre_rendez_vous: vrai quand l'utilisateur veut prendre, réserver ou fixer un "
        "rendez-vous (rdv) avec un vétérinaire."
    )
    routing_examples = (
        "Je voudrais prendre rendez-vous mardi.",
        "Pouvez-vous me réserver un rendez-vous avec le docteur Martin lundi ?",
        "Je souhaite un rendez-vous pour mon chien vendredi.",
    )
    not_for = (
        "Comment annuler un rendez-vous ?",
        "Combien de temps dure un rendez-vous ?",
        "Je voudrais réserver la pension pour mon chat.",  # not an appointment (A9)
    )
    request_model = RendezVousRequest
    instruction = "Remplir jour avec le jour voulu, veterinaire avec le nom du vétérinaire."
    required_inputs = ("jour",)
    ask_for_missing_inputs = True

    def slots(self, request: RendezVousRequest) -> list[dict[str, str]]:
        found: list[dict[str, str]] = get_json(f"/creneaux?jour={quote(request.jour or '')}")
        vet = request.veterinaire
        return [s for s in found if vet is None or vet in s["veterinaire"]]

    def execute(self, request: RendezVousRequest, ctx: ToolCallContext) -> ToolResult | None:
        slots = self.slots(request)
        if not slots:
            return ToolResult.as_answer(
                self.name, f"Aucun créneau libre le {request.jour}. Choisissez un autre jour."
            )
        if len(slots) > 1:
            return ToolResult.clarification(
                self.name, "Quel créneau vous convient ?", [slot_label(s) for s in slots]
            )
        return self.book(slots[0], ctx)

    def execute_with_clarification(
        self, request: RendezVousRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        slots = self.slots(request)
        said = fold(reply)
        chosen = [s for s in slots if fold(slot_label(s)) == said] or [
            s
            for s in slots
            if fold(s["heure"]) in said or fold(s["veterinaire"].split()[-1]) in said
        ]
        if len(chosen) != 1:
            return ToolResult.clarification(
                self.name, "Quel créneau vous convient ?", [slot_label(s) for s in slots]
            )
        return self.book(chosen[0], ctx)

    def book(self, slot: dict[str, str], ctx: ToolCallContext) -> ToolResult:
        record = post_json("/rendez-vous", slot, ctx.idempotency_key)
        return ToolResult.as_answer(
            self.name,
            f"Rendez-vous confirmé : {slot_label(slot)} (n° {record['numero']}).",
        )


class PensionRequest(BaseModel):
    animal: Literal["chat", "lapin", "furet"] | None = Field(default=None, title="animal")
    nuits: int | None = Field(
        default=None, title="nombre de nuits", json_schema_extra={"after_cues": ["pour"]}
    )


class ReserverPension(ChatbotTool[PensionRequest]):
    """Registered clients only (T4); acts (Q6): books boarding under the call's key."""

    name = "reserver_pension"
    domain = DOMAIN
    priority = 20
    returns_answer = True
    side_effects = True
    description = "Réserve la pension d'un animal pour un client inscrit."
    executable_instruction = (
        "reserver_pension: vrai quand l'utilisateur veut réserver la pension (garde) de "
        "son animal pour des nuits."
    )
    routing_examples = (
        "Je voudrais réserver la pension pour mon chat pour 3 nuits.",
        "Réservez la pension de mon lapin pour 5 nuits.",
    )
    not_for = ("Combien coûte la pension ?", "Gardez-vous les chiens en pension ?")
    request_model = PensionRequest
    instruction = "Remplir animal avec l'animal, nuits avec le nombre de nuits."
    required_inputs = ("animal", "nuits")
    ask_for_missing_inputs = True

    def is_eligible(self, user_data: dict[str, Any] | None) -> bool:
        return bool((user_data or {}).get("numero_client"))

    def execute(self, request: PensionRequest, ctx: ToolCallContext) -> ToolResult | None:
        animal, nuits = request.animal or "chat", request.nuits or 1
        body = {"client": ctx.user_data["numero_client"], "animal": animal, "nuits": nuits}
        record = post_json("/pension", body, ctx.idempotency_key)
        price = PRICE_A_NIGHT[animal] * nuits
        return ToolResult.as_answer(
            self.name,
            f"Pension réservée : {animal}, {nuits} nuits, {price} euros (n° {record['numero']}).",
        )


def own_tools() -> list[ChatbotTool[Any]]:
    return [Disponibilites(), NumeroUrgence(), PrendreRendezVous(), ReserverPension()]
