"""The ``coordinate`` node: the coordinator phase of one task (A3, C1-C5, K2, M1, S1)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from langgraph.runtime import Runtime
from langgraph.types import Command

from toolweave.coordinators.base import DecomposingCoordinator
from toolweave.coordinators.phase import PhaseOutcome, run_coordinator_phase
from toolweave.graph.context import Dependencies, RunContext, assistant_for
from toolweave.graph.handover import handover
from toolweave.graph.walk import Phase, next_step
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import TaskInfo, TaskNode, TaskStatus
from toolweave.state.tree import flat_copy, nested
from toolweave.tools.registry import AnyTool


def flatten(
    info: TaskInfo, tasks: Mapping[str, TaskNode], *, parent: str | None, depth: int
) -> dict[str, TaskNode]:
    """The nodes of a nested subtree, keeping the walk markers of tasks already stored."""
    out: dict[str, TaskNode] = {}
    children = [sub.task_no for sub in info.sub_tasks]
    known = tasks.get(info.task_no)
    if known is None:
        out[info.task_no] = TaskNode(
            task=flat_copy(info), parent=parent, children=children, depth=depth
        )
    else:
        out[info.task_no] = known.model_copy(update={"task": flat_copy(info), "children": children})
    for sub in info.sub_tasks:
        out.update(flatten(sub, tasks, parent=info.task_no, depth=depth + 1))
    return out


def phase_ledger(task_no: str, outcome: PhaseOutcome) -> list[LedgerEntry]:
    """Ledger entries for one coordinator phase (L1)."""
    entries: list[LedgerEntry] = []
    for name in outcome.ran:
        if name in outcome.errors:
            entries.append(
                LedgerEntry(
                    kind=LedgerKind.COORDINATOR_ERROR,
                    task_no=task_no,
                    tool=name,
                    verdict="rolled back",
                    reason=outcome.errors[name],
                )
            )
            continue
        created = [no for no, owner in outcome.created.items() if owner == name]
        verdict = "changed" if name in outcome.changed else "no change"
        reason = f"created {', '.join(created)}" if created else ""
        entries.append(
            LedgerEntry(
                kind=LedgerKind.COORDINATOR_RUN,
                task_no=task_no,
                tool=name,
                verdict=verdict,
                reason=reason,
            )
        )
    for no, why in outcome.refused.items():
        entries.append(
            LedgerEntry(
                kind=LedgerKind.SUBTASK_REFUSED,
                task_no=no,
                tool=outcome.refused_by.get(no),
                verdict="refused",
                reason=why,
                tools=tuple(outcome.refused_tools.get(no, ())),
            )
        )
    return entries


def make_coordinate(deps: Dependencies) -> Callable[..., Command[Phase]]:
    """Build the ``coordinate`` node over ``deps``."""

    def coordinate(state: GraphState, runtime: Runtime[RunContext]) -> Command[Phase]:
        """Run the coordinators not yet applied to the task, in ascending priority (C2, C3)."""
        tasks = state["tasks"]
        node = tasks[next_step(state).task_no]
        applied = node.task.applied_coordinator_names
        candidates: list[AnyTool] = [
            deps.registry[name] for name in state["coordinators"] if name not in applied
        ]
        if not candidates:
            done = node.model_copy(update={"status": TaskStatus.COORDINATED})
            return handover(state, {"tasks": {node.task_no: done}, "cursor": node.task_no})
        extracting = any(isinstance(c, DecomposingCoordinator) for c in candidates)
        outcome = run_coordinator_phase(
            nested(tasks, node.task_no),
            candidates,
            depth=node.depth,
            max_depth=deps.limits.max_depth,
            room=deps.limits.max_tasks - len(tasks),
            llm=assistant_for(deps, runtime) if extracting else None,
        )
        updates = flatten(outcome.task, tasks, parent=node.parent, depth=node.depth)
        updates[node.task_no] = updates[node.task_no].model_copy(
            update={"status": TaskStatus.COORDINATED}
        )
        runtime.stream_writer(
            {
                "type": "coordinated",
                "task_no": node.task_no,
                "coordinators": outcome.ran,
                "subtasks": list(outcome.created),
            }
        )
        return handover(
            state,
            {
                "tasks": updates,
                "cursor": node.task_no,
                "ledger": phase_ledger(node.task_no, outcome),
                "llm_calls": outcome.llm_calls,
            },
        )

    return coordinate
