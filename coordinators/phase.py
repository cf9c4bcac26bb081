"""The coordinator phase of one task as a pure function over ``TaskInfo`` (C1-C5, K2, M1, S1)."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict, Unpack

from toolweave.coordinators.base import AgentCoordinator, DecomposingCoordinator
from toolweave.llm.errors import RunDeadlineError
from toolweave.llm.port import (
    Decompositions,
    DecompositionSchema,
    LlmAssistant,
    Tools,
    extract_decompositions_offline,
)
from toolweave.state.task import TaskInfo, execution_text
from toolweave.state.tree import flat_copy
from toolweave.tools.effects import Steps
from toolweave.tools.registry import AnyTool

logger = logging.getLogger(__name__)

COORDINATOR_WRONG_RETURN = "decompose_into_subtasks returned {kind}, not a TaskInfo"
NO_DECOMPOSITION = "the model gave no valid decomposition"


Path = tuple[int, ...]  # a subtask's child indices from the phase's task


@dataclass
class PhaseOutcome:
    """What a coordinator phase did to a task."""

    task: TaskInfo  # after the phase: subtasks nested, numbered and stamped
    ran: list[str] = field(default_factory=list)  # in order, changed or not (C5)
    changed: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # rolled back (C4)
    created: dict[str, str] = field(default_factory=dict)  # new task_no -> its coordinator (K2)
    refused: dict[str, str] = field(default_factory=dict)  # task_no -> which S1 limit
    refused_by: dict[str, str] = field(default_factory=dict)  # task_no -> proposer (L1)
    refused_tools: dict[str, list[str]] = field(default_factory=dict)  # its forced tools (L1)
    llm_calls: int = 0
    decompositions: dict[str, dict[str, Any]] = field(default_factory=dict)  # as JSON (L1)
    not_applicable: list[str] = field(default_factory=list)  # may_apply said no (A10)


class PhaseLimits(TypedDict):
    """Where the phase's task stands in the tree, and how much more the tree may take (S1)."""

    depth: int  # the task's level below the root
    max_depth: int  # the deepest level a subtask may have
    room: int  # how many more tasks the tree may take


def coordinator_phase(
    task: TaskInfo,
    coordinators: Tools,
    *,
    llm: LlmAssistant | None = None,
    **at: Unpack[PhaseLimits],
) -> Steps[PhaseOutcome]:
    """Run ``coordinators`` on ``task`` in turn (C2-C4); new subtasks numbered, owned (K2, C6)."""
    outcome = PhaseOutcome(task=task)
    owners: dict[str, str] = {}
    filled = _Filled()
    pending = [c for c in coordinators if c.name not in task.applied_coordinator_names]
    for index, coordinator in enumerate(pending):
        if coordinator.name in outcome.task.applied_coordinator_names:
            continue
        decomposition: _Decomposition | None = None
        if isinstance(coordinator, DecomposingCoordinator):
            prompt = outcome.task.task_prompt
            if not coordinator.may_apply(prompt):  # A10: no call for what cannot apply
                outcome.ran.append(coordinator.name)
                outcome.not_applicable.append(coordinator.name)
                continue
            if not filled.covers(coordinator.name, prompt):
                yield from _fill_steps(llm, outcome, filled, pending[index:], coordinator.name)
            decomposition = filled.value(coordinator)
            if isinstance(decomposition, BaseModel):
                outcome.decompositions[coordinator.name] = decomposition.model_dump(mode="json")
        _run_one(coordinator, outcome, owners, decomposition)
    if outcome.ran:
        applied = list(dict.fromkeys([*outcome.task.applied_coordinator_names, *outcome.ran]))
        outcome.task.applied_coordinator_names = applied
        _stamp_new_subtasks(outcome, owners, applied, at)
    return outcome


def _fill_steps(
    llm: LlmAssistant | None, outcome: PhaseOutcome, filled: _Filled, later: Tools, name: str
) -> Steps[None]:
    """One extraction for ``later``'s applying decomposing coordinators; a failure is kept (C4)."""
    prompt = outcome.task.task_prompt
    applying = [c for c in later if isinstance(c, DecomposingCoordinator) and c.may_apply(prompt)]
    schemas = tuple(c.decomposition_schema() for c in applying)
    try:  # one call through the port (C1, M2); with no model, offline
        if llm is None:
            reply = extract_decompositions_offline(prompt, schemas)
        else:
            reply = yield from llm.extract_decompositions_steps(prompt, schemas)
    except (GraphBubbleUp, RunDeadlineError):
        raise
    except Exception as exc:  # C4: a failing extraction rolls back like a raise
        logger.warning("decomposition for %s failed", name, exc_info=True)
        filled.keep(prompt, schemas, _Failed(f"{type(exc).__name__}: {exc}"))
    else:
        filled.keep(prompt, schemas, reply)
        outcome.llm_calls += reply.llm_calls


def _subtasks(task: TaskInfo, path: Path = ()) -> Iterator[tuple[Path, TaskInfo]]:
    """Every subtask below ``task`` (not ``task`` itself) with its path, depth first."""
    for index, sub in enumerate(task.sub_tasks):
        yield (*path, index), sub
        yield from _subtasks(sub, (*path, index))


def _values(task: TaskInfo) -> dict[str, TaskInfo]:
    """``task_no`` → the subtask's own fields (without its subtasks), first one per number."""
    values: dict[str, TaskInfo] = {}
    for _, sub in _subtasks(task):
        values.setdefault(sub.task_no, flat_copy(sub))
    return values


class _Filled:
    """The decompositions the phase got, keyed by coordinator, with the prompt they read."""

    def __init__(self) -> None:
        self.values: dict[str, tuple[str, dict[str, Any] | _Failed | None]] = {}

    def covers(self, name: str, task_prompt: str) -> bool:
        return name in self.values and self.values[name][0] == task_prompt

    def keep(
        self, prompt: str, schemas: Sequence[DecompositionSchema], reply: Decompositions | _Failed
    ) -> None:
        for schema in schemas:
            got = reply if isinstance(reply, _Failed) else reply.values.get(schema.name)
            self.values[schema.name] = (prompt, got)

    def value(self, coordinator: DecomposingCoordinator[Any]) -> _Decomposition:
        """The validated decomposition, or why there is none."""
        got = self.values[coordinator.decomposition_schema().name][1]
        if isinstance(got, _Failed):
            return got
        if got is None:
            return _Failed(NO_DECOMPOSITION)
        try:
            validated: BaseModel = coordinator.decomposition_model.model_validate(got)
        except ValidationError as exc:
            return _Failed(f"{NO_DECOMPOSITION}: {exc.error_count()} invalid field(s)")
        return validated


@dataclass(frozen=True)
class _Failed:
    """Why a decomposing coordinator got no decomposition (C4)."""

    error: str


_Decomposition = BaseModel | _Failed


def _run_one(
    coordinator: AnyTool, outcome: PhaseOutcome, owners: dict[str, str], got: _Decomposition | None
) -> None:
    if not isinstance(coordinator, AgentCoordinator):
        return
    outcome.ran.append(coordinator.name)
    if isinstance(got, _Failed):  # C4: nothing to decompose from; task untouched
        outcome.errors[coordinator.name] = got.error
        return
    before = outcome.task.model_copy(deep=True)
    known = _values(outcome.task)
    try:
        if isinstance(coordinator, DecomposingCoordinator) and got is not None:
            result: object = coordinator.decompose_from(outcome.task, got)
        else:
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
    if result != before:
        outcome.changed.append(coordinator.name)
    new = _number_new_subtasks(result, known)
    present = {sub.task_no for _, sub in _subtasks(result)}
    for no in [no for no in owners if no not in present]:
        del owners[no]
    for no in new:
        owners[no] = coordinator.name


def _number_new_subtasks(task: TaskInfo, known: dict[str, TaskInfo]) -> list[str]:
    """Find the subtasks not in ``known`` (by value), give them unique numbers, return those."""
    claimed: set[str] = set()
    new_paths: set[Path] = set()
    for path, sub in _subtasks(task):
        if sub.task_no not in claimed and known.get(sub.task_no) == flat_copy(sub):
            claimed.add(sub.task_no)
        else:
            new_paths.add(path)
    used = {task.task_no, *claimed}
    numbered: list[str] = []

    def visit(parent: TaskInfo, path: Path) -> None:
        for index, sub in enumerate(parent.sub_tasks):
            here = (*path, index)
            if here in new_paths:
                sub.task_no = _unique_no(sub.task_no, parent.task_no, index + 1, used)
                used.add(sub.task_no)
                numbered.append(sub.task_no)
            visit(sub, here)

    visit(task, ())
    return numbered


def _stamp_new_subtasks(
    outcome: PhaseOutcome, owners: dict[str, str], applied: list[str], at: PhaseLimits
) -> None:
    """Own (K2), contextualise (M1), stamp (C5) and limit (S1) the new subtasks."""
    max_depth, room = at["max_depth"], at["room"]

    def visit(parent: TaskInfo, level: int) -> None:
        nonlocal room
        kept: list[TaskInfo] = []
        for sub in parent.sub_tasks:
            owner = owners.get(sub.task_no)
            if owner is None:
                kept.append(sub)
                visit(sub, level + 1)
                continue
            if level + 1 > max_depth or room <= 0:
                why = "depth" if level + 1 > max_depth else "count"
                outcome.refused[sub.task_no] = f"{why} limit"
                outcome.refused_by[sub.task_no] = owner
                outcome.refused_tools[sub.task_no] = list(sub.required_tool_names)
                continue
            room -= 1
            sub.owner_coordinator_name = owner
            sub.prompt_context = execution_text(parent)
            sub.applied_coordinator_names = list(
                dict.fromkeys([*applied, *sub.applied_coordinator_names])
            )
            outcome.created[sub.task_no] = owner
            kept.append(sub)
            visit(sub, level + 1)
        parent.sub_tasks = kept

    visit(outcome.task, at["depth"])


def _unique_no(proposed: str, parent_no: str, index: int, used: set[str]) -> str:
    if proposed and proposed.startswith(f"{parent_no}.") and proposed not in used:
        return proposed
    candidate = f"{parent_no}.{index}"
    while candidate in used:
        index += 1
        candidate = f"{parent_no}.{index}"
    return candidate
