"""The ``decide_conditional`` node: the owner decides a conditional subtask (K3, K4)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import Runnable
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from toolweave.coordinators.base import AgentCoordinator, SubtaskDecision
from toolweave.graph.context import Dependencies, RunContext
from toolweave.graph.nodes import entry, make_pure_node
from toolweave.graph.route import routing_candidates
from toolweave.graph.walk import current_task_no
from toolweave.state.events import conditional_event
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerKind
from toolweave.state.task import PromptAndContext, TaskNode, TaskStatus

logger = logging.getLogger(__name__)


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
        if _in_any_subtree(key.rpartition(":")[0], finished)
    }


def _in_any_subtree(task_no: str, roots: Sequence[str]) -> bool:
    return any(task_no == root or task_no.startswith(f"{root}.") for root in roots)


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
