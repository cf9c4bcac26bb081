"""The operator's plugin descriptor (entry point ``toolweave.plugins``: ``kolej``)."""

from __future__ import annotations

from pathlib import Path

from toolweave import Plugin


def load():  # type: ignore[no-untyped-def]
    """Build the domain over the pages ``toolweave ingest`` stored, when asked for."""
    from newuser8_domain.trains import DOCS, STOPWORDS, kolej_domain
    from toolweave.domains import ingested_store

    return kolej_domain(ingested_store(DOCS, stopwords=STOPWORDS))


def plugin() -> Plugin:
    """One domain and its golden file."""
    return Plugin(
        name="kolej",
        domains={"kolej": load},
        golden_files={"kolej": Path(__file__).with_name("golden.jsonl")},
    )
