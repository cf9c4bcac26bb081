"""P1-P3: the streaming contract. Every custom-stream event is one of the exported types."""

from __future__ import annotations

from typing import Any, get_type_hints

import pytest
from langchain_core.messages import HumanMessage
from pydantic import TypeAdapter
from support import ScriptedCoordinator, graph_of, make_tool
from test_deep_fallback_rules import graph_with

import toolweave
from toolweave import (
    EVENT_VERSION,
    StreamEvent,
    SubtaskDecision,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    is_stream_event,
)
from toolweave.cli.render import progress_line
from toolweave.state.events import EVENT_TYPES


def _custom_events(graph: Any, text: str) -> list[Any]:
    return [
        data
        for mode, data in graph.stream(
            {"messages": [HumanMessage(text)]}, stream_mode=["custom", "values"]
        )
        if mode == "custom"
    ]


def _all_kinds_of_events() -> list[Any]:
    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [TaskInfo(task_no="", task_prompt="maybe t", conditional=True)]
        return task

    def progress(name: str, ctx: ToolCallContext) -> ToolResult:
        ctx.progress("FETCHING_DATA", "page 1")
        return ToolResult.as_context(name, [])

    coordinator = ScriptedCoordinator(
        "c", decompose, decide=lambda parent, nxt, done: SubtaskDecision.SKIP
    )
    locked = make_tool("locked", eligible=False)  # T4: a gates event
    graph = graph_of([coordinator, make_tool("t", result=progress), locked])
    events = _custom_events(graph, "t")
    deep = graph_with(("When does the cafeteria open?",), [])
    return events + _custom_events(deep, "q") + _sent_again_events()


def _sent_again_events() -> list[Any]:
    """A message sent again after its run acted (S5, Q6): its ``sent_again`` event."""
    from langgraph.checkpoint.memory import InMemorySaver
    from test_side_effects_once import QUESTION, OpenTicket

    from toolweave import build_graph
    from toolweave.testing import FunctionAssistant

    ticket = OpenTicket()
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name])
    graph = build_graph("desk", [ticket], assistant=assistant, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "events-sent-again"}}
    message = {"messages": [HumanMessage(QUESTION)]}
    graph.invoke(message, config)
    return [data for data in graph.stream(message, config, stream_mode="custom")]


@pytest.fixture(scope="module")
def events() -> list[Any]:
    return _all_kinds_of_events()


def test_P2_every_event_is_its_exported_type_with_version_1(events: list[Any]):
    assert {event["type"] for event in events} == set(EVENT_TYPES)
    for event in events:
        assert is_stream_event(event)
        declared = EVENT_TYPES[event["type"]]
        assert set(event) == set(get_type_hints(declared)), event["type"]
        TypeAdapter(declared).validate_python(event, strict=True)
        assert event["version"] == EVENT_VERSION == 1


def test_P2_the_event_types_are_the_public_streaming_contract():
    for declared in EVENT_TYPES.values():
        assert getattr(toolweave, declared.__name__) is declared
        assert declared.__name__ in toolweave.__all__
    adapter: TypeAdapter[StreamEvent] = TypeAdapter(StreamEvent)
    routed = adapter.validate_python(
        {"type": "routed", "version": 1, "task_no": "1", "tools": ["a"]}
    )
    assert routed["type"] == "routed"


@pytest.mark.parametrize("kind", sorted(EVENT_TYPES))
def test_P1_the_cli_renders_every_event_kind_in_words(kind: str, events: list[Any]):
    event = next(e for e in events if e["type"] == kind)
    line = progress_line(event)
    assert line is not None
    assert line != f"· {event.get('task_no') or '1'} {kind}", "a kind fell through to the default"


def test_L1_every_ledger_kind_has_its_words_in_the_cli():
    """The CLI's table keyed by ``LedgerKind`` is complete (``answer`` is worded apart)."""
    from toolweave import LedgerKind
    from toolweave.cli.render import LEDGER_LABELS

    assert set(LEDGER_LABELS) | {LedgerKind.ANSWER} == set(LedgerKind)
