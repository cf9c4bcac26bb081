"""A car rental desk, "Rentadesk" (the eighteenth new user's domain, written from the
README and the docs alone; a test domain, not shipped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolweave import ChatbotTool, Domain, Plugin, SqliteDocumentStore, documents_domain, ingest

from .tools import DOMAIN, own_tools

HERE = Path(__file__).resolve().parent
PAGES = HERE / "pages"

SYSTEM_PROMPT = (
    "You are the assistant of a car rental desk. Answer from the given context only, "
    "briefly, in the customer's language."
)


def rental_store(path: str | Path = ":memory:") -> SqliteDocumentStore:
    store = SqliteDocumentStore(path, embeddings=None)
    ingest([PAGES], store, domain=DOMAIN)
    return store


def rental_domain_and_tools(
    store: SqliteDocumentStore | None = None,
) -> tuple[Domain, list[ChatbotTool[Any]]]:
    return documents_domain(
        DOMAIN,
        store or rental_store(),
        tools=own_tools(),
        system_prompt=SYSTEM_PROMPT,
        default_language="en",
    )


def plugin() -> Plugin:
    return Plugin(name=DOMAIN, domains={DOMAIN: rental_domain_and_tools})
