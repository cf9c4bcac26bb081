"""A10, D1: how often the reading rule skips the gatekeeper, and whether it ever should not.

For each answerable document question of both example domains' golden files that
reaches the gatekeeper (the graph's routing and retrieval ran, no tool answered), with
the offline model (no model call, so it runs in CI time):

- **reach**: questions whose run reaches the ``deep_fallback`` node;
- **skipped, one passage**: the older rule (one context text holds every content word);
- **skipped, reading**: the rule that the offline reading answers, the offline gatekeeper
  finds the context sufficient and no stored page uses a question word the context lacks;
- **facts in first context**: of all reaching questions, and of the skipped ones (a
  skipped question whose facts were NOT in the first context is a skip that should not
  have been: deep fallback was its only chance).

Which rule fired is read from the gatekeeper's ledger entry, as the graph wrote it. The
rule was chosen on the development halves; the held-out rows are the result::

    python -m bench.gatekeeper_skip            # both halves, both domains
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import markdown_table
from bench.retrieval_recall import DOMAIN_NAMES, Case, Corpus, _context, cases, corpora, in_text

HEADERS = (
    "half",
    "domain",
    "reach the gatekeeper",
    "facts in first context",
    "skipped, one passage",
    "skipped, reading",
    "skipped with facts in first context",
    "skipped without (should not have been)",
)


def _outcome(graph: Any, case: Case) -> tuple[bool, str] | None:
    """``(facts in the first context, gatekeeper reason)``, or ``None`` when it is not reached."""
    from langchain_core.messages import HumanMessage

    config: Any = {"configurable": {"thread_id": f"skip-{case.line}"}}
    payload = {"messages": [HumanMessage(case.question)]}
    graph.invoke(payload, config, interrupt_before=["deep_fallback", "answer"])
    state = graph.get_state(config)
    if "deep_fallback" not in state.next:
        return None
    first = in_text(case, _context(dict(state.values)))
    graph.invoke(None, config, interrupt_before=["answer"])
    ledger = graph.get_state(config).values.get("ledger") or []
    gate = next((e for e in ledger if e.kind == "gatekeeper"), None)
    return first, "" if gate is None else gate.reason


def row(corpus: Corpus, half: str) -> tuple[object, ...]:
    """One half of one domain's golden file."""
    from langgraph.checkpoint.memory import InMemorySaver

    from toolweave import OfflineAssistant, build_graph
    from toolweave.domains import load_domain

    domain, tools = load_domain(DOMAIN_NAMES[corpus.name])
    graph = build_graph(domain, tools, assistant=OfflineAssistant(), checkpointer=InMemorySaver())
    chosen = [c for c in cases(corpus.golden) if (c.split or "dev") == half]
    outcomes = [o for o in (_outcome(graph, c) for c in chosen) if o is not None]
    passage = [o for o in outcomes if "holds every content word" in o[1]]
    reading = [o for o in outcomes if "offline reading of the context answers" in o[1]]
    skipped = passage + reading
    return (
        half,
        corpus.name,
        len(outcomes),
        sum(first for first, _ in outcomes),
        len(passage),
        len(reading),
        sum(first for first, _ in skipped),
        sum(not first for first, _ in skipped),
    )


def main() -> int:
    """Print the table: development halves first (the rule's), then the held-out ones."""
    rows = [row(corpus, half) for half in ("dev", "heldout") for corpus in corpora()]
    print(markdown_table(HEADERS, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
