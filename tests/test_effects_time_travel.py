"""S5, Q6: LangGraph time travel (Studio's replay and fork) does not make a tool act again.

The neutral counter of ``tests/test_effects_retries.py``: ``count_up`` acts and does not
dedupe on ``ctx.idempotency_key``. LangGraph Studio replays a thread from an earlier
checkpoint (``graph.invoke(None, config_of_that_checkpoint)``) and forks it
(``graph.update_state(that_config, ...)`` then ``invoke(None, fork)``); LangGraph runs the
steps after that checkpoint again. Before this rule the acting step ran again under the
same key: a deduping tool was safe, and a tool like this one acted a second time, though
the thread's later checkpoints recorded that it had acted.

Now a run continued from a stored checkpoint (``None`` as input, or a resume naming a
checkpoint) knows the calls the thread's checkpoints record as done, by key: a call with
one of those keys is not made again; its stored result is used, and the ledger says so.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any, ClassVar

import pytest
from durable import target_for, thread_id
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from test_effects_retries import QUESTION, CountUp

from toolweave import (
    ClarifiableTool,
    EmptyRequest,
    LedgerKind,
    ToolCallContext,
    ToolResult,
    build_graph,
    reply,
)
from toolweave.graph.langgraph_private import CHECKPOINTER_CONFIG_KEY
from toolweave.persistence import open_checkpointer
from toolweave.testing import FunctionAssistant


def _graph(tool: Any, checkpointer: Any = None) -> Any:
    assistant = FunctionAssistant(route=lambda text, tools: [tool.name])
    saver = InMemorySaver() if checkpointer is None else checkpointer
    return build_graph("tally", [tool], assistant=assistant, checkpointer=saver)


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _before(graph: Any, config: dict[str, Any], node: str = "execute") -> Any:
    """The latest checkpoint whose next step is ``node`` (Studio's time-travel target)."""
    return next(s for s in graph.get_state_history(config) if s.next == (node,))


def _kept(graph: Any, config: dict[str, Any]) -> list[Any]:
    ledger = graph.get_state(config).values["ledger"]
    return [e for e in ledger if e.kind is LedgerKind.TOOL_RESULT and e.key]


@pytest.mark.parametrize("saver", ["memory", "sqlite", "postgres"])
def test_S5_Q6_replaying_an_earlier_checkpoint_does_not_act_again(
    saver: str, tmp_path: Path
) -> None:
    with contextlib.ExitStack() as stack:
        checkpointer = (
            InMemorySaver()
            if saver == "memory"
            else stack.enter_context(open_checkpointer(target_for(saver, tmp_path)))
        )
        counter = CountUp()
        graph = _graph(counter, checkpointer)
        config = _config(thread_id(f"replay-{saver}"))
        first = graph.invoke({"messages": [("human", QUESTION)]}, config)
        [key] = counter.effects
        out = graph.invoke(None, _before(graph, config).config)  # Studio's replay
        assert len(counter.effects) == 1
        assert out["answer"] == first["answer"] == "Tally is now 1."
        [kept] = _kept(graph, config)
        assert kept.key == key  # the same call: the same key, not made again
        assert "not called again" in kept.reason


def test_S5_Q6_a_fork_from_before_the_effect_does_not_act_again() -> None:
    counter = CountUp()
    graph = _graph(counter)
    config = _config("fork")
    graph.invoke({"messages": [("human", QUESTION)]}, config)
    fork = graph.update_state(_before(graph, config).config, {})  # Studio's fork
    out = graph.invoke(None, fork)
    assert len(counter.effects) == 1
    assert out["answer"] == "Tally is now 1."


def test_S5_Q6_replaying_a_run_after_later_runs_still_finds_what_it_did() -> None:
    """The ledger is the last run's; the thread's history still holds the earlier run's calls."""
    counter = CountUp()
    graph = _graph(counter)
    config = _config("replay-later")
    graph.invoke({"messages": [("human", QUESTION)]}, config)
    target = _before(graph, config)
    graph.invoke({"messages": [("human", "Please count one more up on the tally.")]}, config)
    assert len(counter.effects) == 2
    graph.invoke(None, target.config)
    assert len(counter.effects) == 2


def test_S5_Q6_replaying_under_ainvoke_does_not_act_again() -> None:
    counter = CountUp()
    graph = _graph(counter)
    config = _config("replay-async")

    async def replay() -> None:
        await graph.ainvoke({"messages": [("human", QUESTION)]}, config)
        await graph.ainvoke(None, _before(graph, config).config)

    asyncio.run(replay())
    assert len(counter.effects) == 1


def test_Q6_replaying_a_tool_that_does_not_act_calls_it_again() -> None:
    """A lookup is replayed as LangGraph replays it: called again (it costs nothing)."""

    class Lookup(CountUp):
        name = "look_up"
        side_effects: ClassVar[bool] = False

    lookup = Lookup()
    graph = _graph(lookup)
    config = _config("replay-lookup")
    graph.invoke({"messages": [("human", QUESTION)]}, config)
    graph.invoke(None, _before(graph, config).config)
    assert len(lookup.effects) == 2
    assert len(set(lookup.effects)) == 1  # under the same key (Q6)


class BookSlot(ClarifiableTool[EmptyRequest]):
    """Asks which day, then books a slot on the reply: one booking per call, no dedupe."""

    name = "book_slot"
    domain = "tally"
    side_effects: ClassVar[bool] = True
    returns_answer: ClassVar[bool] = True
    executable_instruction = "book_slot: true when the user asks to book a slot"

    def __init__(self) -> None:
        self.bookings: list[str] = []

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.clarification(self.name, "Which day?", ["Monday", "Friday"])

    def execute_with_clarification(
        self, request: EmptyRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        self.bookings.append(ctx.idempotency_key)
        return ToolResult.as_answer(self.name, f"Booked for {reply}, B-{len(self.bookings)}.")


def test_S5_Q6_resuming_an_earlier_pause_again_does_not_act_again() -> None:
    """Studio: the paused checkpoint's question answered a second time, from that checkpoint."""
    slot = BookSlot()
    graph = _graph(slot)
    config = _config("replay-resume")
    graph.invoke({"messages": [("human", "Please book a slot.")]}, config)
    paused = graph.get_state(config).config
    assert reply(graph, config, "Friday")["answer"] == "Booked for Friday, B-1."
    out = graph.invoke(Command(resume="Friday"), paused)
    assert len(slot.bookings) == 1
    [kept] = _kept(graph, config)
    assert kept.key == slot.bookings[0]  # the reply's message id, so its key, is the same (Q6)
    assert "Booked for Friday, B-1." in out["answer"]


def test_S5_Q6_a_replay_on_a_graph_given_its_checkpointer_by_the_run_does_not_act_again() -> None:
    """As ``langgraph dev`` and Studio run it: the checkpointer comes with each run's config."""
    counter = CountUp()
    assistant = FunctionAssistant(route=lambda text, tools: [counter.name])
    graph = build_graph("tally", [counter], assistant=assistant)
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "platform", CHECKPOINTER_CONFIG_KEY: saver}}
    graph.invoke({"messages": [("human", QUESTION)]}, config)
    target = _before(graph, config).config["configurable"]
    replay = {"configurable": {**target, CHECKPOINTER_CONFIG_KEY: saver}}
    out = graph.invoke(None, replay)
    assert len(counter.effects) == 1
    assert out["answer"] == "Tally is now 1."
