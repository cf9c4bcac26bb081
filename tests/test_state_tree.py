"""C1: the nested tree a coordinator mutates in place is a copy of the flat task map's."""

from __future__ import annotations

from toolweave.state.task import TaskInfo, TaskNode
from toolweave.state.tree import nested


def _tasks() -> dict[str, TaskNode]:
    root = TaskInfo(task_no="1", task_prompt="two things?", important_words=["things"])
    child = TaskInfo(
        task_no="1.1", task_prompt="one thing?", required_tool_names=["a"], conditional=True
    )
    return {
        "1": TaskNode(task=root, children=["1.1", "1.9"]),  # 1.9: not in the map
        "1.1": TaskNode(task=child, depth=1),
    }


def test_C1_the_nested_tree_holds_every_task_of_the_map_under_its_parent():
    tree = nested(_tasks(), "1")
    assert [t.task_no for t in tree.sub_tasks] == ["1.1"]
    assert tree.sub_tasks[0].required_tool_names == ["a"]
    assert tree.sub_tasks[0].conditional is True
    unchanged = _tasks()["1"].task.model_dump(exclude={"sub_tasks"})
    assert tree.model_dump(exclude={"sub_tasks"}) == unchanged


def test_C1_mutating_the_nested_tree_in_place_leaves_the_task_map_as_it_was():
    tasks = _tasks()
    before = {no: node.task.model_dump() for no, node in tasks.items()}
    tree = nested(tasks, "1")
    tree.important_words.append("more")
    tree.applied_coordinator_names.append("splitter")
    tree.sub_tasks[0].required_tool_names.append("b")
    tree.sub_tasks.append(TaskInfo(task_no="1.2", task_prompt="new"))
    assert {no: node.task.model_dump() for no, node in tasks.items()} == before
