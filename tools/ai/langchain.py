"""AI system tools as LangChain tools, for native tool calling (W6 b; W2, W3, Q6)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.config import get_config, get_stream_writer
from langgraph.runtime import get_runtime
from langgraph.types import interrupt
from pydantic import ConfigDict

from toolweave.state.client_calls import ClientToolCall, ClientToolResultError, parse_results
from toolweave.state.pauses import ClientCalls
from toolweave.tools.ai.base import NO_CONTEXT, AiToolContext, AiToolScope, execution
from toolweave.tools.ai.inputs import check_input
from toolweave.tools.ai.registry import AiToolRegistry, RegisteredAiTool
from toolweave.tools.effects import Steps, adrive, drive, perform
from toolweave.tools.progress import ProgressEmitter

logger = logging.getLogger(__name__)

INVALID_INPUT = "Error: {error}. Call {name} again with a corrected input."
CLIENT_FAILED = "Error: the client could not run {name}: {error}"
TOOL_FAILED = "Error: {name} failed ({error}); the request was not carried out."
NOT_ANNOUNCED = "Error: {name} runs only in the user's client, and this client cannot run it."
_CALL_ID = "__toolweave_call_id"


def call_context(tool_id: str, call_id: str | None) -> AiToolContext:
    """The context of one native tool call (Q6): keyed by the thread and call id."""
    if not call_id:
        return NO_CONTEXT
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:
        configurable = {}
    thread = str(configurable.get("thread_id") or "")
    parts = json.dumps([CALL_KEY_VERSION, thread, call_id, tool_id], ensure_ascii=False)
    digest = hashlib.sha256(parts.encode("utf-8")).hexdigest()
    return AiToolContext(idempotency_key=f"{CALL_KEY_VERSION}-{digest[:28]}")


CALL_KEY_VERSION = "tw1c"
"""The native tool call's key prefix: never equal to an orchestrated call's (``tw1``)."""


def _announced() -> frozenset[str]:
    """The tool ids the client announced: ``configurable.client_tools``, else the context's."""
    try:
        config = get_config()
    except RuntimeError:
        return frozenset()
    announced = (config.get("configurable") or {}).get("client_tools")
    if announced is None:
        try:
            context = getattr(get_runtime(), "context", None)  # None outside a graph
        except RuntimeError:
            context = None
        announced = getattr(context, "client_tools", None)
        if announced is None and isinstance(context, Mapping):
            announced = context.get("client_tools")
    return frozenset(announced or ())


class AiLangChainTool(BaseTool):
    """One AI system tool as a LangChain tool; made by :func:`as_langchain_tools`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    registered: RegisteredAiTool

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        args, kwargs = super()._to_args_and_kwargs(tool_input, tool_call_id)
        return args, {**kwargs, _CALL_ID: tool_call_id}

    def _client(self, text: str, call_id: str | None) -> str:
        definition = self.registered.definition
        if definition.scope is AiToolScope.CLIENT and definition.id not in _announced():
            return NOT_ANNOUNCED.format(name=self.name)
        digest = hashlib.sha256(f"{definition.id}\n{text}".encode()).hexdigest()[:16]
        call = ClientToolCall(
            call_id=call_id or f"call_{digest}",
            tool_id=definition.id,
            name=definition.name,
            input=text,
        )
        pending = ClientCalls(task_no="agent", calls=(call,))
        value = interrupt(pending.payload())
        while True:
            try:
                received = parse_results(value, pending)[call.call_id]
                break
            except (ClientToolResultError, KeyError) as exc:
                value = interrupt(pending.payload(error=str(exc)))
        if received.error is not None:
            return CLIENT_FAILED.format(name=self.name, error=received.error)
        return received.output or ""

    def _failed(self, exc: Exception) -> str:
        """R7: a raising tool becomes an error message and a progress event, not a crash."""
        try:
            writer = get_stream_writer()
        except RuntimeError:
            writer = None
        ProgressEmitter(self.name, writer)("ERROR", type(exc).__name__)
        return TOOL_FAILED.format(name=self.name, error=type(exc).__name__)

    def _steps(self, kwargs: dict[str, Any]) -> Steps[str]:
        """The reply when the tool does not run here (W2, W3), else its output or failure (R7)."""
        call_id = kwargs.pop(_CALL_ID, None)
        kwargs.pop("run_manager", None)
        text = json.dumps(kwargs, ensure_ascii=False)
        definition = self.registered.definition
        ctx = call_context(definition.id, call_id)
        check = check_input(definition, text)
        if not check.ok:
            return INVALID_INPUT.format(error=check.error, name=self.name)
        if definition.runs_in_client(_announced()):
            return self._client(text, call_id)
        try:
            return (yield from perform(execution(self.registered.tool, text, ctx)))
        except Exception as exc:  # R7: contained, reported to the model and the stream
            logger.warning("AI tool %s raised", self.name, exc_info=True)
            return self._failed(exc)

    def _run(self, *args: Any, **kwargs: Any) -> str:
        return drive(self._steps(kwargs))

    async def _arun(self, *args: Any, **kwargs: Any) -> str:
        return await adrive(self._steps(kwargs))


def _args_schema(entry: RegisteredAiTool) -> dict[str, Any]:
    schema = entry.definition.schema
    if schema is None or schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}
    return schema


def as_langchain_tools(
    registry: AiToolRegistry | Iterable[RegisteredAiTool],
) -> list[AiLangChainTool]:
    """Every AI tool as a LangChain ``BaseTool`` (JSON Schema as ``args_schema``), in order."""
    return [
        AiLangChainTool(
            name=entry.definition.id,
            description=entry.definition.ai_description,
            args_schema=_args_schema(entry),
            registered=entry,
            handle_tool_error=True,
        )
        for entry in registry
    ]
