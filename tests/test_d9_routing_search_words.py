"""D9 and A10: the routing call also gives words to search the documents with.

A question in other words than its page ("get online with my laptop" for a page on
the guest wifi) shares no word with the passage that answers it, so the keyword
ranking cannot reach it. The routing call, made anyway, ends with a ``search`` field:
the words a page would use, in the documents' language. The default retrieval
searches with them beside the question and fuses both rankings, at no model call of
its own; a domain without a default retrieval is not asked for them.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from toolweave import ChatbotTool, Domain, EmptyRequest, ToolResult, build_graph
from toolweave.domains.documents import documents_domain
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.replies import (
    SEARCH,
    SEARCH_CHARS,
    SEARCH_WORDS,
    routing_reply,
    routing_schema,
    search_words,
)
from toolweave.state.ledger import LedgerKind
from toolweave.testing import ScriptedChatModel
from toolweave.tools.search import SqliteDocumentStore
from toolweave.tools.search.retrieval import retrieve

QUESTION = "How do I get online with my laptop here?"
DISTINCT = [f"word{a}{b}" for a in "abcdefgh" for b in "klmno"]  # 40 words, no figure
WIFI = "Guests join the wireless network Visitors with the code printed on their room card."
WORDS = "wireless network Visitors code guests wifi"


def town_hall() -> SqliteDocumentStore:
    """A guest house's pages, searched by keywords alone (no embedding model)."""
    store = SqliteDocumentStore(embeddings=None)
    store.add_document(
        "stay",
        [
            f"# Wireless network\n{WIFI} The signal reaches every floor.",
            "# Breakfast\nBreakfast is served from 7:00 to 10:00 in the garden room.",
            "# Check-out\nRooms are left by 11:00; luggage may stay at the desk.",
        ],
        name="Your stay",
        lang="en",
    )
    store.add_document(
        "area",
        ["# Around the house\nThe bakery on the corner opens at 6:00; the museum at 10:00."],
        name="The area",
        lang="en",
    )
    return store


class Taxi(ChatbotTool[EmptyRequest]):
    """A routable tool, so that the question is routed (the call the words ride on)."""

    name = "taxi_order"
    request_model = EmptyRequest
    executable_instruction = "taxi_order: true when the user wants a taxi ordered."
    description = "Orders a taxi to the house."

    def execute(self, request: EmptyRequest, ctx: Any) -> ToolResult | None:
        return ToolResult.as_guaranteed_context(self.name, "A taxi is on its way.")


def routing(words: str) -> dict[str, Any]:
    return {"best_fit": "none", "taxi_order": None, SEARCH: words}


def ask(graph: Any, text: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": text}}
    return graph.invoke({"messages": [HumanMessage(text)]}, config)  # type: ignore[no-any-return]


def graph_with(model: ScriptedChatModel) -> Any:
    domain, tools = documents_domain("house", town_hall(), tools=[Taxi()])
    return build_graph(domain, tools, assistant=ChatModelAssistant(model, initial_backoff=0))


def test_D9_the_questions_own_words_do_not_reach_the_passage():
    store = town_hall()
    found = retrieve(store, QUESTION)
    assert WIFI not in [doc.text for doc in found]  # the premise of the tests below
    assert WIFI in [doc.text for doc in retrieve(store, QUESTION, also=WORDS)]


def test_D9_routing_words_reach_the_default_retrieval_at_no_extra_call():
    model = ScriptedChatModel(
        script=[routing(WORDS), {"sufficient": True, "missing": []}, "Use the Visitors network."]
    )
    out = ask(graph_with(model), QUESTION)
    assert WIFI in [doc.text for doc in out["documents"]]
    routed_call = model.calls[0]
    schema = routed_call.tools[0]["function"]["parameters"]
    assert list(schema["properties"])[-1] == SEARCH  # asked last: the verdicts come first
    assert SEARCH in schema["required"]
    assert "in English" in routed_call.system  # the documents' language (the domain's)
    assert len(model.calls) == 3  # routing, gatekeeper, answer: no call of the words' own
    default = next(
        e for e in out["ledger"] if e.kind == LedgerKind.ROUTING and e.verdict == "default"
    )
    assert WORDS in default.reason  # explain shows what was searched


def test_D9_without_routing_words_the_retrieval_is_the_questions_alone():
    model = ScriptedChatModel(
        script=[routing(""), {"sufficient": True, "missing": []}, "I have no information."]
    )
    out = ask(graph_with(model), QUESTION)
    assert WIFI not in [doc.text for doc in out["documents"]]


def test_D9_a_domain_without_default_retrieval_is_not_asked_for_search_words():
    model = ScriptedChatModel(
        script=[{"best_fit": "taxi_order", "taxi_order": {"reason": "r", "run": True}}, "ok"]
    )
    graph = build_graph(
        Domain(name="house"), [Taxi()], assistant=ChatModelAssistant(model, initial_backoff=0)
    )
    ask(graph, "Please order a taxi.")
    schema = model.calls[0].tools[0]["function"]["parameters"]
    assert SEARCH not in schema["properties"]
    assert "in search:" not in model.calls[0].system


def test_D9_search_words_are_capped_and_a_tool_named_search_keeps_its_key():
    class Search(Taxi):
        name = "search"
        executable_instruction = "search: true when the user wants a web search."

    schema = routing_reply([Search()], fused=True, search=True)
    assert schema.function()["parameters"]["required"] == ["best_fit", "search"]  # the tool's
    reply = routing_reply([Taxi()], fused=True, search=True).model_validate(
        {"best_fit": "none", "taxi_order": None, SEARCH: " ".join(DISTINCT)}
    )
    assert search_words(reply).split() == DISTINCT[:SEARCH_WORDS]


def test_D9_the_offline_model_gives_no_search_words_and_retrieves_as_before():
    domain, tools = documents_domain("house", town_hall(), tools=[Taxi()])
    out = ask(build_graph(domain, tools, assistant=OfflineAssistant()), QUESTION)
    default = next(
        e for e in out["ledger"] if e.kind == LedgerKind.ROUTING and e.verdict == "default"
    )
    assert default.reason == "default retrieval"


def test_D9_the_search_field_is_bounded_in_the_schema_sent_and_not_checked_on_reply():
    """A10: a model repeating itself in the last field stops at the bound, not the token limit."""
    pattern = f"^.{{0,{SEARCH_CHARS}}}$"
    composed = routing_reply([Taxi()], fused=True, search=True)
    sent = composed.function()["parameters"]["properties"][SEARCH]
    assert sent["pattern"] == pattern
    assert "description" not in sent  # A10: the prompt's search rule says it, once
    assert (
        routing_schema([Taxi()], fused=True, search=True).model_json_schema()["properties"][SEARCH][
            "pattern"
        ]
        == pattern
    )
    looping = " ".join(["szó"] * 200)  # a server that does not enforce it: read, capped
    reply = composed.model_validate({"best_fit": "taxi_order", "taxi_order": None, SEARCH: looping})
    assert search_words(reply) == "szó"  # read, each word once


PROMPT = "- taxi_order: true when the user wants a taxi ordered to the house at night."


def words_of(text: str, question: str = QUESTION) -> str:
    reply = routing_reply([Taxi()], fused=True, search=True).model_validate(routing(text))
    return search_words(reply, question=question, prompt=PROMPT)


def test_D9_search_words_drop_what_the_question_already_searches():
    assert words_of("How do I get online | wireless network here") == "wireless network"
    assert words_of("get online with my laptop") == ""  # the question again: nothing added
    assert words_of("null") == ""  # a model's "nothing" is no word to search


def test_D9_search_words_drop_a_run_copied_from_the_routing_prompt():
    """An echo of a tool's line finds the tool's subject, not the user's."""
    assert words_of("taxi ordered to the house | guest wifi") == "guest wifi"
    assert words_of("taxi | guest wifi") == "taxi guest wifi"  # a word is no echo; a run is


def test_D9_search_words_drop_figures_the_model_wrote():
    """'8 000 zł' for a question of 80,000: an invented figure finds another passage."""
    said = words_of("Kto akceptuje fakturę na 8 000 zł", "Who approves an invoice of 80,000 PLN?")
    assert said == "akceptuje fakturę zł"  # "Kto" is a stop word


def test_D9_the_second_search_holds_the_question_so_an_off_subject_word_cannot_lead(
    monkeypatch: pytest.MonkeyPatch,
):
    """The words widen the question's search; alone, a wrong word's page would rank first."""
    store = town_hall()
    searched: list[str] = []
    name = "fused_search" if hasattr(store, "fused_search") else "search"
    original = getattr(store, name)

    def recorded(text: str, **kwargs: Any) -> Any:
        searched.append(text)
        return original(text, **kwargs)

    monkeypatch.setattr(store, name, recorded)
    retrieve(store, "When is breakfast served?", also="museum bakery")
    assert searched == ["When is breakfast served?", "When is breakfast served? museum bakery"]
