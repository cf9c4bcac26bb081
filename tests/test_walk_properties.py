"""S2 (and K3) as properties over random trees: each non-skipped task runs exactly once,
children before their parent, siblings in list order."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import Calls, ScriptedCoordinator, ask, graph_of, make_tool

from toolweave import SubtaskDecision, TaskInfo

Shape = list[Any]  # each element: (skip: bool, children: Shape)

shapes: st.SearchStrategy[Shape] = st.recursive(
    st.just([]),
    lambda inner: st.lists(st.tuples(st.booleans(), inner), max_size=3),
    max_leaves=12,
)


def _build(shape: Shape, prefix: str) -> list[TaskInfo]:
    subs = []
    for index, (skip, children) in enumerate(shape, start=1):
        no = f"{prefix}.{index}"
        subs.append(
            TaskInfo(
                task_no=no,
                task_prompt=f"skip {no}" if skip else no,
                required_tool_names=["leaf"],
                conditional=skip,
                sub_tasks=_build(children, no),
            )
        )
    return subs


def _expected(shape: Shape, prefix: str) -> list[str]:
    order: list[str] = []
    for index, (skip, children) in enumerate(shape, start=1):
        no = f"{prefix}.{index}"
        if skip:
            continue
        order += _expected(children, no)
        order.append(no)
    return order


def _coordinator_of(shape: Shape) -> ScriptedCoordinator:
    """Splits the root into ``shape``; skips the subtasks whose prompt starts with "skip"."""

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = _build(shape, "1")
        return task

    def decide(parent: TaskInfo, nxt: TaskInfo, done: Any) -> SubtaskDecision:
        return SubtaskDecision.SKIP if nxt.task_prompt.startswith("skip") else SubtaskDecision.RUN

    return ScriptedCoordinator("c", decompose, decide=decide)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes)
def test_S2_random_trees_run_each_task_once_children_first_siblings_in_order(shape: Shape):
    calls: Calls = []
    tools = [_coordinator_of(shape), make_tool("leaf", calls=calls)]
    out = ask(graph_of(tools, max_tasks=64, max_depth=12), "root")
    expected = _expected(shape, "1")
    assert [no for no, _ in calls] == expected
    assert out["activated"] == [f"{no}:leaf" for no in expected]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=shapes)
def test_S2_every_hand_over_is_an_edge_studio_draws(shape: Shape):
    from toolweave.graph.walk import NEXT_PHASES

    tools = [_coordinator_of(shape), make_tool("leaf")]
    graph = graph_of(tools, max_tasks=64, max_depth=12)
    nodes = [next(iter(update)) for update in graph.stream({"messages": [("human", "root")]})]
    for source, target in itertools.pairwise(nodes):
        allowed = NEXT_PHASES.get(source, ())
        assert target in allowed, f"{source} -> {target} is not drawn"
