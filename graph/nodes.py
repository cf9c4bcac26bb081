"""One node, two bodies (sync for ``invoke``, native async for ``ainvoke``), traced like the ledger.

Every phase run is named "<phase> <task>" in LangSmith and in any LangChain tracer, with the
step's ledger as metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from langchain_core.runnables import Runnable
from langchain_core.tracers.base import BaseTracer
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langsmith.run_helpers import get_current_run_tree

from toolweave.graph.context import RunContext
from toolweave.graph.langgraph_private import RunnableCallable
from toolweave.graph.walk import current_task_no
from toolweave.state.documents import as_sentences, as_sources
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import ROOT_TASK_NO, TaskNode
from toolweave.tools.effects import Steps as Steps
from toolweave.tools.effects import adrive, drive
from toolweave.tools.memo import remembered

R = TypeVar("R")

StepFunction = Callable[[GraphState, Runtime[RunContext]], Steps[R]]

_COUNTERS = ("llm_calls", "deep_fallback_calls")
"""Keys summed by their reducer: adding 0 changes nothing, so a 0 is not written."""


def without_idle_counters(update: R) -> R:
    """``update`` without counter writes of 0 (PF1: every channel written costs a step work)."""
    if not isinstance(update, dict) or not any(update.get(key) == 0 for key in _COUNTERS):
        return update
    kept = {k: v for k, v in update.items() if not (k in _COUNTERS and type(v) is int and v == 0)}
    return cast("R", kept)


TRACE_TAG = "toolweave"
"""Tag of every phase run toolweave names."""

_PER_MESSAGE = frozenset({"normalize", "take_reply"})
"""Phases that work on the message, so on the root task, whatever the walk names."""


def _ledger_of(update: Any) -> list[LedgerEntry]:
    if not isinstance(update, Mapping):
        return []
    entries = update.get("ledger")
    entries = getattr(entries, "value", entries)  # an Overwrite
    return [e for e in entries or () if isinstance(e, LedgerEntry)]


def label_run(phase: str, state: Mapping[str, Any], update: Any) -> None:
    """Name the current node run "<phase> <task>" and add the step's ledger as metadata.

    The run is LangSmith's run tree when tracing is on, and the run of every LangChain tracer
    (``BaseTracer``) in the run's callbacks, so a tracer of one's own reads the same (L1).
    """
    runs = _traced_runs()
    if not runs:
        return
    task_no = ROOT_TASK_NO if phase in _PER_MESSAGE else current_task_no(state)
    name = f"{phase} {task_no}"
    metadata = _run_metadata(phase, task_no, update)
    for run in runs:
        run.name = name
        if TRACE_TAG not in (run.tags or []):
            run.tags = [*(run.tags or []), TRACE_TAG]
        if run.metadata is None:  # a tracer's run keeps its metadata under ``extra``
            run.extra = {**(run.extra or {}), "metadata": {}}
        run.metadata.update(metadata)


def _traced_runs() -> list[Any]:
    """The current node's runs: LangSmith's run tree and each callback tracer's run."""
    runs: list[Any] = []
    tree = get_current_run_tree()
    if tree is not None:
        runs.append(tree)
    try:
        manager = get_config().get("callbacks")
    except RuntimeError:  # outside a LangGraph run
        return runs
    run_id = getattr(manager, "parent_run_id", None)
    for handler in getattr(manager, "handlers", ()):
        if isinstance(handler, BaseTracer) and run_id is not None:
            run = handler.run_map.get(str(run_id))
            if run is not None and run is not tree:
                runs.append(run)
    return runs


def _run_metadata(phase: str, task_no: str, update: Any) -> dict[str, Any]:
    """The node run's metadata: phase, task, the tools and verdicts of its ledger (L1, R9)."""
    entries = _ledger_of(update)
    tools = list(dict.fromkeys(name for e in entries for name in (e.tool, *e.tools) if name))
    metadata: dict[str, Any] = {
        "phase": phase,
        "task_no": task_no,
        "tools": tools,
        "verdicts": [{"kind": str(e.kind), "tool": e.tool, "verdict": e.verdict} for e in entries],
    }
    if isinstance(update, Mapping) and update.get("sources") is not None:  # R9: the answer's
        metadata["sources"] = [
            {"document_id": s.document_id, "name": s.name, "pages": list(s.pages), "url": s.url}
            for s in as_sources(update["sources"])
        ]
        metadata["sentences"] = [  # R9: each sentence, its sources and its check
            {"text": s.text, "sources": list(s.sources), "supported": s.supported}
            for s in as_sentences(update.get("answer_sentences"))
        ]
    return metadata


def make_node(name: str, step: StepFunction[R]) -> Runnable[Any, Any]:
    """A LangGraph node whose sync and async bodies both run ``step``."""

    def sync_body(state: GraphState, runtime: Runtime[RunContext]) -> R:
        with remembered():  # PF1: a step's pure text functions run once per text (X6: dropped)
            update = without_idle_counters(drive(step(state, runtime)))
        label_run(name, state, update)
        return update

    async def async_body(state: GraphState, runtime: Runtime[RunContext]) -> R:
        with remembered():
            update = without_idle_counters(await adrive(step(state, runtime)))
        label_run(name, state, update)
        return update

    sync_body.__name__ = async_body.__name__ = name
    return RunnableCallable(sync_body, async_body, name=name, trace=False)


def make_pure_node(
    name: str, body: Callable[[GraphState, Runtime[RunContext]], R]
) -> Runnable[Any, Any]:
    """A node with no effect at all: both bodies run ``body`` inline (no thread)."""

    def step(state: GraphState, runtime: Runtime[RunContext]) -> Steps[R]:
        yield from ()
        return body(state, runtime)

    return make_node(name, step)


def entry(
    at: TaskNode | str | None,
    tool: str | None,
    kind: LedgerKind,
    verdict: str,
    reason: str,
    **fields: Any,
) -> LedgerEntry:
    """A ledger entry about ``tool`` on a task (its node or its number, L1)."""
    task_no = at.task_no if isinstance(at, TaskNode) else at
    return LedgerEntry(
        kind=kind, task_no=task_no, tool=tool, verdict=verdict, reason=reason, **fields
    )
