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
