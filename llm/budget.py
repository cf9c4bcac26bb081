"""The LLM calls one tool call may spend, counted for the run and capped for deep fallback (D7)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from toolweave.llm.citations import held_by
from toolweave.tools.language import detect_language

if TYPE_CHECKING:
    from toolweave.llm.port import LlmAssistant

logger = logging.getLogger(__name__)


class LlmBudget:
    """A tool's handle on the run's model: counts every call, refuses past its limit (D7)."""

    __slots__ = ("assistant", "deep", "invented", "limit", "spent", "user_lang")

    def __init__(
        self, assistant: LlmAssistant, *, limit: int | None, user_lang: str, deep: bool = False
    ) -> None:
        self.assistant = assistant
        self.limit = limit
        """Calls allowed; ``None`` for no cap."""
        self.deep = deep
        """The calls are deep fallback's: counted on the run's deep total (D7)."""
        self.spent = 0
        """Calls made through this budget."""
        self.user_lang = user_lang
        self.invented = False
        """A reading wrote a figure its page does not hold: no more pages are read."""

    @property
    def exhausted(self) -> bool:
        """True when no call is left, or the model has read a page it was not reading (D3)."""
        return self.invented or (self.limit is not None and self.spent >= self.limit)

    def read_passage(self, question: str, passage: str) -> str | None:
        """Per-page reading, what the page does not hold dropped; ``None`` once spent."""
        if self.exhausted:
            return None
        self.spent += 1
        answer = self.assistant.read_passage(question, passage, user_lang=self.user_lang)
        return self.held(answer, passage)

    async def aread_passage(self, question: str, passage: str) -> str | None:
        """Async :meth:`read_passage` (``LlmAssistant.aread_passage``)."""
        if self.exhausted:
            return None
        self.spent += 1
        answer = await self.assistant.aread_passage(question, passage, user_lang=self.user_lang)
        return self.held(answer, passage)

    def held(self, answer: str | None, passage: str) -> str | None:
        """The reading's sentences whose figures the page holds; a made-up one ends reading (D3)."""
        if not answer:
            return answer
        same = detect_language(passage).lang in (None, self.user_lang)
        held = held_by(answer, passage, names=same)
        if held != answer:
            self.invented = True
            logger.info("page reading: a figure its page does not hold; reading ends (D3, R9)")
        return held or None
