"""The compiled graph :func:`toolweave.build_graph` returns: input checked before it is stored."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Literal, assert_never, cast

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs, var_child_runnable_config
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.constants import START
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot
from pydantic import BaseModel

from toolweave.graph.agent_tool import AGENT_TOOL_DESCRIPTION, AGENT_TOOL_NAME, as_agent_tool
from toolweave.graph.context import Limits, RunContext
from toolweave.graph.idempotency import (
    answered_already,
    carries_ids,
    custom_chunk,
    is_resend,
    last_human_index,
    may_repeat,
    mode_chunk,
    one_human_message,
    recorded_effects,
    repeated_while_paused,
    repeats_the_last_question,
    say_what_acted,
    sent_again,
    stored_messages,
)
from toolweave.graph.langgraph_private import (
    CHECKPOINTER_CONFIG_KEY,
    INTERRUPT,
    SERDE_ALLOWLIST,
    AllowlistedCheckpoints,
    allowlisted,
    checkpointer_of,
    copy_fields,
    serde_allowlist,
    set_serde_allowlist,
    triggered_node,
)
from toolweave.graph.pause import check_resume_for
from toolweave.graph.run_lock import (
    Key,
    ThreadLocks,
    aheld_in_database,
    aholding,
    held_by_caller,
    held_in_database,
    holding,
    thread_key,
)
from toolweave.graph.threads import (
    NO_THREAD,
    NOT_WAITING,
    WHY,
    ThreadStatus,
    ThreadStatusKind,
    abandon_updates,
    status_of,
)
from toolweave.graph.validation import check_config, check_context, input_keys, validate_input
from toolweave.state.errors import InvalidRequestError, NothingPendingError, UnknownThreadError
from toolweave.state.events import SentAgainEvent
from toolweave.state.graph_state import ActedCall, GraphState, InputState, OutputState
from toolweave.state.run_scope import Deadline, RunScope, aiterate_in, iterate_in
from toolweave.state.secrets import secret_values, secrets_of
from toolweave.state.serde import checkpoint_allowlist
from toolweave.tools.effects import Call, Steps, adrive, call, drive, perform
from toolweave.tools.progress import stream_sink
from toolweave.tools.texts import Texts


@functools.cache
def _state_types() -> frozenset[tuple[str, ...]]:
    return frozenset(map(tuple, checkpoint_allowlist()))


InterruptedRuns = Literal["finish", "abandon"]
"""What a new message does to a run that stopped mid-way (Q5)."""

NO_INPUT = (
    "the input is None, which only continues a stored thread's run, and there is none "
    "({where}); send a message such as {{'messages': [('human', '...')]}}"
)
NESTED_NO_MESSAGES = (
    "toolweave's graph is a node of a graph whose state has no 'messages': as a node it reads "
    "its parent's 'messages' (and 'systems', 'user_data'); give the parent's state a 'messages' "
    "key (Annotated[list[AnyMessage], add_messages]), or call the graph from a node of your own "
    "with {'messages': [('human', question)]}"
)
_FINISH_KWARGS = ("context", "durability")
"""Run options the finishing of an interrupted run shares with the new message's run."""


def _thread_config(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig | None
) -> RunnableConfig | None:
    """The run's config merged with the graph's for a top-level run's thread, else ``None``."""
    configurable = _configurable(graph, config)
    saver = checkpointer_of(configurable, graph.checkpointer)
    if not isinstance(saver, BaseCheckpointSaver) or not configurable.get("thread_id"):
        return None
    return None if configurable.get("checkpoint_ns") else merge_configs(graph.config, config)


def _configurable(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig | None
) -> dict[str, Any]:
    """The graph's ``configurable`` updated with the run's."""
    return {
        **(graph.config or {}).get("configurable", {}),
        **(config or {}).get("configurable", {}),
    }


def may_have_pending_tasks(saved: CheckpointTuple) -> bool:
    """Whether a stored checkpoint may have steps left to run, paused questions aside."""
    if any(write[1] == INTERRUPT for write in saved.pending_writes or ()):
        return False
    checkpoint = saved.checkpoint
    seen = checkpoint.get("versions_seen", {})
    values = checkpoint.get("channel_values", {})
    for channel, version in checkpoint.get("channel_versions", {}).items():
        if channel not in values:
            continue  # consumed (triggers are ephemeral: stored only while set)
        node = START if channel == START else triggered_node(channel)
        if node is None:
            continue
        known: Any = seen.get(node, {}).get(channel)
        if known is None or version > known:
            return True
    return False


def up_to_the_question(messages: list[Any]) -> list[Any]:
    """A parent's messages up to its last human one: the question of a nested run (S5).

    What follows it is the parent's (a note of its own, or the answer it already has to a
    message sent again, which its ``add_messages`` put back in place), not the question.
    """
    last = last_human_index(messages)
    if last < 0 or not all(isinstance(m, BaseMessage) for m in messages[last + 1 :]):
        return messages
    return messages[: last + 1]


def nested_namespaces(saved: Iterable[CheckpointTuple]) -> list[str]:
    """The namespaces of a thread's nested toolweave runs in which a tool acted (S5, Q6).

    A run in which a tool acted holds the ``acted_on`` channel from that step on: only
    those runs' states are read.
    """
    found = (
        (str(one.config["configurable"].get("checkpoint_ns") or ""), one.checkpoint)
        for one in saved
    )
    return list(
        dict.fromkeys(ns for ns, cp in found if ns and "acted_on" in cp.get("channel_values", {}))
    )


LISTING_ATTEMPTS = 3
"""Listings of a thread's checkpoints tried while the parent saves its own (InMemorySaver)."""


def listed_namespaces(saver: BaseCheckpointSaver[Any], thread: str) -> list[str]:
    """:func:`nested_namespaces` of ``thread``, listed again if a save changed it meanwhile.

    The parent's run saves its previous step in the background (durability ``"async"``)
    while its toolweave node lists the thread; an in-memory saver's listing then fails with
    "dictionary changed size during iteration". What was saved before the node started is
    listed either way.
    """
    for attempt in range(LISTING_ATTEMPTS):
        try:
            return nested_namespaces(saver.list({"configurable": {"thread_id": thread}}))
        except RuntimeError:
            if attempt == LISTING_ATTEMPTS - 1:
                raise
    return []  # pragma: no cover - the loop returns or raises


def nested_config(saver: BaseCheckpointSaver[Any], thread: str, namespace: str) -> RunnableConfig:
    """The config that reads the state of a nested run in ``namespace`` of ``thread``."""
    configurable = {
        "thread_id": thread,
        "checkpoint_ns": namespace,
        CHECKPOINTER_CONFIG_KEY: saver,  # read here, not looked up as one of its subgraphs
    }
    return cast("RunnableConfig", {"configurable": configurable})


def _thread_of(config: RunnableConfig) -> str:
    return str((config.get("configurable") or {}).get("thread_id") or "")


def _finishing(config: RunnableConfig) -> RunnableConfig:
    """The config that finishes an interrupted run, without a run id (LangGraph: a re-entry)."""
    metadata = {k: v for k, v in (config.get("metadata") or {}).items() if k != "run_id"}
    kept = {k: v for k, v in config.items() if k != "run_id"}
    return cast("RunnableConfig", {**kept, "metadata": metadata})


def _continues_a_checkpoint(value: Any, config: RunnableConfig | None) -> bool:
    """Whether a run continues a stored checkpoint: ``None`` as input, or a resume naming one."""
    if _nested(config):
        return False
    named = bool((config or {}).get("configurable", {}).get("checkpoint_id"))
    return value is None or (isinstance(value, Command) and named)


def _inherited(config: RunnableConfig | None) -> RunnableConfig | None:
    """``config``, or inside a node called without one, the node's (as LangGraph reads it)."""
    return var_child_runnable_config.get() if config is None else config


def _nested(config: RunnableConfig | None) -> bool:
    return bool((config or {}).get("configurable", {}).get("checkpoint_ns"))


def _run_user_data(checked: Any, context: Any) -> tuple[list[Any], frozenset[str], bool]:
    """The ``user_data`` a run brings, its secret keys, and whether the thread's is the run's."""
    if isinstance(context, Mapping):  # the LangGraph server passes the context as a dict
        data, marked = context.get("user_data"), context.get("secret_keys")
    else:
        data, marked = getattr(context, "user_data", None), getattr(context, "secret_keys", None)
    brought = [] if data is None else [data]
    if isinstance(checked, Mapping) and "user_data" in checked:
        brought.append(checked["user_data"])
        return brought, frozenset(marked or ()), False
    return brought, frozenset(marked or ()), data is None


def _stored_user_data(snapshot: StateSnapshot | None, saved: CheckpointTuple | None) -> Any:
    """The ``user_data`` a thread holds, from its state or its latest checkpoint."""
    if snapshot is not None:
        return snapshot.values.get("user_data")
    return None if saved is None else saved.checkpoint["channel_values"].get("user_data")


class MermaidDisplay:
    """A mixin for a LangGraph graph: Jupyter's display, offline, as Mermaid text (N1).

    LangGraph's own display fetches a PNG from a web service; this one needs no network.
    """

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The graph as Mermaid in Markdown, and its ``repr`` (no PNG, no web service)."""
        diagram = self.get_graph().draw_mermaid()  # type: ignore[attr-defined]
        return {"text/plain": repr(self), "text/markdown": f"```mermaid\n{diagram}\n```"}


class ToolweaveGraph(
    MermaidDisplay,
    AllowlistedCheckpoints,
    CompiledStateGraph[GraphState, RunContext, InputState, OutputState],
):
    """The orchestration graph: LangGraph's compiled graph with its input checked first."""

    def __init__(
        self,
        *,
        input_limits: Limits | None = None,
        interrupted_runs: InterruptedRuns = "finish",
        build_secrets: frozenset[str] = frozenset(),
        run_locks: ThreadLocks | None = None,
        acts: bool | None = None,
        domain: str | None = None,
        texts: Texts | None = None,
        **kwargs: Any,
    ) -> None:
        """Take LangGraph's compiled-graph fields plus toolweave's settings.

        Args:
            input_limits: The limits the input is checked against (X1).
            interrupted_runs: ``"finish"`` (default) or ``"abandon"`` a run that
                stopped mid-way when a new message arrives on its thread (Q5).
            build_secrets: Secret values known when the graph was built (its
                assistant's API key): in every run's scope (X4, X6).
            run_locks: The locks of its threads, shared with the graph it is a copy
                of: one run at a time per thread (:mod:`toolweave.graph.run_lock`).
            acts: Whether a tool of the graph acts (``side_effects``): a nested run
                (a parent graph's node) then looks up the calls the thread's earlier
                runs of it made (S5, Q6). ``None`` (not known): it looks them up.
            domain: The domain's name, which its answer messages carry: nested, an answer
                of another domain's graph does not answer its question (S5).
            texts: The domain's own sentences for people (``Domain.texts``): what a
                repeat of a message whose run acted is told (S5).
            **kwargs: ``CompiledStateGraph``'s fields.
        """
        allowlist = {*(kwargs.pop(SERDE_ALLOWLIST, None) or ()), *_state_types()}
        super().__init__(**kwargs)
        # copy() drops compile()'s msgpack allowlist; strict mode would read the state as dicts
        set_serde_allowlist(self, allowlist)
        self.input_limits = input_limits or Limits()
        self.interrupted_runs: InterruptedRuns = interrupted_runs
        self.build_secrets = build_secrets
        self.run_locks = run_locks or ThreadLocks()
        self.acts = acts
        self.domain = domain
        self.texts = texts

    @classmethod
    def of(
        cls,
        compiled: CompiledStateGraph[GraphState, RunContext, InputState, OutputState],
        *,
        limits: Limits | None = None,
        interrupted_runs: InterruptedRuns = "finish",
        build_secrets: frozenset[str] = frozenset(),
        acts: bool | None = None,
        domain: str | None = None,
        texts: Texts | None = None,
    ) -> ToolweaveGraph:
        """The checked version of a graph compiled from :func:`create_state_graph`."""
        return cls(
            input_limits=limits,
            interrupted_runs=interrupted_runs,
            build_secrets=build_secrets,
            acts=acts,
            domain=domain,
            texts=texts,
            **copy_fields(compiled),
        )

    def as_tool(
        self,
        args_schema: type[BaseModel] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_types: dict[str, type] | None = None,
    ) -> BaseTool:
        """The graph as an agent's tool (``as_agent_tool``); with arguments, ``as_tool``."""
        if args_schema is not None or arg_types is not None:
            return super().as_tool(
                args_schema, name=name, description=description, arg_types=arg_types
            )
        return as_agent_tool(
            self, name=name or AGENT_TOOL_NAME, description=description or AGENT_TOOL_DESCRIPTION
        )

    def _check_run_context(self, config: RunnableConfig | None, kwargs: Mapping[str, Any]) -> None:
        """The run context is where LangGraph reads it, with known keys (T4, N3, X5)."""
        if not _nested(config):
            check_config(self.config, config)
            check_context(kwargs.get("context"))

    def _checked_input(self, value: Any, config: RunnableConfig | None) -> Any:
        if _nested(config) and isinstance(value, Mapping):
            known = input_keys()  # a subgraph gets its parent's state: take what is ours
            value = {key: item for key, item in value.items() if key in known}
            if "messages" not in value:
                raise InvalidRequestError(NESTED_NO_MESSAGES)
            if isinstance(messages := value["messages"], list):
                value["messages"] = up_to_the_question(messages)
        return validate_input(value, self.input_limits)

    def _saved(self, config: RunnableConfig) -> Steps[CheckpointTuple | None]:
        """The latest checkpoint, read with the graph's msgpack allowlist (strict mode)."""
        found = checkpointer_of(config.get("configurable") or {}, self.checkpointer)
        assert isinstance(found, BaseCheckpointSaver)
        saver = allowlisted(found, serde_allowlist(self) or ())
        return perform(call(saver.get_tuple, saver.aget_tuple, config))

    def _before(self, checked: Any, snapshot: StateSnapshot) -> ThreadStatus | None:
        """Check a resume against its question (Q2, X5); for a message, Q5's finish-or-abandon."""
        thread = _thread_of(snapshot.config)
        status = status_of(snapshot, thread)
        if not isinstance(checked, Command):
            return status if status.kind is ThreadStatusKind.INTERRUPTED_MID_RUN else None
        if status.kind is ThreadStatusKind.NEW:
            raise UnknownThreadError(NO_THREAD.format(thread=thread))
        if not snapshot.interrupts:
            raise NothingPendingError(NOT_WAITING.format(thread=thread, why=WHY[status.kind.value]))
        resume: Any = checked.resume  # one value, or one per interrupt id
        by_id = {interrupt.id: interrupt.value for interrupt in snapshot.interrupts}
        keyed = isinstance(resume, Mapping) and resume and all(key in by_id for key in resume)
        for key, value in resume.items() if keyed else ((key, resume) for key in by_id):
            check_resume_for(by_id[key], value, self.input_limits)
        return None

    def _prepare(
        self, input: Any, config: RunnableConfig | None, kwargs: dict[str, Any]
    ) -> Steps[tuple[Any, RunScope, SentAgainEvent | None]]:
        """The checked input, the run's scope, and a repeat after its run acted (S5), Q5 first."""
        config = _inherited(config)
        self._check_run_context(config, kwargs)
        checked = self._checked_input(input, config)
        if checked is None and not _nested(config):
            yield from self._require_a_run_to_finish(config)
        thread_config = None if checked is None else _thread_config(self, config)
        saved: CheckpointTuple | None = None
        snapshot: StateSnapshot | None = None
        again: SentAgainEvent | None = None
        read_once = False
        if thread_config is not None:
            # one checkpoint read decides whether the state is read, and gives the user_data
            read_once = not isinstance(checked, Command)
            if read_once:
                saved = yield from self._saved(thread_config)
                if saved is not None:
                    checked, snapshot, again = yield from self._resent(
                        checked, thread_config, saved
                    )
            if isinstance(checked, Command) or (
                checked is not None and saved is not None and may_have_pending_tasks(saved)
            ):
                snapshot = snapshot or (yield from self._snapshot(thread_config))
                interrupted = self._before(checked, snapshot)
                if interrupted is not None and self._retries(checked, snapshot):
                    checked = None  # S5: the stopped run's own question again: finish it
                elif interrupted is not None:
                    yield from self._settle(interrupted, thread_config, kwargs)
        data, marked, stored = _run_user_data(checked, kwargs.get("context"))
        if stored:  # the thread's user_data: from a read above, or one read now
            if snapshot is None and not read_once:
                read = thread_config or _thread_config(self, config)
                saved = None if read is None else (yield from self._saved(read))
            data.append(_stored_user_data(snapshot, saved))
        scope = self._run_scope(data, marked, kwargs.get("context"))
        return checked, (yield from self._with_recorded(scope, input, config)), again

    def _with_recorded(
        self, scope: RunScope, value: Any, config: RunnableConfig | None
    ) -> Steps[RunScope]:
        """``scope``, for a run continuing a stored checkpoint with the calls it must not make."""
        if _nested(config) and self.acts is not False:  # a parent's node: the thread's runs
            return replace(scope, recorded=(yield from self._nested_recorded(config)))
        if not _continues_a_checkpoint(value, config):
            return scope
        return replace(scope, recorded=(yield from self._recorded(config)))  # S5, Q6

    def _recorded(self, config: RunnableConfig | None) -> Steps[dict[str, ActedCall]]:
        """The calls of tools that acted that all the thread's checkpoints record, by key (S5)."""
        thread_config = _thread_config(self, config)
        if thread_config is None:
            return {}
        configurable = dict(thread_config.get("configurable") or {})
        configurable.pop("checkpoint_id", None)  # the whole thread, the run's checkpointer kept
        history = cast("RunnableConfig", {**thread_config, "configurable": configurable})
        stored = yield from perform(
            Call(
                lambda: [s.values for s in self.get_state_history(history)],
                lambda: self._ahistory(history),
            )
        )
        return recorded_effects(stored)

    def _nested_recorded(self, config: RunnableConfig | None) -> Steps[dict[str, ActedCall]]:
        """The calls that acted that this graph's runs nested in the thread recorded (S5, Q6).

        A parent graph's node starts a fresh run of this graph for each of its own runs, in
        a namespace of its own: the same message sent again, or a run retried after a crash,
        finds the earlier run's call under the same key there, and it is not made again.
        """
        configurable = (config or {}).get("configurable") or {}
        found = checkpointer_of(configurable, self.checkpointer)
        thread = configurable.get("thread_id")
        if not isinstance(found, BaseCheckpointSaver) or not thread:
            return {}
        saver = allowlisted(found, serde_allowlist(self) or ())
        stored = yield from perform(
            Call(
                lambda: self._nested_states(saver, str(thread)),
                lambda: self._anested_states(saver, str(thread)),
            )
        )
        return recorded_effects(stored)

    def _nested_states(self, saver: BaseCheckpointSaver[Any], thread: str) -> list[dict[str, Any]]:
        namespaces = listed_namespaces(saver, thread)
        return [self.get_state(nested_config(saver, thread, ns)).values for ns in namespaces]

    async def _anested_states(
        self, saver: BaseCheckpointSaver[Any], thread: str
    ) -> list[dict[str, Any]]:
        listed = [saved async for saved in saver.alist({"configurable": {"thread_id": thread}})]
        namespaces = nested_namespaces(listed)
        return [
            (await self.aget_state(nested_config(saver, thread, ns))).values for ns in namespaces
        ]

    async def _ahistory(self, config: RunnableConfig) -> list[dict[str, Any]]:
        return [snapshot.values async for snapshot in self.aget_state_history(config)]

    def _resent(
        self, checked: Any, config: RunnableConfig, saved: CheckpointTuple
    ) -> Steps[tuple[Any, StateSnapshot | None, SentAgainEvent | None]]:
        """``None`` for a message repeating one of its run (continued), and the state read (S5)."""
        paused = any(write[1] == INTERRUPT for write in saved.pending_writes or ())
        again = not paused and self._may_be_sent_again(checked, saved)
        if not again and not carries_ids(checked) and not (paused and one_human_message(checked)):
            return checked, None, None
        snapshot = yield from self._snapshot(config)
        values = snapshot.values
        if (
            again
            and (repeat := sent_again(checked, values, _thread_of(config), self.texts)) is not None
        ):
            return None, snapshot, repeat
        if is_resend(checked, stored_messages(values)):
            return None, snapshot, None
        if paused and repeated_while_paused(checked, values):
            return None, snapshot, None
        return checked, snapshot, None

    def _may_be_sent_again(self, checked: Any, saved: CheckpointTuple) -> bool:
        """Whether one message may repeat the last one of a finished run that acted (S5, Q6)."""
        if not one_human_message(checked) or may_have_pending_tasks(saved):
            return False
        return may_repeat(checked, saved.checkpoint.get("channel_values", {}))

    def _snapshot(self, config: RunnableConfig) -> Steps[StateSnapshot]:
        return perform(Call(lambda: self.get_state(config), lambda: self.aget_state(config)))

    def _retries(self, checked: Any, snapshot: StateSnapshot) -> bool:
        """A message repeating the stopped run's question, finished rather than asked again."""
        stored = stored_messages(snapshot.values)
        return self.interrupted_runs == "finish" and repeats_the_last_question(checked, stored)

    def _require_a_run_to_finish(self, config: RunnableConfig | None) -> Steps[None]:
        """``None`` as input finishes a stored thread's run; anywhere else it is no request (X1)."""
        thread_config = _thread_config(self, config)
        saved = None if thread_config is None else (yield from self._saved(thread_config))
        if saved is None:
            where = (
                "no checkpointer or thread id"
                if thread_config is None
                else NO_THREAD.format(thread=thread_config["configurable"]["thread_id"])
            )
            raise InvalidRequestError(NO_INPUT.format(where=where))

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """LangGraph's ``stream``, after the input checks (X5) and Q5's finish-or-abandon (X6)."""
        if (answered := self._answered(input, config, kwargs)) is not None:
            yield from answered  # a nested turn answered already: no run (S5, Q6)
            return
        key, saver = self._run_key(config)
        wait = self.input_limits.thread_wait_s
        with holding(self.run_locks, key, wait, saver):  # one run per thread (S5)
            checked, scope, again = drive(self._prepare(input, config, kwargs))
            if again is not None and (notice := self._notice(again, kwargs)) is not None:
                yield notice
            try:
                yield from iterate_in(scope, super().stream(checked, config, **kwargs))
            except Exception as exc:  # S5: said, and raised on
                if key is None:  # no checkpointer keeps the run: a retry would act again
                    say_what_acted(exc, scope.acted)
                raise

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """LangGraph's ``astream``, after the input checks (X5) and Q5's finish-or-abandon (X6)."""
        if (answered := self._answered(input, config, kwargs)) is not None:
            for chunk in answered:  # a nested turn answered already: no run (S5, Q6)
                yield chunk
            return
        key, saver = self._run_key(config)
        wait = self.input_limits.thread_wait_s
        async with aholding(self.run_locks, key, wait, saver):  # one run a thread (S5)
            checked, scope, again = await adrive(self._prepare(input, config, kwargs))
            if again is not None and (notice := self._notice(again, kwargs)) is not None:
                yield notice
            try:
                async for chunk in aiterate_in(scope, super().astream(checked, config, **kwargs)):
                    yield chunk
            except Exception as exc:  # S5: said, and raised on
                if key is None:  # no checkpointer keeps the run: a retry would act again
                    say_what_acted(exc, scope.acted)
                raise

    def _answered(
        self, input: Any, config: RunnableConfig | None, kwargs: Mapping[str, Any]
    ) -> list[Any] | None:
        """The chunks of a nested run whose turn the parent's messages answer, else ``None``."""
        messages = input.get("messages") if isinstance(input, Mapping) else None
        if not _nested(_inherited(config)) or not isinstance(messages, list):
            return None
        output = answered_already(messages, self.domain)
        if output is None:
            return None
        chunk = mode_chunk(
            "values",
            output,
            kwargs.get("stream_mode") or self.stream_mode,
            subgraphs=bool(kwargs.get("subgraphs")),
            version=str(kwargs.get("version") or "v1"),
        )
        return [] if chunk is None else [chunk]

    def _notice(self, again: SentAgainEvent, kwargs: Mapping[str, Any]) -> Any | None:
        """The custom stream chunk saying a message was sent again (S5, Q6), if streamed."""
        return custom_chunk(
            again,
            kwargs.get("stream_mode") or self.stream_mode,
            subgraphs=bool(kwargs.get("subgraphs")),
            version=str(kwargs.get("version") or "v1"),
        )

    @contextmanager
    def holding_thread(self, config: RunnableConfig | None) -> Iterator[None]:
        """Hold the config's thread as a run does: wait for its run in flight first (S5, Q2).

        ``reply`` reads the thread's status inside it, so a reply sent while another reply's
        run still goes reads that run's outcome, not a step it has not saved yet.
        """
        key, saver = self._run_key(config)
        with holding(self.run_locks, key, self.input_limits.thread_wait_s, saver):
            yield

    def thread_running(self, config: RunnableConfig) -> bool:
        """Whether a run of this process (this graph or a copy) holds the config's thread (Q5)."""
        key, _ = self._run_key(config)
        return key is not None and self.run_locks.busy(key)

    def thread_running_elsewhere(self, config: RunnableConfig) -> bool:
        """Whether a run of another process (or graph) holds the config's thread (Q5).

        Told by the checkpointer's database (PostgreSQL's advisory lock); ``False`` for
        another checkpointer, or when the caller itself holds the thread.
        """
        key, saver = self._run_key(config)
        return key is not None and not held_by_caller(key) and held_in_database(saver, key[1])

    async def athread_running_elsewhere(self, config: RunnableConfig) -> bool:
        """Async :meth:`thread_running_elsewhere`."""
        key, saver = self._run_key(config)
        if key is None or held_by_caller(key):
            return False
        return await aheld_in_database(saver, key[1])

    def _run_key(self, config: RunnableConfig | None) -> tuple[Key | None, object]:
        """The thread a run holds, and its checkpointer (:mod:`toolweave.graph.run_lock`)."""
        configurable = _configurable(self, config)
        saver = checkpointer_of(configurable, self.checkpointer)
        if not isinstance(saver, BaseCheckpointSaver):
            return None, None
        return thread_key(saver, configurable), saver

    def _run_scope(self, user_data: list[Any], marked: frozenset[str], context: Any) -> RunScope:
        """The scope of one run: its deadline from now, its secrets, its progress sink (X6)."""
        seconds = self.input_limits.run_deadline_s
        assistant = getattr(context, "assistant", None)
        secrets = (self.build_secrets | secrets_of(assistant)).union(
            *(secret_values(data, marked) for data in user_data if isinstance(data, Mapping))
        )
        return RunScope(
            deadline=None if seconds is None else Deadline.after(seconds),
            secrets=secrets,
            progress=stream_sink,
        )

    def _settle(self, status: ThreadStatus, config: RunnableConfig, kwargs: Any) -> Steps[object]:
        finishing = _finishing(config)
        match self.interrupted_runs:
            case "finish":
                options = {key: kwargs[key] for key in _FINISH_KWARGS if key in kwargs}
                effect: Call[object] = Call(
                    lambda: self.invoke(None, finishing, **options),
                    lambda: self.ainvoke(None, finishing, **options),
                )
            case "abandon":
                updates = abandon_updates(status)
                effect = call(self.bulk_update_state, self.abulk_update_state, finishing, updates)
            case _:
                assert_never(self.interrupted_runs)
        return (yield from perform(effect))
