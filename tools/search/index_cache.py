"""An on-disk cache of indexed document sets, keyed by the data's and indexing code's hash."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
from collections.abc import Iterable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from toolweave.tools import text as text_kit
from toolweave.tools.embeddings import resolve
from toolweave.tools.search import sqlite_sql, text, vectors
from toolweave.tools.search.protocol import SourceDocument
from toolweave.tools.search.store import SqliteDocumentStore

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

logger = logging.getLogger(__name__)

CACHE_SUFFIX = ".sqlite"
KEY_CHARS = 20  # hex characters of the SHA-256 key in the file name


def _code_fingerprint() -> bytes:
    """The source of the modules that decide the index terms, and the stemmer's version."""
    digest = hashlib.sha256()
    for module in (text_kit, text, sqlite_sql, vectors):
        path = module.__file__
        if path is not None:
            digest.update(Path(path).read_bytes())
    try:
        digest.update(version("snowballstemmer").encode())
    except PackageNotFoundError:  # pragma: no cover - a vendored stemmer
        digest.update(b"snowballstemmer-unknown")
    return digest.digest()


def index_key(
    documents: Sequence[SourceDocument], embeddings: vectors.EmbeddingsOption = "auto"
) -> str:
    """The hash naming the cache of ``documents`` (data, indexing code, embedding model id)."""
    resolved = resolve(embeddings)
    model = "" if resolved is None else vectors.model_id(resolved)
    digest = hashlib.sha256(_code_fingerprint())
    digest.update(model.encode("utf-8") + b"\x00model")
    for doc in documents:
        for part in (doc.document_id, doc.name, doc.url or "", doc.lang or "", *doc.pages):
            encoded = part.encode("utf-8")
            digest.update(len(encoded).to_bytes(8, "big"))
            digest.update(encoded)
        digest.update(b"\x00doc")
    return digest.hexdigest()[:KEY_CHARS]


def cache_path(cache_dir: str | os.PathLike[str], name: str, key: str) -> Path:
    """Where the cache of the document set ``name`` with ``key`` lives."""
    return Path(cache_dir) / f"{name}-{key}{CACHE_SUFFIX}"


def _load(
    path: Path, stopwords: Iterable[str], embeddings: Embeddings | None
) -> SqliteDocumentStore | None:
    if not path.is_file():
        return None
    try:
        return SqliteDocumentStore.load(path, stopwords=stopwords, embeddings=embeddings)
    except sqlite3.Error as exc:
        logger.info("index cache %s unreadable (%s): rebuilding", path, exc)
        return None


def _save(store: SqliteDocumentStore, path: Path, name: str) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.unlink(missing_ok=True)
        store.save(partial)
        os.replace(partial, path)
        for stale in path.parent.glob(f"{name}-*{CACHE_SUFFIX}"):
            if stale != path:
                stale.unlink(missing_ok=True)
    except (OSError, sqlite3.Error) as exc:
        logger.info("index cache %s not written (%s)", path, exc)
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def cached_store(
    documents: Sequence[SourceDocument],
    *,
    name: str,
    cache_dir: str | os.PathLike[str] | None,
    stopwords: Iterable[str] = (),
    embeddings: vectors.EmbeddingsOption = "auto",
) -> SqliteDocumentStore:
    """A new in-memory store of ``documents`` (and their vectors, D9), from the cache if current.

    Args:
        documents: The documents to index.
        name: The document set's name (``<name>-<key>.sqlite``; older caches are removed).
        cache_dir: The cache folder; ``None`` indexes in memory without a cache.
        stopwords: The store's extra query stop words (not part of the index).
        embeddings: The store's embedding model (see ``SqliteDocumentStore``).
    """
    model = resolve(embeddings)
    if cache_dir is not None:
        path = cache_path(cache_dir, name, index_key(documents, model))
        loaded = _load(path, stopwords, model)
        if loaded is not None:
            return loaded
    store = SqliteDocumentStore(stopwords=stopwords, embeddings=model)
    store.add_documents(documents)
    if cache_dir is not None:
        _save(store, path, name)
    return store
