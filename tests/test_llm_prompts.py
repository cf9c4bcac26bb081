"""Prompt templates: placeholders match their fillers (T7 for the extraction prompt)."""

from __future__ import annotations

import string
from typing import Any

import pytest

from toolweave.llm import prompts


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


class SpyTemplate(str):
    """A template that records the keyword arguments it is formatted with."""

    passed: set[str]

    def format(self, *args: Any, **kwargs: Any) -> str:
        assert not args, "prompts are filled by name only"
        self.passed = set(kwargs)
        return super().format(**kwargs)


FILLERS = [
    ("NORMALIZE_PROMPT", lambda: prompts.normalize_system(history="h", default_lang="en")),
    ("ROUTING_PROMPT", lambda: prompts.routing_system(tools="- t: q")),
    (
        "FUSED_ROUTING_PROMPT",
        lambda: prompts.fused_routing_system(tools="- t: q", extraction_guidance="g"),
    ),
    (
        "ANSWER_PROMPT",
        lambda: prompts.answer_system(language="English", context="c", guaranteed=""),
    ),
    (
        "GATEKEEPER_SEARCH_PROMPT",
        lambda: prompts.gatekeeper_search_system(context="c", documents_language="English"),
    ),
    ("DECOMPOSITION_PROMPT", lambda: prompts.decomposition_system(coordinators="- c: x")),
]


@pytest.mark.parametrize(("constant", "fill"), FILLERS, ids=[c for c, _ in FILLERS])
def test_prompt_placeholders_are_exactly_what_the_filler_passes(monkeypatch, constant, fill):
    template = getattr(prompts, constant)
    spy = SpyTemplate(template)
    monkeypatch.setattr(prompts, constant, spy)
    fill()
    assert spy.passed == placeholders(template)


def test_T7_extraction_prompt_has_tasks_and_instruction_placeholders():
    assert placeholders(prompts.EXTRACTION_SYSTEM_PROMPT) == {"tasks", "instruction"}


def test_T7_placeholders_replaced_and_none_tasks_is_empty():
    filled = prompts.fill_extraction_prompt(
        prompts.EXTRACTION_SYSTEM_PROMPT, tasks=None, instruction="Fill the department."
    )
    assert "{tasks}" not in filled
    assert "{instruction}" not in filled
    assert "Fill the department." in filled


def test_T7_prompt_without_placeholder_ignores_value_and_keeps_other_braces():
    prompt = 'Reply like {"department": "..."}; tasks: {tasks}'
    filled = prompts.fill_extraction_prompt(prompt, tasks="1. cardiology", instruction="ignored")
    assert filled == 'Reply like {"department": "..."}; tasks: 1. cardiology'


def test_language_name_knows_hungarian_and_falls_back_to_the_code():
    assert prompts.language_name("hu") == "Hungarian"
    assert "xx" in prompts.language_name("xx")


def test_A10_answer_prompt_leaves_out_an_empty_guaranteed_section() -> None:
    """A10: an answer call sends no header for guaranteed context it does not have."""
    empty = prompts.answer_system(language="English", context="[1] Open 8:00-16:00.", guaranteed="")
    held = prompts.answer_system(language="English", context="[1] x", guaranteed="Card 1234.")
    assert "Guaranteed context" not in empty
    assert empty.endswith("Context:\n[1] Open 8:00-16:00.")
    assert "Guaranteed context (always relevant):\nCard 1234.\n\nContext:\n[1] x" in held
