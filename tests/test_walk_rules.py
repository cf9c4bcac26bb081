"""A3, A4, F2, K1, K2, S4, T8, X3: the order of phases and the bounds of the walk."""

from __future__ import annotations

from typing import Any

from support import RecordingConsumer, ScriptedCoordinator, ask, graph_of, make_tool

from toolweave import Domain, Limits, SubtaskDecision, TaskInfo, build_graph
from toolweave.testing import FunctionAssistant


def test_A3_coordinator_phase_runs_before_the_tasks_routing():
    events: list[str] = []
    coordinator = ScriptedCoordinator("c", lambda t: events.append(f"coordinate {t.task_no}"))
    assistant = FunctionAssistant(route=lambda text, tools: events.append(f"route {text}") or [])
    ask(graph_of([coordinator, make_tool("t")], assistant=assistant), "q")
    assert events == ["coordinate 1", "route q"]


def test_A4_subtasks_finish_before_the_parent_is_routed():
    events: list[str] = []

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [TaskInfo(task_no="", task_prompt="child")]
        return task

    def route(text: str, tools: Any) -> list[str]:
        events.append(f"route {text}")
        return ["leaf" if text == "child" else "top"]

    leaf = make_tool("leaf", calls=None, result=lambda n, c: events.append(f"run {c.task_no}"))
    top = make_tool("top", calls=None, result=lambda n, c: events.append(f"run {c.task_no}"))
    ask(
        graph_of(
            [ScriptedCoordinator("c", decompose), leaf, top],
            assistant=FunctionAssistant(route=route),
        ),
        "parent",
    )
    assert events == ["route child", "run 1.1", "route parent", "run 1"]


def test_F2_forcing_is_exclusive_the_default_retrieval_does_not_run_beside():
    def decompose(task: TaskInfo) -> TaskInfo:
        task.required_tool_names = ["leaf"]
        return task

    domain = Domain(name="test", default_retrieval_tool="rag")
    tools = [
        ScriptedCoordinator("c", decompose),
        make_tool("leaf"),
        make_tool("rag", routing=None),
        make_tool("other"),
    ]
    out = ask(
        build_graph(domain, tools, assistant=FunctionAssistant(route=lambda t, ts: ["other"])), "q"
    )
    assert out["activated"] == ["1:leaf"]


def test_K1_only_subtasks_marked_conditional_are_put_to_their_owner():
    asked: list[str] = []

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt="plain", required_tool_names=["t"]),
                TaskInfo(
                    task_no="", task_prompt="maybe", required_tool_names=["t"], conditional=True
                ),
            ]
        return task

    def decide(parent: TaskInfo, nxt: TaskInfo, done: Any) -> SubtaskDecision:
        asked.append(nxt.task_no)
        return SubtaskDecision.SKIP

    out = ask(graph_of([ScriptedCoordinator("c", decompose, decide=decide), make_tool("t")]), "q")
    assert asked == ["1.2"]
    assert out["activated"] == ["1.1:t"]


def test_K2_owner_is_the_coordinator_that_created_the_subtask():
    def first(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [TaskInfo(task_no="", task_prompt="a", required_tool_names=["t"])]
        return task

    def second(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks.append(
                TaskInfo(
                    task_no="",
                    task_prompt="b",
                    required_tool_names=["t"],
                    owner_coordinator_name="forged",
                )
            )
        return task

    out = ask(
        graph_of(
            [
                ScriptedCoordinator("first", first, priority=1),
                ScriptedCoordinator("second", second, priority=2),
                make_tool("t"),
            ]
        ),
        "q",
    )
    owners = {s.task_prompt: s.owner_coordinator_name for s in out["task"].sub_tasks}
    assert owners == {"a": "first", "b": "second"}


def test_S4_subtask_results_reach_the_parents_consumer_under_the_subtasks_task_no():
    consumer = RecordingConsumer()

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [TaskInfo(task_no="", task_prompt="s", required_tool_names=["a"])]
            task.required_tool_names = ["a", "consumer"]
        return task

    tools = [ScriptedCoordinator("c", decompose), make_tool("a", priority=1), consumer]
    ask(graph_of(tools), "q")
    assert consumer.seen == [{"1.1:a": ["a says hi"], "1:a": ["a says hi"]}]


def test_T8_supplement_joins_the_answer_prompt_only_when_its_tool_ran():
    prompts: list[str] = []
    assistant = FunctionAssistant(
        route=lambda t, ts: ["ran"] if "ran" in t else [],
        answer=lambda r: (prompts.append(r.system_prompt), "")[1],
    )
    tools = [make_tool("ran", supplement="RAN"), make_tool("idle", supplement="IDLE")]
    graph = build_graph(Domain(name="test", system_prompt="BASE"), tools, assistant=assistant)
    ask(graph, "ran please")
    ask(graph, "nothing")
    assert prompts == ["BASE\n\nRAN", "BASE"]


def test_X3_a_coordinator_asking_for_a_huge_tree_still_ends_within_the_limits():
    def tree(prompt: str, depth: int) -> TaskInfo:
        children = [tree(f"{prompt}.{i}", depth - 1) for i in range(3)] if depth else []
        return TaskInfo(
            task_no="", task_prompt=prompt, required_tool_names=["t"], sub_tasks=children
        )

    def huge(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [tree(str(i), 6) for i in range(3)]  # 3,279 tasks asked for
        return task

    limits = Limits(max_depth=3, max_tasks=20)
    graph = graph_of([ScriptedCoordinator("huge", huge), make_tool("t")], limits=limits)
    out = ask(graph, "q")
    assert len(out["activated"]) == limits.max_tasks - 1  # every task but the root ran "t"
    assert max(key.split(":")[0].count(".") for key in out["activated"]) == limits.max_depth
    assert any(e.kind == "subtask_refused" and e.reason == "count limit" for e in out["ledger"])
    assert graph.config["recursion_limit"] == limits.recursion_limit
