"""LangChain tools in (:func:`from_langchain_tool`) and out, and a graph as an agent's tool."""

from __future__ import annotations

import contextvars
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, cast, get_origin, get_type_hints

from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from toolweave.graph.agent_tool import answer_with_sources as answer_with_sources
from toolweave.graph.agent_tool import as_agent_tool as as_agent_tool
from toolweave.graph.agent_tool import calling_context
from toolweave.graph.idempotency import idempotency_key
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.errors import ConfigurationError, ToolFailedError
from toolweave.state.names import to_tool_name
from toolweave.state.pauses import CLARIFICATION_NEEDED
from toolweave.state.results import ResultMode, ToolResult
from toolweave.state.task import ROOT_TASK_NO, TaskInfo
from toolweave.tools.base import ChatbotTool, EligibleSystem, ToolCallContext
from toolweave.tools.consumers import ContextConsumerTool
from toolweave.tools.effects import Call, Steps, adrive, drive, perform
from toolweave.tools.json_schema import model_from_schema
from toolweave.tools.required import missing_inputs, required_inputs
from toolweave.tools.sync_loop import run_on_sync_loop

ROUTING_QUESTION = "{name}: true when the user asks for what this tool does: {description}"
"""Routing question of an adapted LangChain tool when none is given (T5)."""

STREAM_EVENT_NAME = "toolweave"
"""The name of :func:`answer_chain`'s ``on_custom_event`` events in ``astream_events`` (P2)."""

NO_RESULT = "The tool found nothing for this request."
"""What :func:`to_langchain_tool` returns for a tool that answered "not mine" (R1)."""


def _declared_fields(tool: BaseTool) -> dict[str, FieldInfo]:
    """What the tool's author declared per argument, ``examples`` (LangChain drops them)."""
    declared: dict[str, FieldInfo] = {}
    schema = tool.args_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        declared.update(schema.model_fields)
    function = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    try:
        hints = {} if function is None else get_type_hints(function, include_extras=True)
    except (NameError, TypeError):  # an annotation that does not resolve: keep the schema's
        hints = {}
    for arg, hint in hints.items():
        if get_origin(hint) is Annotated:
            info = FieldInfo.from_annotation(hint)
            if info.examples or info.json_schema_extra:
                declared[arg] = info
    return declared


def optional_request_model(
    name: str, schema: type[BaseModel] | Mapping[str, Any], tool: BaseTool | None = None
) -> type[BaseModel]:
    """A request model of the tool's arguments (pydantic or JSON schema), each optional (T6)."""
    model_name = "".join(part.capitalize() for part in name.split("_")) + "Request"
    if isinstance(schema, Mapping):
        return model_from_schema(model_name, schema, partial=True)
    declared = {} if tool is None else _declared_fields(tool)
    fields: dict[str, Any] = {}
    for field_name, info in schema.model_fields.items():
        richer = declared.get(field_name, info)
        extra = richer.json_schema_extra if isinstance(richer.json_schema_extra, dict) else None
        field = Field(
            default=None, alias=info.alias, description=info.description or richer.description,
            examples=richer.examples or info.examples, json_schema_extra=extra,
        )  # fmt: skip
        fields[field_name] = ((Any if info.annotation is None else info.annotation) | None, field)
    return create_model(model_name, **fields)


def documents_of(tool_name: str, value: Any) -> list[UniqueTextDocument]:
    """A LangChain tool's value as context (R2): ``Document``s with their metadata, else text."""
    if isinstance(value, Document):
        value = [value]
    if isinstance(value, Sequence) and value and all(isinstance(v, Document) for v in value):
        docs: list[UniqueTextDocument] = []
        for n, doc in enumerate(cast(Sequence[Document], value), start=1):
            meta = doc.metadata
            doc_id = meta.get("document_id") or doc.id or meta.get("source") or f"{tool_name}#{n}"
            page = meta.get("page")
            name = str(meta.get("title") or meta.get("source") or tool_name)
            docs.append(UniqueTextDocument(
                document_id=str(doc_id), document_name=name, document_url=meta.get("url"),
                page=page if isinstance(page, int) else None, sentence_number=n,
                text=doc.page_content,
            ))  # fmt: skip
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

    wrapped: ClassVar[BaseTool]
    """The LangChain tool this one calls (a copy whose errors raise, shared like the tool, T11)."""

    def _arguments(self, request: BaseModel) -> dict[str, Any]:
        return request.model_dump(exclude_none=True, by_alias=True)

    def _steps(self, request: BaseModel, ctx: ToolCallContext) -> Steps[ToolResult | None]:
        """The call, written once: its value is context (R2), a reported error R7 (T13)."""
        if missing_inputs(self, request):
            return None
        ctx.progress("CALLING")
        arguments = self._arguments(request)
        tool = self.wrapped
        try:
            value = yield from perform(
                Call(lambda: _invoke(tool, arguments), lambda: tool.ainvoke(arguments))
            )
        except (ToolException, ValidationError) as exc:
            raise ToolFailedError(f"{tool.name}: {type(exc).__name__}: {exc}"[:500]) from exc
        return ToolResult.as_context(self.name, documents_of(self.name, value))

    def execute(self, request: BaseModel, ctx: ToolCallContext) -> ToolResult | None:
        """Call the LangChain tool: its value is context (R2), a failure R7, no input R1."""
        return drive(self._steps(request, ctx))

    async def aexecute(self, request: BaseModel, ctx: ToolCallContext) -> ToolResult | None:
        """Async :meth:`execute` over the LangChain tool's ``ainvoke``."""
        return await adrive(self._steps(request, ctx))


def _invoke(tool: BaseTool, arguments: dict[str, Any]) -> Any:
    """The sync call; an async-only tool (MCP tools, async ``@tool``) on the sync callers' loop."""
    return (
        run_on_sync_loop(tool.ainvoke(arguments)) if is_async_only(tool) else tool.invoke(arguments)
    )


def from_langchain_tool(
    tool: BaseTool,
    *,
    name: str | None = None,
    domain: str | None = None,
    eligible_system: EligibleSystem = None,
    routing_question: str | None = None,
    instruction: str = "",
    priority: int = 100,
    ask_for_missing_inputs: bool = False,
) -> ChatbotTool[BaseModel]:
    """A ChatbotTool that runs a LangChain tool.

    Args:
        tool: A ``BaseTool``, e.g. a ``@tool`` function or an MCP server's tool.
        name: The toolweave name; default :func:`~toolweave.to_tool_name` of its name (T1, T14).
        domain: Where it may run (T2); ``None``: every domain.
        eligible_system: The system filter (T3).
        routing_question: Overrides the routing question built from the description (T5).
        instruction: Field-filling instruction for extraction (T7).
        priority: Execution order on a task (A6).
        ask_for_missing_inputs: Ask the user (Q1) for an unfilled required argument (T13),
            offering its ``Literal``/enum values or examples; else the tool declines (R1).

    Returns:
        A ChatbotTool whose request has the tool's arguments, each optional (T6), and whose
        result is the tool's value as context (R2); a reported error is a failure (R7).
    """
    tool_name = name or to_tool_name(tool.name)
    description = (tool.description or tool.name).strip()
    schema = tool.tool_call_schema
    if not isinstance(schema, Mapping) and not issubclass(schema, BaseModel):
        raise ConfigurationError(
            f"tool {tool.name!r}: pydantic v1 argument schemas are not supported"
        )
    request_model = optional_request_model(tool_name, schema, tool)
    question = routing_question or ROUTING_QUESTION.format(name=tool_name, description=description)
    # our copy reports errors by raising, never as content (T13: MCP error results)
    wrapped = tool.model_copy(update={"handle_tool_error": False, "handle_validation_error": False})
    attributes: dict[str, Any] = {
        "name": tool_name, "source_name": None if name else tool.name,  # T14: name= is its own
        "domain": domain, "eligible_system": eligible_system, "priority": priority,
        "request_model": request_model, "required_inputs": required_inputs(schema, request_model),
        "ask_for_missing_inputs": ask_for_missing_inputs, "instruction": instruction,
        "executable_instruction": question, "description": description, "wrapped": wrapped,
    }  # fmt: skip
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


_TOOL_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "toolweave_tool_call_id", default=None
)
"""The agent's tool call id of the exported tool's call being run (Q6)."""


class _KeyedTool(StructuredTool):
    """A ``StructuredTool`` whose function can read the agent's tool call id (Q6)."""

    def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        """``StructuredTool.run`` with the tool call id where :func:`_call_key` reads it."""
        token = _TOOL_CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return super().run(tool_input, *args, **kwargs)
        finally:
            _TOOL_CALL_ID.reset(token)

    async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        """Async :meth:`run`."""
        token = _TOOL_CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return await super().arun(tool_input, *args, **kwargs)
        finally:
            _TOOL_CALL_ID.reset(token)


def _call_key(tool: str) -> str:
    """The idempotency key of one call of an exported tool (Q6).

    From the agent's tool call id: the same when that call is retried (``ToolRetryMiddleware``),
    another for another call. A call with no tool call id (``tool.invoke({...})``) is its own.
    """
    call_id = _TOOL_CALL_ID.get() or f"direct-{uuid.uuid4().hex}"
    return idempotency_key(
        thread_id="", message_id=call_id, task_no=ROOT_TASK_NO, tool=tool, clarification_round=0
    )


NOT_ELIGIBLE = (
    "{tool} was not called: its gate refused this run's user data (T4); nothing was done."
)
NOT_FILLED = (
    "{tool} was not called: required input(s) not filled: {names} (T13); call it again "
    "with them. Nothing was done."
)


def not_called(
    tool: ChatbotTool[Any], request: BaseModel, user_data: Mapping[str, Any] | None
) -> str | None:
    """Why an exported tool is not called, as the graph would not call it (T4, T13), or ``None``.

    The calling agent's run context gives the user data (``RunContext(user_data=...)``, or
    a ``user_data`` field of the agent's own context): without it a gated tool is refused.
    """
    if not tool.is_eligible(user_data):
        return NOT_ELIGIBLE.format(tool=tool.name)
    missing = missing_inputs(tool, request)
    return NOT_FILLED.format(tool=tool.name, names=", ".join(missing)) if missing else None


def to_langchain_tool(
    tool: ChatbotTool[Any], *, description: str | None = None, user_lang: str = "en"
) -> BaseTool:
    """A LangChain tool that runs a ChatbotTool on a one-task tree, for other agents (B2).

    It returns the result's text (content) and documents (artifact).
    """

    def run(**kwargs: Any) -> tuple[str, list[dict[str, Any]]]:
        request = tool.request_model.model_validate(kwargs)
        context = calling_context()
        user_data = None if context is None else context.user_data
        refused = not_called(tool, request, user_data)
        if refused is not None:
            return refused, []
        text = request.model_dump_json(exclude_none=True)
        ctx = ToolCallContext(
            task=TaskInfo(task_no=ROOT_TASK_NO, task_prompt=text),
            text=text,
            user_lang=user_lang,
            user_data=user_data,
            idempotency_key=_call_key(tool.name),  # Q6: a deduping tool dedupes per call
        )
        if isinstance(tool, ContextConsumerTool):
            result = tool.execute_with_prior_context(request, ctx, {})
        else:
            result = tool.execute(request, ctx)
        docs = [] if result is None else [d.model_dump() for d in result.documents]
        return result_text(result), docs

    return _KeyedTool.from_function(
        func=run, name=tool.name, args_schema=tool.request_model,
        description=description or tool.description or tool.executable_instruction or tool.name,
        response_format="content_and_artifact",
    )  # fmt: skip


def with_values_stream(graph: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """The graph streaming whole states (``stream_mode="values"``), for LCEL chains (P2)."""
    copy = getattr(graph, "copy", None)
    if copy is None:
        raise ConfigurationError("with_values_stream() takes a compiled graph")
    return cast(Runnable[Any, Any], copy(update={"stream_mode": "values"}))


def answer_chain(graph: Runnable[Any, Any]) -> Runnable[str, str]:
    """``question → answer text`` over the graph, streamable through ``astream_events``.

    Under ``astream_events`` the answer's tokens arrive as ``on_chat_model_stream`` and
    each of the run's stream events (P1, P2: tool progress, routing, gates, ...) as an
    ``on_custom_event`` named :data:`STREAM_EVENT_NAME` whose ``data`` is the event dict.
    """
    stream = with_values_stream(graph)

    def answer(question: Any, config: RunnableConfig) -> str:
        state: Mapping[str, Any] = {}
        for mode, chunk in stream.stream(question, config, stream_mode=["custom", "values"]):
            if mode == "custom":
                dispatch_custom_event(STREAM_EVENT_NAME, chunk, config=config)
            elif isinstance(chunk, Mapping):
                state = chunk
        return str(state.get("answer") or "")

    async def aanswer(question: Any, config: RunnableConfig) -> str:
        state: Mapping[str, Any] = {}
        modes = ["custom", "values"]
        async for mode, chunk in stream.astream(question, config, stream_mode=modes):
            if mode == "custom":
                await adispatch_custom_event(STREAM_EVENT_NAME, chunk, config=config)
            elif isinstance(chunk, Mapping):
                state = chunk
        return str(state.get("answer") or "")

    return cast(Runnable[str, str], RunnableLambda(answer, afunc=aanswer, name="answer_chain"))
