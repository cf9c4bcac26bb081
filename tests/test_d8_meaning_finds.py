"""D8, D9: a missing piece whose words find nothing new is searched by meaning.

A question in other words than the documents (a word no page uses for the thing) has
nothing for a keyword search to find, and a deep search that looked only by words came
back empty. Where the store ranks by meaning, the full search then takes the sentences
nearest the piece's wording that the context lacks, among as many nearest sentences as
the first retrieval takes hits; they reach the answer as plain context, not guaranteed
(no word and no model judged them), so the answer uses them only if they answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from toolweave import EmptyRequest, ToolCallContext
from toolweave.llm.budget import LlmBudget
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.marker import AGENT_COORDINATOR_MARKER
from toolweave.state.task import PromptAndContext, TaskInfo
from toolweave.testing import FunctionAssistant
from toolweave.tools.search import ContextSearchTool, SqliteDocumentStore
from toolweave.tools.search.page_reading import MEANING_LIMIT, UNREAD_CHARS

PIECE = "Where does the rubbish go?"
REWRITE = "rubbish disposal"
"""No page says 'rubbish' or 'disposal': the pages say 'waste', 'bin' and 'sack'."""
CONCEPTS = {"rubbish": 0, "waste": 0, "bin": 0, "sack": 0, "library": 1, "books": 1}


class Concepts(Embeddings):
    """Deterministic vectors: one axis per concept word a text holds (a user's own model)."""

    def _vector(self, text: str) -> list[float]:
        row = [0.0, 0.0, 0.05]  # every text is a little alike, none is zero
        for word in text.lower().replace("?", " ").replace(".", " ").split():
            if word in CONCEPTS:
                row[CONCEPTS[word]] += 1.0
        return row

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


WASTE = "Waste goes in the green bin behind the house."
LIBRARY = [
    "The library lends books for three weeks.",
    "The library is open until 18:00.",
    "Books may be renewed twice.",
]


def town(tmp_path: Path, embeddings: Any, waste: list[str]) -> SqliteDocumentStore:
    store = SqliteDocumentStore(tmp_path / "town.sqlite", embeddings=embeddings)
    store.add_document("library", [" ".join(LIBRARY)], name="Library", lang="en")
    store.add_document("waste", [" ".join(waste)], name="Waste", lang="en")
    return store


def ctx_for(limit: int | None = None) -> Any:
    task = TaskInfo(task_no="1.2", task_prompt=PIECE, important_words=(REWRITE,))
    return ToolCallContext(
        task=task,
        text=f"Where do I put my rubbish?{AGENT_COORDINATOR_MARKER}{PIECE}",
        llm=LlmBudget(FunctionAssistant(), limit=limit, user_lang="en"),
    )


def prior(store: SqliteDocumentStore, document_id: str) -> dict[str, list[PromptAndContext]]:
    """The context holds every sentence of ``document_id``, as the first retrieval gave them."""
    docs = store.page_sentences(document_id, 1)
    context = " ".join(doc.text for doc in docs)
    return {"docs": [PromptAndContext(prompt=PIECE, context=context, documents=tuple(docs))]}


def search(store: SqliteDocumentStore, known: Any, limit: int | None = None) -> Any:
    tool = ContextSearchTool("context_search", None, store)
    return tool.execute_with_prior_context(EmptyRequest(), ctx_for(limit), known)


def texts(documents: tuple[UniqueTextDocument, ...]) -> list[str]:
    return [doc.text for doc in documents]


def test_D8_D9_a_piece_no_word_finds_is_searched_by_meaning_as_plain_context(
    tmp_path: Path,
) -> None:
    store = town(tmp_path, Concepts(), [WASTE])
    for budget in (None, 0):  # a model that may read, and one whose budget is spent (D7)
        result = search(store, prior(store, "library"), budget)
        assert result is not None
        assert WASTE in " ".join(texts(result.documents))
        assert result.mode.value == "context"  # not guaranteed: nothing judged it (D8)
        assert sum(len(t) for t in texts(result.documents)) <= UNREAD_CHARS


def test_D8_without_a_model_of_meaning_a_piece_no_word_finds_finds_nothing(
    tmp_path: Path,
) -> None:
    store = town(tmp_path, None, [WASTE])
    assert search(store, prior(store, "library"), 0) is None


def test_D8_a_search_by_meaning_that_reaches_only_the_contexts_sentences_finds_nothing(
    tmp_path: Path,
) -> None:
    # the nearest MEANING_LIMIT sentences are all in the context: the next one down is
    # no find (a ranking by meaning always has a nearest sentence)
    waste = [f"Waste sack number {n} is collected on day {n}." for n in range(MEANING_LIMIT)]
    store = town(tmp_path, Concepts(), waste)
    assert search(store, prior(store, "waste"), 0) is None
    # with one of them out of the context, that one is the find
    known = prior(store, "waste")
    held = known["docs"][0]
    kept = tuple(d for d in held.documents if "number 3 " not in d.text)
    known = {
        "docs": [PromptAndContext(prompt=PIECE, context=" ".join(texts(kept)), documents=kept)]
    }
    result = search(store, known, 0)
    assert result is not None
    assert any("number 3 " in t for t in texts(result.documents))
    assert all("library" not in t.lower() for t in texts(result.documents))
