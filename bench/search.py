"""Document search at scale: ingestion throughput, keyword query latency, deep-fallback LLM calls.

Generated corpora of 10,000 and 100,000 pages (deterministic pseudo-text: a
3,000-word mixed Hungarian/English-like vocabulary, Zipf-distributed, about 100
words and 8 sentences per page, 10 pages per document) are bulk-loaded into a
SQLite file store (batches of 200 documents, then ``optimize``), and queried
with 3-word queries drawn from vocabulary ranks 20-3,000. The deep-fallback
part runs the real graph (gatekeeper, neighbour search, context search) over
the 10,000-page store with a model that finds nothing (the worst case), with
and without ``max_brute_force_page_count``. Prints markdown tables.

Usage (from the repository root)::

    python -m bench.search            # 10k and 100k pages (about 2-3 minutes)
    python -m bench.search --quick    # 2k pages, smoke run
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import HumanMessage

from toolweave import ContextVerdict, Domain, build_graph
from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.testing import FunctionAssistant
from toolweave.tools.search import (
    ContextSearchTool,
    NeighborPageSearchTool,
    RetrievalTool,
    SourceDocument,
    SqliteDocumentStore,
)
from toolweave.tools.search import sqlite_sql as sql
from toolweave.tools.search.postgres_store import PostgresDocumentStore

Store = SqliteDocumentStore | PostgresDocumentStore

SYLLABLES = [
    "ka",
    "ma",
    "ra",
    "te",
    "lo",
    "ko",
    "si",
    "na",
    "ve",
    "bo",
    "ta",
    "re",
    "mi",
    "pa",
    "fe",
    "go",
    "di",
    "hu",
    "le",
    "no",
    "sza",
    "gye",
    "ter",
    "vin",
    "bel",
    "ing",
    "tion",
    "er",
    "al",
    "ment",
    "ség",
    "ház",
    "os",
    "és",
    "ly",
    "zs",
]
VOCABULARY = 3_000
WORDS_PER_PAGE = 100
PAGES_PER_DOCUMENT = 10
BATCH_DOCUMENTS = 200
QUERIES = 300
TARGET_P95_MS = 20.0
TARGET_INGEST_S = 120.0
DEEP_QUESTIONS = 10
D5_LIMIT = 20
TARGET_INGEST_RATIO = 2.0
"""Store ingestion / plain executemany of the same rows (medians)."""


def vocabulary(size: int = VOCABULARY, seed: int = 7) -> list[str]:
    """Deterministic pseudo-words of 2-4 syllables, sorted (the Zipf rank order)."""
    rng = random.Random(seed)
    found: set[str] = set()
    while len(found) < size:
        found.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(found)


def corpus(
    pages: int, seed: int = 1, *, pages_per_document: int = PAGES_PER_DOCUMENT
) -> Iterator[SourceDocument]:
    """``pages`` pages of Zipf-distributed pseudo-text in documents of 10 pages (by default)."""
    words = vocabulary()
    rng = random.Random(seed)
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))
    total = cumulative[-1]
    made = 0
    while made < pages:
        texts = []
        for _ in range(min(pages_per_document, pages - made)):
            sentences, count = [], 0
            while count < WORDS_PER_PAGE:
                length = rng.randint(8, 16)
                count += length
                picked = [
                    words[bisect.bisect(cumulative, rng.random() * total)] for _ in range(length)
                ]
                sentence = " ".join(picked)
                sentences.append(sentence[0].upper() + sentence[1:] + ".")
            texts.append(" ".join(sentences))
            made += 1
        yield SourceDocument(f"doc{made:07d}", tuple(texts), name=f"Document {made}")


def ingest_corpus(path: Path, pages: int) -> tuple[SqliteDocumentStore, float]:
    """Bulk-load ``pages`` generated pages into a file store; returns it and the seconds taken."""
    store, seconds = fill_store(SqliteDocumentStore(path), pages)
    store.optimize()
    return store, seconds


def fill_store(store: Store, pages: int) -> tuple[Store, float]:
    """Bulk-load ``pages`` generated pages into ``store``; returns it and the seconds taken."""
    started = time.perf_counter()
    batch: list[SourceDocument] = []
    for document in corpus(pages):
        batch.append(document)
        if len(batch) >= BATCH_DOCUMENTS:
            store.add_documents(batch)
            batch = []
    if batch:
        store.add_documents(batch)
    return store, time.perf_counter() - started


def plain_executemany(path: Path, documents: list[SourceDocument]) -> float:
    """Seconds to write prepared rows with bare ``executemany`` (same schema, pragmas, batches).

    The anchor of the ingestion ratio: no replace check, no per-document work,
    the sentence rows (split and stemmed) computed beforehand and not timed.
    """
    prepared = [(doc, sql.sentence_rows(doc)) for doc in documents]
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in sql.FILE_PRAGMAS + sql.PRAGMAS:
        conn.execute(pragma)
    conn.executescript(sql.SCHEMA)
    started = time.perf_counter()
    next_id = 1
    for start in range(0, len(prepared), BATCH_DOCUMENTS):
        batch = prepared[start : start + BATCH_DOCUMENTS]
        sentences, terms = [], []
        for doc, rows in batch:
            for page_no, number, text, indexed, context in rows:
                sentences.append((next_id, doc.document_id, page_no, number, text))
                terms.append((next_id, indexed, context))
                next_id += 1
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            sql.INSERT_DOCUMENT, [(d.document_id, d.name, d.url, d.lang) for d, _ in batch]
        )
        conn.executemany(
            sql.INSERT_PAGE,
            [(d.document_id, n, t) for d, _ in batch for n, t in enumerate(d.pages, start=1)],
        )
        conn.executemany(sql.INSERT_SENTENCE, sentences)
        conn.executemany(sql.INSERT_FTS, terms)
        conn.execute("COMMIT")
    seconds = time.perf_counter() - started
    conn.close()
    return seconds


def store_ingest(path: Path, documents: list[SourceDocument]) -> float:
    """Seconds for ``SqliteDocumentStore.add_documents`` in batches (rows prepared inside)."""
    store = SqliteDocumentStore(path)
    started = time.perf_counter()
    for start in range(0, len(documents), BATCH_DOCUMENTS):
        store.add_documents(documents[start : start + BATCH_DOCUMENTS])
    seconds = time.perf_counter() - started
    store.close()
    return seconds


def ingest_ratio_row(folder: Path, pages: int, per_document: int, rounds: int = 3) -> str:
    """A markdown row: store ingestion next to plain executemany of the same rows, interleaved."""
    documents = list(corpus(pages, pages_per_document=per_document))
    prep_started = time.perf_counter()
    for doc in documents:  # also warms the stemming cache both sides share
        sql.sentence_rows(doc)
    prep = time.perf_counter() - prep_started
    plain: list[float] = []
    stored: list[float] = []
    for round_no in range(rounds):
        name = f"{pages}-{per_document}-{round_no}.sqlite"
        plain.append(plain_executemany(folder / f"plain{name}", documents))
        stored.append(store_ingest(folder / f"store{name}", documents))
    ratio = statistics.median(stored) / statistics.median(plain)
    ok = "yes" if ratio <= TARGET_INGEST_RATIO else "NO"
    return (
        f"| {pages:,} | {per_document} | {statistics.median(stored):.2f} "
        f"| {statistics.median(plain):.2f} | {prep:.2f} | {ratio:.2f}x | {ok} |"
    )


def query_latencies(store: Store, queries: int = QUERIES) -> list[float]:
    """Milliseconds per keyword query (limit 8), sorted."""
    words = vocabulary()[20:]
    rng = random.Random(3)
    texts = [" ".join(rng.choice(words) for _ in range(3)) for _ in range(queries)]
    store.search(texts[0])  # warm the page cache
    timings = []
    for text in texts:
        started = time.perf_counter()
        store.search(text, limit=8)
        timings.append((time.perf_counter() - started) * 1000)
    return sorted(timings)


def p95(values: list[float]) -> float:
    """The 95th percentile of sorted values."""
    return values[min(len(values) - 1, int(len(values) * 0.95))]


def deep_calls(store: SqliteDocumentStore, limit: int | None, hits: bool) -> tuple[float, float]:
    """Mean deep-fallback LLM calls and page reads per question (the model finds nothing)."""
    reads: list[int] = []
    rng = random.Random(11)
    words = vocabulary()[200:]
    deep = DeepSearchCoordinator()
    assistant = FunctionAssistant(
        judge=lambda q, d, g: ContextVerdict(sufficient=bool(g), missing=(q,)),
        read=lambda q, p: reads.append(1) and None,  # type: ignore[func-returns-value]
    )
    domain = Domain(name="bench", default_retrieval_tool="rag", deep_fallback=lambda t: deep)
    tools: list[Any] = [
        RetrievalTool("rag", None, store),
        deep,
        NeighborPageSearchTool("neighbor_search", None, store),
        ContextSearchTool("context_search", None, store, max_brute_force_page_count=limit),
    ]
    graph = build_graph(domain, tools, assistant=assistant)
    calls = []
    for _ in range(DEEP_QUESTIONS):
        question = " ".join(rng.choice(words) for _ in range(3)) if hits else "zzqx wwvy"
        out = graph.invoke({"messages": [HumanMessage(question)]})
        calls.append(out["deep_fallback_calls"])
    return statistics.mean(calls), len(reads) / DEEP_QUESTIONS


def postgres_row(url: str, pages: int) -> str:
    """The first table's row for :class:`PostgresDocumentStore` (a fresh collection)."""
    store = PostgresDocumentStore(url, collection=f"bench-{pages}-{random.randrange(10**6)}")
    try:
        store.clear()
        _, seconds = fill_store(store, pages)
        timings = query_latencies(store)
    finally:
        store.clear()
        store.close()
    ok = "yes" if p95(timings) < TARGET_P95_MS else "NO"
    return (
        f"| PostgreSQL | {pages:,} | {seconds:.1f} | {pages / seconds:,.0f} | "
        f"{statistics.median(timings):.1f} | {p95(timings):.1f} | p95 < {TARGET_P95_MS:.0f} ms: "
        f"{ok} |"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 pages only (smoke run)")
    parser.add_argument(
        "--postgres",
        metavar="URL",
        default=os.environ.get("TOOLWEAVE_TEST_DATABASE_URL"),
        help="also measure PostgresDocumentStore on this database (default: "
        "$TOOLWEAVE_TEST_DATABASE_URL); a fresh collection, dropped afterwards",
    )
    parser.add_argument(
        "--postgres-pages",
        type=int,
        default=None,
        help="the largest size to load into PostgreSQL (default: every size)",
    )
    args = parser.parse_args(argv)
    sizes = [2_000] if args.quick else [10_000, 100_000]
    print("| store | pages | ingest s | pages/s | query median ms | query p95 ms | targets |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    stores: dict[int, SqliteDocumentStore] = {}
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            store, seconds = ingest_corpus(Path(folder) / f"bench{size}.sqlite", size)
            timings = query_latencies(store)
            ok_ingest = (
                seconds * 100_000 / size < TARGET_INGEST_S
                if size < 100_000
                else (seconds < TARGET_INGEST_S)
            )
            target = (
                f"p95 < {TARGET_P95_MS:.0f} ms: {'yes' if p95(timings) < TARGET_P95_MS else 'NO'}"
            )
            if size == 100_000:
                target += f"; 100k ingest < 2 min: {'yes' if ok_ingest else 'NO'}"
            print(
                f"| SQLite | {size:,} | {seconds:.1f} | {size / seconds:,.0f} | "
                f"{statistics.median(timings):.1f} | {p95(timings):.1f} | {target} |"
            )
            stores[size] = store
        if args.postgres:
            for size in sizes:
                if args.postgres_pages is not None and size > args.postgres_pages:
                    continue
                print(postgres_row(args.postgres, size))
        store = stores[sizes[0]]
        print()
        print(
            f"Deep fallback on {sizes[0]:,} pages, {DEEP_QUESTIONS} questions each, "
            "a model that finds nothing (worst case), D7 cap 12 calls; with the D5 limit, "
            "the reads left are the neighbour search's (D6):"
        )
        print()
        print("| questions | max_brute_force_page_count | LLM calls / question | page reads |")
        print("| --- | ---: | ---: | ---: |")
        for hits in (True, False):
            for limit in (None, D5_LIMIT):
                calls, reads = deep_calls(store, limit, hits)
                kind = "keyword hits" if hits else "no keyword hit"
                shown = "None" if limit is None else str(limit)
                print(f"| {kind} | {shown} | {calls:.1f} | {reads:.1f} |")
        for open_store in stores.values():
            open_store.close()
        print()
        print(
            "Ingestion next to a plain SQLite `executemany` of the same rows (same schema, "
            f"pragmas and batches of {BATCH_DOCUMENTS} documents; file stores; median of 3, "
            "interleaved). The store's time includes splitting and stemming (cache warm); "
            "row prep s is that work alone, done once beforehand for the plain side:"
        )
        print()
        print(
            "| pages | pages/document | store s | plain executemany s | row prep s | ratio "
            "| <= 2x |"
        )
        print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for per_document in (PAGES_PER_DOCUMENT, 1):
            print(ingest_ratio_row(Path(folder), sizes[0], per_document))
    return 0


if __name__ == "__main__":
    sys.exit(main())
