"""S5, Q6: a call of a tool that acts, running in another process, is not made again.

A LangGraph server with several workers (or two servers over one PostgreSQL) can run a
message's re-run on another process while the first run's call is still running there:
a double-texted run (``interrupt``/``rollback``) on another worker, a client's retry.
The journal (the run's store) then holds the call as started by another process and not
ended: the re-run waits for it (at most ``Limits.thread_wait_s``) and takes its result,
or says it is still being done; it is made again (under its key, Q6: at least once) only
once the call has been running longer than ``Limits.acting_call_lease_s`` (its process
presumed gone), or when its own process recorded that it ended without a result.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from toolweave import (
    ChatbotTool,
    EmptyRequest,
    Limits,
    ToolCallContext,
    ToolResult,
    build_graph,
)
from toolweave.graph import effect_journal
from toolweave.graph.effect_journal import Journal, journal_namespace, turn_call_key
from toolweave.testing import FunctionAssistant
from toolweave.tools.effects import drive

QUESTION = "Please open a ticket: the printer on floor 2 is jammed."
THREAD = "elsewhere"
KEY = "key-of-the-first-attempt"


class Ticket(ChatbotTool[EmptyRequest]):
    """Opens a ticket per call (no deduplication by key), or fails when told to."""

    name = "open_ticket"
    domain = "desk"
    side_effects: ClassVar[bool] = True
    executable_instruction = "open_ticket: true when the user asks to open a ticket"

    def __init__(self) -> None:
        self.tickets: list[str] = []
        self.fails = False
        self.crashes = False

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.tickets.append(ctx.idempotency_key)
        if self.crashes:
            raise Crash
        if self.fails:
            raise ConnectionError("the helpdesk is down")
        return ToolResult.as_guaranteed_context(self.name, f"Ticket HD-{len(self.tickets)} opened.")


def _graph(ticket: Ticket, store: InMemoryStore, **limits: Any) -> Any:
    return build_graph(
        "desk",
        [ticket],
        assistant=FunctionAssistant(route=lambda text, tools: [ticket.name]),
        checkpointer=InMemorySaver(),
        store=store,
        limits=Limits(**limits),
    )


def _journal(store: InMemoryStore) -> Journal:
    item = turn_call_key(
        domain="desk",
        messages=[HumanMessage(QUESTION)],
        task_no="1",
        tool="open_ticket",
        clarification_round=0,
        reply=None,
    )
    return Journal(store, journal_namespace(THREAD), item, "open_ticket", "1")


def _started_elsewhere(
    store: InMemoryStore, monkeypatch: pytest.MonkeyPatch, *, ago_s: float = 0.0
) -> Journal:
    """Record the call as started by another process ``ago_s`` seconds ago."""
    journal = _journal(store)
    then = time.time() - ago_s
    with monkeypatch.context() as patched:
        patched.setattr(effect_journal.time, "time", lambda: then)
        drive(journal.started(KEY, ()))
    return journal


def _ask(graph: Any) -> dict[str, Any]:
    config = {"configurable": {"thread_id": THREAD}}
    return dict(graph.invoke({"messages": [("human", QUESTION)]}, config))


def test_S5_X5_a_call_running_in_another_process_is_waited_for_and_not_made_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, ticket = InMemoryStore(), Ticket()
    _started_elsewhere(store, monkeypatch)
    started = time.monotonic()
    out = _ask(_graph(ticket, store, thread_wait_s=0.3))
    assert ticket.tickets == []  # not made again
    assert time.monotonic() - started < 5  # the wait is bounded
    assert out["answer"].startswith("This is still being done: open ticket has not finished")


def test_S5_Q6_the_rerun_takes_the_result_the_other_process_records_while_it_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, ticket = InMemoryStore(), Ticket()
    journal = _started_elsewhere(store, monkeypatch)
    ends = threading.Timer(0.3, lambda: drive(journal.done(KEY, (), "Ticket HD-7 opened.")))
    ends.start()
    try:
        out = _ask(_graph(ticket, store, thread_wait_s=10))
    finally:
        ends.join()
    assert ticket.tickets == []
    assert "Ticket HD-7 opened." in out["answer"]


def test_Q6_a_call_started_elsewhere_longer_ago_than_the_lease_is_made_again_under_its_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, ticket = InMemoryStore(), Ticket()
    _started_elsewhere(store, monkeypatch, ago_s=60)
    started = time.monotonic()
    out = _ask(_graph(ticket, store, thread_wait_s=30, acting_call_lease_s=30))
    assert ticket.tickets == [KEY]  # its process presumed gone: at least once, one key
    assert time.monotonic() - started < 5  # no wait for a call past its lease
    assert out["answer"] == "Ticket HD-1 opened."


class Crash(BaseException):
    """A process dying inside the call, as a test can make it: nothing catches it."""


def test_Q6_a_call_that_crashed_is_made_again_at_once_under_its_key() -> None:
    """The call raised past everything (a simulated crash): it recorded that it ended."""
    store, ticket = InMemoryStore(), Ticket()
    ticket.crashes = True
    with pytest.raises(Crash):
        _ask(_graph(ticket, store, thread_wait_s=30))
    ticket.crashes = False
    started = time.monotonic()
    out = _ask(_graph(ticket, store, thread_wait_s=30))  # a fresh checkpointer: the journal
    assert len(ticket.tickets) == 2
    assert ticket.tickets[0] == ticket.tickets[1]  # at least once, one key
    assert time.monotonic() - started < 5
    assert out["answer"] == "Ticket HD-2 opened."


def test_R7_Q6_a_call_that_failed_in_another_process_is_made_again_without_waiting() -> None:
    store, ticket = InMemoryStore(), Ticket()
    ticket.fails = True
    failed = _ask(_graph(ticket, store))  # the first run (another process: another graph)
    assert failed["answer"].startswith("This was not done: open ticket failed")
    ticket.fails = False
    started = time.monotonic()
    again = build_graph(  # a new checkpointer: the thread's state is gone, the journal is not
        "desk",
        [ticket],
        assistant=FunctionAssistant(route=lambda text, tools: [ticket.name]),
        checkpointer=InMemorySaver(),
        store=store,
        limits=Limits(thread_wait_s=30),
    )
    out = _ask(again)
    assert len(ticket.tickets) == 2
    assert time.monotonic() - started < 5
    assert out["answer"] == "Ticket HD-2 opened."


def test_S5_X5_the_lease_must_be_positive() -> None:
    with pytest.raises(ValueError, match="acting_call_lease_s must be positive"):
        Limits(acting_call_lease_s=0)


def _slow_call(seconds: float) -> Any:
    from toolweave.tools.effects import Call

    async def acall() -> str:
        await asyncio.sleep(seconds)
        return "made"

    def sync() -> str:
        time.sleep(seconds)
        return "made"

    return Call(sync, acall)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_S5_a_running_call_beats_in_the_journal_and_no_late_beat_undoes_its_end(
    driver: str,
) -> None:
    """While the call runs its entry is rewritten (a long call is not taken for dead)..."""
    store = InMemoryStore()
    journal = _journal(store)
    drive(journal.started(KEY, ()))
    first = drive(journal.read())
    assert first is not None
    seen: list[float] = []
    watcher = threading.Timer(0.35, lambda: seen.append(drive(journal.read()).at))  # type: ignore[union-attr]
    watcher.start()
    beating = effect_journal.beating(journal, KEY, (), _slow_call(0.5), every_s=0.1)
    made = beating.call() if driver == "sync" else asyncio.run(beating.acall())
    watcher.join()
    assert made == "made"
    assert seen
    assert seen[0] > first.at  # beaten while it ran
    drive(journal.done(KEY, (), "Ticket HD-1 opened."))
    time.sleep(0.25)  # ...and, once it returned, no beat comes after its end
    ended = drive(journal.read())
    assert ended is not None
    assert ended.done


class SlowTicket(Ticket):
    """Opens the ticket, then awaits the helpdesk's reply (async)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = asyncio.Event()
        self.replied = asyncio.Event()

    async def aexecute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.tickets.append(ctx.idempotency_key)
        self.sent.set()
        await self.replied.wait()
        return ToolResult.as_guaranteed_context(self.name, f"Ticket HD-{len(self.tickets)} opened.")


def test_S5_Q6_two_graphs_of_one_process_over_one_store_make_the_call_once() -> None:
    """Two workers' graphs in one process (found by the fifteenth new user): one ticket.

    Each graph knows only its own calls in flight; the journal's heartbeat says the call
    is being made, so the second graph's run waits for it and takes its result.
    """
    ticket = SlowTicket()
    store, saver = InMemoryStore(), InMemorySaver()
    first, second = (
        build_graph(
            "desk",
            [ticket],
            assistant=FunctionAssistant(route=lambda text, tools: [ticket.name]),
            checkpointer=saver,
            store=store,
            limits=Limits(thread_wait_s=10),
        )
        for _ in range(2)
    )
    config = {"configurable": {"thread_id": THREAD}}
    asked = {"messages": [("human", QUESTION)]}

    async def scenario() -> list[dict[str, Any]]:
        running = asyncio.ensure_future(first.ainvoke(asked, config))
        await asyncio.wait_for(ticket.sent.wait(), 10)
        again = asyncio.ensure_future(second.ainvoke(asked, config))
        await asyncio.sleep(0.3)  # the second run reaches the call while it is being made
        ticket.replied.set()
        return [dict(out) for out in await asyncio.gather(running, again)]

    outs = asyncio.run(scenario())
    assert len(ticket.tickets) == 1
    assert all("Ticket HD-1 opened." in out["answer"] for out in outs)
