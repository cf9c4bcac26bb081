"""The coordinator phase of one task as a pure function over ``TaskInfo`` (C1-C5, K2, M1, S1).

Nothing here knows about LangGraph state: the ``coordinate`` node flattens the
outcome into the task map. That keeps the rules testable on plain objects.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from langgraph.errors import GraphBubbleUp

from toolweave.coordinators.base import AgentCoordinator
from toolweave.state.task import TaskInfo, execution_text
from toolweave.state.tree import walk_nested
from toolweave.tools.registry import AnyTool

logger = logging.getLogger(__name__)

COORDINATOR_WRONG_RETURN = "decompose_into_subtasks returned {kind}, not a TaskInfo"


@dataclass
class PhaseOutcome:
    """What a coordinator phase did to a task."""

    task: TaskInfo
    """The task after the phase, subtasks nested, numbered and stamped."""
    ran: list[str] = field(default_factory=list)
    """Coordinators that ran, in order (C5: whether or not they changed anything)."""
    changed: list[str] = field(default_factory=list)
    """Coordinators whose call changed the task."""
    errors: dict[str, str] = field(default_factory=dict)
    """Coordinator name → error text, for those whose changes were rolled back (C4)."""
    created: dict[str, str] = field(default_factory=dict)
    """New subtask ``task_no`` → the coordinator that created it (K2)."""
    refused: dict[str, str] = field(default_factory=dict)
    """Subtask ``task_no`` → why it was not created (S1 depth or count limit)."""


def run_coordinator_phase(
    task: TaskInfo,
    coordinators: Sequence[AnyTool],
    *,
    depth: int,
    max_depth: int,
    room: int,
) -> PhaseOutcome:
    """Run ``coordinators`` on ``task`` one after another (C2) and stamp the result.

    ``task`` is the nested subtree of the task (existing subtasks included);
    ``depth`` its level below the root; ``room`` how many more tasks the tree
    may take (the count cap). Coordinators named in
    ``task.applied_coordinator_names`` are passed over (C3).
    """
    outcome = PhaseOutcome(task=task)
    owner_of: dict[int, str] = {}
    for coordinator in coordinators:
        if coordinator.name in outcome.task.applied_coordinator_names:
            continue
        _run_one(coordinator, outcome, owner_of)
    if outcome.ran:
        applied = list(dict.fromkeys([*outcome.task.applied_coordinator_names, *outcome.ran]))
        outcome.task.applied_coordinator_names = applied
        _stamp_new_subtasks(outcome, owner_of, applied, depth, max_depth, room)
    return outcome


def _run_one(coordinator: AnyTool, outcome: PhaseOutcome, owner_of: dict[int, str]) -> None:
    if not isinstance(coordinator, AgentCoordinator):
        return
    before = outcome.task.model_copy(deep=True)
    existing = {id(t) for t in walk_nested(outcome.task)}
    outcome.ran.append(coordinator.name)
    try:
        result = coordinator.decompose_into_subtasks(outcome.task)
    except GraphBubbleUp:
        raise
    except Exception as exc:  # C4: a failing coordinator is rolled back, not fatal
        logger.warning("coordinator %s raised; task restored", coordinator.name, exc_info=True)
        outcome.task = before
        outcome.errors[coordinator.name] = f"{type(exc).__name__}: {exc}"
        return
    if not isinstance(result, TaskInfo):
        outcome.task = before
        outcome.errors[coordinator.name] = COORDINATOR_WRONG_RETURN.format(
            kind=type(result).__name__
        )
        return
    outcome.task = result
    for sub in walk_nested(result):
        if id(sub) not in existing:
            owner_of[id(sub)] = coordinator.name
    if result != before:
        outcome.changed.append(coordinator.name)


def _stamp_new_subtasks(
    outcome: PhaseOutcome,
    owner_of: dict[int, str],
    applied: list[str],
    depth: int,
    max_depth: int,
    room: int,
) -> None:
    """Number, own (K2), contextualise (M1), stamp (C5) and limit (S1) the new subtasks."""
    used = {t.task_no for t in walk_nested(outcome.task) if id(t) not in owner_of}

    def visit(parent: TaskInfo, level: int) -> None:
        nonlocal room
        kept: list[TaskInfo] = []
        for index, sub in enumerate(parent.sub_tasks, start=1):
            if id(sub) not in owner_of:
                kept.append(sub)
                visit(sub, level + 1)
                continue
            sub.task_no = _unique_no(sub.task_no, parent.task_no, index, used)
            if level + 1 > max_depth or room <= 0:
                why = "depth" if level + 1 > max_depth else "count"
                outcome.refused[sub.task_no] = f"{why} limit"
                continue
            room -= 1
            used.add(sub.task_no)
            sub.owner_coordinator_name = owner_of[id(sub)]
            sub.prompt_context = execution_text(parent)
            sub.applied_coordinator_names = list(
                dict.fromkeys([*applied, *sub.applied_coordinator_names])
            )
            outcome.created[sub.task_no] = owner_of[id(sub)]
            kept.append(sub)
            visit(sub, level + 1)
        parent.sub_tasks = kept

    visit(outcome.task, depth)


def _unique_no(proposed: str, parent_no: str, index: int, used: set[str]) -> str:
    if proposed and proposed.startswith(f"{parent_no}.") and proposed not in used:
        return proposed
    candidate = f"{parent_no}.{index}"
    while candidate in used:
        index += 1
        candidate = f"{parent_no}.{index}"
    return candidate
