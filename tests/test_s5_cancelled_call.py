"""S5, Q6: a run cancelled while a tool that acts awaits its reply does not make it act again.

Under ``ainvoke``/``astream`` a run can be cancelled inside a tool's call: a web client
gone while the tool's progress streams, a server's run cancelled, a task timed out. The
tool's request is already out (a ticket is being opened), but its reply is lost with
the run, and the run's re-run (the same message sent again, ``resume_interrupted``) makes
the same call (the same key, Q6). ``AwaitingTicket`` does not dedupe on the key, as many
first tools will not: before, it opened a second ticket. Now the call finishes on its own
and the re-run takes its result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, ClassVar

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from toolweave import (
    ChatbotTool,
    EmptyRequest,
    Limits,
    ToolCallContext,
    ToolResult,
    build_graph,
    resume_interrupted,
)
from toolweave.graph.calls_in_flight import CallsInFlight
from toolweave.testing import FunctionAssistant
from toolweave.tools.effects import Call

QUESTION = "Please open a ticket: the printer on floor 2 is jammed."


class AwaitingTicket(ChatbotTool[EmptyRequest]):
    """Sends the ticket, then awaits the helpdesk's reply; one ticket per call (naive)."""

    name = "open_ticket"
    domain = "desk"
    side_effects: ClassVar[bool] = True
    executable_instruction = "open_ticket: true when the user asks to open a ticket"

    def __init__(self) -> None:
        self.tickets: list[str] = []  # the idempotency key of every ticket sent
        self.fails_after_sending = False
        self.sent: asyncio.Event | None = None
        self.replied: asyncio.Event | None = None

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.tickets.append(ctx.idempotency_key)
        return ToolResult.as_guaranteed_context(self.name, f"Ticket HD-{len(self.tickets)} opened.")

    async def aexecute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        assert self.sent is not None
        assert self.replied is not None
        self.tickets.append(ctx.idempotency_key)  # the request is out
        ctx.progress("TOOL_STARTED", self.name)
        self.sent.set()
        await self.replied.wait()  # the helpdesk's reply
        if self.fails_after_sending:
            raise ConnectionError("the helpdesk hung up")
        return ToolResult.as_guaranteed_context(self.name, f"Ticket HD-{len(self.tickets)} opened.")


def _graph(ticket: AwaitingTicket) -> Any:
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name])
    return build_graph("desk", [ticket], assistant=assistant, checkpointer=InMemorySaver())


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _asked() -> dict[str, Any]:
    return {"messages": [("human", QUESTION)]}


async def _cut(graph: Any, ticket: AwaitingTicket, config: dict[str, Any], how: str) -> None:
    """Start the run, and cut it once the ticket is sent, before its reply."""
    ticket.sent, ticket.replied = asyncio.Event(), asyncio.Event()

    async def read_the_stream() -> None:  # a web client, gone once the progress shows
        stream = graph.astream(_asked(), config, stream_mode="custom")
        async with contextlib.aclosing(stream):  # closed on leaving, as a server does
            async for data in stream:
                if data.get("type") == "tool_progress":
                    return

    run = asyncio.ensure_future(
        read_the_stream() if how == "stream_left" else graph.ainvoke(_asked(), config)
    )
    await asyncio.wait_for(ticket.sent.wait(), 10)
    if how == "stream_left":
        await run  # the reader stops; closing the stream cancels the step
    else:
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run


@pytest.mark.parametrize("how", ["cancelled", "stream_left"])
@pytest.mark.parametrize("reply_comes", ["before_the_rerun", "during_the_rerun"])
def test_S5_Q6_a_run_cut_inside_the_call_of_a_tool_that_acts_does_not_act_again(
    how: str, reply_comes: str
) -> None:
    ticket = AwaitingTicket()
    graph = _graph(ticket)
    config = _config(f"cut-{how}-{reply_comes}")

    async def scenario() -> dict[str, Any]:
        await _cut(graph, ticket, config, how)
        assert ticket.replied is not None
        if reply_comes == "before_the_rerun":
            ticket.replied.set()
            await asyncio.sleep(0.05)
        else:
            asyncio.get_running_loop().call_later(0.1, ticket.replied.set)
        return dict(await graph.ainvoke(_asked(), config))  # the person sends it again

    out = asyncio.run(scenario())
    assert len(ticket.tickets) == 1
    assert out["answer"] == "Ticket HD-1 opened."
    assert [m.type for m in out["messages"]] == ["human", "ai"]


def test_S5_Q6_resume_interrupted_after_a_cancelled_call_takes_its_result() -> None:
    ticket = AwaitingTicket()
    graph = _graph(ticket)
    config = _config("cut-resume")

    async def scenario() -> None:
        await _cut(graph, ticket, config, "cancelled")
        assert ticket.replied is not None
        ticket.replied.set()
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    out = resume_interrupted(graph, config)  # sync, after the loop is gone: the kept result
    assert out["answer"] == "Ticket HD-1 opened."
    assert len(ticket.tickets) == 1


def test_Q6_a_cancelled_call_that_then_failed_is_made_again_under_its_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """At least once, one key (Q6): a call that failed after its run was cut is no result."""
    ticket = AwaitingTicket()
    ticket.fails_after_sending = True
    graph = _graph(ticket)
    config = _config("cut-failed")

    async def scenario() -> dict[str, Any]:
        await _cut(graph, ticket, config, "cancelled")
        assert ticket.replied is not None
        ticket.replied.set()
        await asyncio.sleep(0.05)
        ticket.fails_after_sending = False
        return dict(await graph.ainvoke(_asked(), config))

    with caplog.at_level(logging.WARNING, logger="toolweave"):
        out = asyncio.run(scenario())
    assert len(ticket.tickets) == 2
    assert ticket.tickets[0] == ticket.tickets[1]  # the same key: a deduping tool acts once
    assert out["answer"] == "Ticket HD-2 opened."
    assert any("ConnectionError" in r.getMessage() for r in caplog.records)


def test_S5_X5_a_rerun_waits_for_the_cut_call_a_bounded_time_and_does_not_call_again() -> None:
    ticket = AwaitingTicket()
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name])
    graph = build_graph(
        "desk",
        [ticket],
        assistant=assistant,
        checkpointer=InMemorySaver(),
        limits=Limits(thread_wait_s=0.2),
    )
    config = _config("cut-never-replied")

    async def scenario() -> tuple[dict[str, Any], float]:
        await _cut(graph, ticket, config, "cancelled")  # the helpdesk never replies
        started = time.monotonic()
        out = dict(await graph.ainvoke(_asked(), config))
        return out, time.monotonic() - started

    out, waited = asyncio.run(scenario())
    assert len(ticket.tickets) == 1  # waited for, not made again
    assert waited < 5
    assert out["answer"].startswith("This is still being done: open ticket has not finished")
    assert "was not done" not in out["answer"]  # it may well be done: the call goes on


def test_S5_the_graph_keeps_the_last_calls_only() -> None:
    calls = CallsInFlight(kept=2)

    async def made(value: str) -> str:
        return value

    async def scenario() -> list[str]:
        for key in ("k1", "k2", "k3"):
            await calls.finished(
                "t", key, Call(lambda: "sync", lambda k=key: made(k)), wait_s=1
            ).acall()
        again = [
            await calls.finished(
                "t", key, Call(lambda: "sync", lambda: made("new")), wait_s=1
            ).acall()
            for key in ("k1", "k3")
        ]
        return again

    assert asyncio.run(scenario()) == ["new", "k3"]  # k1 was dropped; k3's result is kept


def test_S5_Q6_a_cut_call_finished_later_is_journaled_for_a_rerun_in_another_process() -> None:
    """The journal (the run's store) hears of the call's end: another worker's re-run uses it.

    A second graph built over the same checkpointer and store stands for another server
    process (a double-texted run landing on another worker): it knows nothing of the
    first graph's calls in flight, only what the store holds.
    """
    ticket = AwaitingTicket()
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name])
    saver, store = InMemorySaver(), InMemoryStore()
    first, other = (
        build_graph("desk", [ticket], assistant=assistant, checkpointer=saver, store=store)
        for _ in range(2)
    )
    config = _config("cut-other-process")

    async def scenario() -> dict[str, Any]:
        await _cut(first, ticket, config, "cancelled")
        assert ticket.replied is not None
        ticket.replied.set()
        await asyncio.sleep(0.1)  # the call ends; its result reaches the journal
        return dict(await other.ainvoke(_asked(), config))

    out = asyncio.run(scenario())
    assert len(ticket.tickets) == 1
    assert "Ticket HD-1 opened." in out["answer"]
