"""A university student services desk, "Northfield University" (the twentieth new user's
domain, written from the README and the docs alone; a test domain, not shipped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolweave import ChatbotTool, Domain, Plugin, SqliteDocumentStore, documents_domain, ingest

from .tools import DOMAIN, own_tools, registry

HERE = Path(__file__).resolve().parent
PAGES = HERE / "pages"

SYSTEM_PROMPT = (
    "You are the student services desk of Northfield University. Answer from the given "
    "context only, briefly, in the student's language."
)


def university_store(path: str | Path = ":memory:") -> SqliteDocumentStore:
    store = SqliteDocumentStore(path, embeddings=None, stopwords=["northfield"])
    ingest([PAGES], store, domain=DOMAIN)
    return store


def university_domain_and_tools(
    store: SqliteDocumentStore | None = None,
) -> tuple[Domain, list[ChatbotTool[Any]]]:
    return documents_domain(
        DOMAIN,
        store or university_store(),
        tools=own_tools(),
        system_prompt=SYSTEM_PROMPT,
        default_language="en",
    )


def plugin() -> Plugin:
    return Plugin(
        name=DOMAIN,
        domains={DOMAIN: university_domain_and_tools},
        ai_tools=tuple(registry.tools()) if hasattr(registry, "tools") else (),
    )
