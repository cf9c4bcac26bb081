"""The bundled korhaz corpus: files read by the ingestion readers, JSON registries.

Each ``data/*.md`` file starts with a small front matter (``title``, ``url``,
``lang`` between ``---`` lines); a line ``<!-- page -->`` starts a new page. The
files go through the same readers as ``toolweave ingest``
(:func:`toolweave.tools.search.readers.read_document`). Parsed data and a loaded
store are cached per process (static package data, not request data); every
call of :func:`load_korhaz_store` gets its own copy of the store. The indexed
corpus is also cached on disk under the data directory, keyed by the data's
hash, so ``toolweave ask`` does not re-stem it in every process.
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from toolweave.tools.search.index_cache import cached_store
from toolweave.tools.search.protocol import SourceDocument
from toolweave.tools.search.readers import PAGE_BREAK, read_document, read_markdown
from toolweave.tools.search.store import SqliteDocumentStore

DOMAIN_NAME = "korhaz"
"""The example domain's id."""

STOPWORDS = ("kórház", "kórházban", "kórháznál", "kórházba", "hospital")
"""Words nearly every page of the hospital's corpus holds: dropped from its search queries."""

_PACKAGE = "toolweave_korhaz"
_DOCUMENT_SUFFIXES = (".md", ".txt", ".html", ".pdf")


def parse_markdown_document(text: str, document_id: str) -> SourceDocument:
    """Parse a front-matter markdown file into a :class:`SourceDocument`.

    Args:
        text: The file's content.
        document_id: Id to give the document.

    Returns:
        The document with its pages; ``title`` falls back to the first ``# ``
        heading, then to ``document_id``.
    """
    return read_markdown(text.encode("utf-8"), document_id=document_id, name=document_id, url=None)


def _data_dir() -> resources.abc.Traversable:
    return resources.files(_PACKAGE).joinpath("data")


@cache
def korhaz_corpus() -> tuple[SourceDocument, ...]:
    """The bundled documents, read once per process, sorted by id (``korhaz/<file name>``)."""
    entries = sorted(
        (entry for entry in _data_dir().iterdir() if entry.name.endswith(_DOCUMENT_SUFFIXES)),
        key=lambda entry: entry.name,
    )
    return tuple(
        read_document(entry.name, entry.read_bytes(), document_id=f"{DOMAIN_NAME}/{entry.name}")
        for entry in entries
    )


CACHE_FOLDER = "cache"
"""Sub-folder of the data directory holding the indexed corpus (see :func:`corpus_cache_dir`)."""


def corpus_cache_dir() -> Path:
    """Where the indexed bundled corpus is cached: ``<data dir>/cache``.

    The data directory is ``TOOLWEAVE_DATA_DIR``, else ``$XDG_DATA_HOME/toolweave``,
    else ``~/.local/share/toolweave`` (:func:`toolweave.persistence.data_dir`).
    """
    from toolweave.persistence import data_dir

    return data_dir() / CACHE_FOLDER


@cache
def _template(cache_dir: Path | None) -> SqliteDocumentStore:
    return cached_store(korhaz_corpus(), name=DOMAIN_NAME, cache_dir=cache_dir, stopwords=STOPWORDS)


@cache
def _json(name: str) -> Any:
    return json.loads(_data_dir().joinpath(name).read_text(encoding="utf-8"))


def departments_data() -> dict[str, Any]:
    """The parsed ``data/departments.json`` (shared, do not mutate)."""
    data: dict[str, Any] = _json("departments.json")
    return data


def emergency_data() -> dict[str, list[str]]:
    """The parsed ``data/emergency.json``: answer sentences by language (do not mutate)."""
    data: dict[str, list[str]] = _json("emergency.json")
    return data


_DEFAULT_CACHE = Path()
"""Marker default of ``cache_dir``: :func:`corpus_cache_dir`."""


def load_korhaz_store(
    path: str = ":memory:", *, cache_dir: str | os.PathLike[str] | None = _DEFAULT_CACHE
) -> SqliteDocumentStore:
    """A store holding the bundled corpus (re-adding replaces, so a file store can be reused).

    Args:
        path: A database file, or ``":memory:"`` (a copy of a store loaded once per process).
        cache_dir: For ``":memory:"``: the folder of the on-disk index cache, keyed by
            the corpus's hash (a second process loads it instead of re-stemming);
            default :func:`corpus_cache_dir`; ``None`` indexes without a disk cache.

    Returns:
        The loaded store.
    """
    if path == ":memory:":
        folder = corpus_cache_dir() if cache_dir is _DEFAULT_CACHE else cache_dir
        return _template(None if folder is None else Path(folder)).copy()
    store = SqliteDocumentStore(path, stopwords=STOPWORDS)
    store.add_documents(korhaz_corpus())
    return store


__all__ = [
    "DOMAIN_NAME",
    "PAGE_BREAK",
    "departments_data",
    "emergency_data",
    "korhaz_corpus",
    "load_korhaz_store",
    "parse_markdown_document",
]
