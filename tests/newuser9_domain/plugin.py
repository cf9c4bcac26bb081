"""Notely's plugin descriptor (entry point ``toolweave.plugins``: ``notely``)."""

from __future__ import annotations

from toolweave import Plugin


def load():  # type: ignore[no-untyped-def]
    """The domain over the pages ``toolweave ingest --domain notely-docs`` stored."""
    from newuser9_domain.notely import load as notely_load
    from toolweave.domains import ingested_store

    return notely_load(ingested_store("notely-docs"))


def plugin() -> Plugin:
    """One domain."""
    return Plugin(name="notely", domains={"notely": load})
