"""Forced-only lookup tools of the korhaz coordinators: ``substance_lookup``, ``doctor_directory``.

Neither has a routing question (D4-like): they run only on subtasks whose
``required_tool_names`` name them (F1), and they answer with guaranteed
context (M6), a compact JSON object the owning coordinator parses on the parent
task (B4). They read the subtask's own prompt from the execution text with
:func:`extract_coordinator_task` (M5), so the parent's question in the prompt
context does not confuse them.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from toolweave.state.marker import extract_coordinator_task
from toolweave.state.results import ToolResult
from toolweave.tools.base import ChatbotTool, EmptyRequest, ToolCallContext
from toolweave.tools.consumers import ClarifiableTool
from toolweave_korhaz.corpus import DOMAIN_NAME
from toolweave_korhaz.doctors import find_doctors
from toolweave_korhaz.substances import (
    Mention,
    Substance,
    choose_candidate,
    find_mentions,
    substances,
)

SUBSTANCE_LOOKUP = "substance_lookup"
DOCTOR_DIRECTORY = "doctor_directory"

_QUESTION = {
    "en": "Which one did you mean by “{surface}”: {choices}?",
    "hu": "Melyikre gondolt („{surface}”): {choices}?",
}


def _all_names() -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for s in substances() for n in (s.name_en, s.name_hu, *s.aliases)))


class SubstanceLookupRequest(BaseModel):
    """What ``substance_lookup`` needs: the medicine named in the subtask."""

    substance: str | None = Field(
        default=None,
        description="The medicine, active substance or brand name the coordinator task names, "
        "as written there.",
        json_schema_extra={"known_values": list(_all_names())},
    )


class SubstanceLookupTool(ClarifiableTool[SubstanceLookupRequest]):
    """Resolves one medicine name to its active substance and interaction classes.

    Answers with guaranteed context (M6): ``{"query", "substance", "name",
    "classes", "about"}`` as JSON, or ``None`` for an unknown name (R1). A name
    that fits several substances (a brand family such as ``Enap``, or "blood
    thinner") gets a clarification question with the candidates as choices
    (Q1); the reply is resolved in :meth:`execute_with_clarification` (Q2).
    """

    name = SUBSTANCE_LOOKUP
    domain = DOMAIN_NAME
    priority = 40
    request_model = SubstanceLookupRequest
    instruction = (
        "substance: the medicine, active substance or brand name named in the coordinator "
        "task (the text after the coordinator marker), exactly as written there."
    )
    executable_instruction = None
    description = (
        "Medicine lookup: active substance, brand names and interaction classes "
        "(only on a drug-interaction coordinator's subtasks)."
    )

    def _mention(self, request: SubstanceLookupRequest, ctx: ToolCallContext) -> Mention | None:
        found = find_mentions(extract_coordinator_task(ctx.text))
        if not found and request.substance:
            found = find_mentions(request.substance)
        return found[0] if found else None

    def execute(self, request: SubstanceLookupRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Look the name up; ask which one when it is ambiguous; ``None`` when unknown."""
        ctx.progress("LOOKING_UP")
        mention = self._mention(request, ctx)
        if mention is None:
            return None
        if mention.ambiguous:
            return self._ask(mention, ctx.user_lang)
        return self._found(mention.surface, mention.candidates[0], ctx.user_lang)

    def execute_with_clarification(
        self, request: SubstanceLookupRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        """Resolve the user's pick (a number, a label or a name); ask again if it picks none."""
        mention = self._mention(request, ctx)
        if mention is None:
            return None
        chosen = choose_candidate(reply, mention.candidates)
        if chosen is None:
            return self._ask(mention, ctx.user_lang)
        return self._found(mention.surface, chosen, ctx.user_lang)

    def _ask(self, mention: Mention, lang: str) -> ToolResult:
        choices = [c.label(lang) for c in mention.candidates]
        question = _QUESTION.get(lang, _QUESTION["en"]).format(
            surface=mention.surface, choices=", ".join(choices)
        )
        return ToolResult.clarification(self.name, question, choices)

    def _found(self, surface: str, substance: Substance, lang: str) -> ToolResult:
        payload = {
            "query": surface,
            "substance": substance.id,
            "name": substance.name(lang),
            "classes": list(substance.classes),
            "about": substance.about(lang),
        }
        return ToolResult.as_guaranteed_context(self.name, json.dumps(payload, ensure_ascii=False))


class DoctorDirectoryTool(ChatbotTool[EmptyRequest]):
    """The cheap, narrow step of a doctor search: the bundled staff directory (K3).

    Needs no LLM call. Answers with guaranteed context (M6), JSON
    ``{"doctors": [{"id", "text"}]}``, or ``None`` when the directory has no
    doctor of that name, which lets the owner run the broad search.
    """

    name = DOCTOR_DIRECTORY
    domain = DOMAIN_NAME
    priority = 40
    request_model = EmptyRequest
    executable_instruction = None
    description = (
        "Staff directory: a doctor's department, room, consultation hours and phone "
        "(only on a doctor-finder coordinator's subtasks)."
    )

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The doctors the subtask names, or ``None`` when none is in the directory."""
        ctx.progress("FETCHING_DATA")
        found = find_doctors(extract_coordinator_task(ctx.text))
        ctx.progress("FOUND", detail=str(len(found)))
        if not found:
            return None
        payload = {"doctors": [{"id": d.id, "text": d.describe(ctx.user_lang)} for d in found]}
        return ToolResult.as_guaranteed_context(self.name, json.dumps(payload, ensure_ascii=False))


__all__ = [
    "DOCTOR_DIRECTORY",
    "SUBSTANCE_LOOKUP",
    "DoctorDirectoryTool",
    "SubstanceLookupRequest",
    "SubstanceLookupTool",
]
