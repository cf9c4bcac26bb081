"""S5, Q6: a turn whose checkpoints are gone does not act again, where the run has a store.

The LangGraph server's ``rollback`` double texting deletes the first run with its
checkpoints, then runs the same message again (``tests/test_effects_double_texting.py``
shows it on ``langgraph dev``). Here the same happens in process: the thread's
checkpoints are deleted (``checkpointer.delete_thread``) or another checkpointer is used,
and the run's ``BaseStore`` stays, as the server's does. The execute step journals a call
of a tool that acts in that store, keyed by the turn (the thread's human messages, the
task, the tool), not by message ids: the same turn's run finds the call made and uses its
result; a new turn with the same text acts again; without a store nothing changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Iterable
from typing import Annotated, Any, ClassVar, TypedDict

import pytest
from durable import postgres_url, thread_id
from langchain_core.messages import AnyMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import Op, PutOp, Result
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore
from test_effects_retries import QUESTION, CountUp

from toolweave import (
    ChatbotTool,
    EmptyRequest,
    LedgerKind,
    RunContext,
    ToolCallContext,
    ToolResult,
    build_graph,
)
from toolweave.graph import effect_journal
from toolweave.graph.effect_journal import (
    JOURNAL_ROOT,
    JOURNAL_TTL_MINUTES,
    journal_namespace,
    turn_call_key,
)
from toolweave.graph.tool_call import JOURNALED
from toolweave.testing import FunctionAssistant

OTHER = "What is on the tally now?"


class Parent(TypedDict, total=False):
    """A parent graph's state: its conversation and the answer."""

    messages: Annotated[list[AnyMessage], add_messages]
    answer: str


def _route(text: str, tools: Any) -> list[str]:
    return ["count_up"] if "count one up" in text.lower() else []


def _graph(tool: Any, saver: Any = None, store: Any = None) -> Any:
    assistant = FunctionAssistant(route=_route)
    return build_graph(
        "tally", [tool], assistant=assistant, checkpointer=saver or InMemorySaver(), store=store
    )


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [("human", text)]}


def _journaled(out: dict[str, Any]) -> list[Any]:
    return [e for e in out["ledger"] if e.kind is LedgerKind.TOOL_RESULT and e.reason == JOURNALED]


@pytest.mark.parametrize("run", ["sync", "async"])
def test_S5_Q6_a_turn_rolled_back_with_its_checkpoints_does_not_act_again(run: str) -> None:
    counter, saver, store = CountUp(), InMemorySaver(), InMemoryStore()
    graph = _graph(counter, saver, store)
    config = _config(f"rollback-{run}")
    invoke = graph.invoke if run == "sync" else lambda *a: asyncio.run(graph.ainvoke(*a))
    first = invoke(_ask(QUESTION), config)
    saver.delete_thread("rollback-" + run)  # what the server's rollback does to the first run
    assert graph.get_state(config).values == {}
    second = invoke(_ask(QUESTION), config)
    assert len(counter.effects) == 1
    assert second["answer"] == first["answer"] == "Tally is now 1."
    [kept] = _journaled(second)
    assert kept.key == counter.effects[0]  # the call the first run made, under its key
    assert kept.task_no == "1"


def test_S5_Q6_a_fresh_checkpointer_over_the_same_store_does_not_act_again() -> None:
    counter, store = CountUp(), InMemoryStore()
    config = _config("fresh-saver")
    _graph(counter, InMemorySaver(), store).invoke(_ask(QUESTION), config)
    out = _graph(counter, InMemorySaver(), store).invoke(_ask(QUESTION), config)
    assert len(counter.effects) == 1
    assert out["answer"] == "Tally is now 1."


def test_S5_Q6_rollback_of_a_later_turn_keeps_its_own_call_apart() -> None:
    """Turn 1 acts; turn 3 asks the same again (a new turn: acts); turn 3 rolled back: once."""
    counter, saver, store = CountUp(), InMemorySaver(), InMemoryStore()
    graph = _graph(counter, saver, store)
    config = _config("later-turn")
    graph.invoke(_ask(QUESTION), config)
    graph.invoke(_ask(OTHER), config)
    before = graph.get_state(config)
    third = graph.invoke(_ask(QUESTION), config)
    assert len(counter.effects) == 2
    assert third["answer"] == "Tally is now 2."
    # the server's rollback: the third turn's checkpoints deleted, the thread as it was before
    saver.delete_thread("later-turn")
    graph.update_state(_config("later-turn"), before.values, as_node="answer")
    again = graph.invoke(_ask(QUESTION), config)
    assert len(counter.effects) == 2
    assert again["answer"] == "Tally is now 2."
    assert _journaled(again)[0].key == counter.effects[1]


def test_S5_Q6_the_same_text_sent_as_a_new_turn_acts_again() -> None:
    counter, store = CountUp(), InMemoryStore()
    graph = _graph(counter, InMemorySaver(), store)
    config = _config("new-turn")
    graph.invoke(_ask(QUESTION), config)
    graph.invoke(_ask(OTHER), config)
    out = graph.invoke(_ask(QUESTION), config)
    assert len(counter.effects) == 2
    assert out["answer"] == "Tally is now 2."
    assert not _journaled(out)
    assert len(set(counter.effects)) == 2  # two calls, two keys


def test_S5_Q6_without_a_store_a_turn_whose_checkpoints_were_deleted_acts_again() -> None:
    """Nothing changes without a store: the gap the docs describe."""
    counter, saver = CountUp(), InMemorySaver()
    graph = _graph(counter, saver)
    graph.invoke(_ask(QUESTION), _config("no-store"))
    saver.delete_thread("no-store")
    graph.invoke(_ask(QUESTION), _config("no-store"))
    assert len(counter.effects) == 2


class Cut(BaseException):
    """The run cut off inside the tool's call (a process killed, a task cancelled)."""


class CutOnce(ChatbotTool[EmptyRequest]):
    """Acts, then the first call is cut off before it returns."""

    name = "count_up"
    domain = "tally"
    side_effects: ClassVar[bool] = True
    executable_instruction = "count_up: true when the user asks to count one up"

    def __init__(self) -> None:
        self.keys: list[str] = []

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        self.keys.append(ctx.idempotency_key)
        if len(self.keys) == 1:
            raise Cut
        return ToolResult.as_guaranteed_context(self.name, "Counted.")


def test_Q6_a_call_cut_off_mid_way_is_made_again_under_its_first_key() -> None:
    """In doubt (no result recorded): at least once (Q6), one key, so a deduping tool acts once."""
    tool, saver, store = CutOnce(), InMemorySaver(), InMemoryStore()
    graph = _graph(tool, saver, store)
    with pytest.raises(Cut):
        graph.invoke(_ask(QUESTION), _config("cut"))
    saver.delete_thread("cut")  # its checkpoints gone: the next run has a new message id
    out = graph.invoke(_ask(QUESTION), _config("cut"))
    assert out["answer"] == "Counted."
    assert len(tool.keys) == 2
    assert tool.keys[0] == tool.keys[1]


def test_S5_Q6_the_journal_keeps_no_text_and_no_secret() -> None:
    class Echo(CountUp):
        def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
            self.effects.append(ctx.idempotency_key)
            return ToolResult.as_guaranteed_context(self.name, f"Booked for {ctx.user_data}.")

    store = InMemoryStore()
    graph = _graph(Echo(), InMemorySaver(), store)
    secret = frozenset({"member_no"})
    context = RunContext(user_data={"member_no": "M-2299-4411"}, secret_keys=secret)
    graph.invoke(_ask(QUESTION), _config("secret"), context=context)
    [item] = store.search(journal_namespace("secret"))
    assert item.namespace == (JOURNAL_ROOT, "secret")
    assert set(item.value) == {
        "version",
        "tool",
        "task_no",
        "at",
        "key",
        "amends",
        "done",
        "result",
        "finished",
    }
    dumped = repr(item.value)
    assert "M-2299-4411" not in dumped
    assert "count one up" not in dumped.lower()
    assert item.value["done"] is True
    assert "Booked for" in item.value["result"]  # the result, its secret redacted


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_S5_Q6_a_thread_keeps_a_bounded_journal(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The newest entries stay, also in a store whose times tie (SQLite's: seconds)."""
    monkeypatch.setattr(effect_journal, "JOURNAL_ENTRIES_PER_THREAD", 2)
    counter, store = CountUp(), InMemoryStore() if kind == "memory" else _sqlite_store()
    graph = _graph(counter, InMemorySaver(), store)
    for turn in range(4):
        graph.invoke(_ask(f"{QUESTION} Turn {turn}."), _config("bounded.thread"))
    assert len(counter.effects) == 4
    kept = store.search(journal_namespace("bounded.thread"))
    assert len(kept) == 2  # the newest two
    assert {item.value["key"] for item in kept} == set(counter.effects[2:])


def _sqlite_store() -> SqliteStore:
    """A real store that takes TTLs (in memory, SQLite)."""
    store = SqliteStore(sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None))
    store.setup()
    return store


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_S5_Q6_a_rolled_back_turn_acts_once_over_a_store_with_ttls(kind: str) -> None:
    """Real stores that take TTLs: SQLite in memory, and the test PostgreSQL (the platform's)."""
    with contextlib.ExitStack() as stack:
        if kind == "sqlite":
            store: Any = _sqlite_store()
        else:
            from langgraph.store.postgres import PostgresStore

            store = stack.enter_context(PostgresStore.from_conn_string(postgres_url()))
            store.setup()
        assert store.supports_ttl
        counter, saver, thread = CountUp(), InMemorySaver(), thread_id(f"ttl-{kind}")
        graph = _graph(counter, saver, store)
        graph.invoke(_ask(QUESTION), _config(thread))
        saver.delete_thread(thread)
        out = graph.invoke(_ask(QUESTION), _config(thread))
        assert len(counter.effects) == 1
        assert out["answer"] == "Tally is now 1."
        [item] = store.search(journal_namespace(thread))
        assert item.value["key"] == counter.effects[0]


class TtlStore(InMemoryStore):
    """An in-memory store that says it takes TTLs, and records the ones it is given."""

    supports_ttl = True

    def __init__(self) -> None:
        super().__init__()
        self.ttls: list[float | None] = []

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self.ttls.extend(op.ttl for op in ops if isinstance(op, PutOp))
        return super().batch(ops)


def test_S5_Q6_journal_entries_expire_where_the_store_takes_ttls() -> None:
    store = TtlStore()
    _graph(CountUp(), InMemorySaver(), store).invoke(_ask(QUESTION), _config("ttl"))
    assert store.ttls == [JOURNAL_TTL_MINUTES, JOURNAL_TTL_MINUTES]  # started, then done


def test_S5_Q6_the_turn_key_ignores_ids_and_follows_the_conversation() -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    def key(*messages: Any) -> str:
        return turn_call_key(
            domain="tally",
            messages=messages,
            task_no="1",
            tool="count_up",
            clarification_round=0,
            reply=None,
        )

    first = key(HumanMessage(QUESTION, id="a"))
    assert key(HumanMessage(QUESTION, id="b")) == first
    later = key(HumanMessage(QUESTION), AIMessage("Tally is now 1."), HumanMessage(QUESTION))
    assert later != first


def test_S5_Q6_an_ai_tool_that_acts_is_journaled_too() -> None:
    """A server-side AI system tool (W2) that acts: a rolled-back turn does not run it again."""
    from test_amended_request_effects import FileRequest

    from toolweave import AiToolRegistry, as_chatbot_tools

    tool = FileRequest(amendable=True)
    registry = AiToolRegistry()
    registry.register(tool)
    [filed] = as_chatbot_tools(registry, domain="desk")
    saver, store = InMemorySaver(), InMemoryStore()
    assistant = FunctionAssistant(route=lambda text, tools: [filed.name])
    graph = build_graph("desk", [filed], assistant=assistant, checkpointer=saver, store=store)
    first = graph.invoke(_ask("Please file a request for a new chair."), _config("ai-tool"))
    saver.delete_thread("ai-tool")
    second = graph.invoke(_ask("Please file a request for a new chair."), _config("ai-tool"))
    assert len(tool.contexts) == 1
    assert second["answer"] == first["answer"]
    [kept] = _journaled(second)
    assert kept.key == tool.contexts[0].idempotency_key


def test_S5_Q6_a_node_of_a_parent_graph_with_a_store_does_not_act_again() -> None:
    """The graph as a parent's node: the parent's store and thread; its checkpoints deleted."""
    counter, saver, store = CountUp(), InMemorySaver(), InMemoryStore()
    builder = StateGraph(Parent)
    assistant = FunctionAssistant(route=_route)
    builder.add_node("tally", build_graph("tally", [counter], assistant=assistant))
    builder.add_edge(START, "tally")
    builder.add_edge("tally", END)
    parent = builder.compile(checkpointer=saver, store=store)
    first = parent.invoke(_ask(QUESTION), _config("parent"))
    saver.delete_thread("parent")
    second = parent.invoke(_ask(QUESTION), _config("parent"))
    assert len(counter.effects) == 1
    assert second["answer"] == first["answer"] == "Tally is now 1."
