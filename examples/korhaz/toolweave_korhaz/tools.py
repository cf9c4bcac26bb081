"""The korhaz tools: ``department_info`` (seed 000 §3.6, expanded) and ``emergency_numbers``.

``department_info`` is a clarifiable tool (Q1): asked for consultation hours
with no department named, it asks which department, offering the known ones as
choices, and finishes the answer from the reply (Q2).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from toolweave.state.documents import UniqueTextDocument
from toolweave.state.results import ToolResult
from toolweave.tools.base import ChatbotTool, EmptyRequest, ToolCallContext
from toolweave.tools.consumers import ClarifiableTool
from toolweave.tools.search.text import fold
from toolweave_korhaz.corpus import DOMAIN_NAME, emergency_data
from toolweave_korhaz.departments import (
    TOPICS,
    Department,
    Topic,
    Weekday,
    asks_department_topic,
    department_sentences,
    departments,
    infer_topics,
    known_department_names,
    named_as,
    parse_weekday,
    pick_departments,
    resolve_departments,
)

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
_QUESTION = {
    "hu": "Melyik osztály? Írja be az osztály nevét vagy a sorszámát.",
    "en": "Which department? Type its name or its number in the list.",
}
_NOT_FOUND = {
    "hu": "Melyik osztály? Ilyen osztályt nem találtam: „{reply}”. "
    "Írja be az osztály nevét vagy a sorszámát.",
    "en": "Which department? I found no department called “{reply}”. "
    "Type its name or its number in the list.",
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


class DepartmentInfoTool(ClarifiableTool[DepartmentInfoRequest]):
    """Consultation and visiting hours, phone, location and head of a hospital department.

    The data come from the bundled ``data/departments.json``. When the question
    asks for a department's hours (or a department's phone, location or head)
    but names no department, the tool asks which one, with the known
    departments as choices (Q1); the reply (a name in either language, an
    inflected name, or a choice number) finishes the answer (Q2), and a reply
    naming no known department asks again. Returns ``None`` (R1) when the
    question is not about a department, or names one the registry does not
    know, so the domain's RAG retrieval answers instead. That is the tool's half
    of asking only when needed (``docs/concepts/clarification.md``); routing adds
    the library's half: on a doubtful yes its question is not asked (Q1, A9).
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
        "department_info: true when the user asks about a hospital department: "
        "its consultation or visiting hours, phone number, location or head physician, "
        "also when no department is named (the tool then asks which one). "
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
        """The department's facts as context (R2); ask which one (Q1); or ``None`` (R1)."""
        ctx.progress("FETCHING_DATA")
        question = ctx.task.task_prompt or ctx.text
        if request.department:
            named = resolve_departments(request.department) or resolve_departments(question)
            return self._answer(named, request, ctx) if named else None
        named = resolve_departments(question)
        if named:
            return self._answer(named, request, ctx)
        if asks_department_topic(question):
            return self._ask(_QUESTION, ctx.user_lang)
        return None

    def execute_with_clarification(
        self, request: DepartmentInfoRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        """Answer for the department(s) the reply picks, or ask again when it picks none (Q2)."""
        ctx.progress("FETCHING_DATA")
        named = pick_departments(reply, departments())
        if not named:
            return self._ask(_NOT_FOUND, ctx.user_lang, reply=reply.strip())
        return self._answer(named, request, ctx)

    def _ask(self, texts: dict[str, str], lang: str, reply: str = "") -> ToolResult:
        question = texts.get(lang, texts["en"]).format(reply=reply)
        choices = [dept.name(lang) for dept in departments()]
        return ToolResult.clarification(self.name, question, choices)

    def _answer(
        self, named: list[Department], request: DepartmentInfoRequest, ctx: ToolCallContext
    ) -> ToolResult:
        question = ctx.task.task_prompt or ctx.text
        day = request.day or parse_weekday(question)
        # What the user wrote decides the topic; the model's pick from the closed set
        # only ranks (T7): a small model fills ``topic`` for any question, and the
        # sentence it is handed first is the one it answers from.
        written = infer_topics(question)
        picked: set[Topic] = {request.topic} if request.topic else set()
        if day is not None and not (written or picked):  # a day alone asks for its hours
            written = {"consultation_hours"}
        topics = written or picked
        label = "Osztályok" if ctx.user_lang == "hu" else "Departments"
        documents: list[UniqueTextDocument] = []
        for dept in named:
            title = f"{label}: {dept.name(ctx.user_lang)}"
            other = named_as(dept, question, ctx.user_lang)
            if other is not None:  # the user's word for it: "Kardiológia (szívgyógyászat)"
                title = f"{title} ({other})"
            asked_day = day if "consultation_hours" in topics else None  # visits: every day
            rows = department_sentences(dept, ctx.user_lang, asked_day)
            # The sentences of the topics the question writes, only: a model handed a
            # department's five facts answers a visiting question with the phone line.
            rows = [row for row in rows if row[0] in written] or rows
            for topic, number, text in rows:
                documents.append(
                    UniqueTextDocument(
                        document_id=f"departments.json#{dept.id}",
                        document_name=title,
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
    returns_answer = True
    request_model = EmptyRequest
    executable_instruction = (
        "emergency_numbers: true when the user reports an emergency or urgently needs help, "
        "or asks for an emergency phone number, the ambulance or 112. "
        "Sürgősségi telefonszám, mentő, segélyhívó szám, 112, életveszély, sürgős segítség."
    )
    routing_examples = (  # A9: described emergencies name no emergency keyword
        "Someone collapsed and is unconscious.",
        "He is not breathing and his lips are blue.",
        "She has severe chest pain, maybe a heart attack or a stroke.",
        "There is heavy bleeding that will not stop.",
        "My child is choking, having a seizure or swallowed poison.",
        "He fainted and we cannot wake him up.",
        "She took an overdose and does not respond.",
        "Összeesett, eszméletlen, nem lélegzik.",
        "Erős mellkasi fájdalom, szívroham, agyvérzés, görcsroham.",
        "Ömlik a vér, fullad, mérgezést kapott.",
        "Elájult, nem lehet felébreszteni, nem reagál.",
        "Túladagolta magát, nem reagál.",
    )
    not_for = (  # A9: information questions that share its words
        "What is the phone number of the cardiology department?",
        "Which number do I call to make an appointment?",
        "When is the emergency department open for visitors?",
        "Which department treats chest pain or heart problems?",
        "Mi a kardiológiai osztály telefonszáma?",
        "Milyen számon lehet időpontot foglalni?",
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
