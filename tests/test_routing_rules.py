"""S2/S3: LangGraph routes each step through the walk, on the state it stores; R1-R5 dispatch."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from support import ScriptedCoordinator, doc, graph_of, make_tool

import toolweave.graph.builder as builder_module
import toolweave.graph.walk as walk_module
from toolweave import ResultMode, SubtaskDecision, TaskInfo, ToolResult
from toolweave.graph.execute import record_result
from toolweave.graph.tool_call import Outcome
from toolweave.state.results import TERMINAL_MODES

NOT_COMPARED = {"messages"}
"""``add_messages`` gives id-less messages fresh ids each time it runs."""


def _decompose(task: TaskInfo) -> TaskInfo:
    if task.task_no == "1":
        task.sub_tasks = [
            TaskInfo(task_no="", task_prompt="plain t"),
            TaskInfo(task_no="", task_prompt="maybe t", conditional=True),
        ]
    return task


def test_S2_the_route_sees_exactly_the_state_langgraph_stores_after_each_step(monkeypatch):
    """The conditional edges route on the state LangGraph's reducers made, not a simulation."""
    views: list[dict[str, Any]] = []
    real = walk_module.next_phase

    def recording(state: Any) -> Any:
        views.append({key: state[key] for key in state if key not in NOT_COMPARED})
        return real(state)

    monkeypatch.setattr(builder_module, "next_phase", recording)
    coordinator = ScriptedCoordinator(
        "c", _decompose, decide=lambda parent, nxt, done: SubtaskDecision.RUN
    )
    answer = make_tool("stop", result=lambda name, ctx: ToolResult.as_answer(name, "done"))
    graph = graph_of([coordinator, make_tool("t"), answer], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "walk"}}
    graph.invoke({"messages": [HumanMessage("t and stop")]}, config)
    history = sorted(
        (s for s in graph.get_state_history(config) if s.metadata["source"] == "loop"),
        key=lambda s: s.metadata["step"],
    )
    stored = [{k: v for k, v in s.values.items() if k not in NOT_COMPARED} for s in history[1:]]
    assert len(views) >= 8
    for index, view in enumerate(views):
        assert view == {k: v for k, v in stored[index].items() if k in view}, index
        assert set(stored[index]) <= set(view), index


def test_S2_langgraph_routes_every_step_through_the_one_walk(monkeypatch):
    walks: list[int] = []
    real = walk_module.next_phase

    def counting(state: Any) -> Any:
        walks.append(1)
        return real(state)

    monkeypatch.setattr(builder_module, "next_phase", counting)
    graph = graph_of(
        [ScriptedCoordinator("c", _decompose), make_tool("t")], checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "count"}}
    graph.invoke({"messages": [HumanMessage("t")]}, config)
    steps = [
        s for s in graph.get_state_history(config) if s.metadata["source"] == "loop" and s.next
    ]
    # one route per node step that hands over: every checkpoint with a next node but START's
    assert len(walks) == len(steps) - 1
    # and the walk is one function, in one module (nodes and edges call it there)
    holders = {
        name
        for name, module in sys.modules.items()
        if name.startswith("toolweave.graph.")
        and getattr(module, "next_step", None) is walk_module.next_step
    }
    assert holders == {"toolweave.graph.walk"}


def test_S2_routes_are_untraced_the_entry_route_too():
    """The walk and the entry route run as LangGraph's own edges do: no callback run each.

    A traced route costs a run (callback manager, start and end events) on every
    request for a pure function; the phases and the model calls stay traced.
    """
    from langchain_core.callbacks import BaseCallbackHandler

    class Runs(BaseCallbackHandler):
        def __init__(self) -> None:
            self.names: list[str] = []

        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            self.names.append(str(kwargs.get("name")))

    runs = Runs()
    graph = graph_of([make_tool("t")], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "traced"}, "callbacks": [runs]}
    graph.invoke({"messages": [HumanMessage("t")]}, config)
    assert {"normalize", "route", "execute", "answer"} <= set(runs.names), runs.names
    assert not {"route_entry", "next_phase"} & set(runs.names), runs.names


@pytest.mark.parametrize("mode", list(ResultMode))
def test_R1_R5_every_result_mode_has_its_own_update(mode: ResultMode):
    """Exhaustive dispatch (match + assert_never): each mode, and terminal iff R3/R4."""
    result = ToolResult(tool_name="t", mode=mode, documents=(doc("d", "x"),), text="x")
    update = record_result("1:t", "q", Outcome(result=result))
    assert ("terminal" in update) == result.is_terminal == (mode in TERMINAL_MODES)
    expected_keys = {
        ResultMode.CONTEXT: {"context_buffer", "documents"},
        ResultMode.GUARANTEED_CONTEXT: {"context_buffer", "guaranteed"},
        ResultMode.ANSWER: {"context_buffer", "answer", "terminal"},
        ResultMode.ANSWERED: {"context_buffer", "answer", "answer_id", "terminal"},
        ResultMode.CLARIFICATION: set(),
    }
    assert set(expected_keys) == set(ResultMode)
    assert set(update) == expected_keys[mode]


class _Killed(BaseException):
    """What a killed process looks like from inside: nothing handles it."""


def test_Q5_abandoning_a_run_stopped_before_a_routed_phase_leaves_nothing_pending():
    """The abandoned phase's conditional edges must not schedule the step after it."""
    from toolweave import abandon_interrupted, thread_status
    from toolweave.graph.threads import ThreadStatusKind
    from toolweave.state.ledger import LedgerKind

    dying = {"on": True}

    def crash(name: str, ctx: Any) -> ToolResult:
        if dying["on"]:
            raise _Killed
        return ToolResult.as_context(name, [doc("t-doc", "t says hi")])

    graph = graph_of([make_tool("t", result=crash)], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "abandon-execute"}}
    with pytest.raises(_Killed):
        graph.invoke({"messages": [HumanMessage("t")]}, config)
    assert thread_status(graph, config).next == ("execute",)
    status = abandon_interrupted(graph, config)
    assert status.kind is ThreadStatusKind.FINISHED
    assert status.next == ()
    ledger = graph.get_state(config).values["ledger"]
    assert [e.details["next"] for e in ledger if e.kind is LedgerKind.RUN_ABANDONED] == ["execute"]
    dying["on"] = False
    out = graph.invoke({"messages": [HumanMessage("t again")]}, config)
    assert out["activated"] == ["1:t"]


def test_S2_studio_draws_exactly_the_walks_edges_as_conditional_edges():
    from toolweave.graph.walk import NEXT_PHASES

    drawn = graph_of([make_tool("t")]).get_graph()
    conditional = {(e.source, e.target) for e in drawn.edges if e.conditional}
    expected = {(source, target) for source, targets in NEXT_PHASES.items() for target in targets}
    assert conditional == expected | {("__start__", "normalize"), ("__start__", "take_reply")}
