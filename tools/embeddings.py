"""T12: semantic recall for the candidate pre-filter, vectorised, tool vectors cached on disk."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.embeddings import Embeddings

from toolweave.state.errors import ToolweaveError
from toolweave.tools.text import content_words

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

logger = logging.getLogger(__name__)

AUTO: Literal["auto"] = "auto"
"""``Domain.routing_embeddings`` default: :class:`StaticEmbeddings` when the extra is installed."""
MODEL_CONFIG = "l2_supercat"
MODEL_DIM = 256
KEY_CHARS = 20


class EmbeddingsExtraMissingError(ToolweaveError):
    """Embeddings were asked for, but numpy or wordllama is not installed."""


def extra_installed() -> bool:
    """Whether the ``embeddings`` extra (numpy and wordllama) is importable."""
    return all(importlib.util.find_spec(name) is not None for name in ("numpy", "wordllama"))


def numpy_module() -> Any:
    """numpy, or :class:`EmbeddingsExtraMissingError` saying how to install it."""
    try:
        import numpy
    except ImportError as exc:
        raise EmbeddingsExtraMissingError(
            "routing embeddings need numpy: pip install 'toolweave[embeddings]'"
        ) from exc
    return numpy


@contextlib.contextmanager
def _root_logging_kept() -> Iterator[None]:
    """Undo what an import does to the root logger (N1): ``wordllama`` calls ``basicConfig``."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


@functools.cache
def _wordllama() -> Any:
    """The bundled static model, loaded once per process from the package folder (no network)."""
    try:
        with _root_logging_kept():
            import wordllama
    except ImportError as exc:
        raise EmbeddingsExtraMissingError(
            "StaticEmbeddings needs wordllama: pip install 'toolweave[embeddings]'"
        ) from exc
    folder = Path(wordllama.__file__).parent
    return wordllama.WordLlama.load(
        config=MODEL_CONFIG, dim=MODEL_DIM, cache_dir=folder, disable_download=True
    )


def default_cache_dir() -> Path:
    """``TOOLWEAVE_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolweave``, else ``~/.cache/toolweave``."""
    explicit = os.environ.get("TOOLWEAVE_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "toolweave"


class StaticEmbeddings(Embeddings):
    """LangChain embeddings over WordLlama's bundled static model (offline, CPU, ~10 µs a text).

    Args:
        cache_dir: Folder of the tool-vector cache; default :func:`default_cache_dir`
            (read when vectors are first cached); ``None`` for no disk cache.
    """

    model_id = f"wordllama-{MODEL_CONFIG}-{MODEL_DIM}"

    def __init__(self, cache_dir: str | os.PathLike[str] | Literal["default"] | None = "default"):
        self.cache_dir = cache_dir

    def matrix(self, texts: Sequence[str]) -> Matrix:
        """Unit vectors of ``texts``, one row each (float32)."""
        rows: Matrix = _wordllama().embed(list(texts), norm=True)
        return rows

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Unit vectors of ``texts``."""
        rows: list[list[float]] = self.matrix(texts).tolist()
        return rows

    def embed_query(self, text: str) -> list[float]:
        """The unit vector of ``text``."""
        return self.embed_documents([text])[0]

    def folder(self) -> Path | None:
        """Where tool vectors are cached, or ``None``."""
        if self.cache_dir == "default":
            return default_cache_dir()
        return None if self.cache_dir is None else Path(self.cache_dir)


def resolve(embeddings: Embeddings | Literal["auto"] | None) -> Embeddings | None:
    """``"auto"`` -> :class:`StaticEmbeddings` when the extra is installed, else ``None``."""
    if embeddings == AUTO:
        return StaticEmbeddings() if extra_installed() else None
    return embeddings


def unit_rows(rows: Any) -> Matrix:
    """``rows`` as a float32 matrix of unit rows (a zero row stays zero)."""
    np = numpy_module()
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: Matrix = matrix / np.where(norms > 0, norms, 1.0)
    return unit


def static_query(text: str) -> str:
    """What the static model embeds of a prompt: its content words (no filler averaged in)."""
    return " ".join(content_words(text))


def query_vector(embeddings: Embeddings, text: str) -> Matrix:
    """The unit vector of one prompt (a 1-D array); the static model embeds :func:`static_query`."""
    if isinstance(embeddings, StaticEmbeddings):
        row: Matrix = embeddings.matrix([static_query(text)])[0]
        return row
    unit: Matrix = unit_rows(embeddings.embed_query(text))[0]
    return unit


def vectors_key(model_id: str, texts: Sequence[str]) -> str:
    """The hash naming the cached vectors of ``texts`` under the model ``model_id``."""
    digest = hashlib.sha256(model_id.encode())
    for text in texts:
        encoded = text.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
    return digest.hexdigest()[:KEY_CHARS]


def tool_vectors(embeddings: Embeddings, texts: Sequence[str]) -> Matrix:
    """Unit vectors of the tool texts, from the disk cache when it holds them (static model)."""
    np = numpy_module()
    if not isinstance(embeddings, StaticEmbeddings):
        return unit_rows(embeddings.embed_documents(list(texts)))
    folder = embeddings.folder()
    path = None
    if folder is not None:
        path = folder / f"tool-vectors-{vectors_key(embeddings.model_id, texts)}.npy"
        with contextlib.suppress(OSError, ValueError):
            loaded: Matrix = np.load(path, allow_pickle=False)
            if loaded.shape[0] == len(texts):
                return loaded
    matrix = embeddings.matrix(texts)
    if path is not None:
        _save(np, matrix, path)
    return matrix


def _save(np: Any, matrix: Matrix, path: Path) -> None:
    partial = path.with_name(f".{path.stem}.{os.getpid()}.partial.npy")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(partial, matrix, allow_pickle=False)
        os.replace(partial, path)
    except OSError as exc:
        logger.info("tool-vector cache %s not written (%s)", path, exc)
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
