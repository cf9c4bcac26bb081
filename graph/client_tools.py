"""AI system tools in the graph: scope (W3), the input check (W2) and the client-tool pause."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from pydantic import ValidationError

from toolweave.graph.context import (
    Dependencies,
    RunContext,
    assistant_for,
    run_context,
    user_data_for,
)
from toolweave.graph.effect_journal import Journal, read_journal
from toolweave.graph.idempotency import earlier_call, tool_call_key
from toolweave.graph.nodes import entry
from toolweave.graph.tool_call import (
    Outcome,
    acting_entry,
    amended_keys,
    journal_done,
    journal_of,
    journaled,
    not_made_again,
)
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.state.client_calls import ClientToolCall, ClientToolResultError, parse_results
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerKind
from toolweave.state.pauses import ClientCalls, ClientToolCallsPayload
from toolweave.state.results import ToolResult
from toolweave.state.task import TaskNode
from toolweave.tools.ai.base import AiToolContext, AiToolDefinition, AiToolScope, execution
from toolweave.tools.ai.inputs import InputCheck, check_input, input_text
from toolweave.tools.ai.orchestration import AiChatbotTool
from toolweave.tools.ai.prompts import INPUT_RETRY_PROMPT
from toolweave.tools.effects import Steps, perform
from toolweave.tools.progress import ProgressEmitter

logger = logging.getLogger(__name__)

NOT_ANNOUNCED = "CLIENT scope and the client announced no implementation: not run (W3)"
INPUT_REJECTED = "input rejected (attempt {attempt} of {limit}): {error}"
CLIENT_ERROR = "the client reported an error: {error}"
RAISED = "raised {error}; treated as no result (R7)"
NOT_TEXT = "returned {kind}, not text; treated as no result (W2)"


def announced_tools(
    state: Mapping[str, Any], runtime: Runtime[RunContext] | None
) -> frozenset[str]:
    """The tool ids the run's client implements: the runtime context's, else the input's."""
    context = run_context(runtime)
    if context is not None and context.client_tools is not None:
        return frozenset(context.client_tools)
    return frozenset(state.get("client_tools") or ())


def _context(tool: AiChatbotTool, text: str, call_id: str | None = None) -> ToolResult:
    definition = tool.definition
    doc = UniqueTextDocument(
        document_id=f"{definition.id}:{call_id}" if call_id else definition.id,
        document_name=definition.name,
        text=text,
    )
    # R10: what an AI tool found always reaches the answer, read through its result_text
    return ToolResult.as_guaranteed_context(tool.name, [doc])


def _checked_input(
    deps: Dependencies,
    runtime: Runtime[RunContext] | None,
    node: TaskNode,
    tool: AiChatbotTool,
    text: str,
    outcome: Outcome,
) -> Steps[InputCheck | None]:
    """The tool's input, checked (W2); re-extracted with the error, within the limit."""
    has_fields = bool(tool.request_model.model_fields)
    request = node.requests.get(tool.name)
    extracted = tool.name in node.requests
    limit = max(1, deps.limits.ai_input_attempts)
    prompt = EXTRACTION_SYSTEM_PROMPT
    for attempt in range(1, limit + 1):
        if has_fields and not extracted:
            assistant = assistant_for(deps, runtime)
            reply = yield from assistant.generate_tool_request_steps(text, prompt, None, tool)
            request = reply.get(tool.name)
            outcome.llm_calls += 1
        extracted = False
        outcome.request = request
        check = _input_check(tool, request)
        if check.ok:
            return check
        error = check.error or ""
        reason = INPUT_REJECTED.format(attempt=attempt, limit=limit, error=error)
        outcome.ledger.append(entry(node, tool.name, LedgerKind.TOOL_SKIPPED, "skipped", reason))
        if not has_fields:
            break
        prompt = EXTRACTION_SYSTEM_PROMPT + INPUT_RETRY_PROMPT.format(error=error)
    return None


def _input_check(tool: AiChatbotTool, request: Mapping[str, Any] | None) -> InputCheck:
    """The tool's input from ``request``, checked (W2); wrong types fail the check too."""
    try:
        model = tool.request_model.model_validate(dict(request or {}))
    except ValidationError as exc:
        return InputCheck(text=str(request), error=f"the input has wrong types: {exc}")
    return check_input(tool.definition, input_text(tool.definition, model))


def _consume(
    state: GraphState, node: TaskNode, tool: AiChatbotTool, progress: ProgressEmitter
) -> Outcome | None:
    """The client's result for the tool's open call, recorded once (W3)."""
    batch = state.get("pause")
    if not isinstance(batch, ClientCalls) or batch.task_no != node.task_no or batch.waiting:
        return None
    call = batch.call_for(tool.definition.id)
    if call is None:
        return None
    consumed = (*batch.consumed, call.call_id)
    done = all(c.call_id in consumed for c in batch.calls)
    outcome = Outcome(
        update={"pause": None if done else batch.model_copy(update={"consumed": consumed})}
    )
    received = batch.results[call.call_id]
    if received.error is not None:
        progress("ERROR", "client")
        reason = CLIENT_ERROR.format(error=received.error[:300])
        outcome.ledger.append(entry(node, tool.name, LedgerKind.TOOL_ERROR, "failed", reason))
        return outcome
    outcome.result = _context(tool, received.output or "", call.call_id)
    reason = f"ran in the client (call {call.call_id})"
    outcome.ledger.append(entry(node, tool.name, LedgerKind.TOOL_RESULT, "context", reason))
    return outcome


def _open_calls(
    deps: Dependencies, node: TaskNode, first: ClientToolCall, announced: frozenset[str]
) -> tuple[ClientToolCall, ...]:
    """The head call plus the client tools queued right after it whose input is known."""
    calls = [first]
    for name in node.queue[1:]:
        tool = deps.registry.get(name)
        if not isinstance(tool, AiChatbotTool) or tool.definition.scope is AiToolScope.SERVER:
            break  # the client runs it (W3) only when it announced an implementation
        if tool.definition.id not in announced:
            break
        if tool.request_model.model_fields and name not in node.requests:
            break
        check = _input_check(tool, node.requests.get(name))
        if not check.ok:
            break
        calls.append(_call(tool.definition, check))
    return tuple(calls)


def _call(definition: AiToolDefinition, check: InputCheck) -> ClientToolCall:
    return ClientToolCall(
        call_id=f"call_{uuid.uuid4().hex[:16]}",
        tool_id=definition.id,
        name=definition.name,
        input=check.text,
    )


def _pause_for_client(
    deps: Dependencies,
    node: TaskNode,
    tool: AiChatbotTool,
    check: InputCheck,
    announced: frozenset[str],
    outcome: Outcome,
) -> Outcome:
    """W3: open the client-tool pause for the tool and the client tools queued after it."""
    calls = _open_calls(deps, node, _call(tool.definition, check), announced)
    requests = {**node.requests, tool.name: outcome.request}
    outcome.update = {
        "pause": ClientCalls(task_no=node.task_no, calls=calls),
        "tasks": {node.task_no: node.model_copy(update={"requests": requests})},
    }
    ids = ", ".join(call.call_id for call in calls)
    reason = f"paused for the client: {len(calls)} call(s) {ids} (W3)"
    outcome.ledger.append(entry(node, tool.name, LedgerKind.TOOL_RESULT, "client", reason))
    outcome.pause = True
    return outcome


def call_context(
    state: GraphState,
    runtime: Runtime[RunContext] | None,
    node: TaskNode,
    tool: AiChatbotTool,
    progress: ProgressEmitter,
) -> AiToolContext:
    """The context of one server-side call of an AI tool (W2), keyed as a chatbot tool's (Q6)."""
    return AiToolContext(
        idempotency_key=tool_call_key(state, node.task_no, tool.name),
        task_no=node.task_no,
        user_lang=state["message"].user_lang,
        systems=tuple(state.get("systems") or ()),
        user_data=user_data_for(state, runtime),
        progress=progress,
    )


def _run_here(
    node: TaskNode,
    tool: AiChatbotTool,
    check: InputCheck,
    outcome: Outcome,
    ctx: AiToolContext,
    journal: Journal | None,
) -> Steps[Outcome]:
    """The tool's ``execute(input[, ctx])`` on the server (journaled, S5, Q6), failure contained."""
    progress = ctx.progress
    if journal is not None:
        yield from journal.started(ctx.idempotency_key, ctx.amends)
    try:
        output = yield from perform(execution(tool.ai_tool, check.text, ctx))
    except GraphBubbleUp:
        raise
    except Exception as exc:  # R7: a failing tool is "no result"; the run goes on
        logger.warning("AI tool %s raised on task %s", tool.name, node.task_no, exc_info=True)
        progress("ERROR", type(exc).__name__)
        reason = RAISED.format(error=type(exc).__name__)
        outcome.ledger.append(entry(node, tool.name, LedgerKind.TOOL_ERROR, "failed", reason))
        return outcome
    if not isinstance(output, str):
        progress("ERROR", type(output).__name__)
        reason = NOT_TEXT.format(kind=type(output).__name__)
        outcome.ledger.append(entry(node, tool.name, LedgerKind.TOOL_ERROR, "failed", reason))
        return outcome
    outcome.result = _context(tool, output)
    ran = entry(node, tool.name, LedgerKind.TOOL_RESULT, "context", "ran on the server")
    outcome.ledger.append(acting_entry(ran, tool, ctx.idempotency_key, ctx.amends))
    yield from journal_done(journal, outcome.ledger[-1], output)
    return outcome


def ai_tool_steps(
    deps: Dependencies,
    state: GraphState,
    runtime: Runtime[RunContext] | None,
    node: TaskNode,
    tool: AiChatbotTool,
    text: str,
    progress: ProgressEmitter,
) -> Steps[Outcome]:
    """One ``execute`` step of an AI tool (W2, W3): its model and tool calls are effects."""
    received = _consume(state, node, tool, progress)
    if received is not None:
        return received
    earlier = earlier_call(state, node.task_no, tool.name) if tool.side_effects else None
    if (kept := not_made_again(state, node, tool, earlier, deps.domain.texts)) is not None:
        return kept
    outcome = Outcome()
    announced = announced_tools(state, runtime)
    definition = tool.definition
    in_client = definition.runs_in_client(announced)
    if in_client and definition.scope is AiToolScope.CLIENT and definition.id not in announced:
        outcome.ledger.append(
            entry(node, tool.name, LedgerKind.TOOL_SKIPPED, "skipped", NOT_ANNOUNCED)
        )
        outcome.not_here = True
        return outcome
    journal = None if in_client else journal_of(deps, state, runtime, node, tool, None)
    found = yield from read_journal(journal)
    if found is not None and found.done:  # S5, Q6: an earlier run of this turn ran it
        return journaled(node, tool, found.call, state["message"].user_lang, deps.domain.texts)
    check = yield from _checked_input(deps, runtime, node, tool, text, outcome)
    if check is None:
        return outcome
    if in_client:
        return _pause_for_client(deps, node, tool, check, announced, outcome)
    ctx = call_context(state, runtime, node, tool, progress)
    key = ctx.idempotency_key if found is None else found.call.key  # in doubt: its first key
    ctx = dataclasses.replace(ctx, amends=amended_keys(earlier), idempotency_key=key)
    return (yield from _run_here(node, tool, check, outcome, ctx, journal))


def receive_results(
    pending: ClientCalls, first: Any, ask: Callable[[ClientToolCallsPayload], Any]
) -> ClientCalls:
    """Merge resume values into ``pending`` until every call has a result; a bad one asks again."""
    value = first
    while True:
        try:
            results = parse_results(value, pending)
        except ClientToolResultError as exc:
            value = ask(pending.payload(error=str(exc)))
            continue
        pending = pending.model_copy(update={"results": {**pending.results, **results}})
        if not pending.waiting:
            return pending
        value = ask(pending.payload())
