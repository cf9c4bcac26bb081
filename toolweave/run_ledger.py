"""``explain``: the run ledger of a thread, or why one tool did (not) run (L1)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from toolweave.state.errors import InvalidRequestError, UnknownThreadError
from toolweave.state.ledger import LedgerEntry, entries_about

NO_THREAD = "no conversation is stored under thread {thread!r}"
NEEDS_THREAD = "explain(graph, ...) needs a thread id or a config naming one"
NOT_A_SOURCE = (
    "explain() takes a compiled graph (with a thread id), a state snapshot or the state "
    "values a run returned, not {kind}"
)


NO_LEDGER = (
    "the state of thread {thread!r} has no 'ledger': is it a graph of your own with toolweave's "
    "graph as a node? Declare `ledger: list[LedgerEntry]` in its state (or return the toolweave "
    "run's 'ledger' from the node that calls it) and explain(graph, thread) reads it; while the "
    "node waits on a question, its own state is read"
)


def as_ledger(entries: Iterable[Any]) -> list[LedgerEntry]:
    """Ledger entries as stored in a checkpoint (models, or dicts once downgraded)."""
    return [e if isinstance(e, LedgerEntry) else LedgerEntry.model_validate(e) for e in entries]


def _config(thread: str | RunnableConfig | None) -> RunnableConfig:
    if isinstance(thread, str):
        thread = {"configurable": {"thread_id": thread}}
    config: RunnableConfig | None = thread if isinstance(thread, Mapping) else None
    if config is None or not (config.get("configurable") or {}).get("thread_id"):
        raise InvalidRequestError(NEEDS_THREAD)
    return config


def _values(source: Any, thread: str | RunnableConfig | None) -> Mapping[str, Any]:
    if isinstance(source, StateSnapshot):
        return source.values
    if isinstance(source, Mapping):
        return source
    get_state = getattr(source, "get_state", None)
    if not callable(get_state):
        raise InvalidRequestError(NOT_A_SOURCE.format(kind=type(source).__name__))
    config = _config(thread)
    snapshot = get_state(config)
    thread_id = config["configurable"]["thread_id"]
    if not snapshot.values and snapshot.created_at is None:
        raise UnknownThreadError(NO_THREAD.format(thread=thread_id))
    if "ledger" in snapshot.values:
        return snapshot.values  # type: ignore[no-any-return]
    nested = _nested_values(get_state(config, subgraphs=True))
    if nested is None:
        raise InvalidRequestError(NO_LEDGER.format(thread=thread_id))
    return nested


def _nested_values(snapshot: StateSnapshot) -> Mapping[str, Any] | None:
    """The values of the first node's state that has a ledger: a paused toolweave node (L1)."""
    for task in snapshot.tasks:
        if isinstance(task.state, StateSnapshot):
            if "ledger" in task.state.values:
                return task.state.values
            if (deeper := _nested_values(task.state)) is not None:
                return deeper
    return None


def explain(
    source: Any, thread: str | RunnableConfig | None = None, *, tool: str | None = None
) -> list[LedgerEntry]:
    """The ledger of a thread's latest run (L1), or the entries about one tool.

    Args:
        source: A compiled graph with a checkpointer (then ``thread`` names the thread), a
            ``StateSnapshot``, or the state values a run returned.
        thread: The thread id, or a config naming it; only with a graph.
        tool: A tool's name: only the entries that concern it, each narrowed to it, which
            answers "why did this tool (not) run?"; empty: nothing in the run concerned it.

    Returns:
        The entries in the order the run made them.

    Raises:
        UnknownThreadError: The graph has nothing stored under the thread.
        InvalidRequestError: ``source`` is none of the above, or no thread is named.
    """
    ledger = as_ledger(_values(source, thread).get("ledger") or [])
    return ledger if tool is None else entries_about(ledger, tool)
