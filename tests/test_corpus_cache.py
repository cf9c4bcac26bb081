"""The on-disk index cache of the bundled corpus: reused by a second process, rebuilt on change."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from toolweave.tools.search import SourceDocument, SqliteDocumentStore
from toolweave.tools.search.index_cache import cache_path, cached_store, index_key
from toolweave_korhaz import korhaz_corpus, load_korhaz_store

ROOT = Path(__file__).resolve().parents[1]

LOAD = """
import sys
from toolweave.tools.search.store import SqliteDocumentStore
if sys.argv[1] == "forbid-indexing":
    def refuse(self, documents):
        raise SystemExit("the corpus was indexed again instead of loaded from the cache")
    SqliteDocumentStore.add_documents = refuse
from toolweave_korhaz import load_korhaz_store
store = load_korhaz_store()
print(len(store), store.search("parkolás")[0].text)
"""


def _run(data_dir: Path, mode: str) -> str:
    env = {**os.environ, "TOOLWEAVE_DATA_DIR": str(data_dir)}
    done = subprocess.run(
        [sys.executable, "-c", LOAD, mode],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_second_process_loads_the_indexed_corpus_from_the_cache(tmp_path):
    first = _run(tmp_path, "build")
    cached = list((tmp_path / "cache").glob("korhaz-*.sqlite"))
    assert len(cached) == 1
    # the second process may not index anything: it must load the file
    assert _run(tmp_path, "forbid-indexing") == first
    assert first.startswith(f"{len(korhaz_corpus())} ")


def _docs(text: str) -> list[SourceDocument]:
    return [SourceDocument("a", (text,), name="A", lang="hu")]


def test_changed_data_rebuilds_the_cache_and_drops_the_old_one(tmp_path):
    old = cached_store(_docs("A büfé 7:00-kor nyit."), name="demo", cache_dir=tmp_path)
    assert [d.text for d in old.search("büfé")] == ["A büfé 7:00-kor nyit."]
    new_docs = _docs("A büfé 8:00-kor nyit.")
    assert index_key(new_docs) != index_key(_docs("A büfé 7:00-kor nyit."))
    new = cached_store(new_docs, name="demo", cache_dir=tmp_path)
    assert [d.text for d in new.search("büfé")] == ["A büfé 8:00-kor nyit."]
    assert sorted(tmp_path.glob("demo-*.sqlite")) == [
        cache_path(tmp_path, "demo", index_key(new_docs))
    ]


def test_cached_store_reads_the_file_when_the_key_matches(tmp_path, monkeypatch):
    docs = _docs("A parkolás díja 500 Ft.")
    cached_store(docs, name="demo", cache_dir=tmp_path)

    def refuse(self: SqliteDocumentStore, documents: object) -> int:
        raise AssertionError("indexed again")

    monkeypatch.setattr(SqliteDocumentStore, "add_documents", refuse)
    again = cached_store(docs, name="demo", cache_dir=tmp_path)
    assert [d.text for d in again.search("parkolni")] == ["A parkolás díja 500 Ft."]


def test_corrupt_cache_file_is_rebuilt_not_fatal(tmp_path):
    docs = _docs("A parkolás díja 500 Ft.")
    path = cache_path(tmp_path, "demo", index_key(docs))
    path.write_bytes(b"not a database at all" * 100)
    store = cached_store(docs, name="demo", cache_dir=tmp_path)
    assert len(store) == 1
    assert SqliteDocumentStore.load(path).search("parkolás")  # rewritten whole


def test_unwritable_cache_folder_still_gives_a_store(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    store = cached_store(_docs("A büfé 7:00-kor nyit."), name="demo", cache_dir=blocker / "x")
    assert len(store) == 1


def test_load_korhaz_store_without_a_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path))
    store = load_korhaz_store(cache_dir=None)
    assert len(store) == len(korhaz_corpus())
    assert not (tmp_path / "cache").exists()


def test_loading_a_missing_cache_file_is_an_error(tmp_path):
    with pytest.raises(sqlite3.Error):
        SqliteDocumentStore.load(tmp_path / "missing.sqlite")
