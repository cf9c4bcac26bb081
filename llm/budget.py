"""The LLM calls one tool call may spend, counted for the run and capped for deep fallback (D7)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolweave.llm.port import LlmAssistant


class LlmBudget:
    """A tool's handle on the run's model: counts every call, refuses past its limit.

    Made fresh for each tool call (``ToolCallContext.llm``), so it holds one
    request's numbers only; the ``execute`` node adds :attr:`spent` to the run's
    ``llm_calls`` (and, for deep-fallback subtasks, to their cap, D7).
    """

    __slots__ = ("assistant", "limit", "spent", "user_lang")

    def __init__(self, assistant: LlmAssistant, *, limit: int | None, user_lang: str) -> None:
        self.assistant = assistant
        self.limit = limit
        """Calls allowed; ``None`` for no cap."""
        self.spent = 0
        """Calls made through this budget."""
        self.user_lang = user_lang

    @property
    def exhausted(self) -> bool:
        """True when no call is left."""
        return self.limit is not None and self.spent >= self.limit

    def read_passage(self, question: str, passage: str) -> str | None:
        """Per-page reading (``LlmAssistant.read_passage``); ``None`` once the budget is spent."""
        if self.exhausted:
            return None
        self.spent += 1
        return self.assistant.read_passage(question, passage, user_lang=self.user_lang)

    async def aread_passage(self, question: str, passage: str) -> str | None:
        """Async :meth:`read_passage` (``LlmAssistant.aread_passage``)."""
        if self.exhausted:
            return None
        self.spent += 1
        return await self.assistant.aread_passage(question, passage, user_lang=self.user_lang)
