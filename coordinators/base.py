"""The coordinator contract (C1, K1-K4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, ClassVar, TypeGuard

from toolweave.state.task import PromptAndContext, TaskInfo
from toolweave.tools.registry import AnyTool

CompletedSoFar = Mapping[str, Sequence[PromptAndContext]]
"""Completion keys ``"task_no:tool_name"`` of finished sibling subtasks → their results (K3)."""


class SubtaskDecision(StrEnum):
    """A coordinator's verdict on a conditional subtask (K3)."""

    RUN = "run"
    SKIP = "skip"


class AgentCoordinator:
    """Mixin for a ``ChatbotTool`` that splits tasks into subtasks (``IAgentCoordinator``).

    A coordinator is a tool as well: subclass ``ChatbotTool`` (or a consumer)
    *and* this mixin. It runs in the coordinator phase of every task it is a
    candidate for, in ascending ``priority`` (C2), at most once per task (C3).
    """

    decomposes: ClassVar[bool] = True
    """Whether it takes part in the coordinator phase; the deep-search coordinator,
    which the ``deep_fallback`` node plans for, does not."""

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        """Return ``task`` unchanged if irrelevant, else mutate and return the same instance (C1).

        Fill ``task.sub_tasks`` with self-contained ``TaskInfo`` objects; set
        ``required_tool_names`` to force tools (F1) and ``conditional`` for
        subtasks you decide about later (K1). Do not set
        ``owner_coordinator_name`` or ``prompt_context``: the orchestrator does (K2, M1).
        """
        return task

    def decide_conditional_subtask(
        self, parent_task: TaskInfo, next_subtask: TaskInfo, completed_so_far: CompletedSoFar
    ) -> SubtaskDecision:
        """Decide whether a conditional subtask runs, just before it would start (K3, K4)."""
        return SubtaskDecision.RUN


def is_coordinator(tool: AnyTool | Any) -> TypeGuard[AgentCoordinator]:
    """Whether ``tool`` implements :class:`AgentCoordinator`."""
    return isinstance(tool, AgentCoordinator)
