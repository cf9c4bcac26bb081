"""The coordinator contract (C1, K1-K4), and coordinators that decide by extraction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeGuard, TypeVar

from pydantic import BaseModel, ValidationError

from toolweave.llm.offline_extract import extract_request, hinted
from toolweave.llm.port import DecompositionSchema, extract_decompositions_offline
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

    Subclass ``ChatbotTool`` (or a consumer) *and* this mixin; it runs in the coordinator
    phase of every task it is a candidate for, by ascending ``priority`` (C2), once (C3).
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


D = TypeVar("D", bound=BaseModel)


class DecomposingCoordinator(AgentCoordinator, Generic[D]):
    """A coordinator that decides from a structured extraction by the model (seed 001 §6.1).

    Declare ``decomposition_model`` and ``decomposition_instruction`` and implement
    :meth:`decompose_from`; the engine fills the model from the task prompt alone (M2).
    A failed extraction rolls back like a raising coordinator (C4).
    """

    decomposition_model: type[D]
    """The decomposition schema; give every field a default so "nothing found" validates."""
    decomposition_instruction: str = ""
    """What to fill, in words for the model (the fields' descriptions add to it)."""

    def decomposition_schema(self) -> DecompositionSchema:
        """What the coordinator phase asks the LLM port to fill for this coordinator."""
        name = str(getattr(self, "name", type(self).__name__))
        return DecompositionSchema(
            name=name, model=self.decomposition_model, instruction=self.decomposition_instruction
        )

    def may_apply(self, task_prompt: str) -> bool:
        """Whether ``task_prompt`` can concern this coordinator, before any model call (A10)."""
        return True

    def hints_found(self, task_prompt: str) -> bool:
        """Whether the text holds one of the schema's ``known_values``/``cues`` (none: ``True``)."""
        model = self.decomposition_model
        if not any(hinted(info.json_schema_extra) for info in model.model_fields.values()):
            return True
        filled = extract_request(task_prompt, model)
        try:
            empty = model.model_validate({}).model_dump(mode="json")
        except ValidationError:
            return True
        return filled is None or filled != empty

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        """Called directly (the engine calls :meth:`decompose_from`): fill offline, decompose."""
        values = extract_decompositions_offline(task.task_prompt, [self.decomposition_schema()])
        filled = values.values.get(self.decomposition_schema().name)
        if filled is None:
            return task
        return self.decompose_from(task, self.decomposition_model.model_validate(filled))

    def decompose_from(self, task: TaskInfo, decomposition: D) -> TaskInfo:
        """Return ``task`` unchanged if irrelevant, else mutate and return it (C1, M2)."""
        return task


def is_coordinator(tool: AnyTool | Any) -> TypeGuard[AgentCoordinator]:
    """Whether ``tool`` implements :class:`AgentCoordinator`."""
    return isinstance(tool, AgentCoordinator)
