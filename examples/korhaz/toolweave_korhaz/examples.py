"""Example questions for the korhaz domain, with what a correct answer must contain.

The README lists them, and tests check that the offline model answers them.
``expected_tools`` are the tools that must run for the question; the domain's
default retrieval tool ``korhaz_search`` also runs beside routed tools (A5).
"""

from __future__ import annotations

from typing import NamedTuple


class ExampleQuestion(NamedTuple):
    """A question, the substrings a correct answer contains, and the tools that must run."""

    question: str
    expected_substrings: tuple[str, ...]
    expected_tools: tuple[str, ...]


EXAMPLE_QUESTIONS: list[ExampleQuestion] = [
    ExampleQuestion("Mikor van rendelés a kardiológián?", ("9:00-13:00",), ("department_info",)),
    ExampleQuestion(
        "When are visiting hours on the surgery ward?", ("16:00-18:00",), ("department_info",)
    ),
    ExampleQuestion("Mi a kardiológia telefonszáma?", ("+36 1 555 0130",), ("department_info",)),
    ExampleQuestion(
        "Who is the head of the paediatrics department?", ("Varga Gábor",), ("department_info",)
    ),
    ExampleQuestion("Hányadik emeleten van a belgyógyászat?", ("2. emelet",), ("department_info",)),
    ExampleQuestion("Mi a sürgősségi telefonszám?", ("112",), ("emergency_numbers",)),
    ExampleQuestion("What number should I call in an emergency?", ("112",), ("emergency_numbers",)),
    ExampleQuestion("Hol lehet parkolni a kórháznál?", ("Gyógyító utca 14",), ("korhaz_search",)),
    ExampleQuestion("Mennyi a parkolás díja?", ("500 Ft",), ("korhaz_search",)),
    ExampleQuestion(
        "Where is the pharmacy and when is it open?",
        ("Building A", "7:30-18:00"),
        ("korhaz_search",),
    ),
    ExampleQuestion("What should I bring for admission?", ("TAJ card",), ("korhaz_search",)),
    ExampleQuestion("When is the cafeteria open on weekends?", ("9:00-17:00",), ("korhaz_search",)),
    ExampleQuestion("Mikor van vérvétel a laborban?", ("6:30-10:00",), ("korhaz_search",)),
    ExampleQuestion("What is the wifi password?", ("gyogyulas2024",), ("korhaz_search",)),
]
"""Questions in Hungarian and English covering routed tools (R2, R3) and plain retrieval."""


COORDINATOR_EXAMPLES: list[ExampleQuestion] = [
    ExampleQuestion(
        "Szedhetek ibuprofent warfarin mellett?",
        ("súlyos kölcsönhatás", "vérzés", "nem orvosi tanács"),
        ("1.1:substance_lookup", "1.2:substance_lookup", "1:drug_interaction"),
    ),
    ExampleQuestion(
        "Can I take ibuprofen with warfarin?",
        ("major interaction", "bleeding", "not medical advice"),
        ("1.1:substance_lookup", "1.2:substance_lookup", "1:drug_interaction"),
    ),
    ExampleQuestion(
        "Can I take clarithromycin together with simvastatin?",
        ("major interaction", "myopathy"),
        ("1.1:substance_lookup", "1.2:substance_lookup", "1:drug_interaction"),
    ),
    ExampleQuestion(
        "Szedhetek Verospiront Diroton mellett?",
        ("súlyos kölcsönhatás", "hiperkalémia"),
        ("1.1:substance_lookup", "1.2:substance_lookup", "1:drug_interaction"),
    ),
    ExampleQuestion(
        "Hol rendel dr. Kovács Anna?",
        ("214. szoba", "hétfőn és szerdán 8:00-12:00", "+36 1 555 0124"),
        ("1.1:doctor_directory", "1:doctor_finder"),
    ),
    ExampleQuestion(
        "Where can I find Dr. Anna Kovács?",
        ("room 214", "Monday and Wednesday 8:00-12:00"),
        ("1.1:doctor_directory", "1:doctor_finder"),
    ),
    ExampleQuestion(
        "Hol rendel dr. Lengyel Márta?",
        ("218-as rendelőben", "első csütörtökén"),
        ("1.2:korhaz_search",),
    ),
    ExampleQuestion(
        "When are Dr. Ilona Fehér's office hours?",
        ("room 105", "10:00-12:00"),
        ("1.2:korhaz_search",),
    ),
    ExampleQuestion(
        "hol rendel dr. kovács anna?",
        ("214. szoba", "+36 1 555 0124"),
        ("1.1:doctor_directory", "1:doctor_finder"),
    ),
    ExampleQuestion(
        "Szedhetem a Marfarint ibuprofénnel?",
        ("súlyos kölcsönhatás", "vérzés"),
        ("1.1:substance_lookup", "1.2:substance_lookup", "1:drug_interaction"),
    ),
]
"""Questions the korhaz coordinators split (B4, K3); ``expected_tools`` holds the exact
``activated`` order (``"task_no:tool_name"``) instead of bare tool names; a tool
that returned nothing is not in it (R1).

The drug questions end in ``drug_interaction``'s finished answer on the parent;
for a doctor in the directory the conditional full-text search is skipped, for a
doctor only the documents mention (a visiting specialist, the patient rights
representative) it runs.
"""


class ClarificationExample(NamedTuple):
    """A question that makes a tool ask (Q1), the user's reply, and the finished answer (Q2)."""

    question: str
    reply: str
    expected_substrings: tuple[str, ...]
    expected_tools: tuple[str, ...]
    asked_by: str
    """The ``"task_no:tool_name"`` that asks the question."""


CLARIFICATION_EXAMPLES: list[ClarificationExample] = [
    ClarificationExample(
        "Mikor van rendelés?",
        "kardiológia",
        ("Kardiológia rendelési ideje", "9:00-13:00"),
        ("1:department_info", "1:korhaz_search"),
        "1:department_info",
    ),
    ClarificationExample(
        "When are consultation hours?",
        "2",
        ("Consultation hours of Cardiology", "9:00-13:00"),
        ("1:department_info", "1:korhaz_search"),
        "1:department_info",
    ),
    ClarificationExample(
        "Can I take ibuprofen with my blood thinner?",
        "warfarin (Marfarin)",
        ("major interaction", "ibuprofen and warfarin"),
        ("1.1:substance_lookup", "1.2:substance_lookup", "1:drug_interaction"),
        "1.2:substance_lookup",
    ),
    ClarificationExample(
        "Szedhetek Enapot és Verospiront együtt?",
        "2",
        ("enalapril + hidroklorotiazid és spironolakton: súlyos kölcsönhatás",),
        ("1.1:substance_lookup", "1.2:substance_lookup", "1:drug_interaction"),
        "1.1:substance_lookup",
    ),
]
"""Questions that pause for a clarification round; the reply finishes the answer.

``department_info`` asks which department when none is named, offering the
known ones as choices (a number picks one); ``substance_lookup`` asks which
medicine an ambiguous name means inside a ``drug_interaction`` subtask, and the
parent continues after the reply (B4, S3). ``expected_tools`` holds the exact
``activated`` order once the reply is in.
"""
