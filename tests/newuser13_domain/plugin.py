"""The claims desk's plugin descriptor (entry point ``toolweave.plugins``: ``claims``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from toolweave import Plugin

GOLDEN = Path(__file__).resolve().parent / "golden.jsonl"


def load() -> Any:
    """Build the domain over the pages ``toolweave ingest`` stored, when asked for."""
    from newuser13_domain.claims import DOCS, STOPWORDS, ClaimStore, claims_domain
    from toolweave.domains import ingested_store

    claims = ClaimStore(os.environ.get("CLAIMS_DB", ":memory:"))
    return claims_domain(ingested_store(DOCS, stopwords=STOPWORDS), claims)


def plugin() -> Plugin:
    return Plugin(name="claims", domains={"claims": load}, golden_files={"claims": GOLDEN})
