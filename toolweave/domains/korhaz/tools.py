"""The korhaz tools: ``department_info`` (seed 000 §3.6, expanded) and ``emergency_numbers``."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from toolweave.domains.korhaz.corpus import DOMAIN_NAME, emergency_data
from toolweave.domains.korhaz.departments import (
    TOPICS,
    Topic,
    Weekday,
    department_sentences,
    departments,
    infer_topics,
    known_department_names,
    parse_weekday,
    resolve_departments,
)
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.results import ToolResult
from toolweave.tools.base import ChatbotTool, EmptyRequest, ToolCallContext
from toolweave.tools.search.text import fold

_TOPIC_ALIASES: dict[str, Topic] = {
    "rendel": "consultation_hours",
    "consult": "consultation_hours",
    "latogat": "visiting_hours",
    "visit": "visiting_hours",
    "telefon": "phone",
    "phone": "phone",
    "hely": "location",
    "locat": "location",
    "floor": "location",
    "emelet": "location",
    "head": "head",
    "vezet": "head",
    "foorvos": "head",
}
_MATCHED_SCORE = 1.0
_OTHER_SCORE = 0.6
_UNFOCUSED_SCORE = 0.8


def _score(topic: Topic, asked: set[Topic]) -> float:
    if not asked:
        return _UNFOCUSED_SCORE
    return _MATCHED_SCORE if topic in asked else _OTHER_SCORE


class DepartmentInfoRequest(BaseModel):
    """What ``department_info`` needs: which department, and optionally what about it."""

    department: str | None = Field(
        default=None,
        description="The hospital department the user asks about, as named in the text.",
        examples=[name for d in departments() for name in (d.name_hu, d.name_en)],
        json_schema_extra={"known_values": list(known_department_names())},
    )
    topic: Topic | None = Field(
        default=None,
        description="What the user wants to know: consultation hours, visiting hours, phone, "
        "location or head physician; null when not said.",
    )
    day: Weekday | None = Field(
        default=None, description="The weekday the user asks about, in English; null if none."
    )

    @field_validator("topic", mode="before")
    @classmethod
    def _topic(cls, value: object) -> object:
        if not isinstance(value, str) or value in TOPICS:
            return value
        folded = fold(value).replace(" ", "_")
        return next((t for key, t in _TOPIC_ALIASES.items() if folded.startswith(key)), None)

    @field_validator("day", mode="before")
    @classmethod
    def _day(cls, value: object) -> object:
        return value if value is None else parse_weekday(value)


class DepartmentInfoTool(ChatbotTool[DepartmentInfoRequest]):
    """Consultation and visiting hours, phone, location and head of a hospital department.

    The data come from the bundled ``data/departments.json``. Returns ``None``
    (R1) when the request names no known department, so the domain's RAG
    retrieval answers instead.
    """

    name = "department_info"
    domain = DOMAIN_NAME
    priority = 50
    request_model = DepartmentInfoRequest
    instruction = (
        "Fill the fields from the user's question. department: the hospital department "
        "(e.g. kardiológia, belgyógyászat, Surgery); topic: consultation_hours, visiting_hours, "
        "phone, location or head; day: the weekday asked about. Leave a field null when the "
        "question does not say. Az osztály nevét a kérdésben szereplő alakban add meg."
    )
    executable_instruction = (
        "department_info: true when the user asks about a specific hospital department: "
        "its consultation or visiting hours, phone number, location or head physician. "
        "Kórházi osztály rendelési ideje, látogatási ideje, telefonszáma, helye, főorvosa."
    )
    description = (
        "Hospital department details: consultation hours, visiting hours, phone number, "
        "building and floor, head physician. Kórházi osztályok rendelési ideje, "
        "látogatási ideje, telefonszáma, helye és osztályvezető főorvosa."
    )
    system_prompt_supplement = (
        "Department details come from the hospital's department registry. "
        "Az osztály-adatok az intézményi nyilvántartásból származnak."
    )

    def execute(self, request: DepartmentInfoRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Look the department up; its facts as context (R2), or ``None`` if none is named (R1)."""
        ctx.progress("FETCHING_DATA")
        question = ctx.task.task_prompt or ctx.text
        named = resolve_departments(request.department) if request.department else []
        if not named:
            named = resolve_departments(question)
        if not named:
            return None
        day = request.day or parse_weekday(question)
        topics: set[Topic] = {request.topic} if request.topic else infer_topics(question)
        if day is not None:
            topics.add("consultation_hours")
        label = "Osztályok" if ctx.user_lang == "hu" else "Departments"
        documents: list[UniqueTextDocument] = []
        for dept in named:
            for topic, number, text in department_sentences(dept, ctx.user_lang, day):
                documents.append(
                    UniqueTextDocument(
                        document_id=f"departments.json#{dept.id}",
                        document_name=f"{label}: {dept.name(ctx.user_lang)}",
                        document_url=f"https://korhaz.example/osztalyok/{dept.id}",
                        sentence_number=number,
                        text=text,
                        sentence_score=_score(topic, topics),
                    )
                )
        return ToolResult.as_context(self.name, documents)


class EmergencyNumbersTool(ChatbotTool[EmptyRequest]):
    """Emergency phone numbers as a finished answer (R3): no final LLM call is needed."""

    name = "emergency_numbers"
    domain = DOMAIN_NAME
    priority = 10
    request_model = EmptyRequest
    executable_instruction = (
        "emergency_numbers: true when the user reports an emergency or urgently needs help, "
        "or asks for an emergency phone number, the ambulance or 112. "
        "Sürgősségi telefonszám, mentő, segélyhívó szám, 112, életveszély, sürgős segítség."
    )
    description = (
        "Emergency numbers: 112, ambulance 104, the hospital's Emergency Department. "
        "Segélyhívó számok: 112, mentők 104, a kórház sürgősségi osztálya."
    )

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The emergency numbers in the user's language, as a finished answer (R3)."""
        data = emergency_data()
        lines = data.get(ctx.user_lang) or data["en"]
        return ToolResult.as_answer(self.name, "\n".join(lines))
