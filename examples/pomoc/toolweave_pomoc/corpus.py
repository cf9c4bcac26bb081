"""The helpdesk's documents: Markdown pages with a title, an address and page breaks.

Each file in ``data/`` starts with ``# Title`` and ``url: ...``; ``<!-- page -->``
lines split it into pages. The store is built in memory from them when the domain
is loaded (fourteen short documents index in a few milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from toolweave import SqliteDocumentStore

DOMAIN_NAME = "pomoc"
"""The domain's name, what ``toolweave ask --domain`` takes."""

DATA_DIR = Path(__file__).with_name("data")
"""Where the documents and the tools' tables live (package data)."""

PAGE_BREAK = "<!-- page -->"
"""The line that ends a page (the same mark ``toolweave ingest`` reads)."""

STOPWORDS = ("lumena",)
"""Words (nearly) every document holds: the company's name says nothing about a page."""


@dataclass(frozen=True)
class HelpdeskDocument:
    """One intranet page of the helpdesk: id, title, address and page texts."""

    document_id: str
    title: str
    url: str
    pages: tuple[str, ...]


def parse_document(path: Path) -> HelpdeskDocument:
    """Read one Markdown document: its ``# Title``, its ``url:`` line and its pages.

    Args:
        path: A ``.md`` file of ``data/``.

    Returns:
        The document; its id is the file's name without ``.md``.

    Raises:
        ValueError: The file does not start with a title and an ``url:`` line.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) < 2 or not lines[0].startswith("# ") or not lines[1].startswith("url: "):
        raise ValueError(f"{path.name}: start it with '# Title' and 'url: https://...' lines")
    body = "\n".join(lines[2:])
    pages = tuple(page.strip() for page in body.split(PAGE_BREAK) if page.strip())
    return HelpdeskDocument(
        document_id=path.stem,
        title=lines[0][2:].strip(),
        url=lines[1][5:].strip(),
        pages=pages,
    )


@cache
def documents() -> tuple[HelpdeskDocument, ...]:
    """Every document of the helpdesk, by file name."""
    return tuple(parse_document(path) for path in sorted(DATA_DIR.glob("*.md")))


def document(document_id: str) -> HelpdeskDocument:
    """One document by id (a tool names the page its answer comes from).

    Raises:
        KeyError: No such document.
    """
    for doc in documents():
        if doc.document_id == document_id:
            return doc
    raise KeyError(document_id)


def load_store() -> SqliteDocumentStore:
    """A new in-memory store holding every document of the helpdesk."""
    store = SqliteDocumentStore(":memory:", stopwords=STOPWORDS)
    for doc in documents():
        store.add_document(doc.document_id, list(doc.pages), name=doc.title, url=doc.url, lang="pl")
    store.optimize()
    return store


__all__ = [
    "DATA_DIR",
    "DOMAIN_NAME",
    "HelpdeskDocument",
    "document",
    "documents",
    "load_store",
    "parse_document",
]
