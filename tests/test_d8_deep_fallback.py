"""D8: deep fallback searches a missing piece with new words and counts only new finds.

A neutral domain: a community centre's guide, whose pages word things their own
way ("returned after the due date", "vehicles ... garage") while the questions
use other words ("late", "car").
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from toolweave import ContextVerdict, Domain, OfflineAssistant, build_graph
from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.domains.documents import documents_domain
from toolweave.llm import prompts
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.task import PromptAndContext, TaskInfo
from toolweave.testing import FunctionAssistant, ScriptedChatModel
from toolweave.tools.base import EmptyRequest, ToolCallContext
from toolweave.tools.search import (
    ContextSearchTool,
    NeighborPageSearchTool,
    RetrievalTool,
    SqliteDocumentStore,
)
from toolweave.tools.search.novelty import Known
from toolweave.tools.search.rewrites import CorpusWords, build_corpus_words

QUESTION = "What happens if I bring a library book back late?"
PIECE = "What is the penalty for a late book?"
REWRITE = "charge for items returned after the due date"
FEE = "Items returned after the due date are charged 50 cents per day."


def guide() -> SqliteDocumentStore:
    """The guide's store, by keywords alone: what deep fallback adds is then its own (D9 aside)."""
    store = SqliteDocumentStore(embeddings=None)
    store.add_document(
        "lending",
        [
            "# Borrowing\nMembers may borrow up to ten books at a time. "
            "A library book is lent for three weeks.",
            "# Reading room\nThe reading room opens at 9:00 on weekdays.",
            "# Quiet hours\nPhones are silenced in the study hall.",
            f"# Returns\n{FEE}",
        ],
        name="Lending rules",
        lang="en",
    )
    store.add_document(
        "events",
        ["# Events\nThe choir rehearses on Thursday evenings in the main hall."],
        name="Events",
        lang="en",
    )
    return store


def lexical_reader(asked: list[str]) -> Any:
    """A page reader double: the first line sharing two words (of 4+ letters) with the question."""

    def read(question: str, passage: str) -> str | None:
        asked.append(question)
        wanted = {w for w in re.findall(r"\w+", question.lower()) if len(w) >= 4}
        for line in passage.splitlines():
            if line.startswith("#"):
                continue
            if len(wanted & set(re.findall(r"\w+", line.lower()))) >= 2:
                return line
        return None

    return read


class Counting(FunctionAssistant):
    """Counts the gatekeeper calls."""

    def __init__(self, **steps: Any) -> None:
        super().__init__(**steps)
        self.judged = 0

    def judge_context(self, *args: Any, **kwargs: Any) -> Any:
        self.judged += 1
        return super().judge_context(*args, **kwargs)


def graph_over(store: SqliteDocumentStore, assistant: Any, *, limit: int = 2) -> Any:
    deep = DeepSearchCoordinator()
    domain = Domain(
        name="guide", default_retrieval_tool="guide_search", deep_fallback=lambda _: deep
    )
    tools = [
        RetrievalTool("guide_search", "guide", store, limit=limit),
        deep,
        NeighborPageSearchTool("neighbor_search", "guide", store),
        ContextSearchTool("context_search", "guide", store),
    ]
    # a model whose page reads pay: the default cap is the gatekeeper alone (D7)
    return build_graph(domain, tools, assistant=assistant, deep_fallback_llm_calls=6)


def ask(graph: Any, text: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": text}}
    return graph.invoke({"messages": [HumanMessage(text)]}, config)  # type: ignore[no-any-return]


def rewriting_judge(question: str, documents: Any, guaranteed: Any) -> ContextVerdict:
    if any("charged" in text for text in guaranteed):
        return ContextVerdict(sufficient=True)
    return ContextVerdict(sufficient=False, missing=(PIECE,), rewrites={PIECE: (REWRITE,)})


def rewrite_run() -> tuple[dict[str, Any], Counting, list[str]]:
    asked: list[str] = []
    assistant = Counting(
        judge=rewriting_judge,
        read=lexical_reader(asked),
        answer=lambda r: " | ".join(r.guaranteed) or "no information",
    )
    return ask(graph_over(guide(), assistant), QUESTION), assistant, asked


# -- the rewrites find the page the first retrieval missed --------------------------------


def test_D8_the_first_retrieval_misses_the_page_the_question_words_differently():
    hits = guide().search(QUESTION, limit=2)
    assert hits
    assert all(hit.page != 4 for hit in hits)


def test_D8_the_gatekeepers_rewrite_finds_the_page_and_the_answer_gets_it():
    out, _, asked = rewrite_run()
    assert FEE in out["answer"]
    assert "1.2:context_search" in out["activated"]
    # A10: the page says the rewrite's every word, so its passage is taken without a read
    assert f"{PIECE} ({REWRITE})" not in asked


def test_D8_the_rewrites_cost_no_extra_call():
    out, assistant, asked = rewrite_run()
    assert assistant.judged == 1
    gate = next(e for e in out["ledger"] if e.kind == "gatekeeper")
    assert gate.details == {PIECE: REWRITE}
    # the deep round's model calls: the gatekeeper and the page reads, no call per piece
    assert out["deep_fallback_calls"] == 1 + len(asked)


def test_D8_the_ledger_names_per_piece_what_the_first_retrieval_had_not():
    out, _, _ = rewrite_run()
    found = [e for e in out["ledger"] if e.kind == "deep_fallback" and e.verdict != "planned"]
    assert len(found) == 1
    assert found[0].verdict == "found new"
    assert found[0].details == {"Lending rules p. 4": FEE}
    assert PIECE in found[0].reason
    assert "1 new page(s)" in found[0].reason
    assert set(found[0].tools) == {"neighbor_search", "context_search"}


# -- a search that returns only what the context holds found nothing -----------------------

ECHO_PIECE = "When does the reading room open on weekdays?"


def echo_run() -> dict[str, Any]:
    asked: list[str] = []

    def judge(question: str, documents: Any, guaranteed: Any) -> ContextVerdict:
        return ContextVerdict(sufficient=False, missing=(ECHO_PIECE,))

    assistant = FunctionAssistant(judge=judge, read=lexical_reader(asked))
    # "phones" is on a page the first retrieval left out, so the gatekeeper is asked (A10)
    question = "Reading room weekdays borrow books phones?"
    return ask(graph_over(guide(), assistant, limit=2), question)


def test_D8_K3_a_neighbour_search_that_reads_back_the_context_makes_the_full_search_run():
    out = echo_run()
    context = {d.text for d in out["documents"]}
    assert "The reading room opens at 9:00 on weekdays." in context  # the first retrieval's
    assert "1.1:neighbor_search" not in out["activated"]  # it read only that back
    decision = next(e for e in out["ledger"] if e.kind == "conditional")
    assert (decision.task_no, decision.verdict) == ("1.2", "run")
    ran = [e.tool for e in out["ledger"] if e.kind == "tool_result" and e.task_no == "1.2"]
    assert ran == ["context_search"]


def test_D8_the_ledger_says_nothing_new_when_the_searches_read_back_the_context():
    out = echo_run()
    found = [e for e in out["ledger"] if e.kind == "deep_fallback" and e.verdict != "planned"]
    assert [(e.verdict, e.details) for e in found] == [("nothing new", {})]


def test_D8_known_holds_a_context_sentence_and_its_paraphrase_in_its_words_not_a_new_fact():
    sentence = UniqueTextDocument(
        document_id="d", page=2, sentence_number=1, text="The reading room opens at 9:00."
    )
    known = Known.of([sentence])
    read_back = sentence.model_copy(update={"sentence_number": 0, "text": "It opens at 9:00."})
    new_fact = read_back.model_copy(update={"text": "It opens at 10:00 on Sundays."})
    assert known.holds(sentence)
    assert known.holds(read_back)
    assert not known.holds(new_fact)
    # words of two context sentences joined into one claim are new
    apart = Known.of(
        [
            sentence.model_copy(update={"text": "Room fees: see the price list."}),
            sentence.model_copy(update={"sentence_number": 2, "text": "14 euros a night."}),
        ]
    )
    assert not apart.holds(new_fact.model_copy(update={"text": "Room fees: 14 euros a night."}))


def test_D8_the_full_search_drops_unread_best_sentences_the_context_holds():
    store = guide()
    hit = store.search("reading room weekdays", limit=1)[0]
    tool = ContextSearchTool("s", None, store)  # no model: best sentences, unread (D5)
    task = TaskInfo(task_no="1.2", task_prompt="reading room weekdays")
    ctx = ToolCallContext(task=task, text=task.task_prompt)
    fresh = tool.execute_with_prior_context(EmptyRequest(), ctx, {})
    assert fresh is not None
    assert hit.key in [d.key for d in fresh.documents]
    prior = {"1:r": [PromptAndContext(prompt="q", context=hit.text, documents=(hit,))]}
    again = tool.execute_with_prior_context(EmptyRequest(), ctx, prior)
    assert hit.key not in ([] if again is None else [d.key for d in again.documents])


# -- the gatekeeper's one structured reply carries the rewrites ----------------------------


def test_D8_one_gatekeeper_call_returns_the_pieces_with_their_rewrites():
    reply = {
        "sufficient": False,
        "missing": [
            {"question": PIECE, "search": [REWRITE, " ", PIECE, REWRITE]},
            {"question": " ", "search": ["x"]},
        ],
    }
    model = ScriptedChatModel(script=[reply])
    llm = ChatModelAssistant(model, initial_backoff=0)
    text = "Members may borrow up to ten books at a time, and they return them within three weeks."
    doc = UniqueTextDocument(document_id="d", page=1, text=text)
    verdict = llm.judge_context(QUESTION, [doc], [])
    assert verdict == ContextVerdict(
        sufficient=False, missing=(PIECE,), rewrites={PIECE: (REWRITE,)}
    )
    assert len(model.calls) == 1
    system = model.calls[0].system
    assert "in English" in system  # the documents' language, told from the context
    assert "search" in system


def test_D8_a_gatekeeper_reply_of_plain_questions_still_validates_without_rewrites():
    model = ScriptedChatModel(script=[{"sufficient": False, "missing": [PIECE]}])
    llm = ChatModelAssistant(model, initial_backoff=0)
    doc = UniqueTextDocument(document_id="d", text="Members may borrow ten books.")
    verdict = llm.judge_context(QUESTION, [doc], [])
    assert verdict.missing == (PIECE,)
    assert verdict.phrasings(PIECE) == ()


def test_D8_the_gatekeeper_prompt_names_the_documents_language_or_the_contexts():
    named = prompts.gatekeeper_search_system(context="c", documents_language="Hungarian")
    assert "in Hungarian" in named
    assert prompts.CONTEXT_LANGUAGE in prompts.gatekeeper_search_system(context="c")
    assert "(none)" in prompts.gatekeeper_search_system(context="")


# -- offline: words derived from the documents themselves -----------------------------------


def test_D8_offline_trigram_neighbours_are_corpus_words_and_none_when_nothing_is_near(
    monkeypatch: pytest.MonkeyPatch,
):
    from toolweave.tools import embeddings

    monkeypatch.setattr(embeddings, "extra_installed", lambda: False)
    words = CorpusWords(Counter(["colours", "catalogue", "hours", "choir"]))
    assert words.nearest("colors") == ["colours"]
    assert words.nearest("zebra") == []  # nothing near
    assert words.phrasings("Which colors are in the catalog?") == ("colours catalogue",)
    assert words.phrasings("Which colors?") == ()  # one near word alone reads anything with it
    assert words.phrasings("Which colours are in the catalogue?") == ()  # the corpus has them


def test_D8_offline_derived_words_come_from_the_corpus():
    pytest.importorskip("wordllama")  # the dev extra installs it
    store = guide()
    store.add_document(
        "arrival",
        ["# Arriving\nVehicles may be left in the garage behind the east wing."],
        name="Arrival",
    )
    found = build_corpus_words(store).phrasings("Where can I leave my car?")
    assert found
    vocabulary = set(build_corpus_words(store).words)
    assert all(word in vocabulary for phrasing in found for word in phrasing.split())
    assert "vehicles" in found[0].split()


def test_D8_words_of_the_documents_find_the_page_when_the_gatekeeper_gave_no_rewrites():
    pytest.importorskip("wordllama")
    store = guide()
    store.add_document(
        "arrival",
        [
            "# Arriving\nThe main entrance faces the river.",
            "# Vehicles\nVehicles may be left in the garage behind the east wing; "
            "it costs 2 euros per hour.",
        ],
        name="Arrival",
        lang="en",
    )
    question = "Where can I leave my car?"
    asked: list[str] = []

    def reader(piece: str, passage: str) -> str | None:  # a model: a car is left in a garage
        asked.append(piece)
        return next((line for line in passage.splitlines() if "garage" in line), None)

    deep = DeepSearchCoordinator()
    domain = Domain(
        name="guide", default_retrieval_tool="guide_search", deep_fallback=lambda _: deep
    )
    tools = [
        RetrievalTool("guide_search", "guide", store, limit=2),
        deep,
        NeighborPageSearchTool("neighbor_search", "guide", store),
        ContextSearchTool("context_search", "guide", store, max_brute_force_page_count=3),
    ]
    assistant = FunctionAssistant(
        judge=lambda q, d, g: ContextVerdict(sufficient=bool(g), missing=(question,)),
        read=reader,
        answer=lambda r: " | ".join(r.guaranteed) or "no information",
    )
    graph = build_graph(domain, tools, assistant=assistant, deep_fallback_llm_calls=6)  # reads
    out = ask(graph, question)
    assert "garage" in out["answer"]  # no page shares a word with the question: no scan (D5)
    assert set(asked) == {question}  # the derived words found the page; the piece read it
    found = next(e for e in out["ledger"] if e.kind == "deep_fallback" and e.verdict == "found new")
    assert list(found.details) == ["Arrival p. 2"]


def test_D8_offline_judge_searches_each_missing_word_with_the_questions_words():
    doc = UniqueTextDocument(document_id="d", page=1, text="The library lends books for weeks.")
    verdict = OfflineAssistant().judge_context("Is there a penalty for late books?", [doc], [])
    assert not verdict.sufficient
    assert len(verdict.missing) == 2
    searched = {verdict.phrasings(piece) for piece in verdict.missing}
    assert len(searched) == 1  # one search text: the words together, not one word alone
    (words,) = searched.pop()
    assert {"penalty", "late", "books"} <= set(words.split())


def test_D8_offline_a_question_the_documents_do_not_cover_stays_unanswered():
    pytest.importorskip("wordllama")
    store = guide()
    store.add_document(
        "tests",
        ["# Blood tests\nDo not eat for 12 hours before a blood test; you may drink water."],
        name="Blood tests",
        lang="en",
    )
    domain, tools = documents_domain("guide", store)
    graph = build_graph(domain, tools, assistant=OfflineAssistant())
    out = ask(graph, "Is there a swimming pool?")  # "water" is near, and alone
    assert out["answer"] == prompts.no_information_answer("en")


class _UnboundedPiece(BaseModel):
    question: str
    search: list[str]


class _UnboundedGatekeeperReply(BaseModel):
    sufficient: bool
    missing: list[_UnboundedPiece]


def test_D8_rewrites_are_capped_and_the_reply_budget_bounds_them_in_the_strict_subset():
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from toolweave.llm.replies import GatekeeperReply
    from toolweave.llm.structured import token_budget

    many = [f"wording {n}" for n in range(5)]
    model = ScriptedChatModel(
        script=[{"sufficient": False, "missing": [{"question": PIECE, "search": many}]}]
    )
    verdict = ChatModelAssistant(model, initial_backoff=0).judge_context(
        QUESTION, [UniqueTextDocument(document_id="d", text="Members may borrow books.")], []
    )
    assert verdict.phrasings(PIECE) == tuple(many[:3])
    sent = str(convert_to_openai_tool(GatekeeperReply))
    assert "maxItems" in sent  # A10: the strict subset's bounds (pattern, maxItems) are sent
    assert "maxLength" not in sent  # not in the strict subset
    assert token_budget(GatekeeperReply) < token_budget(_UnboundedGatekeeperReply)


def test_D8_X2_a_gatekeeper_reply_looping_in_its_rewrites_keeps_its_pieces():
    from toolweave.llm.replies import cut_gatekeeper_reply

    looped = (
        '{ "sufficient": false, "missing": [ { "question": "Where can I leave my car?", '
        '"search": ["parking lot", "garage", "car park", "car garage lot", "car parking", '
        '"car garage lot", "car parking", "car gar'
    )
    reply = cut_gatekeeper_reply(looped)
    assert reply is not None
    assert [(p.question, p.search) for p in reply.missing] == [
        ("Where can I leave my car?", ["parking lot", "garage", "car park"])
    ]
    assert cut_gatekeeper_reply('{"sufficient": true, "missing": [{"question": "x') is None
    assert cut_gatekeeper_reply('{"sufficient": false, "missing": [') is None


def blind_run(blind: Any) -> dict[str, Any]:
    """The rewrite run, where the reading room's page (a neighbour) is answered by ``blind``.

    ``blind(question)`` is what a small model says of a page that does not answer;
    every other page is read lexically.
    """
    lexical = lexical_reader([])

    def reader(question: str, passage: str) -> str | None:
        return blind(question) if "Reading room" in passage else lexical(question, passage)

    assistant = FunctionAssistant(
        judge=rewriting_judge,
        read=reader,
        answer=lambda r: " | ".join(r.guaranteed) or "no information",
    )
    out = ask(graph_over(guide(), assistant), QUESTION)
    decision = next(e for e in out["ledger"] if e.kind == "conditional")
    assert decision.verdict == "run"  # the neighbour page said nothing: the full search runs
    assert FEE in out["answer"]
    return out


def test_D8_K3_a_neighbour_answer_that_shares_nothing_with_its_page_is_no_find():
    # an answer from nowhere, of a page about other things
    out = blind_run(lambda q: "If you bring a library book back late, you pay a penalty.")
    assert "penalty" not in out["answer"]


def test_D8_K3_a_page_answer_that_says_the_question_back_is_no_find():
    out = blind_run(lambda q: q.split(" (")[0])  # the question, without the rewrite in brackets
    assert QUESTION not in out["answer"]


def test_D8_an_insufficient_reply_naming_no_piece_searches_the_question():
    model = ScriptedChatModel(script=[{"sufficient": False, "missing": []}])
    verdict = ChatModelAssistant(model, initial_backoff=0).judge_context(
        QUESTION, [UniqueTextDocument(document_id="d", text="Members may borrow books.")], []
    )
    assert verdict == ContextVerdict(sufficient=False, missing=(QUESTION,))


def test_D8_a_page_is_read_into_a_full_sentence_that_keeps_its_subject():
    model = ScriptedChatModel(script=[{"answer": "The reading room opens at 9:00 on weekdays."}])
    llm = ChatModelAssistant(model, initial_backoff=0)
    page = "# Lending rules (p. 2)\nThe reading room opens at 9:00 on weekdays."
    answer = llm.read_passage("When does the reading room open?", page, user_lang="en")
    assert answer == "The reading room opens at 9:00 on weekdays."
    system = model.calls[0].system
    assert "in English, in one\nfull sentence that names what the facts are about" in system
    assert system.endswith(f"Passage:\n{page}")


def test_D8_what_a_read_answer_adds_to_its_question_must_come_from_its_page():
    from toolweave.tools.search.page_reading import grounded

    borrowing = "# Borrowing\nMembers may borrow up to ten books at a time."
    returns = f"# Returns\n{FEE}"
    blind = "A library book brought back late is charged a fine."  # the page does not say it
    assert not grounded(blind, borrowing, PIECE, "en")
    assert grounded(FEE, returns, PIECE, "en")
    assert grounded("Members borrow up to ten books.", borrowing, PIECE, "en")
    hungarian = "# Kölcsönzés\nA tagok egyszerre legfeljebb tíz könyvet kölcsönözhetnek ki."
    assert grounded(blind, hungarian, PIECE, "en")  # a translation is not checked


@pytest.mark.parametrize("written", ["null", "None", '"null"', "N/A."])
def test_D8_a_page_answer_of_null_written_as_text_is_no_answer(written: str):
    model = ScriptedChatModel(script=[{"answer": written}])
    llm = ChatModelAssistant(model, initial_backoff=0)
    assert llm.read_passage("When?", "# Page\nNothing about it.", user_lang="en") is None


def budget_reading(*replies: str) -> Any:
    """A tool's budget over a model that reads pages with ``replies``, in turn."""
    from toolweave.llm.budget import LlmBudget

    model = ChatModelAssistant(
        ScriptedChatModel(script=[{"answer": reply} for reply in replies]), initial_backoff=0
    )
    return LlmBudget(model, limit=None, user_lang="en")


def test_D3_R9_a_page_reading_keeps_only_the_figures_its_page_holds():
    page = "# Visiting hours\nVisitors are welcome from 14:00 to 18:00; two at a time."
    budget = budget_reading(
        "Visits are from 14:00 to 18:00.",
        "Visits are from 14:00 to 18:00. Parking costs 500 Ft.",
    )
    assert budget.read_passage("When can I visit?", page) == "Visits are from 14:00 to 18:00."
    assert not budget.exhausted
    assert budget.read_passage("When can I visit?", page) == "Visits are from 14:00 to 18:00."
    assert budget.exhausted  # it wrote a price of its own: no more pages are read


def test_D3_R9_a_reading_that_invents_a_figure_is_no_find_and_ends_the_reading():
    page = "# Visiting hours\nVisitors are welcome from 14:00 to 18:00; two at a time."
    budget = budget_reading("The cost of parking per hour is $10.", "unused")
    assert budget.read_passage("How much is parking?", page) is None
    assert budget.exhausted
    assert budget.read_passage("How much is parking?", page) is None
    assert budget.spent == 1  # the second page was not sent to the model


def test_D3_R9_across_languages_a_reading_may_translate_a_name_not_a_figure():
    page = "# Látogatás\nA Kardiológia osztályon a látogatás 14:00 és 18:00 között van."
    budget = budget_reading(
        "On the Cardiology ward visits are from 14:00 to 18:00.",
        "On the Cardiology ward visits are from 15:00 to 18:00.",
    )
    question = "When can I visit cardiology?"
    assert budget.read_passage(question, page) == (
        "On the Cardiology ward visits are from 14:00 to 18:00."
    )
    assert budget.read_passage(question, page) is None
