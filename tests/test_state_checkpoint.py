"""The whole graph state round-trips through LangGraph's checkpoint serializer (SQLite)."""

from __future__ import annotations

import inspect
import logging
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from support import ScriptedCoordinator, ask, doc, graph_of, make_tool

from toolweave import LedgerEntry, PromptAndContext, TaskInfo, ToolResult, UniqueTextDocument
from toolweave.state.graph_state import GraphState
from toolweave.state.serde import checkpoint_allowlist, checkpoint_serde
from toolweave.state.task import TaskNode


def stored_values(
    checkpointer: BaseCheckpointSaver[Any], config: RunnableConfig
) -> dict[str, Any] | None:
    """The state values of the checkpoint ``config`` names (``None``: none), without the graph."""
    if checkpointer.get_tuple(config) is None:
        return None
    reader = StateGraph(GraphState)
    reader.add_node("read", lambda state: {})
    reader.add_edge(START, "read")
    return dict(reader.compile(checkpointer=checkpointer).get_state(config).values)


def _run_tree(path: Path) -> dict[str, Any]:
    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [TaskInfo(task_no="", task_prompt="sub", required_tool_names=["g"])]
        return task

    tools = [
        ScriptedCoordinator("c", decompose),
        make_tool("g", result=lambda n, c: ToolResult.as_guaranteed_context(n, "sure")),
        make_tool("docs", result=lambda n, c: ToolResult.as_context(n, [doc("d", "x")])),
    ]
    with SqliteSaver.from_conn_string(str(path)) as saver:
        graph = graph_of(tools, checkpointer=saver)
        return ask(graph, "docs please", thread_id="rt")


def test_state_round_trips_through_sqlite_saver_with_types_intact(tmp_path: Path):
    path = tmp_path / "cp.db"
    out = _run_tree(path)
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False), serde=checkpoint_serde())
    values = stored_values(saver, {"configurable": {"thread_id": "rt"}})
    assert values is not None
    assert isinstance(values["tasks"]["1.1"], TaskNode)
    assert values["tasks"]["1.1"].task == out["task"].sub_tasks[0].model_copy(
        update={"sub_tasks": []}
    )
    assert isinstance(values["task"], TaskInfo)
    assert values["task"] == out["task"]
    assert all(isinstance(e, LedgerEntry) for e in values["ledger"])
    assert values["ledger"] == out["ledger"]
    assert isinstance(values["documents"][0], UniqueTextDocument)
    assert isinstance(values["context_buffer"]["1.1:g"][0], PromptAndContext)
    assert values["context_buffer"] == out["context_buffer"]
    assert values["activated"] == ["1.1:g", "1:docs"]


def test_state_types_read_back_without_unregistered_type_warnings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    path = tmp_path / "cp.db"
    _run_tree(path)
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False), serde=checkpoint_serde())
    with caplog.at_level(logging.WARNING):
        values = stored_values(saver, {"configurable": {"thread_id": "rt"}})
    assert values is not None
    assert isinstance(values["tasks"]["1"], TaskNode)
    assert "unregistered" not in caplog.text
    allowed = {name for _, name in checkpoint_allowlist()}
    assert {"TaskNode", "TaskInfo", "LedgerEntry", "Clarification", "UniqueTextDocument"} <= allowed


def test_state_loads_in_a_fresh_process(tmp_path: Path):
    path = tmp_path / "cp.db"
    _run_tree(path)
    script = textwrap.dedent(f"""
        from __future__ import annotations
        import sqlite3
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import START, StateGraph
        from toolweave.state.graph_state import GraphState
        from toolweave.state.serde import checkpoint_serde
        from toolweave.state.task import TaskInfo, TaskNode
        {{READER}}
        saver = SqliteSaver(sqlite3.connect({str(path)!r}), serde=checkpoint_serde())
        v = stored_values(saver, {{"configurable": {{"thread_id": "rt"}}}})
        assert isinstance(v["tasks"]["1.1"], TaskNode), type(v["tasks"]["1.1"])
        assert isinstance(v["task"], TaskInfo)
        print(v["task"].sub_tasks[0].owner_coordinator_name, v["activated"])
    """).replace("{READER}", inspect.getsource(stored_values))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "c ['1.1:g', '1:docs']"
