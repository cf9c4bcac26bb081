"""D9: sentence vectors for retrieval by meaning, and the reciprocal rank fusion of rankings."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings

from toolweave.tools.embeddings import StaticEmbeddings, numpy_module, unit_rows

if TYPE_CHECKING:
    from toolweave.state.documents import UniqueTextDocument
    from toolweave.tools.embeddings import Matrix

K = TypeVar("K", bound=Hashable)

RRF_K = 60
"""The constant of reciprocal rank fusion (the usual value; see :func:`fuse`)."""
EMBEDDED_NEIGHBOURS = 1
"""Sentences before and after a sentence (same page) embedded with it."""
EMBED_BATCH = 256
"""Texts per ``embed_documents`` call at ingestion."""
VECTOR_DTYPE = "<f4"
"""How a vector is stored: little-endian float32 bytes."""

EmbeddingsOption = Embeddings | Literal["auto"] | None
"""A store's ``embeddings``: ``"auto"`` (the bundled static model when the ``embeddings``
extra is installed, else none), ``None`` (keywords only) or any LangChain ``Embeddings``."""


def model_id(embeddings: Embeddings) -> str:
    """The id vectors of ``embeddings`` are stored under: its ``model_id``, else class:model."""
    own = getattr(embeddings, "model_id", None)
    if isinstance(own, str) and own:
        return own
    kind = type(embeddings)
    name = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None) or ""
    return f"{kind.__module__}.{kind.__qualname__}:{name}"


def passage_texts(sentences: Sequence[tuple[int, str]]) -> list[str]:
    """What each sentence (``(page, text)``, in order) is embedded as: with its page neighbours."""
    texts: list[str] = []
    for at, (page, _text) in enumerate(sentences):
        low, high = max(0, at - EMBEDDED_NEIGHBOURS), at + EMBEDDED_NEIGHBOURS + 1
        texts.append(" ".join(text for p, text in sentences[low:high] if p == page))
    return texts


def embed_passages(embeddings: Embeddings, texts: Sequence[str]) -> Matrix:
    """Unit vectors of ``texts`` (float32 rows), in batches of :data:`EMBED_BATCH`."""
    np = numpy_module()
    if not texts:
        empty: Matrix = np.zeros((0, 0), dtype=np.float32)
        return empty
    if isinstance(embeddings, StaticEmbeddings):
        static: Matrix = embeddings.matrix(list(texts))
        return static
    parts = [
        embeddings.embed_documents(list(texts[start : start + EMBED_BATCH]))
        for start in range(0, len(texts), EMBED_BATCH)
    ]
    return unit_rows([row for part in parts for row in part])


def to_bytes(matrix: Matrix) -> list[bytes]:
    """One stored value per row (see :data:`VECTOR_DTYPE`)."""
    return [row.astype(VECTOR_DTYPE).tobytes() for row in matrix]


def from_bytes(values: Sequence[bytes]) -> Matrix:
    """The matrix of stored vectors (rows of differing length are a corrupt store)."""
    np = numpy_module()
    if not values:
        empty: Matrix = np.zeros((0, 0), dtype=np.float32)
        return empty
    flat = np.frombuffer(b"".join(bytes(v) for v in values), dtype=VECTOR_DTYPE)
    matrix: Matrix = flat.reshape(len(values), -1).astype(np.float32)
    return matrix


def cosine_top(matrix: Matrix, query: Matrix, count: int, allowed: Any = None) -> list[int]:
    """Row indices of the ``count`` unit rows nearest ``query``, best first (``allowed``: mask)."""
    np = numpy_module()
    if count <= 0 or matrix.shape[0] == 0 or matrix.shape[1] != query.shape[0]:
        return []
    scores = np.einsum("ij,j->i", matrix, query)  # not `@`: no BLAS threads (PF1)
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    count = min(count, int(np.isfinite(scores).sum()))
    if count <= 0:
        return []
    top = np.argpartition(-scores, count - 1)[:count]
    return [int(i) for i in top[np.argsort(-scores[top], kind="stable")]]


def fuse(rankings: Sequence[Sequence[K]]) -> list[tuple[K, float]]:
    """Reciprocal rank fusion (``sum 1 / (RRF_K + rank)``) of rankings: items, best first."""
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)


def fused_documents(
    first: Sequence[UniqueTextDocument], second: Sequence[UniqueTextDocument], limit: int
) -> list[UniqueTextDocument]:
    """Two rankings of sentences fused (:func:`fuse`), at most ``limit``; scores in ``(0, 1]``."""
    by_key = {doc.key: doc for doc in (*second, *first)}
    fused = fuse([[doc.key for doc in first], [doc.key for doc in second]])
    return [
        by_key[key].model_copy(update={"sentence_score": score / (2 / (RRF_K + 1))})
        for key, score in fused[: max(limit, 0)]
    ]
