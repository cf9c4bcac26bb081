"""P4, T10: the library's own sentences for people follow a domain's ``texts``.

A domain in a language the library has no texts for (German, say) gave its people the
library's English "no information" answer, its English notes on an action not done, and
the command line's English lines. ``Domain(texts=...)`` gives them in its language (or
its own words); what it does not give falls back to the library's, then English.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from toolweave import (
    LIBRARY_TEXTS,
    ChatbotTool,
    ConfigurationError,
    Domain,
    EmptyRequest,
    ToolCallContext,
    ToolResult,
    build_graph,
    text_for,
)
from toolweave.cli.render import person_line, source_lines
from toolweave.testing import FunctionAssistant

GERMAN = {
    "no_information": {"de": "Dazu habe ich nichts gefunden."},
    "failed_effect": {"de": "Das wurde nicht erledigt: {tool} ist fehlgeschlagen ({error})."},
    "sources": {"de": "Quellen:"},
    "page": {"de": "S. {pages}"},
    "split": {"de": "Die Frage hat {count} Teile"},
}


def test_P4_T10_a_domains_text_in_the_users_language_comes_first() -> None:
    assert text_for("no_information", "de", GERMAN) == "Dazu habe ich nichts gefunden."
    own_english = {"no_information": {"en": "Nothing on that here."}}
    # the library's text in the person's language before the domain's English
    assert text_for("no_information", "hu", own_english) == LIBRARY_TEXTS["no_information"]["hu"]
    assert text_for("no_information", "fr", own_english) == "Nothing on that here."
    assert text_for("no_information", "fr", GERMAN) == LIBRARY_TEXTS["no_information"]["en"]
    assert text_for("page", "de", GERMAN, pages="3") == "S. 3"


@pytest.mark.parametrize(
    ("texts", "says"),
    [
        ({"no_info": {"de": "Nichts."}}, "no key 'no_info'"),
        ({"page": {"de": "S. {seite}"}}, "names ['seite']"),
        ({"page": {"de": "S. {pages"}}, "not a format string"),
    ],
)
def test_P4_X5_a_domain_with_a_text_the_library_cannot_say_is_refused_when_made(
    texts: dict[str, dict[str, str]], says: str
) -> None:
    with pytest.raises(ConfigurationError, match=says.replace("[", r"\[")):
        Domain(name="amt", texts=texts)


class FailingBooking(ChatbotTool[EmptyRequest]):
    """Books an appointment; the booking system is down."""

    name = "book_appointment"
    domain = "amt"
    side_effects: ClassVar[bool] = True
    executable_instruction = "book_appointment: true when the user asks to book"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        raise ConnectionError("the booking system is down")


def _ask(domain: Domain, tools: list[Any], question: str) -> dict[str, Any]:
    names = [tool.name for tool in tools]
    graph = build_graph(
        domain,
        tools,
        assistant=FunctionAssistant(route=lambda text, offered: names),
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}
    out: dict[str, Any] = graph.invoke({"messages": [("human", question)]}, config)
    return out


def test_R7_P4_an_action_not_done_is_said_in_the_domains_language() -> None:
    domain = Domain(name="amt", default_language="de", texts=GERMAN)
    out = _ask(domain, [FailingBooking()], "Bitte buchen Sie mir einen Termin.")
    assert "Das wurde nicht erledigt: book appointment ist fehlgeschlagen" in out["answer"]
    assert "This was not done" not in out["answer"]


def test_R7_P4_without_texts_the_library_says_it_in_english() -> None:
    out = _ask(Domain(name="amt"), [FailingBooking()], "Bitte buchen Sie mir einen Termin.")
    assert "This was not done: book appointment failed (ConnectionError)" in out["answer"]


def test_P4_cli_lines_take_the_domains_words() -> None:
    rows = [{"document_id": "a", "name": "Reisepass", "pages": [2]}]
    assert source_lines(rows, "de", texts=GERMAN) == ["Quellen:", "  - Reisepass, S. 2"]
    assert source_lines(rows, "de")[0] == "Sources:"  # no texts: the library's English
    split = {"type": "coordinated", "task_no": "1", "changed": True, "subtasks": ["1.1", "1.2"]}
    assert person_line(split, "de", GERMAN) == "· Die Frage hat 2 Teile"


def test_P4_eval_counts_the_domains_own_no_information_text_as_no_information() -> None:
    """``toolweave eval`` scored "Dazu habe ich nichts gefunden." as a wrong answer."""
    from toolweave.evaluation import GoldenCase, run_case

    domain = Domain(name="amt", default_language="de", texts=GERMAN)
    silent = FunctionAssistant(answer=lambda request: "")
    graph = build_graph(domain, [], assistant=silent, checkpointer=InMemorySaver())
    case = GoldenCase(
        id="n1",
        question="Gibt es ein Schwimmbad?",
        expected_tools=frozenset(),
        expects_no_information=True,
    )
    result = run_case(graph, case, retrieval_tool=None)
    assert result.answer == "Dazu habe ich nichts gefunden."
    assert result.facts_ok is True
    english = build_graph(Domain(name="amt"), [], assistant=silent, checkpointer=InMemorySaver())
    plain = run_case(english, case, retrieval_tool=None)
    assert plain.facts_ok is True  # the library's own English text, as before
