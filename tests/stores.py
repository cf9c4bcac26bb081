"""The document stores the search tests run against: SQLite always, PostgreSQL when configured."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from durable import postgres_url

from toolweave.tools.search import SqliteDocumentStore
from toolweave.tools.search.postgres_store import PostgresDocumentStore

Store = SqliteDocumentStore | PostgresDocumentStore
StoreFactory = Callable[..., Store]

STORE_KINDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


def store_factory(kind: str) -> Iterator[StoreFactory]:
    """Yield a factory of empty stores of ``kind`` (given the store's options); Postgres
    collections are dropped after."""
    made: list[Store] = []
    url = postgres_url() if kind == "postgres" else ""

    def make(**options: Any) -> Store:  # options: the store's own, e.g. embeddings=
        store: Store
        if kind == "sqlite":
            store = SqliteDocumentStore(**options)
        else:
            collection = f"test-{uuid.uuid4().hex[:12]}"
            store = PostgresDocumentStore(url, collection=collection, **options)
        made.append(store)
        return store

    yield make
    for store in made:
        if isinstance(store, PostgresDocumentStore):
            store.clear()
        store.close()
