"""Clarification rounds: ``ask_user``, ``take_reply`` and the tool dispatch (Q1-Q4, B2-B3).

``ask_user`` does nothing but ``interrupt()``: LangGraph re-runs an interrupted
node from its first line, so no work sits before the interrupt (Q4). The reply
arrives either as ``Command(resume=reply)`` (through ``ask_user``) or as the next
message on the thread (through ``take_reply``); both leave it on the open
question, and ``execute`` hands it to the same tool's clarification method.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import BaseModel

from toolweave.graph.context import Dependencies, RunContext
from toolweave.graph.nodes import Call, make_pure_node
from toolweave.graph.normalize import split_conversation
from toolweave.graph.validation import reply_text
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.results import ResultMode, ToolResult
from toolweave.state.task import PromptAndContext
from toolweave.tools.base import ToolCallContext
from toolweave.tools.consumers import (
    ClarifiableContextConsumerTool,
    ClarifiableTool,
    ContextConsumerTool,
)
from toolweave.tools.registry import AnyTool

logger = logging.getLogger(__name__)

CLARIFICATION_LIMIT = {
    "en": (
        "I still need more information to answer, but I have asked too many questions "
        "already. Please ask again with the details included. (Last question: {question})"
    ),
    "hu": (
        "A válaszhoz még több információ kellene, de már túl sok kérdést tettem fel. "
        "Kérem, tegye fel újra a kérdést a részletekkel együtt. (Utolsó kérdés: {question})"
    ),
}
"""What a run ends with when the clarification rounds are used up (Q2), by language."""
NOT_CLARIFIABLE = "{name} returned a clarification request but is not a ClarifiableTool"


def tool_call(
    tool: AnyTool,
    request: BaseModel,
    ctx: ToolCallContext,
    buffer: Mapping[str, list[PromptAndContext]],
    reply: str | None,
) -> Call[ToolResult | None]:
    """The right method of ``tool``, in its sync and async form.

    Plain, with prior context (B2), or with the user's reply (Q2, B3). Pass the
    result through :func:`checked_result`.
    """

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


def checked_result(tool: AnyTool, result: ToolResult | None) -> ToolResult | None:
    """A clarification request from a tool that cannot take the reply is no result (Q1)."""
    clarifiable = isinstance(tool, ClarifiableTool | ClarifiableContextConsumerTool)
    if (
        isinstance(result, ToolResult)
        and result.mode is ResultMode.CLARIFICATION
        and not clarifiable
    ):
        logger.warning(NOT_CLARIFIABLE.format(name=tool.name))
        return None
    return result


def call_tool(
    tool: AnyTool,
    request: BaseModel,
    ctx: ToolCallContext,
    buffer: Mapping[str, list[PromptAndContext]],
    reply: str | None,
) -> ToolResult | None:
    """Call the right method of ``tool`` synchronously (see :func:`tool_call`)."""
    return checked_result(tool, tool_call(tool, request, ctx, buffer, reply).call())


async def acall_tool(
    tool: AnyTool,
    request: BaseModel,
    ctx: ToolCallContext,
    buffer: Mapping[str, list[PromptAndContext]],
    reply: str | None,
) -> ToolResult | None:
    """Await the right method of ``tool`` (see :func:`tool_call`)."""
    return checked_result(tool, await tool_call(tool, request, ctx, buffer, reply).acall())


def clarification_limit_message(user_lang: str, question: str) -> str:
    """The closing message after the last allowed clarification round (Q2)."""
    template = CLARIFICATION_LIMIT.get(user_lang, CLARIFICATION_LIMIT["en"])
    return template.format(question=question)


def resolve_choice(reply: str, choices: Sequence[str]) -> str:
    """A reply that is the number of an offered choice ("2", "2.") becomes that choice.

    So the tool, the conversation history and later follow-ups (A1) see what the
    user picked, not a bare number.
    """
    number = reply.strip().rstrip(".)")
    if number.isdigit() and 1 <= int(number) <= len(choices):
        return choices[int(number) - 1]
    return reply


def make_ask_user(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``ask_user`` node: pause with the open question (Q1)."""

    def ask_user(state: GraphState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Interrupt with the question; on resume, store the reply on it (Q2)."""
        pending = state["clarification"]
        assert pending is not None
        text = resolve_choice(reply_text(interrupt(pending.payload())), pending.choices)
        entry = LedgerEntry(
            kind=LedgerKind.CLARIFICATION,
            task_no=pending.task_no,
            tool=pending.tool,
            verdict="replied",
            reason="resumed with Command(resume=...)",
        )
        update = {
            "clarification": pending.model_copy(update={"reply": text}),
            "messages": [HumanMessage(content=text)],
            "ledger": [entry],
        }
        return update

    return make_pure_node("ask_user", ask_user)


def make_take_reply(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``take_reply`` node: the next message on the thread answers the question (Q2)."""

    def take_reply(state: GraphState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Use the new message as the reply to the open question; nothing is recomputed."""
        pending = state["clarification"]
        assert pending is not None
        text, _ = split_conversation(state["messages"], deps.limits)
        text = resolve_choice(text, pending.choices)
        entry = LedgerEntry(
            kind=LedgerKind.CLARIFICATION,
            task_no=pending.task_no,
            tool=pending.tool,
            verdict="replied",
            reason="the next message on the thread",
        )
        update = {"clarification": pending.model_copy(update={"reply": text}), "ledger": [entry]}
        return update

    return make_pure_node("take_reply", take_reply)
