"""Q8, measured: answers after a clarification reply that ask the question again.

The cases of a domain (default: the hospital, ``korhaz``) that pause for a
clarification question:

- its clarification examples, when its package has them (``CLARIFICATION_EXAMPLES``
  in ``<package>/examples.py``: question, reply and the answer's expected phrases);
- every case of its golden file (``golden.jsonl``) that pauses when asked, replied
  with the case's ``"reply"`` if it has one, else with the first offered choice.

Each case runs through the whole graph on a fresh thread: the question, then the
reply (``Command(resume=...)``), then whatever question follows is replied the same
way, up to the round limit. The finished answer *repeats* when it holds a question
that was asked in the run, word for word (folded for case and accents), or asks it
again (:func:`toolweave.llm.answer_rules.repeats_clarification`). *Replaced* counts
the answers the answer node's guard (Q8) replaced because the model asked again:
what the model did, before the guard. The target is repeats: 0.

The offline model runs by default; with ``OPENAI_BASE_URL`` set (or ``--model``), the
chat model the environment configures (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``TOOLWEAVE_MODEL``: ``local-llm env``).

Usage (from the repository root)::

    python -m bench.clarification_repeats                 # offline, or the configured model
    python -m bench.clarification_repeats --offline       # the offline model, whatever is set
    python -m bench.clarification_repeats --cases examples  # the examples only (quick)
    python -m bench.clarification_repeats --cases expected --domain pomoc  # marked cases
    python -m bench.clarification_repeats --domain NAME --misses
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from toolweave.domains import golden_file, load_domain
from toolweave.evaluation import holds_fact
from toolweave.graph.answer import REASKED_REASON
from toolweave.graph.builder import build_graph
from toolweave.llm.answer_rules import repeats_clarification
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.port import AnswerRequest, ClarificationExchange, LlmAssistant
from toolweave.state.serde import checkpoint_serde
from toolweave.tools.text import fold, words

ROUNDS = 3
"""Clarification rounds a case may take (the graph's default limit)."""


@dataclass(frozen=True)
class Case:
    """A question that may pause, the reply to give, and the answer's expected phrases."""

    id: str
    question: str
    reply: str | None = None
    """``None``: reply with the first offered choice."""
    expected: tuple[str, ...] = ()
    history: tuple[str, ...] = ()
    user_data: dict[str, Any] | None = None


@dataclass
class Outcome:
    """One case's run: the questions asked, the answer and what the answer node did."""

    case: Case
    asked: list[str] = field(default_factory=list)
    answer: str = ""
    replaced: bool = False

    @property
    def repeats(self) -> bool:
        """The answer holds an asked question, or asks one again."""
        if not self.asked:
            return False
        said = " ".join(fold(w) for w in words(self.answer))
        for question in self.asked:
            asked = " ".join(fold(w) for w in words(question))
            if asked and asked in said:
                return True
        exchanges = [ClarificationExchange(q, "") for q in self.asked]
        request = AnswerRequest("", "", "", [], (), clarifications=exchanges)
        return repeats_clarification(self.answer, request) is not None

    @property
    def holds(self) -> bool | None:
        """Every expected phrase is in the answer (``None``: the case expects none)."""
        if not self.case.expected:
            return None
        return all(holds_fact(self.answer, fact) for fact in self.case.expected)


def example_cases(domain: str) -> list[Case]:
    """The clarification examples of the domain's package, if it has them."""
    path = golden_file(domain)
    if path is None:
        return []
    try:
        module = importlib.import_module(f"{path.parent.name}.examples")
    except ImportError:
        return []
    examples = getattr(module, "CLARIFICATION_EXAMPLES", [])
    return [
        Case(f"example-{n}", e.question, e.reply, tuple(e.expected_substrings))
        for n, e in enumerate(examples, start=1)
    ]


def golden_cases(domain: str) -> list[Case]:
    """Every case of the domain's golden file (the ones that pause are kept when run)."""
    path = golden_file(domain)
    if path is None:
        return []
    cases: list[Case] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        row = json.loads(line)
        facts = row.get("expected_facts") or row.get("expected_words") or []
        cases.append(
            Case(
                id=str(row.get("id") or f"{path.name}:{number}"),
                question=row["question"],
                reply=row.get("reply"),
                expected=tuple(facts) if isinstance(facts, list) else (),
                history=tuple(row.get("history") or ()),
                user_data=row.get("user_data"),
            )
        )
    return cases


def expected_cases(domain: str) -> list[Case]:
    """The golden file's cases marked ``"expected_clarification": true`` (quick with a model)."""
    path = golden_file(domain)
    if path is None:
        return []
    marked = {
        str(row.get("id"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
        for row in [json.loads(line)]
        if row.get("expected_clarification") is True
    }
    return [case for case in golden_cases(domain) if case.id in marked]


def run_case(graph: Any, case: Case) -> Outcome | None:
    """``case`` on a fresh thread; ``None`` when it never paused for a clarification."""
    config = {"configurable": {"thread_id": f"repeats-{case.id}-{time.monotonic_ns()}"}}
    extra = {"user_data": case.user_data} if case.user_data else {}
    for earlier in case.history:
        graph.invoke({"messages": [HumanMessage(earlier)], **extra}, config)
    out = graph.invoke({"messages": [HumanMessage(case.question)], **extra}, config)
    outcome = Outcome(case)
    for _ in range(ROUNDS):
        pending = [i.value for i in out.get("__interrupt__", ()) if isinstance(i.value, dict)]
        asking = [p for p in pending if p.get("type") == "clarification"]
        if not asking:
            break
        outcome.asked.append(asking[0]["question"])
        choices = asking[0].get("choices") or []
        reply = case.reply or (choices[0] if choices else "yes")
        out = graph.invoke(Command(resume=reply), config)
    if not outcome.asked:
        return None
    outcome.answer = str(out.get("answer") or "")
    reasons = [e.reason for e in out.get("ledger", ()) if e.kind == "answer"]
    outcome.replaced = any(REASKED_REASON in reason for reason in reasons)
    return outcome


def table(label: str, part: str, outcomes: Sequence[Outcome], ran: int, seconds: float) -> str:
    """One markdown row: cases run, cases that paused, repeats, replaced, facts held."""
    checked = [o.holds for o in outcomes if o.holds is not None]
    held = f"{sum(checked)}/{len(checked)}" if checked else "-"
    repeats = sum(o.repeats for o in outcomes)
    replaced = sum(o.replaced for o in outcomes)
    per_case = seconds / max(1, ran)
    return (
        f"| {label} | {part} | {ran} | {len(outcomes)} | {repeats} | {replaced} | {held} "
        f"| {per_case:.2f} |"
    )


def assistant_for(args: argparse.Namespace) -> LlmAssistant:
    """The offline model, or the configured chat model with ``OPENAI_BASE_URL`` / ``--model``."""
    if args.offline or not (args.model or os.environ.get("OPENAI_BASE_URL")):
        return OfflineAssistant()
    from toolweave.llm.env import default_assistant

    return default_assistant(timeout=args.timeout)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cases and print the table (and, with ``--misses``, every repeating answer)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="korhaz", help="the domain (default: korhaz)")
    parser.add_argument(
        "--cases",
        choices=("examples", "golden", "expected", "all"),
        default="all",
        help="which cases: the package's examples, every golden case (those that pause "
        "count), the golden cases marked expected_clarification, or examples and golden",
    )
    parser.add_argument("--model", action="store_true", help="the configured chat model")
    parser.add_argument("--offline", action="store_true", help="the offline model, always")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per model call")
    parser.add_argument("--misses", action="store_true", help="print every repeating answer")
    args = parser.parse_args(argv)
    assistant = assistant_for(args)
    domain, tools = load_domain(args.domain)
    graph = build_graph(
        domain, tools, assistant=assistant, checkpointer=InMemorySaver(serde=checkpoint_serde())
    )
    parts = {"examples": example_cases, "golden": golden_cases, "expected": expected_cases}
    everything = {"examples": example_cases, "golden": golden_cases}
    chosen = everything if args.cases == "all" else {args.cases: parts[args.cases]}
    print(
        "| answered by | cases | run | paused | repeats | replaced by the guard "
        "| facts held | s/case |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    misses: list[str] = []
    for part, load in chosen.items():
        start = time.perf_counter()
        cases = load(args.domain)
        outcomes = [o for case in cases if (o := run_case(graph, case)) is not None]
        seconds = time.perf_counter() - start
        print(table(assistant.label, part, outcomes, len(cases), seconds), flush=True)
        misses += [
            f"- {o.case.id}: {o.case.question} -> asked {o.asked!r} -> {o.answer!r}"
            for o in outcomes
            if o.repeats or (args.misses and o.holds is False)
        ]
    if args.misses and misses:
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
