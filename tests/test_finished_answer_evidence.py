"""A9, T12, N1: a finished answer needs more than one shared word; store stop words are no evidence.

A neutral test domain, a city library: ``card_renewal_info`` gives a finished
answer (``returns_answer``) and declares its intent (``routing_examples``) and what
it is not for (``not_for``, with "card" and "renew" in them); the documents are in
the in-memory store, whose stop word is "library". A question that shares one
word with the tool that its ``not_for`` questions have too, or one of its
``not_for`` questions itself, does not get its fixed text, offline or with a model
that says yes to it; its declared example does. The store's stop words reach
routing: a word nearly every question of the domain holds is no evidence for a
finished answer, nor in the pre-filter's ranking (T12).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from toolweave import ChatbotTool, ToolCallContext, ToolResult, build_graph
from toolweave.domains.documents import documents_domain
from toolweave.graph.candidates import TERMINAL_AS_CONTEXT, TERMINAL_DROPPED, DomainWords
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.offline_routing import RoutingRule, held_back, score_tools
from toolweave.state.ledger import LedgerKind
from toolweave.testing import FunctionAssistant
from toolweave.tools.prefilter import CandidateIndex, prefilter
from toolweave.tools.search import SqliteDocumentStore

CARD_TEXT = "Bring a photo ID to any desk; renewing a card is free."
DOCUMENTS = {
    "catalogue": "The card catalogue is on the ground floor, next to the reading room.",
    "loans": "Borrowed books can be renewed online twice, unless another reader reserved them.",
    "access": "Every branch has step-free access and a lift.",
}


class CardRenewal(ChatbotTool[Any]):
    name = "card_renewal_info"
    domain = "citylib"
    priority = 40
    returns_answer = True
    executable_instruction = (
        "card_renewal_info: true when the user asks how to renew an expired library card."
    )
    description = "How to renew a library card."
    routing_examples = (
        "How do I renew my library card?",
        "My card expired, how can I renew it?",
    )
    not_for = (
        "Can I renew a borrowed book online?",
        "Can I pay the late fee by card?",
    )

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_answer(self.name, CARD_TEXT)


class CardRenewalRequest(CardRenewal):
    """The same intent, but it files a renewal request: it acts (``side_effects``)."""

    name = "card_renewal_request"
    side_effects = True
    executable_instruction = (
        "card_renewal_request: true when the user asks to renew an expired library card."
    )


def graph(
    assistant: Any, tools: Sequence[ChatbotTool[Any]] = (), stopwords: Sequence[str] = ("library",)
) -> Any:
    store = SqliteDocumentStore(stopwords=stopwords)
    for document_id, text in DOCUMENTS.items():
        store.add_document(document_id, text, name=document_id)
    domain, search = documents_domain("citylib", store)
    return build_graph(domain, [*search, *(tools or [CardRenewal()])], assistant=assistant)


def says_yes(name: str) -> FunctionAssistant:
    return FunctionAssistant(route=lambda text, tools: [t.name for t in tools if t.name == name])


ASSISTANTS = [
    pytest.param(OfflineAssistant, id="offline"),
    pytest.param(lambda: says_yes("card_renewal_info"), id="model-says-yes"),
]


def ask(app: Any, question: str) -> dict[str, Any]:
    out: dict[str, Any] = app.invoke({"messages": [HumanMessage(question)]})
    return out


def finished(out: dict[str, Any]) -> bool:
    """Whether a tool's finished answer ended the run (R3)."""
    return any(e.kind == LedgerKind.ANSWER and e.verdict == "terminal" for e in out["ledger"])


@pytest.mark.parametrize("make", ASSISTANTS)
def test_A9_one_shared_word_its_not_for_questions_have_gets_no_finished_answer(make: Any) -> None:
    out = ask(graph(make()), "Where is the card catalogue?")
    assert not finished(out)
    assert out["answer"] != CARD_TEXT
    assert "ground floor" in out["answer"]


def test_A9_model_yes_on_a_word_of_what_it_is_not_for_is_dropped_and_says_why() -> None:
    out = ask(graph(says_yes("card_renewal_info")), "Where is the card catalogue?")
    (entry,) = [e for e in out["ledger"] if e.verdict == TERMINAL_DROPPED]
    assert "is in what it is not for" in entry.reason
    assert "1:card_renewal_info" not in out["activated"]


@pytest.mark.parametrize("make", ASSISTANTS)
def test_A9_its_not_for_example_question_gets_no_finished_answer(make: Any) -> None:
    out = ask(graph(make()), "Can I renew a borrowed book online?")
    assert not finished(out)
    assert CARD_TEXT not in out["answer"]
    assert "renewed online twice" in out["answer"]


@pytest.mark.parametrize("make", ASSISTANTS)
def test_A9_its_declared_example_still_gets_the_finished_answer(make: Any) -> None:
    out = ask(graph(make()), "How do I renew my library card?")
    assert finished(out)
    assert out["answer"] == CARD_TEXT


def test_A9_offline_rule_holds_back_a_finished_answer_on_one_not_for_word() -> None:
    tools = [CardRenewal()]
    for question, held in (
        ("Where is the card catalogue?", True),
        ("Can I renew my e-book loan?", True),
        ("My card expired, how do I renew it?", False),
    ):
        found = held_back(question, tools, score_tools(question, tools), RoutingRule())
        assert ("card_renewal_info" in found) is held, question


def test_N1_A9_the_stores_stop_word_is_no_evidence_for_a_finished_answer() -> None:
    question = "Is the library accessible by wheelchair?"  # shares only "library" with it
    without = ask(graph(says_yes("card_renewal_info"), stopwords=()), question)
    assert finished(without)  # the word alone made it the best match: it ended the run
    out = ask(graph(says_yes("card_renewal_info")), question)
    assert not finished(out)
    assert [e.tool or "" for e in out["ledger"] if e.verdict == TERMINAL_AS_CONTEXT] == [""]
    assert "step-free access" in out["answer"]


def test_N1_A9_a_finished_answer_that_acts_does_not_run_on_the_stop_word_alone() -> None:
    app = graph(says_yes("card_renewal_request"), tools=[CardRenewalRequest()])
    out = ask(app, "Is the library accessible by wheelchair?")
    assert not finished(out)
    assert "1:card_renewal_request" not in out["activated"]
    assert "step-free access" in out["answer"]


@pytest.mark.parametrize("make", ASSISTANTS)
def test_N1_the_stores_stop_words_leave_a_finished_answer_to_its_own_words(make: Any) -> None:
    # "library" is out, "renew" and "card" remain: still its declared intent
    out = ask(graph(make()), "How can I renew an expired library card?")
    assert finished(out)


def test_T12_N1_the_stores_stop_words_do_not_rank_the_candidates() -> None:
    class Rooms(ChatbotTool[Any]):
        name = "room_booking"
        executable_instruction = "room_booking: true when the user books a quiet study room."
        description = "Quiet study rooms."

    class Events(ChatbotTool[Any]):
        name = "library_events"
        executable_instruction = (
            "library_events: true when the user asks about library events at the library."
        )
        description = "Library events: library readings in every library of the city library."

    tools: list[Any] = [Events(), Rooms()]
    index = CandidateIndex(tools, embeddings=None)
    question = "Is there a quiet corner in the library?"
    plain = prefilter(index, question, tools, cap=1)
    assert [t.name for t in plain.offered] == ["library_events"]  # "library", many times
    own = DomainWords(("citylib", "library")).terms
    honoured = prefilter(index, question, tools, cap=1, ignore=own)
    assert [t.name for t in honoured.offered] == ["room_booking"]


def test_N1_a_store_stop_word_is_dropped_as_written_the_domain_name_in_any_form() -> None:
    own = DomainWords(("polideportivo",), stopwords=("que", "tienen"))
    kept = own.without("¿Tienen queja del Polideportivo o de los polideportivos que abren?")
    assert "queja" in kept  # "que" is a stop word, not a stem: "queja" is asked for
    assert "Tienen" not in kept
    assert " que " not in kept
    assert "Polideportivo" not in kept
    assert "polideportivos" not in kept
    assert own.asked("¿Que tienen?") == "¿Que tienen?"  # nothing else left: the text as it is
