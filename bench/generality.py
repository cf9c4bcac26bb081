"""G1, measured: both example domains, each half of their golden files, side by side.

Issue 36 item 5: one table of domain x model x half, with the five columns of
``toolweave eval``'s split table (tools exact, facts found, unanswerable handled,
clarification as expected, sources right), plus model calls and characters a
question. The held-out rows are the figures to report; the development rows stand
beside them so the gap between the halves is visible. A golden line without a
``split`` is development (the hospital's file was written before the rule).

The offline model runs by default. ``--model`` (or ``OPENAI_BASE_URL`` set) adds the
configured chat model (``local-llm env``); ``--sample N`` runs N cases of each half
(seeded), for a slow model. The table says how many cases each row is over.

``--anchor`` adds, with the configured model, the plain-RAG anchor of issue 41 item 4:
what a user could build instead in a few lines, the same domain's store and one LCEL
call (``ChatPromptTemplate | ChatOpenAI | StrOutputParser``) over the store's eight best
sentences (``store.search(question, limit=8)``), with :data:`ANCHOR_PROMPT`, written
once. Its rows score the answer as ``toolweave eval`` does (facts found, unanswerable
handled); routing, clarification and sources are not its business (``-``).

Usage (from the repository root)::

    python -m bench.generality                        # offline, every case
    python -m bench.generality --model --sample 12    # the model too, 12 a half
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolweave.domains import golden_file, load_domain
from toolweave.evaluation import SPLITS, EvalReport, GoldenCase, evaluate, load_golden, percent
from toolweave.graph.context import Limits
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.port import LlmAssistant

DOMAINS = ("korhaz", "pomoc")
ANCHOR_PROMPT = (
    "Answer the question from these passages only, in the question's language. If they "
    "do not say, answer that you have no information about it.\n\nPassages:\n{passages}"
)
"""The anchor's one prompt (a system message; the question is the human message)."""
HEADER = (
    "| domain | model | half | cases | tools exact | facts found | unanswerable handled "
    "| clarification as expected | sources right | model calls/q | chars/q |"
)


def _row(domain: str, label: str, half: str, report: EvalReport) -> str:
    calls = statistics.fmean(r.model_calls for r in report.results) if report.results else 0.0
    chars = statistics.fmean(r.model_chars for r in report.results) if report.results else 0.0
    return (
        f"| {domain} | {label} | {half} | {report.count} | {percent(report.accuracy)} "
        f"| {percent(report.facts_accuracy)} | {percent(report.unanswerable_accuracy)} "
        f"| {percent(report.clarification_rate)} | {percent(report.sources_accuracy)} "
        f"| {calls:.2f} | {chars:,.0f} |"
    )


def _chosen(cases: list[GoldenCase], half: str, sample: int | None, seed: int) -> list[GoldenCase]:
    """The half's cases, or a seeded sample of them (the same for toolweave and the anchor)."""
    chosen = [case for case in cases if case.split == half]
    if sample is not None and sample < len(chosen):
        chosen = random.Random(seed).sample(chosen, sample)
    return chosen


def rows(domain: str, assistant: LlmAssistant, sample: int | None, seed: int) -> list[str]:
    """One row per half of ``domain``'s golden file, answered by ``assistant``."""
    path = golden_file(domain)
    if path is None:
        return []
    cases = load_golden(path)
    dom, tools = load_domain(domain)
    out: list[str] = []
    for half in SPLITS:
        chosen = _chosen(cases, half, sample, seed)
        if not chosen:
            continue
        limits = Limits(run_deadline_s=3600.0)
        report = evaluate(dom, tools, chosen, assistant=assistant, limits=limits)
        label = "offline" if isinstance(assistant, OfflineAssistant) else assistant.label
        out.append(_row(domain, label, half, report))
        print(out[-1], file=sys.stderr, flush=True)
    return out


def anchor_rows(domain: str, sample: int | None, seed: int, timeout: float) -> list[str]:
    """The plain-RAG anchor on each half of ``domain``'s golden file (one model call each)."""
    import time

    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_openai import ChatOpenAI

    from toolweave.evaluation import holds_fact, says_no_information

    path = golden_file(domain)
    dom, tools = load_domain(domain)
    store = next(t for t in tools if t.name == dom.default_retrieval_tool).store  # type: ignore[attr-defined]
    model = ChatOpenAI(
        model=os.environ.get("TOOLWEAVE_MODEL", "gpt-4o-mini"), temperature=0, timeout=timeout
    )
    chain = (
        ChatPromptTemplate.from_messages([("system", ANCHOR_PROMPT), ("human", "{question}")])
        | model
        | StrOutputParser()
    )
    out: list[str] = []
    cases = load_golden(path) if path is not None else []
    for half in SPLITS:
        chosen = [c for c in _chosen(cases, half, sample, seed) if not c.history]
        facts: list[bool] = []
        none: list[bool] = []
        chars = 0
        started = time.perf_counter()
        for case in chosen:
            passages = "\n".join(
                f"[{i}] {d.text}" for i, d in enumerate(store.search(case.question, limit=8), 1)
            )
            chars += len(ANCHOR_PROMPT) + len(passages) + len(case.question)
            answer = chain.invoke({"passages": passages, "question": case.question})
            if case.expects_no_information:
                none.append(says_no_information(answer))
            elif case.expected_facts:
                facts.append(all(holds_fact(answer, f) for f in case.expected_facts))
        seconds = (time.perf_counter() - started) / max(1, len(chosen))
        share = lambda xs: percent(sum(xs) / len(xs)) if xs else "-"  # noqa: E731
        out.append(
            f"| {domain} | plain RAG chain | {half} | {len(chosen)} | - | {share(facts)} "
            f"| {share(none)} | - | - | 1.00 | {chars / max(1, len(chosen)):,.0f} |"
            f" <!-- {seconds:.1f} s/q -->"
        )
        print(out[-1], file=sys.stderr, flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table: offline, and with ``--model`` the configured model too."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="store_true", help="also the configured chat model")
    parser.add_argument("--model-only", action="store_true", help="only the configured model")
    parser.add_argument("--sample", type=int, help="cases per half with the model (seeded)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per model call")
    parser.add_argument("--anchor", action="store_true", help="the plain-RAG chain too")
    parser.add_argument("--anchor-only", action="store_true", help="only the plain-RAG chain")
    args = parser.parse_args(argv)
    args.anchor = args.anchor or args.anchor_only
    assistants: list[tuple[LlmAssistant, int | None]] = []
    if not (args.anchor_only or args.model_only):
        assistants.append((OfflineAssistant(), None))
    with_model = args.model or args.model_only or os.environ.get("OPENAI_BASE_URL")
    if with_model and not args.anchor_only:
        from toolweave.llm.env import default_assistant

        assistants.append((default_assistant(timeout=args.timeout), args.sample))
    lines = [HEADER, "|---|---|---|" + "---:|" * 8]
    for assistant, sample in assistants:
        for domain in DOMAINS:
            lines += rows(domain, assistant, sample, args.seed)
    if args.anchor:
        for domain in DOMAINS:
            lines += anchor_rows(domain, args.sample, args.seed, args.timeout)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
