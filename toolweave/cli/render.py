"""Text for the ``toolweave`` command line: pure functions from library objects to lines."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeGuard, assert_never

from toolweave.coordinators.base import is_coordinator
from toolweave.llm.port import CITATION
from toolweave.state.documents import AnswerSentence, Source, as_sentences, as_sources, shortened
from toolweave.state.events import StreamEvent, is_stream_event
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import ROOT_TASK_NO
from toolweave.tools.ai.base import AiToolScope
from toolweave.tools.base import Systems
from toolweave.tools.consumers import (
    ClarifiableContextConsumerTool,
    ClarifiableTool,
    ContextConsumerTool,
)
from toolweave.tools.eligibility import open_without_filter
from toolweave.tools.plugins import PLUGIN_GROUP
from toolweave.tools.progress import progress_phrase
from toolweave.tools.registry import AnyTool
from toolweave.tools.texts import Texts, text_for

BULLET = "·"
INDENT = "  "


def progress_line(event: object) -> str | None:
    """One ``-v`` line for a stream event (``"· 1.2 skipped (conditional)"``), or ``None``."""
    if not isinstance(event, Mapping):
        return None
    kind = event.get("type")
    text = _event_text(event) if is_stream_event(event) else kind if isinstance(kind, str) else None
    return None if text is None else f"{BULLET} {event.get('task_no') or ROOT_TASK_NO} {text}"


def person_line(event: object, lang: str = "en", texts: Texts | None = None) -> str | None:
    """The line a person sees for a stream event (P4, C5, K3, D1), or ``None``: no task numbers."""
    if not isinstance(event, Mapping):
        return None
    phrase = event.get("phrase")
    if isinstance(phrase, str) and phrase.strip():
        return f"{BULLET} {' '.join(phrase.split())}"
    kind = event.get("type")
    key: str | None = None
    if kind == "coordinated" and event.get("changed"):
        key = "split" if event.get("subtasks") else "adjusted"
    elif kind == "conditional" and event.get("decision") == "run":
        key = "one_more_step"
    elif kind == "gatekeeper" and event.get("sufficient") is False:
        key = "looking_further"
    if key is not None:
        count = str(len(event.get("subtasks") or []))
        return f"{BULLET} {text_for(key, lang, texts, count=count)}"
    if kind != "tool_progress":
        return None
    tool, name, detail = str(event.get("tool")), str(event.get("event")), event.get("detail")
    return (
        f"{BULLET} {progress_phrase(tool, name, detail if isinstance(detail, str) else None, lang)}"
    )


READING = frozenset({"READING_PAGE"})
PAGE_OUTCOMES = frozenset({"ANSWER_IN_PAGE", "NOTHING_NEW", "NOT_IN_PAGE"})


def _tool_event(event: object, names: frozenset[str]) -> TypeGuard[Mapping[str, Any]]:
    return (
        isinstance(event, Mapping)
        and event.get("type") == "tool_progress"
        and event.get("event") in names
    )


def _same_page(reading: Mapping[str, Any], outcome: Mapping[str, Any]) -> bool:
    return all(reading.get(key) == outcome.get(key) for key in ("tool", "task_no", "detail"))


class PageReads:
    """One progress line per page a search reads (P4): ``READING_PAGE`` held until its outcome."""

    def __init__(self) -> None:
        self._held: Mapping[str, Any] | None = None

    def feed(self, event: object) -> list[object]:
        """The events to show now, in order, for ``event`` just arrived."""
        held, self._held = self._held, None
        if _tool_event(event, READING):
            self._held = event
            return [] if held is None else [held]
        if held is None or (_tool_event(event, PAGE_OUTCOMES) and _same_page(held, event)):
            return [event]
        return [held, event]

    def flush(self) -> list[object]:
        """The held reading, if any: call before anything else is printed."""
        held, self._held = self._held, None
        return [] if held is None else [held]


def _event_text(event: StreamEvent) -> str | None:
    if event["type"] == "tool_progress":  # P4: the phrase for people, never the code
        tool, name = str(event.get("tool")), str(event.get("event"))
        return event.get("phrase") or progress_phrase(tool, name, event.get("detail"), "en")
    if event["type"] == "routed":
        return routed_text(event)
    if event["type"] == "gates":  # T4: what the gates held back, never why (X4)
        refused = ", ".join(event.get("refused") or [])
        again = ", checked again on the reply" if event.get("rechecked") else ""
        return f"not offered{again}: {refused} (is_eligible refused the user data, T4)"
    if event["type"] == "coordinated":
        subtasks = event.get("subtasks") or []
        # only a change is news (C5), the rest is in `explain`; no "changed": an older event
        changed = event.get("changed", event.get("coordinators") if subtasks else []) or []
        more = f" → subtasks {', '.join(subtasks)}" if subtasks else ""
        return f"coordinated by {', '.join(changed)}{more}" if changed else None
    if event["type"] == "conditional":
        verb = "skipped" if event.get("decision") == "skip" else "runs"
        return f"{verb} (conditional)"
    if event["type"] == "gatekeeper":
        missing = event.get("missing") or []
        verdict = "context sufficient" if event.get("sufficient") else "context insufficient"
        return f"gatekeeper: {verdict}" + (f"; missing: {'; '.join(missing)}" if missing else "")
    if event["type"] == "deep_fallback":
        pieces: dict[str, list[str]] = {}  # a piece's neighbour and full search: one name
        for no, prompt in (event.get("subtasks") or {}).items():
            pieces.setdefault(prompt, []).append(no)
        steps = "; ".join(f"{prompt!r} ({', '.join(nos)})" for prompt, nos in pieces.items())
        return f"deep search planned: {steps or 'nothing'}"
    if event["type"] == "sent_again":  # S5, Q6: answered already, nothing done again
        return event.get("phrase") or "sent again: its answer again, nothing done twice"
    assert_never(event)


def refused_on_reply(events: Iterable[object], asked_by: Sequence[str] = ()) -> list[str]:
    """The tools a reply did not reach because their gates refused its user data (T4, Q2).

    Names only (X4): a ``gates`` event the run that took the reply sent, ``rechecked``; of
    them, those that asked (``asked_by``) when one did, not every gated tool of the domain.
    """
    refused = [
        str(tool)
        for event in events
        if isinstance(event, Mapping) and event.get("type") == "gates" and event.get("rechecked")
        for tool in event.get("refused") or []
    ]
    named = list(dict.fromkeys(refused))
    return [tool for tool in named if tool in asked_by] or named


FORCED_REFUSED = "not run: {tools} (forced, but held back by the gates, F4)"
HELD_IN_DOUBT = "not run: {tools} (routed, but {it} acts and the verdict is in doubt, A9)"


def routed_text(event: Mapping[str, Any]) -> str:
    """The ``-v`` line of a ``routed`` event: what runs, what was held back and why (F4, A9)."""
    tools = event.get("tools") or []
    text = f"routed: {', '.join(tools) if tools else 'no tool'}"
    if refused := list(event.get("refused") or []):
        text += "; " + FORCED_REFUSED.format(tools=", ".join(refused))
    if held := list(event.get("held") or []):
        it = "it" if len(held) == 1 else "each"
        text += "; " + HELD_IN_DOUBT.format(tools=", ".join(held), it=it)
    return text


def declined_lines(entries: Sequence[LedgerEntry]) -> list[str]:
    """``-v``: per task, the candidates the routing declined and what it said of each (A5, L1).

    ``"· 1 declined: opening_hours (no, P(yes) 0.31); fill_form (no)"``: a question that
    reached the wrong tool shows what was said of the right one without ``toolweave
    explain``, which has no thread to read for a one-off ``toolweave ask``.
    """
    return [
        f"{BULLET} {entry.task_no} declined: "
        + "; ".join(f"{tool} ({why})" for tool, why in entry.details.items())
        for entry in entries
        if entry.kind is LedgerKind.ROUTING and entry.verdict == "declined" and entry.details
    ]


def source_quotes(sentences: Sequence[AnswerSentence], number: int) -> list[str]:
    """What source ``number`` says for the answer, once each, in answer order (R9)."""
    quotes = [
        s.quotes[s.sources.index(number)]
        for s in sentences
        if number in s.sources and len(s.quotes) == len(s.sources)
    ]
    return list(dict.fromkeys(q for q in quotes if q))


def _same_words(one: str, other: str) -> bool:
    return one.casefold().split() == other.casefold().split()


def _quoting(said: Sequence[AnswerSentence]) -> bool:
    """Whether the source list quotes: the sources differ per sentence, or word it otherwise."""
    if len({s.sources for s in said}) > 1:
        return True
    pairs = [(s.text, q) for s in said for q in s.quotes]
    return any(not _same_words(text, quote) for text, quote in pairs)


def source_lines(
    sources: Iterable[Source | Mapping[str, Any]] | None,
    lang: str = "en",
    sentences: Iterable[AnswerSentence | Mapping[str, Any]] | None = None,
    texts: Texts | None = None,
) -> list[str]:
    """The heading in ``lang``, a line per source (R9), numbered and quoted with ``sentences``.

    ``texts``: the domain's own words for the heading and a page (``Domain.texts``).
    """
    said = [s for s in as_sentences(sentences) if s.supported]
    listed = as_sources(sources)
    quote = _quoting(said)
    lines = [text_for("sources", lang, texts)]
    for number, source in enumerate(listed, start=1):
        pages = ", ".join(map(str, source.cited_pages))
        page = ", " + text_for("page", lang, texts, pages=pages) if pages else ""
        url = f" — {source.url}" if source.url else ""
        mark = f"[{number}]" if said else "-"
        lines.append(f"{INDENT}{mark} {source.name}{page}{url}")
        if quote:
            lines += [f"{INDENT * 3}“{_quoted(q, said)}”" for q in source_quotes(said, number)]
    return lines if len(lines) > 1 else []


ECHO_WIDTH = 48  # a quote an answer sentence said word for word is cut to this


def _quoted(quote: str, said: Sequence[AnswerSentence]) -> str:
    """``quote`` shortened when the answer, printed just above, said it word for word."""
    if len(quote) <= ECHO_WIDTH or not any(_same_words(quote, s.text) for s in said):
        return quote
    return quote[: ECHO_WIDTH + 1].rsplit(None, 1)[0].rstrip(",;:(") + " …"


def answer_lines(
    values: Mapping[str, Any], lang: str = "en", texts: Texts | None = None
) -> list[str]:
    """The answer as a person reads it (R9): its sentences, then its sources, numbered."""
    said = [s for s in as_sentences(values.get("answer_sentences")) if s.supported]
    text = CITATION.sub("", str(values.get("answer") or "")).strip()  # a finished answer as is
    body = [s.marked() for s in said] or [text]
    sources = values.get("sources")
    return body + [line for line in source_lines(sources, lang, said, texts) if "“" not in line]


def question_lines(question: str, choices: Sequence[str]) -> list[str]:
    """A clarification question and its choices, numbered: a reply may be the number (Q2)."""
    return [question, *(f"{INDENT}{no}. {choice}" for no, choice in enumerate(choices, start=1))]


def eligible_label(tool: AnyTool) -> str:
    """``None``, ``ALL`` or the system names a tool is eligible for (T3)."""
    eligible = tool.eligible_system
    if eligible is None:
        return "None"
    if isinstance(eligible, Systems):
        return str(eligible.value)
    return eligible if isinstance(eligible, str) else ",".join(sorted(eligible))


def tool_kind(tool: AnyTool) -> str:
    """``coordinator``, ``consumer`` or ``tool``."""
    if is_coordinator(tool):
        return "coordinator"
    return "consumer" if isinstance(tool, ContextConsumerTool) else "tool"


COORDINATOR_PHASE = "(coordinator: runs before routing on every task, C2)"
OUTSIDE_THE_PHASE = "(coordinator outside the phase: runs when deep fallback plans it, D2)"
DEFAULT_RETRIEVAL = "(default retrieval: runs beside routed tools)"
ONLY_FORCED = "(no routing question: runs only when forced)"


def when_it_runs(tool: AnyTool, default_retrieval: str | None, width: int = 60) -> str:
    """When ``tool`` runs, in words: its phase (A3, C2), its routing question, or forcing."""
    question = shortened(tool.executable_instruction, width) if tool.executable_instruction else ""
    if is_coordinator(tool):
        phase = COORDINATOR_PHASE if tool.decomposes else OUTSIDE_THE_PHASE
        return f"{phase} + routed: {question}" if question else phase
    if question:
        return question
    return DEFAULT_RETRIEVAL if tool.name == default_retrieval else ONLY_FORCED


HIDDEN_DOCUMENTS = (
    "{name}: the installed plugin's domain hides the documents ingested under the same name; "
    "ingest them again under another name (toolweave ingest DIR --domain {name}-docs) and "
    "build the plugin's domain on them with toolweave.domains.ingested_store('{name}-docs')"
)


def broken_plugin_lines(broken: Mapping[str, str], *, verbose: bool = False) -> list[str]:
    """``toolweave domains``' lines about plugins that failed to load, and where it looked."""
    lines = [f"{why}; its domains are not listed" for why in broken.values()]
    if verbose:
        lines.append(
            f"domain packages are found by their entry point in the group {PLUGIN_GROUP!r} of "
            f"the environment of {sys.executable}: install yours with "
            f"`{sys.executable} -m pip install -e PATH`"
        )
    return lines


def tool_traits(tool: AnyTool) -> str:
    """``gated`` (T4), ``answers`` (R3), ``asks`` (Q1), ``effects`` (S5), ``client`` (W3) or ``-``.

    What each means: docs/guides/cli.md (``toolweave tools``).
    """
    traits = [
        ("gated", not open_without_filter(tool)),
        ("answers", bool(getattr(tool, "returns_answer", False))),
        ("asks", _may_ask(tool)),
        ("effects", bool(getattr(tool, "side_effects", False))),
        ("client", client_only(tool)),
    ]
    return ",".join(name for name, holds in traits if holds) or "-"


def client_only(tool: AnyTool) -> bool:
    """An AI system tool of scope ``CLIENT``: it runs only where a client announced it (W3)."""
    definition = getattr(tool, "definition", None)
    return getattr(definition, "scope", None) is AiToolScope.CLIENT


NOT_RUN_HERE = "not run here: {tools} (runs only in a client that announces it, W3: the chat page)"
"""``toolweave ask`` announces no client tools, so a routed CLIENT tool is skipped there."""


def client_note(event: object, client_tools: frozenset[str]) -> str:
    """The ``-v`` note for a ``routed`` event naming CLIENT tools, which this CLI never runs."""
    if not isinstance(event, Mapping) or event.get("type") != "routed":
        return ""
    skipped = [name for name in event.get("tools") or [] if name in client_tools]
    return "; " + NOT_RUN_HERE.format(tools=", ".join(skipped)) if skipped else ""


def _may_ask(tool: AnyTool) -> bool:
    """A clarifiable tool, or one that asks for an unfilled required input (Q1, T13)."""
    asks_for_input = bool(tool.required_inputs) and bool(tool.ask_for_missing_inputs)
    return asks_for_input or isinstance(tool, ClarifiableTool | ClarifiableContextConsumerTool)


def tools_table(
    tools: Iterable[AnyTool], *, default_retrieval: str | None = None, question_width: int = 60
) -> list[str]:
    """A fixed-width table of ``tools``: name, domain, system, priority, kind, traits, when run."""
    header = ("NAME", "DOMAIN", "SYSTEM", "PRIORITY", "KIND", "TRAITS", "ROUTING QUESTION")
    rows = [header] + [
        (tool.name, tool.domain or "any", eligible_label(tool), str(tool.priority), tool_kind(tool),
         tool_traits(tool), when_it_runs(tool, default_retrieval, question_width))
        for tool in tools
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]


LEDGER_LABELS: dict[LedgerKind, str] = {
    LedgerKind.GATE: "{tool}: {verdict}",
    LedgerKind.ROUTING: "{tool}: {verdict}",
    LedgerKind.PREFILTER: "pre-filter: {verdict}",
    LedgerKind.FORCED: "{tool}: {verdict}",
    LedgerKind.FORCED_UNKNOWN: "{tool}: unknown forced name, {verdict}",
    LedgerKind.COORDINATOR_RUN: "coordinator {tool}: ran, {verdict}",
    LedgerKind.COORDINATOR_ERROR: "coordinator {tool}: error, {verdict}",
    LedgerKind.CONDITIONAL: "conditional: {verdict} (owner: {tool})",
    LedgerKind.SUBTASK_REFUSED: "subtask {verdict}",
    LedgerKind.TOOL_RESULT: "{tool}: ran, result {verdict}",
    LedgerKind.TOOL_ERROR: "{tool}: {verdict}",
    LedgerKind.TOOL_SKIPPED: "{tool}: {verdict}",
    LedgerKind.GATEKEEPER: "gatekeeper: {verdict}",
    LedgerKind.DEEP_FALLBACK: "deep fallback: {verdict}",
    LedgerKind.CLARIFICATION: "clarification {tool}: {verdict}",
    LedgerKind.NORMALIZED: "normalized ({verdict})",
    LedgerKind.RUN_ABANDONED: "interrupted run: {verdict}",
    LedgerKind.DEDUPLICATED: "{tool}: documents seen before, {verdict}",
}


KEPT_FROM_RUNNING = "conditional: {verdict}, the subtask that would run {tool}"


def ledger_line(entry: LedgerEntry) -> str:
    """One ledger entry in words: what was decided about which tool, and why (L1)."""
    if entry.kind is LedgerKind.ANSWER:
        text = f"answer: {entry.verdict}" + (f" by {entry.tool}" if entry.tool else "")
        text += _citation_figures(entry.details)
    else:
        template = LEDGER_LABELS.get(entry.kind, entry.kind.value + " {tool}: {verdict}")
        if entry.kind is LedgerKind.CONDITIONAL and entry.tool in entry.tools:
            template = KEPT_FROM_RUNNING  # narrowed to a tool the subtask would run (L1)
        text = template.format(tool=entry.tool or "-", verdict=entry.verdict or "-")
    text += _named_tools(entry)
    return f"{text} — {entry.reason}" if entry.reason else text


def _citation_figures(details: Mapping[str, str]) -> str:
    """`` (2/3 sentences supported, citation precision 0.50, recall 1.00)`` (R9), or nothing."""
    if "sentences" not in details:
        return ""
    return (
        f" ({details.get('supported', '?')}/{details['sentences']} sentences supported, "
        f"citation precision {details.get('citation_precision', '-')}, "
        f"recall {details.get('citation_recall', '-')})"
    )


TOOLS_SHOWN = 8  # tools a summary line names before "and N more"


def _named_tools(entry: LedgerEntry) -> str:
    """`` [a, b, c]``: the other tools an entry concerns (L1), or nothing."""
    names = [name for name in entry.tools if name != entry.tool]
    if not names:
        return ""
    shown = ", ".join(names[:TOOLS_SHOWN])
    more = len(names) - TOOLS_SHOWN
    return f" [{shown}{f', and {more} more' if more > 0 else ''}]"


def tool_lines(thread: str, tool: str, entries: Sequence[LedgerEntry]) -> list[str]:
    """``toolweave explain THREAD --tool NAME``: each entry about ``tool``, with its task (L1)."""
    if not entries:
        return [f"thread {thread}: no decision of the latest run concerns {tool!r}"]
    lines = [f"thread {thread} (latest message), tool {tool}:"]
    lines.extend(f"{INDENT}{entry.task_no or 'gates'}: {ledger_line(entry)}" for entry in entries)
    return lines


def _order(task_no: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in task_no.split("."))


def ledger_tree(
    ledger: Sequence[LedgerEntry],
    *,
    offered: Sequence[str] = (),
    question: str | None = None,
    answer: str | None = None,
) -> list[str]:
    """A run's ledger as a tree (L1): the gates, then entries by task, indented by depth."""
    lines: list[str] = []
    if question is not None:
        lines.append(f"question: {question}")
    groups: dict[str, list[LedgerEntry]] = {}
    general: list[LedgerEntry] = []
    before: list[LedgerEntry] = []  # what the request this message amends did (Q2, Q6)
    for entry in ledger:
        if entry.task_no is not None:
            groups.setdefault(entry.task_no, []).append(entry)
        else:
            (before if entry.kind is LedgerKind.CLARIFICATION else general).append(entry)
    if before:
        lines.append("before the amendment:")
        lines.extend(f"{INDENT}{ledger_line(entry)}" for entry in before)
    lines += ["gates:", f"{INDENT}offered: {', '.join(offered) if offered else 'no tool'}"]
    lines.extend(f"{INDENT}{ledger_line(entry)}" for entry in general)
    for task_no in sorted(groups, key=_order):
        depth = task_no.count(".")
        lines.append(f"{INDENT * depth}{task_no}")
        lines.extend(f"{INDENT * (depth + 1)}{ledger_line(entry)}" for entry in groups[task_no])
    if answer is not None:
        lines.append("answer:")
        lines.extend(f"{INDENT}{line}" for line in answer.splitlines() or [""])
    return lines
