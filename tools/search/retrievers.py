"""LangChain retrievers as an extra page-search strategy of :class:`ContextSearchTool`."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from toolweave.tools.search.page_graph import PageRef
from toolweave.tools.search.protocol import PageGraphStore

logger = logging.getLogger(__name__)

DOCUMENT_ID_KEY = "document_id"
PAGE_KEY = "page"  # 1-based


def page_documents(store: PageGraphStore) -> list[Document]:
    """Every non-empty page of ``store`` as a LangChain document, to index in a vector store."""
    found: list[Document] = []
    for ref in store.page_refs():
        text = store.page(ref.document_id, ref.page)
        if not text or not text.strip():
            continue
        info = store.document(ref.document_id)
        name = info.name if info is not None else ref.document_id
        metadata = {DOCUMENT_ID_KEY: ref.document_id, PAGE_KEY: ref.page, "name": name}
        found.append(Document(page_content=text, metadata=metadata))
    return found


def retrieved_pages(retrievers: Sequence[BaseRetriever], question: str) -> list[PageRef]:
    """The pages the retrievers propose for ``question``, in order; a failing one is skipped."""
    pages: dict[PageRef, None] = {}
    for retriever in retrievers:
        try:
            documents = retriever.invoke(question)
        except Exception:  # an extra strategy must not fail the search
            logger.warning("retriever %r failed", retriever, exc_info=True)
            continue
        for document in documents:
            document_id = document.metadata.get(DOCUMENT_ID_KEY)
            page = document.metadata.get(PAGE_KEY)
            if isinstance(document_id, str) and isinstance(page, int):
                pages.setdefault(PageRef(document_id, page), None)
    return list(pages)
