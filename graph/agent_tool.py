"""The compiled graph as one LangChain tool of an agent (``graph.as_tool()``).

The tool answers with the answer and its sources; a paused run's question comes with
its choices numbered, and with ``thread="agent"`` the agent's next call continues it (Q2).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_stream_writer
from langgraph.runtime import get_runtime
from pydantic import BaseModel, Field

from toolweave.graph.context import RunContext, run_context
from toolweave.graph.idempotency import acted_calls, acting_entries
from toolweave.graph.langgraph_private import INTERRUPT
from toolweave.state.documents import as_sentences, as_sources
from toolweave.state.errors import ConfigurationError
from toolweave.state.graph_state import ActedCall
from toolweave.state.pauses import agent_tool_text, first_pause

logger = logging.getLogger(__name__)

ThreadPolicy = Literal["fresh", "agent"]
"""How :func:`as_agent_tool` picks the toolweave thread of a call."""

ASK_AGAIN = "\nCall the tool again with the whole question, the chosen answer included."
"""What a ``thread="fresh"`` tool adds to a question: its next call is a new conversation."""
ASK_AGAIN_AFTER_EFFECT = (
    "\nAlready done before this question, and done a second time if asked for again: {done}"
    "\nCall the tool again with the rest of the question and the chosen answer, leaving out "
    "what was already done."
)
""":data:`ASK_AGAIN` when a tool acted before the question (S5): what not to ask for again."""
FRESH_AFTER_EFFECT_LOG = (
    "as_agent_tool(thread='fresh'): %s acted, then the run asked back; the next call is a new "
    "conversation, so a question asked again whole acts again. Use thread='agent' (with a "
    "checkpointer) for tools that act: the next call then continues the run (S5, Q6)"
)
AGENT_TOOL_NAME = "ask_toolweave"
"""The agent tool's default name."""
AGENT_TOOL_DESCRIPTION = "Answers the user's question from the application's documents and tools."
"""The agent tool's default description (when the agent's model should call it)."""

_MODES: list[str] = ["custom", "values"]
"""What :func:`as_agent_tool` streams from the inner run: progress to forward, the state."""

ACTED_THEN_FAILED = (
    "{done}\n\nThis was done, and the answer could not be written ({error}). Do not ask "
    "for it again: calling this tool again with the same request would do it a second time."
)
"""The tool's text when its run failed after a tool acted (S5, Q6): what was done, no retry."""
ACTED_THEN_FAILED_LOG = (
    "the agent tool's run failed after %s acted: answered with what was done, not raised, "
    "so that no retry of the call acts again (S5, Q6)"
)


def _parent_writer() -> Callable[[Any], None]:
    """The stream writer of the agent run calling the tool, or a no-op outside one (P3)."""
    try:
        return get_stream_writer()
    except (RuntimeError, KeyError):  # not inside a LangGraph run
        return lambda _chunk: None


def calling_context() -> RunContext | None:
    """The calling agent's run context for the inner run (T4, X4), or ``None``.

    A :class:`RunContext` passes as it is; any other context with ``user_data`` (an attribute
    or a key, e.g. the agent's own ``context_schema``) passes its user data, never stored.
    """
    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a LangGraph run: a direct tool call
        return None
    return run_context(runtime)


class AgentQuestion(BaseModel):
    """The argument of :func:`as_agent_tool`'s tool."""

    question: str = Field(description="The user's question, as a standalone sentence.")


def source_lines(state: Mapping[str, Any]) -> list[str]:
    """The answer's sources, one line each, a page named only for a document of several (R9)."""
    return [
        source.name
        + (f", p. {', '.join(map(str, source.cited_pages))}" if source.cited_pages else "")
        for source in as_sources(state.get("sources"))
    ]


def answer_with_sources(state: Mapping[str, Any]) -> str:
    """The answer text followed by its numbered sources, as an agent reads it (R9)."""
    answer = str(state.get("answer") or "")
    pause = first_pause(state.get(INTERRUPT))
    if pause is not None:  # the run paused: what it waits for, per kind (Q7)
        return agent_tool_text(pause)
    sources = source_lines(state)
    if not sources:
        return answer
    said = [s for s in as_sentences(state.get("answer_sentences")) if s.supported]
    if not any(s.sources for s in said):
        return answer + "\n\nSources:\n" + "\n".join(f"- {s}" for s in sources)
    cited = " ".join(s.marked() for s in said)
    return cited + "\n\nSources:\n" + "\n".join(f"[{n}] {s}" for n, s in enumerate(sources, 1))


def _inputs(
    question: str, config: RunnableConfig, thread: ThreadPolicy, name: str
) -> tuple[Any, RunnableConfig]:
    """The inner run's input and config (its thread by ``thread``)."""
    configurable = config.get("configurable") or {}
    if thread == "agent":
        parent = configurable.get("thread_id")
        if parent is None:
            raise ConfigurationError(
                'as_agent_tool(thread="agent") needs the agent to run with a thread_id'
            )
        thread_id = f"{parent}:{name}"
    else:
        thread_id = uuid.uuid4().hex
    return {"messages": [HumanMessage(content=question)]}, {
        "callbacks": config.get("callbacks"),
        "configurable": {"thread_id": thread_id},
        "tags": [*config.get("tags", []), "toolweave"],
    }


def contained_failure(state: Mapping[str, Any], error: Exception) -> str | None:
    """The tool's text for a run that raised after a tool acted (a retry would act again, S5)."""
    acted = acting_entries(state)
    if not acted:
        return None
    done = _done(acted_calls(state))
    if not done:  # a call refused after it ran: no result, still done
        done = [entry.tool or "" for entry in acted]
    tools = ", ".join(dict.fromkeys(entry.tool or "" for entry in acted))
    logger.error(ACTED_THEN_FAILED_LOG, tools, exc_info=error)
    return ACTED_THEN_FAILED.format(done="\n".join(done), error=type(error).__name__)


def _done(calls: Sequence[ActedCall]) -> list[str]:
    """What each acting call did, in words: its result, else its tool's name (S5)."""
    return [call.result.strip() or call.tool.replace("_", " ") for call in calls]


def _result(state: Mapping[str, Any], thread: ThreadPolicy) -> tuple[str, list[dict[str, Any]]]:
    """The tool's content (the answer with its sources) and artifact (the sources, R9)."""
    sources = [s.model_dump(mode="json") for s in as_sources(state.get("sources"))]
    text = answer_with_sources(state)
    pause = first_pause(state.get(INTERRUPT))
    if thread == "fresh" and pause is not None and pause["type"] == "clarification":
        text += _ask_again(state)  # a fresh call cannot continue this run: the whole question
    return text, sources


def _ask_again(state: Mapping[str, Any]) -> str:
    """What a fresh-thread tool adds to a question: ask again whole, less what was done (S5)."""
    calls = acted_calls(state)
    done = _done(calls)
    if not done:
        return ASK_AGAIN
    tools = ", ".join(dict.fromkeys(call.tool for call in calls))
    logger.warning(FRESH_AFTER_EFFECT_LOG, tools)
    return ASK_AGAIN_AFTER_EFFECT.format(done=" ".join(done))


def _run(
    graph: Runnable[Any, Any], run_input: Any, run_config: RunnableConfig, thread: ThreadPolicy
) -> tuple[str, list[dict[str, Any]]]:
    """One call of the agent tool: the inner run streamed, its progress forwarded (P3)."""
    forward = _parent_writer()
    state: Mapping[str, Any] = {}
    try:
        for mode, chunk in graph.stream(
            run_input, run_config, stream_mode=_MODES, context=calling_context()
        ):
            if mode == "custom":
                forward(chunk)
            else:
                state = chunk
    except Exception as exc:  # S5: contained only once a tool acted; else raised
        if (text := contained_failure(state, exc)) is None:
            raise
        return text, []
    return _result(state, thread)


async def _arun(
    graph: Runnable[Any, Any], run_input: Any, run_config: RunnableConfig, thread: ThreadPolicy
) -> tuple[str, list[dict[str, Any]]]:
    """Async :func:`_run`."""
    forward = _parent_writer()
    state: Mapping[str, Any] = {}
    try:
        async for mode, chunk in graph.astream(
            run_input, run_config, stream_mode=_MODES, context=calling_context()
        ):
            if mode == "custom":
                forward(chunk)
            else:
                state = chunk
    except Exception as exc:  # S5: contained only once a tool acted; else raised
        if (text := contained_failure(state, exc)) is None:
            raise
        return text, []
    return _result(state, thread)


def as_agent_tool(
    graph: Runnable[Any, Any],
    *,
    name: str = AGENT_TOOL_NAME,
    description: str = AGENT_TOOL_DESCRIPTION,
    thread: ThreadPolicy = "fresh",
) -> BaseTool:
    """The compiled toolweave graph as one LangChain tool of an agent.

    Args:
        graph: A compiled toolweave graph (``build_graph(...)``).
        name: The tool's name as the agent's model sees it.
        description: When the agent should call it.
        thread: ``"fresh"``: every call is a new toolweave conversation (needs no
            checkpointer). ``"agent"``: calls on one agent thread share one toolweave
            thread (``"<agent thread id>:<name>"``), so follow-ups and clarification
            replies continue it; the graph must have its own checkpointer.

    Returns:
        A tool that takes ``question`` and returns the answer with its sources; the answer's sources
        (R9) are the tool message's artifact. Its progress events and answer tokens reach the
        agent's stream (``stream_mode=["custom", "messages"]`` with ``subgraphs=True``), and the
        agent's ``tool_call_id`` is handled by LangChain's tool machinery. The agent's run context
        reaches the inner run: ``agent.invoke(..., context=RunContext(user_data=...))`` (or a
        context of the agent's own schema with a ``user_data`` field) opens the gates (T4).
    """
    if thread == "agent" and getattr(graph, "checkpointer", None) is None:
        raise ConfigurationError(
            'as_agent_tool(thread="agent") needs a graph compiled with a checkpointer'
        )

    def ask(question: str, config: RunnableConfig) -> tuple[str, list[dict[str, Any]]]:
        run_input, run_config = _inputs(question, config, thread, name)
        return _run(graph, run_input, run_config, thread)

    async def aask(question: str, config: RunnableConfig) -> tuple[str, list[dict[str, Any]]]:
        run_input, run_config = _inputs(question, config, thread, name)
        return await _arun(graph, run_input, run_config, thread)

    return StructuredTool.from_function(
        func=ask,
        coroutine=aask,
        name=name,
        description=description,
        args_schema=AgentQuestion,
        response_format="content_and_artifact",
    )
