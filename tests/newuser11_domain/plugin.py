"""The waste service's plugin descriptor (entry point ``toolweave.plugins``: ``waste``)."""

from __future__ import annotations

from toolweave import Plugin


def load():  # type: ignore[no-untyped-def]
    """Build the domain over the pages ``toolweave ingest`` stored, when asked for."""
    from newuser11_domain.waste import DOCS, STOPWORDS, waste_domain
    from toolweave.domains import ingested_store

    return waste_domain(ingested_store(DOCS, stopwords=STOPWORDS))


def plugin() -> Plugin:
    return Plugin(name="waste", domains={"waste": load})
