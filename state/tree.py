"""Conversions between the flat task map of the graph state and nested ``TaskInfo`` trees."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from toolweave.state.task import TaskInfo, TaskNode

TaskMap = Mapping[str, TaskNode]


def nested(tasks: TaskMap, task_no: str) -> TaskInfo:
    """The subtree under ``task_no`` as one nested ``TaskInfo`` (a fresh copy)."""
    node = tasks[task_no]
    sub_tasks = [nested(tasks, child) for child in node.children if child in tasks]
    return _fresh(node.task, sub_tasks)


def _fresh(task: TaskInfo, sub_tasks: list[TaskInfo]) -> TaskInfo:
    """A deep copy of ``task`` with ``sub_tasks``, without the memo walk and validation (PF1)."""
    copied = task.model_copy(update={"sub_tasks": sub_tasks})
    for name, value in vars(task).items():
        if name != "sub_tasks" and not isinstance(value, _IMMUTABLE):
            copied.__dict__[name] = _own(value)
    return copied


_IMMUTABLE = (str, int, float, type(None))  # shared by a copy (a bool is an int)


def _own(value: Any) -> Any:
    if type(value) is list and all(type(item) is str for item in value):
        return list(value)
    return copy.deepcopy(value)


def flat_copy(task: TaskInfo) -> TaskInfo:
    """``task`` without its subtasks, as the flat map stores it."""
    return task.model_copy(update={"sub_tasks": []}, deep=True)
