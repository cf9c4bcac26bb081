"""The ``routed`` stream event says what a person looks for: tools held back, and why.

New-user notes, fifth domain, item 12: a subtask that forces a gated tool showed
``routed: no tool`` with ``-v`` (its gate held the tool back, the line read as if
routing chose nothing, F4), and a tool that acts, routed on a verdict in doubt and
held back (A9), was not in the event at all. The event now names both (``refused``,
``held``: tool names only, X4), ``toolweave ask -v`` says them in words (P4 for the
developer lines), and an event written before the keys existed reads as before.
A neutral helpdesk domain, no LLM.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from cli_support import run
from langchain_core.messages import HumanMessage
from pydantic import TypeAdapter
from support import OpenTicket, ScriptedCoordinator, TicketProgress, graph_of, make_tool

from toolweave import (
    EVENT_VERSION,
    RoutedEvent,
    StreamEvent,
    TaskInfo,
    build_graph,
)
from toolweave.cli.render import progress_line
from toolweave.state.events import routed_event
from toolweave.testing import FunctionAssistant

REFUSED_LINE = (
    "· 1.1 routed: no tool; not run: renew_loans (forced, but held back by the gates, F4)"
)
"""The ``-v`` line of the subtask forcing the gated tool, without member data."""
REFUSED = routed_event("1.1", [], refused=["renew_loans"], held=["open_ticket"])
MEMBER_ID = "M-0042-9917"
"""User data a gate reads: never in an event (X4)."""


def _forcing(*subtasks: tuple[str, str]) -> ScriptedCoordinator:
    """A coordinator that splits task 1 into subtasks, each forcing one tool (F1)."""

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt=prompt, required_tool_names=[tool])
                for prompt, tool in subtasks
            ]
        return task

    return ScriptedCoordinator("visit_helper", decompose)


def _routed(graph: Any, question: str, **context: Any) -> dict[str, RoutedEvent]:
    """The ``routed`` events of one run, by task number."""
    config = {"configurable": {"thread_id": "t"}}
    message = {"messages": [HumanMessage(question)]}
    events = graph.stream(message, config, stream_mode="custom", context=context or None)
    return {e["task_no"]: e for e in events if e.get("type") == "routed"}


def _members_only(data: Any) -> bool:
    return bool(data and data.get("member_id"))


def _split_graph() -> Any:
    tools = [
        _forcing(("renew my loans", "renew_loans"), ("opening hours", "opening_hours")),
        make_tool("renew_loans", eligible=_members_only),
        make_tool("opening_hours"),
    ]
    return graph_of(tools)


def test_F4_the_routed_event_names_a_forced_tool_its_gate_refused() -> None:
    routed = _routed(_split_graph(), "renew my loans and tell me the opening hours")
    assert routed["1.1"]["tools"] == []
    assert routed["1.1"]["refused"] == ["renew_loans"]  # forced, the gate held it back
    assert routed["1.2"]["tools"] == ["opening_hours"]
    assert routed["1.2"]["refused"] == []
    assert routed["1.1"]["version"] == EVENT_VERSION  # keys added within the version


def test_F4_a_forced_tool_its_gate_lets_through_is_routed_not_refused() -> None:
    routed = _routed(_split_graph(), "renew my loans", user_data={"member_id": MEMBER_ID})
    assert routed["1.1"]["tools"] == ["renew_loans"]
    assert routed["1.1"]["refused"] == []


def _desk(route: list[str]) -> Any:
    assistant = FunctionAssistant(route=lambda text, tools: route)
    return build_graph("desk", [OpenTicket(), TicketProgress()], assistant=assistant)


def test_A9_the_routed_event_names_a_tool_that_acts_held_back_in_doubt() -> None:
    """The model says yes to the acting tool; its only word is shared: routed, not run."""
    routed = _routed(_desk(["open_ticket"]), "How fast are tickets answered?")
    assert routed["1"]["held"] == ["open_ticket"]
    assert "open_ticket" not in routed["1"]["tools"]


def test_A9_a_tool_that_acts_on_a_clear_request_runs_and_is_not_held() -> None:
    routed = _routed(_desk(["open_ticket"]), "Please open a ticket: the printer is jammed.")
    assert routed["1"]["tools"] == ["open_ticket"]
    assert routed["1"]["held"] == []


def test_X4_the_routed_event_carries_tool_names_never_the_user_data() -> None:
    routed = _routed(_split_graph(), "renew my loans", user_data={"member_id": MEMBER_ID})
    names = {"renew_loans", "opening_hours", "visit_helper"}
    for event in routed.values():
        assert set(event) == {"type", "version", "task_no", "tools", "refused", "held"}
        assert set(event["tools"] + event["refused"] + event["held"]) <= names
        assert MEMBER_ID not in json.dumps(event)


def test_P4_the_verbose_line_says_a_forced_tool_was_held_back_by_the_gates() -> None:
    line = progress_line(routed_event("1.1", [], refused=["renew_loans"]))
    assert line == REFUSED_LINE


def test_P4_the_verbose_line_says_a_tool_that_acts_was_routed_and_held_back_in_doubt() -> None:
    line = progress_line(routed_event("1", ["search"], held=["open_ticket"]))
    assert line == (
        "· 1 routed: search; not run: open_ticket "
        "(routed, but it acts and the verdict is in doubt, A9)"
    )


def test_P4_a_routed_event_written_before_the_new_keys_reads_as_before() -> None:
    """Backward compatible within version 1: the keys may be absent in older events."""
    adapter: TypeAdapter[StreamEvent] = TypeAdapter(StreamEvent)
    for event in ({"type": "routed", "version": 1, "task_no": "1", "tools": []}, REFUSED):
        assert adapter.validate_python(event) == event  # both are the same version's events
    assert progress_line({"type": "routed", "task_no": "1.1", "tools": []}) == (
        "· 1.1 routed: no tool"
    )
    assert progress_line(routed_event("1", ["a", "b"])) == "· 1 routed: a, b"


@pytest.fixture
def library(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``libr`` domain on the command line: a split question forcing a gated tool."""
    import toolweave.domains as domains
    from toolweave import Domain, Plugin

    def bundle() -> Any:
        tools = [
            _forcing(("renew my loans", "renew_loans"), ("opening hours", "opening_hours")),
            make_tool("renew_loans", domain="libr", eligible=_members_only),
            make_tool("opening_hours", domain="libr"),
        ]
        return Domain(name="libr"), tools

    class Point:
        name, value, dist = "libr", "libr_pkg:plugin", None

        def load(self) -> Plugin:
            return Plugin(name="libr", domains={"libr": bundle})

    monkeypatch.setattr(domains, "entry_points", lambda *, group: [Point()])
    monkeypatch.setenv("TOOLWEAVE_DOMAIN", "libr")


@pytest.mark.usefixtures("offline_cli", "library")
def test_F4_toolweave_ask_verbose_says_the_forced_tool_was_held_back_not_that_none_was_routed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "ask", "-v", "renew my loans and tell me the opening hours")
    assert code == 0, err
    (line,) = [line for line in out.splitlines() if line.startswith("· 1.1 routed")]
    assert line == REFUSED_LINE
    user_data = json.dumps({"member_id": MEMBER_ID})
    code, out, err = run(capsys, "ask", "-v", "--user-data", user_data, "renew my loans")
    assert code == 0, err
    assert "· 1.1 routed: renew_loans" in out
    assert "held back" not in out
    assert MEMBER_ID not in out + err
