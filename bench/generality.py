"""G1, measured: both example domains, each half of their golden files, side by side.

Issue 36 item 5: one table of domain x model x half, with the columns of
``toolweave eval``'s split table (tools exact, facts found, unanswerable handled,
clarification as expected, sources right; issue 38 item 4: next message right,
sentences supported, citation precision, sentences dropped, invented facts), plus
model calls and characters a question. The held-out rows are the figures to
report; the development rows stand beside them so the gap between the halves
is visible. A golden line without a ``split`` is development (the hospital's
file was written before the rule).

The offline model runs by default. ``--model`` (or ``OPENAI_BASE_URL`` set) adds the
configured chat model (``local-llm env``); ``--sample N`` runs N cases of each half
(seeded), for a slow model. The table says how many cases each row is over.

``--anchor`` adds, with the configured model, the plain-RAG anchor of issue 41 item 4:
what a user could build instead in a few lines, the same domain's store and one LCEL
call (``ChatPromptTemplate | ChatOpenAI | StrOutputParser``) over the store's eight best
sentences (``store.search(question, limit=8)``), with :data:`ANCHOR_PROMPT`, written
once. Its rows score the answer as ``toolweave eval`` does (facts found, unanswerable
handled); routing, clarification and sources are not its business (``-``).

``--proxy`` counts the configured model's calls at the HTTP boundary (issue 37 item 3):
a :class:`~bench.http_proxy.CountingProxy` on 127.0.0.1 in front of ``OPENAI_BASE_URL``
carries every request of toolweave's model and of the anchor's, and three columns are
added: chat-completion requests a question, their request bodies' characters (JSON:
messages, schemas, options) and their messages' text characters. A case's wire count
includes the turns of its ``history``. ``--half heldout`` runs one half only.

Usage (from the repository root)::

    python -m bench.generality                        # offline, every case
    python -m bench.generality --model --sample 12    # the model too, 12 a half
    python -m bench.generality --model-only --proxy --half heldout --sample 5 --seed 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.http_proxy import CountingProxy, Counts
from toolweave.domains import golden_file, load_domain
from toolweave.evaluation import (
    SPLITS,
    CaseResult,
    EvalReport,
    GoldenCase,
    evaluate,
    load_golden,
    percent,
)
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
    "| clarification as expected | sources right | next message right | sentences supported "
    "| citation precision | sentences dropped | invented facts | model calls/q | chars/q |"
)
WIRE_HEADER = " HTTP calls/q | HTTP body chars/q | HTTP message chars/q |"
"""The columns ``--proxy`` adds: counted on the wire (:mod:`bench.http_proxy`)."""


class Wire:
    """Per-case traffic through the proxy, taken between cases (``evaluate``'s progress)."""

    def __init__(self, proxy: CountingProxy | None, *, blank: bool = False) -> None:
        self.proxy = proxy
        self.blank = blank
        """No proxy, but the table has the wire columns: ``-`` in them (the offline model)."""
        self.cases: list[Counts] = []
        self._last = Counts() if proxy is None else proxy.counts()

    def restart(self) -> None:
        """Start a new row: forget the cases so far."""
        self.cases = []
        self._last = Counts() if self.proxy is None else self.proxy.counts()

    def case_done(self, done: int = 0, result: CaseResult | None = None) -> None:
        """Record the traffic since the last case (a progress callback)."""
        if self.proxy is None:
            return
        now = self.proxy.counts()
        self.cases.append(now - self._last)
        self._last = now
        if result is not None:  # what the case's calls were, for reading the table
            kinds = ", ".join(f"{kind} {n}" for kind, n in self.cases[-1].kinds)
            print(f"  {result.case.id}: {self.cases[-1].calls} calls ({kinds})", file=sys.stderr)

    def columns(self) -> str:
        """The added cells (empty without a proxy)."""
        if self.proxy is None:
            return " - | - | - |" if self.blank else ""
        n = max(1, len(self.cases))
        calls = sum(c.calls for c in self.cases) / n
        body = sum(c.body_chars for c in self.cases) / n
        text = sum(c.message_chars for c in self.cases) / n
        return f" {calls:.2f} | {body:,.0f} | {text:,.0f} |"


def _row(domain: str, label: str, half: str, report: EvalReport, wire: Wire) -> str:
    calls = statistics.fmean(r.model_calls for r in report.results) if report.results else 0.0
    chars = statistics.fmean(r.model_chars for r in report.results) if report.results else 0.0
    return (
        f"| {domain} | {label} | {half} | {report.count} | {percent(report.accuracy)} "
        f"| {percent(report.facts_accuracy)} | {percent(report.unanswerable_accuracy)} "
        f"| {percent(report.clarification_rate)} | {percent(report.sources_accuracy)} "
        f"| {percent(report.next_message_accuracy)} | {percent(report.sentences_supported)} "
        f"| {percent(report.citation_precision)} | {report.sentences_dropped} "
        f"| {report.invented_answers} | {calls:.2f} | {chars:,.0f} |{wire.columns()}"
    )


ONLY: frozenset[str] = frozenset()
"""No case filter: every chosen case."""


def _chosen(
    cases: list[GoldenCase], half: str, sample: int | None, seed: int, ids: frozenset[str] = ONLY
) -> list[GoldenCase]:
    """The half's cases, or a seeded sample of them (the same for toolweave and the anchor).

    ``ids``: of those, only the cases with these ids (a rerun of a few after a change
    that only they can feel); empty: all.
    """
    chosen = [case for case in cases if case.split == half]
    if sample is not None and sample < len(chosen):
        chosen = random.Random(seed).sample(chosen, sample)
    return [case for case in chosen if not ids or case.id in ids]


def rows(
    domain: str,
    assistant: LlmAssistant,
    sample: int | None,
    seed: int,
    halves: Sequence[str] = SPLITS,
    wire: Wire | None = None,
    answers: Path | None = None,
    ids: frozenset[str] = frozenset(),
    deep_calls: int | None = None,
) -> list[str]:
    """One row per half of ``domain``'s golden file, answered by ``assistant``.

    ``deep_calls``: the graph's ``Limits.deep_fallback_llm_calls`` (D7); ``None``: its default.

    ``answers``: a JSON-lines file each case's question, answer and facts are added to.
    """
    path = golden_file(domain)
    if path is None:
        return []
    cases = load_golden(path)
    dom, tools = load_domain(domain)
    wire = wire or Wire(None)
    out: list[str] = []
    for half in halves:
        chosen = _chosen(cases, half, sample, seed, ids)
        if not chosen:
            continue
        limits = Limits(run_deadline_s=3600.0)
        if deep_calls is not None:
            limits = Limits(run_deadline_s=3600.0, deep_fallback_llm_calls=deep_calls)
        wire.restart()
        report = evaluate(
            dom, tools, chosen, assistant=assistant, limits=limits, progress=wire.case_done
        )
        label = "offline" if isinstance(assistant, OfflineAssistant) else assistant.label
        out.append(_row(domain, label, half, report, wire))
        if answers is not None:
            _dump(answers, domain, half, report)
        print(out[-1], file=sys.stderr, flush=True)
    return out


def _dump(path: Path, domain: str, half: str, report: Any) -> None:
    """Add each case's question, answer, expected facts and tools to ``path`` (JSON lines).

    The tools (expected, routed, exact) and whether the sources were right are there to
    count a half's misses by kind without reading its questions (held out: counts only).
    """
    with path.open("a", encoding="utf-8") as out:
        for result in report.results:
            case = result.case
            line = {
                "domain": domain,
                "half": half,
                "id": case.id,
                "question": case.question,
                "answer": result.answer,
                "facts": list(case.expected_facts),
                "facts_ok": result.facts_ok,
                "expected_tools": sorted(case.expected_tools),
                "routed": sorted(result.routed),
                "tools_exact": result.exact,
                "sources_ok": result.sources_ok,
            }
            out.write(json.dumps(line, ensure_ascii=False) + "\n")


def anchor_rows(
    domain: str,
    sample: int | None,
    seed: int,
    timeout: float,
    halves: Sequence[str] = SPLITS,
    wire: Wire | None = None,
) -> list[str]:
    """The plain-RAG anchor on each half of ``domain``'s golden file (one model call each)."""
    import time

    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_openai import ChatOpenAI

    from toolweave.evaluation import holds_fact, says_no_information

    path = golden_file(domain)
    dom, tools = load_domain(domain)
    store = next(t for t in tools if t.name == dom.default_retrieval_tool).store  # type: ignore[attr-defined]
    wire = wire or Wire(None)
    model = ChatOpenAI(
        model=os.environ.get("TOOLWEAVE_MODEL", "gpt-4o-mini"),
        temperature=0,
        timeout=timeout,
        base_url=None if wire.proxy is None else wire.proxy.base_url,
    )
    chain = (
        ChatPromptTemplate.from_messages([("system", ANCHOR_PROMPT), ("human", "{question}")])
        | model
        | StrOutputParser()
    )
    out: list[str] = []
    cases = load_golden(path) if path is not None else []
    for half in halves:
        chosen = [c for c in _chosen(cases, half, sample, seed) if not c.history]
        wire.restart()
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
            wire.case_done()
            if case.expects_no_information:
                none.append(says_no_information(answer))
            elif case.expected_facts:
                facts.append(all(holds_fact(answer, f) for f in case.expected_facts))
        seconds = (time.perf_counter() - started) / max(1, len(chosen))
        share = lambda xs: percent(sum(xs) / len(xs)) if xs else "-"  # noqa: E731
        out.append(
            f"| {domain} | plain RAG chain | {half} | {len(chosen)} | - | {share(facts)} "
            f"| {share(none)} | - | - | - | - | - | - | - "
            f"| 1.00 | {chars / max(1, len(chosen)):,.0f} |"
            f"{wire.columns()} <!-- {seconds:.1f} s/q -->"
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
    parser.add_argument("--half", choices=SPLITS, help="one half of the golden files only")
    parser.add_argument(
        "--proxy", action="store_true", help="count the model's calls on the wire (HTTP proxy)"
    )
    parser.add_argument("--answers", type=Path, help="add each case's answer to this JSONL file")
    parser.add_argument(
        "--ids", default="", help="of the chosen cases, only these ids (comma-separated)"
    )
    parser.add_argument(
        "--no-cite",
        action="store_true",
        help="the model answers in free text with [n] markers (cite_sentences=False, R9)",
    )
    parser.add_argument(
        "--deep-calls", type=int, help="Limits.deep_fallback_llm_calls (D7); default: the graph's"
    )
    args = parser.parse_args(argv)
    args.anchor = args.anchor or args.anchor_only
    halves = (args.half,) if args.half else SPLITS
    proxy = _proxy() if args.proxy else None
    wire = Wire(proxy)
    try:
        lines = _table(args, halves, wire)
    finally:
        if proxy is not None:
            proxy.stop()
    print("\n".join(lines))
    return 0


def _proxy() -> CountingProxy:
    """The counting proxy in front of ``OPENAI_BASE_URL``."""
    upstream = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    if not upstream:
        raise SystemExit('--proxy needs OPENAI_BASE_URL (eval "$(local-llm env)")')
    return CountingProxy(upstream).start()


def _table(args: argparse.Namespace, halves: Sequence[str], wire: Wire) -> list[str]:
    assistants: list[tuple[LlmAssistant, int | None]] = []
    if not (args.anchor_only or args.model_only):
        assistants.append((OfflineAssistant(), None))
    with_model = args.model or args.model_only or os.environ.get("OPENAI_BASE_URL")
    if with_model and not args.anchor_only:
        from toolweave.llm.chat_model import ChatModelAssistant
        from toolweave.llm.env import default_assistant

        base_url = None if wire.proxy is None else wire.proxy.base_url
        model = default_assistant(timeout=args.timeout, base_url=base_url)
        if args.no_cite and isinstance(model, ChatModelAssistant):
            model.cite_sentences = False
        assistants.append((model, args.sample))
    extra = WIRE_HEADER if wire.proxy is not None else ""
    lines = [HEADER + extra, "|---|---|---|" + "---:|" * (13 + extra.count("|"))]
    for assistant, sample in assistants:
        for domain in DOMAINS:
            # the offline model sends nothing: its rows have no wire columns
            offline = Wire(None, blank=wire.proxy is not None)
            counted = offline if isinstance(assistant, OfflineAssistant) else wire
            ids = frozenset(i.strip() for i in args.ids.split(",") if i.strip())
            lines += rows(
                domain,
                assistant,
                sample,
                args.seed,
                halves,
                counted,
                args.answers,
                ids,
                deep_calls=args.deep_calls,
            )
    if args.anchor:
        for domain in DOMAINS:
            lines += anchor_rows(domain, args.sample, args.seed, args.timeout, halves, wire)
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
