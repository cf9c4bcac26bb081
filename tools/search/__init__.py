"""Keyword retrieval: document stores and the default RAG retrieval tool."""

from toolweave.tools.search.protocol import DocumentInfo, DocumentStore, SourceDocument
from toolweave.tools.search.retrieval import DEFAULT_LIMIT, RetrievalTool
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
    "DocumentInfo",
    "DocumentStore",
    "Query",
    "RetrievalTool",
    "SourceDocument",
    "SqliteDocumentStore",
    "fold",
    "match_expression",
    "normalise_score",
    "parse_query",
    "sections",
    "split_sentences",
]
