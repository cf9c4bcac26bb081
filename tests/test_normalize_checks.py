"""A1 (first turn kept as written) and T10 (the deterministic language cross-check)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from toolweave import build_graph
from toolweave.llm.port import Normalized
from toolweave.state.ledger import LedgerKind
from toolweave.testing import FunctionAssistant
from toolweave.tools.language import detect_language


def rewriting(lang: str = "hu") -> FunctionAssistant:
    """A model that rewrites every message and tags every message ``lang``."""
    return FunctionAssistant(
        normalize=lambda message, history: Normalized(
            question=f"REWRITTEN {message}", user_lang=lang
        ),
        answer=lambda request: f"answer in {request.user_lang}",
    )


def normalized_entry(out: dict[str, Any]) -> Any:
    (entry,) = [e for e in out["ledger"] if e.kind == LedgerKind.NORMALIZED]
    return entry


def test_A1_first_turn_not_rewritten():
    graph = build_graph("d", [], assistant=rewriting())
    out = graph.invoke({"messages": [HumanMessage("Hol rendel dr. Lengyel Márta?")]})
    assert out["task"].task_prompt == "Hol rendel dr. Lengyel Márta?"
    assert "first turn kept as written" in normalized_entry(out).reason


def test_A1_follow_up_is_rewritten():
    assistant = FunctionAssistant(
        normalize=lambda message, history: Normalized(
            question="When is cardiology open on Friday?", user_lang="en"
        ),
        answer=lambda request: "9-13.",
    )
    graph = build_graph("d", [], assistant=assistant)
    messages = [
        HumanMessage("When is cardiology open?"),
        AIMessage("9-13."),
        HumanMessage("Friday?"),
    ]
    out = graph.invoke({"messages": messages})
    assert out["task"].task_prompt == "When is cardiology open on Friday?"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("What is the wifi password?", "en"),
        ("Where can I find Dr. Anna Kovács?", "en"),
        ("Can I take ibuprofen with warfarin?", "en"),
        ("and on Friday?", "en"),
        ("És pénteken?", "hu"),
        ("Mi a sürgősségi telefonszám?", "hu"),
        ("Hol rendel dr. Kovács Anna?", "hu"),
        ("Szedhetek ibuprofent warfarin mellett?", "hu"),
        ("mikor van nyitva a gyogyszertar", "hu"),
        ("Kardiológia", None),
        ("112", None),
    ],
)
def test_T10_detector_tells_hungarian_from_english(text, lang):
    assert detect_language(text).lang == lang


def test_T10_confident_detector_overrides_the_models_language_tag():
    graph = build_graph("d", [], assistant=rewriting("hu"))
    out = graph.invoke({"messages": [HumanMessage("What should I bring for the admission?")]})
    assert normalized_entry(out).verdict == "en"
    assert out["answer"] == "answer in en"  # the answer speaks the user's language
    assert "language en by the detector" in normalized_entry(out).reason


def test_T10_unsure_detector_keeps_the_models_tag():
    graph = build_graph("d", [], assistant=rewriting("hu"))
    out = graph.invoke({"messages": [HumanMessage("Kardiológia?")]})
    assert normalized_entry(out).verdict == "hu"
    assert "detector" not in normalized_entry(out).reason
