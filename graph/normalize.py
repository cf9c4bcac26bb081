"""The ``normalize`` node: one per user message, the model's rewrite checked (A1, A2, T10, X1)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.messages import AnyMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from toolweave.coordinators.base import AgentCoordinator
from toolweave.graph.clarify import amended_calls, closed_by_new_turn
from toolweave.graph.context import Dependencies, Limits, RunContext, assistant_for, user_data_for
from toolweave.graph.nodes import Steps, entry, make_node
from toolweave.graph.validation import question_of
from toolweave.llm.lexical import content_words, matches, words
from toolweave.llm.offline import normalize_offline, resolved_by_rules
from toolweave.llm.offline_followup import borrows_from_earlier
from toolweave.llm.port import Normalized
from toolweave.state.events import gates_event
from toolweave.state.graph_state import GraphState, MessageFacts
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import ROOT_TASK_NO, TaskInfo, TaskNode
from toolweave.tools.eligibility import check_gates, open_without_filter
from toolweave.tools.language import MIN_EVIDENCE, LanguageGuess, OwnLanguage, detect_language
from toolweave.tools.registry import AnyTool
from toolweave.tools.text import LANGUAGES

PER_MESSAGE_RESETS: tuple[tuple[str, Any], ...] = (
    ("context_buffer", Overwrite({})),
    ("documents", Overwrite([])),
    ("guaranteed", Overwrite([])),
    ("activated", Overwrite([])),
    ("deep_fallback_calls", Overwrite(0)),
    ("deep_fallback_owner", None),
    ("answer", None),
    ("sources", []),
    ("answer_sentences", []),
    ("terminal", None),
    ("answer_id", None),
    ("task", None),
    ("pause", None),
    ("clarification_rounds", 0),
)
"""State a new message starts without: the keys and their empty values (``Overwrite``: reducers)."""


def rewrite_fault(message: str, history: Sequence[AnyMessage], rewrite: str) -> str | None:
    """What ``rewrite`` does wrong (A1): drops a content word of ``message``, or adds one unsaid."""
    written = words(rewrite)
    if not all(any(matches(w, r) for r in written) for w in content_words(message)):
        return "drops the message's own words"
    said = words(" ".join([message, *(m.text for m in history)]))
    if not all(any(matches(w, s) or matches(s, w) for s in said) for w in content_words(rewrite)):
        return "adds words nobody wrote"
    return None


def check_normalized(
    message: str, history: Sequence[AnyMessage], norm: Normalized, own: OwnLanguage | None = None
) -> tuple[Normalized, list[str]]:
    """The normalization with A1 and T10 applied, and a note per change for the ledger."""
    notes: list[str] = []
    if not history and norm.question != message:
        notes.append(f"first turn kept as written, not {norm.question!r} (A1)")
        norm = replace(norm, question=message)
    elif history and (fault := rewrite_fault(message, history, norm.question)) is not None:
        offline = normalize_offline(message, history, default_lang=norm.user_lang).question
        notes.append(f"rewrite {norm.question!r} {fault}: {offline!r} (A1)")
        norm = replace(norm, question=offline)
    guess = detect_language(message, own)
    lang = guess.lang or _weak_kit_guess(guess, norm.user_lang, own)
    if lang is not None and lang != norm.user_lang:
        notes.append(f"language {lang} by the detector, not the model's {norm.user_lang}")
        norm = replace(norm, user_lang=lang)
    return norm, notes


def _weak_kit_guess(guess: LanguageGuess, said: str, own: OwnLanguage | None) -> str | None:
    """The domain's own language where ``said`` is a kit language on too little evidence (T10).

    A domain whose language no kit knows keeps it for a message the detector cannot place,
    rather than a kit language one accent or one shared word leaned to ("Perdi o telemóvel").
    """
    if own is None or said not in LANGUAGES or guess.points.get(said, 0) >= MIN_EVIDENCE:
        return None
    return own.lang


def split_conversation(
    messages: Sequence[AnyMessage], limits: Limits
) -> tuple[str, list[AnyMessage]]:
    """The question (the last human message) and the bounded history before it (A1, X1)."""
    question = question_of(messages, limits)
    history = list(messages[:-1])[-limits.history_messages :] if limits.history_messages else []
    return question, history


def domain_tools(deps: Dependencies) -> list[AnyTool]:
    """The registered tools the domain may use at all (T2, A2): computed once per graph."""
    excluded = deps.domain.excluded_tools
    return [
        tool
        for tool in deps.registry
        if tool.name not in excluded and tool.domain in (None, deps.domain.name)
    ]


REFUSED_ELIGIBILITY = "refused: eligibility"
"""The verdict of a gate ledger entry when ``is_eligible`` refused the tool (T4)."""


def offer_tools(
    deps: Dependencies,
    tools: Sequence[AnyTool],
    systems: Sequence[str],
    user_data: Mapping[str, Any] | None,
    open_tools: Collection[str] = frozenset(),
) -> tuple[list[str], list[LedgerEntry]]:
    """A2: the tools that pass T3 and T4 for this request, and a ledger entry per refusal."""
    offered: list[str] = []
    refused: list[LedgerEntry] = []
    for tool in tools:
        if not systems and tool.name in open_tools:
            offered.append(tool.name)
            continue
        verdict = check_gates(tool, domain=deps.domain.name, systems=systems, user_data=user_data)
        if verdict.passed:
            offered.append(tool.name)
        else:
            gate = f"refused: {verdict.gate}"
            refused.append(entry(None, tool.name, LedgerKind.GATE, gate, verdict.reason))
    return offered, refused


def refused_by_eligibility(refusals: Sequence[LedgerEntry]) -> list[str]:
    """The tools whose ``is_eligible`` refused (T4); a system filter's refusal (T3) is no news."""
    return [
        refusal.tool
        for refusal in refusals
        if refusal.tool is not None and refusal.verdict == REFUSED_ELIGIBILITY
    ]


RECHECKED = "checked again with the user data of the run that took the reply (T4): {reason}"

GateCheck = Callable[[GraphState, Runtime[RunContext] | None], dict[str, Any]]
"""The gates again on a resumed run: the state update (:func:`make_gate_check`)."""


def make_gate_check(deps: Dependencies) -> GateCheck:
    """T4 on every run: the gates again on a run that resumes the message with a reply."""
    tools = domain_tools(deps)
    open_tools = frozenset(tool.name for tool in tools if open_without_filter(tool))

    def check(state: GraphState, runtime: Runtime[RunContext] | None) -> dict[str, Any]:
        message = state.get("message")
        if message is None:
            return {}
        user_data = user_data_for(state, runtime)
        systems = state.get("systems") or []
        offered, refusals = offer_tools(deps, tools, systems, user_data, open_tools)
        if offered == message.offered:
            return {}
        before = set(message.offered)
        entries = [
            refusal.model_copy(update={"reason": RECHECKED.format(reason=refusal.reason)})
            for refusal in refusals
            if refusal.tool in before
        ]
        refused = refused_by_eligibility(entries)
        if refused and runtime is not None:
            runtime.stream_writer(gates_event(ROOT_TASK_NO, refused, rechecked=True))
        allowed = set(offered)
        facts = message.model_copy(
            update={
                "offered": offered,
                "coordinators": [name for name in message.coordinators if name in allowed],
            }
        )
        return {"message": facts, "ledger": entries}

    return check


def _own_words(message: str, question: str, history: Sequence[AnyMessage]) -> str:
    """The person's message when it is a follow-up borrowing an earlier question's words (A1).

    Empty for a message that stands alone and for an amended request (Q2: it continues the
    request it corrects). A tool that acts must be named in these words to act (A9, S5).
    """
    if question != message or not borrows_from_earlier(message, history):
        return ""
    return message


def make_normalize(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``normalize`` node over ``deps``."""
    tools = domain_tools(deps)
    open_tools = frozenset(tool.name for tool in tools if open_without_filter(tool))
    coordinators = sorted(
        (tool for tool in tools if isinstance(tool, AgentCoordinator) and tool.decomposes),
        key=lambda t: t.priority,
    )

    def normalize(state: GraphState, runtime: Runtime[RunContext]) -> Steps[dict[str, Any]]:
        """Turn the last message into a standalone root task and reset the per-message state."""
        message, history = split_conversation(state["messages"], deps.limits)
        amends = amended_calls(state, message)  # Q6: what the request it amends did
        question, closed = closed_by_new_turn(state.get("pause"), message, amends)  # Q2
        assistant = assistant_for(deps, runtime)
        lang = deps.domain.default_language
        calls = 1
        if assistant.normalizes_first_message or not resolved_by_rules(question, history):
            norm = yield from assistant.normalize_steps(question, history, default_lang=lang)
        else:  # A10, A1: a first message, or a follow-up the rules resolve: no model call
            norm, calls = normalize_offline(question, history, default_lang=lang), 0
        norm, notes = check_normalized(question, history, norm, deps.own_language)  # A1, T10
        offered, refusals = offer_tools(
            deps, tools, state.get("systems") or [], user_data_for(state, runtime), open_tools
        )
        refused = refused_by_eligibility(refusals)
        if refused:  # T4: the developer sees what the gates held back (never why, X4)
            runtime.stream_writer(gates_event(ROOT_TASK_NO, refused, rechecked=False))
        allowed = set(offered)
        root = TaskNode(
            task=TaskInfo(
                task_no=ROOT_TASK_NO,
                task_prompt=norm.question,
                important_words=list(norm.important_words),
                prompt_type=norm.prompt_type,
            )
        )
        why = "; ".join([f"question: {norm.question!r}", *notes, f"offered {len(offered)} tools"])
        said = entry(ROOT_TASK_NO, None, LedgerKind.NORMALIZED, norm.user_lang, why)
        update: dict[str, Any] = {
            "message": MessageFacts(
                question=norm.question,
                user_lang=norm.user_lang,
                important_words=list(norm.important_words),
                prompt_type=norm.prompt_type,
                offered=offered,
                coordinators=[c.name for c in coordinators if c.name in allowed],
                amends=amends,
                follow_up=_own_words(message, question, history),
            ),
            "tasks": Overwrite({ROOT_TASK_NO: root}),
            "ledger": Overwrite([*closed, said, *refusals]),
            # a stored count is reset; a new thread's 0 is not (PF1: an Overwrite packs slowly)
            "llm_calls": Overwrite(calls) if state.get("llm_calls") else calls,
            "deep_fallback_done": deps.domain.deep_fallback is None,
        }
        # the previous message's results cleared where there are any (a write costs work)
        for key, empty in PER_MESSAGE_RESETS:
            if state.get(key):
                update[key] = empty
        return update

    return make_node("normalize", normalize)
