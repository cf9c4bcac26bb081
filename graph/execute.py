"""The ``execute`` node: one tool per step (A6, R1-R8, B1-B3, T9, P1-P3, Q1-Q2, W3)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, assert_never

from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from toolweave.graph.clarify import not_asked, pause_for_clarification, reply_for
from toolweave.graph.client_tools import ai_tool_steps
from toolweave.graph.context import Dependencies, RunContext
from toolweave.graph.deep_fallback import found_new_entries
from toolweave.graph.idempotency import acted_on, note_acted
from toolweave.graph.nodes import Steps, entry, make_node
from toolweave.graph.tool_call import (
    Outcome,
    progress_for,
    result_reader,
    tool_steps,
)
from toolweave.graph.walk import current_task_no
from toolweave.state.documents import UniqueTextDocument, repeated
from toolweave.state.errors import CallStillRunningError
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerKind
from toolweave.state.pauses import Clarification
from toolweave.state.results import ResultMode
from toolweave.state.task import (
    PromptAndContext,
    TaskNode,
    TaskStatus,
    completion_key,
    execution_text,
)
from toolweave.tools.ai.orchestration import AiChatbotTool
from toolweave.tools.text import readable
from toolweave.tools.texts import Texts, text_for

AFTER_TERMINAL = "an earlier tool's finished answer ended the task (R8)"
GATE_REFUSED = (
    "not offered on this run: its gate, checked again with the user data the reply came "
    "with, refused it (T4)"
)
DEDUPLICATED = "{removed} of its {total} documents already in the context, kept once (R6, R11)"


def record_result(
    key: str,
    text: str,
    outcome: Outcome,
    reads: Callable[[str], str] = readable,
    *,
    in_doubt: bool = False,
    present: Iterable[UniqueTextDocument | Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The state update of a finished tool result (B1, R1-R5, R10, A9, R11)."""
    update = _update(key, text, outcome, reads, in_doubt=in_doubt)
    documents = update.get("documents")
    if documents and (removed := repeated(present, documents)):
        tool = outcome.result.tool_name if outcome.result is not None else None
        why = DEDUPLICATED.format(removed=removed, total=len(documents))
        kind, task_no = LedgerKind.DEDUPLICATED, key.rpartition(":")[0]
        counted = entry(task_no, tool, kind, f"{removed} removed", why, count=removed)
        update["ledger"] = [*outcome.ledger, counted]
    return update


def _update(
    key: str, text: str, outcome: Outcome, reads: Callable[[str], str], *, in_doubt: bool
) -> dict[str, Any]:
    """:func:`record_result`'s update before deduplication is counted."""
    result = outcome.result
    if result is None:
        return {}
    saved = PromptAndContext(prompt=text, context=result.context_text(), documents=result.documents)
    update: dict[str, Any] = {"context_buffer": {key: [saved]}}
    documents = [doc.model_copy(update={"text": reads(doc.text)}) for doc in result.documents]
    match result.mode:
        case ResultMode.CONTEXT:
            update["documents"] = documents
        case ResultMode.GUARANTEED_CONTEXT:
            context = reads(result.text) if result.text is not None else ""
            context = context or "\n".join(doc.text for doc in documents)
            update["guaranteed"] = [
                saved.model_copy(update={"context": context, "documents": tuple(documents)})
            ]
        case ResultMode.ANSWER if in_doubt:
            lines = [line.strip() for line in reads(result.text or "").splitlines()]
            label = result.tool_name.replace("_", " ")
            update["documents"] = [
                UniqueTextDocument(
                    document_id=f"tool:{result.tool_name}",
                    document_name=label,
                    sentence_number=number,
                    text=line,
                )
                for number, line in enumerate((line for line in lines if line), start=1)
            ] + documents
        case ResultMode.ANSWER:
            update.update(answer=reads(result.text or ""), terminal=key)
        case ResultMode.ANSWERED:
            streamed = outcome.streamed
            text, message_id = ("", None) if streamed is None else (streamed.text, streamed.id)
            update.update(answer=text, answer_id=message_id, terminal=key)
        case ResultMode.CLARIFICATION:  # Q1: execute pauses instead (pause_for_clarification)
            return {}
        case unknown:
            assert_never(unknown)
    return update


def call_tool(
    deps: Dependencies,
    state: GraphState,
    runtime: Runtime[RunContext],
    node: TaskNode,
    name: str,
    text: str,
) -> Steps[Outcome]:
    """The queued tool's call: its outcome, a client tool's pause among its writes (W2, W3, Q2)."""
    tool = deps.registry.get(name)
    if isinstance(tool, AiChatbotTool):
        progress = progress_for(deps, state, runtime, node, tool)
        return (yield from ai_tool_steps(deps, state, runtime, node, tool, text, progress))
    return (yield from tool_steps(deps, state, runtime, node, name, text, reply_for(state, name)))


def failed_effect(
    tool: Any, outcome: Outcome, text: str, lang: str, texts: Texts | None = None
) -> dict[str, Any]:
    """R7, S5, W3: a tool that acts and raised tells the answer it was not done (no activation).

    Its call gave no result, so the run answers from the rest; without this note the
    person read the documents' answer (or "no information") to a request to act, and
    nothing said it failed. Only the error's type is said (X4). So does a tool that runs
    only in the chat page, routed where no page runs it (the command line, an API call).
    """
    if isinstance(tool, AiChatbotTool) and outcome.not_here:  # W1: its name for people
        note = text_for("client_only", lang, texts, tool=tool.definition.name)
        return {"guaranteed": [PromptAndContext(prompt=text, context=note)]}
    if tool is None or not tool.side_effects or outcome.result is not None:
        return {}
    if not outcome.failed or any(e.key for e in outcome.ledger):  # a refused result acted
        return {}
    name, key = tool.name.replace("_", " "), _failure_text(outcome.failed)
    note = text_for(key, lang, texts, tool=name, error=outcome.failed)
    return {"guaranteed": [PromptAndContext(prompt=text, context=note)]}


UNSURE_ERRORS = frozenset(
    {"RemoteDisconnected", "ConnectionResetError", "IncompleteRead", "RemoteProtocolError"}
)
"""Errors (by type name) of a request cut off after it was sent: it may have been done."""


def _failure_text(error: str) -> str:
    """The catalog key of a failed acting call's note by its error's type name (R7, S5).

    A call still running elsewhere is being done; one that got no answer (a timeout other
    than the connection's, a connection cut mid-request) may have been done; else it failed.
    """
    if error == CallStillRunningError.__name__:
        return "still_running"
    waited = "Timeout" in error and "Connect" not in error
    return "unsure_effect" if waited or error in UNSURE_ERRORS else "failed_effect"


def held_back(state: GraphState, node: TaskNode, name: str, rest: list[str]) -> dict[str, Any]:
    """T4: the update when the next queued tool is no longer offered: it does not run."""
    closed = node.model_copy(
        update={"queue": rest, "status": TaskStatus.ROUTED if rest else TaskStatus.CLOSED}
    )
    update: dict[str, Any] = {
        "tasks": {node.task_no: closed},
        "ledger": [entry(node, name, LedgerKind.TOOL_SKIPPED, "not run", GATE_REFUSED)],
    }
    pause = state.get("pause")
    if isinstance(pause, Clarification) and (pause.task_no, pause.tool) == (node.task_no, name):
        update["pause"] = None
    return update


def make_execute(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``execute`` node over ``deps``."""

    def execute(state: GraphState, runtime: Runtime[RunContext]) -> Steps[dict[str, Any]]:
        """Run the next queued tool of the task and record its result."""
        node = state["tasks"][current_task_no(state)]
        name, rest = node.queue[0], node.queue[1:]
        if name not in state["message"].offered:  # T4: refused on this run (a reply's)
            return held_back(state, node, name, rest)
        key = completion_key(node.task_no, name)
        text = execution_text(node.task)
        tool = deps.registry.get(name)
        outcome = yield from call_tool(deps, state, runtime, node, name, text)
        update = {"ledger": outcome.ledger, **outcome.update, "llm_calls": outcome.llm_calls}
        if outcome.pause:  # W3: the client runs the AI tool
            return update
        update.update(acted_on(state, outcome.ledger))  # S5, Q6: a repeat of it acts no more
        note_acted(outcome.ledger)  # S5: a later failure of a run nothing keeps says so
        if outcome.deep_calls:
            update["deep_fallback_calls"] = outcome.deep_calls
        if isinstance(state.get("pause"), Clarification):  # the reply reached its tool (Q2)
            update["pause"] = None
        result = outcome.result
        if result is not None and result.mode is ResultMode.CLARIFICATION:
            if name not in node.as_context:
                return {**update, **pause_for_clarification(state, deps, node, name, outcome)}
            update["ledger"] = [*outcome.ledger, not_asked(node, name, result)]  # Q1 with A9
            result = None
        lang = state["message"].user_lang
        if result is not None:  # R1/R7: no result is as if the tool had not been activated
            update["activated"] = [key]
        else:
            update.update(failed_effect(tool, outcome, text, lang, deps.domain.texts))
        reads = readable if tool is None or outcome.read else result_reader(tool, lang)
        in_doubt = name in node.as_context  # A9: its finished answer joins the context
        present = state.get("documents") or ()
        update.update(record_result(key, text, outcome, reads, in_doubt=in_doubt, present=present))
        joined = in_doubt and result is not None and result.mode is ResultMode.ANSWER
        terminal = result is not None and result.is_terminal and not joined
        if terminal:  # R8: the tools after it do not run (L1)
            skip = LedgerKind.TOOL_SKIPPED
            after = [entry(node, n, skip, "not run", AFTER_TERMINAL) for n in rest]
            update["ledger"] = [*outcome.ledger, *after]
        closed = not rest or terminal
        status = TaskStatus.CLOSED if closed else TaskStatus.ROUTED
        update["tasks"] = {node.task_no: node.model_copy(update={"queue": rest, "status": status})}
        update["ledger"] = [*update["ledger"], *found_new_entries(state, name, node.task_no)]
        return update

    return make_node("execute", execute)
