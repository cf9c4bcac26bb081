"""The task tree: ``TaskInfo`` as coordinators see it, ``TaskNode`` as the graph stores it."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolweave.state.documents import UniqueTextDocument
from toolweave.state.marker import AGENT_COORDINATOR_MARKER

ROOT_TASK_NO = "1"


class TaskInfo(BaseModel):
    """One task of the tree (SPEC §1): nested for coordinators (C1), flat in the state."""

    model_config = ConfigDict(validate_assignment=True)

    task_no: str
    """Id in the tree: ``"1"`` for the root, ``"1.2"`` for its second subtask (C6)."""
    task_prompt: str
    """Self-contained text of the task; routing and decomposition see only this (M2)."""
    important_words: list[str] = Field(default_factory=list)
    """Key words found by normalization (A1)."""
    prompt_type: str | None = None
    """Kind of question decided by normalization, e.g. ``"factual"`` (D2)."""
    sub_tasks: list[TaskInfo] = Field(default_factory=list)
    """Subtasks, processed in list order before this task's own routing (S2)."""
    required_tool_names: list[str] = Field(default_factory=list)
    """When not empty, exactly these tools run and no routing call is made (F1)."""
    applied_coordinator_names: list[str] = Field(default_factory=list)
    """Coordinators that already ran on this task or an ancestor (C3, C5)."""
    conditional: bool = False
    """Whether the owner decides just before the start if this subtask runs (K1)."""
    owner_coordinator_name: str | None = None
    """The coordinator that created this subtask, set by the orchestrator (K2)."""
    prompt_context: str | None = None
    """The parent's execution text, set when the subtask is created (M1)."""


class PromptAndContext(BaseModel):
    """One context buffer entry: the execution text a tool saw and what it produced (B1)."""

    model_config = ConfigDict(frozen=True)

    prompt: str
    """The execution text of the task the tool ran on (M3)."""
    context: str
    """The text the tool's result contributed."""
    documents: tuple[UniqueTextDocument, ...] = ()
    """The documents behind ``context``, when the result had any."""


class TaskStatus(StrEnum):
    """Where a task is in its life (the per-task phase marker of the walk)."""

    PENDING = "pending"  # not yet coordinated
    COORDINATED = "coordinated"  # coordinator phase done; subtasks (if any) are next, then routing
    ROUTED = "routed"  # activation decided; ``queue`` holds the tools still to run
    CLOSED = "closed"  # every activated tool ran, or a terminal result ended it
    SKIPPED = "skipped"  # a conditional subtask its owner decided to skip (K3)


class TaskNode(BaseModel):
    """One task as stored in the graph state's flat ``tasks`` map."""

    task: TaskInfo  # the task's own fields; ``task.sub_tasks`` is always empty here
    parent: str | None = None  # ``task_no`` of the parent, ``None`` for the root
    # ``task_no`` of the subtasks, in processing order (S2)
    children: list[str] = Field(default_factory=list)
    depth: int = 0  # levels below the root (the root is 0)
    status: TaskStatus = TaskStatus.PENDING  # phase marker of the walk
    decided: bool = False  # for conditional subtasks: the owner's decision has been taken (K3)
    # tools activated on the task and not yet run, in ascending priority (A6)
    queue: list[str] = Field(default_factory=list)
    # requests extracted while routing (fused call), keyed by tool name (T7)
    requests: dict[str, dict[str, Any] | None] = Field(default_factory=dict)
    # tools whose yes was in doubt (A9): they run after the retrieval, as context only
    as_context: list[str] = Field(default_factory=list)
    # words the routing call gave for searching the documents, in their language (D9)
    search_words: str = ""

    @property
    def task_no(self) -> str:
        """Shortcut for ``task.task_no``."""
        return self.task.task_no

    @property
    def done(self) -> bool:
        """True once the task needs no more work."""
        return self.status in (TaskStatus.CLOSED, TaskStatus.SKIPPED)


def completion_key(task_no: str, tool_name: str) -> str:
    """The context buffer key ``"<task_no>:<tool_name>"`` (B1, K3)."""
    return f"{task_no}:{tool_name}"


def tool_of_key(key: str) -> str:
    """The tool name of a :func:`completion_key` (``"1.2:search"`` -> ``"search"``)."""
    return key.rpartition(":")[2]


def execution_text(task: TaskInfo) -> str:
    """A tool's execution text (M3): the prompt context, the marker, the task prompt."""
    if task.prompt_context is None:
        return task.task_prompt
    return f"{task.prompt_context}{AGENT_COORDINATOR_MARKER}{task.task_prompt}"
