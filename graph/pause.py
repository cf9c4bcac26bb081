"""The one interrupting node, ``ask_user``, and every pause kind's resume (Q1, Q2, Q7, W3, X5).

LangGraph re-runs an interrupted node from its first line: no work sits before the interrupt (Q4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, assert_never

from langchain_core.messages import HumanMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from toolweave.graph.clarify import cancelled, replied
from toolweave.graph.client_tools import receive_results
from toolweave.graph.context import Dependencies, Limits, RunContext
from toolweave.graph.idempotency import replay_reply_id
from toolweave.graph.nodes import make_pure_node
from toolweave.graph.normalize import GateCheck, make_gate_check, split_conversation
from toolweave.graph.validation import check_reply, reply_text
from toolweave.graph.walk import current_task_no, message_kind
from toolweave.state.graph_state import GraphState
from toolweave.state.pauses import (
    Clarification,
    ClientCalls,
    Pause,
    PausePayload,
    is_pause_payload,
    payload_of,
)

Ask = Callable[[Any], Any]
"""Pause again with a payload and return the next resume value (``interrupt``)."""


def check_resume(payload: PausePayload, value: Any, limits: Limits) -> None:
    """A resume value has the shape the pause it answers takes (X5).

    Raises:
        InvalidRequestError: With a message fit for the user; nothing is stored.
    """
    match payload["type"]:
        case "clarification":
            check_reply(value, limits)
        case "client_tool_calls":
            pass  # any shape: a malformed value re-pauses with the error (W3, receive_results)
        case unknown:
            assert_never(unknown)


def check_resume_for(interrupt_value: Any, resume: Any, limits: Limits) -> None:
    """:func:`check_resume` for an interrupt value; other interrupts are not toolweave's."""
    if is_pause_payload(interrupt_value):
        check_resume(interrupt_value, resume, limits)


MESSAGE_RESUME = "message"
"""The ``type`` of a resume value that is the person's next message, read as one sent (Q2)."""


def is_message_resume(value: Any) -> bool:
    """Whether a resume value is the person's next message (:data:`MESSAGE_RESUME`)."""
    return isinstance(value, Mapping) and value.get("type") == MESSAGE_RESUME


def apply_resume(pause: Pause, value: Any, ask: Ask) -> dict[str, Any]:
    """The state update once ``value`` answers ``pause`` (Q2, W3); a message resume only adds it."""
    match pause:
        case Clarification() if is_message_resume(value):
            return {"messages": [HumanMessage(content=reply_text(value))]}
        case Clarification():
            update = replied(pause, reply_text(value), "resumed with Command(resume=...)")
            return {**update, "messages": [HumanMessage(content=update["pause"].reply)]}
        case ClientCalls():
            return {"pause": receive_results(pause, value, ask)}
        case unknown:
            assert_never(unknown)


def apply_message(pause: Pause, text: str) -> dict[str, Any]:
    """The state update once the next message on the thread answers ``pause`` (Q2)."""
    match pause:
        case Clarification():
            return replied(pause, text, "the next message on the thread")
        case ClientCalls():  # never routed here: a message does not answer the client
            raise AssertionError("client-tool calls are answered by the client only")
        case unknown:
            assert_never(unknown)


def _pending(state: Mapping[str, Any]) -> Pause:
    """The pending pause; on a thread paused before the ``pause`` key, the old key's question."""
    pause = state.get("pause")
    if isinstance(pause, Pause):
        return pause
    node = state["tasks"][current_task_no(state)]
    return Clarification(task_no=node.task_no, tool=node.queue[0], question="")


def with_reply_id(update: dict[str, Any], state: GraphState) -> dict[str, Any]:
    """``update`` whose reply message has an id of its own, the same when the resume is replayed."""
    rounds = int(state.get("clarification_rounds") or 0)
    messages = [
        message.model_copy(update={"id": replay_reply_id(state["messages"], rounds, message.text)})
        if isinstance(message, HumanMessage) and not message.id
        else message
        for message in update.get("messages") or ()
    ]
    return {**update, "messages": messages} if messages else update


def with_gates_again(
    update: dict[str, Any], state: GraphState, runtime: Runtime[RunContext], check: GateCheck
) -> dict[str, Any]:
    """``update`` and the gates checked again with this run's user data (T4, Q2)."""
    gates = check(state, runtime)
    if not gates:
        return update
    return {**update, **gates, "ledger": [*update.get("ledger", []), *gates["ledger"]]}


def make_ask_user(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``ask_user`` node: pause with the pending pause's payload (Q1, W3, Q7)."""
    check = make_gate_check(deps)

    def ask_user(state: GraphState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Interrupt with the payload; on resume, apply the value to the pause."""
        pause = _pending(state)
        value = interrupt(payload_of(pause))
        update = apply_resume(pause, value, interrupt)
        if not isinstance(pause, Clarification) or is_message_resume(value):
            return update
        return with_gates_again(with_reply_id(update, state), state, runtime, check)

    return make_pure_node("ask_user", ask_user)


def make_take_reply(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``take_reply`` node: the next message answers the pause, gates again (Q2, T4)."""
    check = make_gate_check(deps)

    def take_reply(state: GraphState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Use the new message as the reply, or drop the question on a cancel (Q2)."""
        text, _ = split_conversation(state["messages"], deps.limits)
        pending = _pending(state)
        if isinstance(pending, Clarification) and message_kind(state, pending) == "cancel":
            message = state.get("message")
            lang = message.user_lang if message is not None else deps.domain.default_language
            return cancelled(pending, text, lang, deps.domain.texts)
        return with_gates_again(apply_message(pending, text), state, runtime, check)

    return make_pure_node("take_reply", take_reply)
