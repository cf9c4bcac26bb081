"""T4, N3 and X5 where a new user meets them first: the run context, a refusal, a reply.

- The run context (``graph.invoke(..., context=...)``) takes :class:`RunContext`'s keys
  only: a misspelt key, a ``user_data`` that is no mapping, or the context put in the
  config is a typed error raised before anything is stored (X5), not a run without the
  person's data.
- A gate's refusal is named to the developer (the ledger and a ``gates`` stream event,
  L1, P2) and never says why (X4); the answer does not claim the person lacks access
  (T4: the refused tool is invisible to the routing, so nothing knows it was the one).
- A run that takes a clarification reply checks the gates again with the user data it
  was given: the tool that asked does not continue for a reply without the data.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import graph_of, make_tool

from toolweave import (
    ClarifiableTool,
    EmptyRequest,
    InvalidContextError,
    InvalidRequestError,
    RunContext,
    ToolCallContext,
    ToolResult,
    ToolweaveError,
)
from toolweave.cli.render import progress_line
from toolweave.state.ledger import LedgerKind
from toolweave.testing import FunctionAssistant

MEMBER_NO = "N-4471-0932"
QUESTION = "Please reserve a slot for me"


class ReserveSlot(ClarifiableTool[EmptyRequest]):
    """Members only (T4); asks which slot, then reserves it."""

    name = "reserve_slot"
    executable_instruction = "reserve_slot: true when the user wants to reserve a slot"
    request_model = EmptyRequest

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def is_eligible(self, user_data: Mapping[str, Any] | None) -> bool:
        self.calls.append("gate")
        return bool(user_data and user_data.get("member_no"))

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.calls.append("ask")
        return ToolResult.clarification(self.name, "Which slot?", ["morning", "evening"])

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        self.calls.append(f"reserve:{reply}:{(ctx.user_data or {}).get('member_no')}")
        return ToolResult.as_answer(self.name, f"Reserved the {reply} slot.")


def _graph(calls: list[str], saver: InMemorySaver) -> Any:
    route = FunctionAssistant(route=lambda task, tools: [t.name for t in tools])
    return graph_of([ReserveSlot(calls)], assistant=route, checkpointer=saver)


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _ask(text: str = QUESTION) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


MEMBER = RunContext(user_data={"member_no": MEMBER_NO})


# N3, X5: the run context


@pytest.mark.parametrize("use_async", [False, True])
def test_N3_X5_an_unknown_run_context_key_is_a_typed_error_and_nothing_is_stored(
    use_async: bool,
) -> None:
    calls: list[str] = []
    saver = InMemorySaver()
    graph = _graph(calls, saver)
    misspelt = {"user_dat": {"member_no": MEMBER_NO}}

    def run() -> Any:
        if use_async:
            return asyncio.run(graph.ainvoke(_ask(), _config("typo"), context=misspelt))
        return graph.invoke(_ask(), _config("typo"), context=misspelt)

    with pytest.raises(InvalidContextError) as raised:
        run()
    message = str(raised.value)
    assert "'user_dat'" in message
    assert "did you mean 'user_data'?" in message
    assert "assistant, user_data, secret_keys, client_tools" in message
    assert MEMBER_NO not in message  # the data itself is never echoed (X4)
    assert isinstance(raised.value, ToolweaveError)
    assert isinstance(raised.value, InvalidRequestError)
    assert isinstance(raised.value, TypeError)  # what LangGraph's own coercion raised
    assert list(saver.list(_config("typo"))) == []
    assert calls == []


def test_N3_X5_a_paused_thread_stays_answerable_after_a_misspelt_context() -> None:
    calls: list[str] = []
    saver = InMemorySaver()
    graph = _graph(calls, saver)
    graph.invoke(_ask(), _config("paused"), context=MEMBER)
    before = [c.checkpoint["id"] for c in saver.list(_config("paused"))]
    with pytest.raises(InvalidContextError):
        graph.invoke(Command(resume="1"), _config("paused"), context={"userdata": {}})
    assert [c.checkpoint["id"] for c in saver.list(_config("paused"))] == before
    out = graph.invoke(Command(resume="1"), _config("paused"), context=MEMBER)
    assert out["messages"][-1].content == "Reserved the morning slot."


def test_N3_X5_a_run_context_put_in_the_config_is_a_typed_error() -> None:
    calls: list[str] = []
    saver = InMemorySaver()
    graph = _graph(calls, saver)
    config = {**_config("in-config"), "context": {"user_data": {"member_no": MEMBER_NO}}}
    with pytest.raises(InvalidContextError, match=r"context=RunContext\(\.\.\.\)"):
        graph.invoke(_ask(), config)
    with pytest.raises(InvalidContextError, match="LangGraph never reads it"):
        graph.with_config(context={"user_data": {}}).invoke(_ask(), _config("in-config"))
    assert list(saver.list(_config("in-config"))) == []


@pytest.mark.parametrize(
    "context",
    [{"user_data": MEMBER_NO}, RunContext(user_data=MEMBER_NO), ["user_data"]],  # type: ignore[arg-type]
    ids=["mapping", "run-context", "list"],
)
def test_N3_X5_a_run_context_the_gates_cannot_read_is_a_typed_error(context: Any) -> None:
    saver = InMemorySaver()
    graph = _graph([], saver)
    with pytest.raises(InvalidContextError, match=r"RunContext|'user_data' must be a mapping"):
        graph.invoke(_ask(), _config("bad"), context=context)
    assert list(saver.list(_config("bad"))) == []


def test_N3_the_run_contexts_own_keys_as_a_mapping_reach_the_gate() -> None:
    calls: list[str] = []
    graph = _graph(calls, InMemorySaver())
    context = {"user_data": {"member_no": MEMBER_NO}, "secret_keys": ["member_no"]}
    out = graph.invoke(_ask(), _config("mapping"), context=context)
    assert out["__interrupt__"][0].value["question"] == "Which slot?"
    assert calls == ["gate", "ask"]


# T4, L1, X4: a refusal is named to the developer, never why


def test_T4_L1_a_refused_tool_is_named_in_a_gates_event_and_the_answer_claims_nothing() -> None:
    calls: list[str] = []
    graph = _graph(calls, InMemorySaver())
    context = RunContext(user_data={"visitor": MEMBER_NO})
    chunks = list(
        graph.stream(_ask(), _config("refused"), context=context, stream_mode=["custom", "values"])
    )
    events = [data for mode, data in chunks if mode == "custom" and data.get("type") == "gates"]
    assert events == [
        {
            "type": "gates",
            "version": 1,
            "task_no": "1",
            "refused": ["reserve_slot"],
            "rechecked": False,
        }
    ]
    assert MEMBER_NO not in repr(events)
    line = "· 1 not offered: reserve_slot (is_eligible refused the user data, T4)"
    assert progress_line(events[0]) == line
    final = next(data for mode, data in reversed(chunks) if mode == "values")
    gate = [e for e in final["ledger"] if e.kind is LedgerKind.GATE]
    assert [(e.tool, e.verdict) for e in gate] == [("reserve_slot", "refused: eligibility")]
    answer = final["messages"][-1].content
    assert "reserve_slot" not in answer
    assert "member" not in answer.lower()  # T4: no claim about access, nor what was missing
    assert calls == ["gate"]


# T4, Q2: the gates again on the run that takes the reply


def _reply(graph: Any, thread: str, how: str, context: Any) -> dict[str, Any]:
    kwargs = {} if context is None else {"context": context}
    if how == "resume":
        return dict(graph.invoke(Command(resume="2"), _config(thread), **kwargs))
    if how == "message-resume":  # a server holding the next message behind the interrupt
        resume = Command(resume={"type": "message", "content": "2"})
        return dict(graph.invoke(resume, _config(thread), **kwargs))
    return dict(graph.invoke(_ask("2"), _config(thread), **kwargs))


@pytest.mark.parametrize("how", ["resume", "message-resume", "next-message"])
@pytest.mark.parametrize(
    "context",
    [None, RunContext(user_data={"visitor": "yes"})],
    ids=["without-user-data", "user-data-that-fails"],
)
def test_T4_Q2_a_reply_the_gate_refuses_does_not_continue_the_tool_that_asked(
    how: str, context: Any
) -> None:
    calls: list[str] = []
    saver = InMemorySaver()
    graph = _graph(calls, saver)
    first = graph.invoke(_ask(), _config(how), context=MEMBER)
    assert first["__interrupt__"][0].value["question"] == "Which slot?"
    out = _reply(graph, how, how, context)
    assert calls == ["gate", "ask", "gate"]  # checked again; no "reserve:..."
    assert "__interrupt__" not in out
    assert "Reserved" not in out["messages"][-1].content
    ledger = out["ledger"]
    gate = [e for e in ledger if e.kind is LedgerKind.GATE]
    assert [(e.tool, e.verdict) for e in gate] == [("reserve_slot", "refused: eligibility")]
    assert "checked again" in gate[0].reason
    skipped = [e for e in ledger if e.kind is LedgerKind.TOOL_SKIPPED]
    assert [(e.tool, e.verdict) for e in skipped] == [("reserve_slot", "not run")]
    state = graph.get_state(_config(how))
    assert state.next == ()
    assert state.values.get("pause") is None
    stored = "".join(repr(c.checkpoint) + repr(c.pending_writes) for c in saver.list(_config(how)))
    assert MEMBER_NO not in stored  # the run context is never checkpointed (X4)


@pytest.mark.parametrize("how", ["resume", "message-resume", "next-message"])
def test_T4_Q2_a_reply_with_user_data_the_gate_passes_continues_the_tool(how: str) -> None:
    calls: list[str] = []
    graph = _graph(calls, InMemorySaver())
    graph.invoke(_ask(), _config(how), context=MEMBER)
    out = _reply(graph, how, how, MEMBER)
    assert out["messages"][-1].content == "Reserved the evening slot."
    assert calls == ["gate", "ask", "gate", f"reserve:evening:{MEMBER_NO}"]  # one gate a run
    assert not [e for e in out["ledger"] if e.kind is LedgerKind.GATE]


def test_T4_Q2_the_gates_event_says_they_were_checked_again_on_the_reply() -> None:
    graph = _graph([], InMemorySaver())
    graph.invoke(_ask(), _config("event"), context=MEMBER)
    chunks = list(graph.stream(Command(resume="2"), _config("event"), stream_mode="custom"))
    events = [c for c in chunks if c.get("type") == "gates"]
    assert [(e["refused"], e["rechecked"]) for e in events] == [(["reserve_slot"], True)]
    assert progress_line(events[0]) == (
        "· 1 not offered, checked again on the reply: reserve_slot "
        "(is_eligible refused the user data, T4)"
    )


def test_T4_a_tool_keeping_the_default_gate_is_not_checked_again_on_a_reply() -> None:
    calls: list[str] = []
    saver = InMemorySaver()
    open_tool = make_tool("open_hours", result=lambda n, ctx: ToolResult.as_context(n, []))
    route = FunctionAssistant(route=lambda task, tools: [t.name for t in tools])
    graph = graph_of([ReserveSlot(calls), open_tool], assistant=route, checkpointer=saver)
    graph.invoke(_ask(), _config("open"), context=MEMBER)
    out = graph.invoke(Command(resume="1"), _config("open"), context=MEMBER)
    assert out["messages"][-1].content == "Reserved the morning slot."
    assert "open_hours" in graph.get_state(_config("open")).values["message"].offered


def test_T4_T3_a_system_filters_refusal_writes_no_gates_event() -> None:
    """The request's own system filter (T3) is no news to its sender: the ledger only."""
    tools = [make_tool("alpha", eligible_system="billing"), make_tool("beta", eligible_system="hr")]
    graph = graph_of(tools, checkpointer=InMemorySaver())
    request = {**_ask("alpha beta?"), "systems": ["hr"]}
    chunks = list(graph.stream(request, _config("system"), stream_mode=["custom", "values"]))
    assert not [d for mode, d in chunks if mode == "custom" and d.get("type") == "gates"]
    final = next(data for mode, data in reversed(chunks) if mode == "values")
    gate = [(e.tool, e.verdict) for e in final["ledger"] if e.kind is LedgerKind.GATE]
    assert gate == [("alpha", "refused: system")]
