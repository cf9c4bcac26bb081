"""The walk over the task tree as one pure function (S2, S3, A3-A7): every ordering rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from toolweave.llm.next_message import NextMessageKind, next_message_kind
from toolweave.state.pauses import Clarification, Pause, awaiting, pause_of
from toolweave.state.task import ROOT_TASK_NO, TaskNode, TaskStatus

Phase = Literal[
    "coordinate", "decide_conditional", "route", "execute", "ask_user", "deep_fallback", "answer"
]
Entry = Literal["normalize", "take_reply"]

_AFTER_TASK_CLOSED: tuple[Phase, ...] = (
    "coordinate",
    "decide_conditional",
    "route",
    "deep_fallback",
    "answer",
)
NEXT_PHASES: dict[str, tuple[Phase | Entry, ...]] = {
    "normalize": ("coordinate", "route"),
    "take_reply": ("execute", "answer"),
    "ask_user": ("execute", "normalize", "take_reply"),
    "coordinate": ("coordinate", "decide_conditional", "route"),
    "decide_conditional": ("coordinate", "decide_conditional", "route"),
    "route": ("execute", *_AFTER_TASK_CLOSED),
    "execute": ("execute", "ask_user", *_AFTER_TASK_CLOSED),
    "deep_fallback": ("answer", "coordinate", "decide_conditional", "route"),
}
"""Where each node can go next: its conditional edges' path map (a phase not listed fails)."""


@dataclass(frozen=True)
class Step:
    """The next phase and the task it works on."""

    phase: Phase
    task_no: str


def next_step(state: Mapping[str, Any]) -> Step:
    """The next phase of the run.

    Depth first from the root: a task is coordinated (A3), then its unfinished subtasks run in list
    order, each to completion (S2; a conditional one is decided first, K3), then the task is routed
    (A5) and its tools run one per step (A6). A pending pause that is unanswered (an open
    clarification question, client-tool calls without results, W3) pauses the walk where it is, in
    ``ask_user`` (Q1, Q7, S3); a terminal result anywhere ends it (S3). When the root is closed,
    deep fallback gets its one turn (D7), then the answer (A7).
    """
    tasks: Mapping[str, TaskNode] = state.get("tasks") or {}
    pause = pause_of(state)
    if pause is not None and awaiting(pause) != "nobody":  # dispatched per kind (Q7)
        return Step("ask_user", pause.task_no)
    if state.get("terminal") or ROOT_TASK_NO not in tasks:
        return Step("answer", ROOT_TASK_NO)
    node = tasks[ROOT_TASK_NO]
    while True:
        if node.status is TaskStatus.PENDING and _has_coordinator_to_run(state, node):
            return Step("coordinate", node.task_no)
        if node.status is TaskStatus.ROUTED:
            return Step("execute", node.task_no)
        if node.status not in (TaskStatus.PENDING, TaskStatus.COORDINATED):
            break
        child = _first_open_child(tasks, node)
        if child is None:
            return Step("route", node.task_no)
        if child.task.conditional and not child.decided:
            return Step("decide_conditional", child.task_no)
        node = child
    if state.get("deep_fallback_done"):
        return Step("answer", ROOT_TASK_NO)
    return Step("deep_fallback", ROOT_TASK_NO)


def next_phase(state: Mapping[str, Any]) -> Phase | Entry:
    """The route function of every phase node's conditional edges: the phase the walk names."""
    if message_waits(state):
        return route_entry(state)
    return next_step(state).phase


def current_task_no(state: Mapping[str, Any]) -> str:
    """The task a phase works on: the one the walk names over the phase's input state."""
    return next_step(state).task_no


def _has_coordinator_to_run(state: Mapping[str, Any], node: TaskNode) -> bool:
    """A3/C3: an offered coordinator has not yet been applied to the task."""
    applied = node.task.applied_coordinator_names
    message = state.get("message")
    return message is not None and any(name not in applied for name in message.coordinators)


def _first_open_child(tasks: Mapping[str, TaskNode], node: TaskNode) -> TaskNode | None:
    children = (tasks.get(child_no) for child_no in node.children)
    return next((child for child in children if child is not None and not child.done), None)


def route_entry(state: Mapping[str, Any]) -> Entry:
    """Where a new message enters: a reply to an open question (Q2) or a new question (A1)."""
    pause = pause_of(state)
    if pause is None or awaiting(pause) != "reply":
        return "normalize"
    return "normalize" if message_kind(state, pause) in NEW_TURN else "take_reply"


NEW_TURN: frozenset[NextMessageKind] = frozenset({"new_question", "amended"})
"""The kinds of next message that start a new turn instead of replying (Q2)."""


def message_waits(state: Mapping[str, Any]) -> bool:
    """A person's message came after the open question and nothing has read it yet (Q2)."""
    pause = pause_of(state)
    messages = state.get("messages") or []
    if pause is None or awaiting(pause) != "reply" or not messages:
        return False
    return getattr(messages[-1], "type", None) == "human"


def message_kind(state: Mapping[str, Any], pause: Pause) -> NextMessageKind:
    """What the thread's last message does to the open ``pause`` (a clarification's only)."""
    messages = state.get("messages") or []
    if not isinstance(pause, Clarification) or not messages:
        return "reply"
    text = getattr(messages[-1], "text", "")
    return next_message_kind(str(text), pause.question, pause.choices)
