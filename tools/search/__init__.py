"""Document search: stores, ingestion, the default RAG retrieval and the deep-search tools."""

from toolweave.tools.search.context_search import ContextSearchTool
from toolweave.tools.search.ingest import IngestReport, Skipped, collect_files, ingest
from toolweave.tools.search.neighbor_search import NeighborPageSearchTool, context_pages
from toolweave.tools.search.page_graph import PageLink, PageRef
from toolweave.tools.search.postgres_store import PostgresDocumentStore
from toolweave.tools.search.protocol import (
    DocumentInfo,
    DocumentStore,
    PageGraphStore,
    SourceDocument,
)
from toolweave.tools.search.readers import ReadError, read_document
from toolweave.tools.search.retrieval import DEFAULT_LIMIT, RetrievalTool
from toolweave.tools.search.retrievers import page_documents, retrieved_pages
from toolweave.tools.search.store import SqliteDocumentStore, normalise_score
from toolweave.tools.search.text import (
    Query,
    fold,
    match_expression,
    parse_query,
    sections,
    split_sentences,
)

__all__ = [
    "DEFAULT_LIMIT",
    "ContextSearchTool",
    "DocumentInfo",
    "DocumentStore",
    "IngestReport",
    "NeighborPageSearchTool",
    "PageGraphStore",
    "PageLink",
    "PageRef",
    "PostgresDocumentStore",
    "Query",
    "ReadError",
    "RetrievalTool",
    "Skipped",
    "SourceDocument",
    "SqliteDocumentStore",
    "collect_files",
    "context_pages",
    "fold",
    "ingest",
    "match_expression",
    "normalise_score",
    "page_documents",
    "parse_query",
    "read_document",
    "retrieved_pages",
    "sections",
    "split_sentences",
]
