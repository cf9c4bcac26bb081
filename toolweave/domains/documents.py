"""Domains of ingested documents (``toolweave ingest PATH... --domain NAME``)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.domains.store_model import use_recorded_model
from toolweave.persistence import DATABASE_URL_ENV, POSTGRES_SCHEMES, mask_url
from toolweave.state.errors import (
    ConfigurationError,
    DatabaseUnavailableError,
    InvalidRequestError,
    UnknownDomainError,
)
from toolweave.tools.base import ChatbotTool
from toolweave.tools.domain import DEFAULT_SYSTEM_PROMPT, Domain
from toolweave.tools.search.context_search import ContextSearchTool
from toolweave.tools.search.neighbor_search import NeighborPageSearchTool
from toolweave.tools.search.postgres_store import MISSING_EXTRA, UNREACHABLE
from toolweave.tools.search.protocol import PageGraphStore
from toolweave.tools.search.retrieval import RetrievalTool
from toolweave.tools.search.store import SqliteDocumentStore
from toolweave.tools.search.vectors import EmbeddingsOption
from toolweave.tools.texts import Texts

if TYPE_CHECKING:
    from toolweave.tools.search.postgres_store import PostgresDocumentStore

DOCUMENTS_FOLDER = "documents"  # in the data directory: one SQLite store per domain
MAX_BRUTE_FORCE_PAGE_COUNT = 50  # D5: no domain scan, at most 50 pages read
DataDir = str | os.PathLike[str] | None  # the data directory (None: the CLI's)
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_LOADING_FROM: ContextVar[tuple[str | os.PathLike[str] | None, str | None]] = ContextVar(
    "toolweave_loading_from", default=(None, None)
)
"""The data directory and database ``load_domain`` was given, while a plugin's loader runs."""
NO_DEEP_SEARCH = frozenset({"smalltalk"})  # prompt types that get no deep search (D2)


def validate_domain_name(name: str) -> str:
    """A usable domain name (lower-case letters, digits, ``_`` and ``-``), else an error."""
    cleaned = name.strip()
    if not _NAME.match(cleaned):
        raise InvalidRequestError(
            f"domain names are 1-64 lower-case letters, digits, '_' or '-', got {name!r}"
        )
    return cleaned


def documents_path(domain: str, data_dir: DataDir = None) -> Path:
    """Where a domain's ingested documents are stored."""
    from toolweave.persistence import data_dir as resolve

    return resolve(data_dir) / DOCUMENTS_FOLDER / f"{validate_domain_name(domain)}.sqlite"


CONNECT_TIMEOUT_S = 10
TABLE_EXISTS = "SELECT to_regclass('toolweave_documents') IS NOT NULL"
COLLECTIONS = "SELECT DISTINCT collection FROM toolweave_documents ORDER BY collection"


def is_postgres_url(url: str | None) -> bool:
    """Whether ``url`` names a PostgreSQL database (where documents then live too)."""
    return bool(url) and urlsplit(url or "").scheme in POSTGRES_SCHEMES


def postgres_store(
    database_url: str,
    domain: str,
    *,
    stopwords: Iterable[str] = (),
    embeddings: EmbeddingsOption = "auto",
) -> PostgresDocumentStore:
    """The PostgreSQL document store of ``domain`` (its collection); errors keep the URL out."""
    from toolweave.tools.search.postgres_store import PostgresDocumentStore

    collection = validate_domain_name(domain)
    return PostgresDocumentStore(
        database_url, collection=collection, stopwords=stopwords, embeddings=embeddings
    )


def ingested_domains(data_dir: DataDir = None, *, database_url: str | None = None) -> list[str]:
    """Names of the domains with ingested documents (data directory, PostgreSQL), sorted."""
    found: set[str] = set()
    if database_url is not None and is_postgres_url(database_url):
        found.update(_postgres_collections(database_url))
    folder = documents_path("x", data_dir).parent
    if folder.is_dir():
        found.update(path.stem for path in folder.glob("*.sqlite") if _NAME.match(path.stem))
    return sorted(found)


def _postgres_collections(database_url: str) -> list[str]:
    """The collections holding documents in ``database_url`` (none before the first ingest)."""
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ConfigurationError(MISSING_EXTRA) from exc
    try:
        with psycopg.connect(database_url, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            exists = conn.execute(TABLE_EXISTS).fetchone()
            rows = conn.execute(COLLECTIONS).fetchall() if exists and exists[0] else []
    except psycopg.Error as exc:  # the URL (and its password) stays out of the message
        raise DatabaseUnavailableError(UNREACHABLE.format(error=type(exc).__name__)) from None
    return [str(row[0]) for row in rows if _NAME.match(str(row[0]))]


def _deep_search(prefix: str, domain: str) -> DeepSearchCoordinator:
    """The domain's deep-search coordinator, named with the domain, forcing its own searches."""

    class DocumentsDeepSearch(DeepSearchCoordinator):
        name: ClassVar[str] = f"{prefix}_deep_search"
        search_tool: ClassVar[str] = f"{prefix}_context_search"
        neighbor_search_tool: ClassVar[str | None] = f"{prefix}_neighbor_search"
        description: ClassVar[str] = (
            "Deep fallback: searches the documents for what the retrieved context lacks."
        )

    DocumentsDeepSearch.domain = domain
    return DocumentsDeepSearch()


def _checked_tools(name: str, tools: Iterable[ChatbotTool[Any]]) -> list[ChatbotTool[Any]]:
    """``tools``, each of the domain or of every domain (T2): another domain's would never run."""
    extra = list(tools)
    for tool in extra:
        if tool.domain not in (None, name):
            raise ConfigurationError(
                f"documents_domain({name!r}): tool {tool.name!r} belongs to domain "
                f"{tool.domain!r} and would never run here; set its domain to {name!r} or None"
            )
    return extra


def documents_domain(
    name: str,
    store: PageGraphStore,
    *,
    tools: Iterable[ChatbotTool[Any]] = (),
    system_prompt: str | None = None,
    default_language: str | None = None,
    max_brute_force_page_count: int | None = MAX_BRUTE_FORCE_PAGE_COUNT,
    embeddings: EmbeddingsOption = None,
    texts: Texts | None = None,
) -> tuple[Domain, list[ChatbotTool[Any]]]:
    """A domain over a store of ingested documents, with retrieval and deep fallback.

    Args:
        name: The domain's name.
        store: Its documents.
        tools: Your own tools, after the built-in ones (T1); of domain ``name`` or ``None``.
        system_prompt: The answer's base system prompt (T8); default ``DEFAULT_SYSTEM_PROMPT``.
        default_language: The language assumed when normalization cannot tell (T10); ``"en"``.
        max_brute_force_page_count: D5 limit of the context search (``None``: whole-domain scan).
        embeddings: D9: ``None`` keeps the store's model, else LangChain ``Embeddings``/``"auto"``.
        texts: The library's sentences for people in the domain's own language or words
            (``Domain.texts``: key of :data:`~toolweave.LIBRARY_TEXTS` → language → text).

    Returns:
        ``(domain, tools)``: ``<name>_search`` (default retrieval), ``<name>_deep_search``,
        ``<name>_neighbor_search``, ``<name>_context_search`` (``-`` as ``_``), then ``tools``.

    Raises:
        ConfigurationError: One of ``tools`` belongs to another domain, or ``texts``
            names a sentence the library does not say.
    """
    if embeddings is not None:
        _use_embeddings(store, embeddings)
    prefix = name.replace("-", "_")
    extra = _checked_tools(name, tools)
    coordinator = _deep_search(prefix, name)
    retrieval = f"{prefix}_search"
    domain = Domain(
        name=name, system_prompt=DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt,
        default_retrieval_tool=retrieval, default_language=default_language or "en",
        description=f"Documents ingested with `toolweave ingest --domain {name}`.",
        deep_fallback=lambda prompt_type: None if prompt_type in NO_DEEP_SEARCH else coordinator,
        texts=texts or {},
    )  # fmt: skip
    context_search = ContextSearchTool(
        coordinator.search_tool, name, store, max_brute_force_page_count=max_brute_force_page_count
    )
    built: list[ChatbotTool[Any]] = [
        RetrievalTool(retrieval, name, store),
        coordinator,
        NeighborPageSearchTool(coordinator.neighbor_search_tool or "", name, store),
        context_search,
    ]
    return domain, [*built, *extra]


def _use_embeddings(store: PageGraphStore, embeddings: EmbeddingsOption) -> None:
    """Switch ``store`` to ``embeddings`` (D9), or say which stores can rank by meaning."""
    use = getattr(store, "use_embeddings", None)
    if use is None:
        raise ConfigurationError(
            f"embeddings= needs a store that keeps sentence vectors (SqliteDocumentStore,"
            f" PostgresDocumentStore); {type(store).__name__} has no use_embeddings()"
        )
    use(embeddings)


def _found_store(
    name: str, data_dir: DataDir, database_url: str | None, stopwords: Iterable[str] = ()
) -> PageGraphStore | None:
    """The store ``toolweave ingest --domain NAME`` filled, or ``None`` when it filled none.

    It searches with the model it was built with (D9, ``toolweave ingest --embeddings``).
    """
    store: PageGraphStore | None = None
    if database_url is not None and is_postgres_url(database_url):
        store = postgres_store(database_url, name, stopwords=stopwords)
        if not len(store):
            store.close()  # not in the database: maybe ingested into the data directory before
            store = None
    path = documents_path(name, data_dir)
    if store is None and path.is_file():
        store = SqliteDocumentStore(path, stopwords=stopwords)
    if store is not None:
        use_recorded_model(store, where=f"domain {name!r}")
    return store


def ingested_store(
    name: str,
    *,
    data_dir: DataDir = None,
    database_url: str | None = None,
    stopwords: Iterable[str] = (),
) -> PageGraphStore:
    """The documents ``toolweave ingest PATH... --domain NAME`` stored, to build on (N1).

    A plugin's loader gives it to :func:`documents_domain` with its own tools, e.g.
    ``documents_domain("bikes", ingested_store("bikes-docs"), tools=[BookRepair()])``.

    Args:
        name: The ``--domain`` the documents were ingested under.
        data_dir: Where ``toolweave ingest`` put them; default: in a plugin's loader, the
            one ``load_domain`` was given (``--data-dir``), else the CLI's data directory
            (``TOOLWEAVE_DATA_DIR``, else the user data directory).
        database_url: A ``postgresql://`` URL the documents were ingested into
            (``toolweave ingest --database-url``), looked up before the data directory;
            default: in a plugin's loader, the one ``load_domain`` was given, else
            ``TOOLWEAVE_DATABASE_URL``, as ``toolweave ingest`` takes it.
        stopwords: Words nearly every page holds, dropped from queries (the stores'
            ``stopwords``: a domain's own, such as its name).

    Returns:
        The store, opened where the command line left it.

    Raises:
        UnknownDomainError: Nothing was ingested under ``name``; the message says what to run.
    """
    loading_dir, loading_url = _LOADING_FROM.get()
    data_dir = data_dir if data_dir is not None else loading_dir
    database_url = database_url or loading_url or os.environ.get(DATABASE_URL_ENV) or None
    store = _found_store(validate_domain_name(name), data_dir, database_url, stopwords)
    if store is None:
        raise UnknownDomainError(_nothing_ingested(name, data_dir, database_url))
    return store


def _nothing_ingested(
    name: str, data_dir: str | os.PathLike[str] | None, database_url: str | None
) -> str:
    """What :func:`ingested_store` says when it found nothing: where it looked, what to run."""
    where = str(documents_path(name, data_dir))
    if database_url and is_postgres_url(database_url):
        where = f"collection {name!r} of the database {mask_url(database_url)}, then {where}"
    return (
        f"no documents were ingested for domain {name!r} (looked for {where}): run "
        f"`toolweave ingest PATH... --domain {name}` first, into the same data directory "
        f"(TOOLWEAVE_DATA_DIR, --data-dir) or database ({DATABASE_URL_ENV}, --database-url) "
        "the domain is loaded with"
    )


@contextmanager
def loading_from(
    data_dir: str | os.PathLike[str] | None, database_url: str | None
) -> Iterator[None]:
    """While a plugin's loader runs: :func:`ingested_store` looks where ``load_domain`` was told.

    So ``toolweave ask --data-dir D --database-url URL`` reaches the loader's
    ``ingested_store(NAME)`` without the loader knowing either option (N1).
    """
    token = _LOADING_FROM.set((data_dir, database_url))
    try:
        yield
    finally:
        _LOADING_FROM.reset(token)


def load_documents_domain(
    name: str, data_dir: DataDir = None, *, database_url: str | None = None
) -> tuple[Domain, list[ChatbotTool[Any]]] | None:
    """The ingested domain ``name`` (PostgreSQL looked in first), or ``None`` when there is none."""
    store = _found_store(name, data_dir, database_url)
    return None if store is None else documents_domain(name, store)
