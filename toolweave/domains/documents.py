"""Domains made of ingested documents: ``toolweave ingest PATH... --domain NAME``.

Each such domain keeps its documents in ``<data dir>/documents/<NAME>.sqlite``
and gets a ready tool set: keyword retrieval as its default RAG tool, and deep
fallback (a :class:`DeepSearchCoordinator` with a neighbour-page search and a
context search capped by ``max_brute_force_page_count``, D5).
:func:`toolweave.domains.load_domain` finds these domains by name.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.state.errors import InvalidRequestError
from toolweave.tools.base import ChatbotTool
from toolweave.tools.domain import Domain
from toolweave.tools.search.context_search import ContextSearchTool
from toolweave.tools.search.neighbor_search import NeighborPageSearchTool
from toolweave.tools.search.retrieval import RetrievalTool
from toolweave.tools.search.store import SqliteDocumentStore

DOCUMENTS_FOLDER = "documents"
"""Sub-folder of the data directory holding one SQLite store per domain."""
MAX_BRUTE_FORCE_PAGE_COUNT = 50
"""D5 limit of an ingested domain's context search: no domain scan, at most 50 pages read."""
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
NO_DEEP_SEARCH = frozenset({"smalltalk"})
"""Prompt types that get no deep search (D2)."""


def validate_domain_name(name: str) -> str:
    """A usable domain name (lower-case letters, digits, ``_`` and ``-``), else an error."""
    cleaned = name.strip()
    if not _NAME.match(cleaned):
        raise InvalidRequestError(
            f"domain names are 1-64 lower-case letters, digits, '_' or '-', got {name!r}"
        )
    return cleaned


def documents_path(domain: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where a domain's ingested documents are stored."""
    from toolweave.persistence import data_dir as resolve

    return resolve(data_dir) / DOCUMENTS_FOLDER / f"{validate_domain_name(domain)}.sqlite"


def ingested_domains(data_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Names of the domains that have an ingested document store, sorted."""
    folder = documents_path("x", data_dir).parent
    if not folder.is_dir():
        return []
    return sorted(path.stem for path in folder.glob("*.sqlite") if _NAME.match(path.stem))


def documents_domain(
    name: str,
    store: SqliteDocumentStore,
    *,
    max_brute_force_page_count: int | None = MAX_BRUTE_FORCE_PAGE_COUNT,
) -> tuple[Domain, list[ChatbotTool[Any]]]:
    """A domain over a store of ingested documents, with retrieval and deep fallback.

    Args:
        name: The domain's name.
        store: Its documents.
        max_brute_force_page_count: D5 limit of the context search (``None``
            allows the whole-domain scan; fine for a few hundred pages).

    Returns:
        ``(domain, tools)``: ``<name>_search`` (default retrieval), ``deep_search``,
        ``neighbor_search`` and ``context_search``.
    """
    coordinator = DeepSearchCoordinator()
    retrieval = f"{name.replace('-', '_')}_search"
    domain = Domain(
        name=name,
        default_retrieval_tool=retrieval,
        description=f"Documents ingested with `toolweave ingest --domain {name}`.",
        deep_fallback=lambda prompt_type: None if prompt_type in NO_DEEP_SEARCH else coordinator,
    )
    tools: list[ChatbotTool[Any]] = [
        RetrievalTool(retrieval, name, store),
        coordinator,
        NeighborPageSearchTool(DeepSearchCoordinator.neighbor_search_tool or "", name, store),
        ContextSearchTool(
            DeepSearchCoordinator.search_tool,
            name,
            store,
            max_brute_force_page_count=max_brute_force_page_count,
        ),
    ]
    return domain, tools


def load_documents_domain(
    name: str, data_dir: str | os.PathLike[str] | None = None
) -> tuple[Domain, list[ChatbotTool[Any]]] | None:
    """The ingested domain ``name``, or ``None`` when nothing was ingested for it."""
    path = documents_path(name, data_dir)
    if not path.is_file():
        return None
    return documents_domain(name, SqliteDocumentStore(path))
