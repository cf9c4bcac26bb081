"""A10, D1, D6, D8: deep fallback makes no call that cannot pay, by rules for any domain.

- No gatekeeper call when one text of the context holds every content word of the
  question, and the context the kind of fact it asks for (a figure, an e-mail address)
  near them (A10, D1): nothing a search could add a word of; nor when the offline reading
  quotes a passage that answers, the offline gatekeeper finds the context sufficient, and
  no stored page uses a question word the context lacks.
- No neighbour search when every page next to the context's pages says nothing the
  context does not (A10, D6, D8): the full search runs at once.

Each rule has its counter-test: when it does not hold, the call is made. A neutral
domain: a leisure centre's guide (and the community guide of the D8 tests).
"""

from __future__ import annotations

from typing import Any

from tests.test_d8_deep_fallback import Counting, ask, graph_over, guide, lexical_reader
from toolweave import ContextVerdict, Domain, build_graph
from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.graph.deep_fallback import covering_text
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.search import (
    ContextSearchTool,
    NeighborPageSearchTool,
    RetrievalTool,
    SqliteDocumentStore,
)


def _insufficient(piece: str) -> Any:
    def judge(question: str, documents: Any, guaranteed: Any) -> ContextVerdict:
        return ContextVerdict(sufficient=False, missing=(piece,))

    return judge


def _gate(out: dict[str, Any]) -> Any:
    (gate,) = [e for e in out["ledger"] if e.kind == "gatekeeper"]
    return gate


# -- A10, D1: the gatekeeper is not asked about a context that holds the question's words ---


def test_A10_D1_no_gatekeeper_call_when_one_passage_holds_every_content_word():
    assistant = Counting(judge=_insufficient("anything"), read=lexical_reader([]))
    out = ask(graph_over(guide(), assistant), "When does the reading room open on weekdays?")
    assert assistant.judged == 0
    assert out["deep_fallback_calls"] == 0
    gate = _gate(out)
    assert gate.verdict == "sufficient"
    assert gate.reason.startswith("not asked (A10, D1)")
    assert "'Lending rules p. 2'" in gate.reason  # which passage holds the words
    assert not [e for e in out["ledger"] if e.kind == "deep_fallback"]


def test_A10_D1_the_gatekeeper_is_asked_when_a_page_left_out_uses_a_question_word():
    """ "Sundays" is in no retrieved passage, but a stored page uses it: a search may find it."""
    store = guide()
    store.add_document(
        "weekend", ["# Weekend\nOn Sundays the library is closed."], name="Weekend", lang="en"
    )
    assistant = Counting(judge=_insufficient("anything"), read=lexical_reader([]))
    out = ask(graph_over(store, assistant, limit=1), "When does the reading room open on Sundays?")
    assert "Sundays" not in " ".join(d.text for d in out["documents"])
    assert assistant.judged == 1
    assert _gate(out).verdict == "insufficient"


def test_A10_D1_no_gatekeeper_call_when_the_reading_answers_and_no_page_uses_a_lacking_word():
    """The offline reading quotes the weekday hours; no stored page says "Sundays"."""
    assistant = Counting(judge=_insufficient("anything"), read=lexical_reader([]))
    out = ask(graph_over(guide(), assistant), "When does the reading room open on Sundays?")
    assert assistant.judged == 0
    assert out["deep_fallback_calls"] == 0
    gate = _gate(out)
    assert gate.verdict == "sufficient"
    assert "offline reading of the context answers" in gate.reason
    assert "'Lending rules p. 2'" in gate.reason  # the passage the reading quotes
    # words spread over two passages: no one passage holds them, the reading answers
    spread = Counting(judge=_insufficient("anything"), read=lexical_reader([]))
    out = ask(graph_over(guide(), spread, limit=8), "Reading room weekdays borrow books?")
    assert spread.judged == 0
    assert "offline reading of the context answers" in _gate(out).reason


def test_A10_D1_a_word_that_asks_how_much_is_no_piece_a_search_could_add():
    """The reading quotes the fee; "much" only asks for it, though another page says "much"."""
    store = guide()
    store.add_document(
        "noise", ["# Noise\nToo much noise disturbs the readers."], name="Noise", lang="en"
    )
    assistant = Counting(judge=_insufficient("anything"), read=lexical_reader([]))
    out = ask(graph_over(store, assistant, limit=1), "How much are items charged per day?")
    assert "much" not in " ".join(d.text for d in out["documents"])
    assert assistant.judged == 0
    assert "offline reading of the context answers" in _gate(out).reason


def test_A10_D1_the_verb_of_a_time_span_is_no_piece_a_search_could_add():
    """Fixed (dev k010, "meddig tart"): the reading quotes the span; "take" only asks for it."""
    store = guide()
    store.add_document(
        "trips", ["# Trips\nThe bus trip to the lake takes an hour."], name="Trips", lang="en"
    )
    store.add_document("laptops", ["# Laptops\nA laptop is lent for 14 days."], name="Laptops")
    assistant = Counting(judge=_insufficient("anything"), read=lexical_reader([]))
    question = "How long does it take to get a laptop lent?"
    out = ask(graph_over(store, assistant, limit=1), question)
    assert [d.text for d in out["documents"]] == ["A laptop is lent for 14 days."]
    assert assistant.judged == 0
    assert "offline reading of the context answers" in _gate(out).reason


def test_A10_D1_the_gatekeeper_is_asked_when_a_how_much_question_has_no_price_about_it():
    """The reading quotes the borrowing rule, but "how much" wants a price no passage gives."""
    from toolweave.llm.answer_rules import reading_quotes
    from toolweave.llm.port import AnswerRequest

    assistant = Counting(judge=_insufficient("anything"), read=lexical_reader([]))
    question = "How much does it cost to borrow a book?"
    out = ask(graph_over(guide(), assistant), question)
    request = AnswerRequest(question, "en", "", out["documents"], [])
    assert reading_quotes(request) is not None  # the reading alone would have skipped it
    assert assistant.judged == 1


def test_A10_D1_covering_text_reads_stems_and_guaranteed_texts_and_ignores_stop_words():
    passage = UniqueTextDocument(
        document_id="d", document_name="Guide", page=3, text="Visitors park in garage B."
    )
    assert covering_text("Where do visitors park?", [passage], []) == "the passage 'Guide p. 3'"
    assert covering_text("Where do visitors park?", [], ["Visitors parking: garage B."]) == (
        "the context"
    )
    assert covering_text("Where do visitors park at night?", [passage], []) is None
    assert covering_text("Where do visitors park?", [], []) is None


def test_A10_D1_a_passage_with_every_word_but_not_the_kind_of_fact_asked_skips_no_gatekeeper():
    """ "What does parking cost?" over a passage naming parking costs without one: a search
    could still add the price, so the gatekeeper is asked (as for an e-mail address)."""

    def guide_page(text: str) -> UniqueTextDocument:
        return UniqueTextDocument(document_id="d", document_name="Guide", page=3, text=text)

    question = "What does parking cost?"
    assert covering_text(question, [guide_page("Parking costs are shown at the gate.")], []) is None
    priced = guide_page("Parking costs 2 euros an hour.")
    assert covering_text(question, [priced], []) == "the passage 'Guide p. 3'"
    email = "What is the e-mail address of the desk?"
    assert (
        covering_text(email, [guide_page("The desk e-mail address is on the next page.")], [])
        is None
    )
    given = guide_page("The desk e-mail address is desk@centre.example.")
    assert covering_text(email, [given], []) == "the passage 'Guide p. 3'"


# -- A10, D6, D8: no neighbour search whose pages the context already holds ----------------


POOL = ["The pool opens at 7:00.", "Towels are free at the desk."]
"""Two short pages the first retrieval brings whole."""
LOCKERS = "Lockers cost 2 euros."
"""A third page, next to them, that the first retrieval does not reach."""


def pool(pages: list[str]) -> SqliteDocumentStore:
    store = SqliteDocumentStore(embeddings=None)
    store.add_document("pool", pages, name="Leisure centre", lang="en")
    store.add_document("gym", ["The gym closes at 22:00 on Sundays."], name="Gym", lang="en")
    return store


def pool_graph(store: SqliteDocumentStore, assistant: Any) -> Any:
    deep = DeepSearchCoordinator()
    domain = Domain(name="pool", default_retrieval_tool="search", deep_fallback=lambda _: deep)
    tools = [
        RetrievalTool("search", "pool", store, limit=8),
        deep,
        NeighborPageSearchTool("neighbor_search", "pool", store, page_limit=2),
        ContextSearchTool("context_search", "pool", store),
    ]
    return build_graph(domain, tools, assistant=assistant)


def test_A10_D6_no_neighbour_search_when_every_neighbour_page_is_in_the_context():
    asked: list[str] = []
    assistant = Counting(
        judge=_insufficient("What do pool towels cost?"), read=lexical_reader(asked)
    )
    out = ask(pool_graph(pool(POOL), assistant), "Pool towels price?")
    assert {d.page for d in out["documents"] if d.document_id == "pool"} == {1, 2}
    skipped = [e for e in out["ledger"] if e.kind == "deep_fallback" and e.verdict == "skipped"]
    assert [e.tool for e in skipped] == ["neighbor_search"]
    assert "no neighbour search: 2 page(s)" in skipped[0].reason
    plan = next(e for e in out["ledger"] if e.verdict == "planned")
    assert plan.tools == ("context_search",)
    assert not [e for e in out["ledger"] if e.kind == "conditional"]  # it runs at once
    assert any(e.kind == "tool_result" and e.tool == "context_search" for e in out["ledger"])


def test_A10_D6_the_neighbour_search_runs_when_a_neighbour_page_says_something_new():
    asked: list[str] = []
    assistant = Counting(
        judge=_insufficient("What do pool towels cost?"), read=lexical_reader(asked)
    )
    out = ask(pool_graph(pool([*POOL, LOCKERS]), assistant), "Pool towels price?")
    assert 3 not in {d.page for d in out["documents"] if d.document_id == "pool"}
    assert not [e for e in out["ledger"] if e.kind == "deep_fallback" and e.verdict == "skipped"]
    plan = next(e for e in out["ledger"] if e.verdict == "planned")
    assert plan.tools == ("neighbor_search", "context_search")
    assert any(e.kind == "conditional" for e in out["ledger"])  # the full search waits (K3)
