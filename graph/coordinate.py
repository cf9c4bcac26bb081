"""The ``coordinate`` node: the coordinator phase of one task (A3, C1-C5, K2, M1, S1)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from toolweave.coordinators.base import DecomposingCoordinator
from toolweave.coordinators.phase import PhaseOutcome, coordinator_phase
from toolweave.graph.context import Dependencies, RunContext, assistant_for
from toolweave.graph.nodes import Steps, entry, make_node
from toolweave.graph.walk import current_task_no
from toolweave.state.events import coordinated_event
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


NOT_APPLICABLE = "nothing in the task it applies to: no model call (A10)"
DETAIL_CHARS = 200
"""Longest text of one decomposition field in a ledger entry."""


def phase_ledger(task_no: str, outcome: PhaseOutcome) -> list[LedgerEntry]:
    """Ledger entries for one coordinator phase (L1)."""
    entries: list[LedgerEntry] = []
    for name in outcome.ran:
        if name in outcome.errors:
            error = outcome.errors[name]
            entries.append(entry(task_no, name, LedgerKind.COORDINATOR_ERROR, "rolled back", error))
            continue
        created = [no for no, owner in outcome.created.items() if owner == name]
        verdict = "changed" if name in outcome.changed else "no change"
        details = {  # the decomposition's fields: why the coordinator split or did not (L1)
            key: json.dumps(value, ensure_ascii=False)[:DETAIL_CHARS]
            for key, value in outcome.decompositions.get(name, {}).items()
        }
        reasons = [f"created {', '.join(created)}"] if created else []
        if name in outcome.not_applicable:
            reasons.append(NOT_APPLICABLE)
        if details:
            reasons.append("from " + ", ".join(f"{k}={v}" for k, v in details.items()))
        reason = "; ".join(reasons)
        ran = entry(task_no, name, LedgerKind.COORDINATOR_RUN, verdict, reason, details=details)
        entries.append(ran)
    for no, why in outcome.refused.items():
        tools = tuple(outcome.refused_tools.get(no, ()))
        by = outcome.refused_by.get(no)
        entries.append(entry(no, by, LedgerKind.SUBTASK_REFUSED, "refused", why, tools=tools))
    return entries


def make_coordinate(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``coordinate`` node over ``deps``."""

    def coordinate(state: GraphState, runtime: Runtime[RunContext]) -> Steps[dict[str, Any]]:
        """Run the coordinators not yet applied to the task, in ascending priority (C2, C3)."""
        tasks = state["tasks"]
        node = tasks[current_task_no(state)]
        applied = node.task.applied_coordinator_names
        candidates: list[AnyTool] = [
            deps.registry[name] for name in state["message"].coordinators if name not in applied
        ]
        if not candidates:
            done = node.model_copy(update={"status": TaskStatus.COORDINATED})
            return {"tasks": {node.task_no: done}}
        extracting = any(isinstance(c, DecomposingCoordinator) for c in candidates)
        llm = assistant_for(deps, runtime) if extracting else None
        outcome = yield from coordinator_phase(
            nested(tasks, node.task_no),
            candidates,
            depth=node.depth,
            max_depth=deps.limits.max_depth,
            room=deps.limits.max_tasks - len(tasks),
            llm=llm,
        )
        updates = flatten(outcome.task, tasks, parent=node.parent, depth=node.depth)
        updates[node.task_no] = updates[node.task_no].model_copy(
            update={"status": TaskStatus.COORDINATED}
        )
        runtime.stream_writer(
            coordinated_event(
                node.task_no, outcome.ran, list(outcome.created), changed=outcome.changed
            )
        )
        return {
            "tasks": updates,
            "ledger": phase_ledger(node.task_no, outcome),
            "llm_calls": outcome.llm_calls,
        }

    return make_node("coordinate", coordinate)
