"""Tools that consume the context buffer or ask the user (B2, B3, Q1); each has an async twin."""

from __future__ import annotations

import asyncio
from typing import NoReturn

from toolweave.state.results import ToolResult
from toolweave.tools.base import (
    ChatbotTool,
    PriorContext,
    RequestT,
    ToolCallContext,
    run_async_twin,
)

CONSUMER_PLAIN_EXECUTE = (
    "{name} is a ContextConsumerTool: the orchestrator calls execute_with_prior_context(), "
    "never execute() (B2)"
)


class ContextConsumerTool(ChatbotTool[RequestT]):
    """A tool that builds its result from earlier results (``IContextConsumerTool``, B2)."""

    def execute(self, request: RequestT, ctx: ToolCallContext) -> NoReturn:
        """Not supported for consumers (B2)."""
        raise NotImplementedError(CONSUMER_PLAIN_EXECUTE.format(name=self.name))

    async def aexecute(self, request: RequestT, ctx: ToolCallContext) -> NoReturn:
        """Not supported for consumers (B2)."""
        raise NotImplementedError(CONSUMER_PLAIN_EXECUTE.format(name=self.name))

    def execute_with_prior_context(
        self, request: RequestT, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        """Run with a snapshot of the buffer keyed ``"task_no:tool_name"`` (B2)."""
        return run_async_twin(self, "execute_with_prior_context", request, ctx, prior_context)

    async def aexecute_with_prior_context(
        self, request: RequestT, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        """Async :meth:`execute_with_prior_context`; the default runs it in a worker thread."""
        return await asyncio.to_thread(self.execute_with_prior_context, request, ctx, prior_context)


class ClarifiableTool(ChatbotTool[RequestT]):
    """A tool that may answer with a question for the user (Q1) and continue on the reply (Q2)."""

    def execute_with_clarification(
        self, request: RequestT, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        """Continue after the user answered the clarification question (Q2)."""
        return run_async_twin(self, "execute_with_clarification", request, ctx, reply)

    async def aexecute_with_clarification(
        self, request: RequestT, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        """Async :meth:`execute_with_clarification`; the default runs it in a worker thread."""
        return await asyncio.to_thread(self.execute_with_clarification, request, ctx, reply)


class ClarifiableContextConsumerTool(ContextConsumerTool[RequestT]):
    """A context consumer that may ask the user (``IClarifiableContextConsumerTool``, B3)."""

    def execute_with_clarification_and_prior_context(
        self, request: RequestT, ctx: ToolCallContext, reply: str, prior_context: PriorContext
    ) -> ToolResult | None:
        """Continue after the user's reply, with the prior context again (B3)."""
        method = "execute_with_clarification_and_prior_context"
        return run_async_twin(self, method, request, ctx, reply, prior_context)

    async def aexecute_with_clarification_and_prior_context(
        self, request: RequestT, ctx: ToolCallContext, reply: str, prior_context: PriorContext
    ) -> ToolResult | None:
        """Async :meth:`execute_with_clarification_and_prior_context`; default: a worker thread."""
        return await asyncio.to_thread(
            self.execute_with_clarification_and_prior_context, request, ctx, reply, prior_context
        )
