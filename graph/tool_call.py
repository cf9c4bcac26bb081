"""Calling a tool from the graph: any tool kind, the right method, its failure contained (R7)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from pydantic import BaseModel, ValidationError

from toolweave.graph.context import Dependencies, RunContext, assistant_for, user_data_for
from toolweave.graph.effect_journal import (
    Journal,
    JournalEntry,
    beating,
    journal_for,
    read_journal,
    wait_elsewhere,
)
from toolweave.graph.exchanges import replies_to
from toolweave.graph.idempotency import earlier_call, recorded_call, tool_call_key
from toolweave.graph.nodes import entry
from toolweave.llm.budget import LlmBudget
from toolweave.llm.offline_extract import extract_request
from toolweave.llm.passthrough import astream_message, stream_message
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.state.errors import (
    CallStillRunningError,
    InvalidToolResultError,
    NotClarifiableError,
    ToolFailedError,
)
from toolweave.state.graph_state import ActedCall, GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.results import ResultMode, ToolResult, require_result
from toolweave.state.task import PromptAndContext, TaskNode
from toolweave.tools import required
from toolweave.tools.base import ToolCallContext
from toolweave.tools.consumers import (
    ClarifiableContextConsumerTool,
    ClarifiableTool,
    ContextConsumerTool,
)
from toolweave.tools.effects import Call, Steps, adrive, perform
from toolweave.tools.progress import ProgressEmitter, phrases_for
from toolweave.tools.registry import AnyTool
from toolweave.tools.text import readable
from toolweave.tools.texts import Texts, text_for

logger = logging.getLogger(__name__)

TOOL_RAISED = "raised {error}; treated as no result (R7)"
TOOL_FAILED = "reported a failure; treated as no result (R7, T13)"
MISSING_INPUTS = "required input(s) not filled: {names}; not called, no result (T13, R1)"
MISSING_INPUTS_ASKED = "required input(s) not filled: {names}; asked the user (T13, Q1)"
REQUEST_INVALID = "extracted request did not validate: {error} error(s)"
UNREGISTERED = "tool is no longer registered"
NO_RESULT = "no result (R1)"
KEPT = "kept, not run again"
ACTED_REFUSED = (
    "tool %s acts (side_effects) and its result on task %s was refused: treated as no "
    "result, not raised, so that no retry of the run acts again (S5, Q4)"
)
RESULT_TEXT_RAISED = (
    "result_text of %s, which acts (side_effects), raised: its result reads as the "
    "default text, so that no retry of the run acts again (S5, Q4)"
)
NOT_CLARIFIABLE = (
    "tool {name!r} returned ToolResult.clarification(...), but it is not a ClarifiableTool, "
    "so the user's reply could never reach it (Q1, Q2): subclass ClarifiableTool (or "
    "ClarifiableContextConsumerTool) and implement execute_with_clarification, or return "
    "None or another result"
)
REPLAYED = (
    "acted under this key in a checkpoint of this thread (a replayed or forked run, or a "
    "stored pause answered again): not called again; its stored result is used (S5, Q6)"
)
JOURNALED = (
    "acted for this turn's message in an earlier run of this thread whose checkpoints are "
    "gone (a run the server rolled back, or a thread whose checkpoints were deleted), as "
    "the run's store records: not called again; the recorded result is used (S5, Q6)"
)
AMENDS = "amends the call with key {key} (Q2, Q6)"
RUNNING_ELSEWHERE = (
    "{tool}: its call for this request, started by another run, has not ended after "
    "{s:g} s of waiting; not made again here (S5, Q6): send the same message again later "
    "for its result (or raise Limits.thread_wait_s)"
)
NOT_RUN_AGAIN = (
    "acted for the request this message amends (key {key}) and does not take amendments "
    "(takes_amendments is False): not called again; its earlier result stands and the "
    "answer says so (S5, Q6)"
)


@dataclass
class Outcome:
    """What one tool call produced, before it becomes a state update."""

    result: ToolResult | None = None
    streamed: AIMessage | None = None
    ledger: list[LedgerEntry] = field(default_factory=list)
    llm_calls: int = 0
    deep_calls: int = 0
    request: dict[str, Any] | None = None
    read: bool = False  # The result's text is already read for the answer (R10): taken as it is.
    update: dict[str, Any] = field(default_factory=dict)  # more writes: client calls (W3)
    pause: bool = False  # it opened client calls: the tool stays at the head of the queue (W3)
    failed: str = ""  # the type of the error the call raised (R7): never its message (X4)
    not_here: bool = False  # a CLIENT tool with no client to run it (W3): not done here
    filled: bool = False  # the reply filled a required input the graph asked for (Q1, X3)


def tool_call(
    tool: AnyTool,
    request: BaseModel,
    ctx: ToolCallContext,
    buffer: Mapping[str, list[PromptAndContext]],
    reply: str | None,
) -> Call[ToolResult | None]:
    """The right method of ``tool`` (plain, B2 context, Q2/B3 reply), sync and async."""

    def snapshot() -> dict[str, list[PromptAndContext]]:  # copied only for a consumer
        return {key: list(entries) for key, entries in buffer.items()}

    if reply is not None and isinstance(tool, ClarifiableContextConsumerTool):
        return Call(
            lambda: tool.execute_with_clarification_and_prior_context(
                request, ctx, reply, snapshot()
            ),
            lambda: tool.aexecute_with_clarification_and_prior_context(
                request, ctx, reply, snapshot()
            ),
        )
    if reply is not None and isinstance(tool, ClarifiableTool):
        return Call(
            lambda: tool.execute_with_clarification(request, ctx, reply),
            lambda: tool.aexecute_with_clarification(request, ctx, reply),
        )
    if isinstance(tool, ContextConsumerTool):
        return Call(
            lambda: tool.execute_with_prior_context(request, ctx, snapshot()),
            lambda: tool.aexecute_with_prior_context(request, ctx, snapshot()),
        )
    return Call(lambda: tool.execute(request, ctx), lambda: tool.aexecute(request, ctx))


def result_reader(tool: AnyTool, user_lang: str) -> Callable[[str], str]:
    """How the tool's result reads in the answer: ``result_text`` (R10), contained if it acts."""
    reads = partial(tool.result_text, user_lang=user_lang)
    if not tool.side_effects:
        return reads

    def contained(text: str) -> str:
        try:
            return reads(text)
        except Exception:  # S5: the call is done; its reading must not undo the step
            logger.error(RESULT_TEXT_RAISED, tool.name, exc_info=True)
            return readable(text)

    return contained


def checked_result(tool: AnyTool, result: ToolResult | None) -> ToolResult | None:
    """``result``, unless it is a clarification request from a tool that cannot take the reply.

    Raises:
        NotClarifiableError: A tool bug, loud (R7); the caller contains it for a tool that acts.
    """
    if not isinstance(result, ToolResult) or result.mode is not ResultMode.CLARIFICATION:
        return result
    if isinstance(tool, ClarifiableTool | ClarifiableContextConsumerTool):
        return result
    raise NotClarifiableError(NOT_CLARIFIABLE.format(name=tool.name))


def progress_for(
    deps: Dependencies,
    state: GraphState,
    runtime: Runtime[RunContext],
    node: TaskNode,
    tool: AnyTool,
) -> ProgressEmitter:
    """The progress emitter of one tool call: its phrases in the user's language (P4)."""
    say = phrases_for(
        tool.name, state["message"].user_lang, tool.progress_messages, deps.domain.progress_messages
    )
    return ProgressEmitter(tool.name, runtime.stream_writer, task_no=node.task_no, say=say)


def tool_steps(
    deps: Dependencies,
    state: GraphState,
    runtime: Runtime[RunContext],
    node: TaskNode,
    name: str,
    text: str,
    reply: str | None,
) -> Steps[Outcome]:
    """Extract the request if needed, call the tool (given ``reply``, Q2), contain failure (R7)."""
    tool = deps.registry.get(name)
    if tool is None:
        return Outcome(ledger=[entry(node, name, LedgerKind.TOOL_SKIPPED, "skipped", UNREGISTERED)])
    earlier = earlier_call(state, node.task_no, name) if tool.side_effects else None
    if (kept := not_made_again(state, node, tool, earlier, deps.domain.texts)) is not None:
        return kept
    journal = journal_of(deps, state, runtime, node, tool, reply)
    found = yield from journal_entry(deps, journal)
    if found is not None and found.done:  # S5, Q6: an earlier run of this turn made it
        return journaled(node, tool, found.call, state["message"].user_lang, deps.domain.texts)
    if found is not None and found.still_running(deps.limits.acting_call_lease_s):
        return still_running(node, tool.name, deps.limits.thread_wait_s)
    outcome = Outcome(request=node.requests.get(name))
    request = yield from _request_steps(deps, runtime, node, tool, text, outcome)
    if request is None:
        return outcome
    request, unfilled = _with_inputs(deps, state, node, tool, request, reply, outcome)
    if unfilled is not None:
        return unfilled
    if reply is not None and _graph_asked(deps, tool, node.requests.get(name)):
        reply = None  # T13, Q1: the reply was the input the graph asked for, not the tool's
    key = tool_call_key(state, node.task_no, name) if found is None else found.call.key
    made = _Made(tool, request, reply, key, amended_keys(earlier), journal)
    return (yield from _call_steps(deps, state, runtime, node, text, made, outcome))


@dataclass(frozen=True)
class _Made:
    """One call to make: the tool, its request and reply, its key and amended keys, its journal."""

    tool: AnyTool
    request: BaseModel
    reply: str | None
    key: str  # Q6: this run's, or the key of the earlier attempt the journal holds (in doubt)
    amends: tuple[str, ...]
    journal: Journal | None


def _call_steps(
    deps: Dependencies,
    state: GraphState,
    runtime: Runtime[RunContext],
    node: TaskNode,
    text: str,
    made: _Made,
    outcome: Outcome,
) -> Steps[Outcome]:
    """Call the tool (its journal told first, then its result, S5, Q6), failure contained (R7)."""
    tool, name, journal = made.tool, made.tool.name, made.journal
    streamed = _StreamedAnswer(name)
    progress = progress_for(deps, state, runtime, node, tool)
    budget = _budget(deps, state, runtime, node)
    ctx = ToolCallContext(
        task=node.task,
        text=text,
        systems=tuple(state.get("systems") or ()),
        user_lang=state["message"].user_lang,
        important_words=tuple(state["message"].important_words),
        search_words=node.search_words,
        user_data=user_data_for(state, runtime),
        progress=progress,
        stream_answer=streamed.stream,
        astream_answer=streamed.astream,
        llm=budget,
        idempotency_key=made.key,
        amends=made.amends,
        replies=_replies(state, node, name, made.reply),
    )
    if journal is not None:
        yield from journal.started(ctx.idempotency_key, ctx.amends)
    buffer = state["context_buffer"]
    try:
        made_call = tool_call(tool, made.request, ctx, buffer, made.reply)
        if tool.side_effects:  # a run cancelled mid-call does not cut it (S5, Q6)
            made_call = _heartbeat(deps, journal, ctx, made_call)
            wait_s = deps.limits.thread_wait_s
            record = _journal_later(journal, tool, ctx.idempotency_key, ctx.amends)
            made_call = deps.calls_in_flight.finished(
                name, made.key, made_call, wait_s=wait_s, after_cut=record
            )
        raw = yield from perform(made_call)
        result = require_result(name, checked_result(tool, raw))
    except GraphBubbleUp:
        raise
    except InvalidToolResultError as exc:  # a bad result is the tool's bug: loud...
        if not tool.side_effects:
            raise
        # ...unless it acts: raising drops the step's writes, and each retry acts again (S5, Q4)
        logger.error(ACTED_REFUSED, name, node.task_no, exc_info=True)
        refused = _contained(outcome, budget, node, name, exc, progress)
        acted = refused.ledger[-1].model_copy(update={"key": ctx.idempotency_key})
        refused.ledger[-1] = acted  # it ran: its call's key, as a result's (S5, Q6)
        yield from journal_done(journal, acted, "")
        return refused
    except ToolFailedError as exc:  # T13, R7: a failure the tool reported; one line
        debug = logger.isEnabledFor(logging.DEBUG)
        logger.warning("tool %s failed on task %s: %s", name, node.task_no, exc, exc_info=debug)
        return _contained(outcome, budget, node, name, exc, progress)
    except Exception as exc:  # R7: a failing tool is "no result"; the run goes on
        logger.warning("tool %s raised on task %s", name, node.task_no, exc_info=True)
        return _contained(outcome, budget, node, name, exc, progress)
    outcome.result = result
    _spent(outcome, budget)
    outcome.streamed = streamed.joined()
    called = _called(node, name, outcome.result, made.reply)
    outcome.ledger.append(acting_entry(called, tool, ctx.idempotency_key, ctx.amends))
    said, finished = _journaled_text(result)
    yield from journal_done(journal, outcome.ledger[-1], said, finished=finished)
    return outcome


def _journaled_text(result: ToolResult | None) -> tuple[str, bool]:
    """What the journal keeps of a returned call: its text, and whether it is a finished answer."""
    said = "" if result is None else result.context_text()
    return said, result is not None and result.mode is ResultMode.ANSWER


def _journal_later(
    journal: Journal | None, tool: AnyTool, key: str, amends: tuple[str, ...]
) -> Callable[[ToolResult | None], Awaitable[None]] | None:
    """How a call that ends after its run was cancelled is recorded in ``journal`` (S5, Q6).

    As :func:`_call_steps` records a returned call: its result's text, whether it is a
    finished answer; a refused result as no result.
    """
    if journal is None:
        return None

    async def record(raw: ToolResult | None) -> None:
        try:
            result = require_result(tool.name, checked_result(tool, raw))
        except InvalidToolResultError:
            result = None
        said, finished = _journaled_text(result)
        await adrive(journal.done(key, amends, said, finished=finished))

    return record


def _replies(state: GraphState, node: TaskNode, name: str, reply: str | None) -> tuple[str, ...]:
    """``ctx.replies``: this request's replies to the tool's questions on the task (Q2)."""
    if reply is None:
        return ()
    rounds = int(state.get("clarification_rounds") or 0)
    return replies_to(state["messages"], rounds, node.task_no, name, reply)


def _heartbeat(
    deps: Dependencies, journal: Journal | None, ctx: ToolCallContext, made_call: Call[Any]
) -> Call[Any]:
    """The call, telling the journal it runs while it does (S5, Q6); as it is without one."""
    if journal is None:
        return made_call
    every_s = deps.limits.acting_call_lease_s / 3
    return beating(journal, ctx.idempotency_key, ctx.amends, made_call, every_s=every_s)


def journal_entry(deps: Dependencies, journal: Journal | None) -> Steps[JournalEntry | None]:
    """The journal's entry of the call, waited on while another process runs it (S5, Q6)."""
    found = yield from read_journal(journal)
    lease_s = deps.limits.acting_call_lease_s
    if journal is None or found is None or not found.still_running(lease_s):
        return found
    wait_s = deps.limits.thread_wait_s
    return (yield from wait_elsewhere(journal, found, wait_s=wait_s, lease_s=lease_s))


def still_running(node: TaskNode, name: str, waited_s: float) -> Outcome:
    """S5, Q6, R7: the call still runs in another process or graph after the wait: not made.

    No result, so the answer says it is still being done (``still_running``), not that it
    failed: it may well be done.
    """
    error = CallStillRunningError(RUNNING_ELSEWHERE.format(tool=name, s=waited_s))
    logger.warning("%s", error)
    failed = entry(node, name, LedgerKind.TOOL_ERROR, "failed", str(error))
    return Outcome(ledger=[failed], failed=CallStillRunningError.__name__)


def journal_of(
    deps: Dependencies,
    state: GraphState,
    runtime: Runtime[RunContext] | None,
    node: TaskNode,
    tool: AnyTool,
    reply: str | None,
) -> Journal | None:
    """The journal of a call of a tool that acts, where the run has a store (S5, Q6)."""
    if not tool.side_effects or runtime is None:
        return None
    return journal_for(runtime.store, deps.domain.name, state, node.task_no, tool.name, reply)


def journal_done(
    journal: Journal | None, called: LedgerEntry, result: str, *, finished: bool = False
) -> Steps[None]:
    """Record in ``journal`` a call whose ledger entry says it acted (it has a key, Q6)."""
    if journal is not None and called.key:
        yield from journal.done(called.key, called.amends, result, finished=finished)


def done_already(tool: AnyTool, done: ActedCall, lang: str, texts: Texts | None) -> str:
    """What a call made in an earlier run said: its result, else that it was done (R7, S5)."""
    return done.result or text_for("done_already", lang, texts, tool=tool.name.replace("_", " "))


def journaled(
    node: TaskNode, tool: AnyTool, done: ActedCall, lang: str, texts: Texts | None = None
) -> Outcome:
    """S5, Q6: a call an earlier run of this turn made, which the thread no longer records."""
    text = done_already(tool, done, lang, texts)
    standing = _standing(node, tool, done, JOURNALED, text, read=not done.result)
    if done.finished and done.result:  # R3: a finished answer stands as the answer again
        standing.result = ToolResult.as_answer(tool.name, done.result)
    return standing


def not_made_again(
    state: GraphState,
    node: TaskNode,
    tool: AnyTool,
    earlier: ActedCall | None,
    texts: Texts | None = None,
) -> Outcome | None:
    """The outcome of a call of a tool that acts which is not made (again), else ``None`` (S5, Q6).

    One ``earlier`` made when the tool takes no amendments, or one the thread's checkpoints record.
    """
    if earlier is not None and not tool.takes_amendments:
        return kept_effect(node, tool, earlier, state["message"].user_lang, texts)
    if tool.side_effects and (done := recorded_call(tool_call_key(state, node.task_no, tool.name))):
        text = done_already(tool, done, state["message"].user_lang, texts)
        return _standing(node, tool, done, REPLAYED, text, read=not done.result)
    return None


def amended_keys(earlier: ActedCall | None) -> tuple[str, ...]:
    """``ctx.amends`` of a call that replaces ``earlier``: its chain, then its key (Q6)."""
    return () if earlier is None else (*earlier.amends, earlier.key)


def acting_entry(
    called: LedgerEntry, tool: AnyTool, key: str, amends: tuple[str, ...]
) -> LedgerEntry:
    """The ledger entry of a call, with its key and the keys it replaces if the tool acted (Q6)."""
    if not tool.side_effects or called.kind is not LedgerKind.TOOL_RESULT:
        return called
    if called.verdict == NO_RESULT:
        return called
    reason = called.reason
    if amends:
        reason = "; ".join(part for part in (reason, AMENDS.format(key=amends[-1])) if part)
    return called.model_copy(update={"key": key, "amends": amends, "reason": reason})


def kept_effect_text(
    tool: AnyTool, earlier: ActedCall, user_lang: str, texts: Texts | None = None
) -> str:
    """What the answer is told of ``earlier``, a call whose effect stands (S5, Q6, R10)."""
    said = result_reader(tool, user_lang)(earlier.result).strip() if earlier.result else ""
    if said:
        return text_for("kept_effect", user_lang, texts, said=said)
    return text_for("kept_effect_unsaid", user_lang, texts, tool=tool.name.replace("_", " "))


def kept_effect(
    node: TaskNode, tool: AnyTool, earlier: ActedCall, user_lang: str, texts: Texts | None = None
) -> Outcome:
    """S5, Q6: a tool that acted for the amended request, not called again: its result stands."""
    text = kept_effect_text(tool, earlier, user_lang, texts)
    return _standing(node, tool, earlier, NOT_RUN_AGAIN.format(key=earlier.key), text, read=True)


def _standing(
    node: TaskNode, tool: AnyTool, call: ActedCall, reason: str, text: str, *, read: bool
) -> Outcome:
    """A call not made, its earlier ``call``'s result standing: a result on the task, its key."""
    amends = call.amends
    kept = entry(node, tool.name, LedgerKind.TOOL_RESULT, KEPT, reason, key=call.key, amends=amends)
    result = ToolResult.as_guaranteed_context(tool.name, text)
    return Outcome(result=result, ledger=[kept], read=read)


def _with_inputs(
    deps: Dependencies,
    state: GraphState,
    node: TaskNode,
    tool: AnyTool,
    request: BaseModel,
    reply: str | None,
    outcome: Outcome,
) -> tuple[BaseModel, Outcome | None]:
    """The request with its required inputs (T13; a reply fills one, Q2), or a call not made.

    Not made: the tool or domain asks for an unfilled input (Q1), else the call is declined.
    """
    missing = required.missing_inputs(tool, request)
    domain_asks = deps.domain.ask_for_missing_inputs
    if not missing or required.fills_gap_itself(tool, domain_asks=domain_asks):
        return request, None
    if reply is not None:  # Q2: the user's reply is the input the graph asked for
        request = required.with_reply(tool, request, reply, read=extract_request)
        outcome.request = request.model_dump(exclude_none=True, by_alias=True)
        before, missing = len(missing), required.missing_inputs(tool, request)
        outcome.filled = len(missing) < before
    if not missing:
        return request, None
    names = ", ".join(missing)
    if required.graph_asks(tool, domain_asks=domain_asks):
        question, offered = required.input_question(
            tool, request, state["message"].user_lang, deps.domain.texts
        )
        outcome.result = ToolResult.clarification(tool.name, question, offered)
        asked = MISSING_INPUTS_ASKED.format(names=names)
        outcome.ledger.append(entry(node, tool.name, LedgerKind.CLARIFICATION, "asked", asked))
    else:
        declined = MISSING_INPUTS.format(names=names)
        outcome.ledger.append(entry(node, tool.name, LedgerKind.TOOL_SKIPPED, "declined", declined))
    return request, outcome


def _graph_asked(deps: Dependencies, tool: AnyTool, earlier: Mapping[str, Any] | None) -> bool:
    """T13, Q1: whether the round's reply answered the graph's question for a required input.

    A clarifiable tool whose inputs the graph asks for (its or the domain's
    ``ask_for_missing_inputs``) is called with ``execute`` once the reply fills them: it
    asked nothing itself, so no ``execute_with_clarification`` takes that reply.
    """
    if not required.asks_itself(tool) or required.fills_gap_itself(
        tool, domain_asks=deps.domain.ask_for_missing_inputs
    ):
        return False
    return bool(required.missing_from(tool, dict(earlier or {})))


def _request_steps(
    deps: Dependencies,
    runtime: Runtime[RunContext],
    node: TaskNode,
    tool: AnyTool,
    text: str,
    outcome: Outcome,
) -> Steps[BaseModel | None]:
    """The tool's request: extracted unless routing did (T7), validated (T6); else ``None``."""
    if tool.name not in node.requests and tool.request_model.model_fields:
        assistant = assistant_for(deps, runtime)
        extracted = yield from assistant.generate_tool_request_steps(
            text, EXTRACTION_SYSTEM_PROMPT, None, tool
        )
        outcome.request, outcome.llm_calls = extracted.get(tool.name), 1
    try:
        return tool.request_model.model_validate(dict(outcome.request or {}))  # T6
    except ValidationError as exc:
        reason = REQUEST_INVALID.format(error=exc.error_count())
        outcome.ledger.append(entry(node, tool.name, LedgerKind.TOOL_SKIPPED, "skipped", reason))
        return None


class _StreamedAnswer:
    """What one call streams itself (R4, ``ctx.stream_answer``), joined into one message."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._messages: list[AIMessage] = []

    def stream(self, chunks: Iterable[str]) -> str:
        self._messages.append(stream_message(chunks, run_name=f"{self._name}.answer"))
        return self._messages[-1].text

    async def astream(self, chunks: AsyncIterable[str] | Iterable[str]) -> str:
        self._messages.append(await astream_message(chunks, run_name=f"{self._name}.answer"))
        return self._messages[-1].text

    def joined(self) -> AIMessage | None:
        if not self._messages:
            return None
        joined = "".join(message.text for message in self._messages)
        return AIMessage(content=joined, id=self._messages[0].id)


def _contained(
    outcome: Outcome,
    budget: LlmBudget,
    node: TaskNode,
    name: str,
    exc: Exception,
    progress: ProgressEmitter,
) -> Outcome:
    """R7: a failed call (logged by the caller) is reported as progress and in the ledger."""
    _spent(outcome, budget)
    failed = isinstance(exc, ToolFailedError)
    reason = TOOL_FAILED if failed else TOOL_RAISED.format(error=type(exc).__name__)
    progress("ERROR", type(exc).__name__)
    outcome.ledger.append(entry(node, name, LedgerKind.TOOL_ERROR, "failed", reason))
    outcome.failed = type(exc).__name__
    return outcome


def _called(node: TaskNode, name: str, result: ToolResult | None, reply: str | None) -> LedgerEntry:
    """The ledger entry of a call that returned: its result kind, or the question it asked."""
    verdict = NO_RESULT if result is None else result.mode.value
    kind = LedgerKind.TOOL_RESULT
    if result is not None and result.mode is ResultMode.CLARIFICATION:
        kind, verdict = LedgerKind.CLARIFICATION, "asked"
    reason = "" if reply is None else "continued with the user's reply"
    return entry(node, name, kind, verdict, reason)


def _spent(outcome: Outcome, budget: LlmBudget) -> None:
    """The model calls the tool spent, on the run's count and on the deep cap (D7)."""
    outcome.llm_calls += budget.spent
    outcome.deep_calls = budget.spent if budget.deep else 0


def _budget(
    deps: Dependencies, state: GraphState, runtime: Runtime[RunContext], node: TaskNode
) -> LlmBudget:
    """The model calls the tool may spend: capped on deep-fallback subtasks (D7), else free."""
    owner = state.get("deep_fallback_owner")
    limit = None
    assistant = assistant_for(deps, runtime)
    deep = owner is not None and node.task.owner_coordinator_name == owner
    if deep and not assistant.free_calls:  # in-process reads cost nothing: page limits bound them
        spent = state.get("deep_fallback_calls") or 0
        limit = max(0, deps.limits.deep_fallback_llm_calls - spent)
    return LlmBudget(assistant, limit=limit, user_lang=state["message"].user_lang, deep=deep)
