"""D7, D8, D9, R9: what the deep search returns when its model may not read, and what a read gives.

A deep search whose budget is spent before it starts returns the page's own passages,
unread, when they say a word of the piece's rewrites that the context lacks; a page the
model read is represented by the page's sentences its answer rests on.
"""

from __future__ import annotations

from typing import Any

from stores import Store, StoreFactory

from toolweave import EmptyRequest, ToolCallContext
from toolweave.llm.budget import LlmBudget
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.marker import AGENT_COORDINATOR_MARKER
from toolweave.state.task import PromptAndContext, TaskInfo
from toolweave.testing import FunctionAssistant
from toolweave.tools.search import ContextSearchTool, NeighborPageSearchTool
from toolweave.tools.search.page_reading import UNREAD_CHARS

PIECE = "When can relatives come in?"
REWRITE = "visiting hours"
UNSAID = "visiting schedule"
"""A rewrite the page says only in part ('schedule' is on no page): the page must be read."""


def ward_store(make: StoreFactory) -> Store:
    store = make()
    store.add_document(
        "ward",
        [
            "# Ward guide\nThe ward is on the second floor. Meals are served at noon.",
            "Visiting hours are every day from 15:00 to 17:00. Two visitors at a time.",
            "The admission office is open on weekdays from 7:00 to 15:00.",
        ],
        name="Ward guide",
        lang="en",
    )
    return store


class Reader(FunctionAssistant):
    """Counts page reads; answers every page with ``reply``."""

    def __init__(self, reply: str | None = None) -> None:
        super().__init__()
        self.reply = reply
        self.reads = 0

    def read_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        self.reads += 1
        return self.reply if "15:00 to 17:00" in passage else None


def ctx_for(reader: Reader, *, limit: int | None, rewrites: tuple[str, ...] = (REWRITE,)) -> Any:
    task = TaskInfo(task_no="1.2", task_prompt=PIECE, important_words=rewrites)
    return ToolCallContext(
        task=task,
        text=f"Original question{AGENT_COORDINATOR_MARKER}{PIECE}",
        llm=LlmBudget(reader, limit=limit, user_lang="en"),
    )


def prior(*texts: tuple[int, int, str]) -> dict[str, list[PromptAndContext]]:
    docs = [
        UniqueTextDocument(
            document_id="ward", document_name="Ward guide", page=p, sentence_number=n, text=t
        )
        for p, n, t in texts
    ]
    context = " ".join(doc.text for doc in docs)
    return {"docs": [PromptAndContext(prompt=PIECE, context=context, documents=tuple(docs))]}


def test_D7_D9_a_search_whose_budget_is_spent_returns_the_pages_passages_unread(
    make_store: StoreFactory,
) -> None:
    reader = Reader(reply="15:00 to 17:00")
    search = ContextSearchTool("context_search", None, ward_store(make_store))
    result = search.execute(EmptyRequest(), ctx_for(reader, limit=0))
    assert reader.reads == 0  # D7: nothing left to read with
    assert result is not None
    assert result.mode.value == "guaranteed_context"
    texts = [d.text for d in result.documents]
    assert any("Visiting hours are every day from 15:00 to 17:00." in t for t in texts)
    assert all(d.sentence_number for d in result.documents)  # the document's own sentences
    assert sum(len(t) for t in texts) <= UNREAD_CHARS


def test_D8_unread_hits_must_say_a_word_of_the_rewrites_the_context_lacks(
    make_store: StoreFactory,
) -> None:
    reader = Reader()
    search = ContextSearchTool("context_search", None, ward_store(make_store))
    known = prior((2, 1, "Visiting hours are every day from 15:00 to 17:00."))
    ctx = ctx_for(reader, limit=0)
    assert search.execute_with_prior_context(EmptyRequest(), ctx, known) is None
    # the same search with a rewrite word the context lacks finds the office's hours
    ctx = ctx_for(reader, limit=0, rewrites=("admission office",))
    result = search.execute_with_prior_context(EmptyRequest(), ctx, known)
    assert result is not None
    assert any("admission office" in d.text for d in result.documents)


def test_D6_D7_a_neighbour_search_with_its_budget_spent_returns_matching_sentences_unread(
    make_store: StoreFactory,
) -> None:
    reader = Reader(reply="15:00 to 17:00")
    search = NeighborPageSearchTool("neighbor_search", None, ward_store(make_store))
    known = prior((1, 1, "The ward is on the second floor."))
    result = search.execute_with_prior_context(EmptyRequest(), ctx_for(reader, limit=0), known)
    assert reader.reads == 0
    assert result is not None
    assert any("Visiting hours" in d.text for d in result.documents)
    assert all("admission" not in d.text for d in result.documents)  # page 3 is no neighbour


def test_R9_D3_a_page_read_gives_the_pages_sentences_its_answer_rests_on(
    make_store: StoreFactory,
) -> None:
    reader = Reader(reply="15:00 to 17:00")  # a small model's fragment: whose hours?
    search = ContextSearchTool("context_search", None, ward_store(make_store))
    result = search.execute(EmptyRequest(), ctx_for(reader, limit=None, rewrites=(UNSAID,)))
    assert reader.reads >= 1
    assert result is not None
    texts = [d.text for d in result.documents]
    assert "Visiting hours are every day from 15:00 to 17:00." in texts
    assert "15:00 to 17:00" not in texts
    assert all(d.sentence_number for d in result.documents)


def test_R9_D3_a_read_answer_no_sentence_says_stays_the_answer(
    make_store: StoreFactory,
) -> None:
    reader = Reader(reply="Relatives are welcome during visiting time in the afternoons.")
    search = ContextSearchTool("context_search", None, ward_store(make_store))
    result = search.execute(EmptyRequest(), ctx_for(reader, limit=None, rewrites=(UNSAID,)))
    assert result is not None
    assert [d.text for d in result.documents] == [
        "Relatives are welcome during visiting time in the afternoons."
    ]
    assert result.documents[0].sentence_number == 0


def test_D7_D8_with_its_budget_spent_a_page_saying_one_word_of_a_piece_is_no_find(
    make_store: StoreFactory,
) -> None:
    search = ContextSearchTool("context_search", None, ward_store(make_store))
    ctx = ctx_for(Reader(), limit=0, rewrites=("visiting kindergarten",))
    result = search.execute(EmptyRequest(), ctx)  # no page says 'kindergarten'
    # no find, guaranteed to reach the answer; where the store ranks by meaning (the bundled
    # model), at most the nearest sentences come back as plain context (D8, D9)
    assert result is None or result.mode.value == "context"


def test_R9_D3_a_read_time_picks_the_sentence_with_that_time_not_one_sharing_its_hour(
    make_store: StoreFactory,
) -> None:
    store = make_store()
    store.add_document(
        "office",
        ["# Office\nPlease arrive by 7:30. The office is open from 7:00 to 15:00."],
        name="Office",
        lang="en",
    )
    reader = Reader(reply="7:00 to 15:00")
    reader.read_passage = lambda question, passage, *, user_lang: "7:00 to 15:00"  # type: ignore[method-assign]
    search = ContextSearchTool("context_search", None, store)
    ctx = ctx_for(reader, limit=None, rewrites=("office schedule",))
    result = search.execute(EmptyRequest(), ctx)
    assert result is not None
    assert [d.text for d in result.documents] == ["The office is open from 7:00 to 15:00."]


def test_R9_D3_a_read_amount_with_a_thousands_space_is_one_figure(
    make_store: StoreFactory,
) -> None:
    store = make_store()
    store.add_document(
        "fees",
        ["# Fees\nA single room costs 14 000 Ft a night. A parent's bed costs 6 000 Ft a night."],
        name="Fees",
        lang="en",
    )
    reader = Reader()
    reader.read_passage = lambda question, passage, *, user_lang: "14 000 Ft a night"  # type: ignore[method-assign]
    search = ContextSearchTool("context_search", None, store)
    result = search.execute(EmptyRequest(), ctx_for(reader, limit=None, rewrites=("room fee",)))
    assert result is not None
    assert [d.text for d in result.documents] == ["A single room costs 14 000 Ft a night."]


def test_A10_D7_a_piece_its_pages_passages_say_whole_is_answered_unread_without_a_call(
    make_store: StoreFactory,
) -> None:
    reader = Reader(reply="15:00 to 17:00")
    search = ContextSearchTool("context_search", None, ward_store(make_store))
    result = search.execute(EmptyRequest(), ctx_for(reader, limit=None))  # budget left
    assert reader.reads == 0  # the page says every word of "visiting hours": nothing to read
    assert result is not None
    assert any("Visiting hours are every day" in d.text for d in result.documents)


def test_A10_D7_the_neighbour_search_reads_only_when_the_passages_say_nothing_whole(
    make_store: StoreFactory,
) -> None:
    store = ward_store(make_store)
    neighbours = NeighborPageSearchTool("neighbor_search", None, store)
    context = prior((1, 1, "The ward is on the second floor."))
    reader = Reader(reply="Visiting hours are every day from 15:00 to 17:00.")
    said = neighbours.execute_with_prior_context(
        EmptyRequest(), ctx_for(reader, limit=None), context
    )
    assert reader.reads == 0
    assert said is not None
    unsaid = neighbours.execute_with_prior_context(
        EmptyRequest(), ctx_for(reader, limit=None, rewrites=(UNSAID,)), context
    )
    assert reader.reads >= 1  # 'schedule' is on no page: the page is read
    assert unsaid is not None
