"""Document search: stores, ingestion, the default RAG retrieval and the deep-search tools."""

from toolweave.tools.search.context_search import (
    ContextSearchTool as ContextSearchTool,
)
from toolweave.tools.search.ingest import (
    IngestReport as IngestReport,
)
from toolweave.tools.search.ingest import (
    Skipped as Skipped,
)
from toolweave.tools.search.ingest import (
    collect_files as collect_files,
)
from toolweave.tools.search.ingest import (
    ingest as ingest,
)
from toolweave.tools.search.neighbor_search import (
    NeighborPageSearchTool as NeighborPageSearchTool,
)
from toolweave.tools.search.neighbor_search import (
    context_pages as context_pages,
)
from toolweave.tools.search.page_graph import (
    PageLink as PageLink,
)
from toolweave.tools.search.page_graph import (
    PageRef as PageRef,
)
from toolweave.tools.search.postgres_store import (
    PostgresDocumentStore as PostgresDocumentStore,
)
from toolweave.tools.search.protocol import (
    DocumentInfo as DocumentInfo,
)
from toolweave.tools.search.protocol import (
    DocumentStore as DocumentStore,
)
from toolweave.tools.search.protocol import (
    PageGraphStore as PageGraphStore,
)
from toolweave.tools.search.protocol import (
    SourceDocument as SourceDocument,
)
from toolweave.tools.search.readers import (
    ReadError as ReadError,
)
from toolweave.tools.search.readers import (
    read_document as read_document,
)
from toolweave.tools.search.retrieval import (
    DEFAULT_LIMIT as DEFAULT_LIMIT,
)
from toolweave.tools.search.retrieval import (
    RetrievalTool as RetrievalTool,
)
from toolweave.tools.search.retrievers import (
    page_documents as page_documents,
)
from toolweave.tools.search.retrievers import (
    retrieved_pages as retrieved_pages,
)
from toolweave.tools.search.store import (
    SqliteDocumentStore as SqliteDocumentStore,
)
from toolweave.tools.search.store import (
    normalise_score as normalise_score,
)
from toolweave.tools.search.text import (
    Query as Query,
)
from toolweave.tools.search.text import (
    fold as fold,
)
from toolweave.tools.search.text import (
    match_expression as match_expression,
)
from toolweave.tools.search.text import (
    parse_query as parse_query,
)
from toolweave.tools.search.text import (
    sections as sections,
)
from toolweave.tools.search.text import (
    split_sentences as split_sentences,
)
