"""The deep-search coordinator (D2-D7): a neighbour and a full search per missing piece."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from toolweave.coordinators.base import AgentCoordinator, CompletedSoFar, SubtaskDecision
from toolweave.state.marker import extract_coordinator_task
from toolweave.state.results import ToolResult
from toolweave.state.task import TaskInfo
from toolweave.tools.base import ALL, EligibleSystem, EmptyRequest, PriorContext, ToolCallContext
from toolweave.tools.consumers import ContextConsumerTool


class DeepSearchCoordinator(ContextConsumerTool[EmptyRequest], AgentCoordinator):
    """Configure one per domain: ``Domain(deep_fallback=lambda prompt_type: coordinator)``.

    Set :attr:`search_tool` to the domain's ``ContextSearchTool`` and, optionally,
    :attr:`neighbor_search_tool` to its ``NeighborPageSearchTool``.
    """

    name: ClassVar[str] = "deep_search"
    executable_instruction: ClassVar[str | None] = None
    decomposes: ClassVar[bool] = False
    eligible_system: ClassVar[EligibleSystem] = ALL  # T3: the documents, whatever the filter
    search_tool: ClassVar[str] = "context_search"
    """The full search, forced on the conditional subtask of every missing piece (D3)."""
    neighbor_search_tool: ClassVar[str | None] = "neighbor_search"
    """The neighbor-page search, forced first (D6); ``None`` to go straight to the full search."""

    def plan_subtasks(
        self,
        root: TaskInfo,
        missing: Sequence[str],
        rewrites: Mapping[str, Sequence[str]] | None = None,
    ) -> list[TaskInfo]:
        """D3: per missing piece, a neighbor and a conditional full search, by its rewrites (D8)."""
        subtasks: list[TaskInfo] = []
        neighbours = self.neighbor_search_tool
        steps = [(neighbours, False)] if neighbours is not None else []
        steps.append((self.search_tool, neighbours is not None))
        for piece in missing:
            words = list((rewrites or {}).get(piece, ()))
            subtasks += [
                TaskInfo(task_no="", task_prompt=piece, important_words=words,
                         required_tool_names=[tool], conditional=conditional)
                for tool, conditional in steps
            ]  # fmt: skip
        return subtasks

    def decide_conditional_subtask(
        self, parent_task: TaskInfo, next_subtask: TaskInfo, completed_so_far: CompletedSoFar
    ) -> SubtaskDecision:
        """K3: skip the full search when the neighbor search found something new for the piece."""
        suffix, piece = f":{self.neighbor_search_tool}", next_subtask.task_prompt
        neighbours = [
            e for key, got in completed_so_far.items() if key.endswith(suffix) for e in got
        ]
        found = any(
            e.context.strip() for e in neighbours if extract_coordinator_task(e.prompt) == piece
        )
        return SubtaskDecision.SKIP if found else SubtaskDecision.RUN

    def execute_with_prior_context(
        self, request: EmptyRequest, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        """B4: nothing to add (R1): the subtasks' guaranteed context reaches the answer (R5)."""
        return None
