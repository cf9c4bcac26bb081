"""The page graph (graph search) and the LangChain retriever hook of ContextSearchTool."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore
from test_search_rules import ctx_for

from toolweave import EmptyRequest
from toolweave.testing import FunctionAssistant
from toolweave.tools.search import ContextSearchTool, PageRef, page_documents

# --- graph search and the retriever hook ---------------------------------------------------


class LetterEmbedding(Embeddings):
    """A deterministic, offline embedding: letter frequencies (a stand-in for a real model)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        folded = text.lower()
        return [float(folded.count(ch)) + 0.01 for ch in "abcdefghijklmnopqrstuvwxyz"]


def test_page_graph_links_neighbours_and_pages_sharing_rare_terms(make_store):
    store = make_store()
    store.add_document("a", ["Intro page.", "The Zyxomab infusion room is on floor 2."], name="A")
    store.add_document("b", ["Zyxomab infusions are booked by the oncology desk."], name="B")
    store.add_document("c", ["Zyxomab is mentioned here too."], name="C")
    links = store.linked_pages("a", 2, limit=5)
    assert links[0].page == PageRef("a", 1)
    assert links[0].score == 1.0
    assert {link.page for link in links[1:]} == {PageRef("b", 1), PageRef("c", 1)}
    assert all("zyxomab" in link.shared_terms for link in links[1:])


def test_a_langchain_retriever_proposes_pages_keyword_search_misses(make_store):
    store = make_store()
    store.add_document(
        "hu", ["A gyógyszertár reggel nyolckor nyit."], name="Gyógyszertár", lang="hu"
    )
    vectors = InMemoryVectorStore.from_documents(page_documents(store), LetterEmbedding())
    search = ContextSearchTool(
        "context_search",
        None,
        store,
        retrievers=[vectors.as_retriever(search_kwargs={"k": 1})],
    )
    read: list[str] = []

    def answer(question: str, passage: str) -> str | None:
        read.append(passage.splitlines()[0])
        return "reggel nyolckor"  # the page's words (a figure it does not write is no find)

    result = search.execute(EmptyRequest(), ctx_for(FunctionAssistant(read=answer), "When?"))
    assert read == ["# Gyógyszertár"]  # found only through the retriever (one page: no "p. 1", R6)
    assert result is not None
    assert result.documents[0].document_id == "hu"
