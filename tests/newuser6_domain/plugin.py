"""The domain's plugin descriptor (entry point ``toolweave.plugins``: ``bikeshop``)."""

from __future__ import annotations

from pathlib import Path

from toolweave import Plugin


def load():  # type: ignore[no-untyped-def]
    """Build the domain only when it is asked for."""
    from newuser6_domain.shop import DOCS, shop_domain
    from toolweave.domains import ingested_store

    # the pages `toolweave ingest pages/ --domain bikeshop-docs` stored, with the shop's tools
    return shop_domain(ingested_store(DOCS))


def plugin() -> Plugin:
    """One domain and its golden file."""
    return Plugin(
        name="bikeshop",
        domains={"bikeshop": load},
        golden_files={"bikeshop": Path(__file__).with_name("golden.jsonl")},
    )
