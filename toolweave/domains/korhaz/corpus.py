"""The bundled korhaz corpus: markdown documents and JSON registries read with importlib.resources.

Each ``data/*.md`` file starts with a small front matter (``title``, ``url``,
``lang`` between ``---`` lines); a line ``<!-- page -->`` starts a new page.
Parsed data is cached per process (it is static package data, not request data).
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from toolweave.tools.search.protocol import SourceDocument
from toolweave.tools.search.store import SqliteDocumentStore

DOMAIN_NAME = "korhaz"
"""The example domain's id."""
PAGE_BREAK = "<!-- page -->"
"""A line holding only this starts a new page."""

_PACKAGE = "toolweave.domains.korhaz"
_FRONT_MATTER = re.compile(r"\A---\s*\n(?P<meta>.*?)\n---\s*\n", re.DOTALL)
_PAGE_SPLIT = re.compile(r"^\s*<!--\s*page\s*-->\s*$", re.MULTILINE)


def parse_markdown_document(text: str, document_id: str) -> SourceDocument:
    """Parse a front-matter markdown file into a :class:`SourceDocument`.

    Args:
        text: The file's content.
        document_id: Id to give the document.

    Returns:
        The document with its pages; ``title`` falls back to ``document_id``.
    """
    meta: dict[str, str] = {}
    match = _FRONT_MATTER.match(text)
    if match is not None:
        for line in match.group("meta").splitlines():
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip().lower()] = value.strip()
        text = text[match.end() :]
    pages = tuple(page.strip() for page in _PAGE_SPLIT.split(text) if page.strip())
    return SourceDocument(
        document_id=document_id,
        pages=pages,
        name=meta.get("title", document_id),
        url=meta.get("url") or None,
        lang=meta.get("lang") or None,
    )


def _data_dir() -> resources.abc.Traversable:
    return resources.files(_PACKAGE).joinpath("data")


@cache
def korhaz_corpus() -> tuple[SourceDocument, ...]:
    """The bundled documents, parsed once per process, sorted by id."""
    entries = sorted(
        (entry for entry in _data_dir().iterdir() if entry.name.endswith(".md")),
        key=lambda entry: entry.name,
    )
    return tuple(
        parse_markdown_document(entry.read_text(encoding="utf-8"), f"{DOMAIN_NAME}/{entry.name}")
        for entry in entries
    )


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


def load_korhaz_store(path: str = ":memory:") -> SqliteDocumentStore:
    """A store holding the bundled corpus (re-adding replaces, so a file store can be reused).

    Args:
        path: A database file, or ``":memory:"``.

    Returns:
        The loaded store.
    """
    store = SqliteDocumentStore(path)
    store.add_documents(korhaz_corpus())
    return store
