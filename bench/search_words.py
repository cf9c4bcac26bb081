"""D9: what the routing call's search words add to the first retrieval, with a real model.

Each answerable document question of a half of both example domains' golden files (as
:mod:`bench.retrieval_recall` picks them) runs through its domain's graph with the
configured model (``OPENAI_BASE_URL``, ``local-llm env``) up to the deep fallback or
the answer step, whichever comes first, so the model makes its routing call (the
call the words ride on) and nothing after it. Per question, from one run:

- *question alone*: the expected facts are in the default retrieval of the question
  (no model: what the first retrieval was before the words);
- *with the words*: in the default retrieval of the question and the routing call's
  search words (``TaskNode.search_words``), fused (what the graph now does);
- *graph's context*: in the answer step's context as the graph built it (tools too).

Calls and characters are counted on the wire (:mod:`bench.http_proxy`). One run; the
model at temperature 0 for routing.

Usage (from the repository root)::

    eval "$(local-llm env)"
    python -m bench.search_words --half heldout --verbose
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import markdown_table
from bench.http_proxy import CountingProxy
from bench.retrieval_recall import DOMAIN_NAMES, Case, _context, cases, corpora, found, in_text
from toolweave.state.task import ROOT_TASK_NO
from toolweave.tools.search.retrieval import retrieve

HEADERS = (
    "domain, half",
    "questions",
    "question alone",
    "with the routing call's words",
    "graph's context (tools too)",
    "questions given words",
    "model calls / question",
    "body chars / question",
)


@dataclass(frozen=True)
class Run:
    """One question: its facts found three ways, the words, what it cost on the wire."""

    case: Case
    alone: bool
    with_words: bool
    in_graph: bool
    words: str
    calls: int
    chars: int


def run_case(graph: Any, tool: Any, case: Case, proxy: CountingProxy) -> Run:
    """``case`` through ``graph`` up to deep fallback or the answer (the routing call made)."""
    from langchain_core.messages import HumanMessage

    config: Any = {"configurable": {"thread_id": f"words-{case.line}"}}
    before = proxy.counts()
    payload = {"messages": [HumanMessage(case.question)]}
    graph.invoke(payload, config, interrupt_before=["deep_fallback", "answer"])
    values = dict(graph.get_state(config).values)
    spent = proxy.counts() - before
    root = (values.get("tasks") or {}).get(ROOT_TASK_NO)
    words = getattr(root, "search_words", "") if root is not None else ""
    store, limit, lang = tool.store, tool.limit, tool.lang
    return Run(
        case,
        found(case, retrieve(store, case.question, limit=limit, lang=lang)),
        found(case, retrieve(store, case.question, limit=limit, lang=lang, also=words)),
        in_text(case, _context(values)),
        words,
        spent.calls,
        spent.body_chars,
    )


def domain_row(
    corpus: Any, half: str, proxy: CountingProxy, *, verbose: bool
) -> tuple[object, ...]:
    """One row: ``corpus``'s answerable questions of ``half``, with the model."""
    from langgraph.checkpoint.memory import InMemorySaver

    from toolweave import build_graph
    from toolweave.domains import load_domain
    from toolweave.graph.context import Limits
    from toolweave.llm.env import default_assistant

    chosen = [c for c in cases(corpus.golden) if (c.split or "dev") == half]
    domain, tools = load_domain(DOMAIN_NAMES[corpus.name])
    tool = next(t for t in tools if t.name == domain.default_retrieval_tool)
    graph = build_graph(
        domain,
        tools,
        assistant=default_assistant(base_url=proxy.base_url, timeout=300.0),
        checkpointer=InMemorySaver(),
        limits=Limits(run_deadline_s=3600.0),
    )
    runs: list[Run] = []
    for case in chosen:
        runs.append(run_case(graph, tool, case, proxy))
        if verbose:
            r = runs[-1]
            print(
                f"line {case.line}: alone {r.alone}, with words {r.with_words}, graph "
                f"{r.in_graph}, {r.calls} calls; words {r.words!r} | {case.question}",
                file=sys.stderr,
                flush=True,
            )
    n = max(1, len(runs))
    return (
        f"{corpus.name}, {half}",
        len(runs),
        f"{sum(r.alone for r in runs)}/{len(runs)}",
        f"{sum(r.with_words for r in runs)}/{len(runs)}",
        f"{sum(r.in_graph for r in runs)}/{len(runs)}",
        f"{sum(bool(r.words) for r in runs)}/{len(runs)}",
        f"{sum(r.calls for r in runs) / n:.2f}",
        f"{sum(r.chars for r in runs) / n:,.0f}",
    )


def main(argv: list[str] | None = None) -> int:
    """Print one row per example domain for the chosen half."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--half", choices=("heldout", "dev"), default="heldout")
    parser.add_argument("--verbose", action="store_true", help="each question as it ends")
    args = parser.parse_args(argv)
    upstream = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    if not upstream:
        raise SystemExit('needs OPENAI_BASE_URL (eval "$(local-llm env)")')
    proxy = CountingProxy(upstream).start()
    try:
        rows = [domain_row(c, args.half, proxy, verbose=args.verbose) for c in corpora()]
    finally:
        proxy.stop()
    print(markdown_table(HEADERS, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
