"""The office's plugin descriptor (entry point ``toolweave.plugins``: ``permits``)."""

from __future__ import annotations

from pathlib import Path

from toolweave import Plugin


def load():  # type: ignore[no-untyped-def]
    """Build the domain over the pages ``toolweave ingest`` stored, when asked for."""
    from newuser7_domain.office import DOCS, office_domain
    from toolweave.domains import ingested_store

    return office_domain(ingested_store(DOCS))


def plugin() -> Plugin:
    """One domain, its AI tools and its golden file."""
    from newuser7_domain.office import ai_tools

    return Plugin(
        name="permits",
        domains={"permits": load},
        ai_tools=tuple(ai_tools()),
        golden_files={"permits": Path(__file__).with_name("golden.jsonl")},
    )
