"""A university registrar's tools, written from toolweave's README and docs alone.

Five tools over eight pages of the registrar's own documents (tuition fees, instalments,
refunds, ...):

- ``enrol_course`` acts: it writes a row to the ``enrolments`` table, once per
  ``ctx.idempotency_key`` (Q6), and asks which course when the question names none (Q1);
- ``exam_timetable`` looks an exam up (context, R2);
- ``view_grades`` shows a student's grades, only to an enrolled student (T4);
- ``library_fines`` is for the library system only (T3).

The ``enrolments`` table is an in-memory SQLite table whose ``acted`` column counts how
often the tool really acted: a test reads it to prove the side effect happened once.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    ChatbotTool,
    ClarifiableTool,
    Domain,
    EmptyRequest,
    SqliteDocumentStore,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    documents_domain,
    ingest,
)

PAGES = Path(__file__).parent / "pages"

COURSES = {
    "COMP101": "Introduction to Programming",
    "MATH120": "Linear Algebra",
    "HIST210": "Modern European History",
}
EXAMS = {
    "COMP101": "COMP101 Introduction to Programming: written exam on 12 January 2028, "
    "09:30, Great Hall.",
    "MATH120": "MATH120 Linear Algebra: written exam on 14 January 2028, 14:00, Room B12.",
    "HIST210": "HIST210 Modern European History: essay exam on 19 January 2028, "
    "10:00, Library Hall.",
}
GRADES = {
    "S100": [
        "COMP101 Introduction to Programming: 72 (first class).",
        "MATH120 Linear Algebra: 64.",
    ],
}
LIBRARY_FINES = {"S100": "You owe the library 3.20 pounds for one overdue book."}

Course = Literal["COMP101", "MATH120", "HIST210"]


class Enrolments:
    """The enrolments table: one row per idempotency key; ``acted`` counts real inserts."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute(
            "CREATE TABLE enrolments"
            " (key TEXT PRIMARY KEY, student TEXT, course TEXT, number INTEGER)"
        )
        self.lock = threading.Lock()
        self.acted = 0
        self.keys: list[str] = []  # every key the tool was called with, in order

    def enrol(self, key: str, student: str, course: str) -> int:
        with self.lock, self.db:
            self.keys.append(key)
            row = self.db.execute("SELECT number FROM enrolments WHERE key = ?", (key,)).fetchone()
            if row is not None:
                return int(row[0])  # a repeated call: the enrolment it made the first time
            number = 1 + self.db.execute("SELECT COUNT(*) FROM enrolments").fetchone()[0]
            self.db.execute(
                "INSERT INTO enrolments VALUES (?, ?, ?, ?)", (key, student, course, number)
            )
            self.acted += 1
            return int(number)

    def rows(self) -> list[tuple[str, str, int]]:
        with self.lock:
            return [
                (s, c, n)
                for s, c, n in self.db.execute(
                    "SELECT student, course, number FROM enrolments ORDER BY number"
                )
            ]


class EnrolRequest(BaseModel):
    course: Course | None = Field(
        default=None,
        title="course",
        description="The course code the student wants to enrol on",
    )


def course_in(text: str) -> str | None:
    """The course a text names, by code or by title (case-insensitive)."""
    folded = text.casefold()
    for code, title in COURSES.items():
        if code.casefold() in folded or title.casefold() in folded:
            return code
    return None


class EnrolCourse(ClarifiableTool[EnrolRequest]):
    name = "enrol_course"
    domain = "registrar"
    priority = 20
    side_effects = True
    returns_answer = True
    request_model = EnrolRequest
    description = "Enrols the signed-in student on a course."
    instruction = "Fill course with the course code the student wants to enrol on."
    executable_instruction = (
        "enrol_course: true when the student asks to enrol, register or sign up on a course."
    )
    routing_examples = (
        "Please enrol me on COMP101.",
        "Sign me up for Linear Algebra.",
        "I want to enrol on a course.",
    )
    not_for = ("When is the COMP101 exam?", "How much does a 20-credit module cost?")
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "ENROLLING": {"en": "Writing your enrolment"}
    }

    def __init__(self, table: Enrolments) -> None:
        self.table = table

    def is_eligible(self, user_data: Mapping[str, Any] | None) -> bool:
        return bool((user_data or {}).get("student_id"))

    def execute(self, request: EnrolRequest, ctx: ToolCallContext) -> ToolResult | None:
        course = request.course or course_in(ctx.task.task_prompt or ctx.text)
        if course is None:
            return ToolResult.clarification(
                self.name, "Which course would you like to enrol on?", list(COURSES.values())
            )
        return self.enrol(course, ctx)

    def execute_with_clarification(
        self, request: EnrolRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        course = course_in(reply)
        if course is None:
            return ToolResult.clarification(
                self.name, "Which course would you like to enrol on?", list(COURSES.values())
            )
        return self.enrol(course, ctx)

    def enrol(self, course: str, ctx: ToolCallContext) -> ToolResult:
        ctx.progress("ENROLLING")
        student = str((ctx.user_data or {})["student_id"])
        number = self.table.enrol(ctx.idempotency_key, student, course)
        return ToolResult.as_answer(
            self.name,
            f"You are enrolled on {course} {COURSES[course]} (enrolment E-{number}).",
        )


class ExamRequest(BaseModel):
    course: Course | None = Field(default=None, description="The course code of the exam")


class ExamTimetable(ChatbotTool[ExamRequest]):
    name = "exam_timetable"
    domain = "registrar"
    request_model = ExamRequest
    description = "The date, time and room of each course's exam."
    instruction = "Fill course with the course code whose exam the user asks about."
    executable_instruction = (
        "exam_timetable: true when the user asks when or where the exam of a course is."
    )
    routing_examples = ("When is the COMP101 exam?", "Where is the Linear Algebra exam held?")

    def execute(self, request: ExamRequest, ctx: ToolCallContext) -> ToolResult | None:
        course = request.course or course_in(ctx.task.task_prompt or ctx.text)
        if course is None:
            return None
        ctx.progress("FETCHING_DATA")
        return ToolResult.as_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="exam-timetable",
                    document_name="Exam timetable, January 2028",
                    document_url="https://registrar.example.edu/exams/timetable",
                    sentence_number=1,
                    text=EXAMS[course],
                )
            ],
        )


class ViewGrades(ChatbotTool[EmptyRequest]):
    name = "view_grades"
    domain = "registrar"
    description = "The signed-in student's grades this year."
    executable_instruction = "view_grades: true when the student asks for their grades or marks."
    routing_examples = ("What are my grades?", "Show me my marks.")

    def is_eligible(self, user_data: Mapping[str, Any] | None) -> bool:
        data = user_data or {}
        return bool(data.get("student_id")) and data.get("status") == "enrolled"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        student = str((ctx.user_data or {})["student_id"])
        lines = GRADES.get(student, ["No grades are recorded for you yet."])
        return ToolResult.as_guaranteed_context(
            self.name,
            [
                UniqueTextDocument(
                    document_id="grades",
                    document_name="Your grades",
                    sentence_number=n,
                    text=line,
                )
                for n, line in enumerate(lines, start=1)
            ],
        )


class LibraryFines(ChatbotTool[EmptyRequest]):
    name = "library_fines"
    domain = "registrar"
    eligible_system = "library"
    returns_answer = True
    description = "What the student owes the university library."
    executable_instruction = "library_fines: true when the student asks what they owe the library."
    routing_examples = ("Do I owe the library anything?", "What are my library fines?")

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        student = str((ctx.user_data or {}).get("student_id", ""))
        return ToolResult.as_answer(
            self.name, LIBRARY_FINES.get(student, "You owe the library nothing.")
        )


SYSTEM_PROMPT = (
    "You answer questions for students of the university registrar: enrolment, exams, "
    "grades and tuition fees. Answer only from the context."
)


def registrar_domain(
    table: Enrolments | None = None,
) -> tuple[Domain, list[ChatbotTool[Any]], Enrolments]:
    """The registrar's domain, its tools and the enrolments table they write to."""
    table = table or Enrolments()
    store = SqliteDocumentStore(":memory:", stopwords=["university", "registrar"])
    ingest([PAGES], store, domain="registrar")
    own: list[ChatbotTool[Any]] = [
        EnrolCourse(table),
        ExamTimetable(),
        ViewGrades(),
        LibraryFines(),
    ]
    domain, tools = documents_domain(
        "registrar", store, tools=own, system_prompt=SYSTEM_PROMPT, default_language="en"
    )
    return domain, list(tools), table
