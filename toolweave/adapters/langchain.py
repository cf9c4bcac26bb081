"""LangChain tools in and out, and toolweave itself as an agent's tool (issue 12).

- :func:`from_langchain_tool` makes a :class:`~toolweave.tools.base.ChatbotTool` of any
  LangChain tool (a ``BaseTool`` or an ``@tool`` function): routing question from its
  description, request model from its args schema, its return value as context.
- :func:`to_langchain_tool` goes the other way, so another agent can call a ChatbotTool.
- :func:`as_agent_tool` wraps a compiled toolweave graph as one LangChain tool that an agent
  (``langchain.agents.create_agent``, a ``ToolNode`` loop) calls with a question.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, cast

from langchain_core.documents import Document
from langchain_core.messages import HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_stream_writer
from pydantic import BaseModel, Field, create_model

from toolweave.graph.langgraph_private import INTERRUPT
from toolweave.pauses import CLARIFICATION_NEEDED, agent_tool_text, first_pause
from toolweave.state.documents import UniqueTextDocument, as_sources
from toolweave.state.errors import ConfigurationError
from toolweave.state.names import to_tool_name
from toolweave.state.results import ResultMode, ToolResult
from toolweave.state.task import ROOT_TASK_NO, TaskInfo
from toolweave.tools.base import ChatbotTool, EligibleSystem, ToolCallContext
from toolweave.tools.consumers import ContextConsumerTool
from toolweave.tools.json_schema import model_from_schema

ThreadPolicy = Literal["fresh", "agent"]
"""How :func:`as_agent_tool` picks the toolweave thread of a call."""

ROUTING_QUESTION = "{name}: true when the user asks for what this tool does: {description}"
"""Routing question of an adapted LangChain tool when none is given (T5)."""

NO_RESULT = "The tool found nothing for this request."
"""What :func:`to_langchain_tool` returns for a tool that answered "not mine" (R1)."""


def optional_request_model(
    name: str, schema: type[BaseModel] | Mapping[str, Any]
) -> type[BaseModel]:
    """A request model whose fields are the tool's arguments, each optional (T6).

    ``schema`` is a pydantic model (``@tool`` functions, ``StructuredTool``) or a JSON
    schema (MCP tools), which :func:`~toolweave.tools.json_schema.model_from_schema`
    maps as it does for AI tools: enums stay ``Literal``, ``anyOf`` a ``Union``,
    arrays keep their item type, nested objects become nested models.
    """
    model_name = "".join(part.capitalize() for part in name.split("_")) + "Request"
    if isinstance(schema, Mapping):
        return model_from_schema(model_name, schema, partial=True)
    fields: dict[str, Any] = {
        field_name: (
            (Any if info.annotation is None else info.annotation) | None,
            Field(default=None, alias=info.alias, description=info.description),
        )
        for field_name, info in schema.model_fields.items()
    }
    return create_model(model_name, **fields)


def documents_of(tool_name: str, value: Any) -> list[UniqueTextDocument]:
    """A LangChain tool's return value as context documents (R2).

    ``Document``s keep their ``document_id``/``id``/``source`` and ``page`` metadata;
    any other value becomes one document with its text (JSON for structured values).
    """
    if isinstance(value, Document):
        value = [value]
    if isinstance(value, Sequence) and value and all(isinstance(v, Document) for v in value):
        docs: list[UniqueTextDocument] = []
        for n, doc in enumerate(cast(Sequence[Document], value), start=1):
            meta = doc.metadata
            doc_id = meta.get("document_id") or doc.id or meta.get("source") or f"{tool_name}#{n}"
            page = meta.get("page")
            docs.append(
                UniqueTextDocument(
                    document_id=str(doc_id),
                    document_name=str(meta.get("title") or meta.get("source") or tool_name),
                    document_url=meta.get("url"),
                    page=page if isinstance(page, int) else None,
                    sentence_number=n,
                    text=doc.page_content,
                )
            )
        return docs
    if (  # content blocks {"type": "text", "text": ...} (MCP and chat-model content)
        isinstance(value, Sequence)
        and value
        and all(isinstance(v, Mapping) and v.get("type") == "text" and "text" in v for v in value)
    ):
        value = "\n".join(str(block["text"]) for block in value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return [UniqueTextDocument(document_id=tool_name, document_name=tool_name, text=text)]


def is_async_only(tool: BaseTool) -> bool:
    """True for a tool with a coroutine and no sync function (MCP tools, async ``@tool``)."""
    return isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None


class LangChainChatbotTool(ChatbotTool[BaseModel]):
    """Base of the classes :func:`from_langchain_tool` makes; runs the wrapped tool."""

    wrapped: BaseTool
    """The LangChain tool this one calls (a shared singleton, like the ChatbotTool, T11)."""

    def _arguments(self, request: BaseModel) -> dict[str, Any]:
        return request.model_dump(exclude_none=True, by_alias=True)

    def execute(self, request: BaseModel, ctx: ToolCallContext) -> ToolResult | None:
        """Call the LangChain tool; its value becomes context (R2); it raising is R7.

        An async-only tool (an MCP tool, an ``@tool`` coroutine) runs on a private
        event loop here: the sync path is for scripts; servers use ``ainvoke``.
        """
        ctx.progress("CALLING")
        arguments = self._arguments(request)
        if is_async_only(self.wrapped):
            value = asyncio.run(self.wrapped.ainvoke(arguments))
        else:
            value = self.wrapped.invoke(arguments)
        return ToolResult.as_context(self.name, documents_of(self.name, value))

    async def aexecute(self, request: BaseModel, ctx: ToolCallContext) -> ToolResult | None:
        """Async :meth:`execute` over the LangChain tool's ``ainvoke``."""
        ctx.progress("CALLING")
        value = await self.wrapped.ainvoke(self._arguments(request))
        return ToolResult.as_context(self.name, documents_of(self.name, value))


def from_langchain_tool(
    tool: BaseTool,
    *,
    name: str | None = None,
    domain: str | None = None,
    eligible_system: EligibleSystem = None,
    routing_question: str | None = None,
    instruction: str = "",
    priority: int = 100,
) -> ChatbotTool[BaseModel]:
    """A ChatbotTool that runs a LangChain tool.

    Args:
        tool: A ``BaseTool``, e.g. a function decorated with ``@tool`` or a tool of an
            MCP server loaded by langchain-mcp-adapters.
        name: The toolweave name; defaults to the tool's name in lower_snake_case (T1).
        domain: Where it may run (T2); ``None``: every domain.
        eligible_system: The system filter (T3).
        routing_question: Overrides the routing question built from the description (T5).
        instruction: Field-filling instruction for extraction (T7).
        priority: Execution order on a task (A6).

    Returns:
        A ChatbotTool whose request model has the tool's arguments, each optional (T6),
        and whose result is the tool's return value as context (R2). The gates
        (domain, system filter, ``is_eligible``) apply as for any tool.
    """
    tool_name = name or to_tool_name(tool.name)
    description = (tool.description or tool.name).strip()
    schema = tool.tool_call_schema
    if not isinstance(schema, Mapping) and not issubclass(schema, BaseModel):
        raise ConfigurationError(
            f"tool {tool.name!r}: pydantic v1 argument schemas are not supported"
        )
    attributes: dict[str, Any] = {
        "name": tool_name,
        "domain": domain,
        "eligible_system": eligible_system,
        "priority": priority,
        "request_model": optional_request_model(tool_name, schema),
        "instruction": instruction,
        "executable_instruction": routing_question
        or ROUTING_QUESTION.format(name=tool_name, description=description),
        "description": description,
        "wrapped": tool,
    }
    cls = type(f"LangChainTool_{tool_name}", (LangChainChatbotTool,), attributes)
    return cast(ChatbotTool[BaseModel], cls())


def result_text(result: ToolResult | None) -> str:
    """A tool result as the text another agent reads."""
    if result is None:
        return NO_RESULT
    match result.mode:
        case ResultMode.CLARIFICATION:
            return CLARIFICATION_NEEDED.format(question=result.text or "")
        case ResultMode.ANSWERED:
            return result.text or ""
        case ResultMode.CONTEXT | ResultMode.GUARANTEED_CONTEXT | ResultMode.ANSWER:
            return result.context_text() or NO_RESULT


def to_langchain_tool(
    tool: ChatbotTool[Any], *, description: str | None = None, user_lang: str = "en"
) -> BaseTool:
    """A LangChain tool that runs a ChatbotTool outside the graph, for other agents.

    The agent fills the tool's request model by function calling; the tool runs on a
    one-task tree whose prompt is the request as JSON. A consumer tool gets an empty
    prior context (B2). The result is returned as text (content) plus the documents
    (artifact).
    """

    def context(request: BaseModel) -> ToolCallContext:
        text = request.model_dump_json(exclude_none=True)
        return ToolCallContext(
            task=TaskInfo(task_no=ROOT_TASK_NO, task_prompt=text), text=text, user_lang=user_lang
        )

    def run(**kwargs: Any) -> tuple[str, list[dict[str, Any]]]:
        request = tool.request_model.model_validate(kwargs)
        ctx = context(request)
        if isinstance(tool, ContextConsumerTool):
            result = tool.execute_with_prior_context(request, ctx, {})
        else:
            result = tool.execute(request, ctx)
        docs = [] if result is None else [d.model_dump() for d in result.documents]
        return result_text(result), docs

    return StructuredTool.from_function(
        func=run,
        name=tool.name,
        description=description or tool.description or tool.executable_instruction or tool.name,
        args_schema=tool.request_model,
        response_format="content_and_artifact",
    )


_MODES: list[str] = ["custom", "values"]
"""What :func:`as_agent_tool` streams from the inner run: progress to forward, the state."""


def _parent_writer() -> Callable[[Any], None]:
    """The stream writer of the agent run calling the tool, or a no-op outside one (P3)."""
    try:
        return get_stream_writer()
    except (RuntimeError, KeyError):  # not inside a LangGraph run
        return lambda _chunk: None


class AgentQuestion(BaseModel):
    """The argument of :func:`as_agent_tool`'s tool."""

    question: str = Field(description="The user's question, as a standalone sentence.")


def answer_with_sources(state: Mapping[str, Any]) -> str:
    """The answer text followed by its sources (document and pages, R9), as an agent reads it."""
    answer = str(state.get("answer") or "")
    pause = first_pause(state.get(INTERRUPT))
    if pause is not None:  # the run paused: what it waits for, per kind (Q7)
        return agent_tool_text(pause)
    sources = [
        source.name + (f", p. {', '.join(map(str, source.pages))}" if source.pages else "")
        for source in as_sources(state.get("sources"))
    ]
    if not sources:
        return answer
    return answer + "\n\nSources:\n" + "\n".join(f"- {s}" for s in sources)


def as_agent_tool(
    graph: Runnable[Any, Any],
    *,
    name: str = "ask_toolweave",
    description: str = "Answers the user's question from the application's documents and tools.",
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
        A tool that takes ``question`` and returns the answer with its sources; the
        answer's sources (R9) are the tool message's artifact. Its progress events and
        answer tokens reach the agent's stream (``stream_mode=["custom", "messages"]``
        with ``subgraphs=True``), and the agent's ``tool_call_id`` is handled by
        LangChain's tool machinery.
    """
    if thread == "agent" and getattr(graph, "checkpointer", None) is None:
        raise ConfigurationError(
            'as_agent_tool(thread="agent") needs a graph compiled with a checkpointer'
        )

    def inputs(question: str, config: RunnableConfig) -> tuple[Any, RunnableConfig]:
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

    def result(state: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        sources = [s.model_dump(mode="json") for s in as_sources(state.get("sources"))]
        return answer_with_sources(state), sources

    def ask(question: str, config: RunnableConfig) -> tuple[str, list[dict[str, Any]]]:
        forward = _parent_writer()
        state: Mapping[str, Any] = {}
        for mode, chunk in graph.stream(*inputs(question, config), stream_mode=_MODES):
            if mode == "custom":
                forward(chunk)
            else:
                state = chunk
        return result(state)

    async def aask(question: str, config: RunnableConfig) -> tuple[str, list[dict[str, Any]]]:
        forward = _parent_writer()
        state: Mapping[str, Any] = {}
        async for mode, chunk in graph.astream(*inputs(question, config), stream_mode=_MODES):
            if mode == "custom":
                forward(chunk)
            else:
                state = chunk
        return result(state)

    return StructuredTool.from_function(
        func=ask,
        coroutine=aask,
        name=name,
        description=description,
        args_schema=AgentQuestion,
        response_format="content_and_artifact",
    )


def with_values_stream(graph: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """The graph streaming whole states (``stream_mode="values"``) instead of node updates.

    A compiled graph streams per-node updates by default, so in a streamed LCEL chain
    (``astream``, ``astream_events``) the step after it receives the last node's update,
    not the final state. Put this copy in the chain instead; the answer tokens still
    arrive as ``on_chat_model_stream`` events tagged ``toolweave:answer``.
    """
    copy = getattr(graph, "copy", None)
    if copy is None:
        raise ConfigurationError("with_values_stream() takes a compiled graph")
    return cast(Runnable[Any, Any], copy(update={"stream_mode": "values"}))


def answer_chain(graph: Runnable[Any, Any]) -> Runnable[str, str]:
    """``question → answer text`` over the graph, streamable through ``astream_events``."""
    to_input: Runnable[str, dict[str, Any]] = RunnableLambda(
        lambda question: {"messages": [HumanMessage(content=question)]}
    )
    to_answer: Runnable[Any, str] = RunnableLambda(lambda state: str(state.get("answer") or ""))
    return cast(Runnable[str, str], to_input | with_values_stream(graph) | to_answer)
