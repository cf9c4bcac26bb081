"""The student services desk's own tools: a counselling booking (acts, asks which campus
and which day), a coordinator that splits a two-part question, and a form the browser
fills (a client AI tool)."""

from __future__ import annotations

import re
import threading
from typing import Any, Literal

from pydantic import BaseModel, Field

from toolweave import (
    AgentCoordinator,
    AiTool,
    AiToolBuilder,
    AiToolRegistry,
    AiToolScope,
    ChatbotTool,
    EmptyRequest,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    ai_tool_script,
    as_chatbot_tools,
)

DOMAIN = "northfield"
Campus = Literal["Riverside", "Hillcrest"]
Day = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


class Bookings:
    """The counselling service's diary: one appointment per idempotency key.

    ``calls`` counts every call the library made, ``appointments`` what was booked."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[str] = []
        self.appointments: dict[str, dict[str, str]] = {}

    def book(self, key: str, student: str, campus: str, day: str) -> str:
        with self.lock:
            self.calls.append(key)
            if key not in self.appointments:
                number = f"C-{len(self.appointments) + 1:03d}"
                self.appointments[key] = {
                    "number": number,
                    "student": student,
                    "campus": campus,
                    "day": day,
                }
            return self.appointments[key]["number"]


DIARY = Bookings()


def student_of(user_data: dict[str, Any] | None) -> str | None:
    value = (user_data or {}).get("student_id")
    return str(value) if value else None


class CounsellingRequest(BaseModel):
    campus: Campus | None = Field(default=None, title="campus")
    day: Day | None = Field(default=None, title="day")


class BookCounselling(ChatbotTool[CounsellingRequest]):
    name = "book_counselling"
    domain = DOMAIN
    priority = 20
    description = "Books a counselling appointment for the student at a campus on a weekday."
    executable_instruction = (
        "book_counselling: true when the user asks to book (schedule) a counselling "
        "appointment for themselves."
    )
    routing_examples = (
        "Please book a counselling appointment for me.",
        "I would like to book a session with a counsellor.",
        "Can you schedule a counselling appointment for me?",
    )
    not_for = (
        "Is counselling free?",
        "How long is a counselling appointment?",
        "Where can I see a counsellor?",
    )
    returns_answer = True
    side_effects = True
    request_model = CounsellingRequest
    instruction = "Fill campus and day as the student said them."
    required_inputs = ("campus", "day")
    ask_for_missing_inputs = True

    def is_eligible(self, user_data: dict[str, Any] | None) -> bool:
        return student_of(user_data) is not None  # enrolled students only (T4)

    def execute(self, request: CounsellingRequest, ctx: ToolCallContext) -> ToolResult | None:
        student = student_of(ctx.user_data) or ""
        assert request.campus
        assert request.day
        number = DIARY.book(ctx.idempotency_key, student, request.campus, request.day)
        return ToolResult.as_answer(
            self.name,
            f"Booked: counselling appointment {number} at the {request.campus} campus "
            f"on {request.day}.",
        )


_SPLIT = re.compile(
    r"^(?P<first>(?:when|where|what|how|is|can|do)\b.+?)\s+and\s+"
    r"(?P<second>(?:when|where|what|how|is|can|do)\b.+)$",
    re.IGNORECASE,
)
_SUBJECT = re.compile(r"\b(?:is|are)\s+(?P<subject>the\s+[\w\- ]+?)\s*$", re.IGNORECASE)


def split_question(text: str) -> list[str] | None:
    """ "When is the re-sit exam and how much does it cost?" -> both parts, "it" named."""
    match = _SPLIT.match(text.strip().rstrip("?").strip())
    if match is None:
        return None
    first, second = match.group("first"), match.group("second")
    subject = _SUBJECT.search(first)
    if subject is not None:
        second = re.sub(r"\bit\b", subject.group("subject"), second, count=1)
    return [first[0].upper() + first[1:] + "?", second[0].upper() + second[1:] + "?"]


class TwoPartSplitter(ChatbotTool[EmptyRequest], AgentCoordinator):
    name = "two_part_splitter"
    domain = DOMAIN
    executable_instruction = None  # never routed itself

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        parts = split_question(task.task_prompt)
        if parts is None:
            return task  # not mine: unchanged (C1)
        task.sub_tasks = [TaskInfo(task_no="", task_prompt=part) for part in parts]
        return task

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        return None


FORM_SCHEMA = """
{"type": "object",
 "properties": {"reason": {"type": "string", "enum": ["lost", "damaged", "name change"],
                           "description": "Why a new card is needed"}}}
"""

registry = AiToolRegistry()


@registry.component
@ai_tool_script("js/fill_id_card_form.js")
class FillIdCardForm(AiTool):
    def define(self, builder: AiToolBuilder) -> None:
        (
            builder.id("fill_form")
            .name("Replacement ID card form")
            .user_description("Fills in the replacement student ID card form on the page.")
            .ai_description(
                "true when the user asks to fill in (complete) the form on the page for them"
            )
            .input_json_schema(FORM_SCHEMA)
            .scope(AiToolScope.CLIENT)
            .side_effects()  # it fills the person's form: never on a yes in doubt (A9)
            .routing_examples(
                "Please fill in the form for me.", "Can you complete the form for me?"
            )
            .not_for("How much is a new card?", "Where do I collect my card?")
        )


def own_tools() -> list[ChatbotTool[Any]]:
    return [BookCounselling(), TwoPartSplitter(), *as_chatbot_tools(registry, domain=DOMAIN)]
