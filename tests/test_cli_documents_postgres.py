"""``toolweave ingest`` and ``ask`` with documents in PostgreSQL (issue 12 item 5, CLI half).

Runs against the test database (``TOOLWEAVE_TEST_DATABASE_URL``; skipped locally without
one, required in CI: tests/durable.py).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from durable import postgres_url

from toolweave.cli import main
from toolweave.domains import load_domain
from toolweave.tools.search.postgres_store import PostgresDocumentStore

PARKING = "Parking costs 500 Ft per hour. Night parking is free."


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "TOOLWEAVE_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture
def domain() -> Iterator[str]:
    """A collection no other test uses; its documents are removed afterwards."""
    url = postgres_url()  # skips (or fails in CI) before the test, not in the teardown
    name = f"leaflets-{uuid.uuid4().hex[:8]}"
    yield name
    store = PostgresDocumentStore(url, collection=name)
    try:
        store.clear()
    finally:
        store.close()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "parking.md").write_text(
        f"---\ntitle: Parking\nlang: en\n---\n# Parking\n{PARKING}\n", encoding="utf-8"
    )
    return folder


def _stored(url: str, name: str) -> int:
    store = PostgresDocumentStore(url, collection=name)
    try:
        return len(store)
    finally:
        store.close()


def test_ingest_with_database_url_stores_documents_in_postgres_and_ask_finds_them(
    docs, domain, tmp_path, capsys
):
    url = postgres_url()
    data = tmp_path / "data"
    assert main(["ingest", str(docs), "--domain", domain, "--database-url", url]) == 0
    out = capsys.readouterr().out
    assert f"(collection {domain})" in out
    assert url.split("@")[0].split(":")[-1] not in out  # the password is masked
    assert not (data / "documents").exists()  # nothing went to SQLite
    assert _stored(url, domain) == 1
    assert main(["domains", "--database-url", url]) == 0
    assert domain in capsys.readouterr().out.split()
    question = "How much does parking cost?"
    assert main(["ask", "--domain", domain, "--database-url", url, question]) == 0
    answer = capsys.readouterr().out
    assert "500 Ft" in answer
    # a one-page document is cited without "p. 1" (R6): PostgreSQL knows the page count too
    assert any(line.startswith("  [1] Parking — ") for line in answer.splitlines())
    # without the database the domain is unknown: the documents live only in PostgreSQL
    assert main(["ask", "--domain", domain, question]) == 2


def test_TOOLWEAVE_DATABASE_URL_is_the_default_for_ingest_and_ask(
    docs, domain, monkeypatch, capsys
):
    url = postgres_url()
    monkeypatch.setenv("TOOLWEAVE_DATABASE_URL", url)
    assert main(["ingest", str(docs), "--domain", domain]) == 0
    capsys.readouterr()
    assert _stored(url, domain) == 1
    assert main(["ask", "--json", "--domain", domain, "How much does parking cost?"]) == 0
    assert "500 Ft" in capsys.readouterr().out
    bundle, tools = load_domain(domain, database_url=url)
    assert bundle.name == domain
    assert any(isinstance(getattr(tool, "store", None), PostgresDocumentStore) for tool in tools)


def test_an_ingest_into_postgres_that_stored_nothing_creates_no_domain(domain, tmp_path, capsys):
    url = postgres_url()
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert main(["ingest", str(empty), "--domain", domain, "--database-url", url]) == 1
    capsys.readouterr()
    assert _stored(url, domain) == 0
    assert main(["domains", "--database-url", url]) == 0
    assert domain not in capsys.readouterr().out.split()
    assert main(["ask", "--domain", domain, "--database-url", url, "hello"]) == 2


def test_a_domain_ingested_into_sqlite_is_still_found_with_a_postgres_url(docs, tmp_path, capsys):
    url = postgres_url()
    name = f"local-{uuid.uuid4().hex[:8]}"
    assert main(["ingest", str(docs), "--domain", name]) == 0  # no URL: SQLite
    capsys.readouterr()
    assert main(["ask", "--domain", name, "--database-url", url, "How much is parking?"]) == 0
    assert "500 Ft" in capsys.readouterr().out


def test_Q2_a_one_off_question_paused_on_postgres_keeps_its_thread_there(tmp_path, capsys):
    url = postgres_url()
    argv = ["--database-url", url, "--data-dir", str(tmp_path / "threads")]
    assert main(["ask", "--json", *argv, "When are consultation hours?"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["pending_choices"][1] == "Cardiology"
    assert not (tmp_path / "threads").exists()  # the thread went to PostgreSQL, not SQLite
    assert main(["ask", "--json", *argv, "--thread", payload["thread_id"], "2"]) == 0
    answer = json.loads(capsys.readouterr().out)["answer"]
    assert "Consultation hours of Cardiology: Monday-Thursday 9:00-13:00." in answer
