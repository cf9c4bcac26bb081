"""C1-C6, K1-K4, S1-S4, F1-F4: coordinators and the task tree, as exact activation orders."""

from __future__ import annotations

from typing import Any

from support import Calls, ScriptedCoordinator, ask, graph_of, make_tool

from toolweave import SubtaskDecision, TaskInfo, ToolResult
from toolweave.coordinators.phase import PhaseOutcome, coordinator_phase
from toolweave.testing import FunctionAssistant
from toolweave.tools.effects import drive


def run_coordinator_phase(task: TaskInfo, coordinators: list[Any], **at: Any) -> PhaseOutcome:
    return drive(coordinator_phase(task, coordinators, **at))


def sub(prompt: str, *tools: str, conditional: bool = False, no: str = "") -> TaskInfo:
    return TaskInfo(
        task_no=no, task_prompt=prompt, required_tool_names=list(tools), conditional=conditional
    )


def split_into(*subs: TaskInfo) -> Any:
    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [s.model_copy(deep=True) for s in subs]
        return task

    return decompose


def test_C1_coordinator_mutates_the_same_task_and_may_extend_the_prompt():
    def decompose(task: TaskInfo) -> TaskInfo:
        task.task_prompt += " (in Budapest)"
        return task

    routed: list[str] = []
    assistant = FunctionAssistant(route=lambda text, tools: (routed.append(text), [])[1])
    tools = [ScriptedCoordinator("c", decompose), make_tool("weather")]
    out = ask(graph_of(tools, assistant=assistant), "weather")
    assert routed == ["weather (in Budapest)"]
    assert out["task"].applied_coordinator_names == ["c"]


def test_C2_coordinators_run_in_priority_order_each_on_the_previous_output():
    seen: list[str] = []

    def first(task: TaskInfo) -> TaskInfo:
        task.task_prompt += " +first"
        return task

    def second(task: TaskInfo) -> TaskInfo:
        seen.append(task.task_prompt)
        task.sub_tasks = [sub("from second", "leaf")]
        return task

    tools = [
        ScriptedCoordinator("second", second, priority=20),
        ScriptedCoordinator("first", first, priority=10),
        make_tool("leaf"),
    ]
    out = ask(graph_of(tools), "q")
    assert seen == ["q +first"]
    assert out["activated"] == ["1.1:leaf"]


def test_C5_applied_names_are_stamped_on_task_and_every_new_subtask():
    log: list[str] = []
    nested_child = TaskInfo(task_no="", task_prompt="child", sub_tasks=[sub("grandchild", "leaf")])
    tools = [
        ScriptedCoordinator("outer", split_into(nested_child), calls=log, priority=1),
        ScriptedCoordinator("noop", lambda t: t, calls=log, priority=2),
        make_tool("leaf"),
    ]
    out = ask(graph_of(tools), "q")
    assert log == ["outer@1", "noop@1"]  # neither reruns on 1.1 or 1.1.1
    child = out["task"].sub_tasks[0]
    assert out["task"].applied_coordinator_names == ["outer", "noop"]
    assert child.applied_coordinator_names == ["outer", "noop"]
    assert child.sub_tasks[0].applied_coordinator_names == ["outer", "noop"]
    assert out["activated"] == ["1.1.1:leaf"]


def test_C3_applied_coordinator_never_reruns_while_a_new_one_runs_on_task_and_descendant():
    log: list[str] = []
    outer = ScriptedCoordinator("outer", lambda t: t, calls=log, priority=1)
    late = ScriptedCoordinator("late", lambda t: t, calls=log, priority=2)
    child = TaskInfo(task_no="1.1", task_prompt="c", applied_coordinator_names=["outer"])
    root = TaskInfo(
        task_no="1", task_prompt="r", applied_coordinator_names=["outer"], sub_tasks=[child]
    )
    outcome = run_coordinator_phase(root, [outer, late], depth=0, max_depth=4, room=10)
    assert outcome.ran == ["late"]
    assert outcome.task.applied_coordinator_names == ["outer", "late"]
    outcome = run_coordinator_phase(child, [outer, late], depth=1, max_depth=4, room=10)
    assert log == ["late@1", "late@1.1"]


def test_C4_coordinator_error_restores_task_and_next_coordinator_runs():
    def breaks(task: TaskInfo) -> TaskInfo:
        task.task_prompt = "CORRUPTED"
        task.sub_tasks = [sub("half-made", "leaf")]
        raise RuntimeError("coordinator bug")

    calls: Calls = []
    tools = [
        ScriptedCoordinator("broken", breaks, priority=1),
        ScriptedCoordinator("good", split_into(sub("good child", "leaf")), priority=2),
        make_tool("leaf", calls=calls),
    ]
    out = ask(graph_of(tools), "original")
    assert out["task"].task_prompt == "original"
    assert [s.task_prompt for s in out["task"].sub_tasks] == ["good child"]
    assert out["activated"] == ["1.1:leaf"]
    errors = [e for e in out["ledger"] if e.kind == "coordinator_error"]
    assert errors[0].tool == "broken"
    assert "coordinator bug" in errors[0].reason


def test_C6_K2_M1_subtask_ids_owner_and_prompt_context_set_by_orchestrator():
    bad = sub("child", "leaf")
    bad.owner_coordinator_name = "someone else"
    out = ask(
        graph_of(
            [ScriptedCoordinator("c", split_into(bad, sub("child2", "leaf"))), make_tool("leaf")]
        ),
        "parent text",
    )
    children = out["task"].sub_tasks
    assert [c.task_no for c in children] == ["1.1", "1.2"]
    assert {c.owner_coordinator_name for c in children} == {"c"}
    assert {c.prompt_context for c in children} == {"parent text"}


def test_S1_depth_limit_refuses_deeper_subtasks_and_the_run_goes_on():
    def chain(task: TaskInfo) -> TaskInfo:
        node = task
        for _ in range(6):
            child = sub(f"below {node.task_no}", "leaf")
            node.sub_tasks = [child]
            node = child
        return task

    out = ask(graph_of([ScriptedCoordinator("c", chain), make_tool("leaf")], max_depth=2), "q")
    assert out["activated"] == ["1.1.1:leaf", "1.1:leaf"]
    refused = [e for e in out["ledger"] if e.kind == "subtask_refused"]
    assert [e.task_no for e in refused] == ["1.1.1.1"]


def test_S1_task_count_cap_is_never_exceeded():
    many = [sub(f"s{i}", "leaf") for i in range(10)]
    out = ask(
        graph_of([ScriptedCoordinator("c", split_into(*many)), make_tool("leaf")], max_tasks=4), "q"
    )
    assert out["activated"] == ["1.1:leaf", "1.2:leaf", "1.3:leaf"]


def test_S2_S4_three_level_tree_children_first_in_list_order_results_reach_parent():
    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(
                    task_no="",
                    task_prompt="a",
                    required_tool_names=["leaf"],
                    sub_tasks=[sub("a1", "leaf"), sub("a2", "leaf")],
                ),
                sub("b", "leaf"),
            ]
        return task

    tools = [ScriptedCoordinator("c", decompose), make_tool("leaf"), make_tool("parent_tool")]
    out = ask(
        graph_of(
            tools,
            assistant=FunctionAssistant(route=lambda t, ts: ["parent_tool"] if t == "q" else []),
        ),
        "q",
    )
    assert out["activated"] == ["1.1.1:leaf", "1.1.2:leaf", "1.1:leaf", "1.2:leaf", "1:parent_tool"]
    assert list(out["context_buffer"])[:4] == ["1.1.1:leaf", "1.1.2:leaf", "1.1:leaf", "1.2:leaf"]


def test_S3_terminal_answer_in_a_subtask_stops_the_walk():
    calls: Calls = []
    tools = [
        ScriptedCoordinator("c", split_into(sub("a", "final"), sub("b", "leaf"))),
        make_tool("final", calls=calls, result=lambda n, c: ToolResult.as_answer(n, "done")),
        make_tool("leaf", calls=calls),
    ]
    out = ask(graph_of(tools), "q")
    assert calls == [("1.1", "final")]
    assert out["answer"] == "done"


def test_F1_F2_forced_tools_are_the_whole_activation_no_routing_no_retrieval():
    from toolweave import Domain, build_graph

    routed: list[str] = []
    domain = Domain(name="test", default_retrieval_tool="rag")
    tools = [
        ScriptedCoordinator("c", split_into(sub("forced child", "leaf"))),
        make_tool("leaf"),
        make_tool("rag", routing=None),
    ]
    assistant = FunctionAssistant(route=lambda t, ts: (routed.append(t), [])[1])
    out = ask(build_graph(domain, tools, assistant=assistant), "q")
    # the forced child made no routing call (F1); nor did the root, whose only candidate
    # ran on 1.1 (S5): no call is made with nothing to route (A10)
    assert routed == []
    assert out["activated"] == ["1.1:leaf", "1:rag"]


def test_F3_plain_and_prefixed_names_resolve_unknown_names_are_logged_and_skipped():
    tools = [
        ScriptedCoordinator(
            "c", split_into(sub("a", "leaf"), sub("b", "test.leaf"), sub("c", "nope", "leaf"))
        ),
        make_tool("leaf", domain="test"),
    ]
    out = ask(graph_of(tools), "q")
    assert out["activated"] == ["1.1:leaf", "1.2:leaf", "1.3:leaf"]
    unknown = [e for e in out["ledger"] if e.kind == "forced_unknown"]
    assert [(e.task_no, e.tool) for e in unknown] == [("1.3", "nope")]


def test_F4_forced_tool_still_passes_the_gates():
    tools = [
        ScriptedCoordinator("c", split_into(sub("a", "vip_only", "leaf"))),
        make_tool("vip_only", eligible=False),
        make_tool("leaf"),
    ]
    out = ask(graph_of(tools), "q")
    assert out["activated"] == ["1.1:leaf"]
    assert any(
        e.kind == "forced" and e.verdict == "refused" and e.tool == "vip_only"
        for e in out["ledger"]
    )


def _cheap_then_expensive(decide: Any) -> list[Any]:
    return [
        ScriptedCoordinator(
            "c",
            split_into(sub("narrow", "narrow"), sub("broad", "broad", conditional=True)),
            decide=decide,
        ),
        make_tool(
            "narrow",
            result=lambda n, c: (
                None if "miss" in c.text else ToolResult.as_guaranteed_context(n, "found")
            ),
        ),
        make_tool("broad"),
    ]


def _skip_if_found(parent: TaskInfo, nxt: TaskInfo, done: Any) -> SubtaskDecision:
    return SubtaskDecision.SKIP if "1.1:narrow" in done else SubtaskDecision.RUN


def test_K3_conditional_subtask_skipped_when_earlier_sibling_found_it():
    out = ask(graph_of(_cheap_then_expensive(_skip_if_found)), "hit")
    assert out["activated"] == ["1.1:narrow"]
    decision = next(e for e in out["ledger"] if e.kind == "conditional")
    assert decision.verdict == "skip"
    assert "1.1:narrow" in decision.reason


def test_K3_conditional_subtask_runs_when_earlier_sibling_found_nothing():
    seen: list[dict[str, Any]] = []

    def decide(parent: TaskInfo, nxt: TaskInfo, done: Any) -> SubtaskDecision:
        seen.append({"parent": parent.task_no, "next": nxt.task_no, "keys": sorted(done)})
        return _skip_if_found(parent, nxt, done)

    out = ask(graph_of(_cheap_then_expensive(decide)), "miss")
    assert out["activated"] == ["1.2:broad"]  # narrow found nothing: not activated (R1)
    assert seen == [{"parent": "1", "next": "1.2", "keys": []}]


def test_K4_decision_that_raises_runs_the_subtask_default_is_run():
    def boom(*_: Any) -> SubtaskDecision:
        raise ValueError("bad decision")

    out = ask(graph_of(_cheap_then_expensive(boom)), "hit")
    assert out["activated"] == ["1.1:narrow", "1.2:broad"]
    out = ask(graph_of(_cheap_then_expensive(None)), "hit")
    assert out["activated"] == ["1.1:narrow", "1.2:broad"]


def test_T1_F3_forced_prefixed_names_resolve_only_to_the_tool_of_that_domain():
    tools = [
        ScriptedCoordinator(
            "c",
            split_into(
                sub("a", "math.factorial"), sub("b", "a.b.factorial"), sub("c", "test.scoped")
            ),
        ),
        make_tool("factorial"),  # domain-less: "math.factorial" is not this tool
        make_tool("scoped", domain="test"),
    ]
    out = ask(graph_of(tools), "q")
    assert out["activated"] == ["1.3:scoped"]
    unknown = [(e.task_no, e.tool) for e in out["ledger"] if e.kind == "forced_unknown"]
    assert unknown == [("1.1", "math.factorial"), ("1.2", "a.b.factorial")]


def _first_plan(task: TaskInfo) -> TaskInfo:
    if task.task_no == "1":
        task.sub_tasks = [sub("from first", "leaf", conditional=True, no="1.1")]
    return task


def _replacing_plan(task: TaskInfo) -> TaskInfo:
    if task.task_no == "1":
        task.sub_tasks = []  # the first coordinator's subtask is freed here ...
        task.sub_tasks = [  # ... and replaced, reusing its number
            sub("from second", "leaf", conditional=True, no="1.1"),
            sub("also from second", "leaf", conditional=True),
        ]
    return task


def test_K2_owner_by_task_no_a_replacing_coordinator_owns_its_subtasks():
    coordinators = [
        ScriptedCoordinator("first", _first_plan, priority=10),
        ScriptedCoordinator("second", _replacing_plan, priority=20),
    ]
    for _ in range(50):  # freed objects' ids are reused: identity would name "first" here
        outcome = run_coordinator_phase(
            TaskInfo(task_no="1", task_prompt="q"), coordinators, depth=0, max_depth=4, room=10
        )
        subs = outcome.task.sub_tasks
        assert [(s.task_no, s.task_prompt) for s in subs] == [
            ("1.1", "from second"),
            ("1.2", "also from second"),
        ]
        assert [s.owner_coordinator_name for s in subs] == ["second", "second"]
        assert outcome.created == {"1.1": "second", "1.2": "second"}


def test_K2_owner_by_task_no_untouched_and_copied_subtasks_keep_their_owner():
    def extend(task: TaskInfo) -> TaskInfo:
        copy = task.model_copy(deep=True)  # a copy of the first one's subtask is still it
        copy.sub_tasks.append(sub("added by second", "leaf"))
        return copy

    outcome = run_coordinator_phase(
        TaskInfo(task_no="1", task_prompt="q"),
        [
            ScriptedCoordinator("first", _first_plan),
            ScriptedCoordinator("second", extend, priority=20),
        ],
        depth=0,
        max_depth=4,
        room=10,
    )
    assert outcome.created == {"1.1": "first", "1.2": "second"}


def test_K2_owner_by_task_no_the_replacing_coordinator_decides_the_conditional():
    decided: list[str] = []

    def decide_as(name: str, decision: SubtaskDecision) -> Any:
        def decide(parent: TaskInfo, nxt: TaskInfo, done: Any) -> SubtaskDecision:
            decided.append(f"{name}@{nxt.task_no}")
            return decision

        return decide

    tools = [
        ScriptedCoordinator("first", _first_plan, decide=decide_as("first", SubtaskDecision.RUN)),
        ScriptedCoordinator(
            "second", _replacing_plan, priority=20, decide=decide_as("second", SubtaskDecision.SKIP)
        ),
        make_tool("leaf", routing=None),
    ]
    out = ask(graph_of(tools), "q")
    assert decided == ["second@1.1", "second@1.2"]
    assert out["activated"] == []
