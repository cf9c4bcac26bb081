"""Conversions between the flat task map of the graph state and nested ``TaskInfo`` trees."""

from __future__ import annotations

from collections.abc import Mapping

from toolweave.state.task import TaskInfo, TaskNode

TaskMap = Mapping[str, TaskNode]


def nested(tasks: TaskMap, task_no: str) -> TaskInfo:
    """The subtree under ``task_no`` as one nested ``TaskInfo`` (a fresh copy)."""
    node = tasks[task_no]
    info = node.task.model_copy(deep=True)
    info.sub_tasks = [nested(tasks, child) for child in node.children if child in tasks]
    return info


def flat_copy(task: TaskInfo) -> TaskInfo:
    """``task`` without its subtasks, as the flat map stores it."""
    return task.model_copy(update={"sub_tasks": []}, deep=True)
