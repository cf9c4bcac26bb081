"""Every private LangGraph name toolweave relies on still means what it did.

The names are spelled once, in ``toolweave/graph/langgraph_private.py``; each test
here checks one of them through LangGraph's behaviour (not only that it exists) and
fails with a message naming the entry to update after a LangGraph upgrade.
"""

from __future__ import annotations

import asyncio
import operator
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

from toolweave.graph import langgraph_private as private
from toolweave.graph.compiled import may_have_pending_tasks

ROOT = Path(__file__).resolve().parents[1]
UPDATE = "LangGraph changed {what}: update {name} in toolweave/graph/langgraph_private.py"
PRIVATE_SPELLINGS = (
    "langgraph._internal",
    "__pregel",
    "branch:to:",
    "__interrupt__",
    "_serde_allowlist",
    "__orig_class__",
    "_apply_checkpointer_allowlist",
    "_allowed_msgpack_modules",
    "_create_msgpack_ext_hook",
)
"""What only ``graph/langgraph_private.py`` may spell in the library's source."""


class State(TypedDict):
    n: int


def _chain(crash_in_b: bool = False, *, ask: bool = False) -> StateGraph[State, Any, State, State]:
    def a(state: State) -> dict[str, int]:
        if ask:
            interrupt("which?")
        return {"n": state["n"] + 1}

    def b(state: State) -> dict[str, int]:
        if crash_in_b:
            raise RuntimeError("crash")
        return {"n": state["n"] + 1}

    graph = StateGraph(State)
    graph.add_node("a", a)
    graph.add_node("b", b)
    graph.add_edge(START, "a")
    graph.add_conditional_edges("a", lambda state: "b", ["b"])
    graph.add_edge("b", END)
    return graph


def _config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def test_Q5_a_run_handed_its_checkpointer_under_the_config_key_persists_there():
    """The LangGraph server hands a graph compiled without one its checkpointer this way."""
    saver = InMemorySaver()
    seen: dict[str, Any] = {}

    def node(state: State, config: RunnableConfig) -> dict[str, int]:
        seen.update(config.get("configurable") or {})
        return {"n": 1}

    graph = StateGraph(State)
    graph.add_node("node", node)
    graph.add_edge(START, "node")
    compiled = graph.compile()
    config: Any = {"configurable": {"thread_id": "t", private.CHECKPOINTER_CONFIG_KEY: saver}}
    compiled.invoke({"n": 0}, config)
    what = "the config key of a run's checkpointer"
    name = "CHECKPOINTER_CONFIG_KEY"
    assert saver.get_tuple(_config("t")) is not None, UPDATE.format(what=what, name=name)
    handed = private.checkpointer_of(seen)
    assert isinstance(handed, BaseCheckpointSaver), UPDATE.format(what=what, name=name)


def test_Q1_a_paused_run_reports_its_interrupts_under_the_interrupt_key():
    saver = InMemorySaver()
    compiled = _chain(ask=True).compile(checkpointer=saver)
    out = compiled.invoke({"n": 0}, _config("t"))
    what, name = "the key of pending interrupts", "INTERRUPT"
    assert private.INTERRUPT in out, UPDATE.format(what=what, name=name)
    assert out[private.INTERRUPT][0].value == "which?", UPDATE.format(what=what, name=name)
    saved = saver.get_tuple(_config("t"))
    assert saved is not None
    channels = {write[1] for write in saved.pending_writes or ()}
    assert private.INTERRUPT in channels, UPDATE.format(what=what, name=name)
    assert may_have_pending_tasks(saved) is False


def test_Q5_an_edge_triggers_its_target_through_the_branch_channel():
    """Interrupted-run detection reads the trigger channel a crashed step left unconsumed."""
    saver = InMemorySaver()
    compiled = _chain(crash_in_b=True).compile(checkpointer=saver)
    with pytest.raises(RuntimeError):
        compiled.invoke({"n": 0}, _config("t"))
    what, name = "the trigger channels edges write", "BRANCH_PREFIX"
    assert private.BRANCH_PREFIX + "b" in compiled.channels, UPDATE.format(what=what, name=name)
    saved = saver.get_tuple(_config("t"))
    assert saved is not None
    pending = {
        private.triggered_node(channel)
        for channel in saved.checkpoint["channel_values"]
        if private.triggered_node(channel) is not None
    }
    assert pending == {"b"}, UPDATE.format(what=what, name=name)
    assert compiled.get_state(_config("t")).next == ("b",)
    assert may_have_pending_tasks(saved) is True, UPDATE.format(what=what, name=name)
    compiled = _chain().compile(checkpointer=saver)
    compiled.invoke(None, _config("t"))
    finished = saver.get_tuple(_config("t"))
    assert finished is not None
    assert may_have_pending_tasks(finished) is False, UPDATE.format(what=what, name=name)


def test_Q3_the_compiled_graph_keeps_its_msgpack_allowlist_under_the_pinned_attribute(
    monkeypatch: pytest.MonkeyPatch,
):
    """In strict msgpack mode LangGraph reads the saver's allowlist from this attribute."""
    import langgraph._internal._serde as serde

    what, name = "where a compiled graph keeps its msgpack allowlist", "SERDE_ALLOWLIST"
    compiled = _chain().compile()
    assert private.SERDE_ALLOWLIST in vars(compiled), UPDATE.format(what=what, name=name)
    entry = ("toolweave.state.task", "TaskNode")
    private.set_serde_allowlist(compiled, {entry})
    assert private.serde_allowlist(compiled) == {entry}
    asked: list[Any] = []

    class Recording(InMemorySaver):
        def with_allowlist(self, extra_allowlist: Any) -> Any:
            asked.append(set(extra_allowlist))
            return self

    monkeypatch.setattr(serde, "STRICT_MSGPACK_ENABLED", True)
    compiled = compiled.copy({"checkpointer": Recording()})
    private.set_serde_allowlist(compiled, {entry})
    compiled.invoke({"n": 0}, _config("t"))
    assert asked, UPDATE.format(what=what, name=name)
    assert entry in asked[0], UPDATE.format(what=what, name=name)


def test_X5_a_copy_is_built_from_the_fields_copy_fields_names():
    """``ToolweaveGraph.of`` builds its graph the way LangGraph's ``copy()`` does."""
    received: list[set[str]] = []
    compiled = _chain().compile()

    class Recording(type(compiled)):  # type: ignore[misc]
        def __init__(self, **kwargs: Any) -> None:
            received.append(set(kwargs))
            super().__init__(**kwargs)

    original = Recording(**private.copy_fields(compiled))
    fields = set(private.copy_fields(original))
    original.copy()
    what, name = "the fields Pregel.copy() passes to the constructor", "copy_fields"
    assert received[-1] == fields, UPDATE.format(what=what, name=name)
    assert original.invoke({"n": 0}) == {"n": 2}


def test_async_runnable_callable_runs_the_sync_body_under_invoke_and_the_async_one_under_ainvoke():
    calls: list[str] = []

    def body(value: int) -> int:
        calls.append("sync")
        return value + 1

    async def abody(value: int) -> int:
        calls.append("async")
        return value + 2

    runnable = private.RunnableCallable(body, abody, name="n", trace=False)
    what, name = "RunnableCallable(func, afunc)", "RunnableCallable"
    assert runnable.invoke(1) == 2, UPDATE.format(what=what, name=name)
    assert asyncio.run(runnable.ainvoke(1)) == 3, UPDATE.format(what=what, name=name)
    assert calls == ["sync", "async"], UPDATE.format(what=what, name=name)


@pytest.mark.parametrize("spelling", PRIVATE_SPELLINGS)
def test_X6_private_langgraph_names_are_spelled_in_one_module_only(spelling: str):
    allowed = ROOT / "graph" / "langgraph_private.py"
    pattern = re.compile(r"(?<!\w)" + re.escape(spelling))
    found = [
        str(path.relative_to(ROOT))
        for folder in ("state", "tools", "llm", "coordinators", "graph", "toolweave")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != allowed and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert found == [], f"{spelling!r} outside graph/langgraph_private.py: {found}"
    assert spelling in allowed.read_text(encoding="utf-8") or spelling == "langgraph._internal"
    assert "toolweave.graph.langgraph_private" in sys.modules


def test_X5_every_checkpointer_a_run_gets_passes_through_apply_allowlist(monkeypatch):
    """``AllowlistedCheckpoints`` overrides this method; permissive mode then reads strictly."""
    import langgraph._internal._serde as serde
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    what, name = "how a run and get_state get their checkpointer", "APPLY_ALLOWLIST"
    assert callable(getattr(private.AllowlistedCheckpoints, private.APPLY_ALLOWLIST))
    handed: list[Any] = []

    class Recording(private.AllowlistedCheckpoints, type(_chain().compile())):  # type: ignore[misc]
        def _apply_checkpointer_allowlist(self, checkpointer: Any) -> Any:
            handed.append(super()._apply_checkpointer_allowlist(checkpointer))
            return handed[-1]

    monkeypatch.setattr(serde, "STRICT_MSGPACK_ENABLED", False)
    saver = InMemorySaver()
    assert saver.serde._allowed_msgpack_modules is True  # permissive: warns, allows all
    compiled = Recording(**private.copy_fields(_chain().compile(checkpointer=saver)))
    entry = ("toolweave.state.task", "TaskNode")
    private.set_serde_allowlist(compiled, {entry})
    compiled.invoke({"n": 0}, _config("t"))
    compiled.get_state(_config("t"))
    assert handed, UPDATE.format(what=what, name=name)
    for used in handed:
        assert isinstance(used.serde, JsonPlusSerializer)
        assert used.serde._allowed_msgpack_modules == {entry}, UPDATE.format(what=what, name=name)
    assert saver.serde._allowed_msgpack_modules is True  # the caller's saver is left as it was


def test_X5_the_explicit_serializer_is_built_once_per_saver_and_allowlist(monkeypatch):
    """Every run asks for its checkpointer twice; the allowlisted serializer is made once.

    A saver's serializer is copied once per allowlist, and a graph with another
    allowlist gets a copy of its own (one graph's types never read under another's).
    """
    import langgraph._internal._serde as serde

    monkeypatch.setattr(serde, "STRICT_MSGPACK_ENABLED", False)
    saver = InMemorySaver()
    task, node = ("toolweave.state.task", "TaskInfo"), ("toolweave.state.task", "TaskNode")
    first = private.allowlisted(saver, {task})
    again = private.allowlisted(saver, [task])
    other = private.allowlisted(saver, {node})
    assert first is not saver  # the caller's saver is left as it was
    assert again is not saver
    assert first.serde is again.serde
    assert other.serde is not first.serde
    assert first.serde._allowed_msgpack_modules == {task}
    assert other.serde._allowed_msgpack_modules == {node}
    assert saver.serde._allowed_msgpack_modules is True
    saver.serde.pickle_fallback = not saver.serde.pickle_fallback  # a field changed: a new copy
    changed = private.allowlisted(saver, {task})
    assert changed.serde is not first.serde
    assert changed.serde.pickle_fallback == saver.serde.pickle_fallback


class _Routed(TypedDict):
    items: Annotated[list[str], operator.add]
    last: str
    untouched: str


def test_S2_the_lean_branch_read_sees_what_langgraphs_fresh_read_sees():
    """The route reads the post-reducer state; only the channels a node wrote are copied."""
    seen: list[tuple[Any, Any]] = []

    def route(state: _Routed) -> str:
        config = get_config()
        select = ["items", "last", "untouched"]
        own = private.ChannelRead.do_read(config, select=select, fresh=True)
        seen.append((dict(private.lean_fresh_read(config, select=select)), own))
        return END if len(state["items"]) > 2 else "b"

    graph = StateGraph(_Routed)
    graph.add_node("a", lambda state: {"items": ["a"], "last": "a"})
    graph.add_node("b", lambda state: {"items": ["b"]})
    graph.add_edge(START, "a")
    graph.add_conditional_edges("a", route, ["b", END])
    graph.add_conditional_edges("b", route, ["b", END])
    compiled = graph.compile()
    what, name = "a conditional edge's reader", "BRANCH_READER / lean_branch_reads"
    assert private.lean_branch_reads(compiled) == 2, UPDATE.format(what=what, name=name)
    result = compiled.invoke({"items": ["start"], "untouched": "u"})
    assert result["items"] == ["start", "a", "b"]
    assert len(seen) == 2
    for lean, own in seen:
        assert lean == own, UPDATE.format(what="CONFIG_KEY_READ's arguments", name=name)
    assert seen[0][0] == {"items": ["start", "a"], "last": "a", "untouched": "u"}


_REDUCED: list[tuple[list[str], list[str]]] = []


def _counted(left: list[str], right: list[str]) -> list[str]:
    _REDUCED.append((left, right))
    return left + right


class _Counted(TypedDict):
    items: Annotated[list[str], _counted]
    last: str


def test_PF1_the_lean_branch_read_reduces_only_the_channels_the_route_asks_for():
    """A route reading ``last`` neither copies nor reduces ``items``, which the step wrote."""
    asked: list[str] = []

    def route(state: _Counted) -> str:
        asked.append(state["last"])
        return END

    graph = StateGraph(_Counted)
    graph.add_node("a", lambda state: {"items": ["a"], "last": "a"})
    graph.add_edge(START, "a")
    graph.add_conditional_edges("a", route, [END])
    compiled = graph.compile()
    assert private.lean_branch_reads(compiled) == 1
    _REDUCED.clear()
    result = compiled.invoke({"items": ["start"], "last": "-"})
    assert asked == ["a"]
    assert result["items"] == ["start", "a"]
    # the input's write and the node's, each reduced once when LangGraph applied it;
    # LangGraph's own fresh read reduces the node's write a second time for the route
    assert _REDUCED == [([], ["start"]), (["start"], ["a"])]


def test_S2_every_phase_edge_of_the_built_graph_reads_leanly():
    """build_graph gives each of its conditional edges the lean read (PF1)."""
    from toolweave import build_graph
    from toolweave.testing import FunctionAssistant

    graph = build_graph("d", [], assistant=FunctionAssistant())
    readers = [
        writer.kwargs[private.BRANCH_READER]
        for node in graph.nodes.values()
        for writer in node.writers
        if private.BRANCH_READER in getattr(writer, "kwargs", {})
    ]
    assert readers, "no conditional edge found"
    assert all(reader.func is private.lean_fresh_read for reader in readers)
