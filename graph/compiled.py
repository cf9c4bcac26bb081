"""The compiled graph :func:`toolweave.build_graph` returns: input checked before it is stored.

:class:`ToolweaveGraph` is LangGraph's ``CompiledStateGraph`` with one addition at
its two entry points, ``stream`` and ``astream`` (``invoke``, ``ainvoke``, ``batch``
and the event streams all go through them):

- the run input is checked by :func:`toolweave.graph.validation.validate_input`
  before LangGraph sees it (X1, X5), and a ``Command(resume=...)`` is checked
  against the question the thread is paused on, so a rejected input raises
  :class:`~toolweave.state.errors.InvalidRequestError` (or
  ``NothingPendingError``/``UnknownThreadError`` for a resume with nowhere to go)
  and the checkpoint stays exactly as it was;
- a new message on a thread whose last run stopped mid-way first finishes that
  run, or abandons it with a ledger entry (Q5, ``interrupted_runs``).

Copies made by ``with_config``/``copy`` (and by the LangGraph server) keep both.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, Literal, assert_never, cast

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.constants import START
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot

from toolweave.graph.context import Limits, RunContext
from toolweave.graph.pause import check_resume_for
from toolweave.graph.threads import (
    WHY,
    ThreadStatus,
    ThreadStatusKind,
    abandon_entry,
    status_of,
)
from toolweave.graph.validation import input_keys, validate_input
from toolweave.state.errors import NothingPendingError, UnknownThreadError
from toolweave.state.graph_state import GraphState, InputState, OutputState
from toolweave.state.serde import checkpoint_allowlist


@functools.cache
def _state_types() -> frozenset[tuple[str, ...]]:
    return frozenset(map(tuple, checkpoint_allowlist()))


InterruptedRuns = Literal["finish", "abandon"]
"""What a new message does to a run that stopped mid-way (Q5)."""

NO_THREAD = "no conversation is stored under thread {thread!r}"
NOT_WAITING = "thread {thread!r} is not waiting for a reply: {why}"
_CHECKPOINTER_KEY = "__pregel_checkpointer"
INTERRUPT = "__interrupt__"
"""The pending-write channel of an ``interrupt()`` (LangGraph's constant)."""
BRANCH_PREFIX = "branch:to:"
"""The trigger channel of a node a ``Command(goto=...)`` names (LangGraph's naming)."""
_FINISH_KWARGS = ("context", "durability")
"""Run options the finishing of an interrupted run shares with the new message's run."""


def _thread_config(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig | None
) -> RunnableConfig | None:
    """The run's config merged with the graph's, for a thread of a top-level run.

    ``None`` when there is no thread to protect: no checkpointer, no thread id, or
    a run as a subgraph (the parent owns the thread).
    """
    configurable = {
        **(graph.config or {}).get("configurable", {}),
        **(config or {}).get("configurable", {}),
    }
    saver = configurable.get(_CHECKPOINTER_KEY, graph.checkpointer)
    if not isinstance(saver, BaseCheckpointSaver) or not configurable.get("thread_id"):
        return None
    if configurable.get("checkpoint_ns"):
        return None
    return merge_configs(graph.config, config)


def may_have_pending_tasks(saved: CheckpointTuple) -> bool:
    """Whether a stored checkpoint may have steps left to run, paused questions aside.

    The cheap test before a full state read: a node has a task when one of its
    trigger channels (``__start__``, or the ``branch:to:<node>`` channel that a
    ``Command(goto=...)`` writes) holds a value of a version it has not seen. False means
    finished or paused on a question; True is confirmed by ``get_state``.
    """
    if any(write[1] == INTERRUPT for write in saved.pending_writes or ()):
        return False
    checkpoint = saved.checkpoint
    seen = checkpoint.get("versions_seen", {})
    values = checkpoint.get("channel_values", {})
    for channel, version in checkpoint.get("channel_versions", {}).items():
        if channel not in values:
            continue  # consumed (triggers are ephemeral: stored only while set)
        if channel == START:
            node = START
        elif channel.startswith(BRANCH_PREFIX):
            node = channel[len(BRANCH_PREFIX) :]
        else:
            continue
        known: Any = seen.get(node, {}).get(channel)
        if known is None or version > known:
            return True
    return False


def _finishing(config: RunnableConfig) -> RunnableConfig:
    """The config that finishes (or abandons) an interrupted run, without the caller's run id.

    LangGraph takes a run whose ``metadata["run_id"]`` matches the thread's latest
    checkpoint for a re-entry into that run and ignores its input; the LangGraph
    server sets that id, so the new message would be dropped after the finishing.
    """
    metadata = {k: v for k, v in (config.get("metadata") or {}).items() if k != "run_id"}
    finishing = cast("RunnableConfig", {k: v for k, v in config.items() if k != "run_id"})
    finishing["metadata"] = metadata
    return finishing


def _nested(config: RunnableConfig | None) -> bool:
    return bool((config or {}).get("configurable", {}).get("checkpoint_ns"))


def _check_resume(command: Command[Any], snapshot: StateSnapshot, limits: Limits) -> None:
    """A resume needs a pending question, and must fit it (Q2, X5)."""
    thread = str((snapshot.config.get("configurable") or {}).get("thread_id"))
    status = status_of(snapshot, thread)
    if status.kind is ThreadStatusKind.NEW:
        raise UnknownThreadError(NO_THREAD.format(thread=thread))
    if not snapshot.interrupts:
        raise NothingPendingError(NOT_WAITING.format(thread=thread, why=WHY[status.kind.value]))
    resume = command.resume
    by_id = {interrupt.id: interrupt.value for interrupt in snapshot.interrupts}
    if isinstance(resume, Mapping) and resume and all(key in by_id for key in resume):
        for key, value in resume.items():
            check_resume_for(by_id[key], value, limits)
        return
    for value in by_id.values():
        check_resume_for(value, resume, limits)


class ToolweaveGraph(CompiledStateGraph[GraphState, RunContext, InputState, OutputState]):
    """The orchestration graph: LangGraph's compiled graph with its input checked first."""

    def __init__(
        self,
        *,
        input_limits: Limits | None = None,
        interrupted_runs: InterruptedRuns = "finish",
        **kwargs: Any,
    ) -> None:
        """Take LangGraph's compiled-graph fields plus toolweave's two settings.

        Args:
            input_limits: The limits the input is checked against (X1).
            interrupted_runs: ``"finish"`` (default) or ``"abandon"`` a run that
                stopped mid-way when a new message arrives on its thread (Q5).
            **kwargs: ``CompiledStateGraph``'s fields.
        """
        allowlist = kwargs.pop("_serde_allowlist", None)
        super().__init__(**kwargs)
        # LangGraph's copy() (with_config, the server's copies) drops the msgpack
        # allowlist compile() computed; strict mode (LANGGRAPH_STRICT_MSGPACK=true)
        # then reads toolweave's state models back as dicts. Keep it, with every
        # type the state can hold (toolweave.state.serde).
        self._serde_allowlist = {*(allowlist or ()), *_state_types()}
        self.input_limits = input_limits or Limits()
        self.interrupted_runs: InterruptedRuns = interrupted_runs

    @classmethod
    def of(
        cls,
        compiled: CompiledStateGraph[GraphState, RunContext, InputState, OutputState],
        *,
        limits: Limits | None = None,
        interrupted_runs: InterruptedRuns = "finish",
    ) -> ToolweaveGraph:
        """The checked version of a graph compiled from :func:`create_state_graph`."""
        fields = {k: v for k, v in vars(compiled).items() if k != "__orig_class__"}
        return cls(input_limits=limits, interrupted_runs=interrupted_runs, **fields)

    def _checked_input(self, value: Any, config: RunnableConfig | None) -> Any:
        if _nested(config) and isinstance(value, Mapping):
            known = input_keys()  # a subgraph gets its parent's state: take what is ours
            value = {key: item for key, item in value.items() if key in known}
        return validate_input(value, self.input_limits)

    def _saver(self, config: RunnableConfig) -> BaseCheckpointSaver[Any]:
        """The run's checkpointer, reading with the graph's msgpack allowlist (strict mode)."""
        saver = (config.get("configurable") or {}).get(_CHECKPOINTER_KEY, self.checkpointer)
        assert isinstance(saver, BaseCheckpointSaver)
        with_allowlist = getattr(saver, "with_allowlist", None)  # langgraph-checkpoint >= 4
        return saver if with_allowlist is None else with_allowlist(self._serde_allowlist or ())

    def _needs_state(self, checked: Any, config: RunnableConfig) -> bool:
        """Whether the thread's state must be read before the run.

        A resume always is (it must fit the pending question); a message only
        when a run may have stopped mid-way (one checkpoint read, no state rebuilt).
        """
        if isinstance(checked, Command):
            return True
        merged = self._merged(config)
        saved = self._saver(merged).get_tuple(merged)
        return saved is not None and may_have_pending_tasks(saved)

    async def _aneeds_state(self, checked: Any, config: RunnableConfig) -> bool:
        if isinstance(checked, Command):
            return True
        merged = self._merged(config)
        saved = await self._saver(merged).aget_tuple(merged)
        return saved is not None and may_have_pending_tasks(saved)

    def _merged(self, config: RunnableConfig) -> RunnableConfig:
        return merge_configs(self.config, config) if self.config else config

    def _before(self, checked: Any, snapshot: StateSnapshot) -> ThreadStatus | None:
        """Check a resume; for a new message, the interrupted run to finish or abandon."""
        if isinstance(checked, Command):
            _check_resume(checked, snapshot, self.input_limits)
            return None
        thread = str((snapshot.config.get("configurable") or {}).get("thread_id"))
        status = status_of(snapshot, thread)
        return status if status.kind is ThreadStatusKind.INTERRUPTED_MID_RUN else None

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """LangGraph's ``stream``, after the input checks (X5) and Q5's finish-or-abandon."""
        checked = self._checked_input(input, config)
        thread_config = None if checked is None else _thread_config(self, config)
        if thread_config is not None and self._needs_state(checked, thread_config):
            snapshot = self.get_state(thread_config)
            interrupted = self._before(checked, snapshot)
            if interrupted is not None:
                self._settle(interrupted, thread_config, kwargs)
        yield from super().stream(checked, config, **kwargs)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """LangGraph's ``astream``, after the input checks (X5) and Q5's finish-or-abandon."""
        checked = self._checked_input(input, config)
        thread_config = None if checked is None else _thread_config(self, config)
        if thread_config is not None and await self._aneeds_state(checked, thread_config):
            snapshot = await self.aget_state(thread_config)
            interrupted = self._before(checked, snapshot)
            if interrupted is not None:
                await self._asettle(interrupted, thread_config, kwargs)
        async for chunk in super().astream(checked, config, **kwargs):
            yield chunk

    def _settle(self, status: ThreadStatus, config: RunnableConfig, kwargs: Any) -> None:
        match self.interrupted_runs:
            case "finish":
                options = {key: kwargs[key] for key in _FINISH_KWARGS if key in kwargs}
                self.invoke(None, _finishing(config), **options)
            case "abandon":
                entry = abandon_entry(status)
                self.update_state(_finishing(config), {"ledger": [entry]}, status.next[0])
            case _:
                assert_never(self.interrupted_runs)

    async def _asettle(self, status: ThreadStatus, config: RunnableConfig, kwargs: Any) -> None:
        match self.interrupted_runs:
            case "finish":
                options = {key: kwargs[key] for key in _FINISH_KWARGS if key in kwargs}
                await self.ainvoke(None, _finishing(config), **options)
            case "abandon":
                entry = abandon_entry(status)
                await self.aupdate_state(_finishing(config), {"ledger": [entry]}, status.next[0])
            case _:
                assert_never(self.interrupted_runs)
