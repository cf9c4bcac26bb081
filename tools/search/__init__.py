"""Document search: stores, ingestion, the default RAG retrieval and the deep-search tools."""

from toolweave.tools.search.context_search import ContextSearchTool as ContextSearchTool
from toolweave.tools.search.ingest import ingest as ingest
from toolweave.tools.search.multilingual import (
    MultilingualE5Embeddings as MultilingualE5Embeddings,
)
from toolweave.tools.search.neighbor_search import NeighborPageSearchTool as NeighborPageSearchTool
from toolweave.tools.search.page_graph import PageRef as PageRef
from toolweave.tools.search.postgres_store import PostgresDocumentStore as PostgresDocumentStore
from toolweave.tools.search.protocol import DocumentStore as DocumentStore
from toolweave.tools.search.protocol import PageGraphStore as PageGraphStore
from toolweave.tools.search.protocol import SourceDocument as SourceDocument
from toolweave.tools.search.readers import read_document as read_document
from toolweave.tools.search.retrieval import RetrievalTool as RetrievalTool
from toolweave.tools.search.retrievers import page_documents as page_documents
from toolweave.tools.search.store import SqliteDocumentStore as SqliteDocumentStore
from toolweave.tools.search.text import match_expression as match_expression
from toolweave.tools.search.text import split_sentences as split_sentences
