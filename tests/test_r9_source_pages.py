"""R6, R9: a source is cited with its page only when its document has several.

A store knows how many pages each document has (``DocumentInfo.page_count``); its
search tools put that count on the documents they return, the answer's ``Source``
keeps it, and every surface (the CLI's sources, the agent tool's text) names a page
of a document of several and no page of a one-page document: "Pool", not "Pool, p. 1".
A neutral town: a one-page pool leaflet and a two-page library guide.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from support import ask

from toolweave import EmptyRequest, OfflineAssistant, build_graph, checkpoint_serde
from toolweave.cli.render import answer_lines, source_lines
from toolweave.domains.documents import documents_domain
from toolweave.graph.agent_tool import answer_with_sources
from toolweave.llm.budget import LlmBudget
from toolweave.state.documents import Source, as_sources
from toolweave.state.task import TaskInfo
from toolweave.testing import FunctionAssistant
from toolweave.tools.base import ToolCallContext
from toolweave.tools.search import ContextSearchTool, SqliteDocumentStore

POOL = "Swimming pool tickets cost four euros. Children swim for free."
LIBRARY = (
    "The library opens at nine in the morning. Members may borrow ten books.",
    "Late returns cost twenty cents a day.",
)


def town() -> SqliteDocumentStore:
    store = SqliteDocumentStore()
    store.add_document("pool", POOL, name="Pool", lang="en")
    store.add_document("library", list(LIBRARY), name="Library", lang="en")
    return store


def _ask(question: str) -> dict[str, Any]:
    domain, tools = documents_domain("town", town())
    graph = build_graph(
        domain,
        tools,
        assistant=OfflineAssistant(),
        checkpointer=InMemorySaver(serde=checkpoint_serde()),
    )
    return ask(graph, question)


def test_R6_a_one_page_document_is_cited_without_a_page_number() -> None:
    out = _ask("How much is a swimming pool ticket?")
    (source,) = as_sources(out["sources"])
    assert (source.name, source.pages, source.page_count) == ("Pool", (1,), 1)  # data kept
    assert source.cited_pages == ()
    assert answer_lines(out, "en")[-2:] == ["Sources:", "  [1] Pool"]  # the CLI's lines
    assert source_lines(out["sources"], "hu")[1] == "  - Pool"  # no "1. oldal" either
    assert answer_with_sources(out).endswith("Sources:\n[1] Pool")  # the agent tool's text


def test_R6_a_page_of_a_long_document_is_cited_with_its_page() -> None:
    out = _ask("How much do late returns cost?")
    (source,) = as_sources(out["sources"])
    assert (source.name, source.pages, source.page_count) == ("Library", (2,), 2)
    assert answer_lines(out, "en")[-1] == "  [1] Library, p. 2"
    assert source_lines(out["sources"], "hu")[1] == "  - Library, 2. oldal"
    assert answer_with_sources(out).endswith("Sources:\n[1] Library, p. 2")


def test_R9_a_source_stored_before_page_counts_loads_and_is_cited_with_its_pages() -> None:
    """A checkpoint written before ``page_count`` existed: nothing tells one page from many."""
    (old,) = as_sources([{"document_id": "a", "name": "A", "pages": [1], "url": None}])
    assert (old.page_count, old.cited_pages) == (None, (1,))
    assert source_lines([old], "en")[1] == "  - A, p. 1"
    assert Source(document_id="b", name="B", pages=(1, 3), page_count=4).cited_pages == (1, 3)


def _deep_search(question: str, assistant: FunctionAssistant | None) -> Any:
    search = ContextSearchTool("town_context_search", None, town())
    ctx = ToolCallContext(
        task=TaskInfo(task_no="1.1", task_prompt=question),
        text=question,
        llm=None if assistant is None else LlmBudget(assistant, limit=None, user_lang="en"),
    )
    result = search.execute(EmptyRequest(), ctx)
    assert result is not None
    return [(d.document_id, d.page, d.page_count) for d in result.documents]


def test_R9_the_deep_searchs_sentences_carry_their_documents_page_count() -> None:
    """Unread best sentences (D5: no model to read with) and a page's reading (D3) alike."""
    unread = _deep_search("When does the library open?", None)
    assert ("library", 1, 2) in unread
    assert all(count == {"pool": 1, "library": 2}[doc] for doc, _, count in unread)
    reads = FunctionAssistant(read=lambda q, page: "Four euros." if "euros" in page else None)
    assert _deep_search("How much is a swimming pool ticket?", reads) == [("pool", 1, 1)]


def test_R6_the_models_context_labels_a_one_page_documents_passage_without_a_page() -> None:
    """What the model reads it may copy: no "p. 1" for a one-page document in its context."""
    from toolweave.llm.chat_messages import format_context
    from toolweave.state.documents import UniqueTextDocument

    def doc(name: str, page: int, count: int | None) -> UniqueTextDocument:
        return UniqueTextDocument(
            text="Open at nine.",
            document_id=name,
            document_name=name,
            page=page,
            page_count=count,
        )

    lines = format_context([doc("Pool", 1, 1), doc("Library", 2, 2), doc("Hall", 1, None)])
    assert lines.splitlines() == [
        "Pool:",
        "[1] Open at nine.",
        "Library, p. 2:",
        "[2] Open at nine.",
        "Hall, p. 1:",  # a page count not known: the page is named
        "[3] Open at nine.",
    ]


def test_R6_a_page_read_for_the_model_is_headed_without_a_page_of_one() -> None:
    from toolweave.tools.search.page_reading import page_passage
    from toolweave.tools.search.protocol import PageRef

    store = town()
    pool = page_passage(store, PageRef("pool", 1))
    library = page_passage(store, PageRef("library", 2))
    assert pool is not None
    assert pool.splitlines()[0] == "# Pool"
    assert library is not None
    assert library.splitlines()[0] == "# Library (p. 2)"
