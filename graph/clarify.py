"""The clarification pause (Q1-Q2): opening the question, taking the reply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolweave.graph.context import Dependencies
from toolweave.graph.exchanges import clarification_message, resolve_choice
from toolweave.graph.idempotency import acted_calls
from toolweave.graph.nodes import entry
from toolweave.graph.tool_call import Outcome
from toolweave.llm.next_message import answers_the_question, correction
from toolweave.state.graph_state import ActedCall, GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.pauses import Clarification
from toolweave.state.results import ToolResult
from toolweave.state.task import TaskNode, TaskStatus, completion_key
from toolweave.tools.texts import Texts, text_for

CANCELLED_REASON = "the person dropped the question ({message!r}); the run ends here (Q2)"
AMENDED_REASON = (
    "the next message amended the request ({message!r}): the request is asked again with "
    "{body!r}, not given to {tool} as its reply (Q2)"
)
ACTED_BEFORE = (
    "acted for the request this message amends (key {key}, task {task_no} of that "
    "request): routed again, a tool that takes amendments gets the key as ctx.amends, "
    "any other is not called again and its effect stands (Q2, Q6, S5)"
)
CLOSED_REASON = (
    "the next message was a new question ({message!r}): answered as a new turn, not given "
    "to {tool} as its reply (Q2)"
)


def replied(pending: Clarification, text: str, reason: str) -> dict[str, Any]:
    """The state update that leaves the user's reply on the open question (Q2)."""
    reply = resolve_choice(text, pending.choices)
    said = _about(pending, "replied", reason)
    return {"pause": pending.model_copy(update={"reply": reply}), "ledger": [said]}


def _about(pending: Clarification, verdict: str, reason: str) -> LedgerEntry:
    """A clarification ledger entry about the open question (L1)."""
    return entry(pending.task_no, pending.tool, LedgerKind.CLARIFICATION, verdict, reason)


def reply_for(state: GraphState, tool: str) -> str | None:
    """The user's reply to ``tool``'s question, when it waits for the tool (Q2)."""
    pending = state.get("pause")
    if isinstance(pending, Clarification) and pending.tool == tool:
        return pending.reply
    return None


NOT_ASKED = (
    "asked {question!r}, but it was routed on evidence in doubt (A9): not asked; "
    "the retrieval answers (Q1)"
)


def not_asked(node: TaskNode, name: str, result: ToolResult) -> LedgerEntry:
    """Q1 with A9: the ledger line of a question not asked, the tool's yes being in doubt (R1)."""
    reason = NOT_ASKED.format(question=result.text or "")
    return entry(node, name, LedgerKind.CLARIFICATION, "not asked", reason)


def pause_for_clarification(
    state: GraphState, deps: Dependencies, node: TaskNode, name: str, outcome: Outcome
) -> dict[str, Any]:
    """Q1: keep the tool at the head of the queue and open the question, within the limit.

    A question after a reply that filled a required input the graph asked for is not
    counted (X3 holds: such rounds are bounded by the tool's required inputs), so a tool
    with more required inputs than the limit is asked for each of them.
    """
    result = outcome.result
    assert result is not None
    rounds = state.get("clarification_rounds") or 0
    counted = 0 if outcome.filled else 1
    key = completion_key(node.task_no, name)
    if counted and rounds >= deps.limits.max_clarification_rounds:
        lang, texts = state["message"].user_lang, deps.domain.texts
        text = text_for("clarification_limit", lang, texts, question=result.text or "")
        closed = node.model_copy(update={"queue": [], "status": TaskStatus.CLOSED})
        return {"tasks": {node.task_no: closed}, "answer": text, "terminal": key}
    question = Clarification(
        task_no=node.task_no, tool=name, question=result.text or "", choices=result.choices
    )
    requests = {**node.requests, name: outcome.request}
    return {
        "tasks": {node.task_no: node.model_copy(update={"requests": requests})},
        "pause": question,
        "clarification_rounds": rounds + counted,
        "messages": [clarification_message(question)],
    }


def cancelled(
    pending: Clarification, message: str, user_lang: str, texts: Texts | None = None
) -> dict[str, Any]:
    """The state update when the person drops the open question: the run ends (Q2)."""
    said = _about(pending, "cancelled", CANCELLED_REASON.format(message=message))
    return {
        "pause": None,
        "answer": text_for("cancelled", user_lang, texts),
        "terminal": completion_key(pending.task_no, pending.tool),
        "ledger": [said],
    }


def _amendment(pending: object, message: str) -> str | None:
    """What ``message`` asks instead, when it amends the request ``pending`` waits on (Q2)."""
    if not isinstance(pending, Clarification) or pending.reply is not None:
        return None
    body = correction(message)
    if body and not answers_the_question(body, pending.question, pending.choices):
        return body
    return None


def amended_calls(state: GraphState, message: str) -> tuple[ActedCall, ...]:
    """The calls of tools that act a message carries into its turn when it amends (Q2, Q6)."""
    if _amendment(state.get("pause"), message) is None:
        return ()
    return acted_calls(state)


def closed_by_new_turn(
    pending: object, message: str, acted: Sequence[ActedCall] = ()
) -> tuple[str, list[LedgerEntry]]:
    """The question of the new turn and the ledger entries of the open question it closed (Q2)."""
    if not isinstance(pending, Clarification) or pending.reply is not None:
        return message, []
    body = _amendment(pending, message)
    if body is not None:
        reason = AMENDED_REASON.format(message=message, tool=pending.tool, body=body)
        return body, [_about(pending, "amended", reason), *map(_acted_before, acted)]
    reason = CLOSED_REASON.format(message=message, tool=pending.tool)
    return message, [_about(pending, "closed", reason)]


def _acted_before(call: ActedCall) -> LedgerEntry:
    """The ledger entry of a call an amended request carries (no task: the tree is new)."""
    reason = ACTED_BEFORE.format(key=call.key, task_no=call.task_no)
    verdict = "acted before the amendment"
    kind = LedgerKind.CLARIFICATION
    return entry(None, call.tool, kind, verdict, reason, key=call.key, amends=call.amends)
