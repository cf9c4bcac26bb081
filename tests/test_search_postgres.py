"""The PostgreSQL document store answers the hospital demo like the SQLite one (issue 12)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from durable import postgres_url
from langchain_core.messages import HumanMessage

from toolweave import OfflineAssistant, build_graph
from toolweave.state.errors import ConfigurationError, DatabaseUnavailableError
from toolweave.tools.search import PageGraphStore
from toolweave.tools.search.postgres_store import PostgresDocumentStore
from toolweave_korhaz import EXAMPLE_QUESTIONS, korhaz_corpus, korhaz_domain, korhaz_tools

pytestmark = pytest.mark.postgres

RETRIEVAL_EXAMPLES = [e for e in EXAMPLE_QUESTIONS if "korhaz_search" in e.expected_tools]


@pytest.fixture(scope="module")
def korhaz_pg() -> Iterator[PostgresDocumentStore]:
    store = PostgresDocumentStore(postgres_url(), collection=f"korhaz-{uuid.uuid4().hex[:8]}")
    store.add_documents(korhaz_corpus())
    yield store
    store.clear()
    store.close()


@pytest.fixture(scope="module")
def graph(korhaz_pg):  # type: ignore[no-untyped-def]
    return build_graph(korhaz_domain(), korhaz_tools(korhaz_pg), assistant=OfflineAssistant())


def test_postgres_store_is_a_page_graph_store(korhaz_pg) -> None:
    assert isinstance(korhaz_pg, PageGraphStore)
    assert len(korhaz_pg) == len(korhaz_corpus())


@pytest.mark.parametrize("example", RETRIEVAL_EXAMPLES, ids=lambda e: e.question)
def test_retrieval_examples_answer_the_same_on_postgres(graph, example) -> None:  # type: ignore[no-untyped-def]
    out = graph.invoke({"messages": [HumanMessage(example.question)]})
    for expected in example.expected_substrings:
        assert expected in out["answer"], out["answer"]


def test_collections_keep_domains_apart(korhaz_pg) -> None:
    other = PostgresDocumentStore(postgres_url(), collection=f"other-{uuid.uuid4().hex[:8]}")
    try:
        other.add_document("x", "A wifi jelszó: titok123.", lang="hu")
        assert [d.document_id for d in other.search("wifi jelszó")] == ["x"]
        assert all(d.document_id != "x" for d in korhaz_pg.search("wifi jelszó"))
    finally:
        other.clear()
        other.close()


def test_X1_unreachable_database_is_a_typed_error_without_the_password() -> None:
    url = "postgresql://app:s3cret-pw@127.0.0.1:1/nowhere?connect_timeout=1"
    with pytest.raises(DatabaseUnavailableError) as caught:
        PostgresDocumentStore(url, timeout=1.0)
    assert "s3cret-pw" not in str(caught.value)


def test_store_takes_a_url_or_a_pool_not_both() -> None:
    with pytest.raises(ConfigurationError):
        PostgresDocumentStore()
