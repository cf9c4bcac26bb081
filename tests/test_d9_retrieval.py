"""D9: retrieval finds passages by keywords and meaning, within a character budget.

A neutral corpus (a town's services). The question "When do they pick up the
rubbish?" shares no content word with the page that answers it ("Household waste
is collected on Tuesdays"): keywords alone cannot find it, the semantic ranking can.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from durable import postgres_url
from langchain_core.embeddings import Embeddings

from toolweave.domains.documents import documents_domain
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.results import ResultMode
from toolweave.state.task import TaskInfo
from toolweave.tools import embeddings as embeddings_module
from toolweave.tools.base import EmptyRequest, ToolCallContext
from toolweave.tools.progress import ProgressEmitter
from toolweave.tools.search import SqliteDocumentStore, ingest, vectors
from toolweave.tools.search.passages import passages
from toolweave.tools.search.postgres_store import PostgresDocumentStore
from toolweave.tools.search.retrieval import RetrievalTool, retrieve, widened
from toolweave.tools.search.sql_store import SqlDocumentStore

QUESTION = "When do they pick up the rubbish?"
ANSWER = "Household waste is collected on Tuesdays."
NEIGHBOUR = "Put the bin at the kerb before seven in the morning."

TOWN = {
    "waste": (
        "Waste",
        [
            f"Collection days. {ANSWER} {NEIGHBOUR} Garden cuttings go in the green sack.",
            "Bulky items such as sofas need a booked appointment with the depot.",
        ],
    ),
    "library": (
        "Library",
        [
            "The library opens at nine in the morning. Members may borrow ten books.",
            "Late returns cost twenty cents a day.",
        ],
    ),
    "pool": ("Pool", ["Swimming pool tickets cost four euros. Children swim for free."]),
    "parking": ("Parking", ["Parking permits are issued by the town hall on weekdays."]),
    "council": ("Council", ["The council meets on the first Monday of each month."]),
}


def fill(store: SqlDocumentStore) -> SqlDocumentStore:
    for doc_id, (name, pages) in TOWN.items():
        store.add_document(doc_id, pages, name=name, lang="en")
    return store


CONCEPTS = {
    "waste": 0,
    "rubbish": 0,
    "bin": 0,
    "sack": 0,
    "library": 1,
    "books": 1,
    "swimming": 2,
    "swim": 2,
    "parking": 3,
    "council": 4,
}


class ConceptEmbeddings(Embeddings):
    """Deterministic vectors: one axis per concept word a text holds (a user's own model).

    ``swap`` maps the rubbish concept onto the library's axis: the ranking then
    follows the model, not the words.
    """

    def __init__(self, *, model_id: str = "concepts-v1", swap: bool = False) -> None:
        self.model_id = model_id
        self.swap = swap
        self.documents_embedded = 0
        self.queries_embedded = 0

    def _vector(self, text: str) -> list[float]:
        row = [0.0] * 6
        row[5] = 0.05  # every text is a little alike, none is zero
        for word in text.lower().replace("?", " ").replace(".", " ").split():
            axis = CONCEPTS.get(word)
            if axis is not None:
                row[1 if self.swap and axis == 0 and word == "rubbish" else axis] += 1.0
        return row

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents_embedded += len(texts)
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries_embedded += 1
        return self._vector(text)


Factory = Callable[..., SqlDocumentStore]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """Stores of one kind; two calls with the same ``name`` open the same documents."""
    made: list[SqlDocumentStore] = []
    url = postgres_url() if request.param == "postgres" else ""
    run = uuid.uuid4().hex[:10]

    def make(name: str = "town", embeddings: Any = None) -> SqlDocumentStore:
        store: SqlDocumentStore
        if request.param == "sqlite":
            store = SqliteDocumentStore(tmp_path / f"{name}.sqlite", embeddings=embeddings)
        else:
            store = PostgresDocumentStore(url, collection=f"d9-{name}-{run}", embeddings=embeddings)
        made.append(store)
        return store

    yield make
    for store in made:
        if isinstance(store, PostgresDocumentStore):
            store.clear()
        store.close()  # type: ignore[attr-defined]


def texts(documents: list[UniqueTextDocument]) -> list[str]:
    return [d.text for d in documents]


def test_D9_keywords_alone_miss_a_question_in_other_words(make_store: Factory) -> None:
    store = fill(make_store(embeddings=None))
    assert ANSWER not in texts(retrieve(store, QUESTION))
    assert store.fused_search(QUESTION) == store.search(QUESTION)


def test_D9_the_users_own_embeddings_find_the_passage_by_meaning(make_store: Factory) -> None:
    store = fill(make_store(embeddings=ConceptEmbeddings()))
    found = retrieve(store, QUESTION, limit=1)
    assert ANSWER in texts(found)
    swapped = fill(make_store("swapped", embeddings=ConceptEmbeddings(swap=True)))
    assert ANSWER not in texts(retrieve(swapped, QUESTION, limit=1))
    assert any("library" in t for t in texts(retrieve(swapped, QUESTION, limit=1)))


def test_D9_the_bundled_static_model_finds_the_passage_by_meaning(make_store: Factory) -> None:
    if not embeddings_module.extra_installed():
        pytest.skip("the embeddings extra is not installed")
    store = fill(make_store(embeddings="auto"))
    assert isinstance(store.embeddings, embeddings_module.StaticEmbeddings)
    assert ANSWER not in texts(store.search(QUESTION, limit=3))
    assert ANSWER in texts(store.semantic_search(QUESTION, limit=3))
    assert ANSWER in texts(retrieve(store, QUESTION, limit=3))


def test_D9_vectors_are_stored_at_ingestion_and_a_new_store_does_not_embed_again(
    make_store: Factory,
) -> None:
    ingesting = ConceptEmbeddings()
    fill(make_store(embeddings=ingesting))
    sentences = ingesting.documents_embedded
    assert sentences >= 10
    assert ingesting.queries_embedded == 0
    reading = ConceptEmbeddings()
    store = make_store(embeddings=reading)
    for _ in range(3):
        assert ANSWER in texts(retrieve(store, QUESTION, limit=1))
    assert reading.documents_embedded == 0
    assert reading.queries_embedded == 3
    assert store.embed_missing() == 0
    other_model = ConceptEmbeddings(model_id="concepts-v2")
    store.use_embeddings(other_model)
    assert other_model.documents_embedded == sentences  # vectors are kept per model


def test_D9_a_removed_or_replaced_document_leaves_the_semantic_ranking(
    make_store: Factory,
) -> None:
    store = fill(make_store(embeddings=ConceptEmbeddings()))
    assert ANSWER in texts(store.semantic_search(QUESTION, limit=3))
    store.add_document("waste", ["Recycling happens at the depot."], name="Waste", lang="en")
    assert ANSWER not in texts(store.semantic_search(QUESTION, limit=10))
    store.remove_document("waste")
    assert all(d.document_id != "waste" for d in store.semantic_search(QUESTION, limit=10))


def test_D9_passages_hold_the_neighbour_sentences_of_the_same_page(make_store: Factory) -> None:
    store = fill(make_store(embeddings=None))
    found = retrieve(store, "household waste Tuesdays", limit=1)
    assert texts(found) == ["Collection days.", ANSWER, NEIGHBOUR]
    assert {(d.document_id, d.page) for d in found} == {("waste", 1)}
    hit = next(d for d in found if d.text == ANSWER)
    assert all(d.sentence_score < hit.sentence_score for d in found if d is not hit)
    assert [d.sentence_number for d in found] == [1, 2, 3]  # stored identity (R6)
    lone = retrieve(store, "household waste Tuesdays", limit=1, neighbours=0)
    assert texts(lone) == [ANSWER]


def _sentence(page: int, number: int, text: str, score: float) -> UniqueTextDocument:
    return UniqueTextDocument(
        document_id="d", page=page, sentence_number=number, text=text, sentence_score=score
    )


def test_D9_the_character_budget_is_never_exceeded() -> None:
    page = [_sentence(1, n, f"Sentence {n} " + "x" * 80, 0.0) for n in range(1, 41)]
    hits = [page[n].model_copy(update={"sentence_score": 1.0 - n / 100}) for n in range(2, 40, 4)]
    for budget in (50, 100, 250, 400, 1_000, 10_000):
        found = passages(hits, lambda _d, _p: page, max_chars=budget)
        assert sum(len(d.text) for d in found) <= budget
    assert passages(hits, lambda _d, _p: page, max_chars=50) == []
    tight = passages(hits, lambda _d, _p: page, max_chars=200)
    assert [d.sentence_number for d in tight] == [3, 7]  # passages do not fit: the hits alone
    assert len(passages(hits, lambda _d, _p: page, max_chars=10_000)) == 3 * len(hits)


def test_D9_adjacent_hits_merge_into_one_passage_in_page_order() -> None:
    page = [_sentence(1, n, f"S{n}.", 0.0) for n in range(1, 9)]
    hits = [page[5].model_copy(update={"sentence_score": 0.9}), page[3]]
    hits[1] = hits[1].model_copy(update={"sentence_score": 0.8})
    found = passages(hits, lambda _d, _p: page, max_chars=1_000)
    assert [d.sentence_number for d in found] == [3, 4, 5, 6, 7]
    by_number = {d.sentence_number: d.sentence_score for d in found}
    assert by_number[4] == 0.8  # hits keep their own scores
    assert by_number[6] == 0.9


def test_D9_only_the_better_half_of_the_hits_get_their_neighbours() -> None:
    """A10, D9: a low-ranked hit comes alone; its neighbours would cost every call."""
    page = [_sentence(1, n, f"S{n}.", 0.0) for n in range(1, 41)]
    hits = [page[n].model_copy(update={"sentence_score": 1 - n / 100}) for n in (4, 14, 24, 34)]
    found = passages(hits, lambda _d, _p: page, max_chars=1_000, widened=widened(hits))
    assert widened(hits) == 2
    assert [d.sentence_number for d in found] == [4, 5, 6, 14, 15, 16, 25, 35]
    every = passages(hits, lambda _d, _p: page, max_chars=1_000)
    assert len(every) == 3 * len(hits)


def test_D9_retrieval_widens_the_better_half_of_its_hits(make_store: Factory) -> None:
    store = make_store(embeddings=None)
    store.add_document("a", ["Alpha one. Ferries sail at noon daily. Alpha three."], name="A")
    store.add_document("b", ["Beta one. Ferries are blue. Beta three."], name="B")
    found = texts(retrieve(store, "ferries sail noon", limit=2))
    assert found == [
        "Alpha one.",
        "Ferries sail at noon daily.",
        "Alpha three.",
        "Ferries are blue.",
    ]


def test_D9_fusion_is_reciprocal_rank_of_keywords_and_meaning(make_store: Factory) -> None:
    store = fill(make_store(embeddings=ConceptEmbeddings()))
    question = "library rubbish"
    keyword = [d.key for d in store.search(question, limit=24)]
    semantic = [d.key for d in store.semantic_search(question, limit=24)]
    fused = store.fused_search(question, limit=5)
    for doc in fused:
        expected = sum(
            1.0 / (vectors.RRF_K + ranking.index(doc.key) + 1)
            for ranking in (keyword, semantic)
            if doc.key in ranking
        )
        assert doc.sentence_score == pytest.approx(expected * (vectors.RRF_K + 1) / 2)
    scores = [d.sentence_score for d in fused]
    assert scores == sorted(scores, reverse=True)


def test_D9_without_the_extra_auto_means_keywords_exactly_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embeddings_module, "extra_installed", lambda: False)
    store = fill(SqliteDocumentStore(embeddings="auto"))
    assert store.embeddings is None
    assert store.semantic_search(QUESTION) == []
    assert store.fused_search("library books") == store.search("library books")


def test_D9_the_documents_domain_retrieval_uses_the_users_embeddings() -> None:
    store = fill(SqliteDocumentStore(embeddings=None))
    model = ConceptEmbeddings()
    domain, tools = documents_domain("town", store, embeddings=model)
    retrieval = next(t for t in tools if t.name == domain.default_retrieval_tool)
    assert isinstance(retrieval, RetrievalTool)
    assert model.documents_embedded >= 10  # once, when the domain is made
    ctx = ToolCallContext(
        task=TaskInfo(task_no="1", task_prompt=QUESTION),
        text=QUESTION,
        user_lang="en",
        progress=ProgressEmitter(retrieval.name, None),
    )
    result = retrieval.execute(EmptyRequest(), ctx)
    assert result is not None
    assert result.mode is ResultMode.CONTEXT
    assert ANSWER in [d.text for d in result.documents]
    assert model.queries_embedded == 1


def test_D9_the_language_and_document_filters_hold_for_the_semantic_ranking(
    make_store: Factory,
) -> None:
    store = fill(make_store(embeddings=ConceptEmbeddings()))
    store.add_document("hulladek", ["A waste szerdán megy."], name="Hulladék", lang="hu")
    assert {d.document_id for d in store.semantic_search(QUESTION, limit=20, lang="hu")} == {
        "hulladek"
    }
    english = store.semantic_search(QUESTION, limit=20, lang="en")
    assert english
    assert all(d.document_id != "hulladek" for d in english)
    only = store.fused_search(QUESTION, limit=20, document_ids=["library", "hulladek"])
    assert {d.document_id for d in only} <= {"library", "hulladek"}
    assert "hulladek" in {d.document_id for d in only}


def test_D9_when_a_hit_holds_every_question_word_no_query_vector_is_computed(
    make_store: Factory,
) -> None:
    model = ConceptEmbeddings()
    store = fill(make_store(embeddings=model))
    question = "household waste Tuesdays"
    assert store.fused_search(question, limit=3) == store.search(question, limit=3)
    assert model.queries_embedded == 0  # the keywords found the question's own words
    store.fused_search(QUESTION, limit=3)
    assert model.queries_embedded == 1  # no sentence holds them all: fused by meaning


def test_D9_ingesting_files_embeds_their_sentences_once(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "waste.md").write_text(f"# Waste\n\n{ANSWER} {NEIGHBOUR}\n", encoding="utf-8")
    (folder / "pool.txt").write_text("Swimming pool tickets cost four euros.\n", encoding="utf-8")
    model = ConceptEmbeddings()
    report = ingest([folder], SqliteDocumentStore(tmp_path / "docs.sqlite", embeddings=model))
    assert report.ok
    assert model.documents_embedded == report.sentences
    reopened = ConceptEmbeddings()
    store = SqliteDocumentStore(tmp_path / "docs.sqlite", embeddings=reopened)
    assert ANSWER in texts(retrieve(store, QUESTION, limit=1))
    assert reopened.documents_embedded == 0
