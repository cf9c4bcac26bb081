"""The ``coordinate`` and ``decide_conditional`` nodes (A3, C1-C5, K2-K4, M1, S1)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import Runnable
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from toolweave.coordinators.base import AgentCoordinator, DecomposingCoordinator, SubtaskDecision
from toolweave.coordinators.phase import PhaseOutcome, coordinator_phase
from toolweave.graph.context import Dependencies, RunContext, assistant_for
from toolweave.graph.nodes import Steps, entry, make_node, make_pure_node
from toolweave.graph.route import routing_candidates
from toolweave.graph.walk import current_task_no
from toolweave.state.events import conditional_event, coordinated_event
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import PromptAndContext, TaskInfo, TaskNode, TaskStatus
from toolweave.state.tree import flat_copy, nested
from toolweave.tools.registry import AnyTool

logger = logging.getLogger(__name__)


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


def completed_siblings(
    tasks: Mapping[str, TaskNode], buffer: Mapping[str, list[PromptAndContext]], subtask: TaskNode
) -> dict[str, list[PromptAndContext]]:
    """K3: buffer entries of the finished siblings before ``subtask`` and of their subtrees."""
    if subtask.parent is None:
        return {}
    finished: list[str] = []
    for sibling in tasks[subtask.parent].children:
        if sibling == subtask.task_no:
            break
        if tasks[sibling].status is TaskStatus.CLOSED:
            finished.append(sibling)
    return {
        key: list(entries)
        for key, entries in buffer.items()
        if any(f"{key.rpartition(':')[0]}.".startswith(f"{root}.") for root in finished)
    }


def _would_run(deps: Dependencies, subtask: TaskNode, offered: set[str]) -> tuple[str, ...]:
    """The tools the subtask runs unless skipped: forced, else candidates and retrieval (L1)."""
    if subtask.task.required_tool_names:
        return tuple(subtask.task.required_tool_names)
    names = [tool.name for tool in routing_candidates(deps, offered)]
    retrieval = deps.domain.default_retrieval_tool
    if retrieval is not None and retrieval in offered:
        names.append(retrieval)
    return tuple(names)


def make_decide_conditional(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``decide_conditional`` node over ``deps``."""

    def decide_conditional(state: GraphState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Ask the owner whether the next conditional subtask runs; RUN on error (K4)."""
        tasks = state["tasks"]
        subtask = tasks[current_task_no(state)]
        completed = completed_siblings(tasks, state["context_buffer"], subtask)
        owner_name = subtask.task.owner_coordinator_name
        owner = deps.registry.get(owner_name) if owner_name else None
        decision, reason = SubtaskDecision.RUN, "no owner coordinator: runs by default"
        if isinstance(owner, AgentCoordinator):
            parent = tasks[subtask.parent] if subtask.parent else subtask
            try:
                decision = SubtaskDecision(
                    owner.decide_conditional_subtask(parent.task, subtask.task, completed)
                )
                reason = f"{owner_name} decided; saw {sorted(completed) or 'no results'}"
            except GraphBubbleUp:
                raise
            except Exception as exc:  # K4: a failing decision runs the subtask
                logger.warning("decide_conditional_subtask of %s raised", owner_name, exc_info=True)
                decision, reason = SubtaskDecision.RUN, f"decision raised {type(exc).__name__}"
        status = TaskStatus.SKIPPED if decision is SubtaskDecision.SKIP else subtask.status
        updated = subtask.model_copy(update={"decided": True, "status": status})
        runtime.stream_writer(conditional_event(subtask.task_no, decision.value))
        tools = _would_run(deps, subtask, set(state["message"].offered))
        said = entry(
            subtask, owner_name, LedgerKind.CONDITIONAL, decision.value, reason, tools=tools
        )
        return {"tasks": {subtask.task_no: updated}, "ledger": [said]}

    return make_pure_node("decide_conditional", decide_conditional)
