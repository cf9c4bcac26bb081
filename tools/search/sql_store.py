"""The search both SQL document stores share, over a small SQL-dialect seam."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.embeddings import numpy_module, query_vector, resolve
from toolweave.tools.search import vectors
from toolweave.tools.search.page_graph import PageLink, PageRef, followed_terms, link_pages
from toolweave.tools.search.protocol import DocumentInfo, PageGraphStore
from toolweave.tools.search.text import Query, parse_query

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from toolweave.tools.embeddings import Matrix

COVERAGE_WEIGHT = 0.7  # share of sentence_score given by the query words a sentence holds
MIN_CANDIDATES = 40  # fewest candidates the database ranks for one search
Row = tuple[Any, ...]
Ids = Collection[str] | None  # a document filter: None searches every document
# document_id, name, url, page, sentence_number, text, rank, terms, context
CandidateRow = tuple[str, str, str | None, int, int, str, float, str, str]


@dataclass(frozen=True)
class SqlDialect:
    """What the text of the shared queries depends on.

    Attributes:
        table_prefix: Put before ``documents``, ``pages`` and ``sentences``.
        collections: Whether rows carry a ``collection`` column (several stores in
            one database); its value is then the first parameter of every query.
        marker: The parameter marker (``?`` or ``%s``); the queries are written with ``?``.
    """

    table_prefix: str = ""
    collections: bool = False
    marker: str = "?"

    def sql(self, template: str) -> str:
        """``template`` (one of this module's queries) in this dialect."""
        return _render(self, template)


@lru_cache(maxsize=256)
def _render(dialect: SqlDialect, template: str) -> str:
    prefix, scoped = dialect.table_prefix, dialect.collections

    def only(alias: str) -> str:
        return f"{alias}collection = ? AND " if scoped else ""

    def same(a: str, b: str) -> str:
        return f" AND {a}.collection = {b}.collection" if scoped else ""

    text = template.format(
        documents=f"{prefix}documents",
        pages=f"{prefix}pages",
        sentences=f"{prefix}sentences",
        vectors=f"{prefix}sentence_vectors",
        only=only(""),
        only_d=only("d."),
        only_s=only("s."),
        where_collection=" WHERE collection = ?" if scoped else "",
        pages_of_d=same("p", "d"),
        documents_of_s=same("d", "s"),
        vectors_of_s=same("v", "s"),
    )
    return text.replace("?", dialect.marker)


DOCUMENT = (
    "SELECT d.name, d.url, d.lang, (SELECT COUNT(*) FROM {pages} p"
    " WHERE p.document_id = d.id{pages_of_d}) FROM {documents} d WHERE {only_d}d.id = ?"
)
DOCUMENT_IDS = "SELECT id FROM {documents}{where_collection} ORDER BY id"
DOCUMENT_COUNT = "SELECT COUNT(*) FROM {documents}{where_collection}"
PAGE = "SELECT text FROM {pages} WHERE {only}document_id = ? AND page = ?"
PAGES_OF = "SELECT page FROM {pages} WHERE {only}document_id = ? ORDER BY page"
NEIGHBOUR_PAGES = (
    "SELECT page FROM {pages} WHERE {only}document_id = ? AND page IN (?, ?) ORDER BY page"
)
PAGE_COUNT = "SELECT COUNT(*) FROM {pages}{where_collection}"
PAGE_REFS = "SELECT document_id, page FROM {pages}{where_collection} ORDER BY document_id, page"
PAGE_SENTENCES = (
    "SELECT d.name, d.url, s.sentence_number, s.text FROM {sentences} s"
    " JOIN {documents} d ON d.id = s.document_id{documents_of_s}"
    " WHERE {only_s}s.document_id = ? AND s.page = ? ORDER BY s.sentence_number"
)

VECTORS = (
    "SELECT document_id, page, sentence_number, vector FROM {vectors}"
    " WHERE {only}model = ? ORDER BY document_id, page, sentence_number"
)
VECTOR_MODELS = "SELECT DISTINCT model FROM {vectors}{where_collection} ORDER BY model"
SENTENCE_KEYS = (
    "SELECT s.document_id, s.page, s.sentence_number FROM {sentences} s"
    " JOIN {documents} d ON d.id = s.document_id{documents_of_s} WHERE {only_s}"
)
MISSING_VECTORS = (
    "SELECT s.document_id, s.page, s.sentence_number FROM {sentences} s"
    " WHERE {only_s}NOT EXISTS (SELECT 1 FROM {vectors} v WHERE v.model = ?"
    " AND v.document_id = s.document_id AND v.page = s.page"
    " AND v.sentence_number = s.sentence_number{vectors_of_s})"
)
SENTENCES_BY_KEYS = (
    "SELECT s.document_id, d.name, d.url, s.page, s.sentence_number, s.text FROM {sentences} s"
    " JOIN {documents} d ON d.id = s.document_id{documents_of_s}"
    " WHERE {only_s}(s.document_id, s.page, s.sentence_number) IN ({keys})"
)
SentenceKey = tuple[str, int, int]  # document_id, page, sentence_number (R6)
VectorRow = tuple[str, int, int, bytes]  # the key and the vector
FUSION_POOL = 3  # each fused ranking gives this many sentences per sentence returned


_FIELDS = ("document_id", "document_name", "document_url", "page", "sentence_number", "text")


def _sentence(row: Sequence[Any], score: float = 0.0) -> UniqueTextDocument:
    """A stored sentence ``(document_id, name, url, page, sentence_number, text)`` as a result."""
    fields: dict[str, Any] = dict(zip(_FIELDS, row, strict=True))
    return UniqueTextDocument(**fields, sentence_score=score)


class SqlDocumentStore(PageGraphStore):
    """A :class:`~toolweave.tools.search.protocol.PageGraphStore` over SQL (see the module)."""

    dialect: SqlDialect = SqlDialect()
    candidates_per_result = 5  # sentences the database ranks per sentence returned
    page_terms_sql = "SELECT terms FROM {sentences} WHERE {only}document_id = ? AND page = ?"
    _stopwords: frozenset[str]
    _embeddings: Embeddings | None = None
    _vector_cache: tuple[object, list[SentenceKey], Matrix] | None = None

    @property
    def _scope(self) -> tuple[object, ...]:
        """The parameters every shared query starts with (the collection, if any)."""
        return ()

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[object]) -> list[Row]:
        """The rows of one read query (``sql`` is in :attr:`dialect`)."""

    @abstractmethod
    def _candidates(
        self, parsed: Query, count: int, lang: str | None, document_ids: list[str] | None
    ) -> list[CandidateRow]:
        """At most ``count`` sentences matching ``parsed``, best first by the database's rank."""

    @abstractmethod
    def _relevance(self, rank: float) -> float:
        """A candidate's database rank mapped to ``[0, 1)``, higher is better."""

    @abstractmethod
    def _rare_terms(self, terms: list[str]) -> list[tuple[str, int]]:
        """The rare ones of ``terms`` with their sentence counts, rarest first (page graph)."""

    @abstractmethod
    def _pages_with_term(self, term: str) -> list[tuple[str, int]]:
        """``(document_id, page)`` of every page holding the index term ``term``."""

    @abstractmethod
    def _vector_version(self) -> object:
        """A value that changes whenever the stored vectors may have changed (cache key)."""

    @abstractmethod
    def _write_vectors(self, model: str, rows: Sequence[VectorRow]) -> None:
        """Store vectors of existing sentences under ``model`` (kept when already there)."""

    def _page_terms(self, ref: PageRef) -> set[str]:
        """The index terms of one page's sentences."""
        rows = self._read(self.page_terms_sql, ref.document_id, ref.page)
        return {term for (terms,) in rows for term in str(terms).split()}

    def _read(self, template: str, *params: object) -> list[Row]:
        return self._fetch(self.dialect.sql(template), (*self._scope, *params))

    @property
    def embeddings(self) -> Embeddings | None:
        """The model the store embeds sentences and questions with, or ``None`` (keywords)."""
        return self._embeddings

    def vector_models(self) -> list[str]:
        """The ids of the models the stored vectors were made with (D9: what built the store)."""
        return [str(row[0]) for row in self._read(VECTOR_MODELS)]

    def _sentence_vectors(self, doc_rows: Sequence[tuple[int, str]]) -> list[bytes] | None:
        """The vectors of one document's sentences ``(page, text)``; ``None`` without a model."""
        if self._embeddings is None:
            return None
        texts = vectors.passage_texts(doc_rows)
        return vectors.to_bytes(vectors.embed_passages(self._embeddings, texts))

    def use_embeddings(self, embeddings: vectors.EmbeddingsOption) -> None:
        """Search by meaning with ``embeddings`` (``None``: off), embedding what lacks a vector."""
        self._embeddings = resolve(embeddings)
        self._vector_cache = None
        self.embed_missing()

    def embed_missing(self) -> int:
        """Embed the stored sentences that have no vector of the store's model; returns how many."""
        if self._embeddings is None:
            return 0
        model = vectors.model_id(self._embeddings)
        missing: dict[str, set[tuple[int, int]]] = {}
        for document_id, page, number in self._read(MISSING_VECTORS, model):
            missing.setdefault(str(document_id), set()).add((int(page), int(number)))
        done = 0
        for document_id, wanted in missing.items():
            ordered = [
                (page, sentence)
                for page in sorted({page for page, _ in wanted})
                for sentence in self.page_sentences(document_id, page)
            ]
            texts = vectors.passage_texts([(page, d.text) for page, d in ordered])
            keep = [i for i, (p, d) in enumerate(ordered) if (p, d.sentence_number) in wanted]
            matrix = vectors.embed_passages(self._embeddings, [texts[i] for i in keep])
            rows = [
                (document_id, ordered[i][0], int(ordered[i][1].sentence_number or 0), value)
                for i, value in zip(keep, vectors.to_bytes(matrix), strict=True)
            ]
            self._write_vectors(model, rows)
            done += len(rows)
        self._vector_cache = None
        return done

    def _vector_matrix(self) -> tuple[list[SentenceKey], Matrix] | None:
        """The stored vectors of the store's model (cached until the store changes)."""
        if self._embeddings is None:
            return None
        version = self._vector_version()
        cached = self._vector_cache
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        rows = self._read(VECTORS, vectors.model_id(self._embeddings))
        keys = [(str(doc), int(page), int(number)) for doc, page, number, _ in rows]
        matrix = vectors.from_bytes([row[3] for row in rows])
        self._vector_cache = (version, keys, matrix)
        return keys, matrix

    def _allowed(self, keys: list[SentenceKey], lang: str | None, document_ids: Ids) -> Any:
        """The mask of ``keys`` a language or document filter allows, or ``None`` (all)."""
        if lang is None and document_ids is None:
            return None
        np = numpy_module()
        if lang is None:
            wanted = set(document_ids or ())
            return np.fromiter((key[0] in wanted for key in keys), dtype=bool, count=len(keys))
        rows = self._read(SENTENCE_KEYS + "d.lang = ?", lang)
        allowed = {(str(d), int(p), int(n)) for d, p, n in rows}
        if document_ids is not None:
            allowed = {key for key in allowed if key[0] in set(document_ids)}
        return np.fromiter((key in allowed for key in keys), dtype=bool, count=len(keys))

    def _sentences_by_key(self, keys: Sequence[SentenceKey]) -> dict[SentenceKey, Row]:
        if not keys:
            return {}
        template = SENTENCES_BY_KEYS.replace("{keys}", ", ".join("(?, ?, ?)" for _ in keys))
        rows = self._read(template, *(part for key in keys for part in key))
        return {(str(r[0]), int(r[3]), int(r[4])): r for r in rows}

    def semantic_search(
        self, query: str, *, limit: int = 8, lang: str | None = None, document_ids: Ids = None
    ) -> list[UniqueTextDocument]:
        """The sentences nearest ``query`` by meaning, best first (``sentence_score``: cosine)."""
        loaded = self._vector_matrix()
        if loaded is None or limit <= 0 or not query.strip():
            return []
        keys, matrix = loaded
        if not keys:
            return []
        vector = query_vector(self._embeddings, query)  # type: ignore[arg-type]
        allowed = self._allowed(keys, lang, document_ids)
        top = vectors.cosine_top(matrix, vector, limit, allowed)
        found = self._sentences_by_key([keys[i] for i in top])
        scores = numpy_module().einsum("ij,j->i", matrix[top], vector) if top else []
        return [
            _sentence(found[keys[i]], max(float(score), 0.0))
            for i, score in zip(top, scores, strict=True)
            if keys[i] in found
        ]

    def fused_search(
        self, query: str, *, limit: int = 8, lang: str | None = None, document_ids: Ids = None
    ) -> list[UniqueTextDocument]:
        """Keyword and semantic rankings fused by reciprocal rank (D9); no model: :meth:`search`."""
        if self._embeddings is None:
            return self.search(query, limit=limit, lang=lang, document_ids=document_ids)
        pool = max(limit, 1) * FUSION_POOL
        hits = self._keyword_hits(query, pool, lang, document_ids)
        keyword = [doc for doc, _ in hits]
        if any(share >= 1.0 for _, share in hits[:limit]):
            return keyword[: max(limit, 0)]
        semantic = self.semantic_search(query, limit=pool, lang=lang, document_ids=document_ids)
        return vectors.fused_documents(keyword, semantic, limit)

    def search(
        self, query: str, *, limit: int = 8, lang: str | None = None, document_ids: Ids = None
    ) -> list[UniqueTextDocument]:
        """Keyword search at sentence level: the database's ranking, re-ranked by coverage."""
        return [doc for doc, _ in self._keyword_hits(query, limit, lang, document_ids)]

    def _keyword_hits(
        self, query: str, limit: int, lang: str | None, document_ids: Ids
    ) -> list[tuple[UniqueTextDocument, float]]:
        """:meth:`search`'s sentences, each with the share of query words it holds."""
        parsed = parse_query(query, self._stopwords)
        if not parsed.words or limit <= 0 or (document_ids is not None and not document_ids):
            return []
        count = max(limit * self.candidates_per_result, MIN_CANDIDATES)
        ids = None if document_ids is None else list(document_ids)
        found: list[tuple[UniqueTextDocument, float]] = []
        for doc_id, name, url, page, number, text, rank, terms, context in self._candidates(
            parsed, count, lang, ids
        ):
            coverage = parsed.coverage(terms, context)
            score = COVERAGE_WEIGHT * coverage + (1.0 - COVERAGE_WEIGHT) * self._relevance(
                float(rank)
            )
            found.append((_sentence((doc_id, name, url, page, number, text), score), coverage))
        found.sort(key=lambda hit: hit[0].sentence_score, reverse=True)  # stable: rank breaks ties
        return found[:limit]

    def document(self, document_id: str) -> DocumentInfo | None:
        """Metadata of a document, or ``None`` when it is not stored."""
        rows = self._read(DOCUMENT, document_id)
        return DocumentInfo(document_id, *rows[0]) if rows else None

    def document_ids(self) -> list[str]:
        """Ids of the stored documents, sorted."""
        return [row[0] for row in self._read(DOCUMENT_IDS)]

    def page(self, document_id: str, page: int) -> str | None:
        """The text of page ``page`` (1-based) of a document, or ``None``."""
        rows = self._read(PAGE, document_id, page)
        return str(rows[0][0]) if rows else None

    def pages_of(self, document_id: str) -> list[int]:
        """The page numbers of a document, ascending (empty when it is not stored)."""
        return [row[0] for row in self._read(PAGES_OF, document_id)]

    def page_sentences(self, document_id: str, page: int) -> list[UniqueTextDocument]:
        """The sentences of one page in order, as documents with score 0."""
        return [
            _sentence((document_id, name, url, page, number, text))
            for name, url, number, text in self._read(PAGE_SENTENCES, document_id, page)
        ]

    def page_count(self) -> int:
        """How many pages the store holds, over all documents."""
        return int(self._read(PAGE_COUNT)[0][0])

    def page_refs(self, *, limit: int | None = None) -> list[PageRef]:
        """Every page of every document (by document id, then page), at most ``limit``."""
        bounded = () if limit is None else (limit,)
        rows = self._read(PAGE_REFS + (" LIMIT ?" if bounded else ""), *bounded)
        return [PageRef(document_id, page) for document_id, page in rows]

    def linked_pages(self, document_id: str, page: int, *, limit: int = 8) -> list[PageLink]:
        """The page graph: neighbour pages (page ±1), then pages sharing the most, rarest terms."""
        ref = PageRef(document_id, page)
        neighbours = [
            row[0] for row in self._read(NEIGHBOUR_PAGES, document_id, page - 1, page + 1)
        ]
        rare = self._rare_terms(followed_terms(self._page_terms(ref)))
        return link_pages(ref, neighbours, rare, self._pages_with_term, limit=limit)

    def __len__(self) -> int:
        return int(self._read(DOCUMENT_COUNT)[0][0])
