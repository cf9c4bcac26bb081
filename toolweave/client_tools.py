"""The Python side of client tools (W4): implementations by tool id, and a driver for runs.

A notebook, a test or a desktop app answers client-tool calls as the web page does::

    client = ClientToolRegistry()
    client.register("example-tool", lambda input: json.dumps("done"))
    result = run_with_client_tools(graph, {"messages": [("human", "...")]}, config, client)
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt

from toolweave.graph.langgraph_private import INTERRUPT
from toolweave.graph.threads import thread_id_of
from toolweave.pauses import client_answers
from toolweave.state.client_calls import CLIENT_TOOL_RESULTS, parse_results
from toolweave.state.client_calls import ClientToolResultError as ClientToolResultError
from toolweave.state.errors import (
    InvalidRequestError,
    NothingPendingError,
    ToolweaveError,
    UnknownThreadError,
)
from toolweave.state.pauses import ClientCalls, is_pause_payload, pause_of
from toolweave.tools.effects import Call, Steps, adrive, drive, perform

logger = logging.getLogger(__name__)

ClientToolFn = Callable[[str], str] | Callable[[str], Awaitable[str]]
"""A client implementation: ``execute(input: str) -> str``, sync or async."""

NO_IMPLEMENTATION = "no client implementation is registered for tool {tool!r}"
RAISED = "the client implementation raised {error}"
DEFAULT_MAX_ROUNDS = 16


class ClientToolLoopError(ToolweaveError, RuntimeError):
    """A run kept asking for client tools beyond the driver's round limit (X3)."""


class ClientToolRegistry:
    """Client-side implementations of AI tools by tool id (W4)."""

    def __init__(self) -> None:
        self._fns: dict[str, ClientToolFn] = {}

    def register(self, tool_id: str, fn: ClientToolFn) -> ClientToolFn:
        """Register ``fn`` for ``tool_id``; a later one replaces an earlier one, with a warning."""
        if not isinstance(tool_id, str) or not tool_id.strip():
            raise InvalidRequestError("a client tool needs a non-empty tool id")
        if not callable(fn):
            raise InvalidRequestError(f"the client implementation of {tool_id!r} is not callable")
        if tool_id in self._fns:
            logger.warning(
                "client tool %r: implementation replaced (last registered wins)", tool_id
            )
        self._fns[tool_id] = fn
        return fn

    def implements(self, tool_id: str) -> Callable[[ClientToolFn], ClientToolFn]:
        """Decorator form of :meth:`register`."""
        return lambda fn: self.register(tool_id, fn)

    def ids(self) -> list[str]:
        """The implemented tool ids, as announced in the run input (``client_tools``)."""
        return list(self._fns)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._fns

    def _call_steps(self, call: Mapping[str, Any]) -> Steps[dict[str, str]]:
        """One call, written once: a missing or raising implementation is an ``error`` result."""
        call_id = str(call.get("call_id"))
        fn = self._fns.get(str(call.get("tool_id")))
        if fn is None:
            return {"call_id": call_id, "error": NO_IMPLEMENTATION.format(tool=call.get("tool_id"))}
        text = str(call.get("input", ""))
        try:
            output = yield from perform(
                Call(lambda: _settled(fn(text)), lambda: _awaited(fn(text)))
            )
        except Exception as exc:  # a client tool's failure is reported to the run, not raised
            logger.warning("client tool %s raised", call.get("tool_id"), exc_info=True)
            return {"call_id": call_id, "error": RAISED.format(error=repr(exc))}
        if not isinstance(output, str):
            return {"call_id": call_id, "error": f"returned {type(output).__name__}, not text"}
        return {"call_id": call_id, "output": output}

    def run_call(self, call: Mapping[str, Any]) -> dict[str, str]:
        """Run one call; a missing implementation or a raising one becomes an ``error`` result."""
        if inspect.iscoroutinefunction(self._fns.get(str(call.get("tool_id")))):
            _no_running_loop()
        return drive(self._call_steps(call))

    async def arun_call(self, call: Mapping[str, Any]) -> dict[str, str]:
        """Async :meth:`run_call`: awaits async implementations, runs sync ones in place."""
        return await adrive(self._call_steps(call))

    def answer(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The resume value for a ``client_tool_calls`` payload: every call run, in order."""
        calls = payload.get("calls") or []
        return {"type": CLIENT_TOOL_RESULTS, "results": [self.run_call(c) for c in calls]}

    async def aanswer(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Async :meth:`answer`; the calls run concurrently."""
        calls = payload.get("calls") or []
        done = await asyncio.gather(*(self.arun_call(c) for c in calls))
        return {"type": CLIENT_TOOL_RESULTS, "results": list(done)}


def _no_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise InvalidRequestError(
        "an async client tool was called from a running event loop: use arun_with_client_tools"
    )


async def _awaited(output: Any) -> Any:
    return await output if inspect.isawaitable(output) else output


def _settled(output: Any) -> Any:
    """A sync implementation's output, an async one's run to the end."""
    return asyncio.run(_awaited(output)) if inspect.isawaitable(output) else output


def is_client_tool_request(value: Any) -> bool:
    """Whether an interrupt value is a pause this driver answers: client-tool calls (W3)."""
    return is_pause_payload(value) and client_answers(value)


def _client_interrupts(result: Any) -> list[Interrupt]:
    interrupts = result.get(INTERRUPT) if isinstance(result, Mapping) else None
    return [i for i in interrupts or () if is_client_tool_request(i.value)]


def _resume(ids: Sequence[str], values: Sequence[dict[str, Any]]) -> Any:
    """One pause's answer as is; several keyed by interrupt id."""
    return values[0] if len(ids) == 1 else dict(zip(ids, values, strict=True))


def _announced(input: Any, client: ClientToolRegistry) -> Any:
    if isinstance(input, Mapping) and "client_tools" not in input:
        return {**input, "client_tools": client.ids()}
    return input


def _client_rounds(
    graph: Pregel[Any, Any, Any, Any],
    input: Any,
    config: RunnableConfig,
    client: ClientToolRegistry,
    max_rounds: int,
    kwargs: Mapping[str, Any],
) -> Steps[Any]:
    """The driver's rounds, written once: each run and each batch of answers is an effect."""

    def run(value: Any) -> Call[Any]:
        return Call(
            lambda: graph.invoke(value, config, **kwargs),
            lambda: graph.ainvoke(value, config, **kwargs),
        )

    result = yield from perform(run(_announced(input, client)))
    for _ in range(max_rounds):
        pending = _client_interrupts(result)
        if not pending:
            return result
        values = yield from perform(_answers(client, pending))
        result = yield from perform(run(Command(resume=_resume([i.id for i in pending], values))))
    if _client_interrupts(result):
        raise ClientToolLoopError(f"still asking for client tools after {max_rounds} rounds")
    return result


def _answers(client: ClientToolRegistry, pending: Sequence[Interrupt]) -> Call[list[Any]]:
    """The client's answers to the pending pauses, in order (async ones awaited)."""

    async def aanswer_all() -> list[Any]:
        return [await client.aanswer(i.value) for i in pending]

    return Call(lambda: [client.answer(i.value) for i in pending], aanswer_all)


def run_with_client_tools(
    graph: Pregel[Any, Any, Any, Any],
    input: Any,
    config: RunnableConfig,
    client: ClientToolRegistry,
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    **kwargs: Any,
) -> Any:
    """Invoke ``graph`` and answer its client-tool pauses until it ends or asks something else.

    Args:
        graph: A compiled graph with a checkpointer (toolweave's, or an agent's with AI tools).
        input: The run input; ``client_tools`` is added from ``client`` when absent.
        config: The run config (with a ``thread_id``).
        client: The implementations.
        max_rounds: Client-tool pauses answered at most (X3).
        **kwargs: Passed on to ``graph.invoke`` (e.g. ``context=``).

    Returns:
        The last ``invoke`` result: the answer, or a pause that is not a client-tool one.

    Raises:
        ClientToolLoopError: The run still asked after ``max_rounds`` answers.
    """
    return drive(_client_rounds(graph, input, config, client, max_rounds, kwargs))


async def arun_with_client_tools(
    graph: Pregel[Any, Any, Any, Any],
    input: Any,
    config: RunnableConfig,
    client: ClientToolRegistry,
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    **kwargs: Any,
) -> Any:
    """Async :func:`run_with_client_tools` (``ainvoke``; async implementations awaited)."""
    return await adrive(_client_rounds(graph, input, config, client, max_rounds, kwargs))


def run_remote_with_client_tools(
    sdk_client: Any,
    thread_id: str,
    assistant_id: str,
    input: Any,
    client: ClientToolRegistry,
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    **kwargs: Any,
) -> Any:
    """:func:`run_with_client_tools` against a LangGraph server (a langgraph-sdk sync client)."""
    result = sdk_client.runs.wait(
        thread_id, assistant_id, input=_announced(input, client), **kwargs
    )
    for _ in range(max_rounds):
        thread = sdk_client.threads.get(thread_id)
        found = [i for group in (thread.get("interrupts") or {}).values() for i in group]
        pending = [i for i in found if is_client_tool_request(i.get("value"))]
        if not pending:
            return result
        values = [client.answer(i["value"]) for i in pending]
        resume = _resume([i["id"] for i in pending], values)
        result = sdk_client.runs.wait(thread_id, assistant_id, command={"resume": resume}, **kwargs)
    raise ClientToolLoopError(f"still asking for client tools after {max_rounds} rounds")


def pending_client_calls(graph: Pregel[Any, Any, Any, Any], config: RunnableConfig) -> Any:
    """The open client-tool payload of a thread (W3), or ``None``; an unknown thread raises."""
    if graph.checkpointer is None:
        raise InvalidRequestError("reading a thread needs a graph compiled with a checkpointer")
    thread = thread_id_of(config)
    snapshot = graph.get_state(config)
    if not snapshot.values and snapshot.created_at is None:
        raise UnknownThreadError(f"no conversation is stored under thread {thread!r}")
    return next((i.value for i in snapshot.interrupts if is_client_tool_request(i.value)), None)


def resume_client_tools(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig, value: Any, **kwargs: Any
) -> Any:
    """Resume a thread paused on client-tool calls with their results, checked first (X5).

    Raises:
        UnknownThreadError: Nothing is stored under the thread.
        NothingPendingError: The thread is not waiting for client tools.
        ClientToolResultError: The value is malformed or names an unknown call id;
            nothing is written and the thread stays paused.
    """
    if pending_client_calls(graph, config) is None:
        thread = thread_id_of(config)
        raise NothingPendingError(f"thread {thread!r} is not waiting for client tools")
    stored = pause_of(graph.get_state(config).values)
    if isinstance(stored, ClientCalls):
        parse_results(value, stored)
    return graph.invoke(Command(resume=value), config, **kwargs)
