"""The ``execute`` node: one tool per step (A6, R1-R8, B1-B3, T9, P1-P3, Q1-Q2)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, field
from typing import Any, assert_never

from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from pydantic import BaseModel, ValidationError

from toolweave.graph.clarify import checked_result, clarification_limit_message, tool_call
from toolweave.graph.client_tools import ai_tool_steps
from toolweave.graph.context import Dependencies, RunContext, assistant_for, user_data_for
from toolweave.graph.idempotency import tool_call_key
from toolweave.graph.nodes import Steps, make_node, perform
from toolweave.graph.walk import current_task_no
from toolweave.llm.budget import LlmBudget
from toolweave.llm.passthrough import astream_message, stream_message
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.state.errors import InvalidToolResultError
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.results import ResultMode, ToolResult, require_result
from toolweave.state.task import (
    Clarification,
    PromptAndContext,
    TaskNode,
    TaskStatus,
    completion_key,
    execution_text,
)
from toolweave.tools.ai.orchestration import AiChatbotTool
from toolweave.tools.base import ToolCallContext
from toolweave.tools.progress import ProgressEmitter
from toolweave.tools.registry import AnyTool

logger = logging.getLogger(__name__)

TOOL_RAISED = "raised {error}; treated as no result (R7)"
REQUEST_INVALID = "extracted request did not validate: {error} error(s)"
UNREGISTERED = "tool is no longer registered"
AFTER_TERMINAL = "an earlier tool's finished answer ended the task (R8)"


@dataclass
class Outcome:
    """What one tool call produced, before it becomes a state update."""

    result: ToolResult | None = None
    streamed: AIMessage | None = None
    ledger: list[LedgerEntry] = field(default_factory=list)
    llm_calls: int = 0
    deep_calls: int = 0
    request: dict[str, Any] | None = None


def record_result(key: str, text: str, outcome: Outcome) -> dict[str, Any]:
    """The state update of a finished tool result (B1, R1-R5)."""
    result = outcome.result
    if result is None:
        return {}
    entry = PromptAndContext(prompt=text, context=result.context_text(), documents=result.documents)
    update: dict[str, Any] = {"context_buffer": {key: [entry]}}
    match result.mode:
        case ResultMode.CONTEXT:
            update["documents"] = list(result.documents)
        case ResultMode.GUARANTEED_CONTEXT:
            update["guaranteed"] = [entry]
        case ResultMode.ANSWER:
            update.update(answer=result.text or "", terminal=key)
        case ResultMode.ANSWERED:
            streamed = outcome.streamed
            text, message_id = ("", None) if streamed is None else (streamed.text, streamed.id)
            update.update(answer=text, answer_id=message_id, terminal=key)
        case ResultMode.CLARIFICATION:  # Q1: execute pauses instead (pause_for_clarification)
            return {}
        case unknown:
            assert_never(unknown)
    return update


def pause_for_clarification(
    state: GraphState, deps: Dependencies, node: TaskNode, name: str, outcome: Outcome
) -> dict[str, Any]:
    """Q1: keep the tool at the head of the queue and open the question, within the limit."""
    result = outcome.result
    assert result is not None
    rounds = state.get("clarification_rounds") or 0
    key = completion_key(node.task_no, name)
    if rounds >= deps.limits.max_clarification_rounds:
        text = clarification_limit_message(state["message"].user_lang, result.text or "")
        closed = node.model_copy(update={"queue": [], "status": TaskStatus.CLOSED})
        return {"tasks": {node.task_no: closed}, "answer": text, "terminal": key}
    question = Clarification(
        task_no=node.task_no, tool=name, question=result.text or "", choices=result.choices
    )
    requests = {**node.requests, name: outcome.request}
    return {
        "tasks": {node.task_no: node.model_copy(update={"requests": requests})},
        "clarification": question,
        "clarification_rounds": rounds + 1,
        "messages": [AIMessage(content=question.question)],
    }


def make_execute(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``execute`` node over ``deps``."""

    def execute(state: GraphState, runtime: Runtime[RunContext]) -> Steps[dict[str, Any]]:
        """Run the next queued tool of the task and record its result."""
        node = state["tasks"][current_task_no(state)]
        name, rest = node.queue[0], node.queue[1:]
        key = completion_key(node.task_no, name)
        text = execution_text(node.task)
        tool = deps.registry.get(name)
        extra: dict[str, Any] = {}
        if isinstance(tool, AiChatbotTool):  # W2, W3: scope and input check
            progress = ProgressEmitter(name, runtime.stream_writer, task_no=node.task_no)
            ai = yield from ai_tool_steps(deps, state, runtime, node, tool, text, progress)
            if ai.pause:
                paused = {"ledger": ai.ledger, "llm_calls": ai.llm_calls}
                return {**paused, **ai.update}
            outcome = Outcome(result=ai.result, ledger=ai.ledger, llm_calls=ai.llm_calls)
            extra = ai.update
        else:
            outcome = yield from _run(deps, state, runtime, node, name, text)
        update: dict[str, Any] = {"ledger": outcome.ledger, **extra}
        update["llm_calls"] = outcome.llm_calls
        if outcome.deep_calls:
            update["deep_fallback_calls"] = outcome.deep_calls
        if state.get("clarification") is not None:
            update["clarification"] = None
        result = outcome.result
        if result is not None and result.mode is ResultMode.CLARIFICATION:
            return {**update, **pause_for_clarification(state, deps, node, name, outcome)}
        if result is not None:  # R1/R7: no result is as if the tool had not been activated
            update["activated"] = [key]
        update.update(record_result(key, text, outcome))
        if result is not None and result.is_terminal:  # R8: the tools after it do not run (L1)
            update["ledger"] = [*outcome.ledger, *_not_run(node, rest)]
        closed = not rest or (result is not None and result.is_terminal)
        status = TaskStatus.CLOSED if closed else TaskStatus.ROUTED
        update["tasks"] = {node.task_no: node.model_copy(update={"queue": rest, "status": status})}
        return update

    return make_node("execute", execute)


def _run(
    deps: Dependencies,
    state: GraphState,
    runtime: Runtime[RunContext],
    node: TaskNode,
    name: str,
    text: str,
) -> Steps[Outcome]:
    """Extract the request if needed, call the tool, and contain its failure (R7)."""
    tool = deps.registry.get(name)
    if tool is None:
        return Outcome(
            ledger=[_entry(node, name, LedgerKind.TOOL_SKIPPED, "skipped", UNREGISTERED)]
        )
    outcome = Outcome(request=node.requests.get(name))
    if name not in node.requests and tool.request_model.model_fields:
        assistant = assistant_for(deps, runtime)
        extracted = yield from assistant.generate_tool_request_steps(
            text, EXTRACTION_SYSTEM_PROMPT, None, tool
        )
        outcome.request, outcome.llm_calls = extracted.get(name), 1
    try:
        request = _request(tool, outcome.request)
    except ValidationError as exc:
        reason = REQUEST_INVALID.format(error=exc.error_count())
        outcome.ledger.append(_entry(node, name, LedgerKind.TOOL_SKIPPED, "skipped", reason))
        return outcome
    streamed: list[AIMessage] = []

    def stream_answer(chunks: Iterable[str]) -> str:
        streamed.append(stream_message(chunks, run_name=f"{name}.answer"))
        return streamed[-1].text

    async def astream_answer(chunks: AsyncIterable[str] | Iterable[str]) -> str:
        streamed.append(await astream_message(chunks, run_name=f"{name}.answer"))
        return streamed[-1].text

    progress = ProgressEmitter(name, runtime.stream_writer, task_no=node.task_no)
    budget = _budget(deps, state, runtime, node)
    ctx = ToolCallContext(
        task=node.task,
        text=text,
        systems=tuple(state.get("systems") or ()),
        user_lang=state["message"].user_lang,
        important_words=tuple(state["message"].important_words),
        user_data=user_data_for(state, runtime),
        progress=progress,
        stream_answer=stream_answer,
        astream_answer=astream_answer,
        llm=budget,
        idempotency_key=tool_call_key(state, node.task_no, name),
    )
    pending = state.get("clarification")
    reply = pending.reply if pending is not None and pending.tool == name else None
    try:
        raw = yield from perform(tool_call(tool, request, ctx, state["context_buffer"], reply))
    except (GraphBubbleUp, InvalidToolResultError):  # a bad result is the tool's bug: loud
        raise
    except Exception as exc:  # R7: a failing tool is "no result"; the run goes on
        outcome.llm_calls += budget.spent
        outcome.deep_calls = budget.spent if budget.limit is not None else 0
        logger.warning("tool %s raised on task %s", name, node.task_no, exc_info=True)
        progress("ERROR", type(exc).__name__)
        reason = TOOL_RAISED.format(error=type(exc).__name__)
        outcome.ledger.append(_entry(node, name, LedgerKind.TOOL_ERROR, "failed", reason))
        return outcome
    outcome.result = require_result(name, checked_result(tool, raw))
    outcome.llm_calls += budget.spent
    outcome.deep_calls = budget.spent if budget.limit is not None else 0
    if streamed:
        joined = "".join(message.text for message in streamed)
        outcome.streamed = AIMessage(content=joined, id=streamed[0].id)
    verdict = "no result (R1)" if outcome.result is None else outcome.result.mode.value
    kind = LedgerKind.TOOL_RESULT
    if outcome.result is not None and outcome.result.mode is ResultMode.CLARIFICATION:
        kind, verdict = LedgerKind.CLARIFICATION, "asked"
    reason = "" if reply is None else "continued with the user's reply"
    outcome.ledger.append(_entry(node, name, kind, verdict, reason))
    return outcome


def _budget(
    deps: Dependencies, state: GraphState, runtime: Runtime[RunContext], node: TaskNode
) -> LlmBudget:
    """The model calls the tool may spend: capped on deep-fallback subtasks (D7), else free."""
    owner = state.get("deep_fallback_owner")
    limit = None
    if owner is not None and node.task.owner_coordinator_name == owner:
        spent = state.get("deep_fallback_calls") or 0
        limit = max(0, deps.limits.deep_fallback_llm_calls - spent)
    user_lang = state["message"].user_lang
    return LlmBudget(assistant_for(deps, runtime), limit=limit, user_lang=user_lang)


def _request(tool: AnyTool, extracted: dict[str, Any] | None) -> BaseModel:
    """Validate an extracted request into the tool's model; ``None`` fills nothing (T6)."""
    return tool.request_model.model_validate(dict(extracted or {}))


def _not_run(node: TaskNode, names: list[str]) -> list[LedgerEntry]:
    return [_entry(node, n, LedgerKind.TOOL_SKIPPED, "not run", AFTER_TERMINAL) for n in names]


def _entry(node: TaskNode, tool: str, kind: LedgerKind, verdict: str, reason: str) -> LedgerEntry:
    return LedgerEntry(kind=kind, task_no=node.task_no, tool=tool, verdict=verdict, reason=reason)
