"""The ``execute`` node: one tool per step (A6, R1-R8, B1-B2, T9, P1-P3)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from pydantic import BaseModel, ValidationError
from toolweave.graph.context import Dependencies, RunContext, assistant_for
from toolweave.graph.walk import next_step
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.results import ResultMode, ToolResult
from toolweave.state.task import (
    PromptAndContext,
    TaskNode,
    TaskStatus,
    completion_key,
    execution_text,
)
from toolweave.tools.base import ToolCallContext
from toolweave.tools.consumers import ContextConsumerTool
from toolweave.tools.progress import ProgressEmitter
from toolweave.tools.registry import AnyTool

from toolweave.llm.passthrough import stream_text
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT

logger = logging.getLogger(__name__)

TOOL_RAISED = "raised {error}; treated as no result (R7)"
REQUEST_INVALID = "extracted request did not validate: {error}"
UNREGISTERED = "tool is no longer registered"


def build_request(tool: AnyTool, extracted: Mapping[str, Any] | None) -> BaseModel:
    """Validate an extracted request into the tool's model; ``None`` fills nothing (T6)."""
    return tool.request_model.model_validate(dict(extracted or {}))


def apply_result(
    key: str, text: str, result: ToolResult | None, streamed: str | None
) -> dict[str, Any]:
    """The state update of one tool result (B1, R1-R5)."""
    if result is None:
        return {}
    entry = PromptAndContext(prompt=text, context=result.context_text(), documents=result.documents)
    update: dict[str, Any] = {"context_buffer": {key: [entry]}}
    if result.mode is ResultMode.CONTEXT:
        update["documents"] = list(result.documents)
    elif result.mode is ResultMode.GUARANTEED_CONTEXT:
        update["guaranteed"] = [entry]
    elif result.mode is ResultMode.ANSWER:
        update.update(answer=result.text or "", terminal=key)
    elif result.mode is ResultMode.ANSWERED:
        update.update(answer=streamed or "", terminal=key)
    return update


def make_execute(deps: Dependencies) -> Callable[..., dict[str, Any]]:
    """Build the ``execute`` node over ``deps``."""

    def execute(state: GraphState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Run the next queued tool of the task and record its result."""
        node = state["tasks"][next_step(state).task_no]
        name, rest = node.queue[0], node.queue[1:]
        key = completion_key(node.task_no, name)
        text = execution_text(node.task)
        update: dict[str, Any] = {"cursor": node.task_no, "activated": [key]}
        result, streamed, entry, calls = _run(deps, state, runtime, node, name, text)
        update.update(apply_result(key, text, result, streamed))
        closed = not rest or "terminal" in update
        status = TaskStatus.CLOSED if closed else TaskStatus.ROUTED
        update["tasks"] = {node.task_no: node.model_copy(update={"queue": rest, "status": status})}
        update["ledger"] = [entry]
        update["llm_calls"] = calls
        return update

    return execute


def _run(
    deps: Dependencies,
    state: GraphState,
    runtime: Runtime[RunContext],
    node: TaskNode,
    name: str,
    text: str,
) -> tuple[ToolResult | None, str | None, LedgerEntry, int]:
    """Extract the request if needed, call the tool, and contain its failure (R7)."""
    tool = deps.registry.get(name)
    if tool is None:
        return None, None, _ledger(node, name, LedgerKind.TOOL_SKIPPED, "skipped", UNREGISTERED), 0
    calls = 0
    extracted = node.requests.get(name)
    if name not in node.requests and tool.request_model.model_fields:
        assistant = assistant_for(deps, runtime)
        extracted = assistant.generate_tool_request(text, EXTRACTION_SYSTEM_PROMPT, None, tool).get(
            name
        )
        calls = 1
    try:
        request = build_request(tool, extracted)
    except ValidationError as exc:
        reason = REQUEST_INVALID.format(error=exc.error_count())
        return None, None, _ledger(node, name, LedgerKind.TOOL_SKIPPED, "skipped", reason), calls
    streamed: list[str] = []

    def stream_answer(chunks: Iterable[str]) -> str:
        whole = stream_text(chunks, run_name=f"{name}.answer")
        streamed.append(whole)
        return whole

    progress = ProgressEmitter(name, runtime.stream_writer, task_no=node.task_no)
    ctx = ToolCallContext(
        task=node.task,
        text=text,
        systems=tuple(state.get("systems") or ()),
        user_lang=state["user_lang"],
        important_words=tuple(state["important_words"]),
        user_data=state.get("user_data"),
        progress=progress,
        stream_answer=stream_answer,
    )
    try:
        if isinstance(tool, ContextConsumerTool):
            snapshot = {k: list(v) for k, v in state["context_buffer"].items()}
            result = tool.execute_with_prior_context(request, ctx, snapshot)
        else:
            result = tool.execute(request, ctx)
    except GraphBubbleUp:
        raise
    except Exception as exc:  # R7: a failing tool is "no result", the run goes on
        logger.warning("tool %s raised on task %s", name, node.task_no, exc_info=True)
        progress("ERROR", type(exc).__name__)
        reason = TOOL_RAISED.format(error=type(exc).__name__)
        return None, None, _ledger(node, name, LedgerKind.TOOL_ERROR, "failed", reason), calls
    verdict = "no result (R1)" if result is None else result.mode.value
    entry = _ledger(node, name, LedgerKind.TOOL_RESULT, verdict, "")
    return result, "".join(streamed) or None, entry, calls


def _ledger(node: TaskNode, tool: str, kind: LedgerKind, verdict: str, reason: str) -> LedgerEntry:
    return LedgerEntry(kind=kind, task_no=node.task_no, tool=tool, verdict=verdict, reason=reason)
