"""The hotel group's plugin descriptor (entry point ``toolweave.plugins``: ``hotel``)."""

from __future__ import annotations

from pathlib import Path

from toolweave import Plugin

GOLDEN = Path(__file__).resolve().parent / "golden.jsonl"


def load():  # type: ignore[no-untyped-def]
    """Build the domain over the pages ``toolweave ingest`` stored, when asked for."""
    from newuser12_domain.hotel import DOCS, STOPWORDS, hotel_domain
    from toolweave.domains import ingested_store

    return hotel_domain(ingested_store(DOCS, stopwords=STOPWORDS))


def plugin() -> Plugin:
    return Plugin(name="hotel", domains={"hotel": load}, golden_files={"hotel": GOLDEN})
