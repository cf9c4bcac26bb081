"""What a tool returns (R1-R5) and clarification requests (Q1)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from toolweave.state.documents import UniqueTextDocument


class ResultMode(StrEnum):
    """The result modes of SPEC §3 plus the clarification request of Q1."""

    CONTEXT = "context"
    """R2: documents join the RAG context."""
    ANSWER = "answer"
    """R3: a finished answer; no final LLM call."""
    ANSWERED = "answered"
    """R4: the tool already streamed the answer itself."""
    GUARANTEED_CONTEXT = "guaranteed_context"
    """R5: context that always reaches the final answer."""
    CLARIFICATION = "clarification"
    """Q1: the tool needs the user to answer a question first."""


TERMINAL_MODES = frozenset({ResultMode.ANSWER, ResultMode.ANSWERED})


class ToolResult(BaseModel):
    """The outcome of one tool execution. ``None`` instead of a result means R1.

    Build it with the class methods, which mirror the seed's
    ``ToolExecutionResult.asContext/asAnswer/asAnswered/asGuaranteedContext``.
    """

    model_config = ConfigDict(frozen=True)

    tool_name: str
    """The tool that produced the result."""
    mode: ResultMode
    """Which of the result modes this is."""
    documents: tuple[UniqueTextDocument, ...] = ()
    """Context documents (CONTEXT, GUARANTEED_CONTEXT)."""
    text: str | None = None
    """Answer text (ANSWER), guaranteed text (GUARANTEED_CONTEXT) or question (CLARIFICATION)."""
    choices: tuple[str, ...] = ()
    """Choices offered to the user with a clarification question."""

    @classmethod
    def as_context(cls, tool_name: str, documents: Sequence[UniqueTextDocument]) -> ToolResult:
        """R2: documents that join the RAG context."""
        return cls(tool_name=tool_name, mode=ResultMode.CONTEXT, documents=tuple(documents))

    @classmethod
    def as_answer(cls, tool_name: str, text: str) -> ToolResult:
        """R3: a finished answer; the final LLM call is skipped."""
        return cls(tool_name=tool_name, mode=ResultMode.ANSWER, text=text)

    @classmethod
    def as_answered(cls, tool_name: str) -> ToolResult:
        """R4: the tool has streamed the answer itself; nothing more is generated."""
        return cls(tool_name=tool_name, mode=ResultMode.ANSWERED)

    @classmethod
    def as_guaranteed_context(
        cls, tool_name: str, content: str | Sequence[UniqueTextDocument]
    ) -> ToolResult:
        """R5: context that always reaches the final answer (text or documents)."""
        if isinstance(content, str):
            return cls(tool_name=tool_name, mode=ResultMode.GUARANTEED_CONTEXT, text=content)
        return cls(
            tool_name=tool_name, mode=ResultMode.GUARANTEED_CONTEXT, documents=tuple(content)
        )

    @classmethod
    def clarification(
        cls, tool_name: str, question: str, choices: Sequence[str] = ()
    ) -> ToolResult:
        """Q1: ask the user a question before the tool can act."""
        return cls(
            tool_name=tool_name,
            mode=ResultMode.CLARIFICATION,
            text=question,
            choices=tuple(choices),
        )

    @property
    def is_terminal(self) -> bool:
        """True for R3 and R4, which end the run (R8, S3)."""
        return self.mode in TERMINAL_MODES

    def context_text(self) -> str:
        """The text this result contributes to a context buffer entry."""
        if self.text is not None and self.mode is not ResultMode.CLARIFICATION:
            return self.text
        return "\n".join(doc.text for doc in self.documents)
